//! Forward-only schema migrations, recorded in `schema_migrations`.
//!
//! Nodes starting at the same moment take one session-level advisory lock in turn, so each
//! step is applied exactly once; each step commits in its own transaction.

use postgres::Client;

use crate::StoreError;

/// The migrations, in order. Never edit a released one: add a new file.
const MIGRATIONS: &[(u32, &str, &str)] = &[
    (1, "initial", include_str!("../migrations/0001_initial.sql")),
    (2, "changes_since", include_str!("../migrations/0002_changes_since.sql")),
    (3, "one_embedder", include_str!("../migrations/0003_one_embedder.sql")),
    (4, "deletion_ledger", include_str!("../migrations/0004_deletion_ledger.sql")),
    (5, "key_rates", include_str!("../migrations/0005_key_rates.sql")),
    (6, "spaces", include_str!("../migrations/0006_spaces.sql")),
    (7, "sign_in_links", include_str!("../migrations/0007_sign_in_links.sql")),
    (8, "refined_vectors", include_str!("../migrations/0008_refined_vectors.sql")),
];

/// The newest schema version this build knows.
pub const LATEST_VERSION: u32 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// The advisory lock key migrations run under.
const MIGRATION_LOCK: i64 = 0x6d6e_656d_6f00;

/// The schema version recorded in the database (0 for a new one).
pub(crate) fn current_version(client: &mut Client) -> Result<u32, StoreError> {
    client.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    integer PRIMARY KEY,
             name       text    NOT NULL,
             applied_at bigint  NOT NULL
         )",
    )?;
    let version: Option<i32> =
        client.query_one("SELECT max(version) FROM schema_migrations", &[])?.try_get(0)?;
    Ok(version.and_then(|v| u32::try_from(v).ok()).unwrap_or(0))
}

/// Applies every migration newer than the database's version.
pub(crate) fn migrate(client: &mut Client, now_millis: i64) -> Result<u32, StoreError> {
    // Wait for another node's migration however long it takes (the connection's
    // `lock_timeout` is for requests), then return to the configured timeout.
    client.batch_execute("SET lock_timeout = 0")?;
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])?;
    let result = apply(client, now_millis);
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]);
    client.batch_execute("RESET lock_timeout")?;
    let version = result?;
    unlocked?;
    Ok(version)
}

fn apply(client: &mut Client, now_millis: i64) -> Result<u32, StoreError> {
    let found = current_version(client)?;
    if found > LATEST_VERSION {
        return Err(StoreError::SchemaTooNew { found, supported: LATEST_VERSION });
    }
    for &(version, name, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > found) {
        let mut tx = client.transaction()?;
        tx.batch_execute(sql).map_err(|source| StoreError::Migration { version, source })?;
        let number = i32::try_from(version).unwrap_or(i32::MAX);
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
            &[&number, &name, &now_millis],
        )?;
        tx.commit()?;
    }
    current_version(client)
}
