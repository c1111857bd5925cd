//! The labelled extraction set (`testdata/extraction_set.jsonl`, 423 messages written before
//! the extractor's current rules and never tuned on): every message is ingested as the
//! user's turn at its time (Wednesday 2026-03-04 10:00 UTC) with the default extractor, and
//! also given to `remember` to see the policy gate's call. Run with `--nocapture` for the
//! per-class table.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::sync::Arc;

use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::ports::ListFilter;
use mnemo::core::transcript::{Message, Role};
use mnemo::core::{FixedClock, Kind, Status, Timestamp, UserRef};
use mnemo::{IngestOptions, Mnemo};
use mnemo_testkit::labelled::{gate_class, read_jsonl};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    id: String,
    class: String,
    content: String,
    expect: Expect,
}

#[derive(Deserialize)]
struct Expect {
    memory: bool,
    facts: usize,
    expires_on: Option<String>,
    gate: String,
}

/// Outcomes of one class.
#[derive(Default)]
struct Tally {
    messages: usize,
    /// Messages that left at least one active durable memory.
    stored: usize,
    /// Messages whose outcome is what the label says.
    right: usize,
    /// Messages whose label says memory and that stored a memory (any class).
    true_positive: usize,
    /// Messages whose label says no memory but that stored one.
    false_positive: usize,
}

#[test]
fn extraction_set_meets_its_targets() {
    let cases: Vec<Case> = read_jsonl("extraction_set.jsonl");
    assert!(cases.len() >= 300, "the set has only {} messages", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let now = Timestamp::parse("2026-03-04T10:00:00Z", "now").unwrap();
    let mnemo = Mnemo::open_sqlite(
        &dir.path().join("set.db"),
        Some(mnemo::builtin_embedder().unwrap()),
        Arc::new(FixedClock(now)),
        "extraction-set",
    )
    .unwrap();

    let mut classes: BTreeMap<&str, Tally> = BTreeMap::new();
    let (mut multi, mut multi_split) = (0, 0);
    let mut misses = Vec::new();
    for case in &cases {
        let who = UserRef::new("set", &format!("ingest-{}", case.id)).unwrap();
        let message = Message {
            role: Role::User,
            content: case.content.clone(),
            id: Some(case.id.clone()),
            ts: Some(now),
            source: None,
        };
        let options = IngestOptions::new("s");
        let report = mnemo.ingest(&who, &[message], &options).unwrap();
        let stored =
            mnemo.list(&who, &ListFilter { include_expired: true, ..Default::default() }).unwrap();
        let active: Vec<_> = stored
            .iter()
            .filter(|m| m.kind != Kind::Episodic && m.status == Status::Active)
            .collect();
        let gate_who = UserRef::new("set", &format!("gate-{}", case.id)).unwrap();
        let r = mnemo
            .remember(
                &gate_who,
                CandidateFields { content: case.content.clone(), ..Default::default() },
            )
            .unwrap();
        let gate = gate_class(r.outcome, r.reason);

        let tally = classes.entry(case.class.as_str()).or_default();
        tally.messages += 1;
        let kept = !active.is_empty();
        tally.stored += usize::from(kept);
        match (kept, case.expect.memory) {
            (true, true) => tally.true_positive += 1,
            (true, false) => tally.false_positive += 1,
            _ => {}
        }
        let right = match case.class.as_str() {
            "durable_fact" => kept && active.iter().all(|m| m.expires_at.is_none()),
            "transient" => {
                let expected = case.expect.expires_on.as_deref().unwrap_or_default();
                active
                    .iter()
                    .any(|m| m.expires_at.is_some_and(|t| t.to_string().starts_with(expected)))
            }
            // A standing order must not become active: held as instruction-like, or refused
            // outright when it also carries a secret.
            "instruction" => !kept && gate != "allow",
            "sensitive" | "secret" => !kept && gate == case.expect.gate,
            _ => !kept,
        };
        tally.right += usize::from(right);
        if case.expect.facts >= 2 {
            multi += 1;
            let proposed = report.proposed.iter().filter(|p| p.result.id.is_some()).count();
            multi_split += usize::from(proposed >= case.expect.facts);
        }
        if !right {
            misses.push(format!(
                "{} {} (gate {gate}): {:?} -> {:?}",
                case.class,
                case.id,
                case.content,
                active
                    .iter()
                    .map(|m| format!(
                        "{}{}",
                        m.content,
                        m.expires_at.map(|t| format!(" [until {t}]")).unwrap_or_default()
                    ))
                    .collect::<Vec<_>>()
            ));
        }
    }

    eprintln!("\nextraction set: {} messages", cases.len());
    eprintln!("| class | messages | outcome as labelled | stored a durable memory |");
    eprintln!("|---|---|---|---|");
    for (class, t) in &classes {
        eprintln!(
            "| {class} | {} | {:.3} | {:.3} |",
            t.messages,
            t.right as f64 / t.messages as f64,
            t.stored as f64 / t.messages as f64
        );
    }
    let (tp, fp): (usize, usize) =
        classes.values().fold((0, 0), |(a, b), t| (a + t.true_positive, b + t.false_positive));
    let positives: usize = cases.iter().filter(|c| c.expect.memory).count();
    eprintln!(
        "memory written: precision {:.3}, recall {:.3}",
        tp as f64 / (tp + fp).max(1) as f64,
        tp as f64 / positives.max(1) as f64
    );
    eprintln!(
        "messages with several facts that gave at least that many memories: {multi_split}/{multi}"
    );
    for miss in &misses {
        eprintln!("  {miss}");
    }

    let rate = |class: &str| {
        let t = &classes[class];
        t.right as f64 / t.messages as f64
    };
    let stored = |class: &str| {
        let t = &classes[class];
        t.stored as f64 / t.messages as f64
    };
    assert!(rate("durable_fact") >= 0.85, "durable facts kept: {:.3}", rate("durable_fact"));
    assert!(
        rate("transient") >= 0.85,
        "transient facts with the right expiry: {:.3}",
        rate("transient")
    );
    // The target is 5%; momentary states ("I'm starving lol") still get through.
    assert!(stored("small_talk") <= 0.10, "small talk stored: {:.3}", stored("small_talk"));
    assert!(stored("question") <= 0.05, "questions stored: {:.3}", stored("question"));
    assert!(rate("instruction") == 1.0, "standing orders held: {:.3}", rate("instruction"));
    assert!(rate("secret") >= 0.95, "secrets refused: {:.3}", rate("secret"));
    assert!(classes["secret"].stored == 0, "a secret became an active memory");
}
