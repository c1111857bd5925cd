//! Keeping the contentless full-text tables in step with the records.
//!
//! `memory_fts` indexes each record with its conversational context: for a record with a
//! session, the text of the previous turn, the one before it, and the next turn of that
//! session (by rowid order). `session_fts` indexes each session as one document. Contentless
//! FTS5 tables can only delete a row given the exact text it was indexed with, so every
//! change follows one discipline: remove the affected rows' entries as they are now, change
//! the records, then index the affected rows as they have become.

use std::collections::BTreeSet;

use rusqlite::{OptionalExtension, Transaction, params};

use crate::StoreError;

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A record's session: tenant, user and session id.
type SessionKey = (String, String, String);

fn session_of(tx: &Transaction<'_>, rowid: i64) -> Result<Option<SessionKey>> {
    let found: Option<(String, String, Option<String>)> = tx
        .prepare_cached("SELECT tenant, user_id, session_id FROM memories WHERE rowid = ?1")?
        .query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    Ok(found.and_then(|(t, u, s)| s.map(|s| (t, u, s))))
}

/// Rowids of the session's records before `rowid` (nearest first, at most `n`).
fn before(tx: &Transaction<'_>, key: &SessionKey, rowid: i64, n: i64) -> Result<Vec<i64>> {
    let mut stmt = tx.prepare_cached(
        "SELECT rowid FROM memories
          WHERE tenant = ?1 AND user_id = ?2 AND session_id = ?3 AND rowid < ?4
          ORDER BY rowid DESC LIMIT ?5",
    )?;
    let rows = stmt.query_map(params![key.0, key.1, key.2, rowid, n], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Rowids of the session's records after `rowid` (nearest first, at most `n`).
fn after(tx: &Transaction<'_>, key: &SessionKey, rowid: i64, n: i64) -> Result<Vec<i64>> {
    let mut stmt = tx.prepare_cached(
        "SELECT rowid FROM memories
          WHERE tenant = ?1 AND user_id = ?2 AND session_id = ?3 AND rowid > ?4
          ORDER BY rowid ASC LIMIT ?5",
    )?;
    let rows = stmt.query_map(params![key.0, key.1, key.2, rowid, n], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn content(tx: &Transaction<'_>, rowid: i64) -> Result<String> {
    Ok(tx
        .prepare_cached("SELECT content FROM memories WHERE rowid = ?1")?
        .query_row([rowid], |r| r.get(0))?)
}

/// The full-text token naming a user's entries (`o` and the `memory_owners` rowid), created
/// on first use.
pub(crate) fn owner_token(tx: &Transaction<'_>, tenant: &str, user: &str) -> Result<String> {
    let found: Option<i64> = tx
        .prepare_cached("SELECT rowid FROM memory_owners WHERE tenant = ?1 AND user_id = ?2")?
        .query_row(params![tenant, user], |r| r.get(0))
        .optional()?;
    let id = match found {
        Some(id) => id,
        None => {
            tx.prepare_cached("INSERT INTO memory_owners (tenant, user_id) VALUES (?1, ?2)")?
                .execute(params![tenant, user])?;
            tx.last_insert_rowid()
        }
    };
    Ok(format!("o{id}"))
}

/// The five indexed columns of a record as the records stand now: its text, the previous
/// turn, the one before, the next turn, and its owner token.
fn columns(tx: &Transaction<'_>, rowid: i64) -> Result<[String; 5]> {
    let (own, tenant, user, session): (String, String, String, Option<String>) = tx
        .prepare_cached(
            "SELECT content, tenant, user_id, session_id FROM memories WHERE rowid = ?1",
        )?
        .query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    let owner = owner_token(tx, &tenant, &user)?;
    let Some(session) = session else {
        return Ok([own, String::new(), String::new(), String::new(), owner]);
    };
    let key = (tenant, user, session);
    let previous = before(tx, &key, rowid, 2)?;
    let next = after(tx, &key, rowid, 1)?;
    let text = |r: Option<&i64>| r.map_or(Ok(String::new()), |r| content(tx, *r));
    Ok([own, text(previous.first())?, text(previous.get(1))?, text(next.first())?, owner])
}

fn unindex(tx: &Transaction<'_>, rowid: i64) -> Result<()> {
    let [own, b1, b2, a, owner] = columns(tx, rowid)?;
    tx.prepare_cached(
        "INSERT INTO memory_fts (memory_fts, rowid, content, before1, before2, after, owner)
         VALUES ('delete', ?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![rowid, own, b1, b2, a, owner])?;
    Ok(())
}

fn index(tx: &Transaction<'_>, rowid: i64) -> Result<()> {
    let [own, b1, b2, a, owner] = columns(tx, rowid)?;
    tx.prepare_cached(
        "INSERT INTO memory_fts (rowid, content, before1, before2, after, owner)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![rowid, own, b1, b2, a, owner])?;
    Ok(())
}

/// The rows whose context includes `rowid`'s text or position: the turn before it and the
/// two after it.
fn dependents(tx: &Transaction<'_>, key: &SessionKey, rowid: i64) -> Result<Vec<i64>> {
    let mut rows = before(tx, key, rowid, 1)?;
    rows.extend(after(tx, key, rowid, 2)?);
    Ok(rows)
}

/// The sessions touched in one transaction. Each session document is removed from the index
/// the first time its session is touched and indexed again, as it has become, at [`flush`].
///
/// [`flush`]: SessionDocs::flush
#[derive(Debug, Default)]
pub(crate) struct SessionDocs {
    touched: BTreeSet<SessionKey>,
}

fn session_text(tx: &Transaction<'_>, key: &SessionKey) -> Result<String> {
    let mut stmt = tx.prepare_cached(
        "SELECT content FROM memories WHERE tenant = ?1 AND user_id = ?2 AND session_id = ?3
          ORDER BY rowid",
    )?;
    let rows = stmt.query_map(params![key.0, key.1, key.2], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?.join("\n"))
}

fn session_rowid(tx: &Transaction<'_>, key: &SessionKey) -> Result<Option<i64>> {
    Ok(tx
        .prepare_cached(
            "SELECT rowid FROM memory_sessions WHERE tenant = ?1 AND user_id = ?2 AND session_id = ?3",
        )?
        .query_row(params![key.0, key.1, key.2], |r| r.get(0))
        .optional()?)
}

impl SessionDocs {
    fn touch(&mut self, tx: &Transaction<'_>, key: &SessionKey) -> Result<()> {
        if self.touched.contains(key) {
            return Ok(());
        }
        if let Some(doc) = session_rowid(tx, key)? {
            let text = session_text(tx, key)?;
            tx.prepare_cached(
                "INSERT INTO session_fts (session_fts, rowid, content) VALUES ('delete', ?1, ?2)",
            )?
            .execute(params![doc, text])?;
        }
        self.touched.insert(key.clone());
        Ok(())
    }

    /// Indexes every touched session as it now stands (dropping sessions left empty).
    pub(crate) fn flush(self, tx: &Transaction<'_>) -> Result<()> {
        for key in &self.touched {
            let text = session_text(tx, key)?;
            let existing = session_rowid(tx, key)?;
            if text.is_empty() {
                if let Some(doc) = existing {
                    tx.execute("DELETE FROM memory_sessions WHERE rowid = ?1", [doc])?;
                }
                continue;
            }
            let doc = match existing {
                Some(doc) => doc,
                None => {
                    tx.prepare_cached(
                        "INSERT INTO memory_sessions (tenant, user_id, session_id) VALUES (?1, ?2, ?3)",
                    )?
                    .execute(params![key.0, key.1, key.2])?;
                    tx.last_insert_rowid()
                }
            };
            let owner = owner_token(tx, &key.0, &key.1)?;
            tx.prepare_cached(
                "INSERT INTO session_fts (rowid, content, owner) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![doc, text, owner])?;
        }
        Ok(())
    }

    /// Inserts a record through `insert` (which returns its new, largest rowid) and indexes it
    /// with its context; the previous turn of its session gains it as its next turn.
    pub(crate) fn insert(
        &mut self,
        tx: &Transaction<'_>,
        session: Option<SessionKey>,
        insert: impl FnOnce() -> Result<i64>,
    ) -> Result<i64> {
        let Some(key) = session else {
            let rowid = insert()?;
            index(tx, rowid)?;
            return Ok(rowid);
        };
        self.touch(tx, &key)?;
        let previous = before(tx, &key, i64::MAX, 1)?;
        for p in &previous {
            unindex(tx, *p)?;
        }
        let rowid = insert()?;
        for p in previous.iter().chain([&rowid]) {
            index(tx, *p)?;
        }
        Ok(rowid)
    }

    /// Changes record `rowid` through `change` (update or delete), keeping its own entry and
    /// its neighbours' entries in step.
    pub(crate) fn change(
        &mut self,
        tx: &Transaction<'_>,
        rowid: i64,
        change: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let session = session_of(tx, rowid)?;
        let neighbours = match &session {
            Some(key) => {
                self.touch(tx, key)?;
                dependents(tx, key, rowid)?
            }
            None => Vec::new(),
        };
        for r in neighbours.iter().chain([&rowid]) {
            unindex(tx, *r)?;
        }
        change()?;
        let still_there: bool = tx
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM memories WHERE rowid = ?1)")?
            .query_row([rowid], |r| r.get(0))?;
        for r in &neighbours {
            index(tx, *r)?;
        }
        if still_there {
            index(tx, rowid)?;
        }
        Ok(())
    }
}

/// Builds a session key for a record about to be inserted.
pub(crate) fn key(tenant: &str, user: &str, session: Option<&str>) -> Option<SessionKey> {
    session.map(|s| (tenant.to_owned(), user.to_owned(), s.to_owned()))
}
