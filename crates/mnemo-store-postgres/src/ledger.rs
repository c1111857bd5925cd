//! The deletion ledger in the database: the key tombstones are hashed with, tombstones of
//! removed records (ids and keyed hashes, never text), and receipts (see `mnemo_core::ledger`).

use mnemo_core::ledger::{Counted, DeletionReceipt, ForgottenMatch, LedgerKey, Remnant, Tombstone};
use mnemo_core::lifecycle::Candidate;
use mnemo_core::ports::DeletionRequest;
use mnemo_core::{Memory, MemoryId, Timestamp, UserRef};
use postgres::{GenericClient, Transaction};

use crate::{Result, StoreError, to_json, versions};

/// The database's ledger key (made by migration 4).
pub(crate) fn read_key(client: &mut impl GenericClient) -> Result<LedgerKey> {
    let bytes: Vec<u8> =
        client.query_one("SELECT key FROM ledger_key WHERE id = 1", &[])?.try_get(0)?;
    LedgerKey::from_slice(&bytes)
        .ok_or_else(|| StoreError::Conflict("the deletion ledger's key is damaged".into()))
}

/// The tombstone of the candidate's statement, if the user asked to forget it.
pub(crate) fn forgotten(
    client: &mut impl GenericClient,
    who: &UserRef,
    key: &LedgerKey,
    candidate: &Candidate,
) -> Result<Option<ForgottenMatch>> {
    let statement = key.statement_digest(&candidate.content);
    let source = candidate.source.source_ref.as_deref().map(|r| key.source_digest(r));
    let row = client.query_one(
        "SELECT max(deleted_at), coalesce(bool_or(source_digest = $4), false)
           FROM ledger_tombstones
          WHERE tenant = $1 AND user_id = $2 AND statement_digest = $3",
        &[&who.tenant(), &who.user_id(), &statement, &source],
    )?;
    let deleted_at: Option<i64> = row.try_get(0)?;
    Ok(deleted_at.map(|at| ForgottenMatch {
        deleted_at: Timestamp::from_millis(at),
        same_source: row.try_get(1).unwrap_or(false),
    }))
}

/// Whether an imported record was forgotten: its id or its statement has a tombstone.
pub(crate) fn import_forgotten(
    client: &mut impl GenericClient,
    who: &UserRef,
    key: &LedgerKey,
    memory: &Memory,
) -> Result<bool> {
    let statement = key.statement_digest(&memory.content);
    let row = client.query_opt(
        "SELECT 1 FROM ledger_tombstones WHERE tenant = $1 AND user_id = $2
            AND (memory_id = $3 OR statement_digest = $4) LIMIT 1",
        &[&who.tenant(), &who.user_id(), &memory.id.0, &statement],
    )?;
    Ok(row.is_some())
}

/// Leaves the tombstones of each record about to be removed (by rowid); returns how many.
pub(crate) fn bury(
    tx: &mut Transaction<'_>,
    who: &UserRef,
    key: &LedgerKey,
    rowids: &[i64],
    request: &DeletionRequest<'_>,
) -> Result<u64> {
    let mut written = 0;
    for &rowid in rowids {
        let row = tx.query_one(
            "SELECT id, content, source_ref FROM memories
              WHERE tenant = $1 AND user_id = $2 AND rowid = $3",
            &[&who.tenant(), &who.user_id(), &rowid],
        )?;
        let (id, content, source_ref): (String, String, Option<String>) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        let earlier = versions(tx, who, rowid)?;
        let statements =
            std::iter::once(content.as_str()).chain(earlier.iter().map(|v| v.content.as_str()));
        for tombstone in Tombstone::all_of(key, &MemoryId(id), statements, source_ref.as_deref()) {
            tx.execute(
                "INSERT INTO ledger_tombstones (tenant, user_id, memory_id, statement_digest,
                                                source_digest, deleted_at, receipt_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &who.tenant(),
                    &who.user_id(),
                    &tombstone.memory_id.0,
                    &tombstone.statement_digest,
                    &tombstone.source_digest,
                    &request.now.as_millis(),
                    &request.receipt_id,
                ],
            )?;
            written += 1;
        }
    }
    Ok(written)
}

/// What PostgreSQL keeps after a deletion commits (docs/OPERATIONS.md); backups are added by
/// the ledger.
fn store_remains() -> Vec<Remnant> {
    vec![
        Remnant {
            place: "PostgreSQL table and index files (dead tuples)".into(),
            until: None,
            detail: "no query can read the rows since the commit; their bytes stay in the \
                     files until VACUUM FULL or pg_repack rewrites the tables, on the schedule \
                     the operator runs (docs/OPERATIONS.md)"
                .into(),
        },
        Remnant {
            place: "PostgreSQL write-ahead log and its archive".into(),
            until: None,
            detail: "the change is logged; segments are recycled after checkpoints, and \
                     archived segments are kept for the operator's archive retention"
                .into(),
        },
    ]
}

/// Stores the receipt of a deletion in the ledger and returns it.
pub(crate) fn save_receipt(
    tx: &mut Transaction<'_>,
    who: &UserRef,
    counted: Counted,
    request: &DeletionRequest<'_>,
) -> Result<DeletionReceipt> {
    let receipt = counted.receipt(request, store_remains());
    tx.execute(
        "INSERT INTO deletion_receipts (tenant, user_id, id, at, receipt)
         VALUES ($1, $2, $3, $4, $5)",
        &[&who.tenant(), &who.user_id(), &receipt.id, &receipt.at.as_millis(), &to_json(&receipt)?],
    )?;
    Ok(receipt)
}

/// The user's receipts, newest first.
pub(crate) fn receipts(
    client: &mut impl GenericClient,
    who: &UserRef,
    limit: usize,
) -> Result<Vec<DeletionReceipt>> {
    client
        .query(
            "SELECT receipt FROM deletion_receipts WHERE tenant = $1 AND user_id = $2
              ORDER BY at DESC, id DESC LIMIT $3",
            &[&who.tenant(), &who.user_id(), &i64::try_from(limit).unwrap_or(i64::MAX)],
        )?
        .iter()
        .map(|row| serde_json::from_str(&row.try_get::<_, String>(0)?).map_err(StoreError::Json))
        .collect()
}
