//! The blind gate set (`testdata/gate_set_blind.jsonl`: 160 everyday messages labelled
//! `allow`, `needs_consent` or `secret` by the SPEC §3.3 rules, written apart from the
//! screening rules and never used to tune them): each message goes through the policy gate
//! as a `remember` of the user's own statement, and the table reports how many sensitive
//! messages wait for consent (by category), how many secrets are refused, and how many
//! ordinary messages are stored as they should be. Run with `--nocapture` to see it;
//! `.ci/run` prints it. The floors asserted are today's figures, so a change that loses
//! ground fails.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::sync::Arc;

use mnemo::Mnemo;
use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::{FixedClock, Timestamp, UserRef};
use mnemo_testkit::labelled::{gate_class, read_jsonl};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    id: String,
    content: String,
    category: String,
    expect: String,
}

/// A store in a temporary directory (kept alive by the returned guard), with its clock at
/// the sets' time (Wednesday 2026-03-04 10:00 UTC).
fn gate_notebook() -> (tempfile::TempDir, Mnemo) {
    let dir = tempfile::tempdir().unwrap();
    let now = Timestamp::parse("2026-03-04T10:00:00Z", "now").unwrap();
    let mnemo =
        Mnemo::open_sqlite(&dir.path().join("gate.db"), None, Arc::new(FixedClock(now)), "gate")
            .unwrap();
    (dir, mnemo)
}

#[test]
fn the_blind_gate_set_holds_what_is_sensitive_and_stores_the_rest() {
    let cases: Vec<Case> = read_jsonl("gate_set_blind.jsonl");
    assert!(cases.len() >= 150, "the set has only {} messages", cases.len());
    let (_dir, mnemo) = gate_notebook();
    // Per expected class: (messages, judged as expected); per sensitive category the same.
    let mut by_class: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut by_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for case in &cases {
        let who = UserRef::new("set", &case.id).unwrap();
        let fields = CandidateFields { content: case.content.clone(), ..Default::default() };
        let written = mnemo.remember(&who, fields).unwrap();
        let judged = gate_class(written.outcome, written.reason);
        let right = judged == case.expect;
        let class = match case.expect.as_str() {
            "allow" => "allow",
            "needs_consent" => "needs_consent",
            "secret" => "secret",
            other => panic!("{}: unknown label {other:?}", case.id),
        };
        let tally = by_class.entry(class).or_default();
        tally.0 += 1;
        tally.1 += usize::from(right);
        if class == "needs_consent" {
            let tally = by_category.entry(case.category.clone()).or_default();
            tally.0 += 1;
            tally.1 += usize::from(right);
        }
        if !right {
            misses.push(format!(
                "{}: expected {}, got {judged}: {}",
                case.id, case.expect, case.content
            ));
        }
    }
    let rate = |(n, right): (usize, usize)| right as f64 / n.max(1) as f64;
    eprintln!("blind gate set: {} messages", cases.len());
    for (class, what) in [
        ("needs_consent", "sensitive, held for consent"),
        ("secret", "secrets refused"),
        ("allow", "ordinary, stored"),
    ] {
        let tally = by_class.get(class).copied().unwrap_or_default();
        eprintln!("  {what:<28} {:.3} ({}/{})", rate(tally), tally.1, tally.0);
    }
    for (category, tally) in &by_category {
        eprintln!("    {category:<26} {:.3} ({}/{})", rate(*tally), tally.1, tally.0);
    }
    if std::env::var_os("MNEMO_SHOW_MISSES").is_some() {
        misses.iter().for_each(|m| eprintln!("  {m}"));
    }
    let floor = |class: &str, floor: f64| {
        let got = rate(by_class.get(class).copied().unwrap_or_default());
        assert!(got >= floor, "{class}: {got:.3} fell below {floor}");
    };
    floor("needs_consent", 0.88);
    floor("secret", 0.9);
    floor("allow", 0.91);
}

#[derive(Deserialize)]
struct InstructionCase {
    id: String,
    content: String,
    source: String,
    expect: String,
}

/// The blind instruction set (`testdata/instruction_set_blind.jsonl`: 140 texts labelled
/// `instruction_like` (they would make an assistant move data or override its rules: 40 said
/// by the user, 20 returned by a tool) or `allow` (the user's own preferences of how to be
/// answered, facts and habits that merely hold action words), written apart from the rules):
/// the detector's judgement of every text, and what the gate does with the user's own.
#[test]
fn the_blind_instruction_set_holds_poisoning_and_stores_the_users_own_words() {
    let cases: Vec<InstructionCase> = read_jsonl("instruction_set_blind.jsonl");
    assert!(cases.len() >= 120, "the set has only {} texts", cases.len());
    let (_dir, mnemo) = gate_notebook();
    // (texts, judged as labelled) by the detector alone, and through `remember` for the
    // user's own words.
    let (mut detected, mut detected_right) = ([0usize; 2], [0usize; 2]);
    let (mut said, mut said_right) = ([0usize; 2], [0usize; 2]);
    let mut misses = Vec::new();
    for case in &cases {
        let poisoning = match case.expect.as_str() {
            "instruction_like" => true,
            "allow" => false,
            other => panic!("{}: unknown label {other:?}", case.id),
        };
        let class = usize::from(!poisoning);
        let flagged = mnemo::core::screen::is_instruction_like(&case.content);
        detected[class] += 1;
        detected_right[class] += usize::from(flagged == poisoning);
        if case.source == "user" {
            let who = UserRef::new("set", &case.id).unwrap();
            let fields = CandidateFields { content: case.content.clone(), ..Default::default() };
            let written = mnemo.remember(&who, fields).unwrap();
            let judged = gate_class(written.outcome, written.reason);
            let right = if poisoning { judged == "instruction_like" } else { judged == "allow" };
            said[class] += 1;
            said_right[class] += usize::from(right);
            if !right {
                misses.push(format!(
                    "{}: expected {}, got {judged}: {}",
                    case.id, case.expect, case.content
                ));
            }
        } else if flagged != poisoning {
            misses.push(format!(
                "{} ({}): expected {}: {}",
                case.id, case.source, case.expect, case.content
            ));
        }
    }
    let rate = |right: usize, n: usize| right as f64 / n.max(1) as f64;
    eprintln!("blind instruction set: {} texts", cases.len());
    for (class, what) in [(0, "instruction-like, flagged"), (1, "ordinary, not flagged")] {
        eprintln!(
            "  {what:<28} detector {:.3} ({}/{}), the user's own through remember {:.3} ({}/{})",
            rate(detected_right[class], detected[class]),
            detected_right[class],
            detected[class],
            rate(said_right[class], said[class]),
            said_right[class],
            said[class]
        );
    }
    if std::env::var_os("MNEMO_SHOW_MISSES").is_some() {
        misses.iter().for_each(|m| eprintln!("  {m}"));
    }
    for (got, floor, what) in [
        (rate(detected_right[0], detected[0]), 0.83, "instruction-like flagged"),
        (rate(detected_right[1], detected[1]), 0.98, "ordinary not flagged"),
        (rate(said_right[0], said[0]), 0.82, "the user's instruction-like held"),
        (rate(said_right[1], said[1]), 0.97, "the user's ordinary words stored"),
    ] {
        assert!(got >= floor, "{what}: {got:.3} fell below {floor}");
    }
}
