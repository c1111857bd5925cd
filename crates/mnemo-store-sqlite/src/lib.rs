//! mnemo's embedded default store: one SQLite file in WAL mode holding records, their
//! versions, vectors, settings and the audit log. Lexical and vector search run in the
//! per-user in-memory index derived from these rows (`vector_index.rs`).
//!
//! Every query filters on `tenant` and `user_id` in SQL. Writes run on one writer connection
//! in `BEGIN IMMEDIATE` transactions shared by concurrent writes (group commit, `writer.rs`)
//! with a busy timeout, so several processes can share one file; reads and searches use a
//! pool of reader connections beside it. Deletion is
//! complete: `secure_delete` zeroes freed pages, and the write-ahead log is checkpointed and
//! truncated once a deletion commits.

mod codec;
mod encryption;
mod ledger;
mod migrate;
mod vector_index;
mod writer;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use mnemo_core::ledger::{Counted, DeletionReceipt, DeletionScope, LedgerKey, Removed};
use mnemo_core::lifecycle::{Candidate, Decision, WriteContext};
use mnemo_core::policy::{ReasonCode, UserSettings};
use mnemo_core::ports::{
    ApiKey, AuditAction, AuditEntry, DeletionRequest, Edit, Embedded, ExportedMemory, Found,
    History, Imported, ListFilter, NewRecord, PortError, SearchQuery, Store, StoreCaps,
    WriteReceipt, audit_action_for,
};
use mnemo_core::retrieval::{Fused, Signals};
use mnemo_core::run::Run;
use mnemo_core::{
    ErrorKind, Kind, Memory, MemoryId, MemoryVersion, Status, Timestamp, UserRef, lifecycle,
};
use rusqlite::{Connection, OptionalExtension, params};

use codec::{
    MEMORY_COLUMNS, MEMORY_FROM, blob_to_vector, content_hash, memory_from_row, to_json,
    vector_to_blob,
};
pub use encryption::{DatabaseKey, rekey};
use encryption::{FileState, Unlock};
pub use migrate::LATEST_VERSION as SCHEMA_VERSION;
use mnemo_index::{ScanFilter, cosine_of, quantize};
use vector_index::{Change, IndexCache, Touched};
use writer::Writer;

/// How long a writer waits for another process's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Errors raised inside the SQLite store; converted to [`PortError`] at the port boundary.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// An SQLite call failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A migration failed to apply; the file was left as it was before migrating.
    #[error("migration {version} failed and was rolled back: {message}")]
    Migration {
        /// The migration's version.
        version: u32,
        /// SQLite's error, in one line.
        message: String,
    },
    /// The file is not a mnemo database: another application's, or not SQLite at all.
    #[error(
        "{path} is not a mnemo database ({why}); give mnemo a file of its own (it was left unchanged)"
    )]
    Foreign {
        /// The path.
        path: PathBuf,
        /// What was found.
        why: String,
    },
    /// The file was written by a newer mnemo.
    #[error("database schema version {found} is newer than this mnemo supports ({supported})")]
    SchemaTooNew {
        /// Version found in the file.
        found: u32,
        /// Newest version this build knows.
        supported: u32,
    },
    /// The database file could not be opened.
    #[error("cannot open database {path}: {source}")]
    Open {
        /// The path.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// A JSON column could not be encoded.
    #[error("json: {0}")]
    Json(serde_json::Error),
    /// A write conflicts with stored state.
    #[error("{0}")]
    Conflict(String),
    /// A vector's embedder or dimensions do not match the stored ones.
    #[error("{0}")]
    VectorMismatch(String),
    /// The database key is missing, wrong or unusable, or encryption is not built in.
    #[error("{0}")]
    Key(String),
    /// A file beside the database could not be written or renamed.
    #[error("file: {0}")]
    Io(std::io::Error),
    /// A deletion committed but the write-ahead log still holds old pages.
    #[error(
        "deleted, but the write-ahead log could not be scrubbed because another connection is \
         reading; it will be scrubbed at the next deletion or checkpoint"
    )]
    ScrubIncomplete,
}

impl StoreError {
    fn kind(&self) -> ErrorKind {
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) =>
            {
                ErrorKind::Unavailable { retry_after: Some(Duration::from_secs(1)) }
            }
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                ErrorKind::Conflict
            }
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DiskFull =>
            {
                ErrorKind::StorageFull
            }
            StoreError::Conflict(_) => ErrorKind::Conflict,
            StoreError::VectorMismatch(_) | StoreError::Foreign { .. } | StoreError::Key(_) => {
                ErrorKind::InvalidInput
            }
            StoreError::ScrubIncomplete => ErrorKind::Unavailable { retry_after: None },
            StoreError::SchemaTooNew { .. } | StoreError::Open { .. } => {
                ErrorKind::Unavailable { retry_after: None }
            }
            _ => ErrorKind::Internal,
        }
    }
}

impl From<StoreError> for PortError {
    fn from(error: StoreError) -> Self {
        let kind = error.kind();
        if kind == ErrorKind::StorageFull {
            return PortError {
                source: Some(Box::new(error)),
                ..PortError::storage_full("the disk is full or the database reached its size limit")
            };
        }
        PortError { kind, message: error.to_string(), source: Some(Box::new(error)) }
    }
}

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The SQLite store: one writer connection with group commit (`writer.rs`) and a pool of
/// reader connections, so searches and reads run beside writes; other processes may open
/// the same file concurrently.
pub struct SqliteStore {
    /// Lock order: the writer, then the readers (in pool order), then the index cache.
    writer: Writer,
    readers: Vec<Mutex<Connection>>,
    /// Where the next read looks for a free reader first.
    next_reader: AtomicUsize,
    index: IndexCache,
    path: PathBuf,
    /// The key of the deletion ledger's hashes.
    ledger: LedgerKey,
    /// The page cap set by [`SqliteStore::limit_size`] (0: none).
    max_pages: AtomicI64,
}

/// Reader connections per store: searches and reads run in parallel up to this many.
const READERS: usize = 4;

/// Pages a deletion may use beyond the size cap (its tombstones, receipt and audit lines), so
/// forgetting works on a full store.
const DELETION_RESERVE_PAGES: i64 = 256;

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish()
    }
}

/// Refuses a file that exists, is not empty and is not a mnemo database, before anything is
/// written to it (opening it read-only leaves it byte for byte as it was).
fn refuse_foreign_file(path: &Path, unlock: Option<&Unlock>) -> Result<()> {
    let foreign = |why: String| StoreError::Foreign { path: path.to_owned(), why };
    let Ok(metadata) = std::fs::metadata(path) else { return Ok(()) };
    if metadata.len() == 0 {
        return Ok(());
    }
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| StoreError::Open { path: path.to_owned(), source })?;
    if let Some(unlock) = unlock {
        unlock.apply(&conn)?;
    }
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect())
        .map_err(|_| match (unlock, encryption::file_state(path)) {
            (Some(_), _) => encryption::unreadable(path, true),
            (None, FileState::Opaque) => {
                foreign("not an SQLite database, or an encrypted one opened without its key".into())
            }
            (None, _) => foreign("not an SQLite database".to_owned()),
        })?;
    if tables.is_empty() || tables.iter().any(|t| t == "schema_migrations") {
        return Ok(());
    }
    let mut named: Vec<&str> = tables.iter().map(String::as_str).take(3).collect();
    if tables.len() > 3 {
        named.push("…");
    }
    Err(foreign(format!("it holds other tables: {}", named.join(", "))))
}

impl SqliteStore {
    /// Opens (creating if needed) the unencrypted database at `path` and applies pending
    /// migrations.
    pub fn open(path: &Path, now: Timestamp) -> Result<Self> {
        Self::open_with_key(path, now, None)
    }

    /// Opens (creating if needed) the database at `path`, encrypted under `key` when one is
    /// given (a new file is created encrypted), and applies pending migrations.
    pub fn open_with_key(path: &Path, now: Timestamp, key: Option<&DatabaseKey>) -> Result<Self> {
        let unlock = key.map(|key| Unlock::for_file(path, key)).transpose()?;
        refuse_foreign_file(path, unlock.as_ref())?;
        let mut conn = Connection::open(path)
            .map_err(|source| StoreError::Open { path: path.to_owned(), source })?;
        if let Some(unlock) = &unlock {
            unlock.apply(&conn)?;
        }
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // WAL for concurrent readers; FULL sync so an acknowledged commit survives power loss;
        // secure_delete so freed pages hold no old text.
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Conflict(format!(
                "{} could not be put in WAL mode (got {mode})",
                path.display()
            )));
        }
        conn.execute_batch(
            "PRAGMA synchronous = FULL;
             PRAGMA secure_delete = ON;
             PRAGMA foreign_keys = ON;",
        )?;
        migrate::migrate(&mut conn, now.as_millis())?;
        keep_reserve(path);
        tune(&conn)?;
        let ledger = ledger::read_key(&conn)?;
        let readers = (0..READERS)
            .map(|_| open_reader(path, unlock.as_ref()).map(Mutex::new))
            .collect::<Result<_>>()?;
        Ok(Self {
            writer: Writer::new(conn),
            readers,
            next_reader: AtomicUsize::new(0),
            index: IndexCache::new(open_reader(path, unlock.as_ref())?),
            path: path.to_owned(),
            ledger,
            max_pages: AtomicI64::new(0),
        })
    }

    /// Caps the database file at about `bytes` (whole pages, at least what it holds now): a
    /// change that would grow it further fails as storage full and changes nothing, as on a
    /// full disk.
    pub fn limit_size(&self, bytes: u64) -> Result<()> {
        let writer = self.writer.exclusive();
        let page_size: i64 = writer.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let pages = i64::try_from(bytes / page_size.max(1) as u64).unwrap_or(i64::MAX).max(1);
        set_max_pages(&writer.conn, pages)?;
        self.max_pages.store(pages, Ordering::Relaxed);
        Ok(())
    }

    /// The database file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version recorded in the file.
    pub fn schema_version(&self) -> Result<u32> {
        migrate::current_version(&self.reader())
    }

    /// A reader connection: a free one if there is one, else the next in turn.
    fn reader(&self) -> MutexGuard<'_, Connection> {
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        for offset in 0..self.readers.len() {
            match self.readers[(start + offset) % self.readers.len()].try_lock() {
                Ok(reader) => return reader,
                Err(std::sync::TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
        }
        // A poisoned lock only means another thread panicked mid-read.
        self.readers[start % self.readers.len()]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every reader connection of this process, idle (a checkpoint that truncates the log
    /// must not find one of them mid-read).
    fn all_readers(&self) -> Vec<MutexGuard<'_, Connection>> {
        self.readers
            .iter()
            .map(|reader| reader.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
            .collect()
    }

    /// The user's index, current with every commit made before this call.
    fn user_index(&self, who: &UserRef) -> Result<vector_index::SharedUserIndex> {
        if !self.index.is_current()? {
            // Another process committed, or this process's writer is following its commit.
            self.index.account(&self.writer.any().conn)?;
        }
        let loaded = self.index.for_reader(&self.reader(), who.tenant(), who.user_id())?;
        match loaded {
            Some(index) => Ok(index),
            // Commits kept landing while the rows were read: load as the writer sees them.
            None => self.index.for_writer(&self.writer.any().conn, who.tenant(), who.user_id()),
        }
    }

    /// Runs `body` in an immediate transaction, commits, and brings the vector index up to
    /// date with what the body reports it touched.
    fn write_tx<T>(
        &self,
        tenant: &str,
        user: &str,
        body: impl FnOnce(&Connection) -> Result<(T, Touched)>,
    ) -> Result<T> {
        self.writer.join(&self.index, tenant, user, body)
    }

    /// Like [`Self::write_tx`] for deletions, then checkpoints and truncates the write-ahead
    /// log so no copy of the deleted text stays in it. On a full disk, the reserve file is
    /// given up and the deletion tried once more, so forgetting works when nothing else can
    /// be written.
    fn delete_tx<T>(
        &self,
        tenant: &str,
        user: &str,
        body: impl Fn(&Connection) -> Result<(T, Touched)>,
    ) -> Result<T> {
        match self.commit_tx(tenant, user, true, &body) {
            Err(error) if error.kind() == ErrorKind::StorageFull && self.release_reserve() => {
                self.commit_tx(tenant, user, true, &body)
            }
            outcome => outcome,
        }
    }

    /// Deletes the reserve file, if there is one; whether space was freed.
    fn release_reserve(&self) -> bool {
        std::fs::remove_file(reserve_path(&self.path)).is_ok()
    }

    /// The transaction behind [`Self::delete_tx`]: alone on the writer, never batched.
    fn commit_tx<T>(
        &self,
        tenant: &str,
        user: &str,
        scrub: bool,
        body: impl FnOnce(&Connection) -> Result<(T, Touched)>,
    ) -> Result<T> {
        let writer = self.writer.exclusive();
        let conn = &writer.conn;
        // A deletion may go a little past the size cap, so forgetting works on a full store.
        let cap = self.max_pages.load(Ordering::Relaxed);
        if scrub && cap > 0 {
            set_max_pages(conn, cap + DELETION_RESERVE_PAGES)?;
        }
        let outcome = alone_in_transaction(conn, body).map(|(value, touched)| {
            let change = Change {
                tenant: tenant.to_owned(),
                user: user.to_owned(),
                touched,
                followed: false,
            };
            self.index.follow_commit(conn, &[change]);
            value
        });
        // The checkpoint that scrubs the log writes its pages into the file: still within
        // the deletion's reserve. This process's readers wait for it.
        let scrubbed = if scrub && outcome.is_ok() {
            let _idle = self.all_readers();
            scrub_wal(conn)
        } else {
            Ok(())
        };
        if scrub && cap > 0 {
            set_max_pages(conn, cap)?;
        }
        let value = outcome?;
        scrubbed?;
        Ok(value)
    }
}

/// Runs `body` in an immediate transaction of its own: committed if it succeeds, rolled
/// back otherwise.
fn alone_in_transaction<T>(
    conn: &Connection,
    body: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let outcome = body(conn).and_then(|value| {
        conn.execute_batch("COMMIT")?;
        Ok(value)
    });
    if outcome.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    outcome
}

/// Settings every connection of the store shares: a larger page cache and memory-mapped
/// reads keep searches off read() syscalls; plans that do not depend on bound values (else
/// SQLite compiles a statement again on every run, which cost half of the write path,
/// BENCHMARKS.md); cached prepared statements.
fn tune(conn: &Connection) -> Result<()> {
    conn.execute_batch("PRAGMA cache_size = -65536; PRAGMA mmap_size = 268435456;")?;
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

/// Opens a connection of the store's pool that only reads.
fn open_reader(path: &Path, unlock: Option<&Unlock>) -> Result<Connection> {
    let conn = Connection::open(path)
        .map_err(|source| StoreError::Open { path: path.to_owned(), source })?;
    if let Some(unlock) = unlock {
        unlock.apply(&conn)?;
    }
    conn.busy_timeout(BUSY_TIMEOUT)?;
    tune(&conn)?;
    conn.execute_batch("PRAGMA query_only = ON;")?;
    Ok(conn)
}

/// Bytes kept in a file beside the database for deletions on a full disk.
const RESERVE_BYTES: usize = 1024 * 1024;

/// The reserve file beside the database at `path`.
fn reserve_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-reserve");
    PathBuf::from(name)
}

/// Makes the reserve file if it is missing (given up on a full disk, made again at the next
/// open with room); a disk too full for it goes without.
fn keep_reserve(path: &Path) {
    let reserve = reserve_path(path);
    if reserve.exists() {
        return;
    }
    if std::fs::write(&reserve, vec![0u8; RESERVE_BYTES]).is_err() {
        let _ = std::fs::remove_file(&reserve);
    }
}

/// Caps the database at `pages` pages (never below what it holds: SQLite keeps the larger).
fn set_max_pages(conn: &Connection, pages: i64) -> Result<()> {
    conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))?;
    Ok(())
}

/// Copies every WAL frame into the main file and truncates the WAL to zero bytes.
fn scrub_wal(conn: &Connection) -> Result<()> {
    let (busy, _log, _checkpointed): (i64, i64, i64) =
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
    if busy != 0 {
        return Err(StoreError::ScrubIncomplete);
    }
    Ok(())
}

/// Switches the connection's sync level between transactions (statement cached).
fn set_synchronous(conn: &Connection, level: &str) -> Result<()> {
    conn.prepare_cached(&format!("PRAGMA synchronous = {level}"))?.execute([])?;
    Ok(())
}

/// Reads the records with the given rowids, keyed by rowid (missing ones left out).
fn memories_by_rowid(conn: &Connection, rowids: &[i64]) -> Result<HashMap<i64, Memory>> {
    let mut found: HashMap<i64, Memory> = HashMap::new();
    for chunk in rowids.chunks(200) {
        let marks = vec!["?"; chunk.len()].join(",");
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM {MEMORY_FROM} WHERE m.rowid IN ({marks})");
        // A search fetches the same number of candidates every time: keep that statement.
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(chunk), memory_from_row)?;
        for row in rows {
            let (rowid, memory) = row?;
            found.insert(rowid, memory);
        }
    }
    Ok(found)
}

const KEY_COLUMNS: &str =
    "SELECT id, tenant, user_id, admin, key_hash, created_at, revoked_at, rate FROM api_keys";

fn key_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ApiKey> {
    Ok(ApiKey {
        id: row.get(0)?,
        tenant: row.get(1)?,
        user_id: row.get(2)?,
        admin: row.get(3)?,
        key_hash: row.get(4)?,
        created_at: Timestamp::from_millis(row.get(5)?),
        revoked_at: row.get::<_, Option<i64>>(6)?.map(Timestamp::from_millis),
        rate: row.get(7)?,
    })
}

fn owner_params(who: &UserRef) -> [&str; 2] {
    [who.tenant(), who.user_id()]
}

/// Who acts, for whom and when: the fixed part of audit entries written in one operation.
struct Auditor<'a> {
    tenant: &'a str,
    user_id: &'a str,
    now: Timestamp,
    actor: &'a str,
}

impl<'a> Auditor<'a> {
    /// An auditor for operations on `who`.
    fn for_user(who: &'a UserRef, now: Timestamp, actor: &'a str) -> Self {
        Self { tenant: who.tenant(), user_id: who.user_id(), now, actor }
    }

    /// Appends one audit entry; it never holds memory content.
    fn log(
        &self,
        tx: &Connection,
        action: AuditAction,
        memory_id: Option<&MemoryId>,
        reason: Option<ReasonCode>,
    ) -> Result<()> {
        tx.prepare_cached(
            "INSERT INTO audit_log (tenant, user_id, at, action, memory_id, reason, actor)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            self.tenant,
            self.user_id,
            self.now.as_millis(),
            action.as_str(),
            memory_id.map(|id| id.0.as_str()),
            reason.map(ReasonCode::as_str),
            self.actor
        ])?;
        Ok(())
    }

    /// Appends one audit entry about a run; it never holds the run's content.
    fn log_run(&self, tx: &Connection, action: AuditAction, run_id: &str) -> Result<()> {
        tx.prepare_cached(
            "INSERT INTO audit_log (tenant, user_id, at, action, actor, run_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            self.tenant,
            self.user_id,
            self.now.as_millis(),
            action.as_str(),
            self.actor,
            run_id
        ])?;
        Ok(())
    }
}

/// The user's run with this id, if any.
fn read_run(conn: &Connection, who: &UserRef, id: &str) -> Result<Option<Run>> {
    let state: Option<String> = conn
        .prepare_cached("SELECT state FROM runs WHERE tenant = ?1 AND user_id = ?2 AND id = ?3")?
        .query_row(params![who.tenant(), who.user_id(), id], |r| r.get(0))
        .optional()?;
    state.map(|s| serde_json::from_str(&s).map_err(StoreError::Json)).transpose()
}

/// Stores a run's whole state over its row.
fn write_run(tx: &Connection, who: &UserRef, run: &Run) -> Result<()> {
    let state = serde_json::to_string(run).map_err(StoreError::Json)?;
    tx.prepare_cached(
        "UPDATE runs SET state = ?1, updated_at = ?2 WHERE tenant = ?3 AND user_id = ?4 AND id = ?5",
    )?
    .execute(params![state, run.updated_at.as_millis(), who.tenant(), who.user_id(), run.id])?;
    Ok(())
}

fn query_memories(
    conn: &Connection,
    where_clause: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<Vec<(i64, Memory)>> {
    let sql = format!("SELECT {MEMORY_COLUMNS} FROM {MEMORY_FROM} WHERE {where_clause}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params, memory_from_row)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// Reads one record of `who` by id, expired or not.
fn find(conn: &Connection, who: &UserRef, id: &MemoryId) -> Result<Option<(i64, Memory)>> {
    let [tenant, user] = owner_params(who);
    Ok(query_memories(
        conn,
        "m.tenant = ?1 AND m.user_id = ?2 AND m.id = ?3",
        &[&tenant, &user, &id.0],
    )?
    .pop())
}

fn read_settings(conn: &Connection, who: &UserRef) -> Result<UserSettings> {
    let enabled: Option<bool> = conn
        .query_row(
            "SELECT memory_enabled FROM user_settings WHERE tenant = ?1 AND user_id = ?2",
            owner_params(who),
            |r| r.get(0),
        )
        .optional()?;
    Ok(enabled.map(|memory_enabled| UserSettings { memory_enabled }).unwrap_or_default())
}

fn check_vector(conn: &Connection, embedded: &Embedded) -> Result<()> {
    // Every vector in one file comes from one embedder: comparing vectors of two models would
    // silently give meaningless similarities.
    let existing: Option<(String, i64)> = conn
        .prepare_cached("SELECT model, dims FROM memory_vectors LIMIT 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    if let Some((model, dims)) = existing
        && (model != embedded.model || usize::try_from(dims).ok() != Some(embedded.vector.len()))
    {
        return Err(StoreError::VectorMismatch(format!(
            "embedder mismatch: this database holds {dims}-d vectors from `{model}`, \
             got {}-d vectors from `{}`",
            embedded.vector.len(),
            embedded.model
        )));
    }
    Ok(())
}

fn put_vector(tx: &Connection, rowid: i64, embedded: &Embedded) -> Result<()> {
    check_vector(tx, embedded)?;
    tx.prepare_cached(
        "INSERT OR REPLACE INTO memory_vectors (memory_rowid, model, dims, vector)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        rowid,
        embedded.model,
        embedded.vector.len() as i64,
        vector_to_blob(&embedded.vector)
    ])?;
    Ok(())
}

/// Inserts the record row and its vector; returns the new rowid.
fn insert_row(tx: &Connection, memory: &Memory, vector: Option<&Embedded>) -> Result<i64> {
    let consent = memory.consent.as_ref().map(to_json).transpose()?;
    let metadata = to_json(&memory.metadata)?;
    let derived_from =
        (!memory.derived_from.is_empty()).then(|| to_json(&memory.derived_from)).transpose()?;
    for source in &memory.derived_from {
        tx.prepare_cached(
            "INSERT OR IGNORE INTO memory_links (tenant, user_id, source_id, derived_id)
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![memory.tenant, memory.user_id, source.0, memory.id.0])?;
    }
    tx.prepare_cached(
        "INSERT INTO memories (id, tenant, user_id, scope, agent_id, session_id, kind, subject,
             attribute, content, content_hash, importance, confidence, sensitivity, source_type,
             source_ref, source_captured_at, source_extractor, status, created_at, updated_at,
             last_used_at, valid_from, expires_at, review_after, superseded_by, version, consent,
             metadata, transcript, derived_from)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
             ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31)",
    )?
    .execute(params![
        memory.id.0,
        memory.tenant,
        memory.user_id,
        memory.scope.to_string(),
        memory.agent_id,
        memory.session_id,
        memory.kind.as_str(),
        memory.subject,
        memory.attribute,
        memory.content,
        content_hash(&memory.content),
        memory.importance,
        memory.confidence,
        memory.sensitivity.as_str(),
        memory.source.source_type.as_str(),
        memory.source.source_ref,
        memory.source.captured_at.as_millis(),
        memory.source.extractor,
        memory.status.as_str(),
        memory.created_at.as_millis(),
        memory.updated_at.as_millis(),
        memory.last_used_at.map(Timestamp::as_millis),
        memory.valid_from.as_millis(),
        memory.expires_at.map(Timestamp::as_millis),
        memory.review_after.map(Timestamp::as_millis),
        memory.superseded_by.as_ref().map(|id| id.0.as_str()),
        memory.version,
        consent,
        metadata,
        memory.transcript,
        derived_from,
    ])
    .map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            StoreError::Conflict(format!(
                "memory {} conflicts with a stored record (same id, or a second active record \
                 for its subject and attribute)",
                memory.id
            ))
        }
        other => StoreError::Sqlite(other),
    })?;
    let rowid = tx.last_insert_rowid();
    if let Some(embedded) = vector {
        put_vector(tx, rowid, embedded)?;
    }
    Ok(rowid)
}

/// Deletes records and everything derived from them, by rowid; returns what went.
fn purge(tx: &Connection, rowids: &[i64]) -> Result<Removed> {
    let mut removed = Removed::default();
    for rowid in rowids {
        // Links from and to the record go with it.
        removed.links += tx
            .prepare_cached(
                "DELETE FROM memory_links WHERE (tenant, user_id, source_id) IN
                     (SELECT tenant, user_id, id FROM memories WHERE rowid = ?1)
                  OR (tenant, user_id, derived_id) IN
                     (SELECT tenant, user_id, id FROM memories WHERE rowid = ?1)",
            )?
            .execute([rowid])? as u64;
        removed.vectors += tx
            .prepare_cached("DELETE FROM memory_vectors WHERE memory_rowid = ?1")?
            .execute([rowid])? as u64;
        removed.versions += tx
            .prepare_cached("DELETE FROM memory_versions WHERE memory_rowid = ?1")?
            .execute([rowid])? as u64;
        let gone =
            tx.prepare_cached("DELETE FROM memories WHERE rowid = ?1")?.execute([rowid])? as u64;
        removed.records += gone;
        // Each record has one entry in its user's search index, which is rebuilt without it.
        removed.index_entries += gone;
    }
    Ok(removed)
}

/// The rowids and ids of a record and of every record it superseded, transitively; with
/// `derived`, also every record derived from any of them, with what those superseded: what
/// forgetting a record removes.
fn chain(tx: &Connection, rowid: i64, derived: bool) -> Result<Vec<(i64, MemoryId, String)>> {
    let derived_step = if derived {
        "UNION
         SELECT m.rowid, m.id, m.tenant, m.user_id FROM memory_links l
           JOIN chain c ON l.source_id = c.id AND l.tenant = c.tenant AND l.user_id = c.user_id
           JOIN memories m ON m.tenant = l.tenant AND m.user_id = l.user_id AND m.id = l.derived_id"
    } else {
        ""
    };
    let sql = format!(
        "WITH RECURSIVE chain(rowid, id, tenant, user_id) AS (
             SELECT rowid, id, tenant, user_id FROM memories WHERE rowid = ?1
             UNION
             SELECT m.rowid, m.id, m.tenant, m.user_id FROM memories m
               JOIN chain c ON m.superseded_by = c.id
              WHERE m.tenant = c.tenant AND m.user_id = c.user_id
             {derived_step}
         )
         SELECT rowid, id, user_id FROM chain"
    );
    let mut stmt = tx.prepare_cached(&sql)?;
    let rows = stmt.query_map([rowid], |r| Ok((r.get(0)?, MemoryId(r.get(1)?), r.get(2)?)))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

fn versions(conn: &Connection, rowid: i64) -> Result<Vec<MemoryVersion>> {
    let mut stmt = conn.prepare_cached(
        "SELECT snapshot FROM memory_versions WHERE memory_rowid = ?1 ORDER BY version",
    )?;
    let rows = stmt.query_map([rowid], |r| r.get::<_, String>(0))?;
    rows.map(|text| {
        let text = text?;
        serde_json::from_str(&text).map_err(StoreError::Json)
    })
    .collect()
}

fn vector_of(conn: &Connection, rowid: i64) -> Result<Option<Vec<f32>>> {
    let blob: Option<Vec<u8>> = conn
        .query_row("SELECT vector FROM memory_vectors WHERE memory_rowid = ?1", [rowid], |r| {
            r.get(0)
        })
        .optional()?;
    Ok(blob.and_then(|b| blob_to_vector(&b)))
}

impl SqliteStore {
    /// Reads the neighbours of a candidate that the consistency rules need.
    fn write_context(
        &self,
        tx: &Connection,
        who: &UserRef,
        candidate: &Candidate,
        embedding: Option<&Embedded>,
        now: Timestamp,
    ) -> Result<WriteContext> {
        let [tenant, user] = owner_params(who);
        let scope = candidate.scope.to_string();
        let same_key = match &candidate.key {
            Some((subject, attribute)) => query_memories(
                tx,
                "m.tenant = ?1 AND m.user_id = ?2 AND m.scope = ?3 AND m.subject = ?4
                 AND m.attribute = ?5 AND m.status = 'active'",
                &[&tenant, &user, &scope, subject, attribute],
            )?
            .into_iter()
            .map(|(_, m)| m)
            .collect(),
            None => Vec::new(),
        };
        let normalized = candidate.normalized_content();
        let same_content = query_memories(
            tx,
            SAME_CONTENT,
            &[
                &tenant,
                &user,
                &content_hash(&candidate.content),
                &candidate.kind.as_str(),
                &scope,
                &now.as_millis(),
            ],
        )?
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| lifecycle::normalize(&m.content) == normalized)
        .collect();
        let (mut similar, mut related) = (Vec::new(), Vec::new());
        if let Some(embedded) = embedding {
            check_vector(tx, embedded)?;
            match (&candidate.kind, &candidate.source.source_ref) {
                // An episode can only duplicate a record of the same message, so compare
                // with those alone rather than scanning every episode of the user.
                (Kind::Episodic, Some(reference)) => {
                    let rows = query_memories(
                        tx,
                        "m.tenant = ?1 AND m.user_id = ?2 AND +m.kind = 'episodic'
                         AND m.source_ref = ?3 AND +m.status = 'active'",
                        &[&tenant, &user, reference],
                    )?;
                    for (rowid, memory) in rows {
                        if let Some(vector) = vector_of(tx, rowid)? {
                            let (a, b) = (quantize(&embedded.vector), quantize(&vector));
                            similar.push((memory, cosine_of(&a, &b)));
                        }
                    }
                }
                _ => {
                    let filter = ScanFilter {
                        now: now.as_millis(),
                        kind: Some(candidate.kind),
                        scope: Some(&scope),
                        exclude_sensitive: false,
                    };
                    let index = self.index.for_writer(tx, tenant, user)?;
                    let nearest =
                        index.read().unwrap_or_else(std::sync::PoisonError::into_inner).nearest(
                            &embedded.vector,
                            embedded.calibration.as_deref(),
                            filter,
                            NEIGHBOURS,
                        );
                    for near in nearest {
                        for (_, memory) in query_memories(tx, "m.rowid = ?1", &[&near.rowid])? {
                            if let Some(score) = near.related {
                                related.push((memory.id.clone(), score));
                            }
                            similar.push((memory, near.cosine));
                        }
                    }
                }
            }
        }
        Ok(WriteContext {
            settings: read_settings(tx, who)?,
            same_key,
            same_content,
            similar,
            related,
            forgotten: ledger::forgotten(tx, who, &self.ledger, candidate)?,
        })
    }
}

impl SqliteStore {
    /// Decides and applies one record inside a write transaction; returns its receipt and
    /// the rowids it touched.
    #[allow(clippy::too_many_arguments)]
    fn write_one(
        &self,
        tx: &Connection,
        who: &UserRef,
        record: &NewRecord,
        now: Timestamp,
        actor: &str,
        decide: &dyn Fn(&Candidate, &WriteContext) -> Decision,
    ) -> Result<(WriteReceipt, Vec<i64>)> {
        let context =
            self.write_context(tx, who, &record.candidate, record.embedding.as_ref(), now)?;
        let decision = decide(&record.candidate, &context);
        let (action, reason) = audit_action_for(&decision);
        let mut touched = Vec::new();
        let id = match &decision {
            // Memory switched off means no trace at all, not even an audit line.
            Decision::Refuse(ReasonCode::MemoryDisabled) => {
                return Ok((WriteReceipt { decision, id: None }, Vec::new()));
            }
            Decision::Refuse(_) => None,
            Decision::Skip { existing, .. } => Some(existing.clone()),
            Decision::Insert { status, supersede, .. } => {
                let mut memory = record.candidate.clone().into_memory(
                    record.id.clone(),
                    who.tenant(),
                    who.user_id(),
                    *status,
                    now,
                );
                // Supersede first, so the unique active-key index never sees two.
                for old in supersede {
                    let rowid: Option<i64> = tx
                        .query_row(
                            "UPDATE memories SET status = 'superseded', superseded_by = ?1,
                                        updated_at = ?2
                                  WHERE tenant = ?3 AND user_id = ?4 AND id = ?5
                                 RETURNING rowid",
                            params![
                                memory.id.0,
                                now.as_millis(),
                                who.tenant(),
                                who.user_id(),
                                old.0
                            ],
                            |r| r.get(0),
                        )
                        .optional()?;
                    touched.extend(rowid);
                    Auditor::for_user(who, now, actor).log(
                        tx,
                        AuditAction::Superseded,
                        Some(old),
                        reason,
                    )?;
                }
                memory.embedding = None;
                touched.push(insert_row(tx, &memory, record.embedding.as_ref())?);
                Some(memory.id)
            }
        };
        Auditor::for_user(who, now, actor).log(tx, action, id.as_ref(), reason)?;
        Ok((WriteReceipt { decision, id }, touched))
    }
}

/// The records of a user with the same content hash, kind and scope that are live: the
/// duplicate lookup every write makes. Unary `+` keeps the planner on the content-hash index
/// rather than scanning the user's records through the (tenant, user, status, kind) index.
const SAME_CONTENT: &str = "m.tenant = ?1 AND m.user_id = ?2 AND m.content_hash = ?3
     AND +m.kind = ?4 AND +m.scope = ?5 AND +m.status IN ('active', 'pending')
     AND (m.expires_at IS NULL OR m.expires_at > ?6)";

/// How many nearest records a write compares itself with.
const NEIGHBOURS: usize = 3;

impl Store for SqliteStore {
    fn capabilities(&self) -> StoreCaps {
        StoreCaps { full_text: true, vectors: true, secure_delete: true }
    }

    fn settings(&self, who: &UserRef) -> Result<UserSettings, PortError> {
        Ok(read_settings(&self.reader(), who)?)
    }

    fn set_settings(
        &self,
        who: &UserRef,
        settings: UserSettings,
        now: Timestamp,
        actor: &str,
    ) -> Result<(), PortError> {
        Ok(self.write_tx(who.tenant(), who.user_id(), |tx| {
            tx.execute(
                "INSERT INTO user_settings (tenant, user_id, memory_enabled, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (tenant, user_id)
                 DO UPDATE SET memory_enabled = excluded.memory_enabled,
                               updated_at = excluded.updated_at",
                params![who.tenant(), who.user_id(), settings.memory_enabled, now.as_millis()],
            )?;
            Auditor::for_user(who, now, actor).log(tx, AuditAction::SettingsChanged, None, None)?;
            Ok(((), Touched::Nothing))
        })?)
    }

    fn write_batch(
        &self,
        who: &UserRef,
        records: Vec<NewRecord>,
        now: Timestamp,
        actor: &str,
        decide: &dyn Fn(&Candidate, &WriteContext) -> Decision,
    ) -> Result<Vec<WriteReceipt>, PortError> {
        Ok(self.write_tx(who.tenant(), who.user_id(), |tx| {
            let mut receipts = Vec::with_capacity(records.len());
            for record in &records {
                let (receipt, touched) = self.write_one(tx, who, record, now, actor, decide)?;
                // Later records of the batch must see this one as a neighbour.
                let touched = Touched::Rows(touched);
                self.index.follow_uncommitted(tx, who.tenant(), who.user_id(), &touched)?;
                receipts.push(receipt);
            }
            Ok((receipts, Touched::Nothing))
        })?)
    }

    fn get(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<Memory>, PortError> {
        let conn = self.reader();
        Ok(find(&conn, who, id)?.map(|(_, m)| m).filter(|m| !m.is_expired(now)))
    }

    fn list(
        &self,
        who: &UserRef,
        filter: &ListFilter,
        now: Timestamp,
    ) -> Result<Vec<Memory>, PortError> {
        let conn = self.reader();
        let [tenant, user] = owner_params(who);
        let kind = filter.kind.map(|k| k.as_str());
        let status = filter.status.map(|s| s.as_str());
        let scope = filter.scope.as_ref().map(ToString::to_string);
        let rows = query_memories(
            &conn,
            "m.tenant = ?1 AND m.user_id = ?2
             AND (?3 IS NULL OR m.kind = ?3)
             AND (?4 IS NULL OR m.status = ?4)
             AND (?5 IS NULL OR m.scope = ?5)
             AND (?6 OR m.expires_at IS NULL OR m.expires_at > ?7)
             AND (?8 IS NULL OR m.session_id = ?8)
             ORDER BY m.created_at DESC, m.rowid DESC",
            &[
                &tenant,
                &user,
                &kind,
                &status,
                &scope,
                &filter.include_expired,
                &now.as_millis(),
                &filter.session,
            ],
        )?;
        Ok(rows.into_iter().map(|(_, m)| m).collect())
    }

    fn history(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<History>, PortError> {
        let mut conn = self.reader();
        let tx = conn.transaction().map_err(StoreError::from)?;
        let Some((rowid, memory)) = find(&tx, who, id)? else { return Ok(None) };
        if memory.is_expired(now) {
            return Ok(None);
        }
        let versions = versions(&tx, rowid)?;
        let mut superseded = Vec::new();
        for (old_rowid, _, _) in
            chain(&tx, rowid, false)?.into_iter().filter(|(r, _, _)| *r != rowid)
        {
            superseded.extend(
                query_memories(&tx, "m.rowid = ?1", &[&old_rowid])?.into_iter().map(|(_, m)| m),
            );
        }
        superseded.sort_by_key(|m| std::cmp::Reverse(m.created_at));
        Ok(Some(History { memory, versions, superseded }))
    }

    fn edit(
        &self,
        who: &UserRef,
        id: &MemoryId,
        edit: Edit,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Memory>, PortError> {
        Ok(self.write_tx(who.tenant(), who.user_id(), |tx| {
            let Some((rowid, memory)) = find(tx, who, id)? else {
                return Ok((None, Touched::Nothing));
            };
            if memory.is_expired(now) {
                return Ok((None, Touched::Nothing));
            }
            if let Some(refusal) = memory.edit_refusal() {
                return Err(StoreError::Conflict(refusal));
            }
            if !read_settings(tx, who)?.memory_enabled {
                return Err(StoreError::Conflict(lifecycle::MEMORY_OFF_EDIT.into()));
            }
            let snapshot = memory.snapshot(now);
            tx.execute(
                "INSERT INTO memory_versions (memory_rowid, version, snapshot) VALUES (?1, ?2, ?3)",
                params![rowid, memory.version, to_json(&snapshot)?],
            )?;
            tx.execute(
                "UPDATE memories SET content = ?1, content_hash = ?2, version = version + 1,
                        updated_at = ?3, status = ?4, sensitivity = ?5
                  WHERE rowid = ?6",
                params![
                    edit.content,
                    content_hash(&edit.content),
                    now.as_millis(),
                    edit.hold.map_or(memory.status, |_| Status::Pending).as_str(),
                    edit.sensitivity.unwrap_or(memory.sensitivity).as_str(),
                    rowid
                ],
            )?;
            match &edit.embedding {
                Some(embedded) => put_vector(tx, rowid, embedded)?,
                None => {
                    tx.execute("DELETE FROM memory_vectors WHERE memory_rowid = ?1", [rowid])?;
                }
            }
            Auditor::for_user(who, now, actor).log(tx, AuditAction::Edited, Some(id), edit.hold)?;
            Ok((find(tx, who, id)?.map(|(_, m)| m), Touched::Rows(vec![rowid])))
        })?)
    }

    fn confirm(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Vec<MemoryId>>, PortError> {
        Ok(self.write_tx(who.tenant(), who.user_id(), |tx| {
            let Some((rowid, memory)) = find(tx, who, id)? else {
                return Ok((None, Touched::Nothing));
            };
            if memory.is_expired(now) {
                return Ok((None, Touched::Nothing));
            }
            if let Some(refusal) = memory.review_refusal("confirmed") {
                return Err(StoreError::Conflict(refusal));
            }
            if !read_settings(tx, who)?.memory_enabled {
                return Err(StoreError::Conflict(lifecycle::MEMORY_OFF_EDIT.into()));
            }
            let log = Auditor::for_user(who, now, actor);
            let mut touched = vec![rowid];
            let mut superseded = Vec::new();
            if let Some((subject, attribute)) = memory.key() {
                let [tenant, user] = owner_params(who);
                let scope = memory.scope.to_string();
                let olds = query_memories(
                    tx,
                    "m.tenant = ?1 AND m.user_id = ?2 AND m.scope = ?3 AND m.subject = ?4
                     AND m.attribute = ?5 AND m.status = 'active'",
                    &[&tenant, &user, &scope, &subject, &attribute],
                )?;
                for (old_rowid, old) in olds {
                    tx.execute(
                        "UPDATE memories SET status = 'superseded', superseded_by = ?1, updated_at = ?2
                          WHERE rowid = ?3",
                        params![id.0, now.as_millis(), old_rowid],
                    )?;
                    log.log(tx, AuditAction::Superseded, Some(&old.id), None)?;
                    touched.push(old_rowid);
                    superseded.push(old.id);
                }
            }
            let consent = memory.consent_on_confirm(now, actor).as_ref().map(to_json).transpose()?;
            tx.execute(
                "UPDATE memories SET status = 'active', updated_at = ?1, consent = ?2 WHERE rowid = ?3",
                params![now.as_millis(), consent, rowid],
            )?;
            log.log(tx, AuditAction::Confirmed, Some(id), None)?;
            Ok((Some(superseded), Touched::Rows(touched)))
        })?)
    }

    fn reject(
        &self,
        who: &UserRef,
        id: &MemoryId,
        request: &DeletionRequest<'_>,
    ) -> Result<bool, PortError> {
        Ok(self.delete_tx(who.tenant(), who.user_id(), |tx| {
            let Some((rowid, memory)) = find(tx, who, id)? else {
                return Ok((false, Touched::Nothing));
            };
            if let Some(refusal) = memory.review_refusal("rejected") {
                return Err(StoreError::Conflict(refusal));
            }
            let tombstones = ledger::bury(tx, who, &self.ledger, &[rowid], request)?;
            let removed = purge(tx, &[rowid])?;
            ledger::save_receipt(
                tx,
                who,
                Counted {
                    scope: DeletionScope::Rejected,
                    memory_id: Some(id.clone()),
                    removed_ids: vec![id.clone()],
                    removed,
                    tombstones,
                },
                request,
            )?;
            Auditor::for_user(who, request.now, request.actor).log(
                tx,
                AuditAction::Rejected,
                Some(id),
                None,
            )?;
            Ok((true, Touched::Rows(vec![rowid])))
        })?)
    }

    fn forget_each(
        &self,
        who: &UserRef,
        ids: &[MemoryId],
        request: &DeletionRequest<'_>,
    ) -> Result<Option<DeletionReceipt>, PortError> {
        Ok(self.delete_tx(who.tenant(), who.user_id(), |tx| {
            let selection = mnemo_core::ledger::select(
                ids,
                |id| Ok::<_, StoreError>(find(tx, who, id)?.map(|(row, _)| row)),
                |row, derived| {
                    Ok(chain(tx, row, derived)?.into_iter().map(|(r, id, _)| (r, id)).collect())
                },
            )?;
            let Some(selection) = selection else {
                return Ok((None, Touched::Nothing));
            };
            let rowids: Vec<i64> = selection.doomed.iter().map(|(r, _)| *r).collect();
            let tombstones = ledger::bury(tx, who, &self.ledger, &rowids, request)?;
            let removed = purge(tx, &rowids)?;
            let counted = Counted::of_selection(selection, removed, tombstones);
            for gone in &counted.removed_ids {
                Auditor::for_user(who, request.now, request.actor).log(
                    tx,
                    AuditAction::Forgotten,
                    Some(gone),
                    None,
                )?;
            }
            let receipt = ledger::save_receipt(tx, who, counted, request)?;
            Ok((Some(receipt), Touched::Rows(rowids)))
        })?)
    }

    fn forget_all(
        &self,
        who: &UserRef,
        request: &DeletionRequest<'_>,
    ) -> Result<DeletionReceipt, PortError> {
        Ok(self.delete_tx(who.tenant(), who.user_id(), |tx| {
            let rowids: Vec<i64> = {
                let mut stmt = tx.prepare_cached(
                    "SELECT rowid FROM memories WHERE tenant = ?1 AND user_id = ?2",
                )?;
                let rows = stmt.query_map(owner_params(who), |r| r.get(0))?;
                rows.collect::<Result<_, _>>()?
            };
            let tombstones = ledger::bury(tx, who, &self.ledger, &rowids, request)?;
            let mut removed = purge(tx, &rowids)?;
            // Working memory goes with the rest of the user's data.
            removed.runs = tx
                .prepare_cached("DELETE FROM runs WHERE tenant = ?1 AND user_id = ?2")?
                .execute(owner_params(who))? as u64;
            removed.links += tx
                .prepare_cached("DELETE FROM memory_links WHERE tenant = ?1 AND user_id = ?2")?
                .execute(owner_params(who))? as u64;
            Auditor::for_user(who, request.now, request.actor).log(
                tx,
                AuditAction::Forgotten,
                None,
                None,
            )?;
            let receipt = ledger::save_receipt(
                tx,
                who,
                Counted {
                    scope: DeletionScope::User,
                    memory_id: None,
                    removed_ids: Vec::new(),
                    removed,
                    tombstones,
                },
                request,
            )?;
            Ok((receipt, Touched::User))
        })?)
    }

    fn deletions(&self, who: &UserRef, limit: usize) -> Result<Vec<DeletionReceipt>, PortError> {
        Ok(ledger::receipts(&self.reader(), who, limit)?)
    }

    fn expire(
        &self,
        tenant: &str,
        user_id: Option<&str>,
        now: Timestamp,
        actor: &str,
    ) -> Result<Vec<MemoryId>, PortError> {
        Ok(self.delete_tx(tenant, user_id.unwrap_or_default(), |tx| {
            let expired: Vec<i64> = {
                let mut stmt = tx.prepare_cached(
                    "SELECT rowid FROM memories
                      WHERE tenant = ?1 AND (?2 IS NULL OR user_id = ?2)
                        AND expires_at IS NOT NULL AND expires_at <= ?3",
                )?;
                let rows =
                    stmt.query_map(params![tenant, user_id, now.as_millis()], |r| r.get(0))?;
                rows.collect::<Result<_, _>>()?
            };
            let mut removed = Vec::new();
            for rowid in expired {
                let doomed = chain(tx, rowid, false)?;
                let rowids: Vec<i64> = doomed.iter().map(|(r, _, _)| *r).collect();
                purge(tx, &rowids)?;
                for (_, gone, owner) in doomed {
                    Auditor { tenant, user_id: &owner, now, actor }.log(
                        tx,
                        AuditAction::Expired,
                        Some(&gone),
                        None,
                    )?;
                    removed.push(gone);
                }
            }
            let touched = if removed.is_empty() { Touched::Nothing } else { Touched::Tenant };
            Ok((removed, touched))
        })?)
    }

    fn export(&self, who: &UserRef) -> Result<Vec<ExportedMemory>, PortError> {
        let mut conn = self.reader();
        let tx = conn.transaction().map_err(StoreError::from)?;
        let [tenant, user] = owner_params(who);
        let rows = query_memories(
            &tx,
            "m.tenant = ?1 AND m.user_id = ?2 ORDER BY m.created_at, m.id",
            &[&tenant, &user],
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for (rowid, mut memory) in rows {
            if let Some(info) = memory.embedding.as_mut() {
                info.vector = vector_of(&tx, rowid)?;
            }
            out.push(ExportedMemory { history: versions(&tx, rowid)?, memory });
        }
        Ok(out)
    }

    fn import(
        &self,
        who: &UserRef,
        records: Vec<ExportedMemory>,
        now: Timestamp,
        actor: &str,
        allow_forgotten: bool,
    ) -> Result<Imported, PortError> {
        Ok(self.write_tx(who.tenant(), who.user_id(), |tx| {
            let mut imported = Imported::default();
            // Insert records that are superseded first, so the active-key index holds at every
            // step, then link them (superseded_by may name a record imported later).
            let mut ordered = records;
            ordered.sort_by_key(|r| r.memory.status == Status::Active);
            for record in &ordered {
                let mut memory = record.memory.clone();
                memory.tenant = who.tenant().to_owned();
                memory.user_id = who.user_id().to_owned();
                if !allow_forgotten && ledger::import_forgotten(tx, who, &self.ledger, &memory)? {
                    imported.forgotten.push(memory.id);
                    continue;
                }
                imported.count += 1;
                let embedded = match &memory.embedding {
                    Some(info) => match &info.vector {
                        Some(vector) if vector.len() == info.dims as usize => Some(Embedded {
                            model: info.model.clone(),
                            vector: vector.clone(),
                            calibration: None,
                        }),
                        _ => {
                            return Err(StoreError::VectorMismatch(format!(
                                "memory {}: embedding has no vector of {} dimensions",
                                memory.id, info.dims
                            )));
                        }
                    },
                    None => None,
                };
                let rowid = insert_row(tx, &memory, embedded.as_ref())?;
                for version in &record.history {
                    tx.execute(
                        "INSERT INTO memory_versions (memory_rowid, version, snapshot)
                         VALUES (?1, ?2, ?3)",
                        params![rowid, version.version, to_json(version)?],
                    )?;
                }
                Auditor::for_user(who, now, actor).log(
                    tx,
                    AuditAction::Imported,
                    Some(&memory.id),
                    None,
                )?;
            }
            Ok((imported, Touched::User))
        })?)
    }

    fn audit(&self, who: &UserRef, limit: usize) -> Result<Vec<AuditEntry>, PortError> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached(
                "SELECT at, action, memory_id, reason, actor, run_id FROM audit_log
                  WHERE tenant = ?1 AND user_id = ?2 ORDER BY seq DESC LIMIT ?3",
            )
            .map_err(StoreError::from)?;
        let rows = stmt
            .query_map(params![who.tenant(), who.user_id(), limit as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, Option<String>>(5)?,
                ))
            })
            .map_err(StoreError::from)?;
        let mut out = Vec::new();
        for row in rows {
            let (at, action, memory_id, reason, actor, run_id) = row.map_err(StoreError::from)?;
            let decode = |text: String| -> Result<serde_json::Value, PortError> {
                Ok(serde_json::Value::String(text))
            };
            let action = serde_json::from_value(decode(action)?)
                .map_err(|e| PortError::internal("bad audit action", e))?;
            let reason = reason
                .map(|r| serde_json::from_value(serde_json::Value::String(r)))
                .transpose()
                .map_err(|e| PortError::internal("bad audit reason", e))?;
            out.push(AuditEntry {
                at: Timestamp::from_millis(at),
                action,
                memory_id: memory_id.map(MemoryId),
                reason,
                actor,
                run_id,
            });
        }
        Ok(out)
    }

    fn search(
        &self,
        who: &UserRef,
        query: &SearchQuery<'_>,
        now: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Result<Vec<Found>, PortError> {
        if let Some(vector) = query.vector {
            check_vector(&self.reader(), vector)?;
        }
        let scope = query.filter.scope.as_ref().map(ToString::to_string);
        let scan = ScanFilter {
            now: now.as_millis(),
            kind: query.filter.kind,
            scope: scope.as_deref(),
            exclude_sensitive: query.filter.exclude_sensitive,
        };
        let index = self.user_index(who)?;
        let hits = index.read().unwrap_or_else(std::sync::PoisonError::into_inner).search(
            query.terms,
            query.vector.map(|v| v.vector.as_slice()),
            query.common,
            scan,
            select,
        );
        let conn = self.reader();
        let wanted: Vec<i64> = hits.iter().map(|hit| hit.rowid).collect();
        let mut memories = memories_by_rowid(&conn, &wanted)?;
        Ok(hits
            .into_iter()
            .filter_map(|hit| {
                let memory = memories.remove(&hit.rowid)?;
                Some(Found { memory, fused: hit.fused, bm25: hit.bm25, cosine: hit.cosine })
            })
            .collect())
    }

    fn mark_used(
        &self,
        who: &UserRef,
        ids: &[MemoryId],
        now: Timestamp,
    ) -> Result<Vec<MemoryId>, PortError> {
        let writer = self.writer.exclusive();
        let conn = &writer.conn;
        // A lost last-used time is harmless, so this commit skips the fsync that writes of
        // memories pay (WAL with synchronous=NORMAL stays consistent after a crash).
        set_synchronous(conn, "NORMAL")?;
        let result = (|| -> Result<Vec<MemoryId>> {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            let mut missing = Vec::new();
            let mut stmt = conn.prepare_cached(
                "UPDATE memories SET last_used_at = ?1
                  WHERE tenant = ?2 AND user_id = ?3 AND id = ?4",
            )?;
            for id in ids {
                if stmt.execute(params![now.as_millis(), who.tenant(), who.user_id(), id.0])? == 0 {
                    missing.push(id.clone());
                }
            }
            // All or nothing.
            conn.execute_batch(if missing.is_empty() { "COMMIT" } else { "ROLLBACK" })?;
            Ok(missing)
        })();
        if result.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        set_synchronous(conn, "FULL")?;
        self.index.follow_commit(conn, &[]);
        Ok(result?)
    }

    fn create_run(&self, who: &UserRef, run: &Run, actor: &str) -> Result<(), PortError> {
        let state = serde_json::to_string(run).map_err(StoreError::Json)?;
        Ok(self.write_tx(who.tenant(), who.user_id(), |tx| {
            if !read_settings(tx, who)?.memory_enabled {
                return Err(StoreError::Conflict(lifecycle::MEMORY_OFF_EDIT.into()));
            }
            tx.prepare_cached(
                "INSERT INTO runs (id, tenant, user_id, state, started_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                run.id,
                who.tenant(),
                who.user_id(),
                state,
                run.started_at.as_millis(),
                run.updated_at.as_millis()
            ])?;
            Auditor::for_user(who, run.started_at, actor).log_run(
                tx,
                AuditAction::RunStarted,
                &run.id,
            )?;
            Ok(((), Touched::Nothing))
        })?)
    }

    fn run(&self, who: &UserRef, id: &str) -> Result<Option<Run>, PortError> {
        Ok(read_run(&self.reader(), who, id)?)
    }

    fn runs(&self, who: &UserRef) -> Result<Vec<Run>, PortError> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached(
                "SELECT state FROM runs WHERE tenant = ?1 AND user_id = ?2
                  ORDER BY started_at, id",
            )
            .map_err(StoreError::from)?;
        let states = stmt
            .query_map(owner_params(who), |r| r.get::<_, String>(0))
            .map_err(StoreError::from)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(StoreError::from)?;
        Ok(states
            .iter()
            .map(|s| serde_json::from_str(s).map_err(StoreError::Json))
            .collect::<Result<_>>()?)
    }

    fn update_run(
        &self,
        who: &UserRef,
        id: &str,
        change: &dyn Fn(&mut Run) -> Result<(), PortError>,
    ) -> Result<Option<Run>, PortError> {
        let mut refused = None;
        let result = self.write_tx(who.tenant(), who.user_id(), |tx| {
            let Some(mut run) = read_run(tx, who, id)? else { return Ok((None, Touched::Nothing)) };
            if !read_settings(tx, who)?.memory_enabled {
                return Err(StoreError::Conflict(lifecycle::MEMORY_OFF_EDIT.into()));
            }
            if let Err(e) = change(&mut run) {
                refused = Some(e);
                // Returning an error rolls the transaction back.
                return Err(StoreError::Conflict("run change refused".into()));
            }
            write_run(tx, who, &run)?;
            Ok((Some(run), Touched::Nothing))
        });
        match refused {
            Some(e) => Err(e),
            None => Ok(result?),
        }
    }

    fn end_run(
        &self,
        who: &UserRef,
        id: &str,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Run>, PortError> {
        Ok(self.delete_tx(who.tenant(), who.user_id(), |tx| {
            let Some(run) = read_run(tx, who, id)? else { return Ok((None, Touched::Nothing)) };
            tx.prepare_cached("DELETE FROM runs WHERE tenant = ?1 AND user_id = ?2 AND id = ?3")?
                .execute(params![who.tenant(), who.user_id(), id])?;
            Auditor::for_user(who, now, actor).log_run(tx, AuditAction::RunEnded, id)?;
            Ok((Some(run), Touched::Nothing))
        })?)
    }

    fn count_by_status(&self) -> Result<Vec<(Status, u64)>, PortError> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached("SELECT status, count(*) FROM memories GROUP BY status ORDER BY status")
            .map_err(StoreError::from)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .map_err(StoreError::from)?;
        let mut out = Vec::new();
        for row in rows {
            let (status, n) = row.map_err(StoreError::from)?;
            if let Ok(status) = status.parse() {
                out.push((status, u64::try_from(n).unwrap_or(0)));
            }
        }
        Ok(out)
    }

    fn create_key(&self, key: &ApiKey) -> Result<(), PortError> {
        Ok(self.write_tx(&key.tenant, "", |tx| {
            tx.execute(
                "INSERT INTO api_keys (id, tenant, user_id, admin, key_hash, created_at, revoked_at, rate)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7)",
                params![
                    key.id,
                    key.tenant,
                    key.user_id,
                    key.admin,
                    key.key_hash,
                    key.created_at.as_millis(),
                    key.rate
                ],
            )?;
            Ok(((), Touched::Nothing))
        })?)
    }

    fn find_key(&self, key_hash: &str) -> Result<Option<ApiKey>, PortError> {
        let conn = self.reader();
        Ok(conn
            .prepare_cached(&format!("{KEY_COLUMNS} WHERE key_hash = ?1 AND revoked_at IS NULL"))
            .and_then(|mut stmt| stmt.query_row([key_hash], key_from_row).optional())
            .map_err(StoreError::from)?)
    }

    fn list_keys(&self, tenant: &str) -> Result<Vec<ApiKey>, PortError> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached(&format!(
                "{KEY_COLUMNS} WHERE tenant = ?1 ORDER BY created_at DESC, id"
            ))
            .map_err(StoreError::from)?;
        let rows = stmt.query_map([tenant], key_from_row).map_err(StoreError::from)?;
        Ok(rows.collect::<Result<Vec<_>, _>>().map_err(StoreError::from)?)
    }

    fn has_live_keys(&self) -> Result<bool, PortError> {
        let conn = self.reader();
        Ok(conn
            .query_row("SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)", [], |r| {
                r.get(0)
            })
            .map_err(StoreError::from)?)
    }

    fn revoke_key(&self, tenant: &str, id: &str, now: Timestamp) -> Result<bool, PortError> {
        Ok(self.write_tx(tenant, "", |tx| {
            let changed = tx.execute(
                "UPDATE api_keys SET revoked_at = ?1 WHERE tenant = ?2 AND id = ?3 AND revoked_at IS NULL",
                params![now.as_millis(), tenant, id],
            )?;
            Ok((changed > 0, Touched::Nothing))
        })?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cached statement must not be compiled again for each new set of bound values: the
    /// write path runs its duplicate lookup once per record.
    #[test]
    fn cached_lookups_are_not_recompiled_per_binding() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("m.db"), Timestamp::from_millis(0)).unwrap();
        let writer = store.writer.exclusive();
        let conn = &writer.conn;
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM {MEMORY_FROM} WHERE {SAME_CONTENT}");
        for i in 0..20_i64 {
            let hash = format!("hash-{i}");
            let tenant = format!("tenant-{i}");
            query_memories(
                conn,
                SAME_CONTENT,
                &[&tenant, &"user", &hash, &"semantic", &"user", &i],
            )
            .unwrap();
        }
        let stmt = conn.prepare_cached(&sql).unwrap();
        let recompiled = stmt.get_status(rusqlite::StatementStatus::RePrepare);
        assert!(recompiled <= 1, "the duplicate lookup was compiled again {recompiled} times");
    }

    /// Concurrent writes share commits, every acknowledged one is stored, and a write that
    /// fails inside a shared transaction fails alone.
    #[test]
    fn concurrent_writes_share_commits_and_a_failing_one_fails_alone() {
        use mnemo_testkit::{T0, stated, who, write};
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("m.db"), T0).unwrap();
        let alice = who("acme", "alice");
        // The file's vectors are 64-dimensional from here on.
        write(&store, &alice, "first", stated("The first statement"), T0);
        let before = store.writer.commits();
        let (threads, each) = (8, 25);
        let failures = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let (store, alice) = (&store, &alice);
                    scope.spawn(move || {
                        let mut failed = 0;
                        for i in 0..each {
                            let text =
                                format!("Thread {t} statement {i} about topic {}", t * each + i);
                            if i % 5 == 4 {
                                // A vector of the wrong size fails inside the transaction.
                                let candidate = mnemo_core::lifecycle::Candidate::validate(
                                    stated(&format!("A mismatched vector {t} {i}")),
                                    T0,
                                )
                                .unwrap();
                                let record = NewRecord {
                                    id: MemoryId(format!("bad-{t}-{i}")),
                                    candidate,
                                    embedding: Some(Embedded {
                                        model: "fake-64".into(),
                                        vector: vec![0.5; 8],
                                        calibration: None,
                                    }),
                                };
                                let outcome = store.write(alice, record, T0, "test", &|c, ctx| {
                                    lifecycle::decide(c, ctx, T0)
                                });
                                assert!(outcome.is_err(), "a mismatched vector was accepted");
                                failed += 1;
                            } else {
                                let receipt =
                                    write(store, alice, &format!("m-{t}-{i}"), stated(&text), T0);
                                assert!(receipt.id.is_some(), "{receipt:?}");
                            }
                        }
                        failed
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum::<usize>()
        });
        let writes = (threads * each) as u64;
        let commits = store.writer.commits() - before;
        assert_eq!(failures, threads * each / 5);
        for t in 0..threads {
            for i in 0..each {
                let stored = store.get(&alice, &MemoryId(format!("m-{t}-{i}")), T0).unwrap();
                assert_eq!(stored.is_some(), i % 5 != 4, "m-{t}-{i}");
                let bad = store.get(&alice, &MemoryId(format!("bad-{t}-{i}")), T0).unwrap();
                assert!(bad.is_none(), "a failed write left bad-{t}-{i}");
            }
        }
        let listed = store.list(&alice, &ListFilter::default(), T0).unwrap();
        assert_eq!(listed.len(), 1 + threads * each * 4 / 5);
        assert!(commits < writes, "{writes} writes took {commits} commits: none was shared");
    }
}
