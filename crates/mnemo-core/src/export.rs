//! The export document: every record of one user with all fields, vectors, versions and
//! provenance, plus the user's settings. Import reads the same document back.
//!
//! Serialized in export files: changing a field is a format change; bump [`EXPORT_VERSION`].

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::error::InvalidInput;
use crate::lifecycle::{validate_content, validate_unit};
use crate::policy::UserSettings;
use crate::ports::ExportedMemory;
use crate::scope::validate_key;

/// The `format` tag of an export document.
pub const EXPORT_FORMAT: &str = "mnemo-export";
/// The current export format version (2: with the user's contributions to shared spaces).
pub const EXPORT_VERSION: u32 = 2;

/// The oldest export format version an import still reads (1: without contributions).
pub const OLDEST_READ_VERSION: u32 = 1;

/// One user's complete memory, as exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportDocument {
    /// Always [`EXPORT_FORMAT`].
    pub format: String,
    /// Format version.
    pub version: u32,
    /// The tenant exported from.
    pub tenant: String,
    /// The user exported.
    pub user_id: String,
    /// When the export was made.
    pub exported_at: Timestamp,
    /// The user's settings.
    pub settings: UserSettings,
    /// Every record, oldest first.
    pub memories: Vec<ExportedMemory>,
    /// What the user wrote to shared spaces (proposals and approved records, with the space
    /// in `scope`): their words, exported with the rest, never imported (a space's records
    /// belong to the space).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contributions: Vec<ExportedMemory>,
}

impl ExportDocument {
    /// Checks the document's header and every record's fields before anything is written.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        if self.format != EXPORT_FORMAT {
            return Err(InvalidInput::new(
                "format",
                format!("`{}` is not `{EXPORT_FORMAT}`", self.format),
            ));
        }
        if !(OLDEST_READ_VERSION..=EXPORT_VERSION).contains(&self.version) {
            return Err(InvalidInput::new(
                "version",
                format!(
                    "export version {} is not supported (expected {OLDEST_READ_VERSION} to \
                     {EXPORT_VERSION})",
                    self.version
                ),
            ));
        }
        validate_key(&self.tenant, "tenant")?;
        validate_key(&self.user_id, "user_id")?;
        let mut seen = std::collections::HashSet::new();
        for (index, record) in self.memories.iter().enumerate() {
            let m = &record.memory;
            let field = |name: &str| format!("memories[{index}].{name}");
            if !seen.insert(&m.id) {
                return Err(InvalidInput::new(field("id"), format!("duplicate id {}", m.id)));
            }
            validate_key(&m.id.0, &field("id"))?;
            if m.user_id != self.user_id || m.tenant != self.tenant {
                return Err(InvalidInput::new(
                    field("user_id"),
                    "does not match the document's tenant and user",
                ));
            }
            let content = validate_content(&m.content)
                .map_err(|e| InvalidInput::new(field("content"), e.problem))?;
            if content != m.content {
                return Err(InvalidInput::new(field("content"), "has surrounding whitespace"));
            }
            validate_unit(m.importance, &field("importance"))?;
            validate_unit(m.confidence, &field("confidence"))?;
            if m.subject.is_some() != m.attribute.is_some() {
                return Err(InvalidInput::new(
                    field("subject"),
                    "subject and attribute must be given together",
                ));
            }
            if m.version == 0 {
                return Err(InvalidInput::new(field("version"), "must be at least 1"));
            }
            if let Some(info) = &m.embedding
                && info.vector.as_ref().is_some_and(|v| v.len() != info.dims as usize)
            {
                return Err(InvalidInput::new(
                    field("embedding"),
                    format!("vector length differs from dims {}", info.dims),
                ));
            }
        }
        Ok(())
    }
}
