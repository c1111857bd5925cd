//! The memory record of SPEC §2: one atomic, self-contained statement with its provenance and
//! lifecycle fields.
//!
//! Serialized in the database and in exports: these types define the persisted JSON of history
//! snapshots and the export format, so renaming a field or variant is a schema change that needs
//! a migration and an export-format version bump.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;

/// Caller metadata: names to JSON values (mem0 clients send numbers, booleans, lists and
/// objects, and get them back with their types).
pub type Metadata = BTreeMap<String, serde_json::Value>;

/// A metadata value as text: a string as it is, anything else as compact JSON (what the
/// screen reads and size limits count).
pub fn metadata_text(value: &serde_json::Value) -> std::borrow::Cow<'_, str> {
    match value {
        serde_json::Value::String(text) => std::borrow::Cow::Borrowed(text),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}

/// A metadata value that is a string, as `&str` (`None` for other JSON values).
pub fn metadata_str<'a>(metadata: &'a Metadata, name: &str) -> Option<&'a str> {
    metadata.get(name).and_then(serde_json::Value::as_str)
}
use crate::error::InvalidInput;
use crate::scope::Scope;

/// Defines a closed, snake_case string enum with `as_str`, `ALL`, `Display` and a `FromStr`
/// whose error lists the accepted values.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $field:literal { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire and database spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = InvalidInput;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                match text.trim() {
                    $($text => Ok($name::$variant),)+
                    other => {
                        let accepted: Vec<&str> = $name::ALL.iter().map(|v| v.as_str()).collect();
                        Err(InvalidInput::new(
                            $field,
                            format!("unknown value `{other}` (expected one of: {})", accepted.join(", ")),
                        ))
                    }
                }
            }
        }
    };
}

string_enum! {
    /// What sort of memory a record is (SPEC §1).
    Kind, "kind" {
        /// Facts and preferences: small, high value.
        Semantic => "semantic",
        /// Events, conversation summaries, raw turns: large, needs search.
        Episodic => "episodic",
        /// Standing instructions on how to behave; user-editable.
        Procedural => "procedural",
        /// The small set loaded into every request without search.
        Profile => "profile",
    }
}

string_enum! {
    /// Lifecycle status of a record.
    Status, "status" {
        /// Current and eligible for retrieval.
        Active => "active",
        /// Awaiting the user's confirmation; never retrieved.
        Pending => "pending",
        /// Replaced by a newer record (`superseded_by`); kept as history.
        Superseded => "superseded",
        /// In conflict with another record; excluded until the user settles it.
        Disputed => "disputed",
    }
}

string_enum! {
    /// Whether a record falls in a sensitive category.
    Sensitivity, "sensitivity" {
        /// Ordinary content.
        Normal => "normal",
        /// A sensitive category (health, religion, ...); stored only with consent.
        Sensitive => "sensitive",
    }
}

string_enum! {
    /// Where a record's content came from.
    SourceType, "source" {
        /// The user said it.
        UserStated => "user_stated",
        /// The user did it (clicked, confirmed, edited).
        UserAction => "user_action",
        /// Inferred by an extractor or model.
        Inferred => "inferred",
        /// Returned by a tool call.
        Tool => "tool",
        /// Read from a document.
        Document => "document",
        /// Read from a web page.
        Web => "web",
        /// Set by the system or an operator.
        System => "system",
    }
}

impl SourceType {
    /// How far content from this channel is trusted; higher wins a conflict.
    pub const fn trust(self) -> u8 {
        match self {
            SourceType::UserStated | SourceType::UserAction => 3,
            SourceType::System => 2,
            SourceType::Inferred => 1,
            SourceType::Tool | SourceType::Document | SourceType::Web => 0,
        }
    }

    /// Whether content from this channel may become an active memory without the user's
    /// confirmation (SPEC §3.3): what the user said or did, the system, and inferences drawn
    /// from the user's own words. Tool, document and web content may not.
    pub const fn is_trusted(self) -> bool {
        self.trust() >= 1
    }
}

/// A memory's identifier: a UUIDv7 string, generated by the library.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct MemoryId(pub String);

impl fmt::Display for MemoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Provenance: the channel, the originating reference and when it was captured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Source {
    /// The channel.
    #[serde(rename = "type")]
    pub source_type: SourceType,
    /// Conversation, message or document id the content came from.
    #[serde(rename = "ref")]
    pub source_ref: Option<String>,
    /// When the content was captured.
    pub captured_at: Timestamp,
    /// The extractor (and rule-set or prompt version) that produced the record, if any.
    pub extractor: Option<String>,
}

/// Evidence that the user agreed to store a sensitive record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConsentReceipt {
    /// When consent was given.
    pub granted_at: Timestamp,
    /// How it was given, e.g. `explicit_remember` or `confirmed_pending`.
    pub method: String,
    /// Who or what recorded it (e.g. `cli`, an API key id).
    pub recorded_by: String,
}

/// Which embedder produced a record's vector. Every vector carries this, so vectors of
/// different models are never compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EmbeddingInfo {
    /// The embedder's id (model name and version).
    pub model: String,
    /// The vector's dimensions.
    pub dims: u32,
    /// The vector itself: present in exports, omitted in listings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<Vec<f32>>,
}

/// Who wrote a record of a shared space and who approved it (SPEC §5b).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shared {
    /// The member who wrote or proposed it (`forgotten:<digest>` once that user is deleted).
    pub author: String,
    /// The maintainer's review that made it active; absent while it waits, and for a write
    /// the space let apply directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// A convention the space makes binding: it overrides a member's personal setting of
    /// the same thing (otherwise the personal setting wins, SPEC §3).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mandatory: bool,
}

/// A maintainer's approval of a shared record, recorded as a consent receipt is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Approval {
    /// The maintainer who approved it (`forgotten:<digest>` once that user is deleted).
    pub by: String,
    /// When.
    pub at: Timestamp,
    /// Through which channel (`cli`, `http:<key id>`, `mcp`).
    pub via: String,
}

/// One memory (SPEC §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Memory {
    /// Identifier.
    pub id: MemoryId,
    /// Owning tenant.
    pub tenant: String,
    /// Owning user within the tenant.
    pub user_id: String,
    /// Personal, workspace or project scope.
    pub scope: Scope,
    /// The agent that wrote it, if scoped to one.
    pub agent_id: Option<String>,
    /// The conversation session it belongs to, for session-scoped records.
    pub session_id: Option<String>,
    /// Memory kind.
    pub kind: Kind,
    /// What the statement is about (e.g. `user`), for keyed facts.
    pub subject: Option<String>,
    /// Which property of the subject (e.g. `home_city`); with `subject`, the supersession key.
    pub attribute: Option<String>,
    /// The statement itself.
    pub content: String,
    /// The embedder that produced the record's vector, if it has one.
    pub embedding: Option<EmbeddingInfo>,
    /// How much it matters, 0..1.
    pub importance: f64,
    /// How sure we are it is true, 0..1.
    pub confidence: f64,
    /// Normal or sensitive.
    pub sensitivity: Sensitivity,
    /// Provenance.
    pub source: Source,
    /// Lifecycle status.
    pub status: Status,
    /// When first stored.
    pub created_at: Timestamp,
    /// When last changed (content, status or fields).
    pub updated_at: Timestamp,
    /// When last returned by a read that used it.
    pub last_used_at: Option<Timestamp>,
    /// From when the statement holds.
    pub valid_from: Timestamp,
    /// When it stops holding and is removed.
    pub expires_at: Option<Timestamp>,
    /// When it should be re-confirmed with the user.
    pub review_after: Option<Timestamp>,
    /// The record that replaced it, when superseded.
    pub superseded_by: Option<MemoryId>,
    /// Version number, 1 for the first; each edit adds one.
    pub version: u32,
    /// Consent for a sensitive record.
    pub consent: Option<ConsentReceipt>,
    /// Free-form caller metadata: any JSON value per key, kept as given.
    #[serde(default)]
    pub metadata: Metadata,
    /// A raw conversation turn kept as transcript for its retention period: shown in
    /// context only as part of its own session, never as a long-term memory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transcript: bool,
    /// The records this one was derived from (a session summary from its turns); forgetting
    /// any of them forgets this one too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived_from: Vec<MemoryId>,
    /// For a record of a shared space: its author, approval and whether it is mandatory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<Shared>,
}

impl Memory {
    /// Whether the record has expired at `now`.
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// The record's supersession key, when it has both subject and attribute.
    pub fn key(&self) -> Option<(&str, &str)> {
        Some((self.subject.as_deref()?, self.attribute.as_deref()?))
    }

    /// Why this record cannot be edited (only active or pending ones can), if it cannot.
    pub fn edit_refusal(&self) -> Option<String> {
        (!matches!(self.status, Status::Active | Status::Pending)).then(|| {
            format!(
                "memory {} is {}; only active or pending memories can be edited{}",
                self.id,
                self.status,
                self.superseded_by
                    .as_ref()
                    .map(|by| format!(" (edit {by} instead)"))
                    .unwrap_or_default()
            )
        })
    }

    /// Why this record cannot be confirmed or rejected (only pending ones can), if it
    /// cannot; `action` is `confirmed` or `rejected`.
    pub fn review_refusal(&self, action: &str) -> Option<String> {
        (self.status != Status::Pending).then(|| {
            let hint = if action == "rejected" { " (use forget)" } else { "" };
            format!(
                "memory {} is {}; only pending memories can be {action}{hint}",
                self.id, self.status
            )
        })
    }

    /// The record as it is now, kept as history when an edit replaces it at `replaced_at`.
    pub fn snapshot(&self, replaced_at: Timestamp) -> MemoryVersion {
        MemoryVersion {
            version: self.version,
            content: self.content.clone(),
            status: self.status,
            importance: self.importance,
            confidence: self.confidence,
            updated_at: self.updated_at,
            replaced_at,
        }
    }

    /// The consent a pending record carries once its user confirms it: a sensitive record
    /// without a receipt gets one recorded now by `actor`.
    pub fn consent_on_confirm(&self, now: Timestamp, actor: &str) -> Option<ConsentReceipt> {
        match (&self.consent, self.sensitivity) {
            (None, Sensitivity::Sensitive) => Some(ConsentReceipt {
                granted_at: now,
                method: "confirmed_pending".into(),
                recorded_by: actor.into(),
            }),
            (existing, _) => existing.clone(),
        }
    }
}

/// An earlier version of a record, kept as history until the record is forgotten.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemoryVersion {
    /// The version number this snapshot had.
    pub version: u32,
    /// The content at that version.
    pub content: String,
    /// Status at that version.
    pub status: Status,
    /// Importance at that version.
    pub importance: f64,
    /// Confidence at that version.
    pub confidence: f64,
    /// When that version was written.
    pub updated_at: Timestamp,
    /// When it was replaced by the next version.
    pub replaced_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_parse_their_wire_names_and_reject_others() {
        for kind in Kind::ALL {
            assert_eq!(kind.as_str().parse::<Kind>().unwrap(), *kind);
        }
        let err = "fact".parse::<Kind>().unwrap_err();
        assert_eq!(err.field, "kind");
        assert!(err.problem.contains("semantic, episodic, procedural, profile"));
        assert!("archived".parse::<Status>().is_err());
        assert_eq!("user_stated".parse::<SourceType>().unwrap(), SourceType::UserStated);
    }

    #[test]
    fn tool_document_and_web_channels_are_untrusted() {
        let untrusted: Vec<_> = SourceType::ALL.iter().filter(|s| !s.is_trusted()).collect();
        assert_eq!(untrusted, [&SourceType::Tool, &SourceType::Document, &SourceType::Web]);
    }

    #[test]
    fn review_and_edit_rules_name_the_record_and_what_to_do() {
        let now = Timestamp::from_millis(1_000);
        let fields = crate::lifecycle::CandidateFields {
            content: "My blood type is O negative".into(),
            ..Default::default()
        };
        let mut memory = crate::lifecycle::Candidate::validate(fields, now).unwrap().into_memory(
            MemoryId("m1".into()),
            "t",
            "u",
            Status::Pending,
            now,
        );
        memory.sensitivity = Sensitivity::Sensitive;
        assert_eq!(memory.edit_refusal(), None);
        assert_eq!(memory.review_refusal("confirmed"), None);
        // Confirming a sensitive record without a receipt records the confirmation as one.
        let consent = memory.consent_on_confirm(now, "key-1").unwrap();
        assert_eq!(
            (consent.method.as_str(), consent.recorded_by.as_str()),
            ("confirmed_pending", "key-1")
        );
        memory.status = Status::Superseded;
        memory.superseded_by = Some(MemoryId("m2".into()));
        let refusal = memory.edit_refusal().unwrap();
        assert!(
            refusal.contains("m1 is superseded") && refusal.contains("edit m2 instead"),
            "{refusal}"
        );
        assert!(memory.review_refusal("rejected").unwrap().ends_with("(use forget)"));
        let snapshot = memory.snapshot(Timestamp::from_millis(2_000));
        assert_eq!(
            (snapshot.version, snapshot.content.as_str()),
            (1, "My blood type is O negative")
        );
    }
}
