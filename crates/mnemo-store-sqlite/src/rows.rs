//! Records searches have read, kept until a commit changes them.
//!
//! A search reads back the few records it ranks first. Every commit by another connection
//! makes SQLite drop a reader's whole page cache (and its memory map), so under a steady
//! stream of writes each of those reads walks the file's pages afresh. Here a record read
//! for a search is kept, by owner and row, and served to later searches of that owner.
//!
//! What is kept is only ever what the file held: an entry goes when a commit writes its row
//! (the index cache passes on every row its writes touched, once they are committed, before
//! the write is acknowledged), with its user or tenant when a write reaches all of their rows,
//! and all at once when another process commits. A search that read rows while any of that
//! happened does not keep them ([`RowCache::keep`] checks the epoch it read under, one of
//! a few kept for owners by hash so that writes to one user do not stop another's reads
//! being kept), since what it read may be older than what was just written. Only rows that were active and not
//! expired when read are kept; expiry is checked again at every use.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mnemo_core::{Memory, Timestamp};

/// Records kept at most, over all owners; past it, the owner being added to starts afresh
/// (or, when it holds few of them, every owner does).
pub(crate) const ROWS_KEPT: usize = 65_536;

/// Epochs kept: owners share one by hash, so a write to one holds back keeping another's
/// reads only when they share it.
const EPOCHS: usize = 64;

/// The kept records, by owner and row.
#[derive(Debug, Default)]
pub(crate) struct RowCache {
    state: Mutex<Rows>,
    hasher: RandomState,
}

#[derive(Debug)]
struct Rows {
    owners: HashMap<(String, String), HashMap<i64, Arc<Memory>>>,
    /// Records kept in all.
    held: usize,
    /// Each moves with every change that may drop a record of an owner hashed to it.
    epochs: [u64; EPOCHS],
}

impl Default for Rows {
    fn default() -> Self {
        Self { owners: HashMap::new(), held: 0, epochs: [0; EPOCHS] }
    }
}

impl Rows {
    /// Drops the records of owners `gone` picks; every epoch moves.
    fn forget_where(&mut self, mut gone: impl FnMut(&(String, String)) -> bool) {
        let mut dropped = 0;
        self.owners.retain(|owner, rows| {
            let go = gone(owner);
            if go {
                dropped += rows.len();
            }
            !go
        });
        self.held -= dropped;
        for epoch in &mut self.epochs {
            *epoch += 1;
        }
    }
}

/// What [`RowCache::lookup`] found: the kept records, and the epoch a read of the others
/// must be kept under.
pub(crate) struct Lookup {
    pub(crate) found: Vec<(i64, Arc<Memory>)>,
    pub(crate) epoch: u64,
}

impl RowCache {
    fn state(&self) -> MutexGuard<'_, Rows> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The epoch the owner's records are kept under.
    fn epoch_of(&self, owner: &(String, String)) -> usize {
        (self.hasher.hash_one(owner) % EPOCHS as u64) as usize
    }

    /// The owner's kept records among `rows` that are still unexpired at `now`.
    pub(crate) fn lookup(&self, tenant: &str, user: &str, rows: &[i64], now: Timestamp) -> Lookup {
        let owner = (tenant.to_owned(), user.to_owned());
        let slot = self.epoch_of(&owner);
        let state = self.state();
        let found = state
            .owners
            .get(&owner)
            .map(|kept| {
                rows.iter()
                    .filter_map(|row| kept.get(row).map(|memory| (*row, memory.clone())))
                    .filter(|(_, memory)| memory.expires_at.is_none_or(|at| at > now))
                    .collect()
            })
            .unwrap_or_default();
        Lookup { found, epoch: state.epochs[slot] }
    }

    /// Keeps records of the owner read from the file (active and unexpired when read),
    /// unless anything of theirs (or of an owner sharing their epoch) was dropped since
    /// `epoch`, when they may be older than the file.
    pub(crate) fn keep(&self, tenant: &str, user: &str, epoch: u64, read: &[(i64, Arc<Memory>)]) {
        if read.is_empty() {
            return;
        }
        let owner = (tenant.to_owned(), user.to_owned());
        let slot = self.epoch_of(&owner);
        let mut state = self.state();
        if state.epochs[slot] != epoch {
            return;
        }
        if state.held + read.len() > ROWS_KEPT {
            let own = state.owners.get(&owner).map_or(0, HashMap::len);
            if own >= ROWS_KEPT / 4 {
                state.forget_where(|o| *o == owner);
            } else {
                state.forget_where(|_| true);
            }
            // Dropping moved the epochs, but nothing read was changed: it is kept all the same.
        }
        let kept = state.owners.entry(owner).or_default();
        let before = kept.len();
        for (row, memory) in read {
            kept.insert(*row, memory.clone());
        }
        let added = kept.len() - before;
        state.held += added;
    }

    /// Drops the owner's records of these rows (written by a commit).
    pub(crate) fn forget_rows(&self, tenant: &str, user: &str, rows: &[i64]) {
        let owner = (tenant.to_owned(), user.to_owned());
        let slot = self.epoch_of(&owner);
        let mut state = self.state();
        let mut dropped = 0;
        if let Some(kept) = state.owners.get_mut(&owner) {
            dropped = rows.iter().filter(|row| kept.remove(row).is_some()).count();
            // An owner with nothing kept takes no room.
            if kept.is_empty() {
                state.owners.remove(&owner);
            }
        }
        state.held -= dropped;
        state.epochs[slot] += 1;
    }

    /// Drops every record of the user, or with no user of the whole tenant.
    pub(crate) fn forget_owner(&self, tenant: &str, user: Option<&str>) {
        self.state().forget_where(|(t, u)| t == tenant && user.is_none_or(|user| user == u));
    }

    /// Drops every record.
    pub(crate) fn forget_all(&self) {
        self.state().forget_where(|_| true);
    }

    /// Records kept in all.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.state().held
    }

    /// Owners with records kept.
    #[cfg(test)]
    fn owners(&self) -> usize {
        self.state().owners.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo_core::lifecycle::{Candidate, CandidateFields};
    use mnemo_core::{MemoryId, Status};

    fn record(text: &str, expires: Option<i64>) -> Arc<Memory> {
        let at = Timestamp::from_millis(0);
        let fields = CandidateFields { content: text.into(), ..Default::default() };
        let mut memory = Candidate::validate(fields, at).unwrap().into_memory(
            MemoryId(format!("m-{text}")),
            "acme",
            "alice",
            Status::Active,
            at,
        );
        memory.expires_at = expires.map(Timestamp::from_millis);
        Arc::new(memory)
    }

    fn rows_of(lookup: &Lookup) -> Vec<i64> {
        lookup.found.iter().map(|(row, _)| *row).collect()
    }

    #[test]
    fn kept_rows_are_the_owners_alone_and_expire_on_time() {
        let cache = RowCache::default();
        let now = Timestamp::from_millis(1_000);
        let epoch = cache.lookup("acme", "alice", &[1, 2], now).epoch;
        cache.keep(
            "acme",
            "alice",
            epoch,
            &[(1, record("a", None)), (2, record("b", Some(2_000)))],
        );
        assert_eq!(rows_of(&cache.lookup("acme", "alice", &[1, 2, 3], now)), vec![1, 2]);
        // Another user, or the same user id in another tenant, finds nothing.
        assert!(cache.lookup("acme", "bob", &[1, 2], now).found.is_empty());
        assert!(cache.lookup("other", "alice", &[1, 2], now).found.is_empty());
        // Row 2 expires at 2,000.
        let later = Timestamp::from_millis(2_000);
        assert_eq!(rows_of(&cache.lookup("acme", "alice", &[1, 2], later)), vec![1]);
    }

    #[test]
    fn a_read_is_not_kept_once_anything_was_dropped_while_it_ran() {
        let cache = RowCache::default();
        let now = Timestamp::from_millis(0);
        let epoch = cache.lookup("acme", "alice", &[1], now).epoch;
        // A commit writes row 1 while the search reads it.
        cache.forget_rows("acme", "alice", &[1]);
        cache.keep("acme", "alice", epoch, &[(1, record("old", None))]);
        assert!(cache.lookup("acme", "alice", &[1], now).found.is_empty());
        assert_eq!(cache.held(), 0);
    }

    #[test]
    fn a_write_to_another_owner_does_not_hold_back_keeping() {
        let cache = RowCache::default();
        let now = Timestamp::from_millis(0);
        let alice = ("acme".to_owned(), "alice".to_owned());
        let other = (0..)
            .map(|n| format!("user-{n}"))
            .find(|user| {
                cache.epoch_of(&("acme".to_owned(), user.clone())) != cache.epoch_of(&alice)
            })
            .unwrap();
        let epoch = cache.lookup("acme", "alice", &[1], now).epoch;
        cache.forget_rows("acme", &other, &[1]);
        cache.keep("acme", "alice", epoch, &[(1, record("a", None))]);
        assert_eq!(rows_of(&cache.lookup("acme", "alice", &[1], now)), vec![1]);
        // A write reaching the whole tenant does.
        let epoch = cache.lookup("acme", "alice", &[2], now).epoch;
        cache.forget_owner("acme", None);
        cache.keep("acme", "alice", epoch, &[(2, record("b", None))]);
        assert!(cache.lookup("acme", "alice", &[2], now).found.is_empty());
    }

    #[test]
    fn commits_drop_their_rows_their_owner_or_everything() {
        let cache = RowCache::default();
        let now = Timestamp::from_millis(0);
        let fill = |cache: &RowCache| {
            for (tenant, user) in [("acme", "alice"), ("acme", "bob"), ("other", "carol")] {
                let epoch = cache.lookup(tenant, user, &[], now).epoch;
                cache.keep(tenant, user, epoch, &[(1, record("x", None)), (2, record("y", None))]);
            }
        };
        fill(&cache);
        assert_eq!(cache.held(), 6);
        cache.forget_rows("acme", "alice", &[2, 7]);
        assert_eq!(rows_of(&cache.lookup("acme", "alice", &[1, 2], now)), vec![1]);
        // An owner whose last record goes is gone too.
        cache.forget_rows("other", "carol", &[1, 2]);
        assert_eq!(cache.owners(), 2);
        let epoch = cache.lookup("other", "carol", &[], now).epoch;
        cache.keep("other", "carol", epoch, &[(1, record("x", None)), (2, record("y", None))]);
        assert_eq!(rows_of(&cache.lookup("acme", "bob", &[1, 2], now)), vec![1, 2]);
        assert_eq!(cache.held(), 5);
        cache.forget_owner("acme", Some("bob"));
        assert!(cache.lookup("acme", "bob", &[1, 2], now).found.is_empty());
        cache.forget_owner("acme", None);
        assert!(cache.lookup("acme", "alice", &[1], now).found.is_empty());
        assert_eq!(rows_of(&cache.lookup("other", "carol", &[1, 2], now)), vec![1, 2]);
        assert_eq!(cache.held(), 2);
        fill(&cache);
        cache.forget_all();
        assert_eq!(cache.held(), 0);
    }

    #[test]
    fn the_cache_never_holds_more_than_its_bound() {
        let cache = RowCache::default();
        let now = Timestamp::from_millis(0);
        let memory = record("same", None);
        for user in 0..6 {
            let user = format!("user-{user}");
            for start in (0..ROWS_KEPT as i64 / 2).step_by(1_024) {
                let read: Vec<_> =
                    (start..start + 1_024).map(|row| (row, memory.clone())).collect();
                let epoch = cache.lookup("acme", &user, &[], now).epoch;
                cache.keep("acme", &user, epoch, &read);
                assert!(cache.held() <= ROWS_KEPT);
            }
        }
        assert!(cache.held() > ROWS_KEPT / 4);
    }
}
