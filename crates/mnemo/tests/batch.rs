//! The library's batch write path over the SQLite store and the built-in embedder.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use mnemo::Mnemo;
use mnemo::core::lifecycle::{CandidateFields, Outcome};
use mnemo::core::policy::ReasonCode;
use mnemo::core::{FixedClock, Timestamp, UserRef};

fn open(dir: &tempfile::TempDir) -> Mnemo {
    let clock = Arc::new(FixedClock(Timestamp::parse("2026-06-01T00:00:00Z", "now").unwrap()));
    let embedder = mnemo::builtin_embedder().unwrap();
    Mnemo::open_sqlite(&dir.path().join("m.db"), Some(embedder), clock, "test").unwrap()
}

fn stated(content: &str) -> CandidateFields {
    CandidateFields { content: content.into(), ..Default::default() }
}

fn keyed(content: &str) -> CandidateFields {
    CandidateFields {
        content: content.into(),
        subject: Some("user".into()),
        attribute: Some("city".into()),
        ..Default::default()
    }
}

#[test]
fn a_batch_sees_its_own_earlier_records() {
    let dir = tempfile::tempdir().unwrap();
    let mnemo = open(&dir);
    let who = UserRef::new("t", "u").unwrap();
    let results = mnemo
        .remember_batch(
            &who,
            vec![
                stated("I am afraid of spiders"),
                stated("I'm afraid of spiders"),
                keyed("I live in Dallas"),
                keyed("I moved to Austin"),
            ],
        )
        .unwrap();
    let outcomes: Vec<_> = results.iter().map(|r| (r.outcome, r.reason)).collect();
    assert_eq!(
        outcomes,
        [
            (Outcome::Added, ReasonCode::New),
            (Outcome::Skipped, ReasonCode::NearDuplicate),
            (Outcome::Added, ReasonCode::New),
            (Outcome::Updated, ReasonCode::NewValue),
        ]
    );
    assert_eq!(results[3].superseded, vec![results[2].id.clone().unwrap()]);
    assert_eq!(mnemo.list(&who, &Default::default()).unwrap().len(), 3);
}

#[test]
fn an_invalid_candidate_fails_the_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mnemo = open(&dir);
    let who = UserRef::new("t", "u").unwrap();
    let err = mnemo.remember_batch(&who, vec![stated("fine"), stated("  ")]).unwrap_err();
    assert!(err.to_string().contains("[1].content"), "{err}");
    assert!(mnemo.list(&who, &Default::default()).unwrap().is_empty());
}
