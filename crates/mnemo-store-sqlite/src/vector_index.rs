//! An in-memory, per-user index of the vectors in the database: int8 codes (one scale per
//! vector) with each record's retrievability fields, so a vector search or near-duplicate
//! check scans contiguous memory instead of decoding blobs from SQLite.
//!
//! The database stays the source of truth. A user's entry is loaded on first use, kept in
//! step by the store's own writes (each write reports the rowids it touched), and dropped
//! entirely when `PRAGMA data_version` shows that another connection committed.

use std::collections::HashMap;

use mnemo_core::Kind;
use rusqlite::{Connection, params_from_iter};

use crate::StoreError;
use crate::codec::blob_to_vector;

/// Retrievability fields of one indexed record.
#[derive(Debug, Clone)]
struct Entry {
    rowid: i64,
    scale: f32,
    kind: Kind,
    scope: String,
    active: bool,
    sensitive: bool,
    expires_at: Option<i64>,
}

/// Filters a scan applies before ranking.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanFilter<'a> {
    pub(crate) now: i64,
    pub(crate) kind: Option<Kind>,
    pub(crate) scope: Option<&'a str>,
    pub(crate) exclude_sensitive: bool,
}

/// One user's vectors.
#[derive(Debug, Default)]
struct UserVectors {
    entries: Vec<Entry>,
    codes: Vec<i8>,
    slots: HashMap<i64, usize>,
}

impl UserVectors {
    fn upsert(&mut self, entry: Entry, codes: &[i8]) {
        let dims = codes.len();
        match self.slots.get(&entry.rowid) {
            Some(&slot) => {
                self.codes[slot * dims..(slot + 1) * dims].copy_from_slice(codes);
                self.entries[slot] = entry;
            }
            None => {
                self.slots.insert(entry.rowid, self.entries.len());
                self.entries.push(entry);
                self.codes.extend_from_slice(codes);
            }
        }
    }

    fn remove(&mut self, rowid: i64, dims: usize) {
        let Some(slot) = self.slots.remove(&rowid) else { return };
        let last = self.entries.len() - 1;
        if slot != last {
            let moved = self.entries[last].rowid;
            self.entries.swap(slot, last);
            let (head, tail) = self.codes.split_at_mut(last * dims);
            head[slot * dims..(slot + 1) * dims].copy_from_slice(&tail[..dims]);
            self.slots.insert(moved, slot);
        }
        self.entries.pop();
        self.codes.truncate(last * dims);
    }
}

/// Quantises a vector to int8 codes of its unit-length version; returns the scale that
/// turns a code dot product back into a cosine.
pub(crate) fn quantize(vector: &[f32]) -> (Vec<i8>, f32) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    let max = vector.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
    if norm == 0.0 || max == 0.0 {
        return (vec![0; vector.len()], 0.0);
    }
    let scale = max / 127.0;
    let codes = vector.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect();
    (codes, scale / norm)
}

/// The cosine of two quantised vectors.
pub(crate) fn cosine_of(a: &(Vec<i8>, f32), b: &(Vec<i8>, f32)) -> f32 {
    dot(&a.0, &b.0) as f32 * a.1 * b.1
}

fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum()
}

/// The index over all users this process has searched.
#[derive(Debug, Default)]
pub(crate) struct VectorIndex {
    users: HashMap<(String, String), UserVectors>,
    dims: usize,
    data_version: Option<i64>,
}

const ROW_SQL: &str =
    "SELECT m.rowid, m.kind, m.scope, m.status, m.sensitivity, m.expires_at, v.vector
       FROM memories m JOIN memory_vectors v ON v.memory_rowid = m.rowid";

fn read_entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<(Entry, Vec<f32>)> {
    let kind: String = row.get(1)?;
    let status: String = row.get(3)?;
    let sensitivity: String = row.get(4)?;
    let blob: Vec<u8> = row.get(6)?;
    let entry = Entry {
        rowid: row.get(0)?,
        scale: 0.0,
        kind: kind.parse().unwrap_or(Kind::Episodic),
        scope: row.get(2)?,
        active: status == "active",
        sensitive: sensitivity == "sensitive",
        expires_at: row.get(5)?,
    };
    Ok((entry, blob_to_vector(&blob).unwrap_or_default()))
}

impl VectorIndex {
    /// Drops every cached user if another connection has committed since the last check.
    pub(crate) fn sync(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let version: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        if self.data_version != Some(version) {
            self.users.clear();
            self.data_version = Some(version);
        }
        Ok(())
    }

    fn user(
        &mut self,
        conn: &Connection,
        tenant: &str,
        user: &str,
    ) -> Result<&mut UserVectors, StoreError> {
        let key = (tenant.to_owned(), user.to_owned());
        if !self.users.contains_key(&key) {
            let mut loaded = UserVectors::default();
            let sql = format!("{ROW_SQL} WHERE m.tenant = ?1 AND m.user_id = ?2");
            let mut stmt = conn.prepare_cached(&sql)?;
            let rows = stmt.query_map([tenant, user], read_entry)?;
            for row in rows {
                let (mut entry, vector) = row?;
                let (codes, scale) = quantize(&vector);
                self.dims = codes.len();
                entry.scale = scale;
                loaded.upsert(entry, &codes);
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
        let version: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
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
            let found: Vec<(Entry, Vec<f32>)> =
                stmt.query_map(params_from_iter(chunk), read_entry)?.collect::<Result<_, _>>()?;
            for rowid in chunk {
                if !found.iter().any(|(e, _)| e.rowid == *rowid) {
                    cached.remove(*rowid, self.dims.max(1));
                }
            }
            for (mut entry, vector) in found {
                let (codes, scale) = quantize(&vector);
                self.dims = codes.len();
                entry.scale = scale;
                cached.upsert(entry, &codes);
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

    /// The `limit` retrievable rows of a user most similar to `query`, best first, with their
    /// approximate cosine.
    pub(crate) fn nearest(
        &mut self,
        conn: &Connection,
        tenant: &str,
        user: &str,
        query: &[f32],
        filter: ScanFilter<'_>,
        limit: usize,
    ) -> Result<Vec<(i64, f32)>, StoreError> {
        self.sync(conn)?;
        let (codes, query_scale) = quantize(query);
        let vectors = self.user(conn, tenant, user)?;
        let dims = codes.len();
        let mut scored: Vec<(i64, f32)> = Vec::new();
        for (slot, entry) in vectors.entries.iter().enumerate() {
            if !entry.active
                || entry.expires_at.is_some_and(|at| at <= filter.now)
                || filter.kind.is_some_and(|k| k != entry.kind)
                || filter.scope.is_some_and(|s| s != entry.scope)
                || (filter.exclude_sensitive && entry.sensitive)
            {
                continue;
            }
            let Some(row) = vectors.codes.get(slot * dims..(slot + 1) * dims) else { continue };
            let cosine = dot(&codes, row) as f32 * query_scale * entry.scale;
            scored.push((entry.rowid, cosine));
        }
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit, |a, b| b.1.total_cmp(&a.1));
            scored.truncate(limit);
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(scored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_cosine_is_close_to_exact() {
        let a: Vec<f32> = (0..256).map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0).collect();
        let b: Vec<f32> = (0..256).map(|i| ((i * 53 % 97) as f32 - 48.0) / 40.0).collect();
        let exact = {
            let d: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
            let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
            d / (na * nb)
        };
        let (qa, sa) = quantize(&a);
        let (qb, sb) = quantize(&b);
        let approx = dot(&qa, &qb) as f32 * sa * sb;
        assert!((approx - exact).abs() < 0.01, "{approx} vs {exact}");
        let (qs, ss) = quantize(&a);
        assert!((dot(&qs, &qa) as f32 * ss * sa - 1.0).abs() < 0.01);
    }

    #[test]
    fn remove_keeps_slots_consistent() {
        let mut u = UserVectors::default();
        let entry = |rowid| Entry {
            rowid,
            scale: 1.0,
            kind: Kind::Semantic,
            scope: "user".into(),
            active: true,
            sensitive: false,
            expires_at: None,
        };
        for r in 1..=4 {
            u.upsert(entry(r), &[r as i8, -(r as i8)]);
        }
        u.remove(2, 2);
        assert_eq!(u.entries.len(), 3);
        for (slot, e) in u.entries.iter().enumerate() {
            assert_eq!(u.slots[&e.rowid], slot);
            assert_eq!(u.codes[slot * 2], e.rowid as i8);
        }
        u.remove(4, 2);
        u.remove(9, 2);
        assert_eq!(u.entries.iter().map(|e| e.rowid).collect::<Vec<_>>(), [1, 3]);
    }
}
