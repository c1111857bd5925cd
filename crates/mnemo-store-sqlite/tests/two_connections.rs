//! Two stores (as two processes would) on one file: each sees the other's commits, including
//! through its in-memory vector index.
#![allow(clippy::unwrap_used)]

use mnemo_core::ports::{Embedded, MemoryStore, SearchFilter, SearchQuery};
use mnemo_core::retrieval::{Fused, Signals};
use mnemo_core::{MemoryId, Timestamp};
use mnemo_store_sqlite::SqliteStore;
use mnemo_testkit::fakes::FakeEmbedder;
use mnemo_testkit::{T0, deletion, stated, who, write};

fn query(text: &str) -> Embedded {
    use mnemo_core::ports::Embedder;
    let embedder = FakeEmbedder::new(64);
    Embedded {
        model: embedder.id().to_owned(),
        vector: embedder.embed(&[text]).unwrap().remove(0),
        calibration: None,
    }
}

/// Records whose vector is (nearly) identical to `text`'s.
fn found(store: &SqliteStore, text: &str, now: Timestamp) -> Vec<MemoryId> {
    let alice = who("acme", "alice");
    let vector = query(text);
    let filter = SearchFilter::default();
    let search = SearchQuery { terms: &[], vector: Some(&vector), common: None, filter: &filter };
    let exact = |signals: &Signals<'_>| {
        signals
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.cosine > 0.99)
            .map(|(index, r)| Fused { index, score: r.cosine, evidence: 1.0 })
            .collect()
    };
    store.search(&alice, &search, now, &exact).unwrap().into_iter().map(|f| f.memory.id).collect()
}

#[test]
fn vector_index_follows_commits_from_another_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.db");
    let first = mnemo_store_sqlite::open(&path, T0).unwrap();
    let second = mnemo_store_sqlite::open(&path, T0).unwrap();
    let alice = who("acme", "alice");
    write(&first, &alice, "m1", stated("orchids need weekly watering"), T0);
    assert_eq!(found(&first, "orchids need weekly watering", T0), vec![MemoryId("m1".into())]);
    // The second store writes; the first, which has the user cached, must see it.
    write(&second, &alice, "m2", stated("basil likes full sun"), T0);
    assert_eq!(found(&first, "basil likes full sun", T0), vec![MemoryId("m2".into())]);
    // The second store forgets; the first must stop returning it.
    second.forget(&alice, &MemoryId("m1".into()), &deletion(T0)).unwrap();
    assert!(found(&first, "orchids need weekly watering", T0).is_empty());
    // Its own writes keep its index current too.
    write(&first, &alice, "m3", stated("ferns prefer shade"), T0);
    assert_eq!(found(&first, "ferns prefer shade", T0), vec![MemoryId("m3".into())]);
    first.forget(&alice, &MemoryId("m3".into()), &deletion(T0)).unwrap();
    assert!(found(&first, "ferns prefer shade", T0).is_empty());
}

/// A database written at schema version 1 opens, migrates forward, and keeps its records.
#[test]
fn version_1_database_migrates_forward() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(include_str!("../migrations/0001_initial.sql")).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
                                             applied_at INTEGER NOT NULL);
             INSERT INTO schema_migrations VALUES (1, 'initial', 0);
             INSERT INTO memories (id, tenant, user_id, scope, kind, content, content_hash,
                 importance, confidence, sensitivity, source_type, source_captured_at, status,
                 created_at, updated_at, valid_from, version)
             VALUES ('old-1', 'acme', 'alice', 'user', 'semantic', 'Likes sailing', 0, 0.5, 1.0,
                 'normal', 'user_stated', 0, 'active', 0, 0, 0, 1);",
        )
        .unwrap();
    }
    let store = mnemo_store_sqlite::open(&path, T0).unwrap();
    assert_eq!(store.schema_version().unwrap(), mnemo_store_sqlite::SCHEMA_VERSION);
    let alice = who("acme", "alice");
    let m = store.get(&alice, &MemoryId("old-1".into()), T0).unwrap().unwrap();
    assert_eq!(m.content, "Likes sailing");
    // Reopening is a no-op.
    drop(store);
    let again = mnemo_store_sqlite::open(&path, T0).unwrap();
    assert_eq!(again.schema_version().unwrap(), mnemo_store_sqlite::SCHEMA_VERSION);
}

/// A file from a newer mnemo is refused rather than misread.
#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    drop(mnemo_store_sqlite::open(&path, T0).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 0)", []).unwrap();
    drop(conn);
    let err = mnemo_store_sqlite::open(&path, T0).unwrap_err();
    assert!(err.to_string().contains("newer than this mnemo supports"), "{err}");
}
