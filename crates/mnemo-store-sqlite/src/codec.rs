//! Mapping between database rows and core records (the engine's description of the record's
//! columns, read by name and bound as parameters), vector blobs and the content hash used for
//! duplicate lookups.

use mnemo_core::Memory;
use mnemo_core::ports::PortError;
use mnemo_engine::columns::{ColumnReader, Value, memory_from, position};
use rusqlite::Row;
use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};

use crate::StoreError;

pub(crate) use mnemo_engine::columns::{SELECT_FROM as MEMORY_FROM, SELECT_LIST as MEMORY_COLUMNS};

/// A row read by column name, for the engine's description of the record: each name is
/// found at its place in that description.
struct Named<'r, 's>(&'r Row<'s>);

impl Named<'_, '_> {
    fn at(name: &str) -> rusqlite::Result<usize> {
        position(name).ok_or_else(|| rusqlite::Error::InvalidColumnName(name.to_owned()))
    }
}

fn port(error: rusqlite::Error) -> PortError {
    StoreError::from(error).into()
}

impl ColumnReader for Named<'_, '_> {
    fn text(&self, name: &str) -> Result<Option<String>, PortError> {
        self.0.get(Self::at(name).map_err(port)?).map_err(port)
    }

    fn int(&self, name: &str) -> Result<Option<i64>, PortError> {
        self.0.get(Self::at(name).map_err(port)?).map_err(port)
    }

    fn real(&self, name: &str) -> Result<f64, PortError> {
        self.0.get(Self::at(name).map_err(port)?).map_err(port)
    }

    fn flag(&self, name: &str) -> Result<bool, PortError> {
        self.0.get(Self::at(name).map_err(port)?).map_err(port)
    }
}

/// Reads a record and its rowid from a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<(i64, Memory)> {
    memory_from(&Named(row)).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Null, Box::new(e))
    })
}

/// A value of the engine's description, bound as an SQLite parameter.
pub(crate) struct Bound<'a>(pub(crate) &'a Value);

impl ToSql for Bound<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Text(text) => match text {
                Some(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
                None => ToSqlOutput::Owned(rusqlite::types::Value::Null),
            },
            Value::Int(int) => match int {
                Some(int) => ToSqlOutput::Owned(rusqlite::types::Value::Integer(*int)),
                None => ToSqlOutput::Owned(rusqlite::types::Value::Null),
            },
            Value::Real(real) => ToSqlOutput::Owned(rusqlite::types::Value::Real(*real)),
            Value::Flag(flag) => {
                ToSqlOutput::Owned(rusqlite::types::Value::Integer(i64::from(*flag)))
            }
        })
    }
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
