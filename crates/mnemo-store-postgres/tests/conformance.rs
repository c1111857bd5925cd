//! Runs the store conformance suite against the PostgreSQL store, each store in a schema of
//! its own, scanning the schema's table files (after VACUUM FULL and a checkpoint) for deleted
//! text. Ignored unless asked for (`cargo test -- --ignored`, as `.ci/run` does): it needs the
//! server at MNEMO_TEST_POSTGRES_URL.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use mnemo_core::ports::Store;
use mnemo_testkit::conformance::Harness;
use mnemo_testkit::pg::{Scratch, server_url};

struct PostgresHarness {
    base: String,
    schemas: Mutex<Vec<Scratch>>,
}

impl PostgresHarness {
    fn new() -> Self {
        Self { base: server_url(), schemas: Mutex::default() }
    }
}

impl Harness for PostgresHarness {
    fn store(&self) -> Arc<dyn Store> {
        let scratch = Scratch::create(&self.base).unwrap();
        let store = mnemo_store_postgres::open(&scratch.url(), mnemo_testkit::T0).unwrap();
        self.schemas.lock().unwrap().push(scratch);
        Arc::new(store)
    }

    fn raw_bytes(&self) -> Option<Vec<u8>> {
        let schemas = self.schemas.lock().unwrap();
        Some(schemas.last()?.raw_bytes().unwrap())
    }
}

mnemo_testkit::conformance_tests!(
    PostgresHarness::new,
    ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"
);
