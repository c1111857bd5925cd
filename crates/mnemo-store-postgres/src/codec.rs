//! Mapping between PostgreSQL rows and core records: the engine's description of the
//! record's columns, read by name and bound as parameters of each column's type.

use bytes::BytesMut;
use mnemo_core::Memory;
use mnemo_core::ports::PortError;
use mnemo_engine::columns::{ColumnReader, Value, memory_from, position};
use postgres::Row;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use crate::StoreError;

pub(crate) use mnemo_engine::columns::{SELECT_FROM as MEMORY_FROM, SELECT_LIST as MEMORY_COLUMNS};

/// A row read by column name, for the engine's description of the record: each name is
/// found at its place in that description.
struct Named<'r>(&'r Row);

impl Named<'_> {
    fn at(name: &str) -> Result<usize, PortError> {
        position(name).ok_or_else(|| {
            PortError::new(mnemo_core::ErrorKind::Internal, format!("no column `{name}` is read"))
        })
    }
}

fn port(error: postgres::Error) -> PortError {
    StoreError::from(error).into()
}

impl ColumnReader for Named<'_> {
    fn text(&self, name: &str) -> Result<Option<String>, PortError> {
        self.0.try_get(Self::at(name)?).map_err(port)
    }

    fn int(&self, name: &str) -> Result<Option<i64>, PortError> {
        // Versions and dimensions are `integer`, times and row ids `bigint`.
        let at = Self::at(name)?;
        match self.0.try_get::<_, Option<i64>>(at) {
            Ok(value) => Ok(value),
            Err(_) => self.0.try_get::<_, Option<i32>>(at).map(|v| v.map(i64::from)).map_err(port),
        }
    }

    fn real(&self, name: &str) -> Result<f64, PortError> {
        self.0.try_get(Self::at(name)?).map_err(port)
    }

    fn flag(&self, name: &str) -> Result<bool, PortError> {
        self.0.try_get(Self::at(name)?).map_err(port)
    }
}

/// Reads a record and its rowid from a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory_from_row(row: &Row) -> Result<(i64, Memory), StoreError> {
    memory_from(&Named(row)).map_err(StoreError::Port)
}

/// A value of the engine's description, bound as a PostgreSQL parameter of the column's type.
#[derive(Debug)]
pub(crate) struct Bound<'a>(pub(crate) &'a Value);

impl ToSql for Bound<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Value::Text(text) => text.to_sql(ty, out),
            Value::Int(int) if *ty == Type::INT4 => {
                int.map(i32::try_from).transpose()?.to_sql(ty, out)
            }
            Value::Int(int) => int.to_sql(ty, out),
            Value::Real(real) => real.to_sql(ty, out),
            Value::Flag(flag) => flag.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        [Type::TEXT, Type::VARCHAR, Type::INT4, Type::INT8, Type::FLOAT8, Type::BOOL].contains(ty)
    }

    to_sql_checked!();
}

/// Serializes a value stored as JSON text.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::Json)
}
