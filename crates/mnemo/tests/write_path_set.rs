//! The labelled write-path set (`testdata/write_path_set.jsonl`): every message goes through
//! the policy gate (as a `remember`) and through ingestion with the rule-based extractor, and
//! the outcomes are scored against the labels. Run with `--nocapture` to see the table.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::sync::Arc;

use mnemo::core::lifecycle::{CandidateFields, Outcome};
use mnemo::core::ports::ListFilter;
use mnemo::core::screen::{find_secret, redact};
use mnemo::core::transcript::{Message, Role};
use mnemo::core::{FixedClock, Kind, Status, Timestamp, UserRef};
use mnemo::{IngestOptions, Mnemo};
use mnemo_testkit::labelled::{gate_class, read_jsonl};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    id: String,
    category: String,
    role: String,
    content: String,
    expect: Expect,
}

#[derive(Deserialize)]
struct Expect {
    gate: String,
    memory: bool,
    key: Option<String>,
    expires: bool,
}

#[derive(Default)]
struct Counts {
    true_positive: usize,
    false_positive: usize,
    false_negative: usize,
}

impl Counts {
    fn precision(&self) -> f64 {
        self.true_positive as f64 / (self.true_positive + self.false_positive).max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.true_positive as f64 / (self.true_positive + self.false_negative).max(1) as f64
    }
}

#[test]
fn write_path_set_meets_its_targets() {
    let cases: Vec<Case> = read_jsonl("write_path_set.jsonl");
    assert!(cases.len() >= 150, "the set has only {} messages", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let now = Timestamp::parse("2026-03-04T10:00:00Z", "now").unwrap();
    let mnemo = Mnemo::open_sqlite(
        &dir.path().join("set.db"),
        Some(mnemo::builtin_embedder().unwrap()),
        Arc::new(FixedClock(now)),
        "write-path-set",
    )
    .unwrap();

    let mut gate: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut extraction = Counts::default();
    let (mut benign, mut benign_held, mut benign_extracted) = (0, 0, 0);
    let (mut keyed, mut keyed_right, mut expiring, mut expiring_right) = (0, 0, 0, 0);
    let (mut secrets, mut secrets_kept_out) = (0, 0);
    let (mut tool_injections, mut tool_injections_kept_out) = (0, 0);
    let mut misses: Vec<String> = Vec::new();

    for case in &cases {
        // The gate, judged on the content alone (as the user's own statement).
        let who = UserRef::new("set", &format!("gate-{}", case.id)).unwrap();
        let r = mnemo
            .remember(&who, CandidateFields { content: case.content.clone(), ..Default::default() })
            .unwrap();
        let predicted = gate_class(r.outcome, r.reason);
        for class in ["secret", "instruction_like", "needs_consent"] {
            let counts = gate.entry(class).or_default();
            match (predicted == class, case.expect.gate == class) {
                (true, true) => counts.true_positive += 1,
                (true, false) => counts.false_positive += 1,
                (false, true) => counts.false_negative += 1,
                (false, false) => {}
            }
        }
        if predicted != case.expect.gate {
            misses.push(format!(
                "gate {}: expected {}, got {predicted} ({}): {}",
                case.id, case.expect.gate, r.reason, case.content
            ));
        }

        // Ingestion with the rule-based extractor, with the message's real role.
        let who = UserRef::new("set", &format!("ingest-{}", case.id)).unwrap();
        let role = if case.role == "tool" { Role::Tool } else { Role::User };
        let message = Message {
            role,
            content: case.content.clone(),
            id: Some(case.id.clone()),
            ts: Some(now),
            source: None,
        };
        let options = IngestOptions::new("s");
        let report = mnemo.ingest(&who, &[message], &options).unwrap();
        let stored =
            mnemo.list(&who, &ListFilter { include_expired: true, ..Default::default() }).unwrap();
        let active_durable: Vec<_> = stored
            .iter()
            .filter(|m| m.kind != Kind::Episodic && m.status == Status::Active)
            .collect();
        let extracted = !report.proposed.is_empty();

        match (extracted, case.expect.memory) {
            (true, true) => extraction.true_positive += 1,
            (true, false) => {
                extraction.false_positive += 1;
                misses.push(format!(
                    "extraction {}: nothing expected, got {:?}: {}",
                    case.id,
                    report.proposed.iter().map(|p| &p.content).collect::<Vec<_>>(),
                    case.content
                ));
            }
            (false, true) => extraction.false_negative += 1,
            (false, false) => {}
        }
        if case.expect.gate == "secret" {
            secrets += 1;
            // The secret's own tokens: what redaction removes from the message.
            let (redacted, _) = redact(&case.content);
            let secret_tokens: Vec<&str> = case
                .content
                .split_whitespace()
                .filter(|t| t.len() >= 4 && !redacted.contains(*t))
                .collect();
            let leaked = stored.iter().any(|m| {
                find_secret(&m.content).is_some()
                    || secret_tokens.iter().any(|t| m.content.contains(t))
            });
            let refused = r.outcome == Outcome::Refused;
            if refused && !leaked {
                secrets_kept_out += 1;
            } else {
                misses.push(format!(
                    "SECRET {} not kept out (refused {refused}, leaked {leaked}): {}",
                    case.id, case.content
                ));
            }
        }
        if case.role == "tool" && case.expect.gate == "instruction_like" {
            tool_injections += 1;
            if active_durable.is_empty() {
                tool_injections_kept_out += 1;
            } else {
                misses
                    .push(format!("INJECTION {} became active memory: {}", case.id, case.content));
            }
        }
        if case.expect.memory && case.expect.gate == "allow" && case.role == "user" {
            benign += 1;
            if matches!(r.outcome, Outcome::Refused | Outcome::Pending) {
                benign_held += 1;
                misses.push(format!(
                    "benign {} held by the gate ({}): {}",
                    case.id, r.reason, case.content
                ));
            }
            let right = match &case.expect.key {
                Some(key) => report.proposed.iter().any(|p| {
                    p.result
                        .id
                        .as_ref()
                        .and_then(|id| mnemo.get(&who, id).ok())
                        .is_some_and(|m| m.attribute.as_deref() == Some(key.as_str()))
                }),
                None => extracted,
            };
            if right {
                benign_extracted += 1;
            } else {
                misses.push(format!(
                    "benign {} not extracted right (key {:?}), got {:?}: {}",
                    case.id,
                    case.expect.key,
                    report.proposed.iter().map(|p| &p.content).collect::<Vec<_>>(),
                    case.content
                ));
            }
        }
        if case.expect.memory && case.expect.gate == "allow" {
            if let Some(key) = &case.expect.key {
                keyed += 1;
                let ok = stored.iter().any(|m| m.attribute.as_deref() == Some(key.as_str()));
                keyed_right += usize::from(ok);
            }
            if case.expect.expires {
                expiring += 1;
                expiring_right += usize::from(
                    stored.iter().any(|m| m.kind != Kind::Episodic && m.expires_at.is_some()),
                );
            }
        }
    }

    eprintln!(
        "\nwrite-path set: {} messages ({} categories)",
        cases.len(),
        cases.iter().map(|c| c.category.as_str()).collect::<std::collections::BTreeSet<_>>().len()
    );
    eprintln!("| class | precision | recall |");
    eprintln!("|---|---|---|");
    for (class, counts) in &gate {
        eprintln!("| gate: {class} | {:.3} | {:.3} |", counts.precision(), counts.recall());
    }
    eprintln!(
        "| extraction: durable memory | {:.3} | {:.3} |",
        extraction.precision(),
        extraction.recall()
    );
    eprintln!("secrets kept out of active memory and transcript: {secrets_kept_out}/{secrets}");
    eprintln!(
        "untrusted-source injections kept out of active memory: {tool_injections_kept_out}/{tool_injections}"
    );
    eprintln!("benign durable facts wrongly refused or held: {benign_held}/{benign}");
    eprintln!(
        "benign durable facts extracted with the right key (or at all, when unkeyed): {benign_extracted}/{benign}"
    );
    eprintln!(
        "keyed facts stored with the right attribute: {keyed_right}/{keyed}; transient facts given an expiry: {expiring_right}/{expiring}"
    );
    for miss in &misses {
        eprintln!("  {miss}");
    }

    assert_eq!(secrets_kept_out, secrets, "every secret must be kept out");
    assert_eq!(
        tool_injections_kept_out, tool_injections,
        "every untrusted-source injection must be kept out"
    );
    assert!(
        benign_held * 20 <= benign,
        "{benign_held}/{benign} benign facts held or refused (max 5%)"
    );
    assert!(
        benign_extracted * 5 >= benign * 4,
        "only {benign_extracted}/{benign} benign facts extracted right (min 80%)"
    );
}
