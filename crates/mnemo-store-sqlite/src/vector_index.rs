//! The SQLite store's cache of [`UserIndex`]es, shared by the writer and every reader.
//!
//! A user's entry is loaded from the file on first use and kept in step by this process's
//! writes: the records a write inserts are taken as they are and the other rows it touched
//! are re-read, before its next neighbour query or its commit (a user not cached is left to
//! its next load); a user with no record yet starts from an empty entry rather than reading
//! back what the write just inserted.
//! Searches read an entry under its own read lock, so they run in parallel with each other
//! and with writes of other users.
//!
//! Commits by other processes are noticed through `PRAGMA data_version`, which changes on a
//! connection when any *other* connection commits. The writer connection's value therefore
//! changes only for foreign commits; a dedicated watch connection's value changes for every
//! commit, this process's included. After each of its commits the writer records the watch
//! value it left behind; a search whose watch value matches it knows nothing unaccounted for
//! has been committed and uses the cache without touching the writer.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock};

use mnemo_core::Kind;
use mnemo_index::{IndexRow, UserIndex};
use rusqlite::{Connection, params_from_iter};

use crate::StoreError;
use crate::codec::blob_to_vector;
use crate::rows::RowCache;

/// One user's index, shared between the cache and the searches reading it.
pub(crate) type SharedUserIndex = Arc<RwLock<UserIndex>>;

/// The counter SQLite changes when another connection commits.
fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA data_version")?.query_row([], |r| r.get(0))
}

const ROW_SQL: &str = "SELECT m.rowid, m.kind, m.scope, m.status, m.sensitivity, m.expires_at,
            v.vector, json_extract(m.metadata, '$.speaker'), m.session_id, m.valid_from, m.content
       FROM memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid";

/// [`ROW_SQL`] for one row, by rowid.
static ONE_ROW_SQL: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("{ROW_SQL} WHERE m.rowid = ?1"));

/// Rows re-read one at a time through a kept statement, rather than through a statement
/// prepared for their number.
const FEW_ROWS: usize = 16;

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

/// [`ROW_SQL`] for the rows of one user within a range of rowids, read forward through the
/// table (the unary `+` keeps the planner off the owner indexes, whose order is not the
/// table's).
static RANGE_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("{ROW_SQL} WHERE m.rowid BETWEEN ?1 AND ?2 AND +m.tenant = ?3 AND +m.user_id = ?4")
});

/// Reads a user's whole index through `conn`.
///
/// The user's rowids come from the owner index alone; their rows are then read in rowid
/// order, a run of close rowids by one forward pass over the table, so the table's pages are
/// visited once each rather than once per row in the index's (content hash) order.
pub(crate) fn load(conn: &Connection, tenant: &str, user: &str) -> Result<UserIndex, StoreError> {
    // One read snapshot for every statement below (a savepoint nests in a transaction the
    // caller holds, and begins one otherwise).
    let _snapshot = Snapshot::begin(conn)?;
    let mut rowids: Vec<i64> = conn
        .prepare_cached("SELECT rowid FROM memories WHERE tenant = ?1 AND user_id = ?2")?
        .query_map([tenant, user], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    rowids.sort_unstable();
    let mut loaded = UserIndex::default();
    let mut range = conn.prepare_cached(&RANGE_SQL)?;
    for (first, last) in dense_runs(&rowids) {
        for row in range.query_map(rusqlite::params![first, last, tenant, user], read_row)? {
            loaded.upsert_row(row?);
        }
    }
    Ok(loaded)
}

/// A savepoint held while a load reads, released when dropped.
struct Snapshot<'c> {
    conn: &'c Connection,
    /// Whether the savepoint began the connection's transaction (no caller held one).
    began: bool,
}

impl<'c> Snapshot<'c> {
    fn begin(conn: &'c Connection) -> Result<Self, StoreError> {
        let began = conn.is_autocommit();
        conn.execute_batch("SAVEPOINT index_load")?;
        Ok(Self { conn, began })
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        // Nothing was written under it: releasing ends the read, or, nested in the caller's
        // transaction, leaves that transaction as it was. Should the release of a read the
        // savepoint began fail, the read is rolled back instead, so the connection is never
        // left holding an old snapshot (or, on the writer, an open transaction).
        if self.conn.execute_batch("RELEASE index_load").is_err() && self.began {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Rowids a run may skip (other users' rows) besides one per rowid it holds.
const RUN_SLACK: i64 = 32;

/// `sorted` rowids as inclusive ranges, each at most twice as wide as the rowids it holds
/// (plus [`RUN_SLACK`]), so a range's pass over the table reads mostly the user's own rows.
fn dense_runs(sorted: &[i64]) -> Vec<(i64, i64)> {
    let mut runs = Vec::new();
    let mut rest = sorted;
    while let Some(&first) = rest.first() {
        let mut held = 1;
        while let Some(&next) = rest.get(held) {
            if next.saturating_sub(first) >= 2 * (held as i64 + 1) + RUN_SLACK {
                break;
            }
            held += 1;
        }
        runs.push((first, rest[held - 1]));
        rest = &rest[held..];
    }
    runs
}

/// What the cache holds and how far it has followed the file.
#[derive(Debug, Default)]
struct Cached {
    users: HashMap<(String, String), SharedUserIndex>,
    /// The writer connection's `data_version` when last accounted for.
    writer_version: Option<i64>,
    /// The watch connection's `data_version` after the last commit accounted for.
    watch_version: Option<i64>,
    /// Moves whenever every entry is dropped; with `changed`, it tells a load whether what
    /// it read may have changed meanwhile (then it is used but not kept).
    generation: u64,
    /// For each user (or, with no user, whole tenant) whose rows were written, the `ticks`
    /// when the last such write was followed: a load of one user is not made stale by
    /// another user's commit.
    changed: HashMap<(String, Option<String>), u64>,
    ticks: u64,
    /// Users (or, with no user, whole tenants) with changes written but not yet committed:
    /// a reader's load of them misses those changes, so it is kept as `behind`.
    pending: HashSet<(String, Option<String>)>,
    /// Users whose entry a reader loaded while they had changes not yet committed: the entry
    /// lacks those rows until the commit re-reads every row written since (`in_flight`), and
    /// a writer's neighbour query, which needs them, loads the user again instead.
    behind: HashSet<(String, String)>,
    /// The rows each user's writes wrote since the last commit, for `behind` entries.
    in_flight: HashMap<(String, String), Vec<i64>>,
    /// Users a reader is loading: other readers of the user wait for that load (see
    /// [`IndexCache::for_reader`]) instead of reading the same rows beside it.
    loading: HashSet<(String, String)>,
    /// How many loads readers have read from the file.
    #[cfg(test)]
    reader_loads: u64,
}

/// Users whose last write is remembered at most; past it the marks start again (and every
/// load in flight is judged stale).
const CHANGED_KEPT: usize = 100_000;

impl Cached {
    /// What a load of the user is checked against: it is kept only if this has not moved
    /// by the time it is done.
    fn stamp(&self, tenant: &str, user: &str) -> (u64, u64, u64) {
        let at = |key: (String, Option<String>)| self.changed.get(&key).copied().unwrap_or(0);
        let user = at((tenant.to_owned(), Some(user.to_owned())));
        (self.generation, user, at((tenant.to_owned(), None)))
    }

    /// Notes that rows of the user (or with no user, of the whole tenant) were written.
    fn mark_changed(&mut self, tenant: &str, user: Option<&str>) {
        if self.changed.len() >= CHANGED_KEPT {
            self.changed.clear();
            self.generation += 1;
        }
        self.ticks += 1;
        self.changed.insert((tenant.to_owned(), user.map(str::to_owned)), self.ticks);
    }

    fn is_pending(&self, tenant: &str, user: &str) -> bool {
        self.pending.contains(&(tenant.to_owned(), Some(user.to_owned())))
            || self.pending.contains(&(tenant.to_owned(), None))
    }
}

impl Cached {
    /// Brings the versions up to date through the writer connection, dropping every entry if
    /// another process committed since they were last accounted for. The watch value is
    /// read first, so a foreign commit that lands in between shows on the writer's value.
    /// Whether it dropped them.
    fn account(&mut self, writer: &Connection, watch: &Connection) -> Result<bool, StoreError> {
        let watched = data_version(watch)?;
        let written = data_version(writer)?;
        let foreign = self.writer_version != Some(written);
        if foreign {
            self.users.clear();
            self.behind.clear();
            self.generation += 1;
            self.writer_version = Some(written);
        }
        self.watch_version = Some(watched);
        Ok(foreign)
    }

    /// Re-reads the given rows of one user through `conn` (inserted, changed or deleted).
    /// A user not cached is left to load on first use.
    fn refresh(
        &mut self,
        conn: &Connection,
        tenant: &str,
        user: &str,
        rowids: &[i64],
    ) -> Result<(), StoreError> {
        let key = (tenant.to_owned(), user.to_owned());
        let Some(cached) = self.users.get(&key) else { return Ok(()) };
        let mut cached = cached.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        for chunk in rowids.chunks(500) {
            // A write re-reads a row or two between neighbour queries: one kept statement
            // serves those a row at a time.
            let found: Vec<IndexRow> = if chunk.len() <= FEW_ROWS {
                let mut stmt = conn.prepare_cached(&ONE_ROW_SQL)?;
                let mut found = Vec::with_capacity(chunk.len());
                for rowid in chunk {
                    found
                        .extend(stmt.query_map([rowid], read_row)?.collect::<Result<Vec<_>, _>>()?);
                }
                found
            } else {
                let marks = vec!["?"; chunk.len()].join(",");
                let sql = format!("{ROW_SQL} WHERE m.rowid IN ({marks})");
                let mut stmt = conn.prepare(&sql)?;
                stmt.query_map(params_from_iter(chunk), read_row)?.collect::<Result<_, _>>()?
            };
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
}

/// What a committed write changed, so the index can follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Touched {
    /// Nothing the index holds.
    Nothing,
    /// These rows of the acting user (inserted, changed or deleted).
    Rows(Vec<i64>),
    /// Any rows of the acting user.
    User,
    /// Any rows of the acting tenant.
    Tenant,
}

/// One write's changes to follow after its commit.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) tenant: String,
    /// The user, when the write was one user's (a tenant-wide job has none).
    pub(crate) user: Option<String>,
    pub(crate) touched: Touched,
    /// Whether the index already followed them before the commit ([`IndexCache::follow_uncommitted`]).
    pub(crate) followed: bool,
}

/// The index over all users this process has searched or written.
#[derive(Debug)]
pub(crate) struct IndexCache {
    cached: Mutex<Cached>,
    /// Signalled whenever a reader's load ends (kept or not, or failed).
    load_ended: Condvar,
    /// A connection that only reads `data_version` (lock order: after the writer, before
    /// `cached`).
    watch: Mutex<Connection>,
    /// Records searches read, dropped as the entries are (lock order: after `cached`).
    rows: RowCache,
}

impl IndexCache {
    /// A cache watching the file through `watch`, a connection of its own.
    pub(crate) fn new(watch: Connection) -> Self {
        Self {
            cached: Mutex::new(Cached::default()),
            load_ended: Condvar::new(),
            watch: Mutex::new(watch),
            rows: RowCache::default(),
        }
    }

    /// The records searches read, kept until a commit changes them.
    pub(crate) fn rows(&self) -> &RowCache {
        &self.rows
    }

    /// Brings the versions up to date (see [`Cached::account`]); records kept for searches
    /// go with the entries when another process committed.
    fn account_in(
        &self,
        cached: &mut Cached,
        writer: &Connection,
        watch: &Connection,
    ) -> Result<(), StoreError> {
        if cached.account(writer, watch)? {
            self.rows.forget_all();
        }
        Ok(())
    }

    fn cached(&self) -> MutexGuard<'_, Cached> {
        self.cached.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn watch(&self) -> MutexGuard<'_, Connection> {
        self.watch.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether nothing has been committed since the cache last accounted for the file.
    pub(crate) fn is_current(&self) -> Result<bool, StoreError> {
        let watched = data_version(&self.watch())?;
        Ok(self.cached().watch_version == Some(watched))
    }

    /// Accounts for every commit so far through the writer connection (the caller holds it).
    pub(crate) fn account(&self, writer: &Connection) -> Result<(), StoreError> {
        let watch = self.watch();
        self.account_in(&mut self.cached(), writer, &watch)
    }

    /// The user's index as the writer sees it (its own uncommitted rows included); loads it
    /// through the writer connection if missing.
    pub(crate) fn for_writer(
        &self,
        writer: &Connection,
        tenant: &str,
        user: &str,
    ) -> Result<SharedUserIndex, StoreError> {
        let watch = self.watch();
        let mut cached = self.cached();
        self.account_in(&mut cached, writer, &watch)?;
        let key = (tenant.to_owned(), user.to_owned());
        // An entry a reader loaded lacks what the open transaction wrote.
        if cached.behind.remove(&key) {
            cached.users.remove(&key);
        }
        if let Some(found) = cached.users.get(&key) {
            return Ok(found.clone());
        }
        let loaded = Arc::new(RwLock::new(load(writer, tenant, user)?));
        cached.users.insert(key, loaded.clone());
        Ok(loaded)
    }

    /// The user's index for a reader, loading it through `reader` if missing; readers that
    /// find another reader loading the user wait for that load. `None` when commits kept
    /// landing while it was read: the caller loads it through the writer.
    pub(crate) fn for_reader(
        &self,
        reader: &Connection,
        tenant: &str,
        user: &str,
    ) -> Result<Option<SharedUserIndex>, StoreError> {
        let key = (tenant.to_owned(), user.to_owned());
        for _ in 0..3 {
            let stamp = {
                let mut cached = self.cached();
                // Another reader is loading the user (many searches of a user who is not
                // cached, as after a start): wait for its load rather than read it again.
                while cached.loading.contains(&key) {
                    cached = self.load_ended.wait(cached).unwrap_or_else(PoisonError::into_inner);
                }
                if let Some(found) = cached.users.get(&key) {
                    return Ok(Some(found.clone()));
                }
                cached.loading.insert(key.clone());
                #[cfg(test)]
                {
                    cached.reader_loads += 1;
                }
                cached.stamp(tenant, user)
            };
            // Declared before the cache's guard below, so dropped after it.
            let _loading = Loading { cache: self, key: key.clone() };
            let loaded = load(reader, tenant, user)?;
            let mut cached = self.cached();
            if let Some(found) = cached.users.get(&key) {
                return Ok(Some(found.clone()));
            }
            if cached.stamp(tenant, user) == stamp {
                // Right for this read (what is committed); with changes not yet committed,
                // their commit brings it up to date.
                if cached.is_pending(tenant, user) {
                    cached.behind.insert(key.clone());
                }
                let loaded = Arc::new(RwLock::new(loaded));
                cached.users.insert(key, loaded.clone());
                return Ok(Some(loaded));
            }
        }
        Ok(None)
    }

    /// How many loads readers have read from the file.
    #[cfg(test)]
    pub(crate) fn reader_loads(&self) -> u64 {
        self.cached().reader_loads
    }

    /// The user's index for the writer to follow its own inserts into, from the records
    /// themselves rather than by reading them back: the cached entry, or with `create` (the
    /// user holds no record but those the writer is adding) an empty one cached now; `None`
    /// when neither, leaving the rows to the next load. Until the commit is followed,
    /// readers do not cache the user.
    pub(crate) fn for_following(
        &self,
        writer: &Connection,
        tenant: &str,
        user: &str,
        create: bool,
    ) -> Result<Option<SharedUserIndex>, StoreError> {
        let watch = self.watch();
        let mut cached = self.cached();
        self.account_in(&mut cached, writer, &watch)?;
        cached.pending.insert((tenant.to_owned(), Some(user.to_owned())));
        let key = (tenant.to_owned(), user.to_owned());
        if cached.behind.contains(&key) {
            // A reader's entry, which the commit brings up to date; a new user's is empty.
            if !create {
                return Ok(None);
            }
            cached.behind.remove(&key);
            cached.users.remove(&key);
        }
        if let Some(found) = cached.users.get(&key) {
            return Ok(Some(found.clone()));
        }
        if !create {
            return Ok(None);
        }
        let empty = SharedUserIndex::default();
        cached.users.insert(key, empty.clone());
        Ok(Some(empty))
    }

    /// Notes the rows a write of the user wrote, for an entry a reader loads before the
    /// commit ([`Cached::behind`]).
    pub(crate) fn note_written(&self, tenant: &str, user: &str, rows: &[i64]) {
        let mut cached = self.cached();
        let key = (tenant.to_owned(), user.to_owned());
        cached.in_flight.entry(key).or_default().extend_from_slice(rows);
    }

    /// Follows a write before its transaction commits, so later writes of the same
    /// transaction see its rows as neighbours; until the commit is followed, readers do not
    /// cache the user.
    pub(crate) fn follow_uncommitted(
        &self,
        writer: &Connection,
        tenant: &str,
        user: Option<&str>,
        touched: &Touched,
    ) -> Result<(), StoreError> {
        let mut cached = self.cached();
        match (touched, user) {
            (Touched::Nothing, _) => Ok(()),
            (Touched::Rows(rowids), Some(user)) => {
                cached.pending.insert((tenant.to_owned(), Some(user.to_owned())));
                cached.refresh(writer, tenant, user, rowids)
            }
            (Touched::User, Some(user)) => {
                cached.pending.insert((tenant.to_owned(), Some(user.to_owned())));
                cached.users.remove(&(tenant.to_owned(), user.to_owned()));
                Ok(())
            }
            // Rows or a user of a tenant-wide job: every user of the tenant.
            (Touched::Tenant | Touched::Rows(_) | Touched::User, _) => {
                cached.pending.insert((tenant.to_owned(), None));
                cached.users.retain(|(t, _), _| t != tenant);
                Ok(())
            }
        }
    }

    /// Follows committed changes (the caller holds the writer): re-reads their rows and
    /// accounts for the commit. An index that cannot follow is dropped and reloads later.
    pub(crate) fn follow_commit(&self, writer: &Connection, changes: &[Change]) {
        let watch = self.watch();
        let mut cached = self.cached();
        let followed = (|| -> Result<(), StoreError> {
            self.account_in(&mut cached, writer, &watch)?;
            // Every row the commit wrote, whether followed before it or not, leaves the
            // records kept for searches before the write is acknowledged.
            for ((tenant, user), rows) in &cached.in_flight {
                self.rows.forget_rows(tenant, user, rows);
            }
            for change in changes {
                if change.touched != Touched::Nothing {
                    cached.mark_changed(&change.tenant, change.user.as_deref());
                }
                match (&change.touched, &change.user) {
                    (Touched::Nothing, _) => {}
                    (Touched::Rows(rowids), Some(user)) => {
                        self.rows.forget_rows(&change.tenant, user, rowids);
                    }
                    (Touched::User, Some(user)) => {
                        self.rows.forget_owner(&change.tenant, Some(user))
                    }
                    (Touched::Tenant | Touched::Rows(_) | Touched::User, _) => {
                        self.rows.forget_owner(&change.tenant, None);
                    }
                }
                match (&change.touched, &change.user) {
                    (Touched::Nothing, _) => {}
                    (Touched::Rows(_), Some(_)) if change.followed => {}
                    (Touched::Rows(rowids), Some(user)) => {
                        cached.refresh(writer, &change.tenant, user, rowids)?;
                    }
                    (Touched::User, Some(user)) => {
                        cached.users.remove(&(change.tenant.clone(), user.clone()));
                    }
                    (Touched::Tenant | Touched::Rows(_) | Touched::User, _) => {
                        cached.users.retain(|(t, _), _| *t != change.tenant);
                    }
                }
            }
            // Entries readers loaded before this commit take every row written since.
            for (tenant, user) in std::mem::take(&mut cached.behind) {
                let rows = cached.in_flight.remove(&(tenant.clone(), user.clone()));
                cached.refresh(writer, &tenant, &user, rows.as_deref().unwrap_or_default())?;
            }
            Ok(())
        })();
        cached.behind.clear();
        cached.in_flight.clear();
        cached.pending.clear();
        if followed.is_err() {
            cached.users.clear();
            cached.generation += 1;
            self.rows.forget_all();
        }
    }

    /// Drops one user's entry, or every user's of the tenant for a tenant-wide job (its rows
    /// were changed by a write that was rolled back).
    pub(crate) fn drop_user(&self, tenant: &str, user: Option<&str>) {
        let mut cached = self.cached();
        match user {
            Some(user) => {
                let key = (tenant.to_owned(), user.to_owned());
                cached.users.remove(&key);
                cached.behind.remove(&key);
            }
            None => {
                cached.users.retain(|(t, _), _| t != tenant);
                cached.behind.retain(|(t, _)| t != tenant);
            }
        }
        cached.mark_changed(tenant, user);
        self.rows.forget_owner(tenant, user);
    }

    /// Drops every entry (a commit failed after writes had been followed).
    pub(crate) fn clear(&self) {
        let mut cached = self.cached();
        cached.users.clear();
        cached.pending.clear();
        cached.behind.clear();
        cached.in_flight.clear();
        cached.generation += 1;
        self.rows.forget_all();
    }
}

/// A reader's load of one user in progress: when it ends, however it ends, the user is no
/// longer being loaded and the readers waiting for it look again.
struct Loading<'a> {
    cache: &'a IndexCache,
    key: (String, String),
}

impl Drop for Loading<'_> {
    fn drop(&mut self) {
        self.cache.cached().loading.remove(&self.key);
        self.cache.load_ended.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs cover every rowid once, in order, and none is more than twice as wide as the
    /// rowids it holds (plus the slack).
    #[test]
    fn dense_runs_cover_every_rowid_and_stay_dense() {
        let block: Vec<i64> = (1..=100).collect();
        assert_eq!(dense_runs(&block), vec![(1, 100)]);
        let every_other: Vec<i64> = (1..=100).map(|n| 2 * n).collect();
        assert_eq!(dense_runs(&every_other), vec![(2, 200)]);
        let scattered: Vec<i64> = (0..10).map(|n| 1 + 1000 * n).collect();
        assert_eq!(dense_runs(&scattered).len(), 10);
        assert!(dense_runs(&[]).is_empty());
        for rowids in [block, every_other, scattered, vec![5, 6, 7, 90, 91, 400, 401, 402, 9000]] {
            let runs = dense_runs(&rowids);
            let mut covered = Vec::new();
            for &(first, last) in &runs {
                let held: Vec<i64> =
                    rowids.iter().copied().filter(|r| (first..=last).contains(r)).collect();
                assert!(last - first < 2 * held.len() as i64 + RUN_SLACK, "{runs:?}");
                covered.extend(held);
            }
            assert_eq!(covered, rowids);
        }
    }

    /// A load of one user is judged stale by writes of that user, of its whole tenant, or a
    /// drop of every entry, and not by another user's writes.
    #[test]
    fn a_load_is_stale_only_after_writes_that_reach_its_user() {
        let mut cached = Cached::default();
        let alice = cached.stamp("acme", "alice");
        cached.mark_changed("acme", Some("bob"));
        cached.mark_changed("other", None);
        assert_eq!(cached.stamp("acme", "alice"), alice, "others' writes made it stale");
        cached.mark_changed("acme", Some("alice"));
        assert_ne!(cached.stamp("acme", "alice"), alice);
        let alice = cached.stamp("acme", "alice");
        cached.mark_changed("acme", None);
        assert_ne!(cached.stamp("acme", "alice"), alice, "a tenant-wide write left it current");
        let alice = cached.stamp("acme", "alice");
        for n in 0..CHANGED_KEPT {
            cached.mark_changed("acme", Some(&format!("user-{n}")));
        }
        assert_ne!(cached.stamp("acme", "alice"), alice, "forgetting the marks left it current");
        assert!(cached.changed.len() <= CHANGED_KEPT);
    }
}
