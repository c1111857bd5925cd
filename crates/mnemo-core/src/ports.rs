//! Port traits: what the library needs from storage and embedding, implemented by adapters.
//!
//! Ports are narrow, domain-level and dyn-compatible (`Arc<dyn Store>`). Every [`Store`]
//! method takes the [`UserRef`] it acts for first (or a tenant, for tenant-wide jobs), and the
//! implementation must apply it in the storage query itself: a record of another tenant or
//! user is indistinguishable from one that does not exist.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::duration::Ttl;
use crate::error::ErrorKind;
use crate::ledger::DeletionReceipt;
use crate::lifecycle::{Candidate, Decision, WriteContext};
use crate::policy::{ReasonCode, UserSettings};
use crate::record::{Kind, Memory, MemoryId, MemoryVersion, Sensitivity, Status};
use crate::retrieval::{Fused, Signals};
use crate::run::Run;
use crate::scope::{Scope, UserRef};

/// An error from an adapter, classified by [`ErrorKind`] at the adapter's boundary.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct PortError {
    /// Whose fault it is.
    pub kind: ErrorKind,
    /// A one-line description.
    pub message: String,
    /// The underlying error, if any.
    #[source]
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl PortError {
    /// An error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), source: None }
    }

    /// The error for a non-200 answer from a model endpoint (`what`, e.g. "chat endpoint URL"):
    /// 401/403 are unauthorized, 429 and 5xx unavailable (with `Retry-After` seconds when
    /// given), anything else a rejected request. The message quotes the first 200 characters of
    /// the body.
    pub fn http_answer(what: &str, status: u16, retry_after: Option<&str>, body: &str) -> Self {
        let retry_after = retry_after
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(std::time::Duration::from_secs);
        let kind = match status {
            401 | 403 => ErrorKind::Unauthorized,
            429 | 500..=599 => ErrorKind::Unavailable { retry_after },
            _ => ErrorKind::InvalidInput,
        };
        let detail: String = body.chars().take(200).collect();
        Self::new(kind, format!("{what} answered {status}: {detail}"))
    }

    /// The error of a change the store had no room for: nothing of it was made.
    pub fn storage_full(detail: &str) -> Self {
        Self::new(
            ErrorKind::StorageFull,
            format!(
                "storage full ({detail}): the change was not made, nothing was written or \
                 deleted; free space or raise the limit, then retry"
            ),
        )
    }

    /// A storage backend's error classified as `kind`: a full store gets the message of
    /// [`PortError::storage_full`] with `full` as its detail, anything else the error's own.
    pub fn classified(
        kind: ErrorKind,
        error: impl std::error::Error + Send + Sync + 'static,
        full: &str,
    ) -> Self {
        let message = match kind {
            ErrorKind::StorageFull => Self::storage_full(full).message,
            _ => error.to_string(),
        };
        Self { kind, message, source: Some(Box::new(error)) }
    }

    /// An internal error wrapping `source`.
    pub fn internal(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self { kind: ErrorKind::Internal, message: message.into(), source: Some(Box::new(source)) }
    }
}

/// A vector and the embedder that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedded {
    /// The embedder id.
    pub model: String,
    /// The vector; its length is the dimension count.
    pub vector: Vec<f32>,
    /// The embedder's calibration, when it has one: a write compares its statement with the
    /// stored ones in meaning (without the notebook's common direction) on its scale.
    pub calibration: Option<std::sync::Arc<crate::calibration::Calibration>>,
}

/// A record's vector from an embedder's refining encoder, with the content it was made from.
#[derive(Debug, Clone)]
pub struct Refined {
    /// The record.
    pub id: MemoryId,
    /// The content the vector was made from.
    pub content: String,
    /// The vector, under the embedder's id (the space the write path's vectors are in).
    pub vector: Embedded,
}

/// A record to write: its new id, the validated candidate and its vector.
#[derive(Debug, Clone)]
pub struct NewRecord {
    /// Id to give the record if it is stored.
    pub id: MemoryId,
    /// The validated statement.
    pub candidate: Candidate,
    /// Its embedding, if an embedder is configured.
    pub embedding: Option<Embedded>,
}

/// What a write did.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteReceipt {
    /// The decision taken inside the transaction.
    pub decision: Decision,
    /// The stored record's id (the new one, or the existing one when skipped).
    pub id: Option<MemoryId>,
}

/// A new version of a record's content.
#[derive(Debug, Clone)]
pub struct Edit {
    /// The new, validated content.
    pub content: String,
    /// Its embedding.
    pub embedding: Option<Embedded>,
    /// The sensitivity the new content has, when screening decided it (`None` keeps the
    /// record's).
    pub sensitivity: Option<Sensitivity>,
    /// Why the policy gate holds the new version for the user's confirmation, if it does:
    /// the record becomes `pending`.
    pub hold: Option<ReasonCode>,
    /// The record's new metadata, replacing its metadata (`None` keeps it). With the same
    /// content, only the metadata changes: no new version is kept.
    pub metadata: Option<crate::record::Metadata>,
    /// The record's new expiry (`Some(None)` removes it; `None` keeps it), validated: after
    /// the record's start. With the same content, no new version is kept.
    pub expires_at: Option<Option<Timestamp>>,
}

impl Edit {
    /// An edit the gate lets through, keeping the record's sensitivity, metadata and expiry.
    pub fn new(content: impl Into<String>, embedding: Option<Embedded>) -> Self {
        Self {
            content: content.into(),
            embedding,
            sensitivity: None,
            hold: None,
            metadata: None,
            expires_at: None,
        }
    }
}

/// Filters for listing a user's records.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only this kind.
    pub kind: Option<Kind>,
    /// Only this status (default: every status).
    pub status: Option<Status>,
    /// Only this scope.
    pub scope: Option<Scope>,
    /// Only records of this conversation session.
    pub session: Option<String>,
    /// Include records past their expiry.
    pub include_expired: bool,
}

/// A record with its version history and the older records it superseded.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct History {
    /// The record as it is now.
    pub memory: Memory,
    /// Earlier versions of this record, oldest first.
    pub versions: Vec<MemoryVersion>,
    /// Records this one superseded, directly or transitively, newest first.
    pub superseded: Vec<Memory>,
}

/// A record as exported: every field, the vector, and its version history.
///
/// Serialized in export files: changing it is an export-format change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExportedMemory {
    /// The record, with `embedding.vector` present when it has one.
    #[serde(flatten)]
    pub memory: Memory,
    /// Earlier versions, oldest first.
    pub history: Vec<MemoryVersion>,
}

/// Who deletes and when, with what the receipt needs that the store cannot know.
#[derive(Debug, Clone)]
pub struct DeletionRequest<'a> {
    /// When.
    pub now: Timestamp,
    /// Who asks (`cli`, `mcp`, `http:<key id>`).
    pub actor: &'a str,
    /// The receipt's id (made by the caller).
    pub receipt_id: String,
    /// How long the operator keeps backups (the receipt says until when they hold it).
    pub backup_retention: Option<Ttl>,
    /// What else remains that the caller knows of (a deleted user's contributions that
    /// shared spaces keep), added to the receipt's remains.
    pub remains: Vec<crate::ledger::Remnant>,
}

/// What an import stored and what the deletion ledger kept out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// Records stored.
    pub count: usize,
    /// Records left out because the user had asked to forget them (by id or statement).
    pub forgotten: Vec<MemoryId>,
}

/// What an audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    /// A record was stored as active.
    Added,
    /// A record was stored as the new value of a key.
    Updated,
    /// A record was replaced by a newer value.
    Superseded,
    /// A write was skipped as a duplicate.
    Skipped,
    /// A record was stored as pending.
    Pending,
    /// A write was refused.
    Refused,
    /// A pending record was confirmed.
    Confirmed,
    /// A pending record was rejected.
    Rejected,
    /// A record's content was edited.
    Edited,
    /// A record was forgotten.
    Forgotten,
    /// A record expired and was removed.
    Expired,
    /// A record was imported.
    Imported,
    /// The user's settings changed.
    SettingsChanged,
    /// A run was started.
    RunStarted,
    /// A run was ended and its state deleted.
    RunEnded,
}

impl AuditAction {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Added => "added",
            AuditAction::Updated => "updated",
            AuditAction::Superseded => "superseded",
            AuditAction::Skipped => "skipped",
            AuditAction::Pending => "pending",
            AuditAction::Refused => "refused",
            AuditAction::Confirmed => "confirmed",
            AuditAction::Rejected => "rejected",
            AuditAction::Edited => "edited",
            AuditAction::Forgotten => "forgotten",
            AuditAction::Expired => "expired",
            AuditAction::Imported => "imported",
            AuditAction::SettingsChanged => "settings_changed",
            AuditAction::RunStarted => "run_started",
            AuditAction::RunEnded => "run_ended",
        }
    }
}

impl fmt::Display for AuditAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One audit entry. It never holds memory content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuditEntry {
    /// When.
    pub at: Timestamp,
    /// What happened.
    pub action: AuditAction,
    /// Which record, if any.
    pub memory_id: Option<MemoryId>,
    /// The reason code, if any.
    pub reason: Option<ReasonCode>,
    /// Who or what did it (e.g. `cli`, a key id, an extractor).
    pub actor: String,
    /// Which run, for run entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// What a store supports beyond the required operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreCaps {
    /// Lexical (BM25) search.
    pub full_text: bool,
    /// Vector similarity search.
    pub vectors: bool,
    /// Deleted text is overwritten in the underlying files when a deletion commits.
    pub secure_delete: bool,
}

/// A user's memories: the write path, reads, review, edits, complete deletion with its ledger, expiry, import and export, search and last-used marks.
pub trait MemoryStore: Send + Sync {
    /// What this store supports.
    fn capabilities(&self) -> StoreCaps;

    /// Atomically reads the candidate's neighbours, asks `decide`, and applies the decision
    /// (insert, supersede, skip) with its audit entry, in one transaction.
    fn write(
        &self,
        who: &UserRef,
        record: NewRecord,
        now: Timestamp,
        actor: &str,
        decide: &dyn Fn(&Candidate, &WriteContext) -> Decision,
    ) -> Result<WriteReceipt, PortError> {
        let mut receipts = self.write_batch(who, vec![record], now, actor, decide)?;
        receipts
            .pop()
            .ok_or_else(|| PortError::new(ErrorKind::Internal, "write returned no receipt"))
    }

    /// Writes several records in order, in one transaction: each is decided against the
    /// stored records and the ones written before it in the batch. All or nothing.
    fn write_batch(
        &self,
        who: &UserRef,
        records: Vec<NewRecord>,
        now: Timestamp,
        actor: &str,
        decide: &dyn Fn(&Candidate, &WriteContext) -> Decision,
    ) -> Result<Vec<WriteReceipt>, PortError> {
        self.write_stream(who, &mut records.into_iter().map(Ok), now, actor, decide)
    }

    /// [`MemoryStore::write_batch`] over records taken from `records` while the transaction
    /// runs, so that whoever prepares them can go on beside it. The first `Err` it yields
    /// ends the transaction with that error, and nothing of it is written.
    fn write_stream(
        &self,
        who: &UserRef,
        records: &mut dyn Iterator<Item = Result<NewRecord, PortError>>,
        now: Timestamp,
        actor: &str,
        decide: &dyn Fn(&Candidate, &WriteContext) -> Decision,
    ) -> Result<Vec<WriteReceipt>, PortError>;

    /// One record by id, unless expired at `now`.
    fn get(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<Memory>, PortError>;

    /// The user's records matching `filter`, newest first.
    fn list(
        &self,
        who: &UserRef,
        filter: &ListFilter,
        now: Timestamp,
    ) -> Result<Vec<Memory>, PortError>;

    /// A record's versions and supersession chain, unless expired at `now`.
    fn history(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<History>, PortError>;

    /// Writes a new version of an unexpired active or pending record; the old version is kept
    /// in history. `Ok(None)` when the id does not exist for `who`.
    fn edit(
        &self,
        who: &UserRef,
        id: &MemoryId,
        edit: Edit,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Memory>, PortError>;

    /// Makes a pending record active because the user confirmed it: a keyed record supersedes
    /// the active value of its key, and a sensitive record gets a consent receipt. Returns the
    /// ids it superseded; `Ok(None)` when the id does not exist for `who` (or has expired); a
    /// record that is not pending is a `Conflict`.
    fn confirm(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Vec<MemoryId>>, PortError>;

    /// [`MemoryStore::confirm`] for a record of a shared space (`space` is its notebook's
    /// owner) that maintainer `approver` approved: the record's approval names them, with
    /// when and through which channel (`actor`).
    fn approve(
        &self,
        space: &UserRef,
        id: &MemoryId,
        approver: &str,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Vec<MemoryId>>, PortError>;

    /// Renames author or approver `from` to `to` on every record of the shared space
    /// `space` (a deleted user's contributions stay, attributed to a forgotten author), in
    /// one transaction; returns how many records changed.
    fn reattribute(&self, space: &UserRef, from: &str, to: &str) -> Result<usize, PortError>;

    /// Completely deletes a pending record the user rejected. `Ok(false)` when the id does
    /// not exist for `who`; a record that is not pending is a `Conflict`.
    /// The deletion leaves tombstones and a receipt in the ledger, like [`MemoryStore::forget`].
    fn reject(
        &self,
        who: &UserRef,
        id: &MemoryId,
        request: &DeletionRequest<'_>,
    ) -> Result<bool, PortError>;

    /// Completely deletes a record, its versions, its index entries and vector, every older
    /// record it superseded and every record derived from them; leaves a content-free
    /// tombstone of each in the deletion ledger and returns the receipt (`Ok(None)` when the
    /// id does not exist).
    fn forget(
        &self,
        who: &UserRef,
        id: &MemoryId,
        request: &DeletionRequest<'_>,
    ) -> Result<Option<DeletionReceipt>, PortError> {
        self.forget_each(who, std::slice::from_ref(id), request)
    }

    /// [`MemoryStore::forget`] for several records in one transaction: all of them go, or none;
    /// one receipt (scope `memory` for one id, `selection` for several) covers them all.
    /// Ids that do not exist are skipped; `Ok(None)` when none does.
    fn forget_each(
        &self,
        who: &UserRef,
        ids: &[MemoryId],
        request: &DeletionRequest<'_>,
    ) -> Result<Option<DeletionReceipt>, PortError>;

    /// Completely deletes every record and run of the user, leaving tombstones and the
    /// receipt (the ledger itself outlives the account).
    fn forget_all(
        &self,
        who: &UserRef,
        request: &DeletionRequest<'_>,
    ) -> Result<DeletionReceipt, PortError>;

    /// The user's deletion receipts, newest first, at most `limit`.
    fn deletions(&self, who: &UserRef, limit: usize) -> Result<Vec<DeletionReceipt>, PortError>;

    /// Completely deletes every record of `tenant` (or of one user of it) expired at `now`.
    fn expire(
        &self,
        tenant: &str,
        user_id: Option<&str>,
        now: Timestamp,
        actor: &str,
    ) -> Result<Vec<MemoryId>, PortError>;

    /// Every record of the user, with vectors and history, oldest first.
    fn export(&self, who: &UserRef) -> Result<Vec<ExportedMemory>, PortError>;

    /// Inserts exported records for the user in one transaction; a record whose id already
    /// exists is a `Conflict` and nothing is imported. A record the user asked to forget (its
    /// id or its statement is in the deletion ledger) is left out unless `allow_forgotten`.
    fn import(
        &self,
        who: &UserRef,
        records: Vec<ExportedMemory>,
        now: Timestamp,
        actor: &str,
        allow_forgotten: bool,
    ) -> Result<Imported, PortError>;

    /// Collects the signals of every retrievable record of the user (see [`SearchFilter`])
    /// for one query — BM25F over the record and its conversational context, BM25 of its
    /// session, cosine to the query vector, speaker and date — lets `select` rank them, and
    /// returns the selected records in `select`'s order.
    fn search(
        &self,
        who: &UserRef,
        query: &SearchQuery<'_>,
        now: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Result<Vec<Found>, PortError> {
        let ranked = self.rank(who, query, now, select)?;
        self.read_ranked(who, &ranked, now)
    }

    /// [`MemoryStore::search`] without reading the records: what `select` chose, in its
    /// order, by place. A search over several notebooks ranks each and reads only the rows
    /// that made the merged list.
    fn rank(
        &self,
        who: &UserRef,
        query: &SearchQuery<'_>,
        now: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Result<Vec<Ranked>, PortError>;

    /// Reads the records `ranked` names, in its order. Only the user's own records that are
    /// still retrievable at `now` (active, unexpired) are read: one removed since it was
    /// ranked is left out, and a place reused by anyone else's record reads as nothing.
    fn read_ranked(
        &self,
        who: &UserRef,
        ranked: &[Ranked],
        now: Timestamp,
    ) -> Result<Vec<Found>, PortError>;

    /// The user's records whose vector the write path made and no refining encoder has
    /// replaced yet (see [`Embedder::refine`]), oldest first, at most `limit`.
    fn unrefined(&self, who: &UserRef, limit: usize) -> Result<Vec<Memory>, PortError>;

    /// Replaces the vectors of the user's records by refined ones, in one transaction, each
    /// only while the record still holds the content its vector was made from (an edit
    /// since, or a deletion, leaves it out); returns how many were replaced.
    fn put_refined(&self, who: &UserRef, refined: &[Refined]) -> Result<usize, PortError>;

    /// Records that `ids` were used in a response at `now` (their `last_used_at`), all of them
    /// or none: returns the ids the user has no record of, and when there are any, changes
    /// nothing.
    fn mark_used(
        &self,
        who: &UserRef,
        ids: &[MemoryId],
        now: Timestamp,
    ) -> Result<Vec<MemoryId>, PortError>;
}

/// A user's settings (the memory switch).
pub trait SettingsStore: Send + Sync {
    /// Reads the user's settings (defaults when never set).
    fn settings(&self, who: &UserRef) -> Result<UserSettings, PortError>;

    /// Replaces the user's settings.
    fn set_settings(
        &self,
        who: &UserRef,
        settings: UserSettings,
        now: Timestamp,
        actor: &str,
    ) -> Result<(), PortError>;
}

/// The audit trail of what happened to a user's memories and runs (never their content).
pub trait AuditLog: Send + Sync {
    /// The user's audit entries, newest first, at most `limit`.
    fn audit(&self, who: &UserRef, limit: usize) -> Result<Vec<AuditEntry>, PortError>;
}

/// API keys of tenants (only their hashes are kept).
pub trait KeyStore: Send + Sync {
    /// Stores a new API key.
    fn create_key(&self, key: &ApiKey) -> Result<(), PortError>;

    /// The unrevoked key with this hash, if any.
    fn find_key(&self, key_hash: &str) -> Result<Option<ApiKey>, PortError>;

    /// A tenant's keys, newest first.
    fn list_keys(&self, tenant: &str) -> Result<Vec<ApiKey>, PortError>;

    /// Whether any tenant has a key that is not revoked (a server without one answers every
    /// request 401).
    fn has_live_keys(&self) -> Result<bool, PortError>;

    /// Revokes a tenant's key; false when the tenant has no such key.
    fn revoke_key(&self, tenant: &str, id: &str, now: Timestamp) -> Result<bool, PortError>;

    /// Stores a one-time sign-in link of the memory panel (only its hash).
    fn create_sign_in(&self, link: &SignInLink) -> Result<(), PortError>;

    /// Redeems a sign-in link once: its user when the link exists, has not expired and was
    /// not used, marking it used in the same statement; `None` otherwise (a second redemption
    /// of one link finds nothing).
    fn redeem_sign_in(&self, hash: &str, now: Timestamp) -> Result<Option<UserRef>, PortError>;
}

/// A one-time sign-in link of the memory panel: who it signs in and until when. Only the
/// hash of its secret is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct SignInLink {
    /// Hex SHA-256 of the link's secret.
    pub hash: String,
    /// The user it signs in.
    pub who: UserRef,
    /// When it was made.
    pub created_at: Timestamp,
    /// When it stops working.
    pub expires_at: Timestamp,
}

/// Runs: the working memory of one task of a user.
pub trait RunStore: Send + Sync {
    /// Stores a new run of the user (its id must be new).
    fn create_run(&self, who: &UserRef, run: &Run, actor: &str) -> Result<(), PortError>;

    /// One of the user's runs; `Ok(None)` when the user has no run with this id.
    fn run(&self, who: &UserRef, id: &str) -> Result<Option<Run>, PortError>;

    /// The user's runs, oldest first.
    fn runs(&self, who: &UserRef) -> Result<Vec<Run>, PortError>;

    /// Reads a run, lets `change` modify it and stores the result, in one transaction; an
    /// error from `change` leaves the run as it was. `Ok(None)` when the user has no such run.
    fn update_run(
        &self,
        who: &UserRef,
        id: &str,
        change: &dyn Fn(&mut Run) -> Result<(), PortError>,
    ) -> Result<Option<Run>, PortError>;

    /// Completely deletes a run's state, leaving one audit entry; returns its last state.
    fn end_run(
        &self,
        who: &UserRef,
        id: &str,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Run>, PortError>;
}

/// Shared spaces of a tenant and their members (SPEC §5b). A space's records are a notebook
/// of their own (owner [`UserRef::space`]), kept by [`MemoryStore`].
pub trait SpaceStore: Send + Sync {
    /// Creates a space; a space with its id in the tenant already is a `Conflict`.
    fn create_space(&self, space: &crate::space::Space) -> Result<(), PortError>;

    /// One space of the tenant.
    fn space(&self, tenant: &str, id: &str) -> Result<Option<crate::space::Space>, PortError>;

    /// Every space of the tenant, by id.
    fn spaces(&self, tenant: &str) -> Result<Vec<crate::space::Space>, PortError>;

    /// Deletes a space and its memberships (its records are forgotten first, through
    /// [`MemoryStore::forget_all`] of its notebook); whether it existed.
    fn delete_space(&self, tenant: &str, id: &str) -> Result<bool, PortError>;

    /// Gives a user of the tenant a role in a space (replacing their role there); `NotFound`
    /// when the space does not exist.
    fn put_member(&self, tenant: &str, member: &crate::space::Member) -> Result<(), PortError>;

    /// Removes a member from a space; whether they were one.
    fn remove_member(&self, tenant: &str, space: &str, user_id: &str) -> Result<bool, PortError>;

    /// A space's members, by user id.
    fn members(&self, tenant: &str, space: &str) -> Result<Vec<crate::space::Member>, PortError>;

    /// The spaces `who` is a member of, with their role, by space id.
    fn memberships(
        &self,
        who: &UserRef,
    ) -> Result<Vec<(crate::space::Space, crate::space::Role)>, PortError>;
}

/// Figures about the whole store, for operators.
pub trait StoreMetrics: Send + Sync {
    /// How many memories are stored, by status, across all tenants (for operators' metrics).
    fn count_by_status(&self) -> Result<Vec<(Status, u64)>, PortError>;

    /// Notebooks of any tenant holding records whose vectors are not refined yet, at most
    /// `limit`: what a refiner starting in a new process takes up (owners only, no content).
    fn unrefined_notebooks(&self, limit: usize) -> Result<Vec<UserRef>, PortError>;
}

/// Persistent storage: every port of a store, by concept. Each method takes the
/// [`UserRef`] it acts for first (or a tenant, for tenant-wide jobs).
pub trait Store:
    MemoryStore + SettingsStore + AuditLog + KeyStore + RunStore + SpaceStore + StoreMetrics
{
}

impl<T> Store for T where
    T: MemoryStore + SettingsStore + AuditLog + KeyStore + RunStore + SpaceStore + StoreMetrics
{
}

/// Which records a search may return. Only `active`, unexpired records are ever candidates.
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    /// Only this kind.
    pub kind: Option<Kind>,
    /// Only this scope.
    pub scope: Option<Scope>,
    /// Leave out `sensitive` records.
    pub exclude_sensitive: bool,
}

/// A stored API key: who it acts for. Only the key's hash is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApiKey {
    /// The key's public id.
    pub id: String,
    /// The tenant it belongs to.
    pub tenant: String,
    /// The only user it may act for; `None` for a tenant key (any user of the tenant).
    pub user_id: Option<String>,
    /// Whether it may manage the tenant (keys, every user).
    pub admin: bool,
    /// Requests per second allowed to this key (in bursts of twice that, at least 100);
    /// `None`: the server's default.
    pub rate: Option<f64>,
    /// Hex SHA-256 of the secret key.
    #[serde(skip_serializing)]
    pub key_hash: String,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it was revoked, if it was.
    pub revoked_at: Option<Timestamp>,
}

/// What a search asks a store for.
#[derive(Debug, Clone, Copy)]
pub struct SearchQuery<'a> {
    /// Lexical terms (plain words; the store's tokenizer stems them).
    pub terms: &'a [String],
    /// Words of the query that modify a noun, each with that noun
    /// ([`crate::retrieval::modifiers`]): such a word alone weighs less.
    pub modifiers: &'a [(String, String)],
    /// The query's vector, from the store's embedder.
    pub vector: Option<&'a Embedded>,
    /// The embedder's common direction (its calibration mean): cosines are taken without
    /// the notebook's common direction, estimated with it as a prior (see
    /// [`crate::calibration`]). `None` compares raw cosines.
    pub common: Option<&'a [f32]>,
    /// Which records may be returned.
    pub filter: &'a SearchFilter,
    /// How many notebooks the search ranks together and merges by relevance, this one among
    /// them (1 for a notebook ranked alone). Each needs to offer only its share of the best
    /// candidates, so a large notebook ranked among others takes fewer to its exact pass.
    pub notebooks: usize,
}

impl SearchQuery<'_> {
    /// The query's words, as the lexical index reads them.
    pub fn words(&self) -> crate::retrieval::QueryWords<'_> {
        crate::retrieval::QueryWords { terms: self.terms, modifiers: self.modifiers }
    }
}

/// A record a search ranked, before it is read: its place among its owner's rows (a store's
/// row id, meaningful to that store only) and its signals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// The record's row in the store.
    pub row: i64,
    /// The selection's score and explanation.
    pub fused: Fused,
    /// Its BM25F with context.
    pub bm25: f64,
    /// Its cosine to the query vector.
    pub cosine: f64,
    /// The dimensions of its vector (0: it has none).
    pub dims: usize,
}

/// A record a search selected, with its signals.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The record.
    pub memory: Memory,
    /// Its fused score and gate evidence.
    pub fused: Fused,
    /// Its BM25F score.
    pub bm25: f64,
    /// Its cosine to the query.
    pub cosine: f64,
}

/// A chat model that answers in JSON matching a schema (OpenAI-compatible chat completions
/// with `response_format: json_schema`, strict).
pub trait ChatModel: Send + Sync {
    /// The model's id (provider and name), recorded with what it produces.
    fn id(&self) -> &str;

    /// Sends a system and a user message; returns the parsed JSON answer. The caller
    /// validates it: a model only proposes.
    fn complete_json(
        &self,
        system: &str,
        user: &str,
        schema_name: &str,
        schema: &serde_json::Value,
    ) -> Result<serde_json::Value, PortError>;
}

/// Turns text into vectors.
pub trait Embedder: Send + Sync {
    /// A stable id naming the model and its version; stored with every vector.
    fn id(&self) -> &str;

    /// The vector length.
    fn dims(&self) -> usize;

    /// Embeds each text; the output has one unit-length vector per input.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError>;

    /// Embeds search queries into the same space as [`Embedder::embed`]'s vectors. A record
    /// is embedded once, on the write path, where cost adds up; a query is one short text
    /// per search, so an embedder may give queries a stronger encoder whose vectors it maps
    /// into its records' space. By default, as records.
    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        self.embed(texts)
    }

    /// The model's calibration, when it has one (see [`crate::calibration`]): its common
    /// direction, which the read path removes from cosines, and its cosine scale for
    /// unrelated texts, by which it scales semantic evidence so its relevance gate means the
    /// same for every model. `None` compares raw cosines on the configured scale.
    fn calibration(&self) -> Option<&crate::calibration::Calibration> {
        None
    }

    /// The calibration of its records alone: the common direction and ranking's cosine
    /// scale, which the write path uses. By default [`Embedder::calibration`]; an embedder
    /// with a query encoder answers it without loading that encoder.
    fn record_calibration(&self) -> Option<&crate::calibration::Calibration> {
        self.calibration()
    }

    /// Embeds stored records again with a stronger encoder whose vectors live in the same
    /// space as [`Embedder::embed`]'s, or `None` when it has none. The write path embeds with
    /// `embed`, fast enough for thousands of records a second; a refining encoder is too
    /// slow for that and runs later, off the write path, replacing each record's vector.
    /// Asked with no texts, it says whether it has one without loading it.
    fn refine(&self, texts: &[&str]) -> Option<Result<Vec<Vec<f32>>, PortError>> {
        let _ = texts;
        None
    }

    /// Whether it embeds on this machine's processor (true), or waits on a service.
    fn in_process(&self) -> bool {
        true
    }
}

/// Reason codes paired with the audit action a decision produces.
pub fn audit_action_for(decision: &Decision) -> (AuditAction, Option<ReasonCode>) {
    match decision {
        Decision::Refuse(reason) => (AuditAction::Refused, Some(*reason)),
        Decision::Skip { reason, .. } => (AuditAction::Skipped, Some(*reason)),
        Decision::Insert { status: Status::Pending, reason, .. } => {
            (AuditAction::Pending, Some(*reason))
        }
        Decision::Insert { supersede, reason, .. } if !supersede.is_empty() => {
            (AuditAction::Updated, Some(*reason))
        }
        Decision::Insert { reason, .. } => (AuditAction::Added, Some(*reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_answers_map_to_error_kinds() {
        let kind = |status, retry| PortError::http_answer("chat endpoint", status, retry, "").kind;
        assert_eq!(kind(401, None), ErrorKind::Unauthorized);
        assert_eq!(kind(403, None), ErrorKind::Unauthorized);
        assert_eq!(
            kind(429, Some(" 7 ")),
            ErrorKind::Unavailable { retry_after: Some(std::time::Duration::from_secs(7)) }
        );
        assert_eq!(kind(503, Some("soon")), ErrorKind::Unavailable { retry_after: None });
        assert_eq!(kind(400, None), ErrorKind::InvalidInput);
        let long = "x".repeat(500);
        let error = PortError::http_answer("chat endpoint", 400, None, &long);
        assert_eq!(error.message, format!("chat endpoint answered 400: {}", "x".repeat(200)));
    }
}
