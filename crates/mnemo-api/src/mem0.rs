//! The wire types of the mem0-compatible routes: mem0's REST shapes (`messages`, `user_id`,
//! `agent_id`, `run_id`, `metadata`, `infer`; results with `id`, `memory`, `hash`,
//! `created_at`, `updated_at`, `score`), typed so the OpenAPI document describes them as the
//! server sends them. Unknown fields are accepted, as mem0's server accepts them.

use mnemo_core::{Memory, MemoryId, Metadata, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a conversation to add.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Mem0Message {
    /// `user`, `assistant`, `system` or `tool`.
    pub role: String,
    /// What was said.
    pub content: String,
}

fn yes() -> bool {
    true
}

/// `POST /memories`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Mem0AddBody {
    /// The conversation (with `infer`) or the statements to keep as they are.
    pub messages: Vec<Mem0Message>,
    /// The user, and the agent and run (a mnemo session) the memories belong to.
    #[serde(flatten)]
    pub scope: Mem0Scope,
    /// Metadata kept on every memory, with its JSON types.
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
    /// Draw memories from the conversation (true, the default) or keep each message's text.
    #[serde(default = "yes")]
    pub infer: bool,
    /// When the memories stop holding (RFC 3339, or a date `YYYY-MM-DD`, end of that day).
    #[serde(default)]
    pub expiration_date: Option<String>,
}

/// The user, agent and run a mem0 request is about (a query string, or `filters`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Mem0Scope {
    /// The user (optional with a user key).
    #[serde(default)]
    pub user_id: Option<String>,
    /// Only memories of this agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Only memories of this run.
    #[serde(default)]
    pub run_id: Option<String>,
}

/// `GET /memories`: the user, agent and run, and how many and which memories to list. (The
/// scope's fields are spelled out, not a flattened [`Mem0Scope`]: a query string's numbers
/// and booleans do not survive serde's `flatten`.)
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Mem0ListQuery {
    /// The user (optional with a user key).
    #[serde(default)]
    pub user_id: Option<String>,
    /// Only memories of this agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Only memories of this run.
    #[serde(default)]
    pub run_id: Option<String>,
    /// At most this many memories, newest first (default: all).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// Also list memories whose expiration date has passed.
    #[serde(default)]
    pub show_expired: bool,
}

impl Mem0ListQuery {
    /// The user, agent and run asked for.
    pub fn scope(&self) -> Mem0Scope {
        Mem0Scope {
            user_id: self.user_id.clone(),
            agent_id: self.agent_id.clone(),
            run_id: self.run_id.clone(),
        }
    }
}

/// `POST /search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Mem0SearchBody {
    /// What to find.
    pub query: String,
    /// The user, and only memories of this agent and run.
    #[serde(flatten)]
    pub scope: Mem0Scope,
    /// How many results (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
    /// mem0's newer name for `limit`.
    #[serde(default)]
    pub top_k: Option<usize>,
    /// mem0's newer form: `{"filters": {"user_id": …, "agent_id": …, "run_id": …}}`.
    #[serde(default)]
    pub filters: Option<Mem0Scope>,
    /// Leave out results scoring below this (0..1).
    #[serde(default)]
    pub threshold: Option<f64>,
    /// Give each result its `score_details`: the signals behind its score.
    #[serde(default)]
    pub explain: bool,
}

/// `PUT /memories/{id}`: the new text, under any of mem0's names for it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Mem0UpdateBody {
    /// The new text.
    #[serde(default)]
    pub text: Option<String>,
    /// The new text (mem0's older name).
    #[serde(default)]
    pub data: Option<String>,
    /// The new text (another of mem0's names).
    #[serde(default)]
    pub memory: Option<String>,
    /// The user (optional with a user key, or given in the query).
    #[serde(default)]
    pub user_id: Option<String>,
    /// New metadata, replacing the memory's (alone, or with new text).
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
    /// A new expiration date (RFC 3339, or a day `YYYY-MM-DD`, the end of it), or `null` to
    /// remove it; absent keeps it.
    #[serde(default, deserialize_with = "present")]
    pub expiration_date: Option<Option<String>>,
}

/// A field that is present, even as `null` (`Some(None)`), told apart from one left out
/// (`None`, by `#[serde(default)]`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

impl Mem0UpdateBody {
    /// The new text, by whichever name it came.
    pub fn new_text(&self) -> Option<&str> {
        self.text.as_deref().or(self.data.as_deref()).or(self.memory.as_deref())
    }
}

/// `POST /reset`'s optional body.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Mem0ResetBody {
    /// The user whose memories to forget (optional with a user key).
    #[serde(default)]
    pub user_id: Option<String>,
}

/// A memory in mem0's shape.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Mem0Memory {
    /// The memory's id.
    pub id: MemoryId,
    /// Its text.
    pub memory: String,
    /// A hash of its text (the first 16 bytes of its SHA-256, in hex).
    pub hash: String,
    /// Its metadata, with JSON types.
    pub metadata: Metadata,
    /// Its user.
    pub user_id: String,
    /// Its agent.
    pub agent_id: Option<String>,
    /// Its run.
    pub run_id: Option<String>,
    /// When it was stored.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// When it stops holding, if it does.
    pub expiration_date: Option<Timestamp>,
    /// Its relevance to the query (search results only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The signals behind `score` (a search with `explain` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_details: Option<Mem0ScoreDetails>,
}

/// What a search result's score is made of: the relevance that admitted it (from full-text
/// and vector evidence), then recency and importance, blended (SPEC §4).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Mem0ScoreDetails {
    /// Relevance, 0..1.
    pub relevance: f64,
    /// Recency, 0..1.
    pub recency: f64,
    /// Importance, 0..1.
    pub importance: f64,
    /// The record's BM25F full-text score.
    pub bm25: f64,
    /// The record's cosine similarity to the query.
    pub cosine: f64,
}

impl Mem0Memory {
    /// `memory` in mem0's shape: `hash` is the hash of its text, `run_id` its run.
    pub fn new(memory: &Memory, hash: String, run_id: Option<&str>) -> Self {
        Self {
            id: memory.id.clone(),
            memory: memory.content.clone(),
            hash,
            metadata: memory.metadata.clone(),
            user_id: memory.user_id.clone(),
            agent_id: memory.agent_id.clone(),
            run_id: run_id.map(str::to_owned),
            created_at: memory.created_at,
            updated_at: memory.updated_at,
            expiration_date: memory.expires_at,
            score: None,
            score_details: None,
        }
    }
}

/// What one added message became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Mem0Event {
    /// The stored (or existing) memory's id; null when refused.
    pub id: Option<MemoryId>,
    /// The memory's text.
    pub memory: String,
    /// `ADD`, `UPDATE` or `NONE`, as mem0 reports them.
    pub event: &'static str,
    /// mnemo's outcome: `added`, `updated`, `skipped`, `pending` or `refused`.
    pub outcome: &'static str,
    /// mnemo's reason code.
    pub reason: &'static str,
}

/// `{"results": [...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(rename = "Mem0Results_{T}")]
pub struct Mem0Results<T> {
    /// The results.
    pub results: Vec<T>,
}

/// One value a memory has held, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Mem0HistoryEntry {
    /// The entry's id.
    pub id: String,
    /// The memory's id.
    pub memory_id: MemoryId,
    /// The value before this one.
    pub old_memory: Option<String>,
    /// This value.
    pub new_memory: String,
    /// `ADD` for the first value, `UPDATE` for the others.
    pub event: &'static str,
    /// When this value was stored.
    pub created_at: Timestamp,
    /// When it was replaced (or last changed).
    pub updated_at: Timestamp,
    /// Always false: a deleted memory leaves no history (deletion is complete).
    pub is_deleted: bool,
    /// The agent, if one is recorded.
    pub actor_id: Option<String>,
    /// `user` for the user's own statements, `assistant` for what an agent inferred.
    pub role: Option<&'static str>,
}

/// A message-only answer (`{"message": "Memory updated successfully!"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Mem0Notice {
    /// What happened.
    pub message: String,
}

/// The answer to a deletion of several memories, or a reset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Mem0Deleted {
    /// What happened.
    pub message: String,
    /// The user reset (a reset only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// How many records were removed.
    pub deleted: u64,
}
