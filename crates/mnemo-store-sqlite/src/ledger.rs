//! The deletion ledger in the file: the key tombstones are hashed with, tombstones of removed
//! records (ids and keyed hashes, never text), and receipts (see `mnemo_core::ledger`).

use mnemo_core::ledger::{Counted, DeletionReceipt, ForgottenMatch, LedgerKey, Remnant, Tombstone};
use mnemo_core::lifecycle::Candidate;
use mnemo_core::ports::DeletionRequest;
use mnemo_core::{Memory, MemoryId, Timestamp, UserRef};
use rusqlite::{Connection, OptionalExtension, params};

use crate::{Result, StoreError, to_json, versions};

/// The file's ledger key (made by migration 9).
pub(crate) fn read_key(conn: &Connection) -> Result<LedgerKey> {
    let bytes: Vec<u8> =
        conn.query_row("SELECT key FROM ledger_key WHERE id = 1", [], |r| r.get(0))?;
    LedgerKey::from_slice(&bytes)
        .ok_or_else(|| StoreError::Conflict("the deletion ledger's key is damaged".into()))
}

/// The tombstone of the candidate's statement, if the user asked to forget it.
pub(crate) fn forgotten(
    conn: &Connection,
    who: &UserRef,
    key: &LedgerKey,
    candidate: &Candidate,
) -> Result<Option<ForgottenMatch>> {
    let statement = key.statement_digest(&candidate.content);
    let source = candidate.source.source_ref.as_deref().map(|r| key.source_digest(r));
    let found: (Option<i64>, Option<bool>) = conn
        .prepare_cached(
            "SELECT max(deleted_at), max(coalesce(source_digest = ?4, 0)) FROM ledger_tombstones
              WHERE tenant = ?1 AND user_id = ?2 AND statement_digest = ?3",
        )?
        .query_row(params![who.tenant(), who.user_id(), statement, source], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    Ok(found.0.map(|at| ForgottenMatch {
        deleted_at: Timestamp::from_millis(at),
        same_source: found.1.unwrap_or(false),
    }))
}

/// Whether an imported record was forgotten: its id or its statement has a tombstone.
pub(crate) fn import_forgotten(
    conn: &Connection,
    who: &UserRef,
    key: &LedgerKey,
    memory: &Memory,
) -> Result<bool> {
    let statement = key.statement_digest(&memory.content);
    let hit: Option<i64> = conn
        .prepare_cached(
            "SELECT 1 FROM ledger_tombstones WHERE tenant = ?1 AND user_id = ?2
                AND (memory_id = ?3 OR statement_digest = ?4) LIMIT 1",
        )?
        .query_row(params![who.tenant(), who.user_id(), memory.id.0, statement], |r| r.get(0))
        .optional()?;
    Ok(hit.is_some())
}

/// Leaves the tombstones of each record about to be removed (by rowid); returns how many.
pub(crate) fn bury(
    tx: &Connection,
    who: &UserRef,
    key: &LedgerKey,
    rowids: &[i64],
    request: &DeletionRequest<'_>,
) -> Result<u64> {
    let mut written = 0;
    for &rowid in rowids {
        let (id, content, source_ref): (String, String, Option<String>) = tx
            .prepare_cached("SELECT id, content, source_ref FROM memories WHERE rowid = ?1")?
            .query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        let earlier = versions(tx, rowid)?;
        let statements =
            std::iter::once(content.as_str()).chain(earlier.iter().map(|v| v.content.as_str()));
        for tombstone in Tombstone::all_of(key, &MemoryId(id), statements, source_ref.as_deref()) {
            tx.prepare_cached(
                "INSERT INTO ledger_tombstones (tenant, user_id, memory_id, statement_digest,
                                                source_digest, deleted_at, receipt_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                who.tenant(),
                who.user_id(),
                tombstone.memory_id.0,
                tombstone.statement_digest,
                tombstone.source_digest,
                request.now.as_millis(),
                request.receipt_id
            ])?;
            written += 1;
        }
    }
    Ok(written)
}

/// What stays after a deletion commits in this store: nothing in the file (freed pages are
/// zeroed and the write-ahead log truncated at commit); backups are added by the ledger.
fn store_remains(at: Timestamp) -> Vec<Remnant> {
    vec![Remnant {
        place: "database file and write-ahead log".into(),
        until: Some(at),
        detail: "freed pages were overwritten and the write-ahead log was checkpointed and \
                 truncated when the deletion committed: nothing remains in them"
            .into(),
    }]
}

/// Stores the receipt of a deletion in the ledger and returns it.
pub(crate) fn save_receipt(
    tx: &Connection,
    who: &UserRef,
    counted: Counted,
    request: &DeletionRequest<'_>,
) -> Result<DeletionReceipt> {
    let receipt = counted.receipt(request, store_remains(request.now));
    tx.prepare_cached(
        "INSERT INTO deletion_receipts (tenant, user_id, id, at, receipt)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        who.tenant(),
        who.user_id(),
        receipt.id,
        receipt.at.as_millis(),
        to_json(&receipt)?
    ])?;
    Ok(receipt)
}

/// The user's receipts, newest first.
pub(crate) fn receipts(
    conn: &Connection,
    who: &UserRef,
    limit: usize,
) -> Result<Vec<DeletionReceipt>> {
    let mut stmt = conn.prepare_cached(
        "SELECT receipt FROM deletion_receipts WHERE tenant = ?1 AND user_id = ?2
          ORDER BY at DESC, id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(
        params![who.tenant(), who.user_id(), i64::try_from(limit).unwrap_or(i64::MAX)],
        |r| r.get::<_, String>(0),
    )?;
    rows.map(|text| serde_json::from_str(&text?).map_err(StoreError::Json)).collect()
}
