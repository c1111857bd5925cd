//! The deletion ledger in the database: the key tombstones are hashed with, tombstones of
//! removed records (ids and keyed hashes, never text), and receipts (see `mnemo_core::ledger`).

use mnemo_core::ledger::{DeletionReceipt, ForgottenMatch, LedgerKey, Remnant, Tombstone};
use mnemo_core::{MemoryId, Timestamp};
use postgres::GenericClient;

use crate::{Result, StoreError, to_json};

/// The database's ledger key (made by migration 4).
pub(crate) fn read_key(client: &mut impl GenericClient) -> Result<LedgerKey> {
    let bytes: Vec<u8> =
        client.query_one("SELECT key FROM ledger_key WHERE id = 1", &[])?.try_get(0)?;
    LedgerKey::from_slice(&bytes)
        .ok_or_else(|| StoreError::Conflict("the deletion ledger's key is damaged".into()))
}

/// The latest tombstone of a statement digest of the user, and whether one of them has the
/// source digest too.
pub(crate) fn tombstone(
    client: &mut impl GenericClient,
    (tenant, user): (&str, &str),
    statement: &str,
    source: Option<&str>,
) -> Result<Option<ForgottenMatch>> {
    let row = client.query_one(
        "SELECT max(deleted_at), coalesce(bool_or(source_digest = $4), false)
           FROM ledger_tombstones
          WHERE tenant = $1 AND user_id = $2 AND statement_digest = $3",
        &[&tenant, &user, &statement, &source],
    )?;
    let deleted_at: Option<i64> = row.try_get(0)?;
    Ok(deleted_at.map(|at| ForgottenMatch {
        deleted_at: Timestamp::from_millis(at),
        same_source: row.try_get(1).unwrap_or(false),
    }))
}

/// Whether the user has any tombstone.
pub(crate) fn has_tombstones(
    client: &mut impl GenericClient,
    (tenant, user): (&str, &str),
) -> Result<bool> {
    let row = client.query_one(
        "SELECT EXISTS (SELECT 1 FROM ledger_tombstones WHERE tenant = $1 AND user_id = $2)",
        &[&tenant, &user],
    )?;
    Ok(row.try_get(0)?)
}

/// Whether the user has a tombstone with this id or this statement digest.
pub(crate) fn tombstoned(
    client: &mut impl GenericClient,
    (tenant, user): (&str, &str),
    id: &MemoryId,
    statement: &str,
) -> Result<bool> {
    let row = client.query_opt(
        "SELECT 1 FROM ledger_tombstones WHERE tenant = $1 AND user_id = $2
            AND (memory_id = $3 OR statement_digest = $4) LIMIT 1",
        &[&tenant, &user, &id.0, &statement],
    )?;
    Ok(row.is_some())
}

/// Leaves one tombstone.
pub(crate) fn put_tombstone(
    client: &mut impl GenericClient,
    (tenant, user): (&str, &str),
    tombstone: &Tombstone,
    at: Timestamp,
    receipt_id: &str,
) -> Result<()> {
    client.execute(
        "INSERT INTO ledger_tombstones (tenant, user_id, memory_id, statement_digest,
                                        source_digest, deleted_at, receipt_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &tenant,
            &user,
            &tombstone.memory_id.0,
            &tombstone.statement_digest,
            &tombstone.source_digest,
            &at.as_millis(),
            &receipt_id,
        ],
    )?;
    Ok(())
}

/// What PostgreSQL keeps after a deletion commits (docs/OPERATIONS.md); backups are added by
/// the ledger.
pub(crate) fn store_remains() -> Vec<Remnant> {
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

/// Stores the receipt of a deletion.
pub(crate) fn put_receipt(
    client: &mut impl GenericClient,
    (tenant, user): (&str, &str),
    receipt: &DeletionReceipt,
) -> Result<()> {
    client.execute(
        "INSERT INTO deletion_receipts (tenant, user_id, id, at, receipt)
         VALUES ($1, $2, $3, $4, $5)",
        &[&tenant, &user, &receipt.id, &receipt.at.as_millis(), &to_json(receipt)?],
    )?;
    Ok(())
}

/// The user's receipts, newest first.
pub(crate) fn receipts(
    client: &mut impl GenericClient,
    (tenant, user): (&str, &str),
    limit: usize,
) -> Result<Vec<DeletionReceipt>> {
    client
        .query(
            "SELECT receipt FROM deletion_receipts WHERE tenant = $1 AND user_id = $2
              ORDER BY at DESC, id DESC LIMIT $3",
            &[&tenant, &user, &i64::try_from(limit).unwrap_or(i64::MAX)],
        )?
        .iter()
        .map(|row| serde_json::from_str(&row.try_get::<_, String>(0)?).map_err(StoreError::Json))
        .collect()
}
