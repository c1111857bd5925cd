//! A backend in memory: the engine's rules tested without SQL, and a store for tests and
//! short-lived embeddings that need no file. A transaction works on a copy of the state and
//! replaces it when it succeeds, so a failing one changes nothing. Nothing survives the
//! process.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use mnemo_core::ledger::{DeletionReceipt, ForgottenMatch, LedgerKey, Remnant, Removed, Tombstone};
use mnemo_core::lifecycle::{self, Candidate};
use mnemo_core::policy::UserSettings;
use mnemo_core::ports::{
    ApiKey, AuditEntry, Embedded, Found, KeyStore, ListFilter, PortError, Ranked, SearchQuery,
    SignInLink, SpaceStore, StoreCaps,
};
use mnemo_core::record::EmbeddingInfo;
use mnemo_core::retrieval::{Fused, Signals};
use mnemo_core::run::Run;
use mnemo_core::space::{Member, Role, Space};
use mnemo_core::{ErrorKind, Kind, Memory, MemoryId, MemoryVersion, Status, Timestamp, UserRef};
use mnemo_index::{IndexRow, ScanFilter, UserIndex};

use crate::backend::{Backend, Commit, NEIGHBOURS, Neighbours, Owner, RowId, Tx};

/// One stored record with what belongs to it.
#[derive(Debug, Clone)]
struct Stored {
    memory: Memory,
    vector: Option<Vec<f32>>,
    /// Whether `vector` came from the embedder's refining encoder.
    refined: bool,
    versions: Vec<MemoryVersion>,
}

/// A tombstone as kept: its owner, when and under which receipt.
#[derive(Debug, Clone)]
struct Buried {
    tenant: String,
    user: String,
    tombstone: Tombstone,
    at: Timestamp,
}

/// Everything the backend holds.
#[derive(Debug, Clone, Default)]
struct State {
    next_row: RowId,
    records: BTreeMap<RowId, Stored>,
    /// (tenant, user, source, derived).
    links: Vec<(String, String, MemoryId, MemoryId)>,
    /// The embedder of the stored vectors: (model, dimensions).
    model: Option<(String, usize)>,
    settings: HashMap<(String, String), UserSettings>,
    /// (tenant, user, entry), oldest first.
    audit: Vec<(String, String, AuditEntry)>,
    tombstones: Vec<Buried>,
    /// (tenant, user, receipt), oldest first.
    receipts: Vec<(String, String, DeletionReceipt)>,
    /// Keyed by (tenant, user, id).
    runs: BTreeMap<(String, String, String), Run>,
    keys: Vec<ApiKey>,
    /// Keyed by (tenant, space id).
    spaces: BTreeMap<(String, String), Space>,
    /// Sign-in links with when each was used.
    sign_ins: Vec<(SignInLink, Option<Timestamp>)>,
    /// Keyed by (tenant, space id, user id).
    members: BTreeMap<(String, String, String), Member>,
}

/// The backend in memory.
#[derive(Debug)]
pub struct MemoryBackend {
    state: Mutex<State>,
    ledger: LedgerKey,
}

impl MemoryBackend {
    /// An empty backend whose ledger hashes under `ledger`.
    pub fn new(ledger: LedgerKey) -> Self {
        Self { state: Mutex::new(State::default()), ledger }
    }

    /// Everything the backend holds, written out: what a scan for deleted text reads.
    pub fn dump(&self) -> String {
        format!("{:?}", *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A transaction works on a copy: a panic mid-way leaves the state as it was.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A transaction: the owner and a copy of the state.
struct MemoryTx<'a> {
    tenant: &'a str,
    user: Option<&'a str>,
    state: State,
}

impl MemoryTx<'_> {
    fn owns(&self, memory: &Memory) -> bool {
        memory.tenant == self.tenant && self.user.is_none_or(|u| memory.user_id == u)
    }

    fn user(&self) -> Result<&str, PortError> {
        self.user.ok_or_else(|| PortError::new(ErrorKind::Internal, "no user in a tenant job"))
    }

    fn owned(&self) -> impl Iterator<Item = (RowId, &Stored)> {
        self.state.records.iter().filter(|(_, s)| self.owns(&s.memory)).map(|(r, s)| (*r, s))
    }

    fn memory_of(stored: &Stored) -> Memory {
        let mut memory = stored.memory.clone();
        memory.embedding = stored.vector.as_ref().and_then(|v| {
            let (model, _) = memory.embedding.as_ref().map(|e| (e.model.clone(), e.dims))?;
            Some(EmbeddingInfo { model, dims: v.len() as u32, vector: None })
        });
        memory
    }

    fn check_vector(&mut self, embedded: &Embedded) -> Result<(), PortError> {
        match &self.state.model {
            Some((model, dims)) if *model != embedded.model || *dims != embedded.vector.len() => {
                Err(PortError::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "embedder mismatch: this store holds {dims}-d vectors from `{model}`, \
                         got {}-d vectors from `{}`",
                        embedded.vector.len(),
                        embedded.model
                    ),
                ))
            }
            Some(_) => Ok(()),
            None => {
                self.state.model = Some((embedded.model.clone(), embedded.vector.len()));
                Ok(())
            }
        }
    }

    fn index(&self) -> UserIndex {
        let mut index = UserIndex::default();
        for (row, stored) in self.owned() {
            index.upsert_row(IndexRow::of(row, &stored.memory, stored.vector.as_deref()));
        }
        index
    }

    fn stored_mut(&mut self, row: RowId) -> Result<&mut Stored, PortError> {
        let (tenant, user) = (self.tenant.to_owned(), self.user.map(str::to_owned));
        self.state
            .records
            .get_mut(&row)
            .filter(|s| s.memory.tenant == tenant && user.is_none_or(|u| s.memory.user_id == u))
            .ok_or_else(|| PortError::new(ErrorKind::NotFound, format!("no record at row {row}")))
    }
}

impl Tx for MemoryTx<'_> {
    fn find(&mut self, id: &MemoryId) -> Result<Option<(RowId, Memory)>, PortError> {
        Ok(self.owned().find(|(_, s)| s.memory.id == *id).map(|(r, s)| (r, Self::memory_of(s))))
    }

    fn rows(&mut self, rows: &[RowId]) -> Result<Vec<(RowId, Memory)>, PortError> {
        Ok(rows
            .iter()
            .filter_map(|row| {
                let stored = self.state.records.get(row)?;
                self.owns(&stored.memory).then(|| (*row, Self::memory_of(stored)))
            })
            .collect())
    }

    fn list(&mut self, filter: &ListFilter, now: Timestamp) -> Result<Vec<Memory>, PortError> {
        let scope = filter.scope.as_ref().map(ToString::to_string);
        let mut found: Vec<(RowId, Memory)> = self
            .owned()
            .filter(|(_, s)| {
                let m = &s.memory;
                filter.kind.is_none_or(|k| m.kind == k)
                    && filter.status.is_none_or(|st| m.status == st)
                    && scope.as_ref().is_none_or(|sc| m.scope.to_string() == *sc)
                    && (filter.include_expired || !m.is_expired(now))
                    && filter.session.as_ref().is_none_or(|se| m.session_id.as_ref() == Some(se))
            })
            .map(|(r, s)| (r, Self::memory_of(s)))
            .collect();
        found.sort_by_key(|(row, m)| std::cmp::Reverse((m.created_at, *row)));
        Ok(found.into_iter().map(|(_, m)| m).collect())
    }

    fn all(&mut self) -> Result<Vec<(RowId, Memory)>, PortError> {
        let mut found: Vec<(RowId, Memory)> =
            self.owned().map(|(r, s)| (r, Self::memory_of(s))).collect();
        found.sort_by(|a, b| (a.1.created_at, &a.1.id.0).cmp(&(b.1.created_at, &b.1.id.0)));
        Ok(found)
    }

    fn expired(&mut self, now: Timestamp) -> Result<Vec<RowId>, PortError> {
        Ok(self.owned().filter(|(_, s)| s.memory.is_expired(now)).map(|(r, _)| r).collect())
    }

    fn active_of_key(
        &mut self,
        scope: &str,
        subject: &str,
        attribute: &str,
    ) -> Result<Vec<(RowId, Memory)>, PortError> {
        Ok(self
            .owned()
            .filter(|(_, s)| {
                let m = &s.memory;
                m.status == Status::Active
                    && m.scope.to_string() == scope
                    && m.key() == Some((subject, attribute))
            })
            .map(|(r, s)| (r, Self::memory_of(s)))
            .collect())
    }

    fn neighbours(
        &mut self,
        candidate: &Candidate,
        embedding: Option<&Embedded>,
        now: Timestamp,
    ) -> Result<Neighbours, PortError> {
        if let Some(embedded) = embedding {
            self.check_vector(embedded)?;
        }
        let scope = candidate.scope.to_string();
        let mut neighbours = Neighbours::default();
        if let Some((subject, attribute)) = &candidate.key {
            neighbours.same_key = self
                .active_of_key(&scope, subject, attribute)?
                .into_iter()
                .map(|(_, m)| m)
                .collect();
        }
        let hash = lifecycle::content_hash(&candidate.content);
        neighbours.same_content = self
            .owned()
            .filter(|(_, s)| {
                let m = &s.memory;
                lifecycle::content_hash(&m.content) == hash
                    && m.kind == candidate.kind
                    && m.scope.to_string() == scope
                    && matches!(m.status, Status::Active | Status::Pending)
                    && !m.is_expired(now)
            })
            .map(|(_, s)| Self::memory_of(s))
            .collect();
        let Some(embedded) = embedding else { return Ok(neighbours) };
        match (&candidate.kind, &candidate.source.source_ref) {
            (Kind::Episodic, Some(reference)) => {
                neighbours.same_message = self
                    .owned()
                    .filter(|(_, s)| {
                        let m = &s.memory;
                        m.kind == Kind::Episodic
                            && m.status == Status::Active
                            && m.source.source_ref.as_ref() == Some(reference)
                    })
                    .filter_map(|(_, s)| Some((Self::memory_of(s), s.vector.clone()?)))
                    .collect();
            }
            _ => {
                let filter = ScanFilter {
                    now: now.as_millis(),
                    kind: Some(candidate.kind),
                    scope: Some(&scope),
                    exclude_sensitive: false,
                };
                let nearest = self.index().nearest(
                    &embedded.vector,
                    embedded.calibration.as_deref(),
                    filter,
                    NEIGHBOURS,
                );
                for near in nearest {
                    if let Some(stored) = self.state.records.get(&near.rowid) {
                        neighbours.nearest.push((Self::memory_of(stored), near));
                    }
                }
            }
        }
        Ok(neighbours)
    }

    fn versions(&mut self, row: RowId) -> Result<Vec<MemoryVersion>, PortError> {
        Ok(self.stored_mut(row).map(|s| s.versions.clone()).unwrap_or_default())
    }

    fn vector(&mut self, row: RowId) -> Result<Option<Vec<f32>>, PortError> {
        Ok(self.stored_mut(row).ok().and_then(|s| s.vector.clone()))
    }

    fn chain(
        &mut self,
        row: RowId,
        derived: bool,
    ) -> Result<Vec<(RowId, MemoryId, String)>, PortError> {
        let Some(first) = self.state.records.get(&row).filter(|s| self.owns(&s.memory)) else {
            return Ok(Vec::new());
        };
        let mut chain = vec![(row, first.memory.id.clone(), first.memory.user_id.clone())];
        let mut next = 0;
        while next < chain.len() {
            let (_, id, user) = chain[next].clone();
            next += 1;
            let mut found: Vec<(RowId, MemoryId, String)> = self
                .owned()
                .filter(|(_, s)| {
                    s.memory.user_id == user && s.memory.superseded_by.as_ref() == Some(&id)
                })
                .map(|(r, s)| (r, s.memory.id.clone(), user.clone()))
                .collect();
            if derived {
                for (tenant, link_user, source, derived_id) in &self.state.links {
                    if *tenant != self.tenant || *link_user != user || *source != id {
                        continue;
                    }
                    found.extend(
                        self.owned()
                            .filter(|(_, s)| s.memory.user_id == user && s.memory.id == *derived_id)
                            .map(|(r, s)| (r, s.memory.id.clone(), user.clone())),
                    );
                }
            }
            for link in found {
                if chain.iter().all(|(r, _, _)| *r != link.0) {
                    chain.push(link);
                }
            }
        }
        Ok(chain)
    }

    fn insert(&mut self, memory: &Memory, vector: Option<&Embedded>) -> Result<RowId, PortError> {
        let clash = self.state.records.values().any(|s| {
            let m = &s.memory;
            m.tenant == memory.tenant
                && m.user_id == memory.user_id
                && (m.id == memory.id
                    || (memory.status == Status::Active
                        && m.status == Status::Active
                        && memory.key().is_some()
                        && m.key() == memory.key()
                        && m.scope == memory.scope))
        });
        if clash {
            return Err(PortError::new(
                ErrorKind::Conflict,
                format!(
                    "memory {} conflicts with a stored record (same id, or a second active \
                     record for its subject and attribute)",
                    memory.id
                ),
            ));
        }
        if let Some(embedded) = vector {
            self.check_vector(embedded)?;
        }
        for source in &memory.derived_from {
            let link =
                (memory.tenant.clone(), memory.user_id.clone(), source.clone(), memory.id.clone());
            if !self.state.links.contains(&link) {
                self.state.links.push(link);
            }
        }
        self.state.next_row += 1;
        let row = self.state.next_row;
        let mut stored = memory.clone();
        stored.embedding = vector.map(|v| EmbeddingInfo {
            model: v.model.clone(),
            dims: v.vector.len() as u32,
            vector: None,
        });
        self.state.records.insert(
            row,
            Stored {
                memory: stored,
                vector: vector.map(|v| v.vector.clone()),
                refined: false,
                versions: Vec::new(),
            },
        );
        Ok(row)
    }

    fn supersede(
        &mut self,
        id: &MemoryId,
        by: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<RowId>, PortError> {
        let Some((row, _)) = self.find(id)? else { return Ok(None) };
        let stored = self.stored_mut(row)?;
        stored.memory.status = Status::Superseded;
        stored.memory.superseded_by = Some(by.clone());
        stored.memory.updated_at = now;
        Ok(Some(row))
    }

    fn update(&mut self, row: RowId, memory: &Memory) -> Result<(), PortError> {
        let stored = self.stored_mut(row)?;
        let m = &mut stored.memory;
        m.content.clone_from(&memory.content);
        m.version = memory.version;
        m.status = memory.status;
        m.sensitivity = memory.sensitivity;
        m.consent.clone_from(&memory.consent);
        m.metadata.clone_from(&memory.metadata);
        m.updated_at = memory.updated_at;
        m.shared.clone_from(&memory.shared);
        m.expires_at = memory.expires_at;
        Ok(())
    }

    fn set_last_used(&mut self, id: &MemoryId, at: Timestamp) -> Result<bool, PortError> {
        let Some((row, _)) = self.find(id)? else { return Ok(false) };
        self.stored_mut(row)?.memory.last_used_at = Some(at);
        Ok(true)
    }

    fn put_vector(&mut self, row: RowId, vector: Option<&Embedded>) -> Result<(), PortError> {
        if let Some(embedded) = vector {
            self.check_vector(embedded)?;
        }
        let stored = self.stored_mut(row)?;
        stored.vector = vector.map(|v| v.vector.clone());
        stored.refined = false;
        stored.memory.embedding = vector.map(|v| EmbeddingInfo {
            model: v.model.clone(),
            dims: v.vector.len() as u32,
            vector: None,
        });
        Ok(())
    }

    fn put_version(&mut self, row: RowId, version: &MemoryVersion) -> Result<(), PortError> {
        self.stored_mut(row)?.versions.push(version.clone());
        Ok(())
    }

    fn unrefined(&mut self, limit: usize) -> Result<Vec<(RowId, Memory)>, PortError> {
        Ok(self
            .owned()
            .filter(|(_, s)| s.vector.is_some() && !s.refined)
            .take(limit)
            .map(|(r, s)| (r, Self::memory_of(s)))
            .collect())
    }

    fn put_refined(&mut self, row: RowId, vector: &Embedded) -> Result<(), PortError> {
        self.put_vector(row, Some(vector))?;
        self.stored_mut(row)?.refined = true;
        Ok(())
    }

    fn delete(&mut self, rows: &[RowId]) -> Result<Removed, PortError> {
        let mut removed = Removed::default();
        for row in rows {
            let Ok(stored) = self.stored_mut(*row) else { continue };
            let stored = stored.clone();
            let (tenant, user, id) =
                (&stored.memory.tenant, &stored.memory.user_id, &stored.memory.id);
            let before = self.state.links.len();
            self.state.links.retain(|(t, u, source, derived)| {
                !(t == tenant && u == user && (source == id || derived == id))
            });
            removed.links += (before - self.state.links.len()) as u64;
            removed.vectors += u64::from(stored.vector.is_some());
            removed.versions += stored.versions.len() as u64;
            self.state.records.remove(row);
            removed.records += 1;
            removed.index_entries += 1;
        }
        Ok(removed)
    }

    fn delete_rest_of_user(&mut self) -> Result<(u64, u64), PortError> {
        let (tenant, user) = (self.tenant.to_owned(), self.user()?.to_owned());
        let runs_before = self.state.runs.len();
        self.state.runs.retain(|(t, u, _), _| !(*t == tenant && *u == user));
        let links_before = self.state.links.len();
        self.state.links.retain(|(t, u, _, _)| !(*t == tenant && *u == user));
        Ok((
            (runs_before - self.state.runs.len()) as u64,
            (links_before - self.state.links.len()) as u64,
        ))
    }

    fn settings(&mut self) -> Result<UserSettings, PortError> {
        let key = (self.tenant.to_owned(), self.user()?.to_owned());
        Ok(self.state.settings.get(&key).copied().unwrap_or_default())
    }

    fn put_settings(&mut self, settings: UserSettings, _now: Timestamp) -> Result<(), PortError> {
        let key = (self.tenant.to_owned(), self.user()?.to_owned());
        self.state.settings.insert(key, settings);
        Ok(())
    }

    fn audit(&mut self, user: &str, entry: &AuditEntry) -> Result<(), PortError> {
        self.state.audit.push((self.tenant.to_owned(), user.to_owned(), entry.clone()));
        Ok(())
    }

    fn tombstone(
        &mut self,
        statement: &str,
        source: Option<&str>,
    ) -> Result<Option<ForgottenMatch>, PortError> {
        let user = self.user()?;
        let mut found: Option<ForgottenMatch> = None;
        for buried in &self.state.tombstones {
            if buried.tenant != self.tenant
                || buried.user != user
                || buried.tombstone.statement_digest != statement
            {
                continue;
            }
            let same = source.is_some() && buried.tombstone.source_digest.as_deref() == source;
            let latest = found.map_or(buried.at, |f| f.deleted_at.max(buried.at));
            found = Some(ForgottenMatch {
                deleted_at: latest,
                same_source: found.is_some_and(|f| f.same_source) || same,
            });
        }
        Ok(found)
    }

    fn has_tombstones(&mut self) -> Result<bool, PortError> {
        let user = self.user()?;
        Ok(self.state.tombstones.iter().any(|b| b.tenant == self.tenant && b.user == user))
    }

    fn tombstoned(&mut self, id: &MemoryId, statement: &str) -> Result<bool, PortError> {
        let user = self.user()?;
        Ok(self.state.tombstones.iter().any(|b| {
            b.tenant == self.tenant
                && b.user == user
                && (b.tombstone.memory_id == *id || b.tombstone.statement_digest == statement)
        }))
    }

    fn put_tombstone(
        &mut self,
        tombstone: &Tombstone,
        at: Timestamp,
        _receipt_id: &str,
    ) -> Result<(), PortError> {
        let buried = Buried {
            tenant: self.tenant.to_owned(),
            user: self.user()?.to_owned(),
            tombstone: tombstone.clone(),
            at,
        };
        self.state.tombstones.push(buried);
        Ok(())
    }

    fn put_receipt(&mut self, receipt: &DeletionReceipt) -> Result<(), PortError> {
        let (tenant, user) = (self.tenant.to_owned(), self.user()?.to_owned());
        self.state.receipts.push((tenant, user, receipt.clone()));
        Ok(())
    }

    fn run(&mut self, id: &str) -> Result<Option<Run>, PortError> {
        let key = (self.tenant.to_owned(), self.user()?.to_owned(), id.to_owned());
        Ok(self.state.runs.get(&key).cloned())
    }

    fn put_run(&mut self, run: &Run, new: bool) -> Result<(), PortError> {
        let key = (self.tenant.to_owned(), self.user()?.to_owned(), run.id.clone());
        if new && self.state.runs.contains_key(&key) {
            return Err(PortError::new(ErrorKind::Conflict, format!("run {} exists", run.id)));
        }
        self.state.runs.insert(key, run.clone());
        Ok(())
    }

    fn delete_run(&mut self, id: &str) -> Result<bool, PortError> {
        let key = (self.tenant.to_owned(), self.user()?.to_owned(), id.to_owned());
        Ok(self.state.runs.remove(&key).is_some())
    }
}

impl Backend for MemoryBackend {
    fn capabilities(&self) -> StoreCaps {
        StoreCaps { full_text: true, vectors: true, secure_delete: true }
    }

    fn ledger_key(&self) -> &LedgerKey {
        &self.ledger
    }

    fn remains(&self, at: Timestamp) -> Vec<Remnant> {
        vec![Remnant {
            place: "process memory".into(),
            until: Some(at),
            detail: "nothing is written to disk; removed records are dropped at once".into(),
        }]
    }

    fn transaction<T>(
        &self,
        owner: Owner<'_>,
        _commit: Commit,
        body: &mut dyn FnMut(&mut dyn Tx) -> Result<T, PortError>,
    ) -> Result<T, PortError> {
        let mut state = self.lock();
        let mut tx = MemoryTx { tenant: owner.tenant(), user: owner.user(), state: state.clone() };
        let value = body(&mut tx)?;
        *state = tx.state;
        Ok(value)
    }

    fn read<T>(
        &self,
        who: &UserRef,
        body: &mut dyn FnMut(&mut dyn Tx) -> Result<T, PortError>,
    ) -> Result<T, PortError> {
        let state = self.lock();
        let mut tx =
            MemoryTx { tenant: who.tenant(), user: Some(who.user_id()), state: state.clone() };
        body(&mut tx)
    }

    fn rank(
        &self,
        who: &UserRef,
        query: &SearchQuery<'_>,
        now: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Result<Vec<Ranked>, PortError> {
        let state = self.lock();
        let mut tx =
            MemoryTx { tenant: who.tenant(), user: Some(who.user_id()), state: state.clone() };
        if let Some(vector) = query.vector {
            tx.check_vector(vector)?;
        }
        let scope = query.filter.scope.as_ref().map(ToString::to_string);
        let filter = crate::scan_filter(query, now, scope.as_deref());
        Ok(tx.index().search(
            query.words(),
            query.vector.map(|v| v.vector.as_slice()),
            query.common,
            filter,
            query.notebooks,
            select,
        ))
    }

    fn read_ranked(
        &self,
        who: &UserRef,
        ranked: &[Ranked],
        now: Timestamp,
    ) -> Result<Vec<Found>, PortError> {
        let state = self.lock();
        let memories = ranked
            .iter()
            .filter_map(|hit| {
                let stored = state.records.get(&hit.row)?;
                let memory = &stored.memory;
                let owned = memory.tenant == who.tenant() && memory.user_id == who.user_id();
                let live = memory.status == Status::Active && !memory.is_expired(now);
                (owned && live).then(|| (hit.row, MemoryTx::memory_of(stored)))
            })
            .collect();
        Ok(crate::found_in_order(ranked, memories))
    }

    fn audit_entries(&self, who: &UserRef, limit: usize) -> Result<Vec<AuditEntry>, PortError> {
        Ok(self
            .lock()
            .audit
            .iter()
            .rev()
            .filter(|(t, u, _)| t == who.tenant() && u == who.user_id())
            .take(limit)
            .map(|(_, _, e)| e.clone())
            .collect())
    }

    fn receipts(&self, who: &UserRef, limit: usize) -> Result<Vec<DeletionReceipt>, PortError> {
        let state = self.lock();
        let mut found: Vec<&DeletionReceipt> = state
            .receipts
            .iter()
            .filter(|(t, u, _)| t == who.tenant() && u == who.user_id())
            .map(|(_, _, r)| r)
            .collect();
        found.sort_by(|a, b| (b.at, &b.id).cmp(&(a.at, &a.id)));
        Ok(found.into_iter().take(limit).cloned().collect())
    }

    fn runs(&self, who: &UserRef) -> Result<Vec<Run>, PortError> {
        let state = self.lock();
        let mut found: Vec<Run> = state
            .runs
            .iter()
            .filter(|((t, u, _), _)| t == who.tenant() && u == who.user_id())
            .map(|(_, run)| run.clone())
            .collect();
        found.sort_by(|a, b| (a.started_at, &a.id).cmp(&(b.started_at, &b.id)));
        Ok(found)
    }

    fn count_by_status(&self) -> Result<Vec<(Status, u64)>, PortError> {
        let mut counts: BTreeMap<String, (Status, u64)> = BTreeMap::new();
        for stored in self.lock().records.values() {
            let status = stored.memory.status;
            counts.entry(status.as_str().to_owned()).or_insert((status, 0)).1 += 1;
        }
        Ok(counts.into_values().collect())
    }

    fn unrefined_owners(&self, limit: usize) -> Result<Vec<(String, String)>, PortError> {
        let owners: std::collections::BTreeSet<(String, String)> = self
            .lock()
            .records
            .values()
            .filter(|s| s.vector.is_some() && !s.refined)
            .map(|s| (s.memory.tenant.clone(), s.memory.user_id.clone()))
            .collect();
        Ok(owners.into_iter().take(limit).collect())
    }
}

impl MemoryBackend {
    fn sign_in_position(state: &State, hash: &str, now: Timestamp) -> Option<usize> {
        state
            .sign_ins
            .iter()
            .position(|(link, used)| link.hash == hash && used.is_none() && link.expires_at > now)
    }
}

impl KeyStore for MemoryBackend {
    fn create_key(&self, key: &ApiKey) -> Result<(), PortError> {
        let mut state = self.lock();
        if state.keys.iter().any(|k| k.id == key.id || k.key_hash == key.key_hash) {
            return Err(PortError::new(ErrorKind::Conflict, format!("key {} exists", key.id)));
        }
        state.keys.push(key.clone());
        Ok(())
    }

    fn find_key(&self, key_hash: &str) -> Result<Option<ApiKey>, PortError> {
        Ok(self
            .lock()
            .keys
            .iter()
            .find(|k| k.key_hash == key_hash && k.revoked_at.is_none())
            .cloned())
    }

    fn list_keys(&self, tenant: &str) -> Result<Vec<ApiKey>, PortError> {
        let mut keys: Vec<ApiKey> =
            self.lock().keys.iter().filter(|k| k.tenant == tenant).cloned().collect();
        keys.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        Ok(keys)
    }

    fn has_live_keys(&self) -> Result<bool, PortError> {
        Ok(self.lock().keys.iter().any(|k| k.revoked_at.is_none()))
    }

    fn revoke_key(&self, tenant: &str, id: &str, now: Timestamp) -> Result<bool, PortError> {
        let mut state = self.lock();
        let Some(key) = state.keys.iter_mut().find(|k| k.tenant == tenant && k.id == id) else {
            return Ok(false);
        };
        if key.revoked_at.is_none() {
            key.revoked_at = Some(now);
        }
        Ok(true)
    }

    fn create_sign_in(&self, link: &SignInLink) -> Result<(), PortError> {
        let mut state = self.lock();
        if state.sign_ins.iter().any(|(l, _)| l.hash == link.hash) {
            return Err(PortError::new(ErrorKind::Conflict, "the sign-in link exists"));
        }
        state.sign_ins.push((link.clone(), None));
        Ok(())
    }

    fn redeem_sign_in(&self, hash: &str, now: Timestamp) -> Result<Option<UserRef>, PortError> {
        let mut state = self.lock();
        let Some(at) = Self::sign_in_position(&state, hash, now) else { return Ok(None) };
        state.sign_ins[at].1 = Some(now);
        Ok(Some(state.sign_ins[at].0.who.clone()))
    }
}

impl SpaceStore for MemoryBackend {
    fn create_space(&self, space: &Space) -> Result<(), PortError> {
        let mut state = self.lock();
        let key = (space.tenant.clone(), space.id.clone());
        if state.spaces.contains_key(&key) {
            return Err(PortError::new(
                ErrorKind::Conflict,
                format!("space {} exists already", space.id),
            ));
        }
        state.spaces.insert(key, space.clone());
        Ok(())
    }

    fn space(&self, tenant: &str, id: &str) -> Result<Option<Space>, PortError> {
        Ok(self.lock().spaces.get(&(tenant.to_owned(), id.to_owned())).cloned())
    }

    fn spaces(&self, tenant: &str) -> Result<Vec<Space>, PortError> {
        Ok(self.lock().spaces.values().filter(|s| s.tenant == tenant).cloned().collect())
    }

    fn delete_space(&self, tenant: &str, id: &str) -> Result<bool, PortError> {
        let mut state = self.lock();
        state.members.retain(|(t, s, _), _| !(t == tenant && s == id));
        Ok(state.spaces.remove(&(tenant.to_owned(), id.to_owned())).is_some())
    }

    fn put_member(&self, tenant: &str, member: &Member) -> Result<(), PortError> {
        let mut state = self.lock();
        if !state.spaces.contains_key(&(tenant.to_owned(), member.space_id.clone())) {
            return Err(PortError::new(
                ErrorKind::NotFound,
                format!("no space {}", member.space_id),
            ));
        }
        let key = (tenant.to_owned(), member.space_id.clone(), member.user_id.clone());
        state.members.insert(key, member.clone());
        Ok(())
    }

    fn remove_member(&self, tenant: &str, space: &str, user_id: &str) -> Result<bool, PortError> {
        let key = (tenant.to_owned(), space.to_owned(), user_id.to_owned());
        Ok(self.lock().members.remove(&key).is_some())
    }

    fn members(&self, tenant: &str, space: &str) -> Result<Vec<Member>, PortError> {
        Ok(self
            .lock()
            .members
            .iter()
            .filter(|((t, s, _), _)| t == tenant && s == space)
            .map(|(_, m)| m.clone())
            .collect())
    }

    fn memberships(&self, who: &UserRef) -> Result<Vec<(Space, Role)>, PortError> {
        let state = self.lock();
        Ok(state
            .members
            .iter()
            .filter(|((t, _, u), _)| t == who.tenant() && u == who.user_id())
            .filter_map(|((t, s, _), m)| {
                state.spaces.get(&(t.clone(), s.clone())).map(|space| (space.clone(), m.role))
            })
            .collect())
    }
}
