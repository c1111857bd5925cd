//! Mapping between database rows and core records: column lists, enum spellings, vector blobs
//! and the content hash used for duplicate lookups.

use mnemo_core::{ConsentReceipt, EmbeddingInfo, Memory, MemoryId, Scope, Source, Timestamp};
use rusqlite::Row;

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

fn parse_column<T: std::str::FromStr>(row: &Row<'_>, index: usize) -> rusqlite::Result<T>
where
    T::Err: std::fmt::Display,
{
    let text: String = row.get(index)?;
    text.parse().map_err(|e: T::Err| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            format!("bad stored value `{text}`: {e}").into(),
        )
    })
}

fn json_column<T: serde::de::DeserializeOwned>(
    row: &Row<'_>,
    index: usize,
) -> rusqlite::Result<Option<T>> {
    let text: Option<String> = row.get(index)?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, e.into())
        })
    })
    .transpose()
}

fn time(row: &Row<'_>, index: usize) -> rusqlite::Result<Timestamp> {
    row.get(index).map(Timestamp::from_millis)
}

fn opt_time(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<Timestamp>> {
    Ok(row.get::<_, Option<i64>>(index)?.map(Timestamp::from_millis))
}

/// Reads a record and its rowid from a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<(i64, Memory)> {
    let embedding = match (row.get::<_, Option<String>>(28)?, row.get::<_, Option<u32>>(29)?) {
        (Some(model), Some(dims)) => Some(EmbeddingInfo { model, dims, vector: None }),
        _ => None,
    };
    let metadata: mnemo_core::Metadata = json_column(row, 27)?.unwrap_or_default();
    let consent: Option<ConsentReceipt> = json_column(row, 26)?;
    let memory = Memory {
        id: MemoryId(row.get(0)?),
        tenant: row.get(1)?,
        user_id: row.get(2)?,
        scope: parse_column::<Scope>(row, 3)?,
        agent_id: row.get(4)?,
        session_id: row.get(5)?,
        kind: parse_column(row, 6)?,
        subject: row.get(7)?,
        attribute: row.get(8)?,
        content: row.get(9)?,
        embedding,
        importance: row.get(10)?,
        confidence: row.get(11)?,
        sensitivity: parse_column(row, 12)?,
        source: Source {
            source_type: parse_column(row, 13)?,
            source_ref: row.get(14)?,
            captured_at: time(row, 15)?,
            extractor: row.get(16)?,
        },
        status: parse_column(row, 17)?,
        created_at: time(row, 18)?,
        updated_at: time(row, 19)?,
        last_used_at: opt_time(row, 20)?,
        valid_from: time(row, 21)?,
        expires_at: opt_time(row, 22)?,
        review_after: opt_time(row, 23)?,
        superseded_by: row.get::<_, Option<String>>(24)?.map(MemoryId),
        version: row.get(25)?,
        consent,
        metadata,
        transcript: row.get(31)?,
        derived_from: json_column(row, 32)?.unwrap_or_default(),
    };
    Ok((row.get(30)?, memory))
}

pub(crate) use mnemo_core::lifecycle::content_hash;

/// Encodes a vector as little-endian f32 bytes.
pub(crate) fn vector_to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Decodes little-endian f32 bytes; `None` when the length is not a whole number of floats.
pub(crate) fn blob_to_vector(blob: &[u8]) -> Option<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return None;
    }
    Some(blob.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Serializes a value stored as JSON text.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::Json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_blob_round_trips() {
        let v = vec![0.5_f32, -1.25, f32::MIN_POSITIVE, 3.0e-9];
        assert_eq!(blob_to_vector(&vector_to_blob(&v)).unwrap(), v);
        assert!(blob_to_vector(&[1, 2, 3]).is_none());
    }

    #[test]
    fn content_hash_ignores_case_and_spacing() {
        assert_eq!(content_hash("I like  TEA"), content_hash(" i like tea "));
        assert_ne!(content_hash("I like tea"), content_hash("I like coffee"));
    }
}
