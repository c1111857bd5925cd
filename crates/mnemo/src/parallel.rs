//! Work spread over the machine's cores: notebooks searched side by side, the pure
//! preparation of a large batch (screening, extraction, embedding) split into runs, and a
//! batch prepared in chunks on other cores while its transaction writes the chunks before.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::Result;

/// A batch of fewer items than this is prepared on the calling thread alone: a thread would
/// cost more than it saves.
pub(crate) const SPLIT_AT: usize = 64;

/// The threads to use: one per core, the calling one among them (asked of the system once).
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}

/// Threads that help a search with its notebooks, one per core besides the caller's, started
/// once and parked between searches. A parked thread takes up a notebook within microseconds;
/// a thread spawned for each search is placed on the caller's busy core and often waits
/// hundreds of microseconds for the scheduler to move it. `None` on one core, or where the
/// system refuses threads: the caller then searches every notebook itself.
fn search_helpers() -> Option<&'static rayon_core::ThreadPool> {
    static HELPERS: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    HELPERS
        .get_or_init(|| {
            let helpers = cores().checked_sub(1).filter(|&n| n > 0)?;
            rayon_core::ThreadPoolBuilder::new()
                .num_threads(helpers)
                .thread_name(|i| format!("mnemo-search-{i}"))
                .build()
                .ok()
        })
        .as_ref()
}

/// `each` over every notebook (or every notebook's part of a search), side by side: the
/// calling thread and the search helpers each take the next one not yet taken; the answers in
/// the notebooks' order. Of the notebooks that fail, the first one's error is returned.
pub(crate) fn side_by_side<N: Sync, T: Send>(
    notebooks: &[N],
    each: impl Fn(&N) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let ([_, _, ..], Some(helpers)) = (notebooks, search_helpers()) else {
        return notebooks.iter().map(each).collect();
    };
    let next = AtomicUsize::new(0);
    // Notebooks taken and not yet answered.
    let taken = AtomicUsize::new(0);
    let answers: Mutex<Vec<(usize, Result<T>)>> = Mutex::new(Vec::with_capacity(notebooks.len()));
    let work = || loop {
        let _taking = Taking::one(&taken);
        let at = next.fetch_add(1, Ordering::AcqRel);
        let Some(owner) = notebooks.get(at) else { return };
        let answer = each(owner);
        answers.lock().unwrap_or_else(PoisonError::into_inner).push((at, answer));
    };
    // A helper's panic is raised again here when the scope ends.
    helpers.in_place_scope(|scope| {
        for _ in 1..cores().min(notebooks.len()) {
            scope.spawn(|_| work());
        }
        work();
        // Every notebook is taken: wait awake for the helpers' last ones, giving way to any
        // other thread, since a caller that sleeps takes up to hundreds of microseconds to be
        // woken. A helper that has not started yet finds nothing left and ends at once.
        while taken.load(Ordering::Acquire) > 0 {
            std::thread::yield_now();
        }
    });
    let mut answers = answers.into_inner().unwrap_or_else(PoisonError::into_inner);
    answers.sort_by_key(|(at, _)| *at);
    answers.into_iter().map(|(_, answer)| answer).collect()
}

/// One notebook taken by a thread of [`side_by_side`], counted in `taken` until its answer is
/// in (or its thread found nothing left, or panicked).
struct Taking<'a>(&'a AtomicUsize);

impl<'a> Taking<'a> {
    fn one(taken: &'a AtomicUsize) -> Self {
        taken.fetch_add(1, Ordering::AcqRel);
        Taking(taken)
    }
}

impl Drop for Taking<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `each` over consecutive runs of `items`, one run per core (the calling thread takes the
/// first), with the outputs joined in the items' order; `each` gets its run and the index of
/// the run's first item. A batch under [`SPLIT_AT`] items is one run. Of the runs that fail,
/// the earliest one's error is returned, as a single pass in order would return it.
pub(crate) fn in_runs<T: Send, U: Send, E: Send>(
    items: Vec<T>,
    each: impl Fn(usize, Vec<T>) -> std::result::Result<Vec<U>, E> + Sync,
) -> std::result::Result<Vec<U>, E> {
    in_runs_on(cores(), items, each)
}

/// [`in_runs`] on at most `threads` threads.
pub(crate) fn in_runs_on<T: Send, U: Send, E: Send>(
    threads: usize,
    mut items: Vec<T>,
    each: impl Fn(usize, Vec<T>) -> std::result::Result<Vec<U>, E> + Sync,
) -> std::result::Result<Vec<U>, E> {
    let threads = if items.len() < SPLIT_AT { 1 } else { threads.min(items.len()) };
    if threads <= 1 {
        return each(0, items);
    }
    let per_run = items.len().div_ceil(threads);
    // (first index, items) of each run, split off from the end, then put in order.
    let starts: Vec<usize> =
        (0..threads).map(|t| t * per_run).take_while(|start| *start < items.len()).collect();
    let mut runs: Vec<(usize, Vec<T>)> =
        starts.iter().rev().map(|&start| (start, items.split_off(start))).collect();
    runs.reverse();
    let each = &each;
    let outputs =
        std::thread::scope(|scope| {
            let mut runs = runs.into_iter();
            let (first, own) = runs.next().unwrap_or_default();
            let others: Vec<_> = runs.map(|(at, run)| scope.spawn(move || each(at, run))).collect();
            let mut outputs = vec![each(first, own)];
            outputs.extend(others.into_iter().map(|other| {
                other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }));
            outputs
        });
    let mut joined = Vec::new();
    for output in outputs {
        joined.extend(output?);
    }
    Ok(joined)
}

/// How many chunks may be prepared ahead of the one the consumer is taking.
const WAITING_CHUNKS: usize = 4;

/// `items` prepared in consecutive chunks of `chunk` items on another thread while the
/// calling thread consumes what is ready: `prepare` gets each chunk and the index of its first
/// item; `consume` takes the prepared items in order, as `Ok`, and an `Err(Stopped)` in place
/// of any that could not be prepared (after which it should stop). A consumer that finds its
/// next chunk not yet ready prepares one itself rather than wait, so preparation uses every
/// core while consuming is the faster side, and the consumer's own core while it is the
/// slower. The first chunk is prepared before `consume` is called, so a failure there never
/// reaches it. A preparation failure is returned in place of what `consume` returned; no
/// chunk is begun after a failure is known.
pub(crate) fn beside<T: Send, U: Send, E: Send, R>(
    items: Vec<T>,
    chunk: usize,
    prepare: impl Fn(usize, Vec<T>) -> std::result::Result<Vec<U>, E> + Sync,
    consume: impl FnOnce(&mut dyn Iterator<Item = std::result::Result<U, Stopped>>) -> R,
) -> std::result::Result<R, E> {
    let expected = items.len();
    let chunk = chunk.max(1);
    let shared = Chunks {
        state: Mutex::new(ChunkState {
            rest: items.into_iter(),
            claimed: 0,
            first_unclaimed: 0,
            consuming: 0,
            done: std::collections::BTreeMap::new(),
            failed: false,
            helper_gone: false,
        }),
        changed: std::sync::Condvar::new(),
        chunk,
    };
    let prepare = &prepare;
    std::thread::scope(|scope| {
        let shared = &shared;
        scope.spawn(move || {
            // Marks the helper gone however it ends, so a consumer never waits for it.
            let _gone = HelperGone(shared);
            while let Some((at, first, next)) = shared.claim(true) {
                let prepared = prepare(first, next);
                shared.finish(at, prepared);
            }
        });
        let mut ready = Ready {
            shared,
            prepare,
            current: Vec::new().into_iter(),
            expected,
            taken: 0,
            failure: None,
            stopped: false,
        };
        ready.refill();
        if let Some(failure) = ready.failure.take() {
            return Err(failure);
        }
        let consumed = consume(&mut ready);
        match ready.failure.take() {
            Some(failure) => Err(failure),
            None => Ok(consumed),
        }
    })
}

/// What a consumer of [`beside`] gets in place of an item that could not be prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stopped;

/// The chunks of a [`beside`], shared by the preparing thread and the consumer.
struct Chunks<T, U, E> {
    state: Mutex<ChunkState<T, U, E>>,
    /// Signalled when a chunk is prepared, the helper ends, or the consumer moves on.
    changed: std::sync::Condvar,
    chunk: usize,
}

struct ChunkState<T, U, E> {
    /// The items of the chunks no one has claimed yet.
    rest: std::vec::IntoIter<T>,
    /// How many chunks were claimed, and the first item of the next one.
    claimed: usize,
    first_unclaimed: usize,
    /// The chunk the consumer takes next.
    consuming: usize,
    /// Prepared chunks not yet taken, by number.
    done: std::collections::BTreeMap<usize, std::result::Result<Vec<U>, E>>,
    /// A chunk failed (or the consumer is finished): nothing more is begun.
    failed: bool,
    helper_gone: bool,
}

impl<T, U, E> Chunks<T, U, E> {
    fn lock(&self) -> std::sync::MutexGuard<'_, ChunkState<T, U, E>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next chunk to prepare (its number, first item's index and items), unless every
    /// chunk is claimed or a failure is known. The helper waits while it is
    /// [`WAITING_CHUNKS`] ahead of the consumer; the consumer never waits here.
    fn claim(&self, helper: bool) -> Option<(usize, usize, Vec<T>)> {
        let mut state = self.lock();
        loop {
            if state.failed || state.rest.len() == 0 {
                return None;
            }
            if !helper || state.claimed < state.consuming + WAITING_CHUNKS {
                break;
            }
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        let items: Vec<T> = state.rest.by_ref().take(self.chunk).collect();
        let claimed = (state.claimed, state.first_unclaimed, items);
        state.claimed += 1;
        state.first_unclaimed += claimed.2.len();
        Some(claimed)
    }

    /// Hands in chunk `at`, prepared.
    fn finish(&self, at: usize, prepared: std::result::Result<Vec<U>, E>) {
        let mut state = self.lock();
        state.failed |= prepared.is_err();
        state.done.insert(at, prepared);
        drop(state);
        self.changed.notify_all();
    }
}

/// Marks the preparing thread of a [`beside`] gone when dropped, even by a panic.
struct HelperGone<'a, T, U, E>(&'a Chunks<T, U, E>);

impl<T, U, E> Drop for HelperGone<'_, T, U, E> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.helper_gone = true;
        // A panic ends the batch: the consumer prepares nothing more either.
        state.failed |= std::thread::panicking();
        drop(state);
        self.0.changed.notify_all();
    }
}

/// The prepared items of [`beside`], in order.
struct Ready<'a, T, U, E, P> {
    shared: &'a Chunks<T, U, E>,
    prepare: &'a P,
    current: std::vec::IntoIter<U>,
    /// How many items there are in all, and how many were handed out.
    expected: usize,
    taken: usize,
    failure: Option<E>,
    /// `Stopped` was handed out.
    stopped: bool,
}

impl<T, U, E, P> Ready<'_, T, U, E, P>
where
    P: Fn(usize, Vec<T>) -> std::result::Result<Vec<U>, E>,
{
    /// Takes the next chunk once the current one is used up, preparing chunks itself while
    /// it is not ready; a failure is kept.
    fn refill(&mut self) {
        if self.current.len() > 0
            || self.failure.is_some()
            || self.stopped
            || self.taken == self.expected
        {
            return;
        }
        let shared = self.shared;
        let mut state = shared.lock();
        let wanted = state.consuming;
        loop {
            if let Some(prepared) = state.done.remove(&wanted) {
                state.consuming += 1;
                drop(state);
                shared.changed.notify_all();
                match prepared {
                    Ok(chunk) => self.current = chunk.into_iter(),
                    Err(failure) => self.failure = Some(failure),
                }
                return;
            }
            drop(state);
            if let Some((at, first, items)) = shared.claim(false) {
                let prepared = (self.prepare)(first, items);
                shared.finish(at, prepared);
                state = shared.lock();
                continue;
            }
            state = shared.lock();
            if state.done.contains_key(&wanted) {
                continue;
            }
            // The helper holds the chunk wanted; if it is gone (it panicked), nothing more
            // will come, and the scope raises its panic.
            if state.helper_gone {
                return;
            }
            state = shared.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Whatever the consumer left (even by a panic), the helper begins nothing more.
impl<T, U, E, P> Drop for Ready<'_, T, U, E, P> {
    fn drop(&mut self) {
        self.shared.lock().failed = true;
        self.shared.changed.notify_all();
    }
}

impl<T, U, E, P> Iterator for Ready<'_, T, U, E, P>
where
    P: Fn(usize, Vec<T>) -> std::result::Result<Vec<U>, E>,
{
    type Item = std::result::Result<U, Stopped>;

    fn next(&mut self) -> Option<Self::Item> {
        self.refill();
        match self.current.next() {
            Some(item) => {
                self.taken += 1;
                Some(Ok(item))
            }
            // Short of the count: nothing more will come, and what came is not all. Said
            // once; the iterator then ends.
            None if self.taken < self.expected && !self.stopped => {
                self.stopped = true;
                Some(Err(Stopped))
            }
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use mnemo_core::UserRef;

    #[test]
    fn notebooks_side_by_side_answer_in_order_and_the_first_failure_wins() {
        let notebooks: Vec<UserRef> =
            (0..7).map(|i| UserRef::new("t", &format!("u{i}")).expect("valid")).collect();
        for n in 0..=notebooks.len() {
            let answers = side_by_side(&notebooks[..n], |who| Ok(who.user_id().to_owned()));
            let expected: Vec<String> = (0..n).map(|i| format!("u{i}")).collect();
            assert_eq!(answers.ok(), Some(expected), "n = {n}");
        }
        // Notebooks 2 and 5 fail: whichever thread reaches its notebook first, 2's error
        // comes back.
        let failed = side_by_side(&notebooks, |who| match who.user_id() {
            "u2" | "u5" => Err(Error::NotFound(mnemo_core::MemoryId(who.user_id().to_owned()))),
            _ => Ok(()),
        });
        assert!(matches!(failed, Err(Error::NotFound(id)) if id.0 == "u2"));
        // A helper's panic reaches the caller, which does not wait for that helper forever.
        // (Each notebook takes long enough that the helper takes some of them.)
        let panicked = std::panic::catch_unwind(|| {
            side_by_side(&notebooks, |_| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                assert!(rayon_core::current_thread_index().is_none(), "a helper panicked");
                Ok(())
            })
        });
        assert!(panicked.is_err());
    }

    #[test]
    fn runs_keep_the_items_order_and_their_first_indexes() {
        for n in [0, 1, SPLIT_AT - 1, SPLIT_AT, SPLIT_AT + 1, 1000, 1001] {
            let items: Vec<usize> = (0..n).collect();
            let out = in_runs(items, |first, run| {
                // Each item knows its index from the run's first one.
                Ok::<_, ()>(run.iter().enumerate().map(|(k, x)| (first + k, *x)).collect())
            })
            .unwrap_or_default();
            assert_eq!(out.len(), n);
            assert!(out.iter().enumerate().all(|(i, (at, x))| *at == i && *x == i), "n = {n}");
        }
    }

    #[test]
    fn the_earliest_failure_is_the_one_returned() {
        let items: Vec<usize> = (0..1000).collect();
        // Items 10 and 900 fail; whichever run finishes first, item 10's error comes back.
        let out = in_runs(items, |first, run| {
            run.iter()
                .enumerate()
                .map(|(k, x)| if *x == 10 || *x == 900 { Err(first + k) } else { Ok(*x) })
                .collect::<std::result::Result<Vec<_>, _>>()
        });
        assert_eq!(out, Err(10));
    }

    #[test]
    fn prepared_beside_arrives_whole_and_in_order() {
        for n in [1, 9, 10, 11, 1000] {
            let items: Vec<usize> = (0..n).collect();
            let out = beside(
                items,
                10,
                |first, chunk| {
                    Ok::<_, ()>(chunk.iter().enumerate().map(|(k, x)| (first + k, *x)).collect())
                },
                |ready| ready.collect::<Vec<_>>(),
            );
            let expected: Vec<_> = (0..n).map(|i| Ok((i, i))).collect();
            assert_eq!(out, Ok(expected), "n = {n}");
        }
    }

    #[test]
    fn a_consumer_with_nothing_ready_prepares_chunks_itself() {
        let consumer = std::thread::current().id();
        let by_consumer = AtomicUsize::new(0);
        let items: Vec<usize> = (0..200).collect();
        let out = beside(
            items,
            10,
            |_, chunk| {
                if std::thread::current().id() == consumer {
                    by_consumer.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
                Ok::<_, ()>(chunk)
            },
            |ready| ready.collect::<std::result::Result<Vec<_>, _>>(),
        );
        assert_eq!(out, Ok(Ok((0..200).collect::<Vec<_>>())));
        // The helper may run at most a few chunks ahead, so the consumer, which takes items
        // at once, must have prepared some of the twenty chunks.
        assert!(by_consumer.load(Ordering::Relaxed) > 0);
    }

    #[test]
    fn a_panic_in_either_thread_reaches_the_caller() {
        for panicking in [0, 7, 19] {
            let outcome = std::panic::catch_unwind(|| {
                beside(
                    (0..200).collect::<Vec<usize>>(),
                    10,
                    |first, chunk| {
                        assert!(first != panicking * 10, "chunk {panicking} fails");
                        Ok::<_, ()>(chunk)
                    },
                    |ready| ready.count(),
                )
            });
            assert!(outcome.is_err(), "chunk {panicking}");
        }
        // The helper's panic, in whichever chunk it takes first (the consumer's chunks take
        // long enough that it takes one): the consumer is not left waiting for that chunk.
        let consumer = std::thread::current().id();
        let outcome = std::panic::catch_unwind(|| {
            beside(
                (0..200).collect::<Vec<usize>>(),
                10,
                |_, chunk| {
                    assert!(std::thread::current().id() == consumer, "the helper fails");
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    Ok::<_, ()>(chunk)
                },
                |ready| ready.count(),
            )
        });
        assert!(outcome.is_err());
        // A consumer that panics does not leave the helper waiting for it.
        let outcome = std::panic::catch_unwind(|| {
            beside(
                (0..200).collect::<Vec<usize>>(),
                10,
                |_, chunk| Ok::<_, ()>(chunk),
                |ready| {
                    ready.take(15).count();
                    panic!("the consumer stops");
                },
            )
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn a_failed_chunk_stops_the_consumer_and_is_returned() {
        let items: Vec<usize> = (0..100).collect();
        // Chunk 30..40 fails: the consumer gets 0..30, then `Stopped`, and the error wins.
        let mut seen = Vec::new();
        let out = beside(
            items,
            10,
            |first, chunk| if first == 30 { Err(first) } else { Ok(chunk) },
            |ready| {
                for item in ready {
                    match item {
                        Ok(x) => seen.push(x),
                        Err(stopped) => return Err(stopped),
                    }
                }
                Ok(())
            },
        );
        assert_eq!(out, Err(30));
        assert_eq!(seen, (0..30).collect::<Vec<_>>());
        // A failure in the first chunk never reaches the consumer.
        let mut called = false;
        let first = beside(vec![1, 2, 3], 10, |_, _| Err::<Vec<u8>, _>("bad"), |_| called = true);
        assert_eq!(first, Err("bad"));
        assert!(!called);
    }
}
