//! Forward-only schema migrations, recorded in `schema_migrations`.
//!
//! Each migration runs in its own immediate transaction and re-checks the recorded version
//! inside it, so processes opening one file at the same moment apply each step exactly once.

use rusqlite::{Connection, TransactionBehavior, params};

use crate::StoreError;

/// The migrations, in order. Never edit a released one: add a new file.
const MIGRATIONS: &[(u32, &str, &str)] = &[
    (1, "initial", include_str!("../migrations/0001_initial.sql")),
    (2, "source_ref_index", include_str!("../migrations/0002_source_ref_index.sql")),
    (3, "conversation_context", include_str!("../migrations/0003_conversation_context.sql")),
    (4, "fts_owner", include_str!("../migrations/0004_fts_owner.sql")),
    (5, "api_keys", include_str!("../migrations/0005_api_keys.sql")),
    (6, "runs", include_str!("../migrations/0006_runs.sql")),
    (7, "transcript", include_str!("../migrations/0007_transcript.sql")),
    (8, "derived", include_str!("../migrations/0008_derived.sql")),
    (9, "deletion_ledger", include_str!("../migrations/0009_deletion_ledger.sql")),
    (10, "key_rates", include_str!("../migrations/0010_key_rates.sql")),
    (11, "drop_fulltext", include_str!("../migrations/0011_drop_fulltext.sql")),
    (12, "spaces", include_str!("../migrations/0012_spaces.sql")),
    (13, "sign_in_links", include_str!("../migrations/0013_sign_in_links.sql")),
    (14, "refined_vectors", include_str!("../migrations/0014_refined_vectors.sql")),
];

/// The newest schema version this build knows.
pub const LATEST_VERSION: u32 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// The schema version recorded in the database (0 for a new file).
pub(crate) fn current_version(conn: &Connection) -> Result<u32, StoreError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    INTEGER PRIMARY KEY,
             name       TEXT    NOT NULL,
             applied_at INTEGER NOT NULL
         )",
    )?;
    let version: Option<u32> =
        conn.query_row("SELECT max(version) FROM schema_migrations", [], |row| row.get(0))?;
    Ok(version.unwrap_or(0))
}

/// Applies every migration newer than the database's version, all in one immediate
/// transaction: a step that fails leaves the file as it was before the first, and processes
/// opening one file at the same moment apply each step exactly once.
pub(crate) fn migrate(conn: &mut Connection, now_millis: i64) -> Result<u32, StoreError> {
    let found = current_version(conn)?;
    if found > LATEST_VERSION {
        return Err(StoreError::SchemaTooNew { found, supported: LATEST_VERSION });
    }
    if found == LATEST_VERSION {
        return Ok(found);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let applied: u32 =
        tx.query_row("SELECT coalesce(max(version), 0) FROM schema_migrations", [], |row| {
            row.get(0)
        })?;
    for &(version, name, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > applied) {
        tx.execute_batch(sql)
            .map_err(|source| StoreError::Migration { version, message: brief(&source) })?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
            params![version, name, now_millis],
        )?;
    }
    tx.commit()?;
    current_version(conn)
}

/// An SQLite error in one line, without the statement's text.
fn brief(error: &rusqlite::Error) -> String {
    match error {
        rusqlite::Error::SqlInputError { msg, offset, .. } => format!("{msg} (at offset {offset})"),
        other => other.to_string().lines().next().unwrap_or_default().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(conn: &Connection) -> Vec<String> {
        let mut stmt = conn.prepare("SELECT name FROM sqlite_master ORDER BY name").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    }

    /// A step that fails rolls back every step of the same run: the file keeps the schema it
    /// had, and says which step failed in one line.
    #[test]
    fn a_failed_migration_leaves_the_schema_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("m.db")).unwrap();
        current_version(&conn).unwrap();
        for &(version, name, sql) in &MIGRATIONS[..5] {
            conn.execute_batch(sql).unwrap();
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, 0)",
                params![version, name],
            )
            .unwrap();
        }
        // Something in the way of step 6.
        conn.execute_batch("CREATE TABLE runs (x INTEGER)").unwrap();
        let before = tables(&conn);
        let error = migrate(&mut conn, 1).unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("migration 6 failed and was rolled back"), "{message}");
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(!message.contains("CREATE TABLE"), "{message}");
        assert_eq!(current_version(&conn).unwrap(), 5);
        assert_eq!(tables(&conn), before);
        // Once the obstacle is gone, every step applies.
        conn.execute_batch("DROP TABLE runs").unwrap();
        assert_eq!(migrate(&mut conn, 2).unwrap(), LATEST_VERSION);
    }
}
