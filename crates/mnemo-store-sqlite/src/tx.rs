//! The engine's transaction on SQLite: each narrow operation as SQL on one connection (the
//! writer's inside a write transaction, a reader's for reads), confined to the owner in every
//! query, and the rows it changed, for the index cache to follow.

use mnemo_core::ledger::{DeletionReceipt, ForgottenMatch, Removed, Tombstone};
use mnemo_core::lifecycle::Candidate;
use mnemo_core::policy::UserSettings;
use mnemo_core::ports::{AuditEntry, Embedded, ListFilter, PortError};
use mnemo_core::run::Run;
use mnemo_core::{Kind, Memory, MemoryId, MemoryVersion, Timestamp};
use mnemo_engine::{NEIGHBOURS, Neighbours, RowId, Tx};
use mnemo_index::{IndexRow, ScanFilter};
use rusqlite::{Connection, OptionalExtension, params};

use crate::codec::content_hash;
use crate::vector_index::{IndexCache, SharedUserIndex, Touched};
use crate::{
    MEMORY_COLUMNS, MEMORY_FROM, Result, StoreError, chain, check_vector, insert_row, ledger,
    put_vector, query_memories, read_run, read_settings, select_memories, to_json, vector_of,
    versions,
};

/// One transaction (or read) of an owner on a connection.
pub(crate) struct SqliteTx<'a> {
    pub(crate) conn: &'a Connection,
    pub(crate) tenant: &'a str,
    pub(crate) user: Option<&'a str>,
    /// The index cache, for a write transaction (neighbours read it, and it follows the
    /// rows the transaction changes).
    pub(crate) index: Option<&'a IndexCache>,
    /// Rows changed that the index has not followed yet.
    pub(crate) unfollowed: Vec<i64>,
    /// Set when the changes reach a whole user or tenant.
    pub(crate) wide: Option<Touched>,
    /// Rows inserted that the index has not followed yet, as the records themselves: the
    /// index takes them without reading them back.
    unindexed: Vec<IndexRow>,
    /// Every row inserted or changed, for an index entry a reader loads before the commit.
    written: Vec<i64>,
    /// Whether the user held no record when the transaction first inserted one (asked once):
    /// then the user's index is exactly what the transaction wrote, and starts empty rather
    /// than being read back from the file.
    new_user: Option<bool>,
    /// The embedder (model and dimensions) whose vectors this transaction found to match
    /// the file's: later vectors of it need no new check.
    vectors_checked: Option<(String, usize)>,
    /// Records as this transaction last read them, by row, for its neighbour queries: a
    /// batch's statements meet the same rows again and again (a conversation's statements
    /// the ones drawn before them). A row is dropped when the transaction changes it; every
    /// row when it changes records it does not name, and when [`KNOWN_ROWS`] are held.
    /// (Keeping every inserted record too cost a large batch more than it saved.)
    known: std::collections::HashMap<i64, Memory>,
}

/// How many records a transaction keeps in [`SqliteTx::known`]: past it, it starts afresh.
pub(crate) const KNOWN_ROWS: usize = 4096;

/// The select of [`SqliteTx::owned`] for one of the store's fixed conditions, written out
/// once per condition: every write runs several, and the column list is long. The
/// conditions are string literals of this file, so the texts kept are few; each is known by
/// its address and length, which a literal keeps.
fn owned_select(where_clause: &'static str) -> &'static str {
    type Selects = std::sync::RwLock<std::collections::HashMap<(usize, usize), &'static str>>;
    static SELECTS: std::sync::LazyLock<Selects> = std::sync::LazyLock::new(Default::default);
    let key = (where_clause.as_ptr() as usize, where_clause.len());
    let known =
        SELECTS.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key).copied();
    known.unwrap_or_else(|| {
        let mut selects = SELECTS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        selects.entry(key).or_insert_with(|| {
            let sql = format!(
                "SELECT {MEMORY_COLUMNS} FROM {MEMORY_FROM} \
                 WHERE m.tenant = ?1 AND m.user_id = ?2 AND {where_clause}"
            );
            Box::leak(sql.into_boxed_str())
        })
    })
}

impl<'a> SqliteTx<'a> {
    pub(crate) fn new(
        conn: &'a Connection,
        tenant: &'a str,
        user: Option<&'a str>,
        index: Option<&'a IndexCache>,
    ) -> Self {
        Self {
            conn,
            tenant,
            user,
            index,
            unfollowed: Vec::new(),
            wide: None,
            unindexed: Vec::new(),
            written: Vec::new(),
            new_user: None,
            vectors_checked: None,
            known: std::collections::HashMap::new(),
        }
    }

    /// What the transaction changed, for the index to follow.
    fn touched(self) -> Touched {
        match self.wide {
            Some(wide) => wide,
            None if self.unfollowed.is_empty() => Touched::Nothing,
            None => Touched::Rows(self.unfollowed),
        }
    }

    /// Checks that `embedded` comes from the embedder of the file's vectors, once per
    /// transaction for each embedder: a vector of the embedder checked before still matches
    /// (the file holds that embedder's vectors, or none).
    fn check_vector(&mut self, embedded: &Embedded) -> Result<()> {
        let same = |(model, dims): &(String, usize)| {
            *model == embedded.model && *dims == embedded.vector.len()
        };
        if !self.vectors_checked.as_ref().is_some_and(same) {
            check_vector(self.conn, embedded)?;
            self.vectors_checked = Some((embedded.model.clone(), embedded.vector.len()));
        }
        Ok(())
    }

    fn user(&self) -> Result<&'a str> {
        self.user.ok_or_else(|| StoreError::Conflict("a tenant-wide job has no user".into()))
    }

    /// The user's index with every row this transaction wrote, for a neighbour query: the
    /// cached entry (or a new user's empty one) takes the inserted records as they are, and
    /// re-reads the rows changed otherwise; an index not cached is loaded with all of them.
    fn followed_index(&mut self, index: &IndexCache, user: &str) -> Result<SharedUserIndex> {
        let create = self.new_user == Some(true);
        let entry = match index.for_following(self.conn, self.tenant, user, create)? {
            Some(entry) => {
                self.index_inserted(&entry);
                entry
            }
            None => {
                self.unindexed.clear();
                index.for_writer(self.conn, self.tenant, user)?
            }
        };
        if !self.unfollowed.is_empty() {
            let rows = Touched::Rows(std::mem::take(&mut self.unfollowed));
            index.follow_uncommitted(self.conn, self.tenant, Some(user), &rows)?;
        }
        Ok(entry)
    }

    /// Adds the records inserted since the last call to the user's index `entry`.
    fn index_inserted(&mut self, entry: &SharedUserIndex) {
        let mut writing = entry.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.unindexed.drain(..).for_each(|row| writing.upsert_row(row));
    }

    /// What the transaction changed, for the index to follow, once the records it inserted
    /// are in the user's index if that is cached (else its next load reads them). Inserts
    /// alone still count as a change of the user's rows.
    pub(crate) fn finish(mut self) -> Result<Touched> {
        // Asked at the first insert of a user's transaction.
        let inserted = self.new_user.is_some();
        if let (Some(index), Some(user), false) = (self.index, self.user, self.written.is_empty()) {
            index.note_written(self.tenant, user, &self.written);
        }
        if let (Some(index), Some(user), false) = (self.index, self.user, self.unindexed.is_empty())
            && let Some(entry) = index.for_following(self.conn, self.tenant, user, false)?
        {
            self.index_inserted(&entry);
        }
        Ok(match self.touched() {
            Touched::Nothing if inserted => Touched::Rows(Vec::new()),
            touched => touched,
        })
    }

    fn changed(&mut self, row: i64) {
        self.known.remove(&row);
        self.written.push(row);
        if !self.unfollowed.contains(&row) {
            self.unfollowed.push(row);
        }
    }

    /// Records of the owner matching `where_clause` (after the owner's own conditions,
    /// `?1` tenant and `?2` user).
    fn owned(
        &self,
        where_clause: &'static str,
        extra: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<(i64, Memory)>> {
        let user = self.user()?;
        let mut bound: Vec<&dyn rusqlite::ToSql> = Vec::with_capacity(2 + extra.len());
        bound.extend_from_slice(&[&self.tenant, &user]);
        bound.extend_from_slice(extra);
        select_memories(self.conn, owned_select(where_clause), &bound)
    }

    /// The owner's records with the given rowids, in their order (missing ones left out).
    fn by_rowid(&self, rows: &[RowId]) -> Result<Vec<(RowId, Memory)>> {
        // One query per chunk of rows (a forget of a whole notebook buries thousands).
        let mut found = std::collections::HashMap::with_capacity(rows.len());
        for chunk in rows.chunks(200) {
            let marks: Vec<String> = (3..chunk.len() + 3).map(|n| format!("?{n}")).collect();
            let mut bound: Vec<&dyn rusqlite::ToSql> = vec![&self.tenant, &self.user];
            bound.extend(chunk.iter().map(|row| row as &dyn rusqlite::ToSql));
            // Unary `+` keeps the planner on the rowids rather than the owner's index.
            let clause = format!(
                "+m.tenant = ?1 AND (?2 IS NULL OR +m.user_id = ?2) AND m.rowid IN ({})",
                marks.join(",")
            );
            found.extend(query_memories(self.conn, &clause, &bound)?);
        }
        Ok(rows.iter().filter_map(|row| Some((*row, found.remove(row)?))).collect())
    }

    /// [`SqliteTx::by_rowid`] through the records this transaction knows; the rows read
    /// are known afterwards.
    pub(crate) fn known_by_rowid(&mut self, rows: &[RowId]) -> Result<Vec<(RowId, Memory)>> {
        let unknown: Vec<RowId> =
            rows.iter().copied().filter(|row| !self.known.contains_key(row)).collect();
        let read: std::collections::HashMap<RowId, Memory> = if unknown.is_empty() {
            std::collections::HashMap::new()
        } else {
            self.by_rowid(&unknown)?.into_iter().collect()
        };
        let found = rows
            .iter()
            .filter_map(|row| {
                let memory = read.get(row).or_else(|| self.known.get(row))?;
                Some((*row, memory.clone()))
            })
            .collect();
        if self.known.len() + read.len() > KNOWN_ROWS {
            self.known.clear();
        }
        self.known.extend(read);
        Ok(found)
    }

    fn neighbours_of(
        &mut self,
        candidate: &Candidate,
        embedding: Option<&Embedded>,
        now: Timestamp,
    ) -> Result<Neighbours> {
        let scope = candidate.scope.to_string();
        let mut found = Neighbours::default();
        if let Some((subject, attribute)) = &candidate.key {
            found.same_key = self
                .owned(
                    "m.scope = ?3 AND m.subject = ?4 AND m.attribute = ?5 AND m.status = 'active'",
                    &[&scope, subject, attribute],
                )?
                .into_iter()
                .map(|(_, m)| m)
                .collect();
        }
        found.same_content = self
            .owned(
                SAME_CONTENT,
                &[
                    &content_hash(&candidate.content),
                    &candidate.kind.as_str(),
                    &scope,
                    &now.as_millis(),
                ],
            )?
            .into_iter()
            .map(|(_, m)| m)
            .collect();
        let Some(embedded) = embedding else { return Ok(found) };
        self.check_vector(embedded)?;
        match (&candidate.kind, &candidate.source.source_ref) {
            // An episode can only duplicate a record of the same message, so compare with
            // those alone rather than scanning every episode of the user.
            (Kind::Episodic, Some(reference)) => {
                let rows = self.owned(
                    "+m.kind = 'episodic' AND m.source_ref = ?3 AND +m.status = 'active'",
                    &[reference],
                )?;
                for (rowid, memory) in rows {
                    if let Some(vector) = vector_of(self.conn, rowid)? {
                        found.same_message.push((memory, vector));
                    }
                }
            }
            _ => {
                let (Some(index), user) = (self.index, self.user()?) else { return Ok(found) };
                let filter = ScanFilter {
                    now: now.as_millis(),
                    kind: Some(candidate.kind),
                    scope: Some(&scope),
                    exclude_sensitive: false,
                };
                // Rows this transaction wrote are neighbours of what it writes next.
                let cached = self.followed_index(index, user)?;
                let nearest = cached
                    .read()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .nearest(&embedded.vector, embedded.calibration.as_deref(), filter, NEIGHBOURS);
                // The neighbours' rows in one query, kept in the order of their closeness.
                let rowids: Vec<RowId> = nearest.iter().map(|near| near.rowid).collect();
                let mut rows: std::collections::HashMap<RowId, Memory> =
                    self.known_by_rowid(&rowids)?.into_iter().collect();
                for near in nearest {
                    if let Some(memory) = rows.remove(&near.rowid) {
                        found.nearest.push((memory, near));
                    }
                }
            }
        }
        Ok(found)
    }
}

/// The records of a user with the same content hash, kind and scope that are live: the
/// duplicate lookup every write makes. Unary `+` keeps the planner on the content-hash index
/// rather than scanning the user's records through the (tenant, user, status, kind) index.
pub(crate) const SAME_CONTENT: &str = "m.content_hash = ?3 AND +m.kind = ?4 AND +m.scope = ?5
     AND +m.status IN ('active', 'pending') AND (m.expires_at IS NULL OR m.expires_at > ?6)";

impl Tx for SqliteTx<'_> {
    fn find(&mut self, id: &MemoryId) -> Result<Option<(RowId, Memory)>, PortError> {
        Ok(self.owned("m.id = ?3", &[&id.0])?.pop())
    }

    fn rows(&mut self, rows: &[RowId]) -> Result<Vec<(RowId, Memory)>, PortError> {
        Ok(self.by_rowid(rows)?)
    }

    fn list(&mut self, filter: &ListFilter, now: Timestamp) -> Result<Vec<Memory>, PortError> {
        let kind = filter.kind.map(|k| k.as_str());
        let status = filter.status.map(|s| s.as_str());
        let scope = filter.scope.as_ref().map(ToString::to_string);
        let rows = self.owned(
            "(?3 IS NULL OR m.kind = ?3)
             AND (?4 IS NULL OR m.status = ?4)
             AND (?5 IS NULL OR m.scope = ?5)
             AND (?6 OR m.expires_at IS NULL OR m.expires_at > ?7)
             AND (?8 IS NULL OR m.session_id = ?8)
             ORDER BY m.created_at DESC, m.rowid DESC",
            &[&kind, &status, &scope, &filter.include_expired, &now.as_millis(), &filter.session],
        )?;
        Ok(rows.into_iter().map(|(_, m)| m).collect())
    }

    fn all(&mut self) -> Result<Vec<(RowId, Memory)>, PortError> {
        Ok(self.owned("1 ORDER BY m.created_at, m.id", &[])?)
    }

    fn expired(&mut self, now: Timestamp) -> Result<Vec<RowId>, PortError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT rowid FROM memories
                  WHERE tenant = ?1 AND (?2 IS NULL OR user_id = ?2)
                    AND expires_at IS NOT NULL AND expires_at <= ?3",
            )
            .map_err(StoreError::from)?;
        let rows = stmt
            .query_map(params![self.tenant, self.user, now.as_millis()], |r| r.get(0))
            .map_err(StoreError::from)?;
        Ok(rows.collect::<Result<_, _>>().map_err(StoreError::from)?)
    }

    fn active_of_key(
        &mut self,
        scope: &str,
        subject: &str,
        attribute: &str,
    ) -> Result<Vec<(RowId, Memory)>, PortError> {
        Ok(self.owned(
            "m.scope = ?3 AND m.subject = ?4 AND m.attribute = ?5 AND m.status = 'active'",
            &[&scope, &subject, &attribute],
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
        Ok(versions(self.conn, row)?)
    }

    fn vector(&mut self, row: RowId) -> Result<Option<Vec<f32>>, PortError> {
        Ok(vector_of(self.conn, row)?)
    }

    fn chain(
        &mut self,
        row: RowId,
        derived: bool,
    ) -> Result<Vec<(RowId, MemoryId, String)>, PortError> {
        Ok(chain(self.conn, row, derived)?)
    }

    fn insert(&mut self, memory: &Memory, vector: Option<&Embedded>) -> Result<RowId, PortError> {
        if let Some(embedded) = vector {
            self.check_vector(embedded)?;
        }
        let follows = self.index.is_some() && self.user.is_some();
        if follows && self.new_user.is_none() {
            let any: bool = self
                .conn
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM memories WHERE tenant = ?1 AND user_id = ?2)",
                )
                .and_then(|mut s| s.query_row(params![self.tenant, self.user], |r| r.get(0)))
                .map_err(StoreError::from)?;
            self.new_user = Some(!any);
        }
        let row = insert_row(self.conn, memory, vector)?;
        if follows {
            self.written.push(row);
            self.unindexed.push(IndexRow::of(row, memory, vector.map(|v| &*v.vector)));
        } else {
            self.changed(row);
        }
        Ok(row)
    }

    fn supersede(
        &mut self,
        id: &MemoryId,
        by: &MemoryId,
        now: Timestamp,
    ) -> Result<Option<RowId>, PortError> {
        let row: Option<i64> = self
            .conn
            .prepare_cached(
                "UPDATE memories SET status = 'superseded', superseded_by = ?1, updated_at = ?2
                  WHERE tenant = ?3 AND user_id = ?4 AND id = ?5
                 RETURNING rowid",
            )
            .map_err(StoreError::from)?
            .query_row(params![by.0, now.as_millis(), self.tenant, self.user()?, id.0], |r| {
                r.get(0)
            })
            .optional()
            .map_err(StoreError::from)?;
        if let Some(row) = row {
            self.changed(row);
        }
        Ok(row)
    }

    fn update(&mut self, row: RowId, memory: &Memory) -> Result<(), PortError> {
        let consent = memory.consent.as_ref().map(to_json).transpose()?;
        self.conn
            .prepare_cached(
                "UPDATE memories SET content = ?1, content_hash = ?2, version = ?3, status = ?4,
                        sensitivity = ?5, consent = ?6, updated_at = ?7, metadata = ?11,
                        shared = ?12, expires_at = ?13
                  WHERE rowid = ?8 AND tenant = ?9 AND user_id = ?10",
            )
            .map_err(StoreError::from)?
            .execute(params![
                memory.content,
                content_hash(&memory.content),
                memory.version,
                memory.status.as_str(),
                memory.sensitivity.as_str(),
                consent,
                memory.updated_at.as_millis(),
                row,
                self.tenant,
                self.user()?,
                to_json(&memory.metadata)?,
                memory.shared.as_ref().map(to_json).transpose()?,
                memory.expires_at.map(Timestamp::as_millis)
            ])
            .map_err(StoreError::from)?;
        self.changed(row);
        Ok(())
    }

    fn set_last_used(&mut self, id: &MemoryId, at: Timestamp) -> Result<bool, PortError> {
        let row: Option<i64> = self
            .conn
            .prepare_cached(
                "UPDATE memories SET last_used_at = ?1
                  WHERE tenant = ?2 AND user_id = ?3 AND id = ?4
                 RETURNING rowid",
            )
            .map_err(StoreError::from)?
            .query_row(params![at.as_millis(), self.tenant, self.user()?, id.0], |r| r.get(0))
            .optional()
            .map_err(StoreError::from)?;
        // Named by id, not row.
        self.known.clear();
        // Not a change the index holds, but the record a search reads back.
        if let Some(row) = row {
            self.written.push(row);
        }
        Ok(row.is_some())
    }

    fn put_vector(&mut self, row: RowId, vector: Option<&Embedded>) -> Result<(), PortError> {
        match vector {
            Some(embedded) => {
                self.check_vector(embedded)?;
                put_vector(self.conn, row, embedded, false)?;
            }
            None => {
                self.conn
                    .prepare_cached("DELETE FROM memory_vectors WHERE memory_rowid = ?1")
                    .map_err(StoreError::from)?
                    .execute([row])
                    .map_err(StoreError::from)?;
            }
        }
        self.changed(row);
        Ok(())
    }

    fn unrefined(&mut self, limit: usize) -> Result<Vec<(RowId, Memory)>, PortError> {
        // Read from the partial index of unrefined vectors (a refiner's backlog, small once
        // it keeps up), not from the owner's records, which may be many.
        static UNREFINED_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            format!(
                "SELECT {MEMORY_COLUMNS}
                   FROM memory_vectors u INDEXED BY memory_vectors_unrefined
                  CROSS JOIN memories m ON m.rowid = u.memory_rowid
                   LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid
                  WHERE u.refined = 0 AND m.tenant = ?1 AND m.user_id = ?2
                  ORDER BY u.memory_rowid LIMIT ?3"
            )
        });
        let user = self.user()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(select_memories(self.conn, &UNREFINED_SQL, &[&self.tenant, &user, &limit])?)
    }

    fn put_refined(&mut self, row: RowId, vector: &Embedded) -> Result<(), PortError> {
        self.check_vector(vector)?;
        put_vector(self.conn, row, vector, true)?;
        self.changed(row);
        Ok(())
    }

    fn put_version(&mut self, row: RowId, version: &MemoryVersion) -> Result<(), PortError> {
        self.conn
            .prepare_cached(
                "INSERT INTO memory_versions (memory_rowid, version, snapshot) VALUES (?1, ?2, ?3)",
            )
            .map_err(StoreError::from)?
            .execute(params![row, version.version, to_json(version)?])
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn delete(&mut self, rows: &[RowId]) -> Result<Removed, PortError> {
        let removed = crate::purge(self.conn, rows)?;
        match self.user {
            Some(_) => rows.iter().for_each(|row| self.changed(*row)),
            None if !rows.is_empty() => {
                self.wide = Some(Touched::Tenant);
                self.known.clear();
            }
            None => {}
        }
        Ok(removed)
    }

    fn delete_rest_of_user(&mut self) -> Result<(u64, u64), PortError> {
        let owner = [self.tenant, self.user()?];
        let runs = self
            .conn
            .prepare_cached("DELETE FROM runs WHERE tenant = ?1 AND user_id = ?2")
            .map_err(StoreError::from)?
            .execute(owner)
            .map_err(StoreError::from)?;
        let links = self
            .conn
            .prepare_cached("DELETE FROM memory_links WHERE tenant = ?1 AND user_id = ?2")
            .map_err(StoreError::from)?
            .execute(owner)
            .map_err(StoreError::from)?;
        self.wide = Some(Touched::User);
        self.known.clear();
        Ok((runs as u64, links as u64))
    }

    fn settings(&mut self) -> Result<UserSettings, PortError> {
        Ok(read_settings(self.conn, self.tenant, self.user()?)?)
    }

    fn put_settings(&mut self, settings: UserSettings, now: Timestamp) -> Result<(), PortError> {
        self.conn
            .execute(
                "INSERT INTO user_settings (tenant, user_id, memory_enabled, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (tenant, user_id)
                 DO UPDATE SET memory_enabled = excluded.memory_enabled,
                               updated_at = excluded.updated_at",
                params![self.tenant, self.user()?, settings.memory_enabled, now.as_millis()],
            )
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn audit(&mut self, user: &str, entry: &AuditEntry) -> Result<(), PortError> {
        self.conn
            .prepare_cached(
                "INSERT INTO audit_log (tenant, user_id, at, action, memory_id, reason, actor,
                                        run_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .map_err(StoreError::from)?
            .execute(params![
                self.tenant,
                user,
                entry.at.as_millis(),
                entry.action.as_str(),
                entry.memory_id.as_ref().map(|id| id.0.as_str()),
                entry.reason.map(mnemo_core::policy::ReasonCode::as_str),
                entry.actor,
                entry.run_id,
            ])
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn tombstone(
        &mut self,
        statement: &str,
        source: Option<&str>,
    ) -> Result<Option<ForgottenMatch>, PortError> {
        Ok(ledger::tombstone(self.conn, self.tenant, self.user()?, statement, source)?)
    }

    fn has_tombstones(&mut self) -> Result<bool, PortError> {
        Ok(ledger::has_tombstones(self.conn, self.tenant, self.user()?)?)
    }

    fn tombstoned(&mut self, id: &MemoryId, statement: &str) -> Result<bool, PortError> {
        Ok(ledger::tombstoned(self.conn, self.tenant, self.user()?, id, statement)?)
    }

    fn put_tombstone(
        &mut self,
        tombstone: &Tombstone,
        at: Timestamp,
        receipt_id: &str,
    ) -> Result<(), PortError> {
        Ok(ledger::put_tombstone(self.conn, self.tenant, self.user()?, tombstone, at, receipt_id)?)
    }

    fn put_receipt(&mut self, receipt: &DeletionReceipt) -> Result<(), PortError> {
        Ok(ledger::put_receipt(self.conn, self.tenant, self.user()?, receipt)?)
    }

    fn run(&mut self, id: &str) -> Result<Option<Run>, PortError> {
        Ok(read_run(self.conn, self.tenant, self.user()?, id)?)
    }

    fn put_run(&mut self, run: &Run, new: bool) -> Result<(), PortError> {
        let state = to_json(run)?;
        let user = self.user()?;
        let sql = if new {
            "INSERT INTO runs (id, tenant, user_id, state, started_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        } else {
            "UPDATE runs SET state = ?4, updated_at = ?6
              WHERE id = ?1 AND tenant = ?2 AND user_id = ?3 AND ?5 IS NOT NULL"
        };
        self.conn
            .prepare_cached(sql)
            .map_err(StoreError::from)?
            .execute(params![
                run.id,
                self.tenant,
                user,
                state,
                run.started_at.as_millis(),
                run.updated_at.as_millis()
            ])
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn delete_run(&mut self, id: &str) -> Result<bool, PortError> {
        let gone = self
            .conn
            .prepare_cached("DELETE FROM runs WHERE tenant = ?1 AND user_id = ?2 AND id = ?3")
            .map_err(StoreError::from)?
            .execute(params![self.tenant, self.user()?, id])
            .map_err(StoreError::from)?;
        Ok(gone > 0)
    }
}
