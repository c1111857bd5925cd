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

/// A search of one notebook by `vector` alone.
fn by_vector<'a>(vector: &'a Embedded, filter: &'a SearchFilter) -> SearchQuery<'a> {
    SearchQuery {
        terms: &[],
        modifiers: &[],
        vector: Some(vector),
        common: None,
        filter,
        notebooks: 1,
    }
}

/// Records whose vector is (nearly) identical to `text`'s.
fn found(store: &SqliteStore, text: &str, now: Timestamp) -> Vec<MemoryId> {
    let alice = who("acme", "alice");
    let vector = query(text);
    let filter = SearchFilter::default();
    let search = by_vector(&vector, &filter);
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

/// What a search of Alice's notebook for `text` ranks: every retrievable record.
fn ranked(store: &SqliteStore, text: &str, now: Timestamp) -> Vec<mnemo_core::ports::Ranked> {
    let vector = query(text);
    let filter = SearchFilter::default();
    let search = by_vector(&vector, &filter);
    let every = |signals: &Signals<'_>| {
        let every = 0..signals.rows.len();
        every.map(|index| Fused { index, score: 1.0, evidence: 1.0 }).collect()
    };
    store.rank(&who("acme", "alice"), &search, now, &every).unwrap()
}

/// The records a search returns, by id, with their content and when they were last used.
fn returned(store: &SqliteStore, text: &str, now: Timestamp) -> Vec<(String, String, Option<i64>)> {
    let mut found: Vec<_> = store
        .read_ranked(&who("acme", "alice"), &ranked(store, text, now), now)
        .unwrap()
        .into_iter()
        .map(|f| (f.memory.id.0, f.memory.content, f.memory.last_used_at.map(|t| t.as_millis())))
        .collect();
    found.sort();
    found
}

/// Searches keep the records they read; every change to one, by this store or by another
/// on the same file, shows in the next search's results.
#[test]
fn records_searches_read_back_follow_every_change() {
    use mnemo_core::ports::Edit;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.db");
    let first = mnemo_store_sqlite::open(&path, T0).unwrap();
    let second = mnemo_store_sqlite::open(&path, T0).unwrap();
    let alice = who("acme", "alice");
    let bob = who("acme", "bob");
    write(&first, &alice, "m1", stated("orchids need weekly watering"), T0);
    write(&first, &alice, "m2", stated("basil likes full sun"), T0);
    write(&first, &bob, "b1", stated("bob keeps cacti"), T0);
    let row =
        |id: &str, content: &str, used: Option<i64>| (id.to_owned(), content.to_owned(), used);
    let both = vec![
        row("m1", "orchids need weekly watering", None),
        row("m2", "basil likes full sun", None),
    ];
    // Twice: the second search is served what the first read.
    assert_eq!(returned(&first, "orchids", T0), both);
    assert_eq!(returned(&first, "orchids", T0), both);

    let later = Timestamp::from_millis(T0.as_millis() + 1_000);
    let edit = |content: &str| Edit {
        content: content.into(),
        embedding: Some(query(content)),
        sensitivity: None,
        hold: None,
        metadata: None,
        expires_at: None,
    };
    // This store's own edit and use.
    first
        .edit(&alice, &MemoryId("m1".into()), edit("orchids need water twice a week"), later, "t")
        .unwrap();
    first.mark_used(&alice, &[MemoryId("m2".into())], later).unwrap();
    let seen = vec![
        row("m1", "orchids need water twice a week", None),
        row("m2", "basil likes full sun", Some(later.as_millis())),
    ];
    assert_eq!(returned(&first, "orchids", later), seen);

    // Another store's edit and use of records this one has kept.
    let latest = Timestamp::from_millis(T0.as_millis() + 2_000);
    second
        .edit(&alice, &MemoryId("m2".into()), edit("basil wants morning sun"), latest, "t")
        .unwrap();
    second.mark_used(&alice, &[MemoryId("m1".into())], latest).unwrap();
    let seen = vec![
        row("m1", "orchids need water twice a week", Some(latest.as_millis())),
        row("m2", "basil wants morning sun", Some(later.as_millis())),
    ];
    assert_eq!(returned(&first, "orchids", latest), seen);

    // Forgotten by either store: gone from the next search of this one.
    second.forget(&alice, &MemoryId("m1".into()), &deletion(latest)).unwrap();
    let left = vec![row("m2", "basil wants morning sun", Some(later.as_millis()))];
    assert_eq!(returned(&first, "orchids", latest), left);
    first.forget(&alice, &MemoryId("m2".into()), &deletion(latest)).unwrap();
    assert!(returned(&first, "orchids", latest).is_empty());
    // A record another store adds is found beside nothing of Bob's.
    write(&second, &alice, "m3", stated("ferns prefer shade"), latest);
    assert_eq!(returned(&first, "ferns", latest), vec![row("m3", "ferns prefer shade", None)]);

    // Ranked before another store's edit and read after it: read as edited, although this
    // store kept the record as it was.
    let ranked = ranked(&first, "ferns", latest);
    second
        .edit(&alice, &MemoryId("m3".into()), edit("ferns want deep shade"), latest, "t")
        .unwrap();
    let read: Vec<String> = first
        .read_ranked(&alice, &ranked, latest)
        .unwrap()
        .into_iter()
        .map(|found| found.memory.content)
        .collect();
    assert_eq!(read, ["ferns want deep shade"]);
}
