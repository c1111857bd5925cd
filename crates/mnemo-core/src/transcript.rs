//! Conversation messages as they arrive for ingestion (`mnemo ingest`, `POST /v1/ingest`).
//!
//! Serialized on the wire (JSON Lines): `{"role", "content", "id"?, "ts"?, "source"?}`.

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::record::SourceType;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "MessageRole")]
pub enum Role {
    /// The person the memory is about.
    User,
    /// The assistant.
    Assistant,
    /// A tool's result.
    Tool,
    /// A system message.
    System,
}

impl Role {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
        }
    }

    /// The provenance channel of what this role writes.
    pub fn source_type(self) -> SourceType {
        match self {
            Role::User => SourceType::UserStated,
            Role::Assistant => SourceType::Inferred,
            Role::Tool => SourceType::Tool,
            Role::System => SourceType::System,
        }
    }
}

/// Where a message's content came from, when it is not simply its role (a user pasting a
/// document, say).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageSource {
    /// The channel.
    #[serde(rename = "type")]
    pub source_type: SourceType,
    /// The originating reference.
    #[serde(rename = "ref", default)]
    pub source_ref: Option<String>,
}

/// One conversation message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: String,
    /// The message's id in the caller's system.
    #[serde(default)]
    pub id: Option<String>,
    /// When it was written (default: when ingested).
    #[serde(default)]
    pub ts: Option<Timestamp>,
    /// Its provenance, when not the role's.
    #[serde(default)]
    pub source: Option<MessageSource>,
}
