//! The engine's transaction on PostgreSQL: each narrow operation as SQL in one database
//! transaction, confined to the owner in every query. A write transaction of one user holds
//! the user's advisory lock and a raised epoch from its first statement; a tenant-wide job
//! locks each user it touches, in name order. Once the write path reads the user's cached
//! index, the index follows every row the transaction writes.

use std::collections::BTreeMap;

use mnemo_core::ledger::{DeletionReceipt, ForgottenMatch, Removed, Tombstone};
use mnemo_core::lifecycle::{Candidate, content_hash};
use mnemo_core::policy::UserSettings;
use mnemo_core::ports::{AuditEntry, Embedded, ListFilter, PortError};
use mnemo_core::run::Run;
use mnemo_core::{Kind, Memory, MemoryId, MemoryVersion, Timestamp};
use mnemo_engine::{NEIGHBOURS, Neighbours, RowId, Tx};
use mnemo_index::{IndexRow, ScanFilter};
use pgvector::Vector;
use postgres::Transaction;

use crate::pool::Statements;
use crate::{
    BEGIN_WRITE_SQL, INSERT_SQL, NEIGHBOURS_SQL, PostgresBackend, Result, StoreError, UserSlot,
    chain, index_at, insert_with, ledger, memory_from_row, purge, put_vector, query_memories,
    read_run, read_settings, read_slot, to_json, vector_of, versions, write_slot,
};

/// Clears a user's cached index unless disarmed: the index followed rows of a transaction
/// that then failed (an error, a panic, the commit), so it holds rows that do not exist.
pub(crate) struct SlotGuard(pub(crate) Option<UserSlot>);

impl SlotGuard {
    /// The transaction committed: the index is right.
    pub(crate) fn disarm(mut self) -> Option<UserSlot> {
        self.0.take()
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if let Some(slot) = self.0.take() {
            *write_slot(&slot) = None;
        }
    }
}

/// One transaction of an owner.
pub(crate) struct PgTx<'t, 'c> {
    pub(crate) tx: &'t mut Transaction<'c>,
    pub(crate) statements: &'t mut Statements,
    pub(crate) store: &'t PostgresBackend,
    pub(crate) tenant: &'t str,
    pub(crate) user: Option<&'t str>,
    /// For a write of one user: the user's epoch before this transaction, and their slot
    /// in this node's index cache.
    pub(crate) write: Option<(i64, UserSlot)>,
    /// Set once the index follows this transaction's rows.
    pub(crate) following: Option<SlotGuard>,
    /// Users a tenant-wide job locked, with the epoch each was raised to.
    pub(crate) locked: BTreeMap<String, i64>,
}

impl<'t> PgTx<'t, '_> {
    fn user(&self) -> Result<&'t str> {
        self.user.ok_or_else(|| StoreError::Conflict("a tenant-wide job has no user".into()))
    }

    fn owner(&self) -> Result<(&'t str, &'t str)> {
        Ok((self.tenant, self.user()?))
    }

    /// The index this transaction follows, if the write path engaged it.
    fn follow(&self, change: impl FnOnce(&mut mnemo_index::UserIndex)) {
        if let Some(SlotGuard(Some(slot))) = &self.following
            && let Some(cached) = write_slot(slot).as_mut()
        {
            change(&mut cached.index);
        }
    }

    /// Stops following: the transaction changed what the index cannot follow row by row,
    /// so it is dropped when the transaction ends, committed or not.
    fn unfollow(&mut self) {
        if let Some(guard) = self.following.take() {
            drop(guard);
        }
    }

    fn neighbours_of(
        &mut self,
        candidate: &Candidate,
        embedding: Option<&Embedded>,
        now: Timestamp,
    ) -> Result<Neighbours> {
        let (tenant, user) = (self.tenant, self.user()?.to_owned());
        let scope = candidate.scope.to_string();
        let (subject, attribute) = candidate.key.clone().unzip();
        let source_ref = candidate.source.source_ref.as_deref();
        let by_message =
            embedding.is_some() && candidate.kind == Kind::Episodic && source_ref.is_some();
        if let Some(embedded) = embedding {
            self.store.check_vector(self.tx, embedded)?;
        }
        let statement = self.statements.get(self.tx, &NEIGHBOURS_SQL)?;
        let rows = self.tx.query(
            &statement,
            &[
                &tenant,
                &user,
                &content_hash(&candidate.content),
                &candidate.kind.as_str(),
                &scope,
                &now.as_millis(),
                &subject,
                &attribute,
                &by_message,
                &source_ref,
            ],
        )?;
        let mut found = Neighbours::default();
        for row in &rows {
            let (_, memory) = memory_from_row(row)?;
            let (same_content, same_key, same_message): (bool, bool, bool) = (
                row.try_get("same_content")?,
                row.try_get("same_key")?,
                row.try_get("same_message")?,
            );
            if same_content {
                found.same_content.push(memory.clone());
            }
            if same_key {
                found.same_key.push(memory.clone());
            }
            if same_message
                && embedding.is_some()
                && let Some(vector) = row.try_get::<_, Option<Vector>>("vector")?
            {
                found.same_message.push((memory, vector.to_vec()));
            }
        }
        let (false, Some(embedded)) = (by_message, embedding) else { return Ok(found) };
        // The first neighbour query of a write brings the user's index up to the epoch before
        // this transaction; from then on it follows each row written, and searches in between
        // read it labelled with that epoch (rows not yet committed are fetched by no search).
        if self.following.is_none()
            && let Some((before, slot)) = &self.write
        {
            index_at(self.tx, self.statements, (tenant, &user), *before, &mut write_slot(slot))?;
            self.following = Some(SlotGuard(Some(slot.clone())));
        }
        let filter = ScanFilter {
            now: now.as_millis(),
            kind: Some(candidate.kind),
            scope: Some(&scope),
            exclude_sensitive: false,
        };
        let nearest = match &self.following {
            Some(SlotGuard(Some(slot))) => read_slot(slot)
                .and_then(|cached| {
                    Some(cached.as_ref()?.index.nearest(
                        &embedded.vector,
                        embedded.calibration.as_deref(),
                        filter,
                        NEIGHBOURS,
                    ))
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let rowids: Vec<i64> = nearest.iter().map(|near| near.rowid).collect();
        let mut rows: BTreeMap<i64, Memory> = query_memories(
            self.tx,
            "m.tenant = $1 AND m.user_id = $2 AND m.rowid = ANY($3)",
            &[&tenant, &user, &rowids],
        )?
        .into_iter()
        .collect();
        for near in nearest {
            if let Some(memory) = rows.remove(&near.rowid) {
                found.nearest.push((memory, near));
            }
        }
        Ok(found)
    }

    /// The users of rows, each with its rows.
    fn rows_by_user(&mut self, rows: &[RowId]) -> Result<BTreeMap<String, Vec<i64>>> {
        let mut by_user: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for row in self.tx.query(
            "SELECT rowid, user_id FROM memories
              WHERE tenant = $1 AND ($2::text IS NULL OR user_id = $2) AND rowid = ANY($3)",
            &[&self.tenant, &self.user, &rows],
        )? {
            by_user.entry(row.try_get(1)?).or_default().push(row.try_get(0)?);
        }
        Ok(by_user)
    }
}

impl Tx for PgTx<'_, '_> {
    fn find(&mut self, id: &MemoryId) -> Result<Option<(RowId, Memory)>, PortError> {
        let (tenant, user) = self.owner()?;
        Ok(query_memories(
            self.tx,
            "m.tenant = $1 AND m.user_id = $2 AND m.id = $3",
            &[&tenant, &user, &id.0],
        )?
        .pop())
    }

    fn rows(&mut self, rows: &[RowId]) -> Result<Vec<(RowId, Memory)>, PortError> {
        let mut found: BTreeMap<i64, Memory> = query_memories(
            self.tx,
            "m.tenant = $1 AND ($2::text IS NULL OR m.user_id = $2) AND m.rowid = ANY($3)",
            &[&self.tenant, &self.user, &rows],
        )?
        .into_iter()
        .collect();
        Ok(rows.iter().filter_map(|row| Some((*row, found.remove(row)?))).collect())
    }

    fn list(&mut self, filter: &ListFilter, now: Timestamp) -> Result<Vec<Memory>, PortError> {
        let (tenant, user) = self.owner()?;
        let kind = filter.kind.map(|k| k.as_str());
        let status = filter.status.map(|s| s.as_str());
        let scope = filter.scope.as_ref().map(ToString::to_string);
        let rows = query_memories(
            self.tx,
            "m.tenant = $1 AND m.user_id = $2
             AND ($3::text IS NULL OR m.kind = $3)
             AND ($4::text IS NULL OR m.status = $4)
             AND ($5::text IS NULL OR m.scope = $5)
             AND ($6 OR m.expires_at IS NULL OR m.expires_at > $7)
             AND ($8::text IS NULL OR m.session_id = $8)
             ORDER BY m.created_at DESC, m.rowid DESC",
            &[
                &tenant,
                &user,
                &kind,
                &status,
                &scope,
                &filter.include_expired,
                &now.as_millis(),
                &filter.session,
            ],
        )?;
        Ok(rows.into_iter().map(|(_, m)| m).collect())
    }

    fn all(&mut self) -> Result<Vec<(RowId, Memory)>, PortError> {
        let (tenant, user) = self.owner()?;
        Ok(query_memories(
            self.tx,
            "m.tenant = $1 AND m.user_id = $2 ORDER BY m.created_at, m.id",
            &[&tenant, &user],
        )?)
    }

    fn expired(&mut self, now: Timestamp) -> Result<Vec<RowId>, PortError> {
        let users: Vec<String> = self
            .tx
            .query(
                "SELECT DISTINCT user_id FROM memories
                  WHERE tenant = $1 AND ($2::text IS NULL OR user_id = $2)
                    AND expires_at IS NOT NULL AND expires_at <= $3
                  ORDER BY user_id",
                &[&self.tenant, &self.user, &now.as_millis()],
            )
            .map_err(StoreError::from)?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(StoreError::from)?;
        // Each user is locked (in name order) and given an epoch before its rows are read.
        let begin = self.statements.get(self.tx, BEGIN_WRITE_SQL).map_err(StoreError::from)?;
        for user in &users {
            if !self.locked.contains_key(user) {
                let epoch: i64 = self
                    .tx
                    .query_one(&begin, &[&self.tenant, user])
                    .and_then(|row| row.try_get(0))
                    .map_err(StoreError::from)?;
                self.locked.insert(user.clone(), epoch);
            }
        }
        Ok(self
            .tx
            .query(
                "SELECT rowid FROM memories
                  WHERE tenant = $1 AND user_id = ANY($2)
                    AND expires_at IS NOT NULL AND expires_at <= $3
                  ORDER BY user_id, rowid",
                &[&self.tenant, &users, &now.as_millis()],
            )
            .map_err(StoreError::from)?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(StoreError::from)?)
    }

    fn active_of_key(
        &mut self,
        scope: &str,
        subject: &str,
        attribute: &str,
    ) -> Result<Vec<(RowId, Memory)>, PortError> {
        let (tenant, user) = self.owner()?;
        Ok(query_memories(
            self.tx,
            "m.tenant = $1 AND m.user_id = $2 AND m.scope = $3 AND m.subject = $4
             AND m.attribute = $5 AND m.status = 'active'",
            &[&tenant, &user, &scope, &subject, &attribute],
        )?)
    }

    fn neighbours(
        &mut self,
        candidate: &Candidate,
        embedding: Option<&Embedded>,
        now: Timestamp,
    ) -> Result<Neighbours, PortError> {
        Ok(self.neighbours_of(candidate, embedding, now)?)
    }

    fn versions(&mut self, row: RowId) -> Result<Vec<MemoryVersion>, PortError> {
        Ok(versions(self.tx, self.tenant, self.user, row)?)
    }

    fn vector(&mut self, row: RowId) -> Result<Option<Vec<f32>>, PortError> {
        Ok(vector_of(self.tx, self.tenant, self.user, row)?)
    }

    fn chain(
        &mut self,
        row: RowId,
        derived: bool,
    ) -> Result<Vec<(RowId, MemoryId, String)>, PortError> {
        // A tenant-wide job learns the row's user from the row; a user's transaction knows it.
        let user = match self.user {
            Some(user) => user.to_owned(),
            None => match self.rows_by_user(&[row])?.into_keys().next() {
                Some(user) => user,
                None => return Ok(Vec::new()),
            },
        };
        let links = chain(self.tx, (self.tenant, &user), row, derived)?;
        Ok(links.into_iter().map(|(r, id)| (r, id, user.clone())).collect())
    }

    fn insert(&mut self, memory: &Memory, vector: Option<&Embedded>) -> Result<RowId, PortError> {
        if let Some(embedded) = vector {
            self.store.check_vector(self.tx, embedded)?;
        }
        let statement = self.statements.get(self.tx, &INSERT_SQL).map_err(StoreError::from)?;
        let row = insert_with(self.tx, &statement, memory, vector)?;
        self.follow(|index| {
            index.upsert_row(IndexRow::of(row, memory, vector.map(|v| &*v.vector)))
        });
        Ok(row)
    }

    fn supersede(
        &mut self,
        id: &MemoryId,
        by: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<RowId>, PortError> {
        let (tenant, user) = self.owner()?;
        let statement = self
            .statements
            .get(
                self.tx,
                "UPDATE memories SET status = 'superseded', superseded_by = $1, updated_at = $2
                  WHERE tenant = $3 AND user_id = $4 AND id = $5
                 RETURNING rowid",
            )
            .map_err(StoreError::from)?;
        let row: Option<i64> = self
            .tx
            .query_opt(&statement, &[&by.0, &now.as_millis(), &tenant, &user, &id.0])
            .map_err(StoreError::from)?
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(StoreError::from)?;
        if let Some(row) = row {
            self.follow(|index| index.deactivate(row));
        }
        Ok(row)
    }

    fn update(&mut self, row: RowId, memory: &Memory) -> Result<(), PortError> {
        let (tenant, user) = self.owner()?;
        let consent = memory.consent.as_ref().map(to_json).transpose()?;
        let version = i32::try_from(memory.version).unwrap_or(i32::MAX);
        self.tx
            .execute(
                "UPDATE memories SET content = $1, content_hash = $2, version = $3, status = $4,
                        sensitivity = $5, consent = $6, updated_at = $7, metadata = $11,
                        shared = $12, expires_at = $13
                  WHERE rowid = $8 AND tenant = $9 AND user_id = $10",
                &[
                    &memory.content,
                    &content_hash(&memory.content),
                    &version,
                    &memory.status.as_str(),
                    &memory.sensitivity.as_str(),
                    &consent,
                    &memory.updated_at.as_millis(),
                    &row,
                    &tenant,
                    &user,
                    &to_json(&memory.metadata)?,
                    &memory.shared.as_ref().map(to_json).transpose()?,
                    &memory.expires_at.map(Timestamp::as_millis),
                ],
            )
            .map_err(StoreError::from)?;
        self.unfollow();
        Ok(())
    }

    fn set_last_used(&mut self, id: &MemoryId, at: Timestamp) -> Result<bool, PortError> {
        let (tenant, user) = self.owner()?;
        let changed = self
            .tx
            .execute(
                "UPDATE memories SET last_used_at = $1
                  WHERE tenant = $2 AND user_id = $3 AND id = $4",
                &[&at.as_millis(), &tenant, &user, &id.0],
            )
            .map_err(StoreError::from)?;
        Ok(changed > 0)
    }

    fn put_vector(&mut self, row: RowId, vector: Option<&Embedded>) -> Result<(), PortError> {
        match vector {
            Some(embedded) => {
                self.store.check_vector(self.tx, embedded)?;
                put_vector(self.tx, row, embedded, false)?;
            }
            None => {
                self.tx
                    .execute("DELETE FROM memory_vectors WHERE memory_rowid = $1", &[&row])
                    .map_err(StoreError::from)?;
            }
        }
        self.unfollow();
        Ok(())
    }

    fn unrefined(&mut self, limit: usize) -> Result<Vec<(RowId, Memory)>, PortError> {
        let (tenant, user) = self.owner()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(query_memories(
            self.tx,
            "m.tenant = $1 AND m.user_id = $2 AND NOT v.refined ORDER BY m.rowid LIMIT $3",
            &[&tenant, &user, &limit],
        )?)
    }

    fn put_refined(&mut self, row: RowId, vector: &Embedded) -> Result<(), PortError> {
        let (tenant, user) = self.owner()?;
        self.store.check_vector(self.tx, vector)?;
        put_vector(self.tx, row, vector, true)?;
        // Stamps the record with this transaction's epoch (migration 0002's trigger), so
        // every node's cached index reads its new vector when it next catches up.
        self.tx
            .execute(
                "UPDATE memories SET changed_epoch = changed_epoch
                  WHERE rowid = $1 AND tenant = $2 AND user_id = $3",
                &[&row, &tenant, &user],
            )
            .map_err(StoreError::from)?;
        self.unfollow();
        Ok(())
    }

    fn put_version(&mut self, row: RowId, version: &MemoryVersion) -> Result<(), PortError> {
        let number = i32::try_from(version.version).unwrap_or(i32::MAX);
        self.tx
            .execute(
                "INSERT INTO memory_versions (memory_rowid, version, snapshot) VALUES ($1, $2, $3)",
                &[&row, &number, &to_json(version)?],
            )
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn delete(&mut self, rows: &[RowId]) -> Result<Removed, PortError> {
        let mut removed = Removed::default();
        for (user, rows) in self.rows_by_user(rows)? {
            // A tenant-wide job stamps each user's tombstones with that user's own epoch.
            if let Some(epoch) = self.locked.get(&user) {
                self.tx
                    .execute("SELECT set_config('mnemo.epoch', $1, true)", &[&epoch.to_string()])
                    .map_err(StoreError::from)?;
            }
            let gone = purge(self.tx, (self.tenant, &user), &rows)?;
            removed.records += gone.records;
            removed.versions += gone.versions;
            removed.vectors += gone.vectors;
            removed.links += gone.links;
            removed.index_entries += gone.index_entries;
        }
        self.unfollow();
        Ok(removed)
    }

    fn delete_rest_of_user(&mut self) -> Result<(u64, u64), PortError> {
        let (tenant, user) = self.owner()?;
        let links = self
            .tx
            .execute(
                "DELETE FROM memory_links WHERE tenant = $1 AND user_id = $2",
                &[&tenant, &user],
            )
            .map_err(StoreError::from)?;
        let runs = self
            .tx
            .execute("DELETE FROM runs WHERE tenant = $1 AND user_id = $2", &[&tenant, &user])
            .map_err(StoreError::from)?;
        Ok((runs, links))
    }

    fn settings(&mut self) -> Result<UserSettings, PortError> {
        Ok(read_settings(self.tx, self.owner()?)?)
    }

    fn put_settings(&mut self, settings: UserSettings, now: Timestamp) -> Result<(), PortError> {
        let (tenant, user) = self.owner()?;
        self.tx
            .execute(
                "INSERT INTO user_settings (tenant, user_id, memory_enabled, updated_at)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (tenant, user_id)
                 DO UPDATE SET memory_enabled = excluded.memory_enabled,
                               updated_at = excluded.updated_at",
                &[&tenant, &user, &settings.memory_enabled, &now.as_millis()],
            )
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn audit(&mut self, user: &str, entry: &AuditEntry) -> Result<(), PortError> {
        let statement = self
            .statements
            .get(
                self.tx,
                "INSERT INTO audit_log (tenant, user_id, at, action, memory_id, reason, actor,
                                        run_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .map_err(StoreError::from)?;
        self.tx
            .execute(
                &statement,
                &[
                    &self.tenant,
                    &user,
                    &entry.at.as_millis(),
                    &entry.action.as_str(),
                    &entry.memory_id.as_ref().map(|id| id.0.as_str()),
                    &entry.reason.map(mnemo_core::policy::ReasonCode::as_str),
                    &entry.actor,
                    &entry.run_id,
                ],
            )
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn tombstone(
        &mut self,
        statement: &str,
        source: Option<&str>,
    ) -> Result<Option<ForgottenMatch>, PortError> {
        let owner = (self.tenant, self.user()?);
        Ok(ledger::tombstone(self.tx, owner, statement, source)?)
    }

    fn has_tombstones(&mut self) -> Result<bool, PortError> {
        let owner = (self.tenant, self.user()?);
        Ok(ledger::has_tombstones(self.tx, owner)?)
    }

    fn tombstoned(&mut self, id: &MemoryId, statement: &str) -> Result<bool, PortError> {
        let owner = (self.tenant, self.user()?);
        Ok(ledger::tombstoned(self.tx, owner, id, statement)?)
    }

    fn put_tombstone(
        &mut self,
        tombstone: &Tombstone,
        at: Timestamp,
        receipt_id: &str,
    ) -> Result<(), PortError> {
        let owner = (self.tenant, self.user()?);
        Ok(ledger::put_tombstone(self.tx, owner, tombstone, at, receipt_id)?)
    }

    fn put_receipt(&mut self, receipt: &DeletionReceipt) -> Result<(), PortError> {
        let owner = (self.tenant, self.user()?);
        Ok(ledger::put_receipt(self.tx, owner, receipt)?)
    }

    fn run(&mut self, id: &str) -> Result<Option<Run>, PortError> {
        Ok(read_run(self.tx, self.owner()?, id)?)
    }

    fn put_run(&mut self, run: &Run, new: bool) -> Result<(), PortError> {
        let (tenant, user) = self.owner()?;
        let state = to_json(run)?;
        let sql = if new {
            "INSERT INTO runs (id, tenant, user_id, state, started_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6)"
        } else {
            "UPDATE runs SET state = $4, updated_at = $6
              WHERE id = $1 AND tenant = $2 AND user_id = $3 AND $5::bigint IS NOT NULL"
        };
        self.tx
            .execute(
                sql,
                &[
                    &run.id,
                    &tenant,
                    &user,
                    &state,
                    &run.started_at.as_millis(),
                    &run.updated_at.as_millis(),
                ],
            )
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn delete_run(&mut self, id: &str) -> Result<bool, PortError> {
        let (tenant, user) = self.owner()?;
        let gone = self
            .tx
            .execute(
                "DELETE FROM runs WHERE tenant = $1 AND user_id = $2 AND id = $3",
                &[&tenant, &user, &id],
            )
            .map_err(StoreError::from)?;
        Ok(gone > 0)
    }
}
