//! The deletion ledger in the file: the key tombstones are hashed with, tombstones of removed
//! records (ids and keyed hashes, never text), and receipts (see `mnemo_core::ledger`; the
//! engine decides what they hold).

use mnemo_core::ledger::{DeletionReceipt, ForgottenMatch, LedgerKey, Remnant, Tombstone};
use mnemo_core::{MemoryId, Timestamp};
use rusqlite::{Connection, OptionalExtension, params};

use crate::{Result, StoreError, to_json};

/// The file's ledger key (made by migration 9).
pub(crate) fn read_key(conn: &Connection) -> Result<LedgerKey> {
    let bytes: Vec<u8> =
        conn.query_row("SELECT key FROM ledger_key WHERE id = 1", [], |r| r.get(0))?;
    LedgerKey::from_slice(&bytes)
        .ok_or_else(|| StoreError::Conflict("the deletion ledger's key is damaged".into()))
}

/// The latest tombstone of a statement digest of the user, and whether one of them has the
/// source digest too.
pub(crate) fn tombstone(
    conn: &Connection,
    tenant: &str,
    user: &str,
    statement: &str,
    source: Option<&str>,
) -> Result<Option<ForgottenMatch>> {
    let found: (Option<i64>, Option<bool>) = conn
        .prepare_cached(
            "SELECT max(deleted_at), max(coalesce(source_digest = ?4, 0)) FROM ledger_tombstones
              WHERE tenant = ?1 AND user_id = ?2 AND statement_digest = ?3",
        )?
        .query_row(params![tenant, user, statement, source], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(found.0.map(|at| ForgottenMatch {
        deleted_at: Timestamp::from_millis(at),
        same_source: found.1.unwrap_or(false),
    }))
}

/// Whether the user has any tombstone.
pub(crate) fn has_tombstones(conn: &Connection, tenant: &str, user: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM ledger_tombstones WHERE tenant = ?1 AND user_id = ?2)",
        )?
        .query_row(params![tenant, user], |r| r.get(0))?)
}

/// Whether the user has a tombstone with this id or this statement digest.
pub(crate) fn tombstoned(
    conn: &Connection,
    tenant: &str,
    user: &str,
    id: &MemoryId,
    statement: &str,
) -> Result<bool> {
    let hit: Option<i64> = conn
        .prepare_cached(
            "SELECT 1 FROM ledger_tombstones WHERE tenant = ?1 AND user_id = ?2
                AND (memory_id = ?3 OR statement_digest = ?4) LIMIT 1",
        )?
        .query_row(params![tenant, user, id.0, statement], |r| r.get(0))
        .optional()?;
    Ok(hit.is_some())
}

/// Leaves one tombstone.
pub(crate) fn put_tombstone(
    tx: &Connection,
    tenant: &str,
    user: &str,
    tombstone: &Tombstone,
    at: Timestamp,
    receipt_id: &str,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO ledger_tombstones (tenant, user_id, memory_id, statement_digest,
                                        source_digest, deleted_at, receipt_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        tenant,
        user,
        tombstone.memory_id.0,
        tombstone.statement_digest,
        tombstone.source_digest,
        at.as_millis(),
        receipt_id
    ])?;
    Ok(())
}

/// What stays after a deletion commits in this store: nothing in the file (freed pages are
/// zeroed and the write-ahead log truncated at commit); backups are added by the ledger.
pub(crate) fn store_remains(at: Timestamp) -> Vec<Remnant> {
    vec![Remnant {
        place: "database file and write-ahead log".into(),
        until: Some(at),
        detail: "freed pages were overwritten and the write-ahead log was checkpointed and \
                 truncated when the deletion committed: nothing remains in them"
            .into(),
    }]
}

/// Stores the receipt of a deletion.
pub(crate) fn put_receipt(
    tx: &Connection,
    tenant: &str,
    user: &str,
    receipt: &DeletionReceipt,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO deletion_receipts (tenant, user_id, id, at, receipt)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![tenant, user, receipt.id, receipt.at.as_millis(), to_json(receipt)?])?;
    Ok(())
}

/// The user's receipts, newest first.
pub(crate) fn receipts(
    conn: &Connection,
    tenant: &str,
    user: &str,
    limit: usize,
) -> Result<Vec<DeletionReceipt>> {
    let mut stmt = conn.prepare_cached(
        "SELECT receipt FROM deletion_receipts WHERE tenant = ?1 AND user_id = ?2
          ORDER BY at DESC, id DESC LIMIT ?3",
    )?;
    let rows = stmt
        .query_map(params![tenant, user, i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
            r.get::<_, String>(0)
        })?;
    rows.map(|text| serde_json::from_str(&text?).map_err(StoreError::Json)).collect()
}
