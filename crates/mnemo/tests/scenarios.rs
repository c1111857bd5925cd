//! The multi-session scenario suite (`testdata/scenarios.json`): conversations are ingested
//! session by session with the rule-based extractor and the built-in embedder, then a later
//! session asks for context. It checks recall of a fact from an earlier session, restraint
//! on an unrelated query, an updated preference winning, a deleted memory never coming back,
//! a planted instruction in a tool result never being saved, and a team's shared space read
//! beside each member's own memory (a proposal waiting for review, a member who leaves). Run with `--nocapture` to
//! see the pass counts per scenario type.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::sync::Arc;

use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::ports::ListFilter;
use mnemo::core::transcript::{Message, Role};
use mnemo::core::{FixedClock, Status, Timestamp, UserRef};
use mnemo::{IngestOptions, Mnemo, Tokenizer, TokenizerName};
use serde::Deserialize;

#[derive(Deserialize)]
struct Scenario {
    #[serde(rename = "type")]
    kind: String,
    name: String,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Step {
    Session {
        session: String,
        messages: Vec<(String, String)>,
        #[serde(default, rename = "as")]
        user: Option<String>,
    },
    Forget {
        forget: String,
    },
    Expect {
        expect: Expectation,
    },
    /// A shared space and its members' roles.
    Space {
        space: String,
        members: BTreeMap<String, String>,
        #[serde(default)]
        maintainers_write_directly: bool,
    },
    /// A member writes to a space.
    Share {
        #[serde(rename = "as")]
        user: String,
        share: String,
        text: String,
    },
    /// A user remembers a statement of their own.
    Remember {
        #[serde(rename = "as")]
        user: String,
        remember: String,
    },
    /// A maintainer approves the proposals holding this text.
    Approve {
        #[serde(rename = "as")]
        user: String,
        approve: String,
    },
    /// A member leaves a space.
    Leave {
        leave: String,
        from: String,
    },
}

#[derive(Deserialize)]
struct Expectation {
    #[serde(default, rename = "as")]
    user: Option<String>,
    session: String,
    query: String,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    no_active_memory_with: Option<String>,
}

fn role(name: &str) -> Role {
    match name {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => panic!("unknown role {other}"),
    }
}

/// Runs one scenario on a fresh store; returns the failures.
fn run(scenario: &Scenario) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let start = Timestamp::parse("2026-05-01T09:00:00Z", "t").unwrap();
    let mut failures = Vec::new();
    let default_user = UserRef::new("t", "u").unwrap();
    let user = |name: &Option<String>| match name {
        Some(name) => UserRef::new("t", name).unwrap(),
        None => default_user.clone(),
    };
    for (index, step) in scenario.steps.iter().enumerate() {
        // Each step happens a day after the previous one.
        let now = Timestamp::from_millis(start.as_millis() + index as i64 * 86_400_000);
        let mnemo = Mnemo::open_sqlite(
            &dir.path().join("scenario.db"),
            Some(mnemo::builtin_embedder().unwrap()),
            Arc::new(FixedClock(now)),
            "scenarios",
        )
        .unwrap();
        match step {
            Step::Session { session, messages, user: name } => {
                let who = user(name);
                let messages: Vec<Message> = messages
                    .iter()
                    .map(|(r, text)| Message {
                        role: role(r),
                        content: text.clone(),
                        id: None,
                        ts: Some(now),
                        source: None,
                    })
                    .collect();
                let options = IngestOptions::new(session.clone());
                mnemo.ingest(&who, &messages, &options).unwrap();
            }
            Step::Forget { forget } => {
                let who = &default_user;
                let all = mnemo.list(who, &ListFilter::default()).unwrap();
                let matching: Vec<_> =
                    all.iter().filter(|m| m.content.contains(forget.as_str())).collect();
                if matching.is_empty() {
                    failures.push(format!("nothing to forget matching `{forget}`"));
                }
                for memory in matching {
                    // An id already removed with another record's history is fine.
                    let _ = mnemo.forget(who, &memory.id);
                }
            }
            Step::Space { space, members, maintainers_write_directly } => {
                let new = mnemo::NewSpace {
                    id: space.clone(),
                    maintainers_write_directly: *maintainers_write_directly,
                    ..Default::default()
                };
                mnemo.create_space("t", new).unwrap();
                for (member, role) in members {
                    mnemo.add_member("t", space, member, role.parse().unwrap()).unwrap();
                }
            }
            Step::Share { user: name, share, text } => {
                let fields = CandidateFields { content: text.clone(), ..Default::default() };
                mnemo.remember_in(&user(&Some(name.clone())), share, fields, false).unwrap();
            }
            Step::Remember { user: name, remember } => {
                let fields = CandidateFields { content: remember.clone(), ..Default::default() };
                mnemo.remember(&user(&Some(name.clone())), fields).unwrap();
            }
            Step::Approve { user: name, approve } => {
                let who = user(&Some(name.clone()));
                let waiting: Vec<_> = mnemo
                    .pending(&who)
                    .unwrap()
                    .into_iter()
                    .filter(|m| m.content.contains(approve.as_str()))
                    .collect();
                if waiting.is_empty() {
                    failures
                        .push(format!("nothing waits for {name}'s approval matching `{approve}`"));
                }
                for memory in waiting {
                    mnemo.confirm(&who, &memory.id).unwrap();
                }
            }
            Step::Leave { leave, from } => {
                mnemo.remove_member("t", from, leave).unwrap();
            }
            Step::Expect { expect } => {
                let who = user(&expect.user);
                let tokenizer = Tokenizer::new(TokenizerName::O200k).unwrap();
                let request = mnemo::ContextRequest {
                    query: expect.query.clone(),
                    budget: 1000,
                    session: Some(expect.session.clone()),
                    as_of: None,
                    compaction: None,
                    spaces: None,
                };
                let block = mnemo.context(&who, &request, &tokenizer).unwrap();
                let text = block.rendered.to_lowercase();
                for needle in &expect.contains {
                    if !text.contains(&needle.to_lowercase()) {
                        failures.push(format!("`{}`: context lacks `{needle}`", expect.query));
                    }
                }
                for needle in &expect.absent {
                    if text.contains(&needle.to_lowercase()) {
                        failures.push(format!("`{}`: context shows `{needle}`", expect.query));
                    }
                }
                if let Some(needle) = &expect.no_active_memory_with {
                    // The raw turn stays in the transcript for its retention (out of context,
                    // as checked above); no long-term memory may hold it.
                    let filter = ListFilter { status: Some(Status::Active), ..Default::default() };
                    let saved = mnemo.list(&who, &filter).unwrap();
                    if saved.iter().any(|m| !m.transcript && m.content.contains(needle.as_str())) {
                        failures.push(format!("an active memory holds `{needle}`"));
                    }
                }
            }
        }
    }
    failures
}

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
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failed = Vec::new();
    for scenario in &scenarios {
        let failures = run(scenario);
        let entry = counts.entry(scenario.kind.as_str()).or_default();
        entry.1 += 1;
        if failures.is_empty() {
            entry.0 += 1;
        } else {
            failed.push(format!("{} ({}): {}", scenario.name, scenario.kind, failures.join("; ")));
        }
    }
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
