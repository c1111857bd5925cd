//! Embedding an embedded database again with another model (`mnemo::reembed_sqlite`, `mnemo
//! reembed`): every user's records move to the new model in one transaction, and a failure
//! part way leaves every vector as it was.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mnemo::Mnemo;
use mnemo::core::ports::{Embedder, ListFilter, PortError};
use mnemo::core::{ErrorKind, FixedClock, Memory, Timestamp, UserRef};
use mnemo_testkit::fakes::FakeEmbedder;

/// An embedder whose second call fails, after the first has been written.
struct FailsOnSecondCall {
    calls: AtomicUsize,
    inner: FakeEmbedder,
}

impl Embedder for FailsOnSecondCall {
    fn id(&self) -> &str {
        "fails-on-second-call"
    }

    fn dims(&self) -> usize {
        self.inner.dims()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) == 1 {
            return Err(PortError::new(ErrorKind::Internal, "the model went away"));
        }
        self.inner.embed(texts)
    }
}

fn now() -> Timestamp {
    Timestamp::parse("2026-03-04T10:00:00Z", "now").unwrap()
}

fn open(path: &Path, embedder: Arc<dyn Embedder>) -> Mnemo {
    Mnemo::open_sqlite(path, Some(embedder), Arc::new(FixedClock(now())), "test").unwrap()
}

fn ask(query: &str) -> mnemo::SearchRequest {
    mnemo::SearchRequest {
        query: query.into(),
        k: 5,
        filter: mnemo::core::ports::SearchFilter::default(),
        min_relevance: None,
        as_of: None,
        spaces: None,
    }
}

fn records(mnemo: &Mnemo, who: &UserRef) -> Vec<Memory> {
    mnemo.list(who, &ListFilter::default()).unwrap()
}

/// The model each of a user's records was embedded with, read back one by one.
fn models(mnemo: &Mnemo, who: &UserRef) -> Vec<String> {
    records(mnemo, who)
        .iter()
        .map(|m| mnemo.get(who, &m.id).unwrap().embedding.map(|e| e.model).unwrap_or_default())
        .collect()
}

#[test]
fn every_record_moves_to_the_new_model_or_none_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    let (many, few) = (UserRef::new("t", "many").unwrap(), UserRef::new("t", "few").unwrap());
    let nouns = ["garden", "piano", "bicycle", "kettle", "lantern", "harbour", "meadow", "violin"];
    let places = ["attic", "station", "library", "bakery", "orchard", "quarry", "museum"];
    {
        let mnemo = open(&path, Arc::new(FakeEmbedder::new(8)));
        // More statements than one call embeds, so the failing model fails part way.
        let batch = (0..300)
            .map(|i| {
                let text = format!(
                    "Entry {i} {} {} {}",
                    nouns[i % nouns.len()],
                    places[(i / nouns.len()) % places.len()],
                    i * 7919
                );
                mnemo_testkit::stated(&text)
            })
            .collect();
        mnemo.remember_batch(&many, batch).unwrap();
        mnemo.remember(&few, mnemo_testkit::stated("I keep bees on the roof")).unwrap();
    }
    let fake = open(&path, Arc::new(FakeEmbedder::new(8)));
    let stored = records(&fake, &many).len();
    assert!(stored > 256, "{stored} records");
    drop(fake);

    let failing = FailsOnSecondCall { calls: AtomicUsize::new(0), inner: FakeEmbedder::new(8) };
    let err = mnemo::reembed_sqlite(&path, None, now(), &failing).unwrap_err();
    assert!(err.to_string().contains("went away"), "{err}");
    assert_eq!(failing.calls.load(Ordering::SeqCst), 2, "it failed part way");
    // Nothing moved: the file still answers the old model, and only it.
    let fake = open(&path, Arc::new(FakeEmbedder::new(8)));
    assert!(models(&fake, &many).iter().all(|m| m == "fake-words"));
    let request = ask("bees on the roof");
    assert!(!fake.search(&few, &request).unwrap().is_empty());
    drop(fake);

    let builtin = mnemo::builtin_embedder().unwrap();
    let moved = mnemo::reembed_sqlite(&path, None, now(), builtin.as_ref()).unwrap();
    assert_eq!(moved, stored + 1, "every user's records");
    assert_eq!(mnemo::reembed_sqlite(&path, None, now(), builtin.as_ref()).unwrap(), 0);
    let mnemo = open(&path, builtin.clone());
    for who in [&many, &few] {
        assert!(models(&mnemo, who).iter().all(|m| m == builtin.id()));
    }
    let found = mnemo.search(&few, &ask("Do I keep any animals?")).unwrap();
    assert_eq!(found.first().map(|h| h.memory.content.as_str()), Some("I keep bees on the roof"));
    // The old model no longer reads the file.
    let fake = open(&path, Arc::new(FakeEmbedder::new(8)));
    let err = fake.search(&few, &request).unwrap_err();
    assert!(err.to_string().contains("embedder mismatch"), "{err}");
}
