//! mnemo's wire types, shared by the CLI's `--json` output, the HTTP API and MCP: response
//! envelopes, and the one table mapping an error's kind to a stable code, an HTTP status and
//! a process exit code.
//!
//! Only these types (and the core record they embed) are serialized for clients.
#![warn(missing_docs)]

use std::collections::BTreeMap;

use mnemo_core::context::ContextBlock;
use mnemo_core::ledger::DeletionReceipt;
use mnemo_core::lifecycle::Remembered;
use mnemo_core::ports::{ApiKey, AuditEntry, History};
use mnemo_core::retrieval::Hit;
use mnemo_core::run::Run;
use mnemo_core::{ErrorKind, Memory, MemoryId};
use serde::{Deserialize, Serialize};

pub mod mem0;
pub mod openapi;
pub mod requests;
pub mod wire;

/// The answer to a write: `{"outcome","id","reason","superseded"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RememberResponse {
    /// `added`, `updated`, `skipped`, `pending` or `refused`.
    pub outcome: &'static str,
    /// The stored (or existing) record's id; null when refused.
    pub id: Option<MemoryId>,
    /// The reason code.
    pub reason: &'static str,
    /// Ids of the records this write superseded.
    pub superseded: Vec<MemoryId>,
}

impl From<Remembered> for RememberResponse {
    fn from(r: Remembered) -> Self {
        Self {
            outcome: r.outcome.as_str(),
            id: r.id,
            reason: r.reason.as_str(),
            superseded: r.superseded,
        }
    }
}

/// A list of memories: `{"memories":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MemoryList {
    /// The records.
    pub memories: Vec<Memory>,
}

/// One search result: the memory's fields plus its score parts.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SearchResult {
    /// The memory (its `importance` field is the importance used in the score).
    #[serde(flatten)]
    pub memory: Memory,
    /// The blended score.
    pub score: f64,
    /// Relevance, 0..1.
    pub relevance: f64,
    /// Recency factor, 0..1.
    pub recency: f64,
    /// Raw retriever scores, with `--explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
}

/// The signals behind a result's score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Explain {
    /// BM25F over the memory and its conversational context (0 when no term matched).
    pub bm25: f64,
    /// Cosine similarity to the query.
    pub cosine: f64,
    /// Absolute evidence (0..1) that passed the relevance gate.
    pub evidence: f64,
    /// The fused score (z units) that relevance is derived from.
    pub fused: f64,
    /// Weighted relevance term.
    pub relevance_term: f64,
    /// Weighted recency term.
    pub recency_term: f64,
    /// Weighted importance term.
    pub importance_term: f64,
}

/// Search results: `{"results":[...]}`, best first.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SearchResponse {
    /// The results.
    pub results: Vec<SearchResult>,
}

impl SearchResponse {
    /// Builds the response; `weights` (relevance, recency, importance) fill `explain` when given.
    pub fn new(hits: Vec<Hit>, explain_weights: Option<(f64, f64, f64)>) -> Self {
        let results = hits
            .into_iter()
            .map(|hit| SearchResult {
                explain: explain_weights.map(|(wr, wc, wi)| Explain {
                    bm25: hit.bm25,
                    cosine: hit.cosine,
                    evidence: hit.fused.evidence,
                    fused: hit.fused.score,
                    relevance_term: wr * hit.parts.relevance,
                    recency_term: wc * hit.parts.recency,
                    importance_term: wi * hit.parts.importance,
                }),
                score: hit.parts.score,
                relevance: hit.parts.relevance,
                recency: hit.parts.recency,
                memory: hit.memory,
            })
            .collect();
        Self { results }
    }
}

/// A memory as an agent reads it: what it says, its kind and status, since when it holds,
/// and where it came from (the full record, with provenance, versions and metadata, on
/// request).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CompactMemory {
    /// Its id.
    pub id: MemoryId,
    /// What it says.
    pub content: String,
    /// Its kind.
    pub kind: mnemo_core::Kind,
    /// Its status.
    pub status: mnemo_core::Status,
    /// Since when it holds.
    pub when: mnemo_core::Timestamp,
    /// Where it came from (`user_stated`, `inferred`, `tool`…).
    pub source: mnemo_core::SourceType,
    /// The shared space it belongs to (absent: the user's own, private memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space: Option<String>,
    /// Its score, for a search result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

impl CompactMemory {
    /// The compact form of `memory`, with a search `score`.
    pub fn new(memory: Memory, score: Option<f64>) -> Self {
        Self {
            id: memory.id,
            content: memory.content,
            kind: memory.kind,
            status: memory.status,
            when: memory.valid_from,
            source: memory.source.source_type,
            space: match memory.scope {
                mnemo_core::Scope::Space(id) => Some(id),
                _ => None,
            },
            score,
        }
    }
}

/// Compact search results: `{"results":[...]}`, best first.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CompactResults {
    /// The results.
    pub results: Vec<CompactMemory>,
}

impl From<Vec<Hit>> for CompactResults {
    fn from(hits: Vec<Hit>) -> Self {
        let results =
            hits.into_iter().map(|hit| CompactMemory::new(hit.memory, Some(hit.parts.score)));
        Self { results: results.collect() }
    }
}

/// A compact list of memories: `{"memories":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CompactList {
    /// The records.
    pub memories: Vec<CompactMemory>,
}

/// One section of a context block.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ContextPartBody {
    /// The section's text.
    pub text: String,
    /// Its tokens.
    pub tokens: usize,
    /// Memory ids in it.
    pub memory_ids: Vec<MemoryId>,
}

/// A context block: `{"parts": {...}, "total_tokens", "rendered", "memory_ids", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ContextResponse {
    /// Sections by name.
    pub parts: BTreeMap<String, ContextPartBody>,
    /// Tokens of `rendered`.
    pub total_tokens: usize,
    /// The budget.
    pub budget: usize,
    /// The tokenizer that counted.
    pub tokenizer: String,
    /// The block to put into a prompt (empty when nothing is relevant or fits).
    pub rendered: String,
    /// Every memory id in the block.
    pub memory_ids: Vec<MemoryId>,
}

impl ContextResponse {
    /// Builds the response from a block and the tokenizer's name.
    pub fn new(block: ContextBlock, tokenizer: &str) -> Self {
        Self {
            parts: block
                .parts
                .into_iter()
                .map(|p| {
                    (
                        p.name,
                        ContextPartBody {
                            text: p.text,
                            tokens: p.tokens,
                            memory_ids: p.memory_ids,
                        },
                    )
                })
                .collect(),
            total_tokens: block.total_tokens,
            budget: block.budget,
            tokenizer: tokenizer.to_owned(),
            rendered: block.rendered,
            memory_ids: block.memory_ids,
        }
    }
}

/// A record's history: the record, its earlier versions and the records it superseded.
pub type HistoryResponse = History;

/// The ids a deletion removed and its receipt: `{"forgotten":[...], "receipt":{...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ForgetResponse {
    /// Removed ids.
    pub forgotten: Vec<MemoryId>,
    /// What was removed, the tombstones left, and what remains for how long.
    pub receipt: DeletionReceipt,
}

/// A shared space, with the caller's role in it when the caller is one of its members:
/// what `GET /v1/spaces` lists.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SpaceEntry {
    /// The space.
    #[serde(flatten)]
    pub space: mnemo_core::space::Space,
    /// The user's role there (listing a user's spaces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<mnemo_core::space::Role>,
}

/// Spaces: `{"spaces":[...]}`, by id.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SpaceList {
    /// The spaces.
    pub spaces: Vec<SpaceEntry>,
}

/// A space with its members (who can see its memories).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SpaceDetail {
    /// The space.
    #[serde(flatten)]
    pub space: mnemo_core::space::Space,
    /// Its members and their roles, by user id.
    pub members: Vec<mnemo_core::space::Member>,
}

/// A space's members: `{"members":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MemberList {
    /// The members, by user id.
    pub members: Vec<mnemo_core::space::Member>,
}

/// A member removed from a space: their reads of it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MemberRemoved {
    /// The space.
    pub space_id: String,
    /// The former member.
    pub user_id: String,
}

/// A deleted space: the receipt of its memories' complete deletion.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SpaceDeleted {
    /// The space's id.
    pub deleted: String,
    /// What was removed, the tombstones left, and what remains for how long.
    pub receipt: DeletionReceipt,
}

impl From<DeletionReceipt> for ForgetResponse {
    fn from(receipt: DeletionReceipt) -> Self {
        Self { forgotten: receipt.removed_ids.clone(), receipt }
    }
}

/// A key just created: its record and, this once, its secret (`key`); only a hash is kept.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct KeyCreated {
    /// The stored record.
    #[serde(flatten)]
    pub record: ApiKey,
    /// The secret, to send as `Authorization: Bearer <key>`. It cannot be shown again.
    pub key: String,
}

/// A tenant's keys, newest first: `{"keys":[...]}` (never their secrets or hashes).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct KeyList {
    /// The keys, revoked ones included.
    pub keys: Vec<ApiKey>,
}

/// A revoked key: `{"revoked": id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KeyRevoked {
    /// The key's id.
    pub revoked: String,
}

/// A user's deletion receipts, newest first: `{"deletions":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DeletionsResponse {
    /// Receipts.
    pub deletions: Vec<DeletionReceipt>,
}

/// A confirmation: `{"confirmed": id, "superseded": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ConfirmResponse {
    /// The confirmed record.
    pub confirmed: MemoryId,
    /// Records it superseded.
    pub superseded: Vec<MemoryId>,
}

/// A use recorded: `{"used": [ids], "last_used_at": time}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UsedResponse {
    /// The records marked as used.
    pub used: Vec<MemoryId>,
    /// The time recorded as their `last_used_at`.
    pub last_used_at: mnemo_core::Timestamp,
}

/// The memory tool's answer to one call: `{"result": text, "is_error": bool}`, as the model
/// is to be shown it (a tool result, marked as an error when the call failed and changed
/// nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MemoryToolResponse {
    /// What the tool says.
    pub result: String,
    /// Whether the call failed.
    pub is_error: bool,
}

impl From<mnemo::ToolAnswer> for MemoryToolResponse {
    fn from(answer: mnemo::ToolAnswer) -> Self {
        Self { result: answer.text, is_error: answer.is_error }
    }
}

/// A rejection: `{"rejected": id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RejectResponse {
    /// The rejected (deleted) record.
    pub rejected: MemoryId,
}

/// One memory the extractor proposed during ingestion and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProposedResponse {
    /// Index of the message (0-based line of the input).
    pub message: usize,
    /// The proposed statement.
    pub content: String,
    /// `added`, `updated`, `skipped`, `pending` or `refused`.
    pub outcome: &'static str,
    /// The stored (or existing) record's id.
    pub id: Option<MemoryId>,
    /// The reason code.
    pub reason: &'static str,
    /// Records it superseded.
    pub superseded: Vec<MemoryId>,
}

/// What an ingestion did: `{"turns_stored","secrets_redacted","candidates":[...],"skipped"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct IngestResponse {
    /// Raw turns stored.
    pub turns_stored: usize,
    /// Secrets redacted before storage.
    pub secrets_redacted: usize,
    /// Proposed memories and their outcomes.
    pub candidates: Vec<ProposedResponse>,
    /// Why nothing was read or written (`incognito`, `memory_disabled`), if so.
    pub skipped: Option<&'static str>,
    /// Messages whose extraction failed (their raw turns are stored; ingest again to retry).
    pub failures: Vec<FailureResponse>,
}

impl From<mnemo::IngestReport> for IngestResponse {
    fn from(report: mnemo::IngestReport) -> Self {
        Self {
            turns_stored: report.turns_stored,
            secrets_redacted: report.secrets_redacted,
            skipped: report.skipped.map(|r| r.as_str()),
            failures: report
                .failures
                .into_iter()
                .map(|f| FailureResponse { message: f.message, error: f.error })
                .collect(),
            candidates: report
                .proposed
                .into_iter()
                .map(|p| ProposedResponse {
                    message: p.message,
                    content: p.content,
                    outcome: p.result.outcome.as_str(),
                    id: p.result.id,
                    reason: p.result.reason.as_str(),
                    superseded: p.result.superseded,
                })
                .collect(),
        }
    }
}

/// A failed extraction: `{"message", "error"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FailureResponse {
    /// Index of the message.
    pub message: usize,
    /// What went wrong.
    pub error: String,
}

/// The count a forget-all removed and its receipt: `{"forgotten_count": N, "receipt":{...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ForgetAllResponse {
    /// How many records were removed.
    pub forgotten_count: u64,
    /// What was removed, the tombstones left, and what remains for how long.
    pub receipt: DeletionReceipt,
}

impl From<DeletionReceipt> for ForgetAllResponse {
    fn from(receipt: DeletionReceipt) -> Self {
        Self { forgotten_count: receipt.removed.records, receipt }
    }
}

/// The ids an expiry run removed: `{"expired":[...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ExpireResponse {
    /// Removed ids.
    pub expired: Vec<MemoryId>,
}

/// How many records an import wrote, and which it left out because the user had asked to
/// forget them: `{"imported": N, "forgotten": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ImportResponse {
    /// Records written.
    pub imported: usize,
    /// Records left out: the deletion ledger says the user asked to forget them (import with
    /// `allow_forgotten` to restore them anyway).
    pub forgotten: Vec<MemoryId>,
    /// Records the policy gate refused (a secret in them), left out.
    pub refused: Vec<GateNote>,
    /// Active records the gate holds, imported as pending for the user to confirm again.
    pub held: Vec<GateNote>,
}

/// A record the gate judged, and why: `{"id", "reason"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GateNote {
    /// The record.
    pub id: MemoryId,
    /// The reason code.
    pub reason: &'static str,
}

impl From<mnemo::ImportReport> for ImportResponse {
    fn from(report: mnemo::ImportReport) -> Self {
        let notes = |list: Vec<(MemoryId, mnemo_core::policy::ReasonCode)>| {
            list.into_iter().map(|(id, r)| GateNote { id, reason: r.as_str() }).collect()
        };
        Self {
            imported: report.imported,
            forgotten: report.forgotten,
            refused: notes(report.refused),
            held: notes(report.held),
        }
    }
}

/// A user's settings: `{"user_id","memory_enabled"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SettingsResponse {
    /// The user.
    pub user_id: String,
    /// Whether memory is on.
    pub memory_enabled: bool,
}

/// Audit entries, newest first: `{"entries":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AuditResponse {
    /// The entries.
    pub entries: Vec<AuditEntry>,
}

/// A user's runs, oldest first: `{"runs":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunList {
    /// The runs.
    pub runs: Vec<Run>,
}

/// What is left of a run once it is ended: its id and how much it held, nothing more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RunEnded {
    /// The run's id.
    pub id: String,
    /// Always true: the run's state was deleted.
    pub ended: bool,
    /// How many plan steps it had.
    pub steps: usize,
    /// How many evidence items it held.
    pub evidence: usize,
    /// How many tool-result references it held.
    pub tool_results: usize,
}

impl From<&Run> for RunEnded {
    fn from(run: &Run) -> Self {
        Self {
            id: run.id.clone(),
            ended: true,
            steps: run.steps.len(),
            evidence: run.evidence.len(),
            tool_results: run.tool_results.len(),
        }
    }
}

/// Every error a client sees: `{"code","message"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ErrorBody {
    /// Stable snake_case code.
    pub code: &'static str,
    /// One-line human-readable reason.
    pub message: String,
}

/// How an error kind appears at each edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorMapping {
    /// Stable snake_case code.
    pub code: &'static str,
    /// HTTP status.
    pub http_status: u16,
    /// CLI exit code.
    pub exit_code: i32,
}

/// How many memories a search returns when the caller does not say: the same on every
/// front end (CLI, HTTP, MCP).
pub const DEFAULT_K: usize = 10;

/// The context block's token budget when the caller does not say, on every front end.
pub const DEFAULT_CONTEXT_BUDGET: usize = 1000;

/// The one table from error kind to code, HTTP status and exit code.
pub fn error_mapping(kind: ErrorKind) -> ErrorMapping {
    let (code, http_status, exit_code) = match kind {
        ErrorKind::InvalidInput => ("invalid_input", 400, 2),
        ErrorKind::NotFound => ("not_found", 404, 3),
        ErrorKind::Conflict => ("conflict", 409, 4),
        ErrorKind::Unauthorized => ("unauthorized", 401, 5),
        ErrorKind::Forbidden => ("forbidden", 403, 7),
        ErrorKind::RateLimited { .. } => ("rate_limited", 429, 8),
        ErrorKind::Unavailable { .. } => ("unavailable", 503, 6),
        ErrorKind::StorageFull => ("storage_full", 507, 6),
        ErrorKind::Internal => ("internal", 500, 1),
    };
    ErrorMapping { code, http_status, exit_code }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_are_distinct() {
        let kinds = [
            ErrorKind::InvalidInput,
            ErrorKind::NotFound,
            ErrorKind::Conflict,
            ErrorKind::Unauthorized,
            ErrorKind::Forbidden,
            ErrorKind::RateLimited { retry_after: std::time::Duration::from_secs(1) },
            ErrorKind::Unavailable { retry_after: None },
            ErrorKind::Internal,
        ];
        let mut codes: Vec<_> = kinds.iter().map(|k| error_mapping(*k).code).collect();
        let mut exits: Vec<_> = kinds.iter().map(|k| error_mapping(*k).exit_code).collect();
        codes.sort_unstable();
        codes.dedup();
        exits.sort_unstable();
        exits.dedup();
        assert_eq!(codes.len(), kinds.len());
        assert_eq!(exits.len(), kinds.len());
        assert!(exits.iter().all(|&e| e != 0));
    }

    #[test]
    fn remember_response_has_the_documented_keys() {
        let r = RememberResponse {
            outcome: "added",
            id: Some(MemoryId("m1".into())),
            reason: "new",
            superseded: vec![],
        };
        let json = serde_json::to_value(&r).unwrap();
        let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["id", "outcome", "reason", "superseded"]);
    }
}
