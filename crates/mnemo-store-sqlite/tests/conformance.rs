//! Runs the store conformance suite against the SQLite store, scanning the database file and
//! its write-ahead log for deleted text.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mnemo_core::ports::Store;
use mnemo_testkit::conformance::Harness;

struct SqliteHarness {
    dir: tempfile::TempDir,
    counter: Mutex<u32>,
    current: Mutex<Option<PathBuf>>,
}

impl SqliteHarness {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            counter: Mutex::new(0),
            current: Mutex::new(None),
        }
    }
}

impl Harness for SqliteHarness {
    fn store(&self) -> Arc<dyn Store> {
        let mut counter = self.counter.lock().unwrap();
        *counter += 1;
        let path = self.dir.path().join(format!("mnemo-{counter}.db"));
        *self.current.lock().unwrap() = Some(path.clone());
        Arc::new(mnemo_store_sqlite::open(&path, mnemo_testkit::T0).unwrap())
    }

    fn raw_bytes(&self) -> Option<Vec<u8>> {
        let path = self.current.lock().unwrap().clone()?;
        let mut bytes = Vec::new();
        for suffix in ["", "-wal", "-journal"] {
            let mut file = path.clone().into_os_string();
            file.push(suffix);
            if let Ok(content) = std::fs::read(&file) {
                bytes.extend(content);
            }
        }
        Some(bytes)
    }
}

mnemo_testkit::conformance_tests!(SqliteHarness::new);
