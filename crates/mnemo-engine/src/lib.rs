//! mnemo's store engine: every storage rule written once, over narrow backends.
//!
//! [`Engine`] implements the store's ports ([`mnemo_core::ports::Store`]) for any [`Backend`]: the write path (neighbours,
//! the core's `decide`, then its effects: supersede, insert, link, audit), review (confirm,
//! reject), edits, complete deletion with the deletion ledger (tombstones and receipts),
//! expiry, import and export, runs and last-used marks. A backend only provides
//! transactions over one user's rows with narrow operations ([`Tx`]); it owns connections,
//! locking, its index cache and scrubbing, and holds no rule. [`memory::MemoryBackend`] is a
//! backend in memory that tests the engine without SQL.

mod backend;
pub mod columns;
pub mod memory;

use std::collections::HashSet;

use mnemo_core::ledger::{
    Counted, DeletionReceipt, DeletionScope, ForgottenMatch, Tombstone, select,
};
use mnemo_core::lifecycle::{self, Candidate, Decision, WriteContext};
use mnemo_core::policy::{ReasonCode, UserSettings};
use mnemo_core::ports::{
    ApiKey, AuditAction, AuditEntry, AuditLog, DeletionRequest, Edit, Embedded, ExportedMemory,
    Found, History, Imported, KeyStore, ListFilter, MemoryStore, NewRecord, PortError, Ranked,
    Refined, RunStore, SearchQuery, SettingsStore, SignInLink, SpaceStore, StoreCaps, StoreMetrics,
    WriteReceipt, audit_action_for,
};
use mnemo_core::retrieval::{Fused, Signals};
use mnemo_core::run::Run;
use mnemo_core::space::{Member, Role, Space};
use mnemo_core::{Approval, ErrorKind, Memory, MemoryId, Status, Timestamp, UserRef};
use mnemo_index::{cosine_of, quantize};

pub use backend::{Backend, Commit, NEIGHBOURS, Neighbours, Owner, RowId, Tx};

/// The store: a backend and the rules over it.
#[derive(Debug)]
pub struct Engine<B> {
    backend: B,
}

impl<B> Engine<B> {
    /// The engine over `backend`.
    pub fn new(backend: B) -> Self {
        Self { backend }
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }
}

impl<B> std::ops::Deref for Engine<B> {
    type Target = B;

    fn deref(&self) -> &B {
        &self.backend
    }
}

fn conflict(message: impl Into<String>) -> PortError {
    PortError::new(ErrorKind::Conflict, message)
}

/// Who acts, for whom and when: the fixed part of the audit entries of one operation.
struct Auditor<'a> {
    user: &'a str,
    now: Timestamp,
    actor: &'a str,
}

impl<'a> Auditor<'a> {
    fn new(who: &'a UserRef, now: Timestamp, actor: &'a str) -> Self {
        Self { user: who.user_id(), now, actor }
    }

    fn log(
        &self,
        tx: &mut dyn Tx,
        action: AuditAction,
        memory_id: Option<&MemoryId>,
        reason: Option<ReasonCode>,
    ) -> Result<(), PortError> {
        let entry = AuditEntry {
            at: self.now,
            action,
            memory_id: memory_id.cloned(),
            reason,
            actor: self.actor.to_owned(),
            run_id: None,
        };
        tx.audit(self.user, &entry)
    }

    fn log_run(&self, tx: &mut dyn Tx, action: AuditAction, run_id: &str) -> Result<(), PortError> {
        let entry = AuditEntry {
            at: self.now,
            action,
            memory_id: None,
            reason: None,
            actor: self.actor.to_owned(),
            run_id: Some(run_id.to_owned()),
        };
        tx.audit(self.user, &entry)
    }
}

/// Refuses a change while the user's memory is switched off (read in the change's own
/// transaction, so a switch made meanwhile is honoured).
fn require_memory_on(tx: &mut dyn Tx) -> Result<(), PortError> {
    if tx.settings()?.memory_enabled { Ok(()) } else { Err(conflict(lifecycle::MEMORY_OFF_EDIT)) }
}

impl<B: Backend> Engine<B> {
    /// Makes a pending record active (see [`MemoryStore::confirm`]); `approver` is the
    /// maintainer who approved a shared record, named in its approval.
    fn confirm_as(
        &self,
        who: &UserRef,
        id: &MemoryId,
        approver: Option<&str>,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Vec<MemoryId>>, PortError> {
        self.backend.transaction(Owner::User(who), Commit::Write, &mut |tx| {
            let Some((row, memory)) = tx.find(id)? else { return Ok(None) };
            if memory.is_expired(now) {
                return Ok(None);
            }
            if let Some(refusal) = memory.review_refusal("confirmed") {
                return Err(conflict(refusal));
            }
            require_memory_on(tx)?;
            let log = Auditor::new(who, now, actor);
            let mut superseded = Vec::new();
            if let Some((subject, attribute)) = memory.key() {
                let scope = memory.scope.to_string();
                for (_, old) in tx.active_of_key(&scope, subject, attribute)? {
                    tx.supersede(&old.id, id, now)?;
                    log.log(tx, AuditAction::Superseded, Some(&old.id), None)?;
                    superseded.push(old.id);
                }
            }
            let mut confirmed = memory.clone();
            confirmed.consent = memory.consent_on_confirm(now, actor);
            confirmed.status = Status::Active;
            confirmed.updated_at = now;
            if let (Some(shared), Some(by)) = (confirmed.shared.as_mut(), approver) {
                shared.approval =
                    Some(Approval { by: by.to_owned(), at: now, via: actor.to_owned() });
            }
            tx.update(row, &confirmed)?;
            log.log(tx, AuditAction::Confirmed, Some(id), None)?;
            Ok(Some(superseded))
        })
    }

    /// The tombstone of the candidate's statement, if the user asked to forget it.
    fn forgotten(
        &self,
        tx: &mut dyn Tx,
        candidate: &Candidate,
    ) -> Result<Option<ForgottenMatch>, PortError> {
        let key = self.backend.ledger_key();
        let statement = key.statement_digest(&candidate.content);
        let source = candidate.source.source_ref.as_deref().map(|r| key.source_digest(r));
        tx.tombstone(&statement, source.as_deref())
    }

    /// Reads what the consistency rules compare a candidate with.
    fn write_context(
        &self,
        tx: &mut dyn Tx,
        state: WriteState,
        record: &NewRecord,
        now: Timestamp,
    ) -> Result<WriteContext, PortError> {
        let candidate = &record.candidate;
        let neighbours = tx.neighbours(candidate, record.embedding.as_ref(), now)?;
        let normalized = candidate.normalized_content();
        let same_content = neighbours
            .same_content
            .into_iter()
            .filter(|m| lifecycle::normalize(&m.content) == normalized)
            .collect();
        let (mut similar, mut related) = (Vec::new(), Vec::new());
        if let Some(embedded) = &record.embedding {
            let query = quantize(&embedded.vector);
            for (memory, vector) in neighbours.same_message {
                similar.push((memory, cosine_of(&query, &quantize(&vector))));
            }
        }
        for (memory, near) in neighbours.nearest {
            if let Some(score) = near.related {
                related.push((memory.id.clone(), score));
            }
            similar.push((memory, near.cosine));
        }
        let forgotten = if state.has_tombstones { self.forgotten(tx, candidate)? } else { None };
        Ok(WriteContext {
            settings: state.settings,
            same_key: neighbours.same_key,
            same_content,
            similar,
            related,
            forgotten,
        })
    }

    /// Decides and applies one record inside a write transaction.
    #[allow(clippy::too_many_arguments)]
    fn write_one(
        &self,
        tx: &mut dyn Tx,
        who: &UserRef,
        state: WriteState,
        record: &NewRecord,
        now: Timestamp,
        actor: &str,
        decide: &dyn Fn(&Candidate, &WriteContext) -> Decision,
    ) -> Result<WriteReceipt, PortError> {
        let context = self.write_context(tx, state, record, now)?;
        let decision = decide(&record.candidate, &context);
        let (action, reason) = audit_action_for(&decision);
        let log = Auditor::new(who, now, actor);
        let id = match &decision {
            // Memory switched off means no trace at all, not even an audit line.
            Decision::Refuse(ReasonCode::MemoryDisabled) => {
                return Ok(WriteReceipt { decision, id: None });
            }
            Decision::Refuse(_) => None,
            Decision::Skip { existing, .. } => Some(existing.clone()),
            Decision::Insert { status, supersede, .. } => {
                let mut memory = record.candidate.clone().into_memory(
                    record.id.clone(),
                    who.tenant(),
                    who.user_id(),
                    *status,
                    now,
                );
                // Supersede first, so the unique active-key index never sees two.
                for old in supersede {
                    tx.supersede(old, &memory.id, now)?;
                    log.log(tx, AuditAction::Superseded, Some(old), reason)?;
                }
                memory.embedding = None;
                tx.insert(&memory, record.embedding.as_ref())?;
                Some(memory.id)
            }
        };
        log.log(tx, action, id.as_ref(), reason)?;
        Ok(WriteReceipt { decision, id })
    }

    /// Leaves the tombstones of records about to be removed; returns how many.
    fn bury(
        &self,
        tx: &mut dyn Tx,
        rows: &[RowId],
        request: &DeletionRequest<'_>,
    ) -> Result<u64, PortError> {
        let key = self.backend.ledger_key();
        let mut written = 0;
        for (row, memory) in tx.rows(rows)? {
            let earlier = tx.versions(row)?;
            let statements = std::iter::once(memory.content.as_str())
                .chain(earlier.iter().map(|v| v.content.as_str()));
            let source = memory.source.source_ref.as_deref();
            for tombstone in Tombstone::all_of(key, &memory.id, statements, source) {
                tx.put_tombstone(&tombstone, request.now, &request.receipt_id)?;
                written += 1;
            }
        }
        Ok(written)
    }

    /// Stores the receipt of a deletion and returns it.
    fn save_receipt(
        &self,
        tx: &mut dyn Tx,
        counted: Counted,
        request: &DeletionRequest<'_>,
    ) -> Result<DeletionReceipt, PortError> {
        let mut remains = self.backend.remains(request.now);
        remains.extend(request.remains.iter().cloned());
        let receipt = counted.receipt(request, remains);
        tx.put_receipt(&receipt)?;
        Ok(receipt)
    }
}

/// What a write transaction reads once for all its records: the user's settings (the
/// transaction keeps them from changing) and whether the user has any tombstone (no record
/// written adds one, so a user who never asked to forget anything has no statement to look
/// up in the ledger).
#[derive(Debug, Clone, Copy)]
struct WriteState {
    settings: UserSettings,
    has_tombstones: bool,
}

/// The records of a search's ranking, in its order, with their signals; a ranked record
/// missing from `memories` (changed or gone since the index ranked it) is left out.
pub fn found_in_order(
    ranked: &[Ranked],
    mut memories: std::collections::HashMap<RowId, Memory>,
) -> Vec<Found> {
    ranked
        .iter()
        .filter_map(|hit| {
            let memory = memories.remove(&hit.row)?;
            Some(Found { memory, fused: hit.fused, bm25: hit.bm25, cosine: hit.cosine })
        })
        .collect()
}

/// What a search may return, as the index filters it (`scope` is the filter's scope,
/// written out by the caller so the filter can borrow it).
pub fn scan_filter<'a>(
    query: &SearchQuery<'_>,
    now: Timestamp,
    scope: Option<&'a str>,
) -> mnemo_index::ScanFilter<'a> {
    mnemo_index::ScanFilter {
        now: now.as_millis(),
        kind: query.filter.kind,
        scope,
        exclude_sensitive: query.filter.exclude_sensitive,
    }
}

/// The vector an exported record carries, checked against its declared dimensions.
fn exported_vector(memory: &Memory) -> Result<Option<Embedded>, PortError> {
    let Some(info) = &memory.embedding else { return Ok(None) };
    match &info.vector {
        Some(vector) if vector.len() == info.dims as usize => Ok(Some(Embedded {
            model: info.model.clone(),
            vector: vector.clone(),
            calibration: None,
        })),
        _ => Err(PortError::new(
            ErrorKind::InvalidInput,
            format!("memory {}: embedding has no vector of {} dimensions", memory.id, info.dims),
        )),
    }
}

impl<B: Backend> MemoryStore for Engine<B> {
    fn capabilities(&self) -> StoreCaps {
        self.backend.capabilities()
    }

    fn write_stream(
        &self,
        who: &UserRef,
        records: &mut dyn Iterator<Item = Result<NewRecord, PortError>>,
        now: Timestamp,
        actor: &str,
        decide: &dyn Fn(&Candidate, &WriteContext) -> Decision,
    ) -> Result<Vec<WriteReceipt>, PortError> {
        self.backend.transaction(Owner::User(who), Commit::Write, &mut |tx| {
            let state =
                WriteState { settings: tx.settings()?, has_tombstones: tx.has_tombstones()? };
            let mut receipts = Vec::new();
            for record in &mut *records {
                receipts.push(self.write_one(tx, who, state, &record?, now, actor, decide)?);
            }
            Ok(receipts)
        })
    }

    fn get(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<Memory>, PortError> {
        let found = self.backend.read(who, &mut |tx| tx.find(id))?;
        Ok(found.map(|(_, m)| m).filter(|m| !m.is_expired(now)))
    }

    fn list(
        &self,
        who: &UserRef,
        filter: &ListFilter,
        now: Timestamp,
    ) -> Result<Vec<Memory>, PortError> {
        self.backend.read(who, &mut |tx| tx.list(filter, now))
    }

    fn history(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<History>, PortError> {
        self.backend.read(who, &mut |tx| {
            let Some((row, memory)) = tx.find(id)? else { return Ok(None) };
            if memory.is_expired(now) {
                return Ok(None);
            }
            let versions = tx.versions(row)?;
            let older: Vec<RowId> = tx
                .chain(row, false)?
                .into_iter()
                .map(|(r, _, _)| r)
                .filter(|r| *r != row)
                .collect();
            let mut superseded: Vec<Memory> =
                tx.rows(&older)?.into_iter().map(|(_, m)| m).collect();
            superseded.sort_by_key(|m| std::cmp::Reverse(m.created_at));
            Ok(Some(History { memory, versions, superseded }))
        })
    }

    fn edit(
        &self,
        who: &UserRef,
        id: &MemoryId,
        edit: Edit,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Memory>, PortError> {
        self.backend.transaction(Owner::User(who), Commit::Write, &mut |tx| {
            let Some((row, memory)) = tx.find(id)? else { return Ok(None) };
            if memory.is_expired(now) {
                return Ok(None);
            }
            if let Some(refusal) = memory.edit_refusal() {
                return Err(conflict(refusal));
            }
            require_memory_on(tx)?;
            let mut changed = memory.clone();
            // A change of metadata or expiry alone keeps the statement, and so its version.
            let same_statement = (edit.metadata.is_some() || edit.expires_at.is_some())
                && edit.content == memory.content;
            if !same_statement {
                tx.put_version(row, &memory.snapshot(now))?;
                changed.content.clone_from(&edit.content);
                changed.version += 1;
            }
            if let Some(metadata) = &edit.metadata {
                changed.metadata.clone_from(metadata);
            }
            if let Some(expires_at) = edit.expires_at {
                changed.expires_at = expires_at;
            }
            changed.updated_at = now;
            if edit.hold.is_some() {
                changed.status = Status::Pending;
            }
            changed.sensitivity = edit.sensitivity.unwrap_or(memory.sensitivity);
            tx.update(row, &changed)?;
            if !same_statement {
                tx.put_vector(row, edit.embedding.as_ref())?;
            }
            Auditor::new(who, now, actor).log(tx, AuditAction::Edited, Some(id), edit.hold)?;
            Ok(tx.find(id)?.map(|(_, m)| m))
        })
    }

    fn confirm(
        &self,
        who: &UserRef,
        id: &MemoryId,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Vec<MemoryId>>, PortError> {
        self.confirm_as(who, id, None, now, actor)
    }

    fn approve(
        &self,
        space: &UserRef,
        id: &MemoryId,
        approver: &str,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Vec<MemoryId>>, PortError> {
        self.confirm_as(space, id, Some(approver), now, actor)
    }

    fn reattribute(&self, space: &UserRef, from: &str, to: &str) -> Result<usize, PortError> {
        self.backend.transaction(Owner::User(space), Commit::Write, &mut |tx| {
            let mut changed = 0;
            for (row, mut memory) in tx.all()? {
                let Some(shared) = memory.shared.as_mut() else { continue };
                let mut touched = false;
                if shared.author == from {
                    shared.author = to.to_owned();
                    touched = true;
                }
                if let Some(approval) = shared.approval.as_mut().filter(|a| a.by == from) {
                    approval.by = to.to_owned();
                    touched = true;
                }
                if touched {
                    tx.update(row, &memory)?;
                    changed += 1;
                }
            }
            Ok(changed)
        })
    }

    fn reject(
        &self,
        who: &UserRef,
        id: &MemoryId,
        request: &DeletionRequest<'_>,
    ) -> Result<bool, PortError> {
        self.backend.transaction(Owner::User(who), Commit::Deletion, &mut |tx| {
            let Some((row, memory)) = tx.find(id)? else { return Ok(false) };
            if let Some(refusal) = memory.review_refusal("rejected") {
                return Err(conflict(refusal));
            }
            let tombstones = self.bury(tx, &[row], request)?;
            let removed = tx.delete(&[row])?;
            let counted = Counted {
                scope: DeletionScope::Rejected,
                memory_id: Some(id.clone()),
                removed_ids: vec![id.clone()],
                removed,
                tombstones,
            };
            self.save_receipt(tx, counted, request)?;
            Auditor::new(who, request.now, request.actor).log(
                tx,
                AuditAction::Rejected,
                Some(id),
                None,
            )?;
            Ok(true)
        })
    }

    fn forget_each(
        &self,
        who: &UserRef,
        ids: &[MemoryId],
        request: &DeletionRequest<'_>,
    ) -> Result<Option<DeletionReceipt>, PortError> {
        self.backend.transaction(Owner::User(who), Commit::Deletion, &mut |tx| {
            let selection = {
                let tx = std::cell::RefCell::new(&mut *tx);
                select(
                    ids,
                    |id| Ok::<_, PortError>(tx.borrow_mut().find(id)?.map(|(row, _)| row)),
                    |row, derived| {
                        let chain = tx.borrow_mut().chain(row, derived)?;
                        Ok(chain.into_iter().map(|(r, id, _)| (r, id)).collect())
                    },
                )?
            };
            let Some(selection) = selection else { return Ok(None) };
            let rows: Vec<RowId> = selection.doomed.iter().map(|(r, _)| *r).collect();
            let tombstones = self.bury(tx, &rows, request)?;
            let removed = tx.delete(&rows)?;
            let counted = Counted::of_selection(selection, removed, tombstones);
            let log = Auditor::new(who, request.now, request.actor);
            for gone in &counted.removed_ids {
                log.log(tx, AuditAction::Forgotten, Some(gone), None)?;
            }
            Ok(Some(self.save_receipt(tx, counted, request)?))
        })
    }

    fn forget_all(
        &self,
        who: &UserRef,
        request: &DeletionRequest<'_>,
    ) -> Result<DeletionReceipt, PortError> {
        self.backend.transaction(Owner::User(who), Commit::Deletion, &mut |tx| {
            let rows: Vec<RowId> = tx.all()?.into_iter().map(|(row, _)| row).collect();
            let tombstones = self.bury(tx, &rows, request)?;
            let mut removed = tx.delete(&rows)?;
            // Working memory goes with the rest of the user's data.
            let (runs, links) = tx.delete_rest_of_user()?;
            removed.runs += runs;
            removed.links += links;
            Auditor::new(who, request.now, request.actor).log(
                tx,
                AuditAction::Forgotten,
                None,
                None,
            )?;
            let counted = Counted {
                scope: if who.space_id().is_some() {
                    DeletionScope::Space
                } else {
                    DeletionScope::User
                },
                memory_id: None,
                removed_ids: Vec::new(),
                removed,
                tombstones,
            };
            self.save_receipt(tx, counted, request)
        })
    }

    fn deletions(&self, who: &UserRef, limit: usize) -> Result<Vec<DeletionReceipt>, PortError> {
        self.backend.receipts(who, limit)
    }

    fn expire(
        &self,
        tenant: &str,
        user_id: Option<&str>,
        now: Timestamp,
        actor: &str,
    ) -> Result<Vec<MemoryId>, PortError> {
        let owner = Owner::Tenant { tenant, user: user_id };
        self.backend.transaction(owner, Commit::Deletion, &mut |tx| {
            let mut gone: Vec<(RowId, MemoryId, String)> = Vec::new();
            let mut seen = HashSet::new();
            for row in tx.expired(now)? {
                if seen.contains(&row) {
                    continue;
                }
                for link in tx.chain(row, false)? {
                    if seen.insert(link.0) {
                        gone.push(link);
                    }
                }
            }
            let rows: Vec<RowId> = gone.iter().map(|(r, _, _)| *r).collect();
            tx.delete(&rows)?;
            let mut removed = Vec::with_capacity(gone.len());
            for (_, id, user) in gone {
                let entry = AuditEntry {
                    at: now,
                    action: AuditAction::Expired,
                    memory_id: Some(id.clone()),
                    reason: None,
                    actor: actor.to_owned(),
                    run_id: None,
                };
                tx.audit(&user, &entry)?;
                removed.push(id);
            }
            Ok(removed)
        })
    }

    fn export(&self, who: &UserRef) -> Result<Vec<ExportedMemory>, PortError> {
        self.backend.read(who, &mut |tx| {
            let rows = tx.all()?;
            let mut out = Vec::with_capacity(rows.len());
            for (row, mut memory) in rows {
                if let Some(info) = memory.embedding.as_mut() {
                    info.vector = tx.vector(row)?;
                }
                out.push(ExportedMemory { history: tx.versions(row)?, memory });
            }
            Ok(out)
        })
    }

    fn import(
        &self,
        who: &UserRef,
        records: Vec<ExportedMemory>,
        now: Timestamp,
        actor: &str,
        allow_forgotten: bool,
    ) -> Result<Imported, PortError> {
        // Superseded records first, so the active-key index holds at every step; they name
        // the record that replaced them, which may come later.
        let mut ordered: Vec<&ExportedMemory> = records.iter().collect();
        ordered.sort_by_key(|r| r.memory.status == Status::Active);
        let key = self.backend.ledger_key();
        self.backend.transaction(Owner::User(who), Commit::Write, &mut |tx| {
            let mut imported = Imported::default();
            let log = Auditor::new(who, now, actor);
            for record in &ordered {
                let mut memory = record.memory.clone();
                memory.tenant = who.tenant().to_owned();
                memory.user_id = who.user_id().to_owned();
                if !allow_forgotten
                    && tx.tombstoned(&memory.id, &key.statement_digest(&memory.content))?
                {
                    imported.forgotten.push(memory.id);
                    continue;
                }
                imported.count += 1;
                let embedded = exported_vector(&memory)?;
                let row = tx.insert(&memory, embedded.as_ref())?;
                for version in &record.history {
                    tx.put_version(row, version)?;
                }
                log.log(tx, AuditAction::Imported, Some(&memory.id), None)?;
            }
            Ok(imported)
        })
    }

    fn rank(
        &self,
        who: &UserRef,
        query: &SearchQuery<'_>,
        now: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Result<Vec<Ranked>, PortError> {
        self.backend.rank(who, query, now, select)
    }

    fn read_ranked(
        &self,
        who: &UserRef,
        ranked: &[Ranked],
        now: Timestamp,
    ) -> Result<Vec<Found>, PortError> {
        self.backend.read_ranked(who, ranked, now)
    }

    fn unrefined(&self, who: &UserRef, limit: usize) -> Result<Vec<Memory>, PortError> {
        self.backend.read(who, &mut |tx| {
            Ok(tx.unrefined(limit)?.into_iter().map(|(_, memory)| memory).collect())
        })
    }

    fn put_refined(&self, who: &UserRef, refined: &[Refined]) -> Result<usize, PortError> {
        if refined.is_empty() {
            return Ok(0);
        }
        self.backend.transaction(Owner::User(who), Commit::Write, &mut |tx| {
            let mut replaced = 0;
            for each in refined {
                match tx.find(&each.id)? {
                    Some((row, memory)) if memory.content == each.content => {
                        tx.put_refined(row, &each.vector)?;
                        replaced += 1;
                    }
                    _ => {}
                }
            }
            Ok(replaced)
        })
    }

    fn mark_used(
        &self,
        who: &UserRef,
        ids: &[MemoryId],
        now: Timestamp,
    ) -> Result<Vec<MemoryId>, PortError> {
        /// Rolls the marks back when some ids do not exist: all or nothing.
        struct Missing(Vec<MemoryId>);
        let mut missing = Missing(Vec::new());
        let outcome = self.backend.transaction(Owner::User(who), Commit::Light, &mut |tx| {
            let mut absent = Vec::new();
            for id in ids {
                if !tx.set_last_used(id, now)? {
                    absent.push(id.clone());
                }
            }
            if absent.is_empty() {
                Ok(())
            } else {
                missing.0 = absent;
                Err(PortError::new(ErrorKind::NotFound, "some records do not exist"))
            }
        });
        match outcome {
            Ok(()) => Ok(Vec::new()),
            Err(_) if !missing.0.is_empty() => Ok(missing.0),
            Err(e) => Err(e),
        }
    }
}

impl<B: Backend> SettingsStore for Engine<B> {
    fn settings(&self, who: &UserRef) -> Result<UserSettings, PortError> {
        self.backend.read(who, &mut |tx| tx.settings())
    }

    fn set_settings(
        &self,
        who: &UserRef,
        settings: UserSettings,
        now: Timestamp,
        actor: &str,
    ) -> Result<(), PortError> {
        self.backend.transaction(Owner::User(who), Commit::Write, &mut |tx| {
            tx.put_settings(settings, now)?;
            Auditor::new(who, now, actor).log(tx, AuditAction::SettingsChanged, None, None)
        })
    }
}

impl<B: Backend> AuditLog for Engine<B> {
    fn audit(&self, who: &UserRef, limit: usize) -> Result<Vec<AuditEntry>, PortError> {
        self.backend.audit_entries(who, limit)
    }
}

impl<B: Backend> RunStore for Engine<B> {
    fn create_run(&self, who: &UserRef, run: &Run, actor: &str) -> Result<(), PortError> {
        self.backend.transaction(Owner::User(who), Commit::Write, &mut |tx| {
            require_memory_on(tx)?;
            tx.put_run(run, true)?;
            Auditor::new(who, run.started_at, actor).log_run(tx, AuditAction::RunStarted, &run.id)
        })
    }

    fn run(&self, who: &UserRef, id: &str) -> Result<Option<Run>, PortError> {
        self.backend.read(who, &mut |tx| tx.run(id))
    }

    fn runs(&self, who: &UserRef) -> Result<Vec<Run>, PortError> {
        self.backend.runs(who)
    }

    fn update_run(
        &self,
        who: &UserRef,
        id: &str,
        change: &dyn Fn(&mut Run) -> Result<(), PortError>,
    ) -> Result<Option<Run>, PortError> {
        // An error from `change` rolls the transaction back and is returned as it is.
        self.backend.transaction(Owner::User(who), Commit::Write, &mut |tx| {
            let Some(mut run) = tx.run(id)? else { return Ok(None) };
            require_memory_on(tx)?;
            change(&mut run)?;
            tx.put_run(&run, false)?;
            Ok(Some(run))
        })
    }

    fn end_run(
        &self,
        who: &UserRef,
        id: &str,
        now: Timestamp,
        actor: &str,
    ) -> Result<Option<Run>, PortError> {
        self.backend.transaction(Owner::User(who), Commit::Deletion, &mut |tx| {
            let Some(run) = tx.run(id)? else { return Ok(None) };
            tx.delete_run(id)?;
            Auditor::new(who, now, actor).log_run(tx, AuditAction::RunEnded, id)?;
            Ok(Some(run))
        })
    }
}

impl<B: Backend> StoreMetrics for Engine<B> {
    fn count_by_status(&self) -> Result<Vec<(Status, u64)>, PortError> {
        self.backend.count_by_status()
    }

    fn unrefined_notebooks(&self, limit: usize) -> Result<Vec<UserRef>, PortError> {
        let owners = self.backend.unrefined_owners(limit)?;
        // An owner id no notebook could have is left out rather than failing the listing.
        Ok(owners.iter().filter_map(|(tenant, user)| UserRef::stored(tenant, user).ok()).collect())
    }
}

impl<B: Backend + KeyStore> KeyStore for Engine<B> {
    fn create_key(&self, key: &ApiKey) -> Result<(), PortError> {
        self.backend.create_key(key)
    }

    fn find_key(&self, key_hash: &str) -> Result<Option<ApiKey>, PortError> {
        self.backend.find_key(key_hash)
    }

    fn list_keys(&self, tenant: &str) -> Result<Vec<ApiKey>, PortError> {
        self.backend.list_keys(tenant)
    }

    fn has_live_keys(&self) -> Result<bool, PortError> {
        self.backend.has_live_keys()
    }

    fn revoke_key(&self, tenant: &str, id: &str, now: Timestamp) -> Result<bool, PortError> {
        self.backend.revoke_key(tenant, id, now)
    }

    fn create_sign_in(&self, link: &SignInLink) -> Result<(), PortError> {
        self.backend.create_sign_in(link)
    }

    fn redeem_sign_in(&self, hash: &str, now: Timestamp) -> Result<Option<UserRef>, PortError> {
        self.backend.redeem_sign_in(hash, now)
    }
}

impl<B: Backend + SpaceStore> SpaceStore for Engine<B> {
    fn create_space(&self, space: &Space) -> Result<(), PortError> {
        self.backend.create_space(space)
    }

    fn space(&self, tenant: &str, id: &str) -> Result<Option<Space>, PortError> {
        self.backend.space(tenant, id)
    }

    fn spaces(&self, tenant: &str) -> Result<Vec<Space>, PortError> {
        self.backend.spaces(tenant)
    }

    fn delete_space(&self, tenant: &str, id: &str) -> Result<bool, PortError> {
        self.backend.delete_space(tenant, id)
    }

    fn put_member(&self, tenant: &str, member: &Member) -> Result<(), PortError> {
        self.backend.put_member(tenant, member)
    }

    fn remove_member(&self, tenant: &str, space: &str, user_id: &str) -> Result<bool, PortError> {
        self.backend.remove_member(tenant, space, user_id)
    }

    fn members(&self, tenant: &str, space: &str) -> Result<Vec<Member>, PortError> {
        self.backend.members(tenant, space)
    }

    fn memberships(&self, who: &UserRef) -> Result<Vec<(Space, Role)>, PortError> {
        self.backend.memberships(who)
    }
}
