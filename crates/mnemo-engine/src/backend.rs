//! What a storage backend gives the engine: transactions over one user's (or one tenant's)
//! rows, each offering narrow operations (find, neighbours, insert, set state, delete, put a
//! vector, audit, ledger entries), and the reads and searches that need no rule.
//!
//! Every operation of a [`Tx`] is confined to the transaction's [`Owner`] in the storage
//! query itself: a row of another tenant or user is indistinguishable from a missing one.

use mnemo_core::ledger::{DeletionReceipt, ForgottenMatch, Remnant, Removed, Tombstone};
use mnemo_core::lifecycle::Candidate;
use mnemo_core::policy::UserSettings;
use mnemo_core::ports::{
    AuditEntry, Embedded, Found, ListFilter, PortError, Ranked, SearchQuery, StoreCaps,
};
use mnemo_core::retrieval::{Fused, Signals};
use mnemo_core::run::Run;
use mnemo_core::{Memory, MemoryId, MemoryVersion, Status, Timestamp, UserRef};
use mnemo_index::Near;

/// A backend's handle on a stored record (its row id): valid within one transaction.
pub type RowId = i64;

/// Whose rows a transaction may read and change.
#[derive(Debug, Clone, Copy)]
pub enum Owner<'a> {
    /// One user.
    User(&'a UserRef),
    /// Every user of a tenant, or one of them (tenant-wide jobs such as expiry).
    Tenant {
        /// The tenant.
        tenant: &'a str,
        /// Only this user, when given.
        user: Option<&'a str>,
    },
}

impl Owner<'_> {
    /// The tenant.
    pub fn tenant(&self) -> &str {
        match self {
            Owner::User(who) => who.tenant(),
            Owner::Tenant { tenant, .. } => tenant,
        }
    }

    /// The one user, if the transaction is confined to one.
    pub fn user(&self) -> Option<&str> {
        match self {
            Owner::User(who) => Some(who.user_id()),
            Owner::Tenant { user, .. } => *user,
        }
    }
}

/// How a transaction commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// A durable write; it may share its commit with concurrent writes.
    Write,
    /// A deletion: it commits alone, and whatever still holds the deleted bytes (a log, freed
    /// pages) is scrubbed before it is acknowledged. Run again if it failed for want of
    /// space and the backend could free some.
    Deletion,
    /// A change whose loss in a crash is harmless (when records were last used): it may skip
    /// the flush durable writes pay.
    Light,
}

/// What a candidate statement is compared with before the write decision, read in its
/// transaction (see [`Tx::neighbours`]).
#[derive(Debug, Default)]
pub struct Neighbours {
    /// The active records of the candidate's key in its scope.
    pub same_key: Vec<Memory>,
    /// Live (active or pending, unexpired) records of the same kind and scope whose content
    /// has the candidate's content hash; the engine compares their normalised text.
    pub same_content: Vec<Memory>,
    /// For an episode with a source reference: the active episodes of that message, with
    /// their vectors (an episode can only duplicate one of the same message).
    pub same_message: Vec<(Memory, Vec<f32>)>,
    /// Otherwise, with a vector: the nearest retrievable records of the candidate's kind and
    /// scope, from the user's index ([`mnemo_index::UserIndex::nearest`]).
    pub nearest: Vec<(Memory, Near)>,
}

/// How many nearest records a write compares itself with.
pub const NEIGHBOURS: usize = 3;

/// One transaction of a backend. Reads see the transaction's own changes.
pub trait Tx {
    /// One record of the owner by id, expired or not.
    fn find(&mut self, id: &MemoryId) -> Result<Option<(RowId, Memory)>, PortError>;

    /// Records of the owner by row, in the order given (missing ones left out).
    fn rows(&mut self, rows: &[RowId]) -> Result<Vec<(RowId, Memory)>, PortError>;

    /// The owner's records matching `filter`, newest first.
    fn list(&mut self, filter: &ListFilter, now: Timestamp) -> Result<Vec<Memory>, PortError>;

    /// Every record of the owner, oldest first (by creation, then id).
    fn all(&mut self) -> Result<Vec<(RowId, Memory)>, PortError>;

    /// The owner's records expired at `now`.
    fn expired(&mut self, now: Timestamp) -> Result<Vec<RowId>, PortError>;

    /// The active records of a key in a scope.
    fn active_of_key(
        &mut self,
        scope: &str,
        subject: &str,
        attribute: &str,
    ) -> Result<Vec<(RowId, Memory)>, PortError>;

    /// What a candidate is compared with (see [`Neighbours`]); the vector is checked against
    /// the stored ones' embedder first. Sees every record this transaction wrote before.
    fn neighbours(
        &mut self,
        candidate: &Candidate,
        embedding: Option<&Embedded>,
        now: Timestamp,
    ) -> Result<Neighbours, PortError>;

    /// A record's earlier versions, oldest first.
    fn versions(&mut self, row: RowId) -> Result<Vec<MemoryVersion>, PortError>;

    /// A record's vector, if it has one.
    fn vector(&mut self, row: RowId) -> Result<Option<Vec<f32>>, PortError>;

    /// A record's row and ids of every older record it superseded, transitively; with
    /// `derived`, also every record derived from any of them (`derived_from` links), with
    /// what those superseded. Each with its user.
    fn chain(
        &mut self,
        row: RowId,
        derived: bool,
    ) -> Result<Vec<(RowId, MemoryId, String)>, PortError>;

    /// Inserts a record (its `derived_from` links too) with its vector; returns its row. A
    /// clash with a stored id or active key is a `Conflict`.
    fn insert(&mut self, memory: &Memory, vector: Option<&Embedded>) -> Result<RowId, PortError>;

    /// Marks the owner's record `id` superseded by `by`; its row, if it exists.
    fn supersede(
        &mut self,
        id: &MemoryId,
        by: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<RowId>, PortError>;

    /// Stores a record's changeable state over its row: content (and its hash), version,
    /// status, sensitivity, consent, metadata, `updated_at`, the shared record's attribution.
    fn update(&mut self, row: RowId, memory: &Memory) -> Result<(), PortError>;

    /// Sets when the owner's record `id` was last used; false when there is no such record.
    fn set_last_used(&mut self, id: &MemoryId, at: Timestamp) -> Result<bool, PortError>;

    /// Replaces a record's vector (`None` removes it); the vector is checked against the
    /// stored ones' embedder.
    fn put_vector(&mut self, row: RowId, vector: Option<&Embedded>) -> Result<(), PortError>;

    /// Keeps an earlier version of a record.
    fn put_version(&mut self, row: RowId, version: &MemoryVersion) -> Result<(), PortError>;

    /// The owner's records with a vector not yet refined, oldest first, at most `limit`.
    fn unrefined(&mut self, limit: usize) -> Result<Vec<(RowId, Memory)>, PortError>;

    /// Replaces a record's vector by a refined one of the same embedder and marks it refined
    /// (any later [`Tx::put_vector`] or insert is unrefined again).
    fn put_refined(&mut self, row: RowId, vector: &Embedded) -> Result<(), PortError>;

    /// Completely deletes records, their versions, vectors, links and index entries.
    fn delete(&mut self, rows: &[RowId]) -> Result<Removed, PortError>;

    /// Deletes the user's runs and any links left; returns (runs, links) removed.
    fn delete_rest_of_user(&mut self) -> Result<(u64, u64), PortError>;

    /// The user's settings (defaults when never set).
    fn settings(&mut self) -> Result<UserSettings, PortError>;

    /// Replaces the user's settings.
    fn put_settings(&mut self, settings: UserSettings, now: Timestamp) -> Result<(), PortError>;

    /// Appends an audit entry for `user` (of the owner's tenant). It never holds content.
    fn audit(&mut self, user: &str, entry: &AuditEntry) -> Result<(), PortError>;

    /// The latest tombstone of a statement digest of the user, and whether one of them also
    /// has `source` as its source digest.
    fn tombstone(
        &mut self,
        statement: &str,
        source: Option<&str>,
    ) -> Result<Option<ForgottenMatch>, PortError>;

    /// Whether the user has any tombstone at all: a write of a user who never asked to
    /// forget anything need not look its statement up.
    fn has_tombstones(&mut self) -> Result<bool, PortError>;

    /// Whether the user has a tombstone with this id or this statement digest.
    fn tombstoned(&mut self, id: &MemoryId, statement: &str) -> Result<bool, PortError>;

    /// Leaves a tombstone in the ledger.
    fn put_tombstone(
        &mut self,
        tombstone: &Tombstone,
        at: Timestamp,
        receipt_id: &str,
    ) -> Result<(), PortError>;

    /// Stores a deletion receipt.
    fn put_receipt(&mut self, receipt: &DeletionReceipt) -> Result<(), PortError>;

    /// One of the user's runs.
    fn run(&mut self, id: &str) -> Result<Option<Run>, PortError>;

    /// Stores a run: a new one, or over the stored one with its id.
    fn put_run(&mut self, run: &Run, new: bool) -> Result<(), PortError>;

    /// Deletes one of the user's runs; whether it existed.
    fn delete_run(&mut self, id: &str) -> Result<bool, PortError>;
}

/// A storage backend: it owns connections, locking, caching and scrubbing; the engine
/// owns every rule.
pub trait Backend: Send + Sync {
    /// What this backend supports.
    fn capabilities(&self) -> StoreCaps;

    /// The key of the deletion ledger's hashes (made once per database).
    fn ledger_key(&self) -> &mnemo_core::ledger::LedgerKey;

    /// What the backend itself keeps of deleted data after a deletion commits at `at`.
    fn remains(&self, at: Timestamp) -> Vec<Remnant>;

    /// Runs `body` in a transaction of `owner`, committing if it succeeds; an error leaves
    /// everything as it was and is returned as the body gave it. `body` may run again (see
    /// [`Commit::Deletion`]).
    fn transaction<T>(
        &self,
        owner: Owner<'_>,
        commit: Commit,
        body: &mut dyn FnMut(&mut dyn Tx) -> Result<T, PortError>,
    ) -> Result<T, PortError>;

    /// Runs `body` over a consistent snapshot of the user's rows, changing nothing.
    fn read<T>(
        &self,
        who: &UserRef,
        body: &mut dyn FnMut(&mut dyn Tx) -> Result<T, PortError>,
    ) -> Result<T, PortError>;

    /// Collects the signals of the user's retrievable records for a query from the user's
    /// index, lets `select` rank them, and returns what it selected, in its order, by row.
    fn rank(
        &self,
        who: &UserRef,
        query: &SearchQuery<'_>,
        now: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Result<Vec<Ranked>, PortError>;

    /// Reads the ranked rows that are still the user's and retrievable at `now`, in the
    /// ranking's order (see [`mnemo_core::ports::MemoryStore::read_ranked`]).
    fn read_ranked(
        &self,
        who: &UserRef,
        ranked: &[Ranked],
        now: Timestamp,
    ) -> Result<Vec<Found>, PortError>;

    /// The user's audit entries, newest first, at most `limit`.
    fn audit_entries(&self, who: &UserRef, limit: usize) -> Result<Vec<AuditEntry>, PortError>;

    /// The user's deletion receipts, newest first, at most `limit`.
    fn receipts(&self, who: &UserRef, limit: usize) -> Result<Vec<DeletionReceipt>, PortError>;

    /// The user's runs, oldest first.
    fn runs(&self, who: &UserRef) -> Result<Vec<Run>, PortError>;

    /// How many memories are stored, by status, across all tenants.
    fn count_by_status(&self) -> Result<Vec<(Status, u64)>, PortError>;

    /// Owners (tenant, user id as stored) of records with unrefined vectors, at most `limit`.
    fn unrefined_owners(&self, limit: usize) -> Result<Vec<(String, String)>, PortError>;
}
