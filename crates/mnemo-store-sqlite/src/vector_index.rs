//! The SQLite store's cache of [`UserIndex`]es: a user's entry is loaded from the file on
//! first use, kept in step by this connection's writes (each write reports the rowids it
//! touched), and dropped entirely when `PRAGMA data_version` shows that another connection
//! committed.

use std::collections::HashMap;

use mnemo_core::Kind;
use mnemo_index::{IndexRow, UserIndex};
use rusqlite::{Connection, params_from_iter};

use crate::StoreError;
use crate::codec::blob_to_vector;

/// The counter SQLite bumps when another connection commits.
fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA data_version")?.query_row([], |r| r.get(0))
}

/// The index over all users this process has searched.
#[derive(Debug, Default)]
pub(crate) struct VectorIndex {
    users: HashMap<(String, String), UserIndex>,
    data_version: Option<i64>,
}

const ROW_SQL: &str = "SELECT m.rowid, m.kind, m.scope, m.status, m.sensitivity, m.expires_at,
            v.vector, json_extract(m.metadata, '$.speaker'), m.session_id, m.valid_from, m.content
       FROM memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid";

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<IndexRow> {
    let kind: String = row.get(1)?;
    let status: String = row.get(3)?;
    let sensitivity: String = row.get(4)?;
    let blob: Option<Vec<u8>> = row.get(6)?;
    Ok(IndexRow {
        rowid: row.get(0)?,
        kind: kind.parse().unwrap_or(Kind::Episodic),
        scope: row.get(2)?,
        active: status == "active",
        sensitive: sensitivity == "sensitive",
        expires_at: row.get(5)?,
        vector: blob.and_then(|b| blob_to_vector(&b)).unwrap_or_default(),
        text: row.get(10)?,
        // A non-text speaker value is ignored rather than failing the load.
        speaker: row.get(7).unwrap_or(None),
        session: row.get(8)?,
        valid_from: row.get(9)?,
    })
}

impl VectorIndex {
    /// Drops every cached user if another connection has committed since the last check.
    fn sync(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let version: i64 = data_version(conn)?;
        if self.data_version != Some(version) {
            self.users.clear();
            self.data_version = Some(version);
        }
        Ok(())
    }

    /// The user's index, current with the file.
    pub(crate) fn user(
        &mut self,
        conn: &Connection,
        tenant: &str,
        user: &str,
    ) -> Result<&UserIndex, StoreError> {
        self.sync(conn)?;
        let key = (tenant.to_owned(), user.to_owned());
        if !self.users.contains_key(&key) {
            let mut loaded = UserIndex::default();
            let sql = format!("{ROW_SQL} WHERE m.tenant = ?1 AND m.user_id = ?2");
            let mut stmt = conn.prepare_cached(&sql)?;
            for row in stmt.query_map([tenant, user], read_row)? {
                loaded.upsert_row(row?);
            }
            self.users.insert(key.clone(), loaded);
        }
        Ok(self.users.entry(key).or_default())
    }

    /// Re-reads the given rows of one user after this connection changed them (inserted,
    /// superseded, edited or deleted). A user not cached is left to load on first use.
    pub(crate) fn refresh(
        &mut self,
        conn: &Connection,
        tenant: &str,
        user: &str,
        rowids: &[i64],
    ) -> Result<(), StoreError> {
        // Our own commit moved data_version too; account for it so the cache stays.
        let version: i64 = data_version(conn)?;
        if self.data_version.is_some_and(|v| v != version) {
            self.users.clear();
        }
        self.data_version = Some(version);
        let key = (tenant.to_owned(), user.to_owned());
        let Some(cached) = self.users.get_mut(&key) else { return Ok(()) };
        for chunk in rowids.chunks(500) {
            let marks = vec!["?"; chunk.len()].join(",");
            let sql = format!("{ROW_SQL} WHERE m.rowid IN ({marks})");
            let mut stmt = conn.prepare(&sql)?;
            let found: Vec<IndexRow> =
                stmt.query_map(params_from_iter(chunk), read_row)?.collect::<Result<_, _>>()?;
            for rowid in chunk {
                if !found.iter().any(|row| row.rowid == *rowid) {
                    cached.remove(*rowid);
                }
            }
            for row in found {
                cached.upsert_row(row);
            }
        }
        Ok(())
    }

    /// Forgets a user's cached vectors (after bulk changes).
    pub(crate) fn drop_user(&mut self, tenant: &str, user: &str) {
        self.users.remove(&(tenant.to_owned(), user.to_owned()));
    }

    /// Forgets every cached user of a tenant.
    pub(crate) fn drop_tenant(&mut self, tenant: &str) {
        self.users.retain(|(t, _), _| t != tenant);
    }
}
