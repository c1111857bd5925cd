//! The two stores rank alike: one LoCoMo conversation is stored in SQLite and in PostgreSQL
//! through the library, and every question of it gets the same ranked turns with the same
//! scores and signals from both. Ignored unless asked for (`.ci/run` runs them with
//! `--ignored`): they need the server at MNEMO_TEST_POSTGRES_URL.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::ports::SearchFilter;
use mnemo::core::{
    Clock, ConsentReceipt, FixedClock, Kind, Source, SourceType, Timestamp, UserRef,
};
use mnemo::{Mnemo, SearchRequest};
use mnemo_testkit::pg::{Scratch, server_url};
use serde_json::Value;

/// The turns of the first LoCoMo dev conversation, with their sessions and speakers, and its
/// questions.
fn conversation() -> (Vec<CandidateFields>, Vec<String>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/locomo/locomo-dev.json");
    let samples: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let sample = &samples[0];
    let conversation = &sample["conversation"];
    let mut turns = Vec::new();
    let mut session = 1;
    while let Some(list) = conversation[format!("session_{session}")].as_array() {
        for (i, turn) in list.iter().enumerate() {
            let Some(text) = turn["text"].as_str() else { continue };
            let mut metadata = BTreeMap::new();
            if let Some(speaker) = turn["speaker"].as_str() {
                metadata.insert("speaker".to_owned(), speaker.into());
            }
            // Distinct days per session, so recency and dates are part of the comparison.
            let date = Timestamp::from_millis(1_700_000_000_000 + session * 86_400_000 + i as i64);
            turns.push(CandidateFields {
                kind: Some(Kind::Episodic),
                content: text.to_owned(),
                session_id: Some(format!("session_{session}")),
                source: Some(Source {
                    source_type: SourceType::UserStated,
                    source_ref: turn["dia_id"].as_str().map(str::to_owned),
                    captured_at: date,
                    extractor: None,
                }),
                valid_from: Some(date),
                metadata,
                consent: Some(ConsentReceipt {
                    granted_at: date,
                    method: "conversation_history".to_owned(),
                    recorded_by: "test".to_owned(),
                }),
                ..Default::default()
            });
        }
        session += 1;
    }
    let questions = sample["qa"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|qa| qa["question"].as_str().map(str::to_owned))
        .collect();
    (turns, questions)
}

/// The ten best hits for `question`, with no relevance floor.
fn top_ten(mnemo: &Mnemo, who: &UserRef, question: &str) -> Vec<mnemo::core::retrieval::Hit> {
    let request = SearchRequest {
        query: question.to_owned(),
        k: 10,
        filter: SearchFilter::default(),
        min_relevance: Some(0.0),
        as_of: None,
        spaces: None,
    };
    mnemo.search(who, &request).unwrap()
}

/// Each question's hits as (source ref, status, fused score, BM25F, cosine).
type Ranking = Vec<(String, String, f64, f64, f64)>;

fn rankings(mnemo: &Mnemo, turns: Vec<CandidateFields>, questions: &[String]) -> Vec<Ranking> {
    let who = UserRef::new("locomo", "conv-0").unwrap();
    for outcome in mnemo.remember_batch(&who, turns).unwrap() {
        assert!(outcome.id.is_some(), "{:?}", outcome.reason);
    }
    questions
        .iter()
        .map(|question| {
            top_ten(mnemo, &who, question)
                .into_iter()
                .map(|hit| {
                    (
                        hit.memory.source.source_ref.clone().unwrap_or_default(),
                        hit.memory.status.to_string(),
                        hit.fused.score,
                        hit.bm25,
                        hit.cosine,
                    )
                })
                .collect()
        })
        .collect()
}

#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn sqlite_and_postgres_rank_every_question_alike() {
    let base = server_url();
    let (turns, questions) = conversation();
    assert!(turns.len() > 300 && questions.len() > 100, "{} {}", turns.len(), questions.len());
    let clock = Arc::new(FixedClock(Timestamp::from_millis(1_760_000_000_000)));
    let embedder = mnemo::builtin_embedder().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let sqlite = mnemo_store_sqlite::open(&dir.path().join("m.db"), clock.0).unwrap();
    let on_sqlite = Mnemo::new(Arc::new(sqlite), Some(embedder.clone()), clock.clone(), "test");
    let expected = rankings(&on_sqlite, turns.clone(), &questions);

    let scratch = Scratch::create(&base).unwrap();
    let postgres = mnemo_store_postgres::open(&scratch.url(), clock.0).unwrap();
    let on_postgres = Mnemo::new(Arc::new(postgres), Some(embedder), clock, "test");
    let got = rankings(&on_postgres, turns, &questions);

    let mut compared = 0;
    for ((question, want), have) in questions.iter().zip(&expected).zip(&got) {
        assert_eq!(want.len(), have.len(), "{question}");
        for (w, h) in want.iter().zip(have) {
            assert_eq!((&w.0, &w.1), (&h.0, &h.1), "{question}: {want:?} vs {have:?}");
            for (a, b) in [(w.2, h.2), (w.3, h.3), (w.4, h.4)] {
                assert!((a - b).abs() < 1e-9, "{question}: {want:?} vs {have:?}");
            }
            compared += 1;
        }
    }
    assert!(compared > 1000, "only {compared} hits compared");
}

/// Each question's hits on `mnemo` as (id, fused score).
fn ranked(mnemo: &Mnemo, who: &UserRef, questions: &[String]) -> Vec<Vec<(String, f64)>> {
    questions
        .iter()
        .map(|question| {
            let hits = top_ten(mnemo, who, question);
            hits.into_iter().map(|hit| (hit.memory.id.0, hit.fused.score)).collect()
        })
        .collect()
}

#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn a_nodes_cached_index_follows_another_nodes_changes() {
    let base = server_url();
    let (turns, questions) = conversation();
    let questions = &questions[..40];
    let clock = Arc::new(FixedClock(Timestamp::from_millis(1_760_000_000_000)));
    let embedder = mnemo::builtin_embedder().unwrap();
    let scratch = Scratch::create(&base).unwrap();
    let node = || {
        let store = mnemo_store_postgres::open(&scratch.url(), clock.0).unwrap();
        Mnemo::new(Arc::new(store), Some(embedder.clone()), clock.clone(), "test")
    };
    let (a, b) = (node(), node());
    let who = UserRef::new("locomo", "conv-0").unwrap();
    let (first, rest) = turns.split_at(turns.len() / 2);
    b.remember_batch(&who, first.to_vec()).unwrap();
    // Node A caches the user's index now; every change below is made by node B.
    let before = ranked(&a, &who, questions);
    b.remember_batch(&who, rest.to_vec()).unwrap();
    let listed = b.list(&who, &Default::default()).unwrap();
    for memory in listed.iter().step_by(7) {
        b.forget(&who, &memory.id).unwrap();
    }
    for memory in listed.iter().skip(3).step_by(11).take(20) {
        // Edits change the text the lexical index holds.
        let _ = b.edit(&who, &memory.id, &format!("{} (and the lighthouse trip)", memory.content));
    }
    let fresh = node();
    let expected = ranked(&fresh, &who, questions);
    let got = ranked(&a, &who, questions);
    // Same records in the same order; scores equal up to the order floating-point sums ran in
    // (an index updated in place holds its records in another order than a fresh one).
    for ((question, want), have) in questions.iter().zip(&expected).zip(&got) {
        let ids = |hits: &[(String, f64)]| hits.iter().map(|h| h.0.clone()).collect::<Vec<_>>();
        assert_eq!(ids(have), ids(want), "node A after node B's changes: {question}");
        for (w, h) in want.iter().zip(have) {
            assert!((w.1 - h.1).abs() < 1e-9, "{question}: {} vs {}", w.1, h.1);
        }
    }
    assert_ne!(
        before.iter().map(|hits| hits.len()).sum::<usize>(),
        0,
        "node A had searched before the changes"
    );
    assert_ne!(
        before
            .iter()
            .map(|hits| hits.iter().map(|h| h.0.clone()).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        expected
            .iter()
            .map(|hits| hits.iter().map(|h| h.0.clone()).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        "the changes moved the rankings"
    );
}

/// What `--as-of` answers over a supersession chain (keyed and unkeyed) and an edit, on one
/// store.
fn as_of_answers(mnemo: &Mnemo, clock: &mnemo::core::ManualClock) -> Vec<Vec<String>> {
    let who = UserRef::new("t", "u").unwrap();
    let hour = |h: i64| Timestamp::from_millis(1_760_000_000_000 + h * 3_600_000);
    let said = |h: i64, content: &str, keyed: bool| {
        clock.set(hour(h));
        let fields = CandidateFields {
            content: content.to_owned(),
            subject: keyed.then(|| "user".to_owned()),
            attribute: keyed.then(|| "home_city".to_owned()),
            ..Default::default()
        };
        mnemo.remember(&who, fields).unwrap().id.unwrap()
    };
    said(0, "I live in Austin", true);
    said(1, "My favourite tea is oolong", false);
    said(2, "I live in Denver", true);
    let tea = said(3, "My favourite tea is sencha", false);
    clock.set(hour(4));
    mnemo.edit(&who, &tea, "My favourite tea is genmaicha").unwrap();
    clock.set(hour(10));
    let mut answers = Vec::new();
    for h in [0, 1, 2, 3, 4, 9] {
        let mut held: Vec<String> = mnemo
            .list_as_of(&who, &Default::default(), hour(h))
            .unwrap()
            .into_iter()
            .map(|m| m.content)
            .collect();
        held.sort();
        answers.push(held);
        let request = SearchRequest {
            query: "where do I live".into(),
            k: 1,
            filter: SearchFilter::default(),
            min_relevance: None,
            as_of: Some(hour(h)),
            spaces: None,
        };
        answers.push(
            mnemo.search(&who, &request).unwrap().into_iter().map(|h| h.memory.content).collect(),
        );
    }
    answers
}

#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn as_of_reads_alike_on_both_stores() {
    let base = server_url();
    let embedder = mnemo::builtin_embedder().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(mnemo::core::ManualClock::new(Timestamp::from_millis(1_760_000_000_000)));
    let sqlite = mnemo_store_sqlite::open(&dir.path().join("m.db"), clock.now()).unwrap();
    let on_sqlite = Mnemo::new(Arc::new(sqlite), Some(embedder.clone()), clock.clone(), "test");
    let expected = as_of_answers(&on_sqlite, &clock);
    assert_eq!(expected[0], ["I live in Austin"]);
    assert_eq!(expected[5], ["I live in Denver"]);
    assert_eq!(expected[6], ["I live in Denver", "My favourite tea is sencha"]);
    assert_eq!(expected[10], ["I live in Denver", "My favourite tea is genmaicha"]);

    let clock = Arc::new(mnemo::core::ManualClock::new(Timestamp::from_millis(1_760_000_000_000)));
    let scratch = Scratch::create(&base).unwrap();
    let postgres = mnemo_store_postgres::open(&scratch.url(), clock.now()).unwrap();
    let on_postgres = Mnemo::new(Arc::new(postgres), Some(embedder), clock.clone(), "test");
    assert_eq!(as_of_answers(&on_postgres, &clock), expected);
}
