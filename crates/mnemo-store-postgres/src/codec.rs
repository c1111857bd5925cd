//! Mapping between PostgreSQL rows and core records: the column list and enum spellings.

use mnemo_core::{ConsentReceipt, EmbeddingInfo, Memory, MemoryId, Scope, Source, Timestamp};
use postgres::Row;

use crate::StoreError;

/// Columns selected for a [`Memory`], in the order [`memory_from_row`] reads them. Expects the
/// record table aliased `m` and a left join of `memory_vectors` aliased `v`.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.tenant, m.user_id, m.scope, m.agent_id, \
     m.session_id, m.kind, m.subject, m.attribute, m.content, m.importance, m.confidence, \
     m.sensitivity, m.source_type, m.source_ref, m.source_captured_at, m.source_extractor, \
     m.status, m.created_at, m.updated_at, m.last_used_at, m.valid_from, m.expires_at, \
     m.review_after, m.superseded_by, m.version, m.consent, m.metadata, v.model, v.dims, m.rowid, \
     m.transcript, m.derived_from";

/// The FROM clause matching [`MEMORY_COLUMNS`].
pub(crate) const MEMORY_FROM: &str =
    "memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid";

fn parse_column<T: std::str::FromStr>(row: &Row, index: usize) -> Result<T, StoreError>
where
    T::Err: std::fmt::Display,
{
    let text: String = row.try_get(index)?;
    text.parse().map_err(|e: T::Err| StoreError::Corrupt(format!("bad stored value `{text}`: {e}")))
}

fn json_column<T: serde::de::DeserializeOwned>(
    row: &Row,
    index: usize,
) -> Result<Option<T>, StoreError> {
    let text: Option<String> = row.try_get(index)?;
    text.map(|t| serde_json::from_str(&t).map_err(StoreError::Json)).transpose()
}

fn time(row: &Row, index: usize) -> Result<Timestamp, StoreError> {
    Ok(Timestamp::from_millis(row.try_get(index)?))
}

fn opt_time(row: &Row, index: usize) -> Result<Option<Timestamp>, StoreError> {
    Ok(row.try_get::<_, Option<i64>>(index)?.map(Timestamp::from_millis))
}

/// Reads a record and its rowid from a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory_from_row(row: &Row) -> Result<(i64, Memory), StoreError> {
    let embedding =
        match (row.try_get::<_, Option<String>>(28)?, row.try_get::<_, Option<i32>>(29)?) {
            (Some(model), Some(dims)) => {
                Some(EmbeddingInfo { model, dims: u32::try_from(dims).unwrap_or(0), vector: None })
            }
            _ => None,
        };
    let metadata: mnemo_core::Metadata = json_column(row, 27)?.unwrap_or_default();
    let consent: Option<ConsentReceipt> = json_column(row, 26)?;
    let memory = Memory {
        id: MemoryId(row.try_get(0)?),
        tenant: row.try_get(1)?,
        user_id: row.try_get(2)?,
        scope: parse_column::<Scope>(row, 3)?,
        agent_id: row.try_get(4)?,
        session_id: row.try_get(5)?,
        kind: parse_column(row, 6)?,
        subject: row.try_get(7)?,
        attribute: row.try_get(8)?,
        content: row.try_get(9)?,
        embedding,
        importance: row.try_get(10)?,
        confidence: row.try_get(11)?,
        sensitivity: parse_column(row, 12)?,
        source: Source {
            source_type: parse_column(row, 13)?,
            source_ref: row.try_get(14)?,
            captured_at: time(row, 15)?,
            extractor: row.try_get(16)?,
        },
        status: parse_column(row, 17)?,
        created_at: time(row, 18)?,
        updated_at: time(row, 19)?,
        last_used_at: opt_time(row, 20)?,
        valid_from: time(row, 21)?,
        expires_at: opt_time(row, 22)?,
        review_after: opt_time(row, 23)?,
        superseded_by: row.try_get::<_, Option<String>>(24)?.map(MemoryId),
        version: u32::try_from(row.try_get::<_, i32>(25)?).unwrap_or(0),
        consent,
        metadata,
        transcript: row.try_get(31)?,
        derived_from: json_column(row, 32)?.unwrap_or_default(),
    };
    Ok((row.try_get(30)?, memory))
}

/// Serializes a value stored as JSON text.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::Json)
}
