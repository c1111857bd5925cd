//! The server's threads for library calls. At most [`crate::Limits::calls_at_once`] calls run
//! at once, each on a thread kept for them; a call past them waits in a queue without a
//! thread of its own. A thread that finishes a call takes the next queued one itself, so a
//! busy server hands calls on without waking a task that then wakes a thread.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// A queued call.
type Job = Box<dyn FnOnce() + Send>;

/// What the threads and the callers share.
struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when a call is queued, and when the pool closes.
    ready: Condvar,
    /// Threads at most.
    most: usize,
}

struct Queue {
    jobs: VecDeque<Job>,
    /// Threads started and not yet ended.
    threads: usize,
    /// Threads waiting for a call.
    idle: usize,
    /// Set when the pool is dropped: threads end once the queue is empty.
    closed: bool,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // A job runs outside the lock, so a panic never poisons it.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A pool of at most `most` threads for library calls, started as calls need them.
pub(crate) struct Calls {
    shared: Arc<Shared>,
}

impl Calls {
    /// A pool of at most `most` threads (at least one); none is started before a call.
    pub(crate) fn new(most: usize) -> Self {
        let queue = Queue { jobs: VecDeque::new(), threads: 0, idle: 0, closed: false };
        Self {
            shared: Arc::new(Shared {
                queue: Mutex::new(queue),
                ready: Condvar::new(),
                most: most.max(1),
            }),
        }
    }

    /// Runs `work` on one of the pool's threads once one is free, and returns its answer:
    /// `None` when it panicked or no thread could be started for it. `work` runs even when
    /// the returned future is dropped meanwhile.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        self.submit(Box::new(move || {
            // A panic is the caller's error, not the thread's end.
            let _ = answer.send(std::panic::catch_unwind(AssertUnwindSafe(work)));
        }));
        answered.await.ok()?.ok()
    }

    fn submit(&self, job: Job) {
        let mut queue = self.shared.queue();
        queue.jobs.push_back(job);
        if queue.idle > 0 {
            self.shared.ready.notify_one();
        }
        // More calls waiting than idle threads to take them: one more thread, while allowed.
        if queue.jobs.len() > queue.idle && queue.threads < self.shared.most {
            let shared = Arc::clone(&self.shared);
            let started =
                std::thread::Builder::new().name("mnemo-call".into()).spawn(move || serve(&shared));
            match started {
                Ok(_) => queue.threads += 1,
                // Without any thread the call would wait forever: it ends unanswered instead.
                Err(_) if queue.threads == 0 => queue.jobs.clear(),
                Err(_) => {}
            }
        }
    }
}

impl Drop for Calls {
    fn drop(&mut self) {
        self.shared.queue().closed = true;
        self.shared.ready.notify_all();
    }
}

/// A pool thread: runs queued calls until the pool is closed and the queue empty.
fn serve(shared: &Shared) {
    let mut queue = shared.queue();
    loop {
        if let Some(job) = queue.jobs.pop_front() {
            drop(queue);
            job();
            queue = shared.queue();
            continue;
        }
        if queue.closed {
            queue.threads -= 1;
            return;
        }
        queue.idle += 1;
        queue = shared.ready.wait(queue).unwrap_or_else(PoisonError::into_inner);
        queue.idle -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_run_on_at_most_the_pools_threads_and_each_is_answered() {
        let calls = Arc::new(Calls::new(3));
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let names = Arc::new(Mutex::new(std::collections::HashSet::new()));
        let tasks: Vec<_> = (0..12)
            .map(|i| {
                let (calls, running, most) =
                    (Arc::clone(&calls), Arc::clone(&running), Arc::clone(&most));
                let names = Arc::clone(&names);
                tokio::spawn(async move {
                    calls
                        .run(move || {
                            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            names.lock().unwrap().insert(std::thread::current().id());
                            std::thread::sleep(std::time::Duration::from_millis(10));
                            running.fetch_sub(1, Ordering::SeqCst);
                            i * 2
                        })
                        .await
                })
            })
            .collect();
        for (i, task) in tasks.into_iter().enumerate() {
            assert_eq!(task.await.unwrap(), Some(i * 2));
        }
        assert_eq!(most.load(Ordering::SeqCst), 3);
        assert!(names.lock().unwrap().len() <= 3, "calls ran on the pool's threads only");
    }

    #[tokio::test]
    async fn a_call_that_panics_fails_alone() {
        let calls = Calls::new(1);
        let failed = calls.run(|| -> usize { panic!("a failing call") }).await;
        assert!(failed.is_none());
        assert_eq!(calls.run(|| 7).await, Some(7), "the thread goes on");
    }

    #[test]
    fn a_dropped_pool_ends_its_threads() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let calls = Calls::new(2);
        let shared = Arc::clone(&calls.shared);
        assert_eq!(runtime.block_on(calls.run(|| 1)), Some(1));
        drop(calls);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while shared.queue().threads > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(shared.queue().threads, 0);
    }
}
