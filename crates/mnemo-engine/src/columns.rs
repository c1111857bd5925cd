//! The record's columns, described once for every backend: their names and order, the value
//! each field is stored as, and how a record is read back by name from a backend's row.
//!
//! Times are integer milliseconds; enums their wire spelling; consent, metadata,
//! `derived_from` and `shared` JSON text (changing those types needs a migration in each backend).

use mnemo_core::lifecycle::content_hash;
use mnemo_core::ports::PortError;
use mnemo_core::{EmbeddingInfo, ErrorKind, Memory, MemoryId, Source, Timestamp};

use crate::RowId;

/// A stored value, as a backend binds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Text, or NULL.
    Text(Option<String>),
    /// An integer (a time in ms, a version), or NULL.
    Int(Option<i64>),
    /// A real number.
    Real(f64),
    /// A flag.
    Flag(bool),
}

/// The record table's columns an insert writes, in the order of [`record_values`].
pub const RECORD_COLUMNS: &[&str] = &[
    "id",
    "tenant",
    "user_id",
    "scope",
    "agent_id",
    "session_id",
    "kind",
    "subject",
    "attribute",
    "content",
    "content_hash",
    "importance",
    "confidence",
    "sensitivity",
    "source_type",
    "source_ref",
    "source_captured_at",
    "source_extractor",
    "status",
    "created_at",
    "updated_at",
    "last_used_at",
    "valid_from",
    "expires_at",
    "review_after",
    "superseded_by",
    "version",
    "consent",
    "metadata",
    "transcript",
    "derived_from",
    "shared",
];

/// The columns a read selects: the record's (aliased `m`, except its content hash), its
/// vector's embedder (`v`, a left join of the vectors table) and its row id, each read back
/// by [`memory_from`] by name. A test checks it against [`RECORD_COLUMNS`].
pub const SELECT_LIST: &str = "m.id, m.tenant, m.user_id, m.scope, m.agent_id, m.session_id, \
     m.kind, m.subject, m.attribute, m.content, m.importance, m.confidence, m.sensitivity, \
     m.source_type, m.source_ref, m.source_captured_at, m.source_extractor, m.status, \
     m.created_at, m.updated_at, m.last_used_at, m.valid_from, m.expires_at, m.review_after, \
     m.superseded_by, m.version, m.consent, m.metadata, m.transcript, m.derived_from, m.shared, \
     v.model, v.dims, m.rowid";

/// Where a column named in [`SELECT_LIST`] stands in a row that selects it first (every read
/// of a record does): backends resolve a name through this one description rather than
/// searching the row's column names.
pub fn position(name: &str) -> Option<usize> {
    static POSITIONS: std::sync::LazyLock<std::collections::HashMap<&'static str, usize>> =
        std::sync::LazyLock::new(|| {
            SELECT_LIST
                .split(", ")
                .enumerate()
                .map(|(at, column)| (column.trim().split('.').next_back().unwrap_or(column), at))
                .collect()
        });
    POSITIONS.get(name).copied()
}

/// [`SELECT_LIST`] without the vectors table: the embedder's columns are NULL (at their
/// places), for a read that knows each record's embedder already (a search: the index
/// knows which records have a vector, and the file holds one embedder's).
pub static SELECT_LIST_WITHOUT_VECTORS: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| {
        SELECT_LIST.replace("v.model, v.dims", "NULL AS model, NULL AS dims")
    });

/// The FROM clause [`SELECT_LIST`] reads.
pub const SELECT_FROM: &str = "memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid";

fn json<T: serde::Serialize>(value: &T) -> Result<String, PortError> {
    serde_json::to_string(value).map_err(|e| PortError::internal("a value could not be encoded", e))
}

fn text(value: Option<&str>) -> Value {
    Value::Text(value.map(str::to_owned))
}

fn time(value: Option<Timestamp>) -> Value {
    Value::Int(value.map(Timestamp::as_millis))
}

/// The values of a record, in [`RECORD_COLUMNS`] order.
pub fn record_values(memory: &Memory) -> Result<Vec<Value>, PortError> {
    let consent = memory.consent.as_ref().map(json).transpose()?;
    let derived_from =
        (!memory.derived_from.is_empty()).then(|| json(&memory.derived_from)).transpose()?;
    Ok(vec![
        text(Some(&memory.id.0)),
        text(Some(&memory.tenant)),
        text(Some(&memory.user_id)),
        Value::Text(Some(memory.scope.to_string())),
        text(memory.agent_id.as_deref()),
        text(memory.session_id.as_deref()),
        text(Some(memory.kind.as_str())),
        text(memory.subject.as_deref()),
        text(memory.attribute.as_deref()),
        text(Some(&memory.content)),
        Value::Int(Some(content_hash(&memory.content))),
        Value::Real(memory.importance),
        Value::Real(memory.confidence),
        text(Some(memory.sensitivity.as_str())),
        text(Some(memory.source.source_type.as_str())),
        text(memory.source.source_ref.as_deref()),
        time(Some(memory.source.captured_at)),
        text(memory.source.extractor.as_deref()),
        text(Some(memory.status.as_str())),
        time(Some(memory.created_at)),
        time(Some(memory.updated_at)),
        time(memory.last_used_at),
        time(Some(memory.valid_from)),
        time(memory.expires_at),
        time(memory.review_after),
        text(memory.superseded_by.as_ref().map(|id| id.0.as_str())),
        Value::Int(Some(i64::from(memory.version))),
        Value::Text(consent),
        Value::Text(Some(json(&memory.metadata)?)),
        Value::Flag(memory.transcript),
        Value::Text(derived_from),
        Value::Text(memory.shared.as_ref().map(json).transpose()?),
    ])
}

/// One row of a backend, read by column name.
pub trait ColumnReader {
    /// A text column (NULL: `None`).
    fn text(&self, name: &str) -> Result<Option<String>, PortError>;
    /// An integer column (NULL: `None`).
    fn int(&self, name: &str) -> Result<Option<i64>, PortError>;
    /// A real column.
    fn real(&self, name: &str) -> Result<f64, PortError>;
    /// A flag column.
    fn flag(&self, name: &str) -> Result<bool, PortError>;
}

fn corrupt(name: &str, detail: impl std::fmt::Display) -> PortError {
    PortError::new(ErrorKind::Internal, format!("stored column `{name}` is unreadable: {detail}"))
}

fn required<T>(name: &str, value: Option<T>) -> Result<T, PortError> {
    value.ok_or_else(|| corrupt(name, "NULL"))
}

fn parsed<T: std::str::FromStr>(row: &impl ColumnReader, name: &str) -> Result<T, PortError>
where
    T::Err: std::fmt::Display,
{
    let value = required(name, row.text(name)?)?;
    value.parse().map_err(|e: T::Err| corrupt(name, format!("`{value}`: {e}")))
}

fn json_column<T: serde::de::DeserializeOwned>(
    row: &impl ColumnReader,
    name: &str,
) -> Result<Option<T>, PortError> {
    row.text(name)?.map(|t| serde_json::from_str(&t).map_err(|e| corrupt(name, e))).transpose()
}

fn time_column(row: &impl ColumnReader, name: &str) -> Result<Option<Timestamp>, PortError> {
    Ok(row.int(name)?.map(Timestamp::from_millis))
}

/// Reads a record and its row from a row selected with [`SELECT_LIST`].
pub fn memory_from(row: &impl ColumnReader) -> Result<(RowId, Memory), PortError> {
    let embedding = match (row.text("model")?, row.int("dims")?) {
        (Some(model), Some(dims)) => {
            Some(EmbeddingInfo { model, dims: u32::try_from(dims).unwrap_or(0), vector: None })
        }
        _ => None,
    };
    let version = required("version", row.int("version")?)?;
    let memory = Memory {
        id: MemoryId(required("id", row.text("id")?)?),
        tenant: required("tenant", row.text("tenant")?)?,
        user_id: required("user_id", row.text("user_id")?)?,
        scope: parsed(row, "scope")?,
        agent_id: row.text("agent_id")?,
        session_id: row.text("session_id")?,
        kind: parsed(row, "kind")?,
        subject: row.text("subject")?,
        attribute: row.text("attribute")?,
        content: required("content", row.text("content")?)?,
        embedding,
        importance: row.real("importance")?,
        confidence: row.real("confidence")?,
        sensitivity: parsed(row, "sensitivity")?,
        source: Source {
            source_type: parsed(row, "source_type")?,
            source_ref: row.text("source_ref")?,
            captured_at: required("source_captured_at", time_column(row, "source_captured_at")?)?,
            extractor: row.text("source_extractor")?,
        },
        status: parsed(row, "status")?,
        created_at: required("created_at", time_column(row, "created_at")?)?,
        updated_at: required("updated_at", time_column(row, "updated_at")?)?,
        last_used_at: time_column(row, "last_used_at")?,
        valid_from: required("valid_from", time_column(row, "valid_from")?)?,
        expires_at: time_column(row, "expires_at")?,
        review_after: time_column(row, "review_after")?,
        superseded_by: row.text("superseded_by")?.map(MemoryId),
        version: u32::try_from(version).map_err(|e| corrupt("version", e))?,
        consent: json_column(row, "consent")?,
        metadata: json_column(row, "metadata")?.unwrap_or_default(),
        transcript: row.flag("transcript")?,
        derived_from: json_column(row, "derived_from")?.unwrap_or_default(),
        shared: json_column(row, "shared")?,
    };
    Ok((required("rowid", row.int("rowid")?)?, memory))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_written_column_but_the_hash_is_read_back() {
        let selected: Vec<&str> = SELECT_LIST.split(", ").map(str::trim).collect();
        let mut expected: Vec<String> = RECORD_COLUMNS
            .iter()
            .filter(|c| **c != "content_hash")
            .map(|c| format!("m.{c}"))
            .collect();
        expected.extend(["v.model", "v.dims", "m.rowid"].map(str::to_owned));
        assert_eq!(selected, expected);
        assert_eq!(position("id"), Some(0));
        assert_eq!(position("rowid"), Some(selected.len() - 1));
        assert_eq!(position("content_hash"), None);
        let bare: Vec<&str> = SELECT_LIST_WITHOUT_VECTORS.split(", ").map(str::trim).collect();
        assert_eq!(bare.len(), selected.len());
        assert_eq!(bare[position("model").unwrap_or(0)], "NULL AS model");
    }
}
