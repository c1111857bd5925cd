//! Refining stored records' vectors off the write path.
//!
//! An embedder may have a refining encoder ([`Embedder::refine`]): stronger than the one the
//! write path uses, too slow for thousands of writes a second, and in the same space. A
//! record is written with the write path's vector and acknowledged; refinement reads the
//! notebook's unrefined records, embeds them again and replaces their vectors, each only while
//! the record still holds the content its vector was made from. Nothing else changes: the
//! record, its history and audit trail stay as written, and a search uses whichever vector a
//! record has.
//!
//! [`Refiner`] does this on a thread of its own for the notebooks a process writes to or
//! searches, so a server's notebooks are refined shortly after each write, and, whenever it
//! has been idle for a while, for every notebook the store holds unrefined records of (what
//! other processes wrote: the CLI beside a server, another node);
//! [`refine_notebook`] does it on the caller's thread.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use mnemo_core::ports::{Embedded, Embedder, PortError, Refined, Store};
use mnemo_core::{ErrorKind, UserRef};

/// How many records one refinement step embeds on one thread and writes in one
/// transaction.
const REFINE_BATCH: usize = 32;

/// How long the background refiner waits with nothing to do before it asks the store which
/// notebooks hold unrefined records (a query on the partial index of unrefined vectors).
pub(crate) const RESCAN_WHEN_IDLE: Duration = Duration::from_secs(30);

/// Refines up to `max` of the notebook's unrefined records, `REFINE_BATCH` per thread at a
/// time on up to `threads` threads (this one among them), each step in its own
/// transaction; returns how many vectors were replaced (0 when the embedder has no refining
/// encoder).
pub(crate) fn refine_notebook(
    store: &dyn Store,
    embedder: &dyn Embedder,
    who: &UserRef,
    max: usize,
    threads: usize,
) -> Result<usize, PortError> {
    if embedder.refine(&[]).is_none() {
        return Ok(0);
    }
    let step = REFINE_BATCH * threads.max(1);
    let mut replaced = 0;
    let mut tried = 0;
    while tried < max {
        let records = store.unrefined(who, step.min(max - tried))?;
        if records.is_empty() {
            break;
        }
        let texts: Vec<&str> = records.iter().map(|m| m.content.as_str()).collect();
        let vectors = crate::parallel::in_runs_on(threads, texts, |_, run| {
            embedder.refine(&run).unwrap_or_else(|| Ok(Vec::new()))
        })?;
        if vectors.len() != records.len() {
            return Err(PortError::new(
                ErrorKind::Internal,
                format!(
                    "embedder {} refined {} vectors for {} texts",
                    embedder.id(),
                    vectors.len(),
                    records.len()
                ),
            ));
        }
        tried += records.len();
        let refined: Vec<Refined> = records
            .into_iter()
            .zip(vectors)
            .map(|(memory, vector)| Refined {
                id: memory.id,
                content: memory.content,
                vector: Embedded { model: embedder.id().to_owned(), vector, calibration: None },
            })
            .collect();
        let count = refined.len();
        replaced += store.put_refined(who, &refined)?;
        if count < step {
            break;
        }
    }
    Ok(replaced)
}

/// What the background refiner is doing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefineStatus {
    /// Notebooks waiting for refinement (or being refined).
    pub notebooks_waiting: usize,
    /// Vectors replaced since the refiner started.
    pub refined: u64,
    /// Refinement batches that failed since it started.
    pub failures: u64,
    /// The last error a refinement met, if any (the notebook is tried again when next
    /// written or searched).
    pub last_error: Option<String>,
}

#[derive(Debug, Default)]
struct Queue {
    waiting: VecDeque<UserRef>,
    queued: HashSet<UserRef>,
    /// Notebooks found with nothing left to refine and not written by this process since:
    /// a search of one queues nothing.
    refined_through: HashSet<UserRef>,
    /// Queued notebooks written to again since they were queued: one being refined goes
    /// round again rather than being taken as refined through.
    written_again: HashSet<UserRef>,
    busy: bool,
    stop: bool,
    refined: u64,
    failures: u64,
    last_error: Option<String>,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when a notebook is queued or the refiner stops.
    work: Condvar,
    /// Signalled when the queue empties.
    idle: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Refines the vectors of the notebooks it is told about on a thread of its own, one batch
/// of one notebook at a time, taking notebooks in turn. Dropping it stops the thread after
/// its current batch.
#[derive(Debug)]
pub(crate) struct Refiner {
    shared: Arc<Shared>,
}

impl Refiner {
    /// Starts the refiner's thread over `store` with `embedder`'s refining encoder; idle for
    /// `rescan`, it looks for notebooks other processes left unrefined.
    pub(crate) fn start(
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
        rescan: Duration,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared::default());
        // Busy until its first pass over what earlier processes left is queued and done.
        shared.lock().busy = true;
        let worker = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("mnemo-refine".into())
            .spawn(move || run(&worker, store.as_ref(), embedder.as_ref(), rescan))?;
        Ok(Self { shared })
    }

    /// Queues a notebook this process wrote to (nothing when it is already waiting).
    pub(crate) fn notify_written(&self, who: &UserRef) {
        let mut queue = self.shared.lock();
        queue.refined_through.remove(who);
        if queue.queued.contains(who) {
            queue.written_again.insert(who.clone());
            return;
        }
        drop(queue);
        self.notify_searched(who);
    }

    /// Queues a notebook this process searched, unless it is waiting already or was found
    /// refined through since this process last wrote to it (what another process writes is
    /// refined by that process, or taken up when this refiner is next idle for its rescan
    /// interval).
    pub(crate) fn notify_searched(&self, who: &UserRef) {
        let mut queue = self.shared.lock();
        if queue.stop || queue.queued.contains(who) || queue.refined_through.contains(who) {
            return;
        }
        queue.queued.insert(who.clone());
        queue.waiting.push_back(who.clone());
        drop(queue);
        self.shared.work.notify_one();
    }

    /// Waits until no notebook is waiting, at most `timeout`; true when none is.
    pub(crate) fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut queue = self.shared.lock();
        while !queue.waiting.is_empty() || queue.busy {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            queue = self
                .shared
                .idle
                .wait_timeout(queue, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// What it is doing.
    pub(crate) fn status(&self) -> RefineStatus {
        let queue = self.shared.lock();
        RefineStatus {
            notebooks_waiting: queue.waiting.len() + usize::from(queue.busy),
            refined: queue.refined,
            failures: queue.failures,
            last_error: queue.last_error.clone(),
        }
    }
}

impl Drop for Refiner {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.work.notify_all();
        self.shared.idle.notify_all();
    }
}

/// Queues every notebook the store holds unrefined records of, found refined through or not
/// (another process may have written to it since).
fn queue_unrefined(shared: &Shared, store: &dyn Store) {
    match store.unrefined_notebooks(usize::MAX) {
        Ok(notebooks) => {
            let mut queue = shared.lock();
            for who in notebooks {
                queue.refined_through.remove(&who);
                if queue.queued.insert(who.clone()) {
                    queue.waiting.push_back(who);
                }
            }
        }
        Err(e) => {
            let mut queue = shared.lock();
            queue.failures += 1;
            queue.last_error = Some(format!("listing unrefined notebooks: {e}"));
        }
    }
}

/// The refiner's thread: a batch of the first waiting notebook, which goes to the back of
/// the queue while it has more; with none waiting for `rescan`, the notebooks the store
/// holds unrefined records of.
fn run(shared: &Shared, store: &dyn Store, embedder: &dyn Embedder, rescan: Duration) {
    // What an earlier process left unrefined is taken up first.
    queue_unrefined(shared, store);
    loop {
        let mut queue = shared.lock();
        let who = loop {
            if queue.stop {
                return;
            }
            if let Some(who) = queue.waiting.pop_front() {
                break who;
            }
            queue.busy = false;
            shared.idle.notify_all();
            let (woken, waited) =
                shared.work.wait_timeout(queue, rescan).unwrap_or_else(PoisonError::into_inner);
            queue = woken;
            if waited.timed_out() && queue.waiting.is_empty() && !queue.stop {
                drop(queue);
                queue_unrefined(shared, store);
                queue = shared.lock();
            }
        };
        queue.busy = true;
        drop(queue);
        // A batch that replaced nothing leaves the rest for the notebook's next write or
        // search, or the next rescan, so records that cannot be refined are retried at most
        // once per rescan interval, never in a loop.
        let outcome = refine_notebook(store, embedder, &who, REFINE_BATCH, 1).and_then(|count| {
            let more = count > 0 && !store.unrefined(&who, 1)?.is_empty();
            Ok((count, more))
        });
        let mut queue = shared.lock();
        match outcome {
            Ok((count, more)) => {
                queue.refined += count as u64;
                let again = queue.written_again.remove(&who);
                if more || again {
                    queue.waiting.push_back(who);
                    continue;
                }
                queue.refined_through.insert(who.clone());
            }
            Err(e) => {
                queue.failures += 1;
                queue.last_error = Some(format!("refining {}: {e}", who.user_id()));
                queue.written_again.remove(&who);
            }
        }
        queue.queued.remove(&who);
    }
}
