//! Work spread over the machine's cores: notebooks searched side by side, and the pure
//! preparation of a large batch (screening, extraction, embedding) split into runs.

use mnemo_core::UserRef;

use crate::{Error, Result};

/// A batch of fewer items than this is prepared on the calling thread alone: a thread would
/// cost more than it saves.
pub(crate) const SPLIT_AT: usize = 64;

/// The threads to use: one per core, the calling one among them.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// `each` over every notebook, side by side: as many threads as there are cores (the calling
/// one among them), each taking the next notebook not yet taken; the answers in notebook order.
pub(crate) fn side_by_side<T: Send>(
    notebooks: &[UserRef],
    each: impl Fn(&UserRef) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    if let [one] = notebooks {
        return Ok(vec![each(one)?]);
    }
    let threads = cores().min(notebooks.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || -> Result<Vec<(usize, T)>> {
        let mut done = Vec::new();
        loop {
            let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(owner) = notebooks.get(at) else { return Ok(done) };
            done.push((at, each(owner)?));
        }
    };
    let mut done = std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut done = work()?;
        for other in others {
            done.extend(other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?);
        }
        Ok::<_, Error>(done)
    })?;
    done.sort_by_key(|(at, _)| *at);
    Ok(done.into_iter().map(|(_, answer)| answer).collect())
}

/// `each` over consecutive runs of `items`, one run per core (the calling thread takes the
/// first), with the outputs joined in the items' order; `each` gets its run and the index of
/// the run's first item. A batch under [`SPLIT_AT`] items is one run. Of the runs that fail,
/// the earliest one's error is returned, as a single pass in order would return it.
pub(crate) fn in_runs<T: Send, U: Send, E: Send>(
    mut items: Vec<T>,
    each: impl Fn(usize, Vec<T>) -> std::result::Result<Vec<U>, E> + Sync,
) -> std::result::Result<Vec<U>, E> {
    let threads = if items.len() < SPLIT_AT { 1 } else { cores().min(items.len()) };
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
