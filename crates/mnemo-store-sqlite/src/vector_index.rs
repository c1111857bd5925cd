//! An in-memory, per-user index of the records in the database: int8 vector codes (one scale
//! per vector) with each record's retrievability and ranking fields (kind, scope, status,
//! expiry, speaker, session, date), so a search or near-duplicate check scans contiguous
//! memory instead of decoding rows from SQLite.
//!
//! The database stays the source of truth. A user's entry is loaded on first use, kept in
//! step by the store's own writes (each write reports the rowids it touched), and dropped
//! entirely when `PRAGMA data_version` shows that another connection committed.

use std::collections::HashMap;
use std::sync::Arc;

use mnemo_core::Kind;
use rusqlite::{Connection, params_from_iter};

use crate::StoreError;
use crate::codec::blob_to_vector;
use crate::lexical::{LexicalIndex, LexicalScores};

/// Retrievability fields of one indexed record.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) rowid: i64,
    /// Scale turning a code dot product into a cosine; 0 when the record has no vector.
    scale: f32,
    kind: Kind,
    scope: String,
    active: bool,
    sensitive: bool,
    expires_at: Option<i64>,
    /// Who said it (metadata `speaker`), for conversation turns.
    pub(crate) speaker: Option<Arc<str>>,
    /// Its conversation session.
    pub(crate) session: Option<Arc<str>>,
    /// From when it holds (ms).
    pub(crate) valid_from: i64,
}

impl Entry {
    fn retrievable(&self, filter: &ScanFilter<'_>) -> bool {
        self.active
            && self.expires_at.is_none_or(|at| at > filter.now)
            && filter.kind.is_none_or(|k| k == self.kind)
            && filter.scope.is_none_or(|s| s == self.scope)
            && !(filter.exclude_sensitive && self.sensitive)
    }
}

/// Filters a scan applies before ranking.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanFilter<'a> {
    pub(crate) now: i64,
    pub(crate) kind: Option<Kind>,
    pub(crate) scope: Option<&'a str>,
    pub(crate) exclude_sensitive: bool,
}

/// One user's records. Every entry owns `dims` codes (zeros when it has no vector).
#[derive(Debug, Default)]
struct UserVectors {
    entries: Vec<Entry>,
    codes: Vec<i8>,
    slots: HashMap<i64, usize>,
    dims: usize,
    lexical: LexicalIndex,
}

impl UserVectors {
    fn upsert(&mut self, mut entry: Entry, codes: &[i8], text: &str) {
        self.lexical.upsert(entry.rowid, text, entry.session.clone());
        if self.dims == 0 && !codes.is_empty() {
            self.dims = codes.len();
            self.codes = vec![0; self.entries.len() * self.dims];
        }
        let dims = self.dims;
        let zeros;
        let codes = if codes.len() == dims {
            codes
        } else {
            entry.scale = 0.0;
            zeros = vec![0; dims];
            &zeros
        };
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

    fn remove(&mut self, rowid: i64) {
        self.lexical.remove(rowid);
        let dims = self.dims;
        let Some(slot) = self.slots.remove(&rowid) else { return };
        let last = self.entries.len() - 1;
        if slot != last {
            let moved = self.entries[last].rowid;
            self.entries.swap(slot, last);
            let (head, tail) = self.codes.split_at_mut(last * dims);
            if dims > 0 {
                head[slot * dims..(slot + 1) * dims].copy_from_slice(&tail[..dims]);
            }
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

/// Integer dot product, written over fixed 32-wide chunks with independent accumulators so
/// the compiler vectorizes it.
fn dot(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 32;
    let mut acc = [0i32; LANES];
    let chunks = a.len().min(b.len()) / LANES;
    for (ca, cb) in a.chunks_exact(LANES).zip(b.chunks_exact(LANES)).take(chunks) {
        for i in 0..LANES {
            acc[i] += i32::from(ca[i]) * i32::from(cb[i]);
        }
    }
    let tail: i32 = a[chunks * LANES..]
        .iter()
        .zip(&b[chunks * LANES..])
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    acc.iter().sum::<i32>() + tail
}

/// The counter SQLite bumps when another connection commits.
fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA data_version")?.query_row([], |r| r.get(0))
}

/// The index over all users this process has searched.
#[derive(Debug, Default)]
pub(crate) struct VectorIndex {
    users: HashMap<(String, String), UserVectors>,
    data_version: Option<i64>,
}

const ROW_SQL: &str = "SELECT m.rowid, m.kind, m.scope, m.status, m.sensitivity, m.expires_at,
            v.vector, json_extract(m.metadata, '$.speaker'), m.session_id, m.valid_from, m.content
       FROM memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid";

fn read_entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<(Entry, Vec<f32>, String)> {
    let kind: String = row.get(1)?;
    let status: String = row.get(3)?;
    let sensitivity: String = row.get(4)?;
    let blob: Option<Vec<u8>> = row.get(6)?;
    // A non-text speaker value is ignored rather than failing the load.
    let speaker: Option<String> = row.get(7).unwrap_or(None);
    let session: Option<String> = row.get(8)?;
    let entry = Entry {
        rowid: row.get(0)?,
        scale: 0.0,
        kind: kind.parse().unwrap_or(Kind::Episodic),
        scope: row.get(2)?,
        active: status == "active",
        sensitive: sensitivity == "sensitive",
        expires_at: row.get(5)?,
        speaker: speaker.map(Arc::from),
        session: session.map(Arc::from),
        valid_from: row.get(9)?,
    };
    Ok((entry, blob.and_then(|b| blob_to_vector(&b)).unwrap_or_default(), row.get(10)?))
}

impl VectorIndex {
    /// Drops every cached user if another connection has committed since the last check.
    pub(crate) fn sync(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let version: i64 = data_version(conn)?;
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
                let (mut entry, vector, text) = row?;
                let (codes, scale) = quantize(&vector);
                entry.scale = scale;
                loaded.upsert(entry, &codes, &text);
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
            let found: Vec<(Entry, Vec<f32>, String)> =
                stmt.query_map(params_from_iter(chunk), read_entry)?.collect::<Result<_, _>>()?;
            for rowid in chunk {
                if !found.iter().any(|(e, _, _)| e.rowid == *rowid) {
                    cached.remove(*rowid);
                }
            }
            for (mut entry, vector, text) in found {
                let (codes, scale) = quantize(&vector);
                entry.scale = scale;
                cached.upsert(entry, &codes, &text);
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
        let dims = vectors.dims;
        let mut scored: Vec<(i64, f32)> = Vec::new();
        if dims != codes.len() {
            return Ok(scored);
        }
        for (slot, entry) in vectors.entries.iter().enumerate() {
            if entry.scale == 0.0 || !entry.retrievable(&filter) {
                continue;
            }
            let row = &vectors.codes[slot * dims..(slot + 1) * dims];
            scored.push((entry.rowid, dot(&codes, row) as f32 * query_scale * entry.scale));
        }
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit, |a, b| b.1.total_cmp(&a.1));
            scored.truncate(limit);
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(scored)
    }
}

/// The cosine of every record (by slot) to the query (0 without a vector or a query).
fn cosines(vectors: &UserVectors, query: Option<&(Vec<i8>, f32)>) -> Vec<f32> {
    let dims = vectors.dims;
    let Some((codes, scale)) = query.filter(|(c, _)| c.len() == dims && dims > 0) else {
        return vec![0.0; vectors.entries.len()];
    };
    vectors
        .entries
        .iter()
        .enumerate()
        .map(|(slot, entry)| {
            if entry.scale == 0.0 {
                return 0.0;
            }
            dot(codes, &vectors.codes[slot * dims..(slot + 1) * dims]) as f32 * scale * entry.scale
        })
        .collect()
}

impl VectorIndex {
    /// BM25F scores of the user's records and sessions matching `terms`.
    pub(crate) fn lexical_scores(
        &mut self,
        conn: &Connection,
        tenant: &str,
        user: &str,
        terms: &[String],
    ) -> Result<LexicalScores, StoreError> {
        self.sync(conn)?;
        Ok(self.user(conn, tenant, user)?.lexical.score(terms))
    }

    /// Calls `visit` with every retrievable record of a user and its cosine to `query` (0
    /// for a record without a vector, or when no query vector is given). The entries are
    /// borrowed for the duration of the call, so `visit` may keep references to them.
    pub(crate) fn scan<'i, T>(
        &'i mut self,
        conn: &Connection,
        tenant: &str,
        user: &str,
        query: Option<&[f32]>,
        filter: ScanFilter<'_>,
        consume: impl FnOnce(&mut dyn Iterator<Item = (&'i Entry, f32)>) -> T,
    ) -> Result<T, StoreError> {
        self.sync(conn)?;
        let quantized = query.map(quantize);
        let vectors: &'i UserVectors = self.user(conn, tenant, user)?;
        let cosines = cosines(vectors, quantized.as_ref());
        let mut rows =
            vectors.entries.iter().zip(cosines).filter(move |(e, _)| e.retrievable(&filter));
        Ok(consume(&mut rows))
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
            speaker: None,
            session: None,
            valid_from: 0,
        };
        for r in 1..=4 {
            u.upsert(entry(r), &[r as i8, -(r as i8)], "text");
        }
        u.remove(2);
        assert_eq!(u.entries.len(), 3);
        for (slot, e) in u.entries.iter().enumerate() {
            assert_eq!(u.slots[&e.rowid], slot);
            assert_eq!(u.codes[slot * 2], e.rowid as i8);
        }
        u.remove(4);
        u.remove(9);
        assert_eq!(u.entries.iter().map(|e| e.rowid).collect::<Vec<_>>(), [1, 3]);
    }
}
