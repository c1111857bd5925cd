//! mnemo's wire types, shared by the CLI's `--json` output, the HTTP API and MCP: response
//! envelopes, and the one table mapping an error's kind to a stable code, an HTTP status and
//! a process exit code.
//!
//! Only these types (and the core record they embed) are serialized for clients.
#![warn(missing_docs)]

use mnemo_core::lifecycle::Remembered;
use mnemo_core::ports::{AuditEntry, History};
use mnemo_core::{ErrorKind, Memory, MemoryId};
use serde::Serialize;

/// The answer to a write: `{"outcome","id","reason","superseded"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryList {
    /// The records.
    pub memories: Vec<Memory>,
}

/// A record's history: the record, its earlier versions and the records it superseded.
pub type HistoryResponse = History;

/// The ids a deletion removed: `{"forgotten":[...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForgetResponse {
    /// Removed ids.
    pub forgotten: Vec<MemoryId>,
}

/// The count a forget-all removed: `{"forgotten_count": N}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ForgetAllResponse {
    /// How many records were removed.
    pub forgotten_count: usize,
}

/// The ids an expiry run removed: `{"expired":[...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExpireResponse {
    /// Removed ids.
    pub expired: Vec<MemoryId>,
}

/// How many records an import wrote: `{"imported": N}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ImportResponse {
    /// Records written.
    pub imported: usize,
}

/// A user's settings: `{"user_id","memory_enabled"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingsResponse {
    /// The user.
    pub user_id: String,
    /// Whether memory is on.
    pub memory_enabled: bool,
}

/// Audit entries, newest first: `{"entries":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditResponse {
    /// The entries.
    pub entries: Vec<AuditEntry>,
}

/// Every error a client sees: `{"code","message"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// The one table from error kind to code, HTTP status and exit code.
pub fn error_mapping(kind: ErrorKind) -> ErrorMapping {
    let (code, http_status, exit_code) = match kind {
        ErrorKind::InvalidInput => ("invalid_input", 400, 2),
        ErrorKind::NotFound => ("not_found", 404, 3),
        ErrorKind::Conflict => ("conflict", 409, 4),
        ErrorKind::Unauthorized => ("unauthorized", 401, 5),
        ErrorKind::Unavailable { .. } => ("unavailable", 503, 6),
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
