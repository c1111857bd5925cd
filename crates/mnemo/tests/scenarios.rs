//! The multi-session scenario suite (`testdata/scenarios.json`): conversations are ingested
//! session by session with the rule-based extractor and the built-in embedder, then a later
//! session asks for context. It checks recall of a fact from an earlier session, restraint
//! on an unrelated query, an updated preference winning, a deleted memory never coming back,
//! a planted instruction in a tool result never being saved, and a team's shared space read
//! beside each member's own memory (a proposal waiting for review, a member who leaves).
//! The runner is the library's (`Mnemo::eval_scenarios`, also `mnemo eval scenarios FILE`).
//! Run with `--nocapture` to see the pass counts per scenario type.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::sync::Arc;

use mnemo::Mnemo;
use mnemo::core::{FixedClock, Timestamp};
use mnemo::eval::Scenario;

/// Scenarios of type recall that pass today.
const RECALL_FLOOR: usize = 3;

#[test]
fn scenarios_pass() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/scenarios.json"
    ))
    .unwrap();
    let scenarios: Vec<Scenario> = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let start = Timestamp::parse("2026-05-01T09:00:00Z", "t").unwrap();
    let mnemo = Mnemo::open_sqlite(
        &dir.path().join("scenario.db"),
        Some(mnemo::builtin_embedder().unwrap()),
        Arc::new(FixedClock(start)),
        "scenarios",
    )
    .unwrap();
    let report = mnemo.eval_scenarios(&scenarios, "t", start).unwrap();
    let counts: std::collections::BTreeMap<&str, (usize, usize)> = report
        .by_type
        .iter()
        .map(|(kind, tally)| (kind.as_str(), (tally.passed, tally.total)))
        .collect();
    let failed: Vec<String> = report
        .failures
        .iter()
        .map(|(name, kind, failures)| format!("{name} ({kind}): {}", failures.join("; ")))
        .collect();
    eprintln!("\nmulti-session scenarios (testdata/scenarios.json)\n| type | passed |\n|---|---|");
    for (kind, (passed, total)) in &counts {
        eprintln!("| {kind} | {passed}/{total} |");
    }
    for failure in &failed {
        eprintln!("not passed: {failure}");
    }
    assert_eq!(counts.len(), 6, "every scenario type is covered");
    // Deletion, injection, restraint and update are guarantees: every scenario must pass
    // (an update without a key is recognised from the statements' structure). Recall depends
    // on what the rule-based extractor understands; its floor is today's result, so a
    // regression fails the suite.
    let passed = |kind: &str| counts.get(kind).map_or(0, |c| c.0);
    for kind in ["deletion", "injection", "restraint", "shared", "update"] {
        assert_eq!(
            passed(kind),
            counts[kind].1,
            "every {kind} scenario must pass:\n{}",
            failed.join("\n")
        );
    }
    assert!(passed("recall") >= RECALL_FLOOR, "recall regressed:\n{}", failed.join("\n"));
}
