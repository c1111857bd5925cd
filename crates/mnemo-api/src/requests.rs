//! Request bodies and query strings of the HTTP API. They mirror the CLI's options; fields
//! are validated when they are turned into library calls, never trusted as-is.

use mnemo_core::transcript::Message;

use super::Deserialize;

/// A provenance given by the caller.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceBody {
    /// `user_stated`, `tool`, `document`, ...
    #[serde(rename = "type")]
    pub source_type: String,
    /// Originating reference.
    #[serde(rename = "ref", default)]
    pub source_ref: Option<String>,
}

/// `POST /v1/memories`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberBody {
    /// The user (optional with a user key).
    #[serde(default)]
    pub user_id: Option<String>,
    /// The statement.
    pub content: String,
    /// Memory kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// Subject of a keyed fact.
    #[serde(default)]
    pub subject: Option<String>,
    /// Attribute of a keyed fact.
    #[serde(default)]
    pub attribute: Option<String>,
    /// 0..1.
    #[serde(default)]
    pub importance: Option<f64>,
    /// 0..1.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Time to live (`36h`, `10d`).
    #[serde(default)]
    pub ttl: Option<String>,
    /// Absolute expiry (RFC 3339).
    #[serde(default)]
    pub expires_at: Option<String>,
    /// When it should be re-confirmed (RFC 3339): past that date it is listed by
    /// `GET /v1/users/{user_id}/overdue`.
    #[serde(default)]
    pub review_after: Option<String>,
    /// Provenance.
    #[serde(default)]
    pub source: Option<SourceBody>,
    /// Scope.
    #[serde(default)]
    pub scope: Option<String>,
    /// Writing agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Conversation session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Sensitive category.
    #[serde(default)]
    pub sensitive: bool,
    /// Explicit consent for a sensitive statement.
    #[serde(default)]
    pub consent: bool,
    /// The user asked to remember again something they had asked to forget: without it, a
    /// statement in the deletion ledger is refused as `forgotten` (a retry or a replay).
    #[serde(default)]
    pub restate: bool,
    /// Caller metadata: any JSON value per name, returned as given.
    #[serde(default)]
    pub metadata: mnemo_core::Metadata,
    /// Write to this shared space (as `scope: "space:<id>"` does): a contributor's write
    /// waits for a maintainer's review.
    #[serde(default)]
    pub space: Option<String>,
    /// In a space: the convention overrides a member's personal setting of the same thing.
    #[serde(default)]
    pub mandatory: bool,
}

/// `POST /v1/spaces` (admin key).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpaceCreateBody {
    /// The space's id within the tenant: one word, no spaces or commas.
    pub id: String,
    /// A human name (default: the id).
    #[serde(default)]
    pub name: Option<String>,
    /// What the space is for.
    #[serde(default)]
    pub description: Option<String>,
    /// A maintainer's own write applies at once (default: it waits for review too).
    #[serde(default)]
    pub maintainers_write_directly: bool,
    /// What happens to a deleted member's approved contributions (default `keep`,
    /// attributed to a forgotten author).
    #[serde(default)]
    pub on_author_deleted: mnemo_core::space::OnAuthorDeleted,
}

/// `POST /v1/spaces/{id}/members` (admin key).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberBody {
    /// The user of the tenant.
    pub user_id: String,
    /// Their role.
    pub role: mnemo_core::space::Role,
}

/// `POST /v1/users/{user_id}/import`'s query.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct ImportQuery {
    /// Restore records the user had asked to forget too (they are left out otherwise).
    #[serde(default)]
    pub allow_forgotten: bool,
}

/// `GET /v1/users/{user_id}/deletions`'s query.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct DeletionsQuery {
    /// Most receipts to return (newest first; default 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A query string naming the user (optional with a user key).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct UserQuery {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
}

/// `GET /v1/memories`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct ListQuery {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Only this kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// Only this status.
    #[serde(default)]
    pub status: Option<String>,
    /// Include expired memories.
    #[serde(default)]
    pub include_expired: bool,
    /// Answer with what was held true at this time (RFC 3339; a time to come: what is held now, less what will have expired) instead of now.
    #[serde(default)]
    pub as_of: Option<mnemo_core::Timestamp>,
    /// List this shared space's memories (the user must be a member) instead of the
    /// user's own.
    #[serde(default)]
    pub space: Option<String>,
    /// Only records of this scope (`user`, `workspace:<id>`, `project:<id>`, or
    /// `space:<id>` as `space` says), as the CLI's `list --scope`.
    #[serde(default)]
    pub scope: Option<String>,
}

/// `PATCH /v1/memories/{id}`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The new text.
    pub content: String,
}

/// `POST /v1/search`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The query.
    pub query: String,
    /// Results wanted (default 10).
    #[serde(default)]
    pub k: Option<usize>,
    /// Only this kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// Only this scope.
    #[serde(default)]
    pub scope: Option<String>,
    /// Minimum relevance.
    #[serde(default)]
    pub min_relevance: Option<f64>,
    /// Include the signals behind each score.
    #[serde(default)]
    pub explain: bool,
    /// Answer with what was held true at this time (RFC 3339; a time to come: what is held now, less what will have expired) instead of now.
    #[serde(default)]
    pub as_of: Option<mnemo_core::Timestamp>,
    /// Read only these notebooks: `private` (the user's own) and ids of shared spaces the
    /// user is a member of (default: all of them).
    #[serde(default)]
    pub spaces: Option<Vec<String>>,
}

/// `POST /v1/context`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The request the context is for.
    pub query: String,
    /// Token budget (default 1000).
    #[serde(default)]
    pub budget: Option<usize>,
    /// `cl100k` or `o200k` (default).
    #[serde(default)]
    pub tokenizer: Option<String>,
    /// Also show this conversation session: a summary of its older turns and its most
    /// recent turns.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Session turns above this many tokens are compacted (default 1500).
    #[serde(default)]
    pub compact_after: Option<usize>,
    /// Tokens of the most recent turns kept verbatim when compacting (default 600).
    #[serde(default)]
    pub recent_tokens: Option<usize>,
    /// Answer with what was held true at this time (RFC 3339; a time to come: what is held now, less what will have expired) instead of now.
    #[serde(default)]
    pub as_of: Option<mnemo_core::Timestamp>,
    /// Read only these notebooks: `private` and ids of shared spaces the user is a member of
    /// (default: all of them).
    #[serde(default)]
    pub spaces: Option<Vec<String>>,
}

/// `POST /v1/ingest`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IngestBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The session (`session` is accepted too).
    #[serde(alias = "session")]
    pub session_id: String,
    /// The messages.
    pub messages: Vec<Message>,
    /// Neither read nor write memory.
    #[serde(default)]
    pub incognito: bool,
    /// Raw-turn retention (default `30d`).
    #[serde(default)]
    pub retention: Option<String>,
}

/// `PUT /v1/users/{user_id}/settings`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsBody {
    /// Whether memory is on.
    pub memory_enabled: bool,
}

/// `POST /v1/keys`: a new key of the caller's tenant.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyCreateBody {
    /// The only user the key may act for; absent for a tenant key.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Whether the key may manage the tenant (keys, whole users, import, tenant expiry).
    #[serde(default)]
    pub admin: bool,
    /// Its own rate limit, in requests per second.
    #[serde(default)]
    pub rate: Option<f64>,
}

/// `POST /v1/runs`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunStartBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// What the task is for.
    pub goal: String,
}

/// `POST /v1/runs/{id}/steps`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunStepBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The step, added as pending at the end of the plan.
    pub text: String,
}

/// `PUT /v1/runs/{id}/steps/{number}`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunStatusBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// pending, done or blocked.
    #[schemars(extend("enum" = ["pending", "done", "blocked"]))]
    pub status: String,
}

/// `POST /v1/runs/{id}/evidence`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunEvidenceBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Where it came from (a memory id, URL, path or document id).
    pub source_id: String,
    /// The relevant excerpt.
    pub excerpt: String,
}

/// `POST /v1/runs/{id}/tool-results`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunToolResultBody {
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The tool that produced the result.
    pub tool: String,
    /// Where the full result is.
    pub reference: String,
    /// One line on what it held.
    pub note: String,
}
