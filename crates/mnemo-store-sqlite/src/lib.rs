//! mnemo's embedded default store: one SQLite file in WAL mode holding records, their
//! versions, vectors, settings and the audit log; a backend of the store engine
//! (`mnemo-engine`), which holds every rule. Lexical and vector search run in the
//! per-user in-memory index derived from these rows (`vector_index.rs`).
//!
//! Every query filters on `tenant` and `user_id` in SQL. Writes run on one writer connection
//! in `BEGIN IMMEDIATE` transactions shared by concurrent writes (group commit, `writer.rs`)
//! with a busy timeout, so several processes can share one file; reads and searches use a
//! pool of reader connections beside it. Deletion is
//! complete: `secure_delete` zeroes freed pages, and the write-ahead log is checkpointed and
//! truncated once a deletion commits. The log is copied into the file by a checkpointing
//! thread of its own (`checkpoint.rs`), off the writer.

mod checkpoint;
mod codec;
mod encryption;
mod ledger;
mod migrate;
mod rows;
mod spaces;
mod tx;
mod vector_index;
mod writer;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use mnemo_core::ledger::{DeletionReceipt, LedgerKey, Remnant, Removed};
use mnemo_core::policy::UserSettings;
use mnemo_core::ports::{
    ApiKey, AuditEntry, Embedded, Found, KeyStore, PortError, Ranked, SearchQuery, SignInLink,
    StoreCaps,
};
use mnemo_core::retrieval::{Fused, Signals};
use mnemo_core::run::Run;
use mnemo_core::{
    EmbeddingInfo, ErrorKind, Memory, MemoryId, MemoryVersion, Status, Timestamp, UserRef,
};
use mnemo_engine::{Backend, Commit, Engine, Owner, Tx};
use rusqlite::{Connection, OptionalExtension, params};

use checkpoint::Checkpointer;
use codec::{
    Bound, MEMORY_COLUMNS, MEMORY_FROM, blob_to_vector, memory_from_row, to_json, vector_to_blob,
};
pub use encryption::{DatabaseKey, rekey};
use encryption::{FileState, Unlock};
pub use migrate::LATEST_VERSION as SCHEMA_VERSION;
use mnemo_engine::columns::{RECORD_COLUMNS, record_values};
use tx::SqliteTx;
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
    /// The engine's error, passed through a transaction unchanged.
    #[error("{0}")]
    Port(PortError),
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
            StoreError::Port(error) => error.kind,
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
        match error {
            StoreError::Port(error) => error,
            other => PortError::classified(
                other.kind(),
                other,
                "the disk is full or the database reached its size limit",
            ),
        }
    }
}

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The SQLite store: one writer connection with group commit (`writer.rs`) and a pool of
/// reader connections, so searches and reads run beside writes; other processes may open
/// the same file concurrently.
pub struct SqliteBackend {
    /// Lock order: the writer, then the readers (in pool order), then the index cache; a
    /// deletion's scrub then takes the checkpointer's (its running checkpoint, then state).
    writer: Writer,
    readers: Vec<Mutex<Connection>>,
    /// Where the next read looks for a free reader first.
    next_reader: AtomicUsize,
    index: IndexCache,
    path: PathBuf,
    /// The key of the deletion ledger's hashes.
    ledger: LedgerKey,
    /// The page cap set by [`SqliteBackend::limit_size`] (0: none).
    max_pages: AtomicI64,
    /// The embedder (model, dimensions) of the file's vectors, once a search has read it:
    /// searches check their query vector against it without a query of their own, and read
    /// the file again only when it disagrees (the file's vectors may all have gone since).
    embedder: Mutex<Option<(String, usize)>>,
    /// Copies the write-ahead log into the file off the writer.
    checkpointer: Checkpointer,
}

/// Reader connections per store: searches and reads run in parallel up to this many.
const READERS: usize = 4;

/// Pages a deletion may use beyond the size cap (its tombstones, receipt and audit lines), so
/// forgetting works on a full store.
const DELETION_RESERVE_PAGES: i64 = 256;

impl std::fmt::Debug for SqliteBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteBackend").field("path", &self.path).finish()
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

/// The SQLite store: the engine's rules over [`SqliteBackend`].
pub type SqliteStore = Engine<SqliteBackend>;

/// Opens (creating if needed) the unencrypted database at `path` and applies pending
/// migrations.
pub fn open(path: &Path, now: Timestamp) -> Result<SqliteStore> {
    open_with_key(path, now, None)
}

/// Opens (creating if needed) the database at `path`, encrypted under `key` when one is
/// given (a new file is created encrypted), and applies pending migrations.
pub fn open_with_key(
    path: &Path,
    now: Timestamp,
    key: Option<&DatabaseKey>,
) -> Result<SqliteStore> {
    SqliteBackend::open_with_key(path, now, key).map(Engine::new)
}

impl SqliteBackend {
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
        let checkpointer = Checkpointer::new(Some(open_checkpointer(path, unlock.as_ref())?));
        checkpointer.attach(&mut conn)?;
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
            embedder: Mutex::new(None),
            checkpointer,
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

    /// Embeds again, with `embedder`, every record whose vector another model made, so the
    /// file can be searched and written with it (a file holds one embedder's vectors). One
    /// transaction alone on the writer: a failure leaves every vector as it was. Returns how
    /// many were embedded again.
    pub fn reembed(&self, embedder: &dyn mnemo_core::ports::Embedder) -> Result<usize> {
        /// Texts embedded per call.
        const CHUNK: usize = 256;
        let model = embedder.id();
        let writer = self.writer.exclusive();
        let conn = &writer.conn;
        let outcome = alone_in_transaction(conn, |tx| {
            let stale: Vec<(i64, String)> = tx
                .prepare(
                    "SELECT m.rowid, m.content FROM memories m
                     JOIN memory_vectors v ON v.memory_rowid = m.rowid
                     WHERE v.model <> ?1 ORDER BY m.rowid",
                )?
                .query_map([model], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut update = tx.prepare(
                "UPDATE memory_vectors SET model = ?1, dims = ?2, vector = ?3, refined = 0
                 WHERE memory_rowid = ?4",
            )?;
            for chunk in stale.chunks(CHUNK) {
                let texts: Vec<&str> = chunk.iter().map(|(_, text)| text.as_str()).collect();
                let vectors = embedder.embed(&texts).map_err(StoreError::Port)?;
                if vectors.len() != chunk.len() {
                    return Err(StoreError::VectorMismatch(format!(
                        "embedder mismatch: `{model}` returned {} vectors for {} texts",
                        vectors.len(),
                        chunk.len()
                    )));
                }
                for ((rowid, _), vector) in chunk.iter().zip(&vectors) {
                    update.execute(params![
                        model,
                        vector.len() as i64,
                        vector_to_blob(vector),
                        rowid
                    ])?;
                }
            }
            Ok(stale.len())
        });
        // Every user's index and cached rows are read again from the file.
        self.index.clear();
        *self.embedder.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        outcome
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
        user: Option<&str>,
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
        user: Option<&str>,
        mut body: impl FnMut(&Connection) -> Result<(T, Touched)>,
    ) -> Result<T> {
        match self.commit_tx(tenant, user, true, &mut body) {
            Err(error) if error.kind() == ErrorKind::StorageFull && self.release_reserve() => {
                self.commit_tx(tenant, user, true, &mut body)
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
        user: Option<&str>,
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
        let outcome = alone_in_transaction(conn, body);
        if outcome.is_err() {
            // Inserts are followed as they are written: a rolled-back one must not stay.
            self.index.drop_user(tenant, user);
        }
        let outcome = outcome.map(|(value, touched)| {
            let change = Change {
                tenant: tenant.to_owned(),
                user: user.map(str::to_owned),
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
            let _no_other_checkpoint = self.checkpointer.pause();
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

/// Opens another connection to the store's file with `flags`, unlocked with the store's
/// key when it has one.
fn open_connection(
    path: &Path,
    unlock: Option<&Unlock>,
    flags: rusqlite::OpenFlags,
) -> Result<Connection> {
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|source| StoreError::Open { path: path.to_owned(), source })?;
    if let Some(unlock) = unlock {
        unlock.apply(&conn)?;
    }
    Ok(conn)
}

/// Opens the checkpointing thread's connection to the file the writer just opened (it
/// runs passive checkpoints alone, so it needs no busy timeout).
fn open_checkpointer(path: &Path, unlock: Option<&Unlock>) -> Result<Connection> {
    let flags = rusqlite::OpenFlags::default() - rusqlite::OpenFlags::SQLITE_OPEN_CREATE;
    open_connection(path, unlock, flags)
}

/// Opens a connection of the store's pool that only reads.
fn open_reader(path: &Path, unlock: Option<&Unlock>) -> Result<Connection> {
    let conn = open_connection(path, unlock, rusqlite::OpenFlags::default())?;
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
    // Another process's checkpoint makes SQLite refuse this one at once rather than wait:
    // a few tries, a moment apart, before the scrub is reported incomplete. A try that
    // waited out the busy timeout (for readers) is not repeated.
    for attempt in 1..=SCRUB_TRIES {
        let started = std::time::Instant::now();
        let (busy, _log, _checkpointed): (i64, i64, i64) =
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?;
        if busy == 0 {
            return Ok(());
        }
        if attempt == SCRUB_TRIES || started.elapsed() > Duration::from_millis(100) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(StoreError::ScrubIncomplete)
}

/// How many times a deletion tries to checkpoint and truncate the log.
const SCRUB_TRIES: u32 = 5;

/// Switches the connection's sync level between transactions (statement cached).
fn set_synchronous(conn: &Connection, level: &str) -> Result<()> {
    conn.prepare_cached(&format!("PRAGMA synchronous = {level}"))?.execute([])?;
    Ok(())
}

/// Reads the user's records with the given rowids that are retrievable at `now` (active,
/// unexpired), keyed by rowid (any other row left out), without their embedder: the caller
/// knows it.
fn memories_by_rowid(
    conn: &Connection,
    who: &UserRef,
    rowids: &[i64],
    now: Timestamp,
) -> Result<HashMap<i64, Memory>> {
    let mut found: HashMap<i64, Memory> = HashMap::new();
    for chunk in rowids.chunks(200) {
        let marks = vec!["?"; chunk.len()].join(",");
        let columns = mnemo_engine::columns::SELECT_LIST_WITHOUT_VECTORS.as_str();
        // Only the user's own rows, still retrievable: a row ranked by the index may have
        // been removed since, and its place taken by someone else's. (Found by rowid: `+`
        // keeps the other terms off the indexes.)
        let sql = format!(
            "SELECT {columns} FROM memories m
              WHERE m.rowid IN ({marks}) AND +m.tenant = ? AND +m.user_id = ?
                AND +m.status = 'active' AND (+m.expires_at IS NULL OR +m.expires_at > ?)"
        );
        // A search fetches the same number of candidates every time: keep that statement.
        let mut stmt = conn.prepare_cached(&sql)?;
        let owner: [&dyn rusqlite::ToSql; 3] = [&who.tenant(), &who.user_id(), &now.as_millis()];
        let params = chunk.iter().map(|r| r as &dyn rusqlite::ToSql).chain(owner);
        let rows = stmt.query_map(rusqlite::params_from_iter(params), memory_from_row)?;
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

/// The user's run with this id, if any.
fn read_run(conn: &Connection, tenant: &str, user: &str, id: &str) -> Result<Option<Run>> {
    let state: Option<String> = conn
        .prepare_cached("SELECT state FROM runs WHERE tenant = ?1 AND user_id = ?2 AND id = ?3")?
        .query_row(params![tenant, user, id], |r| r.get(0))
        .optional()?;
    state.map(|s| serde_json::from_str(&s).map_err(StoreError::Json)).transpose()
}

fn query_memories(
    conn: &Connection,
    where_clause: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<Vec<(i64, Memory)>> {
    let sql = format!("SELECT {MEMORY_COLUMNS} FROM {MEMORY_FROM} WHERE {where_clause}");
    select_memories(conn, &sql, params)
}

/// Records and their rowids selected by `sql`, a select of [`MEMORY_COLUMNS`].
fn select_memories(
    conn: &Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<Vec<(i64, Memory)>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params, memory_from_row)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

fn read_settings(conn: &Connection, tenant: &str, user: &str) -> Result<UserSettings> {
    // Read before every search and context: a cached statement, not a new one each time.
    let enabled: Option<bool> = conn
        .prepare_cached(
            "SELECT memory_enabled FROM user_settings WHERE tenant = ?1 AND user_id = ?2",
        )?
        .query_row([tenant, user], |r| r.get(0))
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
             got {}-d vectors from `{}` (`mnemo reembed` embeds its records again with \
             the embedder in use)",
            embedded.vector.len(),
            embedded.model
        )));
    }
    Ok(())
}

/// Writes a record's vector, refined (from the embedder's refining encoder) or not; the
/// caller has checked it with [`check_vector`].
fn put_vector(tx: &Connection, rowid: i64, embedded: &Embedded, refined: bool) -> Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO memory_vectors (memory_rowid, model, dims, vector, refined)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        rowid,
        embedded.model,
        embedded.vector.len() as i64,
        vector_to_blob(&embedded.vector),
        refined
    ])?;
    Ok(())
}

/// The insert of a record row, from the engine's description of its columns.
static INSERT_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let marks: Vec<String> = (1..=RECORD_COLUMNS.len()).map(|n| format!("?{n}")).collect();
    format!("INSERT INTO memories ({}) VALUES ({})", RECORD_COLUMNS.join(", "), marks.join(", "))
});

/// Inserts the record row and its vector (checked by the caller with [`check_vector`]);
/// returns the new rowid.
fn insert_row(tx: &Connection, memory: &Memory, vector: Option<&Embedded>) -> Result<i64> {
    for source in &memory.derived_from {
        tx.prepare_cached(
            "INSERT OR IGNORE INTO memory_links (tenant, user_id, source_id, derived_id)
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![memory.tenant, memory.user_id, source.0, memory.id.0])?;
    }
    let values = record_values(memory).map_err(StoreError::Port)?;
    tx.prepare_cached(&INSERT_SQL)?
        .execute(rusqlite::params_from_iter(values.iter().map(Bound)))
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
        put_vector(tx, rowid, embedded, false)?;
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

impl SqliteBackend {
    /// The embedder of the file's vectors for a search, checked against the query's vector:
    /// from memory when it agrees with the one last read, else read from the file.
    fn search_embedder(&self, query: Option<&Embedded>) -> Result<Option<String>> {
        let remembered =
            self.embedder.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        match (query, remembered) {
            (Some(vector), Some((model, dims)))
                if model == vector.model && dims == vector.vector.len() =>
            {
                return Ok(Some(model));
            }
            (None, Some((model, _))) => return Ok(Some(model)),
            _ => {}
        }
        let conn = self.reader();
        if let Some(vector) = query {
            check_vector(&conn, vector)?;
        }
        let stored: Option<(String, i64)> = conn
            .prepare_cached("SELECT model, dims FROM memory_vectors LIMIT 1")?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let stored = stored.map(|(model, dims)| (model, usize::try_from(dims).unwrap_or(0)));
        *self.embedder.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = stored.clone();
        Ok(stored.map(|(model, _)| model).or_else(|| query.map(|v| v.model.clone())))
    }

    /// Runs a change whose loss in a crash is harmless (when records were last used) alone
    /// on the writer, without the fsync durable writes pay (WAL with `synchronous=NORMAL`
    /// stays consistent after a crash).
    fn light_tx<T>(&self, body: impl FnOnce(&Connection) -> Result<(T, Touched)>) -> Result<T> {
        let writer = self.writer.exclusive();
        let conn = &writer.conn;
        set_synchronous(conn, "NORMAL")?;
        let outcome = alone_in_transaction(conn, body);
        let restored = set_synchronous(conn, "FULL");
        if outcome.is_err() {
            self.index.clear();
        }
        // Followed even when the setting failed to go back: the change may be committed.
        self.index.follow_commit(conn, &[]);
        restored?;
        Ok(outcome?.0)
    }
}

impl Backend for SqliteBackend {
    fn capabilities(&self) -> StoreCaps {
        StoreCaps { full_text: true, vectors: true, secure_delete: true }
    }

    fn ledger_key(&self) -> &LedgerKey {
        &self.ledger
    }

    fn remains(&self, at: Timestamp) -> Vec<Remnant> {
        ledger::store_remains(at)
    }

    fn transaction<T>(
        &self,
        owner: Owner<'_>,
        commit: Commit,
        body: &mut dyn FnMut(&mut dyn Tx) -> Result<T, PortError>,
    ) -> Result<T, PortError> {
        let (tenant, user) = (owner.tenant(), owner.user());
        let mut run = |conn: &Connection| -> Result<(T, Touched)> {
            let mut tx = SqliteTx::new(conn, tenant, user, Some(&self.index));
            let value = body(&mut tx).map_err(StoreError::Port)?;
            Ok((value, tx.finish()?))
        };
        Ok(match commit {
            Commit::Write => self.write_tx(tenant, user, run)?,
            Commit::Deletion => self.delete_tx(tenant, user, &mut run)?,
            Commit::Light => self.light_tx(run)?,
        })
    }

    fn read<T>(
        &self,
        who: &UserRef,
        body: &mut dyn FnMut(&mut dyn Tx) -> Result<T, PortError>,
    ) -> Result<T, PortError> {
        let mut conn = self.reader();
        // One snapshot for every query of the read.
        let snapshot = conn.transaction().map_err(StoreError::from)?;
        body(&mut SqliteTx::new(&snapshot, who.tenant(), Some(who.user_id()), None))
    }

    fn rank(
        &self,
        who: &UserRef,
        query: &SearchQuery<'_>,
        now: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Result<Vec<Ranked>, PortError> {
        // Every vector of the file is of one embedder: the query's, once checked, or the
        // stored one's.
        self.search_embedder(query.vector)?;
        let scope = query.filter.scope.as_ref().map(ToString::to_string);
        let scan = mnemo_engine::scan_filter(query, now, scope.as_deref());
        let index = self.user_index(who)?;
        Ok(index.read().unwrap_or_else(std::sync::PoisonError::into_inner).search(
            query.words(),
            query.vector.map(|v| v.vector.as_slice()),
            query.common,
            scan,
            query.notebooks,
            select,
        ))
    }

    fn read_ranked(
        &self,
        who: &UserRef,
        ranked: &[Ranked],
        now: Timestamp,
    ) -> Result<Vec<Found>, PortError> {
        if ranked.is_empty() {
            return Ok(Vec::new());
        }
        let model = self.search_embedder(None)?;
        let wanted: Vec<i64> = ranked.iter().map(|hit| hit.row).collect();
        let (tenant, user) = (who.tenant(), who.user_id());
        // Kept records serve only while the cache has accounted for every commit (another
        // process's since the ranking included); otherwise every row is read from the file
        // and none kept, without waiting on the writer to account for it.
        let kept = match self.index.is_current()? {
            true => Some(self.index.rows().lookup(tenant, user, &wanted, now)),
            false => None,
        };
        let mut memories: HashMap<i64, Memory> = kept
            .iter()
            .flat_map(|kept| &kept.found)
            .map(|(row, memory)| (*row, Memory::clone(memory)))
            .collect();
        let missing: Vec<i64> =
            wanted.into_iter().filter(|row| !memories.contains_key(row)).collect();
        if !missing.is_empty() {
            let read = memories_by_rowid(&self.reader(), who, &missing, now)?;
            let read: Vec<(i64, std::sync::Arc<Memory>)> =
                read.into_iter().map(|(row, memory)| (row, std::sync::Arc::new(memory))).collect();
            if let Some(kept) = &kept {
                self.index.rows().keep(tenant, user, kept.epoch, &read);
            }
            memories.extend(read.iter().map(|(row, memory)| (*row, Memory::clone(memory))));
        }
        for hit in ranked {
            if let (Some(memory), Some(model), true) =
                (memories.get_mut(&hit.row), &model, hit.dims > 0)
            {
                let dims = u32::try_from(hit.dims).unwrap_or(u32::MAX);
                memory.embedding = Some(EmbeddingInfo { model: model.clone(), dims, vector: None });
            }
        }
        Ok(mnemo_engine::found_in_order(ranked, memories))
    }

    fn audit_entries(&self, who: &UserRef, limit: usize) -> Result<Vec<AuditEntry>, PortError> {
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

    fn receipts(&self, who: &UserRef, limit: usize) -> Result<Vec<DeletionReceipt>, PortError> {
        Ok(ledger::receipts(&self.reader(), who.tenant(), who.user_id(), limit)?)
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
            .query_map([who.tenant(), who.user_id()], |r| r.get::<_, String>(0))
            .map_err(StoreError::from)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(StoreError::from)?;
        Ok(states
            .iter()
            .map(|s| serde_json::from_str(s).map_err(StoreError::Json))
            .collect::<Result<_>>()?)
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

    fn unrefined_owners(&self, limit: usize) -> Result<Vec<(String, String)>, PortError> {
        let conn = self.reader();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let owners = conn
            .prepare_cached(
                "SELECT DISTINCT m.tenant, m.user_id FROM memory_vectors v
                   JOIN memories m ON m.rowid = v.memory_rowid
                  WHERE v.refined = 0 LIMIT ?1",
            )
            .and_then(|mut stmt| stmt.query_map([limit], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(StoreError::from)?;
        Ok(owners)
    }
}

impl KeyStore for SqliteBackend {
    fn create_key(&self, key: &ApiKey) -> Result<(), PortError> {
        Ok(self.write_tx(&key.tenant, None, |tx| {
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
        Ok(self.write_tx(tenant, None, |tx| {
            let changed = tx.execute(
                "UPDATE api_keys SET revoked_at = ?1 WHERE tenant = ?2 AND id = ?3 AND revoked_at IS NULL",
                params![now.as_millis(), tenant, id],
            )?;
            Ok((changed > 0, Touched::Nothing))
        })?)
    }

    fn create_sign_in(&self, link: &SignInLink) -> Result<(), PortError> {
        Ok(self.write_tx(link.who.tenant(), None, |tx| {
            tx.execute(
                "INSERT INTO sign_in_links (hash, tenant, user_id, created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    link.hash,
                    link.who.tenant(),
                    link.who.user_id(),
                    link.created_at.as_millis(),
                    link.expires_at.as_millis()
                ],
            )?;
            Ok(((), Touched::Nothing))
        })?)
    }

    fn redeem_sign_in(&self, hash: &str, now: Timestamp) -> Result<Option<UserRef>, PortError> {
        let owner: Option<(String, String)> = self.write_tx("", None, |tx| {
            let row = tx
                .query_row(
                    "UPDATE sign_in_links SET used_at = ?2
                      WHERE hash = ?1 AND used_at IS NULL AND expires_at > ?2
                     RETURNING tenant, user_id",
                    params![hash, now.as_millis()],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            Ok((row, Touched::Nothing))
        })?;
        Ok(owner.and_then(|(tenant, user)| UserRef::new(&tenant, &user).ok()))
    }
}

#[cfg(test)]
mod tests {
    use mnemo_core::lifecycle;
    use mnemo_core::ports::{ListFilter, MemoryStore, NewRecord};

    use super::*;

    /// Every record a search of `index` offers to ranking (for `terms` and `query`), in
    /// rowid order, with its BM25F and cosine.
    fn offered(
        index: &mnemo_index::UserIndex,
        terms: &[String],
        query: Option<&[f32]>,
    ) -> Vec<(i64, f64, f64)> {
        let filter = mnemo_index::ScanFilter {
            now: mnemo_testkit::T0.as_millis(),
            kind: None,
            scope: None,
            exclude_sensitive: false,
        };
        let every = |signals: &mnemo_core::retrieval::Signals<'_>| {
            let every = 0..signals.rows.len();
            every.map(|index| Fused { index, score: 0.0, evidence: 0.0 }).collect()
        };
        let mut offered: Vec<(i64, f64, f64)> = index
            .search(
                mnemo_core::retrieval::QueryWords { terms, modifiers: &[] },
                query,
                None,
                filter,
                1,
                &every,
            )
            .iter()
            .map(|r| (r.row, r.bm25, r.cosine))
            .collect();
        offered.sort_by_key(|r| r.0);
        offered
    }

    /// A record a transaction knows from its neighbour queries is the record a read of its
    /// row gives back, every field included, also after the transaction changed the row.
    #[test]
    fn a_record_known_to_a_transaction_reads_as_its_row() {
        use mnemo_core::{ConsentReceipt, Source, SourceType};
        use mnemo_engine::Tx;
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir.path().join("m.db"), Timestamp::from_millis(0)).unwrap();
        let writer = store.writer.exclusive();
        let conn = &writer.conn;
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        let t0 = mnemo_testkit::T0;
        let fields = lifecycle::CandidateFields {
            content: "I'm allergic to penicillin".into(),
            kind: Some(mnemo_core::Kind::Semantic),
            agent_id: Some("agent-7".into()),
            session_id: Some("s-3".into()),
            importance: Some(0.75),
            confidence: Some(0.6),
            sensitive: true,
            source: Some(Source {
                source_type: SourceType::UserStated,
                source_ref: Some("msg-9".into()),
                captured_at: t0,
                extractor: Some("rules-1".into()),
            }),
            valid_from: Some(t0),
            expires_at: Some(Timestamp::from_millis(t0.as_millis() + 86_400_000)),
            review_after: Some(Timestamp::from_millis(t0.as_millis() + 3_600_000)),
            consent: Some(ConsentReceipt {
                granted_at: t0,
                method: "explicit_remember".into(),
                recorded_by: "cli".into(),
            }),
            metadata: [("topic".to_owned(), serde_json::json!({"a": [1, 2.5, "x"]}))].into(),
            derived_from: vec![mnemo_core::MemoryId("earlier".into())],
            ..Default::default()
        };
        let candidate = lifecycle::Candidate::validate(fields, t0).unwrap();
        let mut memory = candidate.into_memory(
            mnemo_core::MemoryId("kept".into()),
            "acme",
            "alice",
            mnemo_core::Status::Active,
            t0,
        );
        memory.last_used_at = Some(t0);
        let embedded =
            Embedded { model: "test-model".into(), vector: vec![0.6, 0.8, 0.0], calibration: None };
        for vector in [Some(&embedded), None] {
            memory.id.0.push('+');
            let mut tx = tx::SqliteTx::new(conn, "acme", Some("alice"), Some(&store.index));
            let row = tx.insert(&memory, vector).unwrap();
            let known = tx.known_by_rowid(&[row]).unwrap();
            assert_eq!(known, tx.known_by_rowid(&[row]).unwrap());
            assert_eq!(known, tx.rows(&[row]).unwrap());
            assert_eq!(known[0].1.content, memory.content);
            // Changed in the transaction, the row is read again.
            let mut edited = memory.clone();
            edited.content = "I'm allergic to penicillin and to latex".into();
            edited.version += 1;
            tx.update(row, &edited).unwrap();
            assert_eq!(tx.known_by_rowid(&[row]).unwrap(), tx.rows(&[row]).unwrap());
            assert_eq!(tx.known_by_rowid(&[row]).unwrap()[0].1.content, edited.content);
            tx.supersede(&memory.id, &mnemo_core::MemoryId("newer".into()), t0).unwrap();
            let superseded = tx.known_by_rowid(&[row]).unwrap();
            assert_eq!(superseded, tx.rows(&[row]).unwrap());
            assert_eq!(superseded[0].1.status, mnemo_core::Status::Superseded);
        }
        conn.execute_batch("ROLLBACK").unwrap();
    }

    /// A transaction that has read more records than it keeps still answers every row
    /// asked for, those it knew and those it reads, as the cache starts afresh.
    #[test]
    fn a_transaction_past_its_known_records_answers_every_row() {
        use mnemo_engine::Tx;
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir.path().join("m.db"), Timestamp::from_millis(0)).unwrap();
        let writer = store.writer.exclusive();
        let conn = &writer.conn;
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        let mut tx = tx::SqliteTx::new(conn, "acme", Some("alice"), Some(&store.index));
        let rows: Vec<i64> = (0..tx::KNOWN_ROWS + 20)
            .map(|i| {
                let fields = mnemo_testkit::stated(&format!("Note {i} about the garden"));
                let candidate = lifecycle::Candidate::validate(fields, mnemo_testkit::T0);
                let memory = candidate.unwrap().into_memory(
                    mnemo_core::MemoryId(format!("note-{i}")),
                    "acme",
                    "alice",
                    mnemo_core::Status::Active,
                    mnemo_testkit::T0,
                );
                tx.insert(&memory, None).unwrap()
            })
            .collect();
        // Each lookup asks for two rows it knows and one it has not read yet.
        for asked in rows.windows(3) {
            let found: Vec<i64> =
                tx.known_by_rowid(asked).unwrap().into_iter().map(|(row, _)| row).collect();
            assert_eq!(found, asked);
        }
        drop(tx);
        conn.execute_batch("ROLLBACK").unwrap();
    }

    /// A cached statement must not be compiled again for each new set of bound values: the
    /// write path runs its duplicate lookup once per record.
    #[test]
    fn cached_lookups_are_not_recompiled_per_binding() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir.path().join("m.db"), Timestamp::from_millis(0)).unwrap();
        let writer = store.writer.exclusive();
        let conn = &writer.conn;
        let same_content = format!("m.tenant = ?1 AND m.user_id = ?2 AND {}", tx::SAME_CONTENT);
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM {MEMORY_FROM} WHERE {same_content}");
        for i in 0..20_i64 {
            let hash = format!("hash-{i}");
            let tenant = format!("tenant-{i}");
            query_memories(
                conn,
                &same_content,
                &[&tenant, &"user", &hash, &"semantic", &"user", &i],
            )
            .unwrap();
        }
        let stmt = conn.prepare_cached(&sql).unwrap();
        let recompiled = stmt.get_status(rusqlite::StatementStatus::RePrepare);
        assert!(recompiled <= 1, "the duplicate lookup was compiled again {recompiled} times");
    }

    /// A new user's first batch is followed into the index as it is written rather than read
    /// back: the cached index answers as one loaded from the committed file does, and a batch
    /// that fails leaves nothing of itself in it.
    #[test]
    fn a_new_users_index_follows_its_first_batch_as_written() {
        use mnemo_core::ports::Embedder;
        use mnemo_testkit::fakes::FakeEmbedder;
        use mnemo_testkit::{T0, stated, who};
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir.path().join("m.db"), T0).unwrap();
        let embedder = FakeEmbedder::new(64);
        let record = |id: &str, text: &str, dims: usize| {
            let mut fields = stated(text);
            fields.session_id = Some("s1".into());
            fields.metadata.insert("speaker".into(), "user".into());
            let vector = embedder.embed(&[text]).unwrap().remove(0);
            NewRecord {
                id: MemoryId(id.into()),
                candidate: lifecycle::Candidate::validate(fields, T0).unwrap(),
                embedding: Some(Embedded {
                    model: embedder.id().into(),
                    vector: vector[..dims].to_vec(),
                    calibration: None,
                }),
            }
        };
        let decide =
            |c: &lifecycle::Candidate, ctx: &lifecycle::WriteContext| lifecycle::decide(c, ctx, T0);
        let topics = ["garden", "bicycle", "piano", "kitchen", "passport", "holiday"];
        let texts: Vec<String> = (0..60)
            .map(|i| format!("Note {i} about the {} and the {}", topics[i % 6], topics[i % 5]))
            .collect();
        let alice = who("acme", "alice");
        let batch = texts.iter().enumerate().map(|(i, t)| record(&format!("a{i}"), t, 64));
        store.write_batch(&alice, batch.collect(), T0, "test", &decide).unwrap();
        // What a search and a neighbour query see in an index, in rowid order (ties among
        // equal scores are broken by the index's own order, which loading may change).
        let seen = |index: &mnemo_index::UserIndex| {
            let filter = |kind| mnemo_index::ScanFilter {
                now: T0.as_millis(),
                kind,
                scope: None,
                exclude_sensitive: false,
            };
            let mut seen = Vec::new();
            for text in &texts[..12] {
                let query = embedder.embed(&[text]).unwrap().remove(0);
                let semantic = filter(Some(mnemo_core::Kind::Semantic));
                let mut near: Vec<(i64, f32, Option<f32>)> = index
                    .nearest(&query, None, semantic, 100)
                    .iter()
                    .map(|n| (n.rowid, n.cosine, n.related))
                    .collect();
                near.sort_by_key(|n| n.0);
                let terms = mnemo_core::retrieval::query_terms(text);
                seen.push((near, offered(index, &terms, Some(&query))));
            }
            seen
        };
        let loaded =
            |user: &str| vector_index::load(&store.writer.exclusive().conn, "acme", user).unwrap();
        let followed = store.user_index(&alice).unwrap();
        let followed = seen(&followed.read().unwrap());
        assert!(followed.iter().all(|(near, rows)| near.len() == 60 && rows.len() == 60));
        assert_eq!(followed, seen(&loaded("alice")));
        // A new user's batch whose third vector has other dimensions fails whole.
        let bob = who("acme", "bob");
        let batch =
            (0..3).map(|i| record(&format!("b{i}"), &texts[i], if i == 2 { 8 } else { 64 }));
        assert!(store.write_batch(&bob, batch.collect(), T0, "test", &decide).is_err());
        let after = store.user_index(&bob).unwrap();
        let after = seen(&after.read().unwrap());
        assert!(after.iter().all(|(near, rows)| near.is_empty() && rows.is_empty()));
        assert_eq!(after, seen(&loaded("bob")));
    }

    /// A store in a new directory (kept while the directory lives), and the user "alice" of
    /// tenant "acme", who holds nothing yet.
    fn alices_store() -> (tempfile::TempDir, SqliteStore, mnemo_core::UserRef) {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir.path().join("m.db"), mnemo_testkit::T0).unwrap();
        (dir, store, mnemo_testkit::who("acme", "alice"))
    }

    /// A load reads exactly the user's rows wherever they lie among others' in the table: in
    /// a block, alternating with another user's, and scattered among many rows of another
    /// user and of the same user id in another tenant.
    #[test]
    fn a_load_reads_its_users_rows_wherever_they_lie() {
        use mnemo_testkit::{T0, stated, who, write};
        let (_dir, store, alice) = alices_store();
        let (bob, other_alice) = (who("acme", "bob"), who("other", "alice"));
        let mut n = 0;
        let mut put = |whom: &mnemo_core::UserRef| {
            write(&store, whom, &format!("m{n}"), stated(&format!("Shed note {n}")), T0);
            n += 1;
        };
        for _ in 0..50 {
            put(&alice);
        }
        for _ in 0..50 {
            put(&bob);
            put(&alice);
        }
        for _ in 0..5 {
            for _ in 0..40 {
                put(&bob);
                put(&other_alice);
            }
            put(&alice);
        }
        let writer = store.writer.exclusive();
        let conn = &writer.conn;
        let terms = mnemo_core::retrieval::query_terms("shed note");
        for (tenant, user, count) in
            [("acme", "alice", 105), ("acme", "bob", 250), ("other", "alice", 200)]
        {
            let loaded = vector_index::load(conn, tenant, user).unwrap();
            let loaded: Vec<i64> = offered(&loaded, &terms, None).iter().map(|r| r.0).collect();
            let mut stored: Vec<i64> = conn
                .prepare("SELECT rowid FROM memories WHERE tenant = ?1 AND user_id = ?2")
                .unwrap()
                .query_map([tenant, user], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            stored.sort_unstable();
            assert_eq!(stored.len(), count);
            assert_eq!(loaded, stored, "{tenant}/{user}");
        }
    }

    /// Searches of a user who is not cached, side by side (as after a start), read the
    /// user's rows once: the others wait for that load and share it.
    #[test]
    fn readers_of_an_uncached_user_share_one_load() {
        use std::sync::{Arc, Barrier};

        use mnemo_testkit::{T0, stated, write};
        let (_dir, store, alice) = alices_store();
        for n in 0..200 {
            write(&store, &alice, &format!("m{n}"), stated(&format!("Shed note {n}")), T0);
        }
        for round in 0..3 {
            store.index.drop_user("acme", Some("alice"));
            let before = store.index.reader_loads();
            let start = Barrier::new(READERS);
            let loaded: Vec<vector_index::SharedUserIndex> = std::thread::scope(|scope| {
                let searches: Vec<_> = (0..READERS)
                    .map(|_| {
                        scope.spawn(|| {
                            let reader = store.reader();
                            start.wait();
                            store.index.for_reader(&reader, "acme", "alice").unwrap().unwrap()
                        })
                    })
                    .collect();
                searches.into_iter().map(|search| search.join().unwrap()).collect()
            });
            assert_eq!(store.index.reader_loads() - before, 1, "round {round}");
            assert!(loaded.iter().all(|index| Arc::ptr_eq(index, &loaded[0])), "round {round}");
            assert_eq!(offered(&loaded[0].read().unwrap(), &[], None).len(), 200);
        }
    }

    /// A reader that loads a user while a write of that user is open keeps the load (what
    /// is committed), and the write's commit brings it up to date; a neighbour query of the
    /// open transaction loads the user again, with what the transaction wrote.
    #[test]
    fn a_load_taken_while_a_write_is_open_is_brought_up_to_date_by_its_commit() {
        use std::sync::{Arc, RwLock};

        use mnemo_engine::Tx as _;
        use mnemo_testkit::{T0, stated, write};
        let (_dir, store, alice) = alices_store();
        write(&store, &alice, "first", stated("The garden shed needs a new roof"), T0);
        let rows = |index: &vector_index::SharedUserIndex| {
            let offered = offered(&index.read().unwrap(), &[], None);
            offered.into_iter().map(|(row, _, _)| row).collect::<Vec<i64>>()
        };
        // Alice's index is not cached when the write begins.
        store.index.drop_user("acme", Some("alice"));
        let writer = store.writer.exclusive();
        let conn = &writer.conn;
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        let mut tx = tx::SqliteTx::new(conn, "acme", Some("alice"), Some(&store.index));
        let candidate = lifecycle::Candidate::validate(stated("The bicycle has a flat tyre"), T0);
        let memory = candidate.unwrap().into_memory(
            MemoryId("second".into()),
            "acme",
            "alice",
            mnemo_core::Status::Active,
            T0,
        );
        let second = tx.insert(&memory, None).unwrap();
        let touched = tx.finish().unwrap();
        store.index.follow_uncommitted(conn, "acme", Some("alice"), &touched).unwrap();
        // A search now: what is committed, kept for the searches after it.
        let read = store.index.for_reader(&store.reader(), "acme", "alice").unwrap().unwrap();
        assert_eq!(rows(&read).len(), 1);
        let again = store.index.for_reader(&store.reader(), "acme", "alice").unwrap().unwrap();
        assert!(Arc::ptr_eq(&read, &again), "the load was not kept");
        // The open transaction's own neighbour query sees its row.
        let writing = store.index.for_writer(conn, "acme", "alice").unwrap();
        assert!(rows(&writing).contains(&second));
        // A reader's load kept again, then the commit.
        store.index.drop_user("acme", Some("alice"));
        let read = store.index.for_reader(&store.reader(), "acme", "alice").unwrap().unwrap();
        assert_eq!(rows(&read).len(), 1);
        conn.execute_batch("COMMIT").unwrap();
        let change = vector_index::Change {
            tenant: "acme".into(),
            user: Some("alice".into()),
            touched,
            followed: true,
        };
        store.index.follow_commit(conn, &[change]);
        let after = store.index.for_reader(&store.reader(), "acme", "alice").unwrap().unwrap();
        assert!(Arc::ptr_eq(&read, &after));
        assert_eq!(
            rows(&after),
            rows(&Arc::new(RwLock::new(vector_index::load(conn, "acme", "alice").unwrap())))
        );
        assert!(rows(&after).contains(&second));
    }

    /// Concurrent writes share commits, every acknowledged one is stored, and a write that
    /// fails inside a shared transaction fails alone.
    #[test]
    fn concurrent_writes_share_commits_and_a_failing_one_fails_alone() {
        use mnemo_testkit::{T0, stated, write};
        let (_dir, store, alice) = alices_store();
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
