//! Refining records' vectors off the write path: the built-in embedder's query encoder
//! replaces each written record's static vector, in the background (`refine_in_background`)
//! or on the caller's thread (`refine`), per user, and nothing else about the record changes.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::sync::Arc;
use std::time::Duration;

use mnemo::Mnemo;
use mnemo::core::lifecycle::{CandidateFields, Outcome};
use mnemo::core::ports::{Embedder, ListFilter};
use mnemo::core::{FixedClock, Timestamp, UserRef};

fn now() -> Timestamp {
    Timestamp::parse("2026-03-04T10:00:00Z", "now").unwrap()
}

fn open(dir: &tempfile::TempDir, embedder: Arc<dyn Embedder>) -> Mnemo {
    let path = dir.path().join("m.db");
    Mnemo::open_sqlite(&path, Some(embedder), Arc::new(FixedClock(now())), "test").unwrap()
}

fn stated(text: &str) -> CandidateFields {
    CandidateFields { content: text.into(), ..Default::default() }
}

/// Each record's stored vector, by content.
fn vectors(mnemo: &Mnemo, who: &UserRef) -> Vec<(String, Vec<f32>)> {
    let mut found: Vec<(String, Vec<f32>)> = mnemo
        .export(who)
        .unwrap()
        .memories
        .into_iter()
        .map(|m| (m.memory.content.clone(), m.memory.embedding.unwrap().vector.unwrap()))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

fn assert_close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len());
    let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0_f32, f32::max);
    assert!(worst < 1e-5, "{what}: differs by {worst}");
}

#[test]
fn the_background_refiner_replaces_each_written_vector_with_the_encoders() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = mnemo::builtin_embedder().unwrap();
    let mnemo = open(&dir, Arc::clone(&embedder)).refine_in_background().unwrap();
    let (alice, bob) = (UserRef::new("t", "alice").unwrap(), UserRef::new("t", "bob").unwrap());
    mnemo.remember(&alice, stated("On weekends I enjoy rock climbing.")).unwrap();
    mnemo
        .remember_batch(
            &alice,
            vec![stated("I work as a pharmacist."), stated("I live in Lisbon.")],
        )
        .unwrap();
    mnemo.remember(&bob, stated("My favourite food is tacos.")).unwrap();
    assert!(mnemo.wait_refined(Duration::from_secs(60)), "{:?}", mnemo.refine_status());
    let status = mnemo.refine_status().unwrap();
    assert_eq!((status.refined, status.notebooks_waiting, status.last_error), (4, 0, None));
    for who in [&alice, &bob] {
        assert!(mnemo.store().unrefined(who, 10).unwrap().is_empty());
        for (content, stored) in vectors(&mnemo, who) {
            let refined = embedder.refine(&[&content]).unwrap().unwrap().remove(0);
            assert_close(&stored, &refined, &content);
            let written = embedder.embed(&[&content]).unwrap().remove(0);
            let moved = stored.iter().zip(&written).map(|(x, y)| (x - y).abs()).sum::<f32>();
            assert!(moved > 0.1, "{content}: still the write path's vector");
        }
    }
    // The records themselves are as written: one version each, nothing else in the audit.
    for memory in mnemo.list(&alice, &ListFilter::default()).unwrap() {
        assert_eq!((memory.version, memory.updated_at), (1, now()));
    }
    assert_eq!(mnemo.audit(&alice, 100).unwrap().len(), 3);
    // An edit's new vector is the write path's again, and refined after it.
    let id = mnemo.list(&alice, &ListFilter::default()).unwrap()[0].id.clone();
    let edited = mnemo.edit(&alice, &id, "I work as a nurse.").unwrap();
    assert!(mnemo.wait_refined(Duration::from_secs(60)));
    let stored = vectors(&mnemo, &alice).into_iter().find(|(c, _)| *c == edited.content).unwrap();
    let refined = embedder.refine(&[&edited.content]).unwrap().unwrap().remove(0);
    assert_close(&stored.1, &refined, &edited.content);
}

#[test]
fn a_short_lived_process_refines_on_its_own_thread_up_to_a_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mnemo = open(&dir, mnemo::builtin_embedder().unwrap());
    let alice = UserRef::new("t", "alice").unwrap();
    let statements: Vec<CandidateFields> = (0..70)
        .map(|i| stated(&format!("Note {i}: the meeting moved to room {}.", 100 + i)))
        .collect();
    mnemo.remember_batch(&alice, statements).unwrap();
    assert!(mnemo.refines());
    assert!(mnemo.refine_status().is_none(), "no background refiner was started");
    assert_eq!(mnemo.refine(&alice, 40).unwrap(), 40);
    assert_eq!(mnemo.store().unrefined(&alice, 100).unwrap().len(), 30);
    assert_eq!(mnemo.refine(&alice, usize::MAX).unwrap(), 30);
    assert_eq!(mnemo.refine(&alice, usize::MAX).unwrap(), 0);
    let bob = UserRef::new("t", "bob").unwrap();
    assert_eq!(mnemo.refine(&bob, usize::MAX).unwrap(), 0);
}

#[test]
fn an_embedder_without_a_refining_encoder_refines_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mnemo =
        open(&dir, mnemo::builtin_static_embedder().unwrap()).refine_in_background().unwrap();
    let alice = UserRef::new("t", "alice").unwrap();
    mnemo.remember(&alice, stated("I live in Lisbon.")).unwrap();
    assert!(!mnemo.refines());
    assert!(mnemo.refine_status().is_none());
    assert_eq!(mnemo.refine(&alice, usize::MAX).unwrap(), 0);
    assert_eq!(mnemo.store().unrefined(&alice, 10).unwrap().len(), 1);
}

#[test]
fn a_refiner_takes_up_what_an_earlier_process_left_unrefined() {
    let dir = tempfile::tempdir().unwrap();
    let alice = UserRef::new("t", "alice").unwrap();
    let space = UserRef::space("t", "team").unwrap();
    {
        let mnemo = open(&dir, mnemo::builtin_embedder().unwrap());
        mnemo.remember(&alice, stated("I live in Lisbon.")).unwrap();
    }
    let mnemo = open(&dir, mnemo::builtin_embedder().unwrap());
    assert_eq!(mnemo.store().unrefined_notebooks(10).unwrap(), std::slice::from_ref(&alice));
    let mnemo = mnemo.refine_in_background().unwrap();
    assert!(mnemo.wait_refined(Duration::from_secs(60)), "{:?}", mnemo.refine_status());
    assert_eq!(mnemo.refine_status().unwrap().refined, 1);
    assert!(mnemo.store().unrefined_notebooks(10).unwrap().is_empty());
    assert!(mnemo.store().unrefined(&space, 10).unwrap().is_empty());
}

#[test]
fn a_search_has_the_refiner_check_a_notebook_another_process_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let alice = UserRef::new("t", "alice").unwrap();
    let server = open(&dir, mnemo::builtin_embedder().unwrap()).refine_in_background().unwrap();
    assert!(server.wait_refined(Duration::from_secs(60)));
    // Another process (the CLI, say) writes to the same file without refining.
    let other = open(&dir, mnemo::builtin_embedder().unwrap());
    other.remember(&alice, stated("I live in Lisbon.")).unwrap();
    assert_eq!(server.store().unrefined(&alice, 10).unwrap().len(), 1);
    let request = mnemo::SearchRequest {
        query: "Where do I live?".into(),
        k: 3,
        filter: mnemo::core::ports::SearchFilter::default(),
        min_relevance: None,
        as_of: None,
        spaces: None,
    };
    assert_eq!(server.search(&alice, &request).unwrap().len(), 1);
    assert!(server.wait_refined(Duration::from_secs(60)));
    assert!(server.store().unrefined(&alice, 10).unwrap().is_empty());
    assert_eq!(server.refine_status().unwrap().refined, 1);
}

#[test]
fn every_write_made_while_the_refiner_runs_is_refined() {
    let dir = tempfile::tempdir().unwrap();
    let mnemo = open(&dir, mnemo::builtin_embedder().unwrap()).refine_in_background().unwrap();
    let alice = UserRef::new("t", "alice").unwrap();
    for round in 0..5 {
        for i in 0..12 {
            let text = format!("Round {round}, note {i}: the parcel goes to locker {}.", i * 7);
            mnemo.remember(&alice, stated(&text)).unwrap();
        }
        assert!(mnemo.wait_refined(Duration::from_secs(60)), "{:?}", mnemo.refine_status());
        assert!(mnemo.store().unrefined(&alice, 100).unwrap().is_empty(), "round {round}");
    }
    assert_eq!(mnemo.refine_status().unwrap().refined, 60);
}

#[test]
fn an_idle_refiner_takes_up_what_other_processes_write_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let (alice, bob) = (UserRef::new("t", "alice").unwrap(), UserRef::new("t", "bob").unwrap());
    let server = open(&dir, mnemo::builtin_embedder().unwrap())
        .refine_in_background_rescanning(Duration::from_millis(100))
        .unwrap();
    // Alice's notebook is written and refined through by the server itself.
    server.remember(&alice, stated("I live in Lisbon.")).unwrap();
    assert!(server.wait_refined(Duration::from_secs(60)));
    // Another process (the CLI, say) writes to hers and to Bob's, which the server never
    // touched; the server neither writes nor searches again.
    let other = open(&dir, mnemo::builtin_embedder().unwrap());
    other.remember(&alice, stated("I work as a pharmacist.")).unwrap();
    other.remember(&bob, stated("My favourite food is tacos.")).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !server.store().unrefined_notebooks(10).unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "{:?}", server.refine_status());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(server.wait_refined(Duration::from_secs(60)));
    assert_eq!(server.refine_status().unwrap().refined, 3);
    for who in [&alice, &bob] {
        assert!(server.store().unrefined(who, 10).unwrap().is_empty());
    }
}

/// The agent-phrasing set's facts, each restated three ways ("By the way, …", "… btw",
/// "Just so you know: …"), and its distractors, none of them stated before.
fn restatements() -> (Vec<String>, Vec<String>, Vec<String>) {
    let set: serde_json::Value = mnemo_testkit::labelled::read_json("agent_phrasings.json");
    let facts: Vec<String> = set["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["statement"].as_str().unwrap().to_owned())
        .collect();
    let restated = facts
        .iter()
        .flat_map(|f| {
            [
                format!("By the way, {f}"),
                format!("{} btw", f.trim_end_matches(['.', '!'])),
                format!("Just so you know: {f}"),
            ]
        })
        .collect();
    let others = set["distractors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_owned())
        .collect();
    (facts, restated, others)
}

/// What writing each of `texts` in turn did, into a notebook holding `facts`, refined or not.
fn outcomes_after(facts: &[String], refined: bool, texts: &[String]) -> Vec<Outcome> {
    let dir = tempfile::tempdir().unwrap();
    let mnemo = open(&dir, mnemo::builtin_embedder().unwrap());
    let who = UserRef::new("t", "alice").unwrap();
    mnemo.remember_batch(&who, facts.iter().map(|f| stated(f)).collect()).unwrap();
    if refined {
        assert_eq!(mnemo.refine(&who, usize::MAX).unwrap(), facts.len());
    }
    texts.iter().map(|t| mnemo.remember(&who, stated(t)).unwrap().outcome).collect()
}

#[test]
fn a_restatement_of_a_refined_memory_is_a_near_duplicate_as_of_an_unrefined_one() {
    let (facts, restated, others) = restatements();
    for (texts, what) in [(&restated, "restatements"), (&others, "new statements")] {
        let unrefined = outcomes_after(&facts, false, texts);
        let refined = outcomes_after(&facts, true, texts);
        let skipped =
            |outcomes: &[Outcome]| outcomes.iter().filter(|o| **o == Outcome::Skipped).count();
        eprintln!(
            "{what}: skipped {} of {} over unrefined memories, {} over refined ones",
            skipped(&unrefined),
            texts.len(),
            skipped(&refined)
        );
        assert_eq!(unrefined, refined, "{what}: refinement changed what a write does");
        if what == "restatements" {
            assert!(skipped(&refined) * 10 >= texts.len() * 9, "{what}: too few found duplicates");
        } else {
            assert_eq!(skipped(&refined), 0, "{what} taken for duplicates");
        }
    }
}
