//! mnemo's scale-out store: PostgreSQL with pgvector, a backend of the store engine
//! (`mnemo-engine`, which holds every rule) like the embedded SQLite store and passing the
//! same conformance suite, so any number of stateless `mnemo serve` nodes can share one
//! database.
//!
//! - Every query filters on `tenant` and `user_id` in SQL.
//! - Every change to a user's data runs in one transaction that first takes a transaction-level
//!   advisory lock on the user: writes for one user are serialised across all nodes (as
//!   SQLite's `BEGIN IMMEDIATE` serialises writers on one file), so the consistency rules see
//!   the user's latest state and concurrent supersession of one key leaves one active record.
//!   Writes for different users run in parallel.
//! - Search ranks with the same in-memory index as the SQLite store ([`mnemo_index`]), so
//!   rankings are identical. Each node caches a user's index and checks the user's epoch (a
//!   counter every committing write raises) before using it, so a node never ranks stale data.
//! - Vectors are stored as pgvector `vector` values; deletion removes a record's row, versions,
//!   vector and links in one transaction (see `docs/OPERATIONS.md` for dead tuples and VACUUM).

mod codec;
mod ledger;
mod migrate;
mod pool;
mod spaces;
mod tx;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use mnemo_core::ledger::{DeletionReceipt, LedgerKey, Remnant, Removed};
use mnemo_core::policy::UserSettings;
use mnemo_core::ports::{
    ApiKey, AuditEntry, Embedded, Found, KeyStore, PortError, Ranked, SearchQuery, SignInLink,
    StoreCaps,
};
use mnemo_core::retrieval::{Fused, Signals};
use mnemo_core::run::Run;
use mnemo_core::{ErrorKind, Kind, Memory, MemoryId, MemoryVersion, Status, Timestamp, UserRef};
use mnemo_engine::{Backend, Commit, Engine, Owner, Tx};
use mnemo_index::{IndexRow, UserIndex};
use pgvector::Vector;
use postgres::{GenericClient, NoTls, Transaction};
use r2d2_postgres::PostgresConnectionManager;

use pool::{Conn, Statements};
use tx::{PgTx, SlotGuard};

use codec::{Bound, MEMORY_COLUMNS, MEMORY_FROM, memory_from_row, to_json};
pub use migrate::LATEST_VERSION as SCHEMA_VERSION;
use mnemo_engine::columns::{RECORD_COLUMNS, record_values};

/// Errors raised inside the PostgreSQL store; converted to [`PortError`] at the port boundary.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A PostgreSQL call failed.
    #[error("postgres: {}", server_message(.0))]
    Postgres(#[from] postgres::Error),
    /// No connection could be taken from the pool.
    #[error("postgres connection pool: {0}")]
    Pool(#[from] r2d2::Error),
    /// The connection URL could not be parsed.
    #[error("bad PostgreSQL URL: {0}")]
    BadUrl(String),
    /// A migration failed to apply.
    #[error("migration {version} failed: {source}")]
    Migration {
        /// The migration's version.
        version: u32,
        /// The PostgreSQL error.
        source: postgres::Error,
    },
    /// The database was migrated by a newer mnemo.
    #[error("database schema version {found} is newer than this mnemo supports ({supported})")]
    SchemaTooNew {
        /// Version found in the database.
        found: u32,
        /// Newest version this build knows.
        supported: u32,
    },
    /// A JSON column could not be encoded or decoded.
    #[error("json: {0}")]
    Json(serde_json::Error),
    /// A stored value is not one this build can read.
    #[error("{0}")]
    Corrupt(String),
    /// A write conflicts with stored state.
    #[error("{0}")]
    Conflict(String),
    /// A vector's embedder or dimensions do not match the stored ones.
    #[error("{0}")]
    VectorMismatch(String),
    /// The engine's error, passed through unchanged.
    #[error("{0}")]
    Port(PortError),
}

/// The server's own message for an error it raised, else the client's description.
fn server_message(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => error.to_string(),
    }
}

/// The SQLSTATE the database raises for a vector from another embedder (migration 0003).
const EMBEDDER_MISMATCH: &str = "MN001";

/// SQLSTATE classes that mean "try again": serialization failure, deadlock, lock timeout,
/// and the connection-level classes (08: connection exception, 57P: operator intervention).
fn retryable(error: &postgres::Error) -> bool {
    match error.code() {
        Some(code) => {
            let code = code.code();
            // 55P03: a lock wait passed `lock_timeout`.
            code == "40001"
                || code == "40P01"
                || code == "55P03"
                || code.starts_with("08")
                || code.starts_with("57P")
        }
        // No SQLSTATE: the connection itself failed.
        None => {
            error.is_closed()
                || std::error::Error::source(error).is_some_and(|s| s.is::<std::io::Error>())
        }
    }
}

impl StoreError {
    fn kind(&self) -> ErrorKind {
        match self {
            StoreError::Postgres(e)
                if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) =>
            {
                ErrorKind::Conflict
            }
            StoreError::Postgres(e)
                if e.code().is_some_and(|code| code.code() == EMBEDDER_MISMATCH) =>
            {
                ErrorKind::InvalidInput
            }
            StoreError::Postgres(e)
                if e.code().is_some_and(|code| {
                    *code == postgres::error::SqlState::DISK_FULL
                        || *code == postgres::error::SqlState::INSUFFICIENT_RESOURCES
                }) =>
            {
                ErrorKind::StorageFull
            }
            StoreError::Postgres(e) if retryable(e) => {
                ErrorKind::Unavailable { retry_after: Some(Duration::from_secs(1)) }
            }
            StoreError::Pool(_) => {
                ErrorKind::Unavailable { retry_after: Some(Duration::from_secs(1)) }
            }
            StoreError::Port(error) => error.kind,
            StoreError::Conflict(_) => ErrorKind::Conflict,
            StoreError::VectorMismatch(_) | StoreError::BadUrl(_) => ErrorKind::InvalidInput,
            StoreError::SchemaTooNew { .. } => ErrorKind::Unavailable { retry_after: None },
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
                "the PostgreSQL server has no space left",
            ),
        }
    }
}

type Result<T, E = StoreError> = std::result::Result<T, E>;

type Pool = r2d2::Pool<pool::Manager>;

/// The connection pool, closed on a thread of its own when dropped: the synchronous client
/// closes a connection by blocking on its own runtime, which panics on a thread that is
/// driving an async runtime (where a server drops its state on shutdown).
struct OwnPool(Option<Pool>);

impl std::ops::Deref for OwnPool {
    type Target = Pool;

    fn deref(&self) -> &Pool {
        // Only `drop` takes the pool out.
        self.0.as_ref().unwrap_or_else(|| unreachable!("pool used after drop"))
    }
}

impl Drop for OwnPool {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            let _ = std::thread::spawn(move || drop(pool)).join();
        }
    }
}

/// How long a statement waits for a lock (the user's write lock among them), in ms.
const LOCK_TIMEOUT_MS: u32 = 30_000;

/// How long the server keeps a transaction its client left idle, in ms.
const IDLE_TX_TIMEOUT_MS: u32 = 60_000;

/// How many connections one node keeps open at most.
const POOL_SIZE: u32 = 16;

/// How long a request waits for a free connection.
const POOL_WAIT: Duration = Duration::from_secs(10);

/// One user's cached search index and the epoch it reflects.
pub(crate) struct CachedUser {
    epoch: i64,
    index: UserIndex,
}

/// One user's slot in this node's cache. Searches read it together; a search that must bring
/// it up to date, and a batch write following each of its records, take it alone, briefly:
/// never for a whole transaction, so a search does not wait behind a write's commit.
pub(crate) type UserSlot = Arc<RwLock<Option<CachedUser>>>;

/// The PostgreSQL store: a connection pool and this node's cache of users' search indexes.
pub struct PostgresBackend {
    pool: OwnPool,
    users: Mutex<HashMap<(String, String), UserSlot>>,
    /// The embedder (model, dimensions) of the stored vectors, once read.
    embedder: Mutex<Option<(String, usize)>>,
    target: String,
    /// The key of the deletion ledger's hashes.
    ledger: LedgerKey,
}

impl std::fmt::Debug for PostgresBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresBackend").field("target", &self.target).finish()
    }
}

/// The PostgreSQL store: the engine's rules over [`PostgresBackend`].
pub type PostgresStore = Engine<PostgresBackend>;

/// Connects to the database at `url` (see [`PostgresBackend::open`]) and applies pending
/// migrations.
pub fn open(url: &str, now: Timestamp) -> Result<PostgresStore> {
    PostgresBackend::open(url, now).map(Engine::new)
}

impl PostgresBackend {
    /// Connects to the database at `url` (`postgres://user@host:port/db`, with libpq-style
    /// parameters such as `?options=-csearch_path%3Dmnemo` to pick a schema) and applies
    /// pending migrations.
    pub fn open(url: &str, now: Timestamp) -> Result<Self> {
        let mut config: postgres::Config =
            url.parse().map_err(|e: postgres::Error| StoreError::BadUrl(e.to_string()))?;
        // No request waits forever: not on another writer's lock of the user (the request
        // fails as unavailable, to be retried), nor behind a transaction its client abandoned.
        let options = format!(
            "{} -c lock_timeout={LOCK_TIMEOUT_MS} -c idle_in_transaction_session_timeout={IDLE_TX_TIMEOUT_MS}",
            config.get_options().unwrap_or_default()
        );
        config.options(options.trim());
        let target = format!(
            "{}/{}",
            config
                .get_hosts()
                .first()
                .map(|h| match h {
                    postgres::config::Host::Tcp(name) => name.clone(),
                    postgres::config::Host::Unix(path) => path.display().to_string(),
                })
                .unwrap_or_default(),
            config.get_dbname().unwrap_or_default()
        );
        let manager = pool::Manager(PostgresConnectionManager::new(config, NoTls));
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(1))
            .connection_timeout(POOL_WAIT)
            .build(manager)?;
        migrate::migrate(&mut pool.get()?.client, now.as_millis())?;
        let ledger = ledger::read_key(&mut pool.get()?.client)?;
        Ok(Self {
            pool: OwnPool(Some(pool)),
            users: Mutex::new(HashMap::new()),
            embedder: Mutex::new(None),
            target,
            ledger,
        })
    }

    /// The schema version recorded in the database.
    pub fn schema_version(&self) -> Result<u32> {
        migrate::current_version(&mut self.conn()?.client)
    }

    /// A connection from the pool.
    fn conn(&self) -> Result<r2d2::PooledConnection<pool::Manager>> {
        Ok(self.pool.get()?)
    }

    /// The user's slot in this node's cache (created empty on first use).
    fn slot(&self, who: (&str, &str)) -> UserSlot {
        // A poisoned lock only means another thread panicked while holding it; every cached
        // index is checked against the user's epoch before use.
        let mut users = self.users.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        users.entry((who.0.to_owned(), who.1.to_owned())).or_default().clone()
    }

    /// Takes the user's advisory lock and raises the user's epoch (every row the
    /// transaction changes is stamped with it, and every row it deletes leaves a tombstone
    /// with it: migration 0002); returns the epoch before.
    fn begin_write(
        tx: &mut Transaction<'_>,
        statements: &mut Statements,
        (tenant, user): (&str, &str),
    ) -> Result<i64> {
        let begin = statements.get(tx, BEGIN_WRITE_SQL)?;
        let epoch: i64 = tx.query_one(&begin, &[&tenant, &user])?.try_get(0)?;
        if epoch % PRUNE_EVERY == 0 {
            // Keep twice the catch-up window, so a node whose copy lags by up to
            // `DELTA_EPOCHS` finds every tombstone it needs even while a prune runs.
            tx.execute(
                "DELETE FROM memory_tombstones WHERE tenant = $1 AND user_id = $2 AND epoch <= $3",
                &[&tenant, &user, &(epoch - 2 * DELTA_EPOCHS)],
            )?;
        }
        Ok(epoch - 1)
    }
}

/// The first statement of every write transaction: takes the user's lock (keyed by schema,
/// tenant and user), raises the user's epoch and makes it the transaction's `mnemo.epoch`,
/// which the triggers of migration 0002 stamp on changed rows and tombstones.
pub(crate) const BEGIN_WRITE_SQL: &str = "WITH locked AS (
         SELECT pg_advisory_xact_lock(
             hashtextextended(current_schema() || chr(31) || $1 || chr(31) || $2, 0))),
     raised AS (
         INSERT INTO user_epochs (tenant, user_id, epoch)
         SELECT $1, $2, 1 FROM locked
         ON CONFLICT (tenant, user_id) DO UPDATE SET epoch = user_epochs.epoch + 1
         RETURNING epoch)
     SELECT epoch, set_config('mnemo.epoch', epoch::text, true) FROM raised";

/// How far (in epochs) a cached index may lag and still catch up from the changes since;
/// tombstones older than twice this are pruned.
const DELTA_EPOCHS: i64 = 1024;

/// Every how many epochs of a user its old tombstones are pruned.
const PRUNE_EVERY: i64 = 64;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Takes a user's slot alone; a slot poisoned by a panic is emptied, since the index in it
/// may be half-changed.
fn write_slot(slot: &RwLock<Option<CachedUser>>) -> RwLockWriteGuard<'_, Option<CachedUser>> {
    match slot.write() {
        Ok(guard) => guard,
        Err(poisoned) => {
            slot.clear_poison();
            let mut guard = poisoned.into_inner();
            *guard = None;
            guard
        }
    }
}

/// Reads a user's slot together with other searches; `None` when it is poisoned (the next
/// [`write_slot`] empties it).
fn read_slot(slot: &RwLock<Option<CachedUser>>) -> Option<RwLockReadGuard<'_, Option<CachedUser>>> {
    slot.read().ok()
}

/// The user's index as of `epoch`: the cached one, brought up to date with the rows changed
/// and deleted since its own epoch when it lags by at most [`DELTA_EPOCHS`], else loaded
/// whole from `client`.
fn index_at<'c>(
    client: &mut impl GenericClient,
    statements: &mut Statements,
    who: (&str, &str),
    epoch: i64,
    cached: &'c mut Option<CachedUser>,
) -> Result<&'c mut UserIndex> {
    match cached {
        // A copy already newer than `epoch` (a write on this node committed since the epoch
        // was read) is current enough.
        Some(c) if c.epoch >= epoch => {}
        Some(c) if c.epoch < epoch && epoch - c.epoch <= DELTA_EPOCHS => {
            catch_up(client, statements, who, c)?;
            c.epoch = epoch;
        }
        _ => {
            *cached = None;
            *cached = Some(CachedUser { epoch, index: load_user(client, who)? });
        }
    }
    match cached {
        Some(c) => Ok(&mut c.index),
        None => Err(StoreError::Corrupt("user index missing after load".into())),
    }
}

/// Applies to a cached index the user's rows changed, and deleted, after its epoch. Rows of
/// later epochs may be applied too; applying them again later does no harm.
fn catch_up(
    client: &mut impl GenericClient,
    statements: &mut Statements,
    who: (&str, &str),
    cached: &mut CachedUser,
) -> Result<()> {
    let changed = statements.get(client, &CHANGED_SQL)?;
    let changed = client.query(&changed, &[&who.0, &who.1, &cached.epoch])?;
    let deleted = statements.get(
        client,
        "SELECT rowid FROM memory_tombstones WHERE tenant = $1 AND user_id = $2 AND epoch > $3",
    )?;
    let deleted = client.query(&deleted, &[&who.0, &who.1, &cached.epoch])?;
    for row in &changed {
        cached.index.upsert_row(index_row(row)?);
    }
    for row in &deleted {
        cached.index.remove(row.try_get(0)?);
    }
    Ok(())
}

/// Records of a user by rowid that are still retrievable (one may have changed since the
/// index ranked it).
static BY_ROWID_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    // The rows are found by key, and the owner is checked on each: the owner is compared
    // with `IS NOT DISTINCT FROM` (the columns are never null, so it is equality), which no
    // index serves. With plain equality, a planner without statistics yet (a table just
    // filled) walks the owner's index through all of the owner's rows instead, testing each
    // against the array: about 2 ms for 5,000 rows rather than 0.05.
    format!(
        "SELECT {MEMORY_COLUMNS} FROM {MEMORY_FROM}
          WHERE m.rowid = ANY($3) AND (m.tenant, m.user_id) IS NOT DISTINCT FROM ($1, $2)
            AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > $4)"
    )
});

/// The user's rows changed after an epoch, as index rows.
static CHANGED_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "{ROW_SQL} WHERE m.tenant = $1 AND m.user_id = $2 AND m.changed_epoch > $3 ORDER BY m.rowid"
    )
});

fn read_epoch(
    client: &mut impl GenericClient,
    statements: &mut Statements,
    who: (&str, &str),
) -> Result<i64> {
    let statement = statements
        .get(client, "SELECT epoch FROM user_epochs WHERE tenant = $1 AND user_id = $2")?;
    Ok(client
        .query_opt(&statement, &[&who.0, &who.1])?
        .map(|row| row.try_get(0))
        .transpose()?
        .unwrap_or(0))
}

const ROW_SQL: &str = "SELECT m.rowid, m.kind, m.scope, m.status, m.sensitivity, m.expires_at,
            v.vector, m.metadata::jsonb ->> 'speaker', m.session_id, m.valid_from, m.content
       FROM memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid";

fn index_row(row: &postgres::Row) -> Result<IndexRow> {
    let kind: String = row.try_get(1)?;
    let status: String = row.try_get(3)?;
    let sensitivity: String = row.try_get(4)?;
    let vector: Option<Vector> = row.try_get(6)?;
    Ok(IndexRow {
        rowid: row.try_get(0)?,
        kind: kind.parse().unwrap_or(Kind::Episodic),
        scope: row.try_get(2)?,
        active: status == "active",
        sensitive: sensitivity == "sensitive",
        expires_at: row.try_get(5)?,
        vector: vector.map(|v| v.to_vec()).unwrap_or_default(),
        text: row.try_get(10)?,
        speaker: row.try_get(7)?,
        session: row.try_get(8)?,
        valid_from: row.try_get(9)?,
    })
}

/// Reads every record of a user into a fresh index.
fn load_user(client: &mut impl GenericClient, who: (&str, &str)) -> Result<UserIndex> {
    let mut index = UserIndex::default();
    let sql = format!("{ROW_SQL} WHERE m.tenant = $1 AND m.user_id = $2 ORDER BY m.rowid");
    for row in client.query(&sql, &[&who.0, &who.1])? {
        index.upsert_row(index_row(&row)?);
    }
    Ok(index)
}

fn query_memories(
    client: &mut impl GenericClient,
    where_clause: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<Vec<(i64, Memory)>> {
    let sql = format!("SELECT {MEMORY_COLUMNS} FROM {MEMORY_FROM} WHERE {where_clause}");
    client.query(&sql, params)?.iter().map(memory_from_row).collect()
}

fn read_settings(
    client: &mut impl GenericClient,
    (tenant, user): (&str, &str),
) -> Result<UserSettings> {
    let enabled: Option<bool> = client
        .query_opt(
            "SELECT memory_enabled FROM user_settings WHERE tenant = $1 AND user_id = $2",
            &[&tenant, &user],
        )?
        .map(|r| r.try_get(0))
        .transpose()?;
    Ok(enabled.map(|memory_enabled| UserSettings { memory_enabled }).unwrap_or_default())
}

impl PostgresBackend {
    /// Refuses a vector from another embedder than the stored ones: comparing vectors of two
    /// models would silently give meaningless similarities. The stored embedder is read once
    /// and remembered; a vector that disagrees with the remembered one is checked against the
    /// database again (its vectors may all have been deleted since).
    fn check_vector(&self, client: &mut impl GenericClient, embedded: &Embedded) -> Result<()> {
        let matches = |(model, dims): &(String, usize)| {
            *model == embedded.model && *dims == embedded.vector.len()
        };
        if lock(&self.embedder).as_ref().is_some_and(matches) {
            return Ok(());
        }
        let existing = client.query_opt("SELECT model, dims FROM memory_vectors LIMIT 1", &[])?;
        let Some(row) = existing else { return Ok(()) };
        let (model, dims): (String, i32) = (row.try_get(0)?, row.try_get(1)?);
        let stored = (model, usize::try_from(dims).unwrap_or(0));
        let ok = matches(&stored);
        *lock(&self.embedder) = Some(stored.clone());
        if ok {
            return Ok(());
        }
        Err(StoreError::VectorMismatch(format!(
            "embedder mismatch: this database holds {}-d vectors from `{}`, got {}-d vectors \
             from `{}`",
            stored.1,
            stored.0,
            embedded.vector.len(),
            embedded.model
        )))
    }
}

/// Writes a record's vector, refined (from the embedder's refining encoder) or not.
fn put_vector(
    tx: &mut Transaction<'_>,
    rowid: i64,
    embedded: &Embedded,
    refined: bool,
) -> Result<()> {
    let dims = i32::try_from(embedded.vector.len())
        .map_err(|_| StoreError::VectorMismatch("vector too long".into()))?;
    tx.execute(
        "INSERT INTO memory_vectors (memory_rowid, model, dims, vector, refined)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (memory_rowid)
         DO UPDATE SET model = excluded.model, dims = excluded.dims, vector = excluded.vector,
                       refined = excluded.refined",
        &[&rowid, &embedded.model, &dims, &Vector::from(embedded.vector.clone()), &refined],
    )?;
    Ok(())
}

/// The vector of one of the owner's records.
fn vector_of(
    client: &mut impl GenericClient,
    tenant: &str,
    user: Option<&str>,
    rowid: i64,
) -> Result<Option<Vec<f32>>> {
    Ok(client
        .query_opt(
            "SELECT v.vector FROM memory_vectors v JOIN memories m ON m.rowid = v.memory_rowid
              WHERE v.memory_rowid = $1 AND m.tenant = $2 AND ($3::text IS NULL OR m.user_id = $3)",
            &[&rowid, &tenant, &user],
        )?
        .map(|row| row.try_get::<_, Vector>(0))
        .transpose()?
        .map(|v| v.to_vec()))
}

/// The earlier versions of one of the owner's records, oldest first.
fn versions(
    client: &mut impl GenericClient,
    tenant: &str,
    user: Option<&str>,
    rowid: i64,
) -> Result<Vec<MemoryVersion>> {
    client
        .query(
            "SELECT s.snapshot FROM memory_versions s JOIN memories m ON m.rowid = s.memory_rowid
              WHERE s.memory_rowid = $1 AND m.tenant = $2
                AND ($3::text IS NULL OR m.user_id = $3)
              ORDER BY s.version",
            &[&rowid, &tenant, &user],
        )?
        .iter()
        .map(|row| serde_json::from_str(&row.try_get::<_, String>(0)?).map_err(StoreError::Json))
        .collect()
}

/// Inserts a full record row (as given, including status and timestamps), its links and its
/// vector with `statement` ([`INSERT_SQL`], prepared or not); returns the new rowid.
fn insert_with<S: postgres::ToStatement + ?Sized>(
    tx: &mut Transaction<'_>,
    statement: &S,
    memory: &Memory,
    vector: Option<&Embedded>,
) -> Result<i64> {
    for source in &memory.derived_from {
        tx.execute(
            "INSERT INTO memory_links (tenant, user_id, source_id, derived_id)
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            &[&memory.tenant, &memory.user_id, &source.0, &memory.id.0],
        )?;
    }
    let dims = vector
        .map(|v| i32::try_from(v.vector.len()))
        .transpose()
        .map_err(|_| StoreError::VectorMismatch("vector too long".into()))?;
    let values = record_values(memory).map_err(StoreError::Port)?;
    let model = vector.map(|v| v.model.as_str());
    let embedding = vector.map(|v| Vector::from(v.vector.clone()));
    let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = Vec::new();
    let bound: Vec<Bound<'_>> = values.iter().map(Bound).collect();
    params.extend(bound.iter().map(|b| b as &(dyn postgres::types::ToSql + Sync)));
    params.extend([
        &model as &(dyn postgres::types::ToSql + Sync),
        &dims as &(dyn postgres::types::ToSql + Sync),
        &embedding as &(dyn postgres::types::ToSql + Sync),
    ]);
    let inserted = tx.query_one(statement, &params);
    match inserted {
        Ok(row) => Ok(row.try_get(0)?),
        Err(e) if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) => {
            Err(StoreError::Conflict(format!(
                "memory {} conflicts with a stored record (same id, or a second active record \
                 for its subject and attribute)",
                memory.id
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// Deletes records of `who` and their versions, vectors (by cascade) and links, by rowid;
/// returns what went.
fn purge(tx: &mut Transaction<'_>, who: (&str, &str), rowids: &[i64]) -> Result<Removed> {
    let mut removed = Removed::default();
    if rowids.is_empty() {
        return Ok(removed);
    }
    // Versions and vectors go by cascade: count them first.
    let counts = tx.query_one(
        "SELECT (SELECT count(*) FROM memory_versions v JOIN memories m ON m.rowid = v.memory_rowid
                  WHERE m.tenant = $1 AND m.user_id = $2 AND m.rowid = ANY($3)),
                (SELECT count(*) FROM memory_vectors v JOIN memories m ON m.rowid = v.memory_rowid
                  WHERE m.tenant = $1 AND m.user_id = $2 AND m.rowid = ANY($3))",
        &[&who.0, &who.1, &rowids],
    )?;
    let count = |i: usize| counts.try_get::<_, i64>(i).map(|n| u64::try_from(n).unwrap_or(0));
    removed.versions = count(0)?;
    removed.vectors = count(1)?;
    removed.links = tx.execute(
        "DELETE FROM memory_links l USING memories m
          WHERE m.tenant = $1 AND m.user_id = $2 AND m.rowid = ANY($3)
            AND l.tenant = m.tenant AND l.user_id = m.user_id
            AND (l.source_id = m.id OR l.derived_id = m.id)",
        &[&who.0, &who.1, &rowids],
    )?;
    removed.records = tx.execute(
        "DELETE FROM memories WHERE tenant = $1 AND user_id = $2 AND rowid = ANY($3)",
        &[&who.0, &who.1, &rowids],
    )?;
    // Each record has one entry in the full-text index, removed with it.
    removed.index_entries = removed.records;
    Ok(removed)
}

/// The rowids and ids of a record and of every record it superseded, transitively; with
/// `derived`, also every record derived from any of them, with what those superseded: what
/// forgetting a record removes.
fn chain(
    tx: &mut Transaction<'_>,
    who: (&str, &str),
    rowid: i64,
    derived: bool,
) -> Result<Vec<(i64, MemoryId)>> {
    // One recursive term (PostgreSQL allows only one): each record's direct predecessors by
    // supersession and, with `derived`, the records derived from it.
    let sql = "WITH RECURSIVE chain(rowid, id) AS (
             SELECT rowid, id FROM memories WHERE tenant = $1 AND user_id = $2 AND rowid = $3
             UNION
             SELECT next.rowid, next.id FROM chain c CROSS JOIN LATERAL (
                 SELECT m.rowid, m.id FROM memories m
                  WHERE m.tenant = $1 AND m.user_id = $2 AND m.superseded_by = c.id
                 UNION ALL
                 SELECT m.rowid, m.id FROM memory_links l
                   JOIN memories m
                     ON m.tenant = l.tenant AND m.user_id = l.user_id AND m.id = l.derived_id
                  WHERE $4 AND l.tenant = $1 AND l.user_id = $2 AND l.source_id = c.id
             ) next
         )
         SELECT rowid, id FROM chain";
    tx.query(sql, &[&who.0, &who.1, &rowid, &derived])?
        .iter()
        .map(|r| Ok((r.try_get(0)?, MemoryId(r.try_get(1)?))))
        .collect()
}

/// Every stored record a write must be decided against, in one query: live records with the
/// same content hash, kind and scope (`$3`–`$6`); the active value of the same key (`$7`,
/// `$8`); and, for an episode of a known message (`$9`, `$10`), the active episodes of that
/// message with their vectors. The columns `same_content`, `same_key` and `same_message` say
/// which rule each row answers.
pub(crate) static NEIGHBOURS_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT {MEMORY_COLUMNS}, v.vector, same_content, same_key, same_message
    FROM memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid,
         LATERAL (SELECT
             m.content_hash = $3 AND m.kind = $4 AND m.scope = $5
                 AND m.status IN ('active', 'pending')
                 AND (m.expires_at IS NULL OR m.expires_at > $6) AS same_content,
             coalesce(m.scope = $5 AND m.subject = $7 AND m.attribute = $8
                 AND m.status = 'active', false) AS same_key,
             coalesce($9 AND m.kind = 'episodic' AND m.source_ref = $10
                 AND m.status = 'active', false) AS same_message) flags
   WHERE m.tenant = $1 AND m.user_id = $2
     AND ((m.content_hash = $3 AND m.kind = $4 AND m.scope = $5)
          OR (m.scope = $5 AND m.subject = $7 AND m.attribute = $8 AND m.status = 'active')
          OR ($9 AND m.source_ref = $10 AND m.kind = 'episodic' AND m.status = 'active'))
   ORDER BY m.rowid"
    )
});

/// Inserts a record row (the engine's description of its columns) and its vector in one
/// statement; returns the rowid.
pub(crate) static INSERT_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let count = RECORD_COLUMNS.len();
    let marks: Vec<String> = (1..=count).map(|n| format!("${n}")).collect();
    let (model, dims, vector) = (count + 1, count + 2, count + 3);
    format!(
        "WITH m AS (
             INSERT INTO memories ({}) VALUES ({}) RETURNING rowid),
         v AS (
             INSERT INTO memory_vectors (memory_rowid, model, dims, vector)
             SELECT rowid, ${model}::text, ${dims}::integer, ${vector}::vector FROM m
              WHERE ${vector}::vector IS NOT NULL)
         SELECT rowid FROM m",
        RECORD_COLUMNS.join(", "),
        marks.join(", ")
    )
});

impl Backend for PostgresBackend {
    fn capabilities(&self) -> StoreCaps {
        // Deleted rows stay in heap pages as dead tuples until VACUUM reclaims them and in
        // the write-ahead log until its segments are recycled (docs/OPERATIONS.md).
        StoreCaps { full_text: true, vectors: true, secure_delete: false }
    }

    fn ledger_key(&self) -> &LedgerKey {
        &self.ledger
    }

    fn remains(&self, _at: Timestamp) -> Vec<Remnant> {
        ledger::store_remains()
    }

    fn transaction<T>(
        &self,
        owner: Owner<'_>,
        commit: Commit,
        body: &mut dyn FnMut(&mut dyn Tx) -> Result<T, PortError>,
    ) -> Result<T, PortError> {
        let mut pooled = self.conn()?;
        let Conn { client, statements } = &mut *pooled;
        let mut tx = client.transaction().map_err(StoreError::from)?;
        let (tenant, user) = (owner.tenant(), owner.user());
        let write = match (owner, commit) {
            // A lost last-used time is harmless: no lock, no epoch, no wait for the flush.
            (_, Commit::Light) => {
                tx.execute("SET LOCAL synchronous_commit = off", &[]).map_err(StoreError::from)?;
                None
            }
            (Owner::User(who), _) => {
                let who = (who.tenant(), who.user_id());
                let before = Self::begin_write(&mut tx, statements, who)?;
                Some((before, self.slot(who)))
            }
            // A tenant-wide job locks each user it touches (`Tx::expired`).
            (Owner::Tenant { .. }, _) => None,
        };
        let mut pg = PgTx {
            tx: &mut tx,
            statements,
            store: self,
            tenant,
            user,
            write: write.clone(),
            following: None,
            locked: Default::default(),
        };
        let value = body(&mut pg);
        // Dropped (and the index with it) unless the commit succeeds.
        let following = pg.following.take();
        drop(pg);
        let value = value?;
        tx.commit().map_err(StoreError::from)?;
        if let (Some(slot), Some((before, _))) = (following.and_then(SlotGuard::disarm), write)
            && let Some(current) = write_slot(&slot).as_mut()
            && current.epoch <= before
        {
            // The index followed every row written, so it is the state at this epoch.
            current.epoch = before + 1;
        }
        Ok(value)
    }

    fn read<T>(
        &self,
        who: &UserRef,
        body: &mut dyn FnMut(&mut dyn Tx) -> Result<T, PortError>,
    ) -> Result<T, PortError> {
        let mut pooled = self.conn()?;
        let Conn { client, statements } = &mut *pooled;
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(StoreError::from)?;
        let mut pg = PgTx {
            tx: &mut tx,
            statements,
            store: self,
            tenant: who.tenant(),
            user: Some(who.user_id()),
            write: None,
            following: None,
            locked: Default::default(),
        };
        body(&mut pg)
    }

    fn rank(
        &self,
        who: &UserRef,
        query: &SearchQuery<'_>,
        now: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Result<Vec<Ranked>, PortError> {
        let mut pooled = self.conn()?;
        let Conn { client, statements } = &mut *pooled;
        if let Some(vector) = query.vector {
            self.check_vector(client, vector)?;
        }
        let scope = query.filter.scope.as_ref().map(ToString::to_string);
        let filter = mnemo_engine::scan_filter(query, now, scope.as_deref());
        // The epoch is read before the rows, so an index loaded now is never labelled newer
        // than its contents.
        let epoch = read_epoch(client, statements, (who.tenant(), who.user_id()))?;
        let slot = self.slot((who.tenant(), who.user_id()));
        let vector = query.vector.map(|v| v.vector.as_slice());
        // A current index is read beside other searches (and beside a write's transaction);
        // one that lags is brought up to date alone.
        let current = read_slot(&slot).and_then(|cached| {
            let cached = cached.as_ref().filter(|c| c.epoch >= epoch)?;
            Some(cached.index.search(
                query.words(),
                vector,
                query.common,
                filter,
                query.notebooks,
                select,
            ))
        });
        Ok(match current {
            Some(hits) => hits,
            None => {
                let mut cached = write_slot(&slot);
                let index = index_at(
                    client,
                    statements,
                    (who.tenant(), who.user_id()),
                    epoch,
                    &mut cached,
                )?;
                index.search(query.words(), vector, query.common, filter, query.notebooks, select)
            }
        })
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
        let mut pooled = self.conn()?;
        let Conn { client, statements } = &mut *pooled;
        let wanted: Vec<i64> = ranked.iter().map(|hit| hit.row).collect();
        let by_rowid = statements.get(client, &BY_ROWID_SQL).map_err(StoreError::from)?;
        let memories: HashMap<i64, Memory> = client
            .query(&by_rowid, &[&who.tenant(), &who.user_id(), &wanted, &now.as_millis()])
            .map_err(StoreError::from)?
            .iter()
            .map(memory_from_row)
            .collect::<Result<_>>()?;
        Ok(mnemo_engine::found_in_order(ranked, memories))
    }

    fn audit_entries(&self, who: &UserRef, limit: usize) -> Result<Vec<AuditEntry>, PortError> {
        let mut conn = self.conn()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = conn
            .client
            .query(
                "SELECT at, action, memory_id, reason, actor, run_id FROM audit_log
                  WHERE tenant = $1 AND user_id = $2 ORDER BY seq DESC LIMIT $3",
                &[&who.tenant(), &who.user_id(), &limit],
            )
            .map_err(StoreError::from)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let column = |e: postgres::Error| PortError::internal("bad audit row", e);
            let action: String = row.try_get(1).map_err(column)?;
            let reason: Option<String> = row.try_get(3).map_err(column)?;
            let action = serde_json::from_value(serde_json::Value::String(action))
                .map_err(|e| PortError::internal("bad audit action", e))?;
            let reason = reason
                .map(|r| serde_json::from_value(serde_json::Value::String(r)))
                .transpose()
                .map_err(|e| PortError::internal("bad audit reason", e))?;
            out.push(AuditEntry {
                at: Timestamp::from_millis(row.try_get(0).map_err(column)?),
                action,
                memory_id: row.try_get::<_, Option<String>>(2).map_err(column)?.map(MemoryId),
                reason,
                actor: row.try_get(4).map_err(column)?,
                run_id: row.try_get(5).map_err(column)?,
            });
        }
        Ok(out)
    }

    fn receipts(&self, who: &UserRef, limit: usize) -> Result<Vec<DeletionReceipt>, PortError> {
        Ok(ledger::receipts(&mut self.conn()?.client, (who.tenant(), who.user_id()), limit)?)
    }

    fn runs(&self, who: &UserRef) -> Result<Vec<Run>, PortError> {
        let mut conn = self.conn()?;
        let rows = conn
            .client
            .query(
                "SELECT state FROM runs WHERE tenant = $1 AND user_id = $2 ORDER BY started_at, id",
                &[&who.tenant(), &who.user_id()],
            )
            .map_err(StoreError::from)?;
        Ok(rows
            .iter()
            .map(|r| serde_json::from_str(r.try_get::<_, &str>(0)?).map_err(StoreError::Json))
            .collect::<Result<_>>()?)
    }

    fn count_by_status(&self) -> Result<Vec<(Status, u64)>, PortError> {
        let mut conn = self.conn()?;
        let rows = conn
            .client
            .query("SELECT status, count(*) FROM memories GROUP BY status ORDER BY status", &[])
            .map_err(StoreError::from)?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let status: String = row.try_get(0).ok()?;
                let n: i64 = row.try_get(1).ok()?;
                status.parse().ok().map(|s| (s, u64::try_from(n).unwrap_or(0)))
            })
            .collect())
    }

    fn unrefined_owners(&self, limit: usize) -> Result<Vec<(String, String)>, PortError> {
        let mut conn = self.conn()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = conn
            .client
            .query(
                "SELECT DISTINCT m.tenant, m.user_id FROM memory_vectors v
                   JOIN memories m ON m.rowid = v.memory_rowid
                  WHERE NOT v.refined LIMIT $1",
                &[&limit],
            )
            .map_err(StoreError::from)?;
        let mut owners = Vec::with_capacity(rows.len());
        for row in &rows {
            owners.push((
                row.try_get(0).map_err(StoreError::from)?,
                row.try_get(1).map_err(StoreError::from)?,
            ));
        }
        Ok(owners)
    }
}

impl KeyStore for PostgresBackend {
    fn create_key(&self, key: &ApiKey) -> Result<(), PortError> {
        let mut conn = self.conn()?;
        conn.client.execute(
            "INSERT INTO api_keys (id, tenant, user_id, admin, key_hash, created_at, revoked_at, rate)
             VALUES ($1, $2, $3, $4, $5, $6, NULL, $7)",
            &[
                &key.id,
                &key.tenant,
                &key.user_id,
                &key.admin,
                &key.key_hash,
                &key.created_at.as_millis(),
                &key.rate,
            ],
        )
        .map_err(StoreError::from)?;
        Ok(())
    }

    fn find_key(&self, key_hash: &str) -> Result<Option<ApiKey>, PortError> {
        // Every authenticated request asks this: prepared once per connection.
        let mut pooled = self.conn()?;
        let Conn { client, statements } = &mut *pooled;
        let statement = statements.get(client, &FIND_KEY_SQL).map_err(StoreError::from)?;
        let row = client.query_opt(&statement, &[&key_hash]).map_err(StoreError::from)?;
        Ok(row.as_ref().map(key_from_row).transpose().map_err(StoreError::from)?)
    }

    fn list_keys(&self, tenant: &str) -> Result<Vec<ApiKey>, PortError> {
        let mut conn = self.conn()?;
        let rows = conn
            .client
            .query(
                &format!("{KEY_COLUMNS} WHERE tenant = $1 ORDER BY created_at DESC, id"),
                &[&tenant],
            )
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(key_from_row).collect::<Result<_, _>>().map_err(StoreError::from)?)
    }

    fn has_live_keys(&self) -> Result<bool, PortError> {
        let mut conn = self.conn()?;
        let row = conn
            .client
            .query_one("SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)", &[])
            .map_err(StoreError::from)?;
        Ok(row.try_get(0).map_err(StoreError::from)?)
    }

    fn revoke_key(&self, tenant: &str, id: &str, now: Timestamp) -> Result<bool, PortError> {
        let mut conn = self.conn()?;
        let changed = conn
            .client
            .execute(
                "UPDATE api_keys SET revoked_at = $1
                  WHERE tenant = $2 AND id = $3 AND revoked_at IS NULL",
                &[&now.as_millis(), &tenant, &id],
            )
            .map_err(StoreError::from)?;
        Ok(changed > 0)
    }

    fn create_sign_in(&self, link: &SignInLink) -> Result<(), PortError> {
        let mut conn = self.conn()?;
        conn.client
            .execute(
                "INSERT INTO sign_in_links (hash, tenant, user_id, created_at, expires_at)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &link.hash,
                    &link.who.tenant(),
                    &link.who.user_id(),
                    &link.created_at.as_millis(),
                    &link.expires_at.as_millis(),
                ],
            )
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn redeem_sign_in(&self, hash: &str, now: Timestamp) -> Result<Option<UserRef>, PortError> {
        let mut conn = self.conn()?;
        let row = conn
            .client
            .query_opt(
                "UPDATE sign_in_links SET used_at = $2
                  WHERE hash = $1 AND used_at IS NULL AND expires_at > $2
                 RETURNING tenant, user_id",
                &[&hash, &now.as_millis()],
            )
            .map_err(StoreError::from)?;
        let Some(row) = row else { return Ok(None) };
        let (tenant, user): (String, String) =
            (row.try_get(0).map_err(StoreError::from)?, row.try_get(1).map_err(StoreError::from)?);
        Ok(UserRef::new(&tenant, &user).ok())
    }
}

/// The unrevoked key with a hash.
static FIND_KEY_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("{KEY_COLUMNS} WHERE key_hash = $1 AND revoked_at IS NULL")
});

const KEY_COLUMNS: &str =
    "SELECT id, tenant, user_id, admin, key_hash, created_at, revoked_at, rate FROM api_keys";

fn key_from_row(row: &postgres::Row) -> Result<ApiKey, postgres::Error> {
    Ok(ApiKey {
        id: row.try_get(0)?,
        tenant: row.try_get(1)?,
        user_id: row.try_get(2)?,
        admin: row.try_get(3)?,
        key_hash: row.try_get(4)?,
        created_at: Timestamp::from_millis(row.try_get(5)?),
        revoked_at: row.try_get::<_, Option<i64>>(6)?.map(Timestamp::from_millis),
        rate: row.try_get(7)?,
    })
}

/// The user's run with this id, if any.
fn read_run(
    client: &mut impl GenericClient,
    (tenant, user): (&str, &str),
    id: &str,
) -> Result<Option<Run>> {
    let row = client.query_opt(
        "SELECT state FROM runs WHERE tenant = $1 AND user_id = $2 AND id = $3",
        &[&tenant, &user, &id],
    )?;
    row.map(|r| serde_json::from_str(r.try_get::<_, &str>(0)?).map_err(StoreError::Json))
        .transpose()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The lines of the plan PostgreSQL would use for a search's read-back, as a prepared
    /// statement planned once for any values (a generic plan), for `user`'s rows `wanted`.
    fn read_back_plan(client: &mut postgres::Client, user: &str, wanted: &str) -> String {
        let sql = format!(
            "SET plan_cache_mode = force_generic_plan;
             PREPARE read_back (text, text, bigint[], bigint) AS {};
             EXPLAIN EXECUTE read_back ('t', '{user}', '{wanted}', 0);
             DEALLOCATE read_back;
             RESET plan_cache_mode;",
            *BY_ROWID_SQL
        );
        let mut lines = Vec::new();
        for message in client.simple_query(&sql).unwrap() {
            if let postgres::SimpleQueryMessage::Row(row) = message {
                lines.push(row.try_get(0).unwrap().unwrap_or_default().to_owned());
            }
        }
        lines.join("\n")
    }

    /// A table just filled has no statistics yet: the read-back still finds its rows by
    /// key rather than walking all of the owner's rows, and finds only the owner's.
    #[test]
    #[ignore = "needs PostgreSQL at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
    fn a_read_back_finds_its_rows_by_key_before_statistics_exist() {
        let base = std::env::var("MNEMO_TEST_POSTGRES_URL")
            .expect("MNEMO_TEST_POSTGRES_URL names a PostgreSQL server");
        let scratch = mnemo_testkit::pg::Scratch::create(&base).unwrap();
        let backend = PostgresBackend::open(&scratch.url(), Timestamp::from_millis(0)).unwrap();
        let mut pooled = backend.conn().unwrap();
        let client = &mut pooled.client;
        client
            .batch_execute(
                "INSERT INTO memories (id, tenant, user_id, scope, kind, content, content_hash,
                     importance, confidence, sensitivity, source_type, source_captured_at,
                     status, created_at, updated_at, valid_from, version)
                 SELECT 'm' || g, 't', 'u' || (g % 4), 'user', 'episodic', 'note ' || g, g,
                     0.5, 1.0, 'normal', 'user_stated', 0, 'active', 0, 0, 0, 1
                   FROM generate_series(1, 20000) AS g",
            )
            .unwrap();
        let rowids: Vec<(i64, String)> = client
            .query("SELECT rowid, user_id FROM memories WHERE rowid <= 8 ORDER BY rowid", &[])
            .unwrap()
            .iter()
            .map(|row| (row.try_get(0).unwrap(), row.try_get(1).unwrap()))
            .collect();
        let wanted: Vec<i64> = rowids.iter().map(|(rowid, _)| *rowid).collect();
        let listed =
            format!("{{{}}}", wanted.iter().map(ToString::to_string).collect::<Vec<_>>().join(","));
        let plan = read_back_plan(client, "u1", &listed);
        assert!(plan.contains("memories_pkey"), "the rows are not found by key:\n{plan}");
        assert!(!plan.contains("memories_owner"), "the owner's rows are walked:\n{plan}");
        // Of eight rows of four owners, the two of `u1`.
        let found: Vec<i64> = client
            .query(&*BY_ROWID_SQL, &[&"t", &"u1", &wanted, &0_i64])
            .unwrap()
            .iter()
            .map(|row| memory_from_row(row).unwrap().0)
            .collect();
        let mine: Vec<i64> =
            rowids.iter().filter(|(_, user)| user == "u1").map(|(rowid, _)| *rowid).collect();
        assert_eq!(found.len(), 2);
        assert_eq!(
            found.iter().copied().collect::<std::collections::BTreeSet<_>>(),
            mine.into_iter().collect()
        );
    }
}
