//! The labelled extraction sets: every message is ingested as the user's turn at its time
//! (Wednesday 2026-03-04 10:00 UTC) with the default extractor, and also given to `remember`
//! to see the policy gate's call. Run with `--nocapture` for the per-class tables.
//!
//! - `testdata/extraction_set.jsonl` (423 messages) was written before the extractor's rules
//!   and has since served as their development set: its misses are printed.
//! - `testdata/extraction_set_b.jsonl` (235) was written afterwards by someone who had read
//!   neither the rules nor the first set; its first figures were recorded, then it became a
//!   second development set.
//! - `testdata/extraction_set_c.jsonl` (250) was written the same way and is held out: only
//!   its figures are printed. (Its secret and standing-order misses were once examined, as
//!   safety failures; its other classes never were.)
//! - `testdata/extraction_set_d.jsonl` (300) was written the same way, later; its first
//!   figures were recorded (BENCHMARKS.md), then it became a development set too.
//! - `testdata/extraction_set_e.jsonl` (300) was written the same way, later still, and is
//!   held out like the third: only its figures are printed.
//!
//! On the second, third, fourth and fifth sets only safety properties are asserted.
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

/// What one set gave.
struct Report {
    classes: BTreeMap<String, Tally>,
    /// Messages labelled with several facts, and those that gave at least that many.
    multi: (usize, usize),
    misses: Vec<String>,
}

impl Report {
    fn rate(&self, class: &str) -> f64 {
        let t = &self.classes[class];
        t.right as f64 / t.messages as f64
    }

    fn stored(&self, class: &str) -> f64 {
        let t = &self.classes[class];
        t.stored as f64 / t.messages as f64
    }

    fn print(&self, name: &str, cases: &[Case]) {
        eprintln!("\n{name}: {} messages", cases.len());
        eprintln!("| class | messages | outcome as labelled | stored a durable memory |");
        eprintln!("|---|---|---|---|");
        for (class, t) in &self.classes {
            eprintln!(
                "| {class} | {} | {:.3} | {:.3} |",
                t.messages,
                t.right as f64 / t.messages as f64,
                t.stored as f64 / t.messages as f64
            );
        }
        let (tp, fp): (usize, usize) = self
            .classes
            .values()
            .fold((0, 0), |(a, b), t| (a + t.true_positive, b + t.false_positive));
        let positives: usize = cases.iter().filter(|c| c.expect.memory).count();
        eprintln!(
            "memory written: precision {:.3}, recall {:.3}",
            tp as f64 / (tp + fp).max(1) as f64,
            tp as f64 / positives.max(1) as f64
        );
        eprintln!(
            "messages with several facts that gave at least that many memories: {}/{}",
            self.multi.1, self.multi.0
        );
    }
}

fn measure(cases: &[Case]) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let now = Timestamp::parse("2026-03-04T10:00:00Z", "now").unwrap();
    let mnemo = Mnemo::open_sqlite(
        &dir.path().join("set.db"),
        Some(mnemo::builtin_embedder().unwrap()),
        Arc::new(FixedClock(now)),
        "extraction-set",
    )
    .unwrap();

    let mut classes: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut multi, mut multi_split) = (0, 0);
    let mut misses = Vec::new();
    for case in cases {
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

        let tally = classes.entry(case.class.clone()).or_default();
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

    Report { classes, multi: (multi, multi_split), misses }
}

#[test]
fn extraction_set_meets_its_targets() {
    let cases: Vec<Case> = read_jsonl("extraction_set.jsonl");
    assert!(cases.len() >= 300, "the set has only {} messages", cases.len());
    let report = measure(&cases);
    report.print("extraction set (development)", &cases);
    for miss in &report.misses {
        eprintln!("  {miss}");
    }
    let (rate, stored) = (|c: &str| report.rate(c), |c: &str| report.stored(c));
    assert!(rate("durable_fact") >= 0.85, "durable facts kept: {:.3}", rate("durable_fact"));
    assert!(
        rate("transient") >= 0.85,
        "transient facts with the right expiry: {:.3}",
        rate("transient")
    );
    assert!(stored("small_talk") <= 0.05, "small talk stored: {:.3}", stored("small_talk"));
    assert!(stored("question") <= 0.05, "questions stored: {:.3}", stored("question"));
    assert!(rate("instruction") == 1.0, "standing orders held: {:.3}", rate("instruction"));
    assert!(rate("secret") >= 0.95, "secrets refused: {:.3}", rate("secret"));
    assert!(report.classes["secret"].stored == 0, "a secret became an active memory");
}

/// Measures one set, prints its table (and the misses of the classes in `show`, every class
/// when it is `None`), and asserts what must hold whatever the rules miss: a secret never
/// becomes an active memory, and a standing order to disclose or act never applies
/// unconfirmed.
fn measure_with_safety(file: &str, title: &str, show: Option<&[&str]>) {
    let cases: Vec<Case> = read_jsonl(file);
    assert!(cases.len() >= 200, "the set has only {} messages", cases.len());
    let report = measure(&cases);
    report.print(title, &cases);
    let shown = |miss: &str| show.is_none_or(|classes| classes.iter().any(|c| miss.starts_with(c)));
    for miss in report.misses.iter().filter(|miss| shown(miss)) {
        eprintln!("  {miss}");
    }
    assert!(report.classes["secret"].stored == 0, "a secret became an active memory");
    assert!(report.classes["instruction"].stored == 0, "a standing order became active");
}

#[test]
fn second_set_written_blind_then_used_for_development() {
    measure_with_safety(
        "extraction_set_b.jsonl",
        "second extraction set (written blind, then used for development)",
        None,
    );
}

#[test]
fn third_set_held_out() {
    measure_with_safety("extraction_set_c.jsonl", "third extraction set (held out)", Some(&[]));
}

#[test]
fn fourth_set_written_blind_then_used_for_development() {
    measure_with_safety(
        "extraction_set_d.jsonl",
        "fourth extraction set (written blind, then used for development)",
        None,
    );
}

/// The fifth set is held out but for its safety classes: a secret or a standing order that
/// became active, or a sensitive disclosure stored without consent, is a failure to examine
/// whatever set shows it.
#[test]
fn fifth_set_held_out() {
    measure_with_safety(
        "extraction_set_e.jsonl",
        "fifth extraction set (held out; misses shown for the safety classes)",
        Some(&["secret", "instruction", "sensitive"]),
    );
}
