//! Encryption at rest (feature `encryption`): nothing stored is readable in the raw files,
//! the wrong key or no key is a clear error, and `rekey` encrypts, changes the key and
//! decrypts without losing anything.
#![cfg(feature = "encryption")]
#![allow(clippy::unwrap_used)]

use mnemo_core::ports::MemoryStore;
use std::path::Path;

use mnemo_core::MemoryId;
use mnemo_store_sqlite::{DatabaseKey, SqliteStore, rekey};
use mnemo_testkit::{T0, stated, who, write};

const MARKER: &str = "Quillfeather7731 keeps bees on the roof";

/// Whether the marker's bytes occur in the database file or beside it (log, index).
fn marker_on_disk(db: &Path) -> bool {
    ["", "-wal", "-shm"].iter().any(|suffix| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        std::fs::read(&name)
            .map(|bytes| bytes.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()))
            .unwrap_or(false)
    })
}

fn key(text: &str) -> DatabaseKey {
    DatabaseKey::new(text).unwrap()
}

fn stores_marker(store: &SqliteStore) {
    let receipt = write(store, &who("acme", "alice"), "m1", stated(MARKER), T0);
    assert!(receipt.id.is_some(), "{receipt:?}");
}

fn holds_marker(store: &SqliteStore) -> bool {
    let found = store.get(&who("acme", "alice"), &MemoryId("m1".into()), T0).unwrap();
    found.is_some_and(|memory| memory.content == MARKER)
}

#[test]
fn an_encrypted_store_shows_nothing_in_its_files_and_needs_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    {
        let store =
            mnemo_store_sqlite::open_with_key(&db, T0, Some(&key("correct horse"))).unwrap();
        stores_marker(&store);
        // While open, the write-ahead log holds the page: it is encrypted too.
        assert!(!marker_on_disk(&db), "the marker is readable while the store is open");
    }
    assert!(!marker_on_disk(&db), "the marker is readable in the closed files");
    assert!(!std::fs::read(&db).unwrap().starts_with(b"SQLite format 3"));

    let again = mnemo_store_sqlite::open_with_key(&db, T0, Some(&key("correct horse"))).unwrap();
    assert!(holds_marker(&again));
    drop(again);

    let wrong =
        mnemo_store_sqlite::open_with_key(&db, T0, Some(&key("battery staple"))).unwrap_err();
    assert!(wrong.to_string().contains("the key is wrong"), "{wrong}");
    let keyless = mnemo_store_sqlite::open(&db, T0).unwrap_err();
    assert!(keyless.to_string().contains("encrypted"), "{keyless}");
    // Neither failed open changed the file.
    let after = mnemo_store_sqlite::open_with_key(&db, T0, Some(&key("correct horse"))).unwrap();
    assert!(holds_marker(&after));
}

#[test]
fn a_plain_store_cannot_be_opened_with_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    stores_marker(&mnemo_store_sqlite::open(&db, T0).unwrap());
    let error = mnemo_store_sqlite::open_with_key(&db, T0, Some(&key("k"))).unwrap_err();
    assert!(error.to_string().contains("is not encrypted"), "{error}");
    assert!(holds_marker(&mnemo_store_sqlite::open(&db, T0).unwrap()));
}

#[test]
fn rekey_encrypts_changes_the_key_and_decrypts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    stores_marker(&mnemo_store_sqlite::open(&db, T0).unwrap());
    assert!(marker_on_disk(&db), "the scan must see the marker in a plain file");

    rekey(&db, None, Some(&key("first"))).unwrap();
    assert!(!marker_on_disk(&db), "the marker is readable after encrypting");
    assert!(holds_marker(
        &mnemo_store_sqlite::open_with_key(&db, T0, Some(&key("first"))).unwrap()
    ));

    rekey(&db, Some(&key("first")), Some(&key("second"))).unwrap();
    assert!(mnemo_store_sqlite::open_with_key(&db, T0, Some(&key("first"))).is_err());
    let store = mnemo_store_sqlite::open_with_key(&db, T0, Some(&key("second"))).unwrap();
    assert!(holds_marker(&store));
    // A file in use is not rekeyed.
    let busy = rekey(&db, Some(&key("second")), Some(&key("third"))).unwrap_err();
    assert!(busy.to_string().contains("in use"), "{busy}");
    drop(store);

    let wrong = rekey(&db, Some(&key("nope")), None).unwrap_err();
    assert!(wrong.to_string().contains("the key is wrong"), "{wrong}");
    rekey(&db, Some(&key("second")), None).unwrap();
    assert!(holds_marker(&mnemo_store_sqlite::open(&db, T0).unwrap()));
}
