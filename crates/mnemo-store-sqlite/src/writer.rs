//! The store's one writer connection, with group commit.
//!
//! Concurrent writes share a transaction and its fsync. The first write to find no batch
//! open leads one: it begins an immediate transaction, runs its own change inside a
//! savepoint, then lets the writes that arrived meanwhile run theirs (each in its own
//! savepoint, on its own thread, in arrival order) before it commits once for all. A write
//! whose change fails is rolled back to its savepoint and fails alone; the others are
//! acknowledged only once the shared commit succeeded, and all of them fail if it did not.
//!
//! Work that must not share a transaction (deletions, which scrub the write-ahead log after
//! committing) takes the connection exclusively, once no batch is open.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use rusqlite::Connection;

use crate::StoreError;
use crate::vector_index::{Change, IndexCache, Touched};

/// The most writes one commit carries.
const MAX_BATCH: usize = 128;

/// How long a leader keeps its batch open for writes that keep arriving, at most.
const BATCH_WINDOW: Duration = Duration::from_millis(10);

/// How long a waiting thread sleeps at most before it looks again.
const POLL: Duration = Duration::from_millis(1);

/// Why a shared commit failed, as each write of its batch reports it.
#[derive(Debug, Clone)]
struct CommitFailure {
    code: Option<rusqlite::ffi::Error>,
    message: String,
}

impl CommitFailure {
    fn of(error: &StoreError) -> Self {
        match error {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(code, message)) => Self {
                code: Some(*code),
                message: message.clone().unwrap_or_else(|| code.to_string()),
            },
            other => Self { code: None, message: other.to_string() },
        }
    }

    fn to_error(&self) -> StoreError {
        match self.code {
            Some(code) => {
                StoreError::Sqlite(rusqlite::Error::SqliteFailure(code, Some(self.message.clone())))
            }
            None => StoreError::Conflict(format!("the shared commit failed: {}", self.message)),
        }
    }
}

/// A transaction open for a batch of writes.
#[derive(Debug, Default)]
struct Batch {
    /// Writes that ran in it so far.
    jobs: usize,
    /// What they changed, for the index to follow after the commit.
    changes: Vec<Change>,
    /// Set once the batch committed or failed; every member waits for it.
    outcome: Arc<OnceLock<Result<(), CommitFailure>>>,
    /// A savepoint could not be released or rolled back: the whole batch is rolled back.
    broken: Option<CommitFailure>,
}

/// The writer connection and the batch open on it, if any.
#[derive(Debug)]
pub(crate) struct WriterState {
    pub(crate) conn: Connection,
    batch: Option<Batch>,
}

/// The writer connection, shared by the store's threads.
#[derive(Debug)]
pub(crate) struct Writer {
    state: Mutex<WriterState>,
    /// Signalled when a write of a batch finished its turn and when a batch ended.
    turn: Condvar,
    /// Writes that are waiting for the lock to join or lead a batch.
    arriving: AtomicUsize,
    /// Threads waiting for the connection with no batch open; no new batch opens meanwhile.
    exclusive_waiting: AtomicUsize,
    /// Batches committed so far.
    commits: AtomicU64,
}

impl Writer {
    pub(crate) fn new(conn: Connection) -> Self {
        Self {
            state: Mutex::new(WriterState { conn, batch: None }),
            turn: Condvar::new(),
            arriving: AtomicUsize::new(0),
            exclusive_waiting: AtomicUsize::new(0),
            commits: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, WriterState> {
        // A poisoned lock only means another thread panicked mid-call; SQLite rolled back
        // or keeps the open transaction consistent, and the batch logic never leaves it half
        // updated across a panic of user code (a body's panic unwinds through its caller).
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The connection with no batch open: waits for an open one to commit.
    pub(crate) fn exclusive(&self) -> MutexGuard<'_, WriterState> {
        self.exclusive_waiting.fetch_add(1, Ordering::SeqCst);
        let state = self.lock();
        let state = self
            .turn
            .wait_while(state, |state| state.batch.is_some())
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.exclusive_waiting.fetch_sub(1, Ordering::SeqCst);
        state
    }

    /// How many batches have committed.
    #[cfg(test)]
    pub(crate) fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// The connection in whatever state it is, for reading pragmas or loading an index
    /// (an open batch's uncommitted rows included).
    pub(crate) fn any(&self) -> MutexGuard<'_, WriterState> {
        self.lock()
    }

    /// Runs `body` as one write of a group commit and returns its value once the shared
    /// transaction committed. `tenant` and `user` name whose index rows `body` touches (no
    /// user: a tenant-wide change).
    pub(crate) fn join<T>(
        &self,
        index: &IndexCache,
        tenant: &str,
        user: Option<&str>,
        body: impl FnOnce(&Connection) -> Result<(T, Touched), StoreError>,
    ) -> Result<T, StoreError> {
        self.arriving.fetch_add(1, Ordering::SeqCst);
        let mut state = self.lock();
        self.arriving.fetch_sub(1, Ordering::SeqCst);
        // A thread waiting for the connection alone goes before a new batch.
        while state.batch.is_none() && self.exclusive_waiting.load(Ordering::SeqCst) > 0 {
            state = self
                .turn
                .wait_timeout(state, POLL)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        let leads = state.batch.is_none();
        if leads {
            state.conn.execute_batch("BEGIN IMMEDIATE")?;
            state.batch = Some(Batch::default());
        }
        let ran = run_in_savepoint(&mut state, index, tenant, user, body);
        if !leads {
            // The leader may be waiting for this write's turn to end.
            self.turn.notify_all();
            let value = ran?;
            let outcome = state.batch.as_ref().map(|batch| batch.outcome.clone());
            let Some(outcome) = outcome else {
                return Err(StoreError::Conflict("a write lost its batch".into()));
            };
            drop(
                self.turn
                    .wait_while(state, |_| outcome.get().is_none())
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            );
            return match outcome.get() {
                Some(Ok(())) => Ok(value),
                Some(Err(failure)) => Err(failure.to_error()),
                None => Err(StoreError::Conflict("a batch ended without an outcome".into())),
            };
        }
        // Let the writes that arrived while this one ran take their turns.
        let closes = std::time::Instant::now() + BATCH_WINDOW;
        while self.arriving.load(Ordering::SeqCst) > 0
            && state.batch.as_ref().is_some_and(|batch| batch.jobs < MAX_BATCH)
            && std::time::Instant::now() < closes
        {
            state = self
                .turn
                .wait_timeout(state, POLL)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        let committed = self.commit(&mut state, index);
        self.turn.notify_all();
        match (committed, ran) {
            (Ok(()), ran) => ran,
            // This write's own error says most about why it failed.
            (Err(_), Err(error)) => Err(error),
            (Err(failure), Ok(_)) => Err(failure.to_error()),
        }
    }

    /// Commits the open batch (or rolls it back if it broke), lets the index follow, and
    /// publishes the outcome to the batch's writes.
    fn commit(&self, state: &mut WriterState, index: &IndexCache) -> Result<(), CommitFailure> {
        let Some(batch) = state.batch.take() else { return Ok(()) };
        let committed = match &batch.broken {
            Some(failure) => Err(failure.clone()),
            None => state.conn.execute_batch("COMMIT").map_err(|e| CommitFailure::of(&e.into())),
        };
        match &committed {
            Ok(()) => {
                self.commits.fetch_add(1, Ordering::Relaxed);
                index.follow_commit(&state.conn, &batch.changes);
            }
            Err(_) => {
                if !state.conn.is_autocommit() {
                    let _ = state.conn.execute_batch("ROLLBACK");
                }
                // Rows of the rolled-back writes were followed before the commit.
                index.clear();
            }
        }
        let _ = batch.outcome.set(committed.clone());
        committed
    }
}

/// Runs one write of the open batch inside its own savepoint; a failing write is rolled
/// back to it, so it leaves nothing behind.
fn run_in_savepoint<T>(
    state: &mut WriterState,
    index: &IndexCache,
    tenant: &str,
    user: Option<&str>,
    body: impl FnOnce(&Connection) -> Result<(T, Touched), StoreError>,
) -> Result<T, StoreError> {
    let WriterState { conn, batch } = state;
    let Some(batch) = batch.as_mut() else {
        return Err(StoreError::Conflict("a write ran outside a batch".into()));
    };
    if let Some(failure) = &batch.broken {
        return Err(failure.to_error());
    }
    batch.jobs += 1;
    if let Err(error) = conn.execute_batch("SAVEPOINT write") {
        let error = StoreError::from(error);
        batch.broken.get_or_insert_with(|| CommitFailure::of(&error));
        return Err(error);
    }
    match body(conn) {
        Ok((value, touched)) => {
            if let Err(error) = conn.execute_batch("RELEASE write") {
                let error = StoreError::from(error);
                batch.broken.get_or_insert_with(|| CommitFailure::of(&error));
                return Err(error);
            }
            // Later writes of the batch must see these rows as neighbours.
            if index.follow_uncommitted(conn, tenant, user, &touched).is_err() {
                index.drop_user(tenant, user);
            }
            let change = Change {
                tenant: tenant.to_owned(),
                user: user.map(str::to_owned),
                touched,
                followed: true,
            };
            batch.changes.push(change);
            Ok(value)
        }
        Err(error) => {
            if conn.is_autocommit() {
                // SQLite rolled the whole transaction back (as it may on a full disk): the
                // batch's earlier writes are gone too, and fail with this write's error.
                batch.broken.get_or_insert_with(|| CommitFailure::of(&error));
            } else if let Err(undo) = conn.execute_batch("ROLLBACK TO write; RELEASE write") {
                batch.broken.get_or_insert_with(|| CommitFailure::of(&undo.into()));
            }
            // The body may have followed rows that no longer exist.
            index.drop_user(tenant, user);
            Err(error)
        }
    }
}
