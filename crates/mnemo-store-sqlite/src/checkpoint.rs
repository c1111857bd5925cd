//! Checkpoints of the write-ahead log on a thread of their own, off the writer.
//!
//! SQLite's automatic checkpoint runs inside the commit that grows the log past its limit:
//! that commit copies the log's pages into the file and syncs it before it returns, and every
//! write waiting on the writer waits with it. Here the writer's commit only reports the log's
//! size; past [`CHECKPOINT_PAGES`] a checkpointing thread (started the first time one is
//! needed, with a connection of its own opened beside the writer's) runs a passive
//! checkpoint, which blocks neither the writer nor readers, and again after each further
//! [`CHECKPOINT_STEP`] pages. Should the log still reach [`WRITER_CHECKPOINT_PAGES`] (the
//! thread is behind, or could not start), a committing writer that finds no checkpoint
//! running checkpoints itself, as SQLite would have, so the log stays bounded. Durability is
//! unchanged: a commit is synced to the log before it is acknowledged, whoever copies it into
//! the file later.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use rusqlite::Connection;

/// Log pages after which the checkpointing thread copies the log into the file (SQLite's
/// own default for its automatic checkpoint).
const CHECKPOINT_PAGES: i32 = 1000;

/// New log pages that make another checkpoint worth running while the log holds more than
/// [`CHECKPOINT_PAGES`] (busy readers, or writes that never pause while the thread trails
/// them, can keep it from starting over): SQLite's automatic
/// checkpoint would run, and sync the file, after every commit.
const CHECKPOINT_STEP: i32 = CHECKPOINT_PAGES / 4;

/// Log pages after which a committing writer checkpoints itself.
const WRITER_CHECKPOINT_PAGES: i32 = 8 * CHECKPOINT_PAGES;

/// The checkpointing thread of one store and what it shares with the writer's commits.
pub(crate) struct Checkpointer {
    shared: Arc<Shared>,
    /// The thread's connection, until the thread starts and takes it.
    conn: Arc<Mutex<Option<Connection>>>,
    thread: Arc<Mutex<Option<JoinHandle<()>>>>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// Held while any checkpoint of this process runs: SQLite refuses a second checkpoint
    /// at once (without waiting), so the deletion's scrub takes this first.
    running: Mutex<()>,
}

#[derive(Default)]
struct State {
    /// Pages in the log after the last commit.
    pages: i32,
    /// Pages in the log when the last checkpoint began.
    taken: i32,
    stop: bool,
}

impl State {
    /// Pages written to the log since the last checkpoint began (all of them once the log
    /// started over).
    fn new_pages(&self) -> i32 {
        if self.pages < self.taken { self.pages } else { self.pages - self.taken }
    }

    /// Whether the checkpointing thread should run.
    fn due(&self) -> bool {
        self.pages >= CHECKPOINT_PAGES && self.new_pages() >= CHECKPOINT_STEP
    }
}

impl Checkpointer {
    /// A checkpointer whose thread checkpoints through `conn` (a connection of its own to
    /// the file), started when the log first passes [`CHECKPOINT_PAGES`]. Without one, the
    /// writer's own checkpoint keeps the log bounded.
    pub(crate) fn new(conn: Option<Connection>) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
                running: Mutex::new(()),
            }),
            conn: Arc::new(Mutex::new(conn)),
            thread: Arc::new(Mutex::new(None)),
        }
    }

    /// Hands the writer's checkpoints to this checkpointer: from now on, each commit on
    /// `writer` reports the log's size here instead of checkpointing past SQLite's limit.
    pub(crate) fn attach(&self, writer: &mut Connection) -> crate::Result<()> {
        let (shared, conn) = (Arc::clone(&self.shared), Arc::clone(&self.conn));
        let thread = Arc::clone(&self.thread);
        writer.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
            if pages >= WRITER_CHECKPOINT_PAGES
                && let Ok(_running) = shared.running.try_lock()
            {
                // Behind: checkpoint here, as SQLite's automatic checkpoint would have (on
                // every commit past its limit). A failure leaves the log as it was; the
                // commit itself stands.
                let mut state = shared.lock();
                (state.pages, state.taken) = (pages, pages);
                drop(state);
                let _ = wal.checkpoint();
                return Ok(());
            }
            let mut state = shared.lock();
            state.pages = pages;
            if state.due() {
                drop(state);
                start(&shared, &conn, &thread);
                shared.wake.notify_one();
            }
            Ok(())
        }))?;
        Ok(())
    }

    /// Waits for a running checkpoint to end and keeps new ones from starting while the
    /// guard lives (a deletion's scrub needs the only checkpoint of the moment).
    pub(crate) fn pause(&self) -> MutexGuard<'_, ()> {
        self.shared.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        let thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Starts the checkpointing thread unless it was started (or cannot be) before.
fn start(
    shared: &Arc<Shared>,
    conn: &Mutex<Option<Connection>>,
    thread: &Mutex<Option<JoinHandle<()>>>,
) {
    let mut thread = thread.lock().unwrap_or_else(PoisonError::into_inner);
    if thread.is_some() {
        return;
    }
    let Some(conn) = conn.lock().unwrap_or_else(PoisonError::into_inner).take() else { return };
    let shared = Arc::clone(shared);
    // A thread the system refuses is not asked for again (its connection went with it).
    *thread = std::thread::Builder::new()
        .name("mnemo-checkpoint".to_owned())
        .spawn(move || checkpoint_loop(&shared, &conn))
        .ok();
}

/// The thread's work: a passive checkpoint each time one is due, until the store closes.
fn checkpoint_loop(shared: &Shared, conn: &Connection) {
    loop {
        let mut state = shared.lock();
        while !state.due() && !state.stop {
            state = shared.wake.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        if state.stop {
            return;
        }
        drop(state);
        let _running = shared.running.lock().unwrap_or_else(PoisonError::into_inner);
        // Taken now: pages a commit adds after this point may not be copied by this
        // checkpoint, and count towards the next.
        let mut state = shared.lock();
        state.taken = state.pages;
        drop(state);
        // Passive: copies what no reader still needs and never waits. What it leaves is
        // taken at a later one; a failure is retried the same way.
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames the log file of the database at `path` has room for (a 32-byte header, then
    /// frames of a 24-byte header and a 4 KiB page).
    fn log_pages(path: &std::path::Path) -> u64 {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::metadata(std::path::PathBuf::from(wal))
            .map_or(0, |m| m.len().saturating_sub(32) / (4096 + 24))
    }

    #[test]
    fn the_thread_copies_the_log_into_the_file_and_the_writer_never_does() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("c.db");
        let mut writer = Connection::open(&path).expect("open");
        let checkpointer = Checkpointer::new(Some(Connection::open(&path).expect("open")));
        writer.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).expect("wal");
        writer.execute_batch("CREATE TABLE t (x BLOB)").expect("table");
        checkpointer.attach(&mut writer).expect("attach");
        // Each commit adds a page or two; with the checkpoints paused, none happens, and
        // the log grows past SQLite's own limit (the writer does not checkpoint below its).
        let paused = checkpointer.pause();
        for _ in 0..1500 {
            writer.execute("INSERT INTO t VALUES (zeroblob(3000))", []).expect("insert");
        }
        let grown = checkpointer.shared.lock().pages;
        assert!(grown >= 1500, "{grown} pages");
        assert!(log_pages(&path) >= 1500);
        assert_eq!(checkpointer.shared.lock().taken, 0);
        drop(paused);
        // Released, the thread checkpoints: the log's pages are taken and the next commits
        // write from the log's start again, so it stops growing.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while checkpointer.shared.lock().taken != grown {
            assert!(std::time::Instant::now() < deadline, "no checkpoint ran");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let _running = checkpointer.pause();
        let before = log_pages(&path);
        for _ in 0..100 {
            writer.execute("INSERT INTO t VALUES (zeroblob(3000))", []).expect("insert");
        }
        assert_eq!(log_pages(&path), before, "the log was reused from its start");
        let rows: i64 = writer.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).expect("n");
        assert_eq!(rows, 1600);
    }

    #[test]
    fn a_writer_far_behind_checkpoints_itself() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("c.db");
        // No thread's connection: only the writer checkpoints.
        let checkpointer = Checkpointer::new(None);
        let mut writer = Connection::open(&path).expect("open");
        writer.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).expect("wal");
        writer.execute_batch("PRAGMA synchronous = OFF; CREATE TABLE t (x BLOB)").expect("table");
        checkpointer.attach(&mut writer).expect("attach");
        let limit = u64::try_from(WRITER_CHECKPOINT_PAGES).unwrap_or(u64::MAX);
        for _ in 0..limit {
            writer.execute("INSERT INTO t VALUES (zeroblob(3000))", []).expect("insert");
        }
        // The log file never shrinks: its size is the most the log held. SQLite's own
        // checkpoint would have kept it near 1,000 pages; the writer's keeps it near its
        // limit, reused from its start after each of its checkpoints.
        let most = log_pages(&path);
        assert!(most >= limit - 10 && most <= limit + 10, "{most} pages");
    }
}
