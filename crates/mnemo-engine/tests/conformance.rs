//! The store conformance suite on the engine over the backend in memory: every rule checked
//! without SQL. The backend's "files" are its whole state, written out, so the deletion
//! checks scan everything it holds.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use mnemo_core::ledger::LedgerKey;
use mnemo_core::ports::Store;
use mnemo_engine::Engine;
use mnemo_engine::memory::MemoryBackend;
use mnemo_testkit::conformance::Harness;

#[derive(Default)]
struct InMemory {
    current: Mutex<Option<Arc<Engine<MemoryBackend>>>>,
}

impl Harness for InMemory {
    fn store(&self) -> Arc<dyn Store> {
        let store = Arc::new(Engine::new(MemoryBackend::new(LedgerKey([7; 32]))));
        *self.current.lock().unwrap() = Some(store.clone());
        store
    }

    fn raw_bytes(&self) -> Option<Vec<u8>> {
        Some(self.current.lock().unwrap().as_ref()?.dump().into_bytes())
    }
}

mnemo_testkit::conformance_tests!(InMemory::default);
