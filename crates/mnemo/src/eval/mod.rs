//! Measuring mnemo on one's own data: the multi-session scenario suite here, and the LoCoMo
//! retrieval run in [`locomo`].
//!
//! The multi-session scenario suite as a product feature (`mnemo eval scenarios FILE`):
//! scripted conversations ingested session by session, with shared spaces and memories
//! written and approved in between, then questions whose context block is checked. A
//! scenario runs in a tenant of its own on the notebook's store, embedder and extractor, one
//! day between steps, and everything it wrote is deleted afterwards.
//!
//! The input is a JSON array of scenarios: `{"type", "name", "steps": [...]}`, where a step is
//! one of
//! - `{"session": S, "messages": [[role, text], ...], "as"?: user}`: a conversation ingested;
//! - `{"forget": TEXT}`: every memory holding TEXT forgotten;
//! - `{"space": ID, "members": {user: role}, "maintainers_write_directly"?: bool}`;
//! - `{"as": user, "share": SPACE, "text": TEXT}`: written to a space;
//! - `{"as": user, "remember": TEXT}`: remembered by a user;
//! - `{"as": user, "approve": TEXT}`: the proposals holding TEXT approved;
//! - `{"leave": user, "from": SPACE}`;
//! - `{"expect": {"session", "query", "as"?, "contains"?: [...], "absent"?: [...],
//!   "no_active_memory_with"?: TEXT}}`: the context block (1,000 tokens, o200k) for the query
//!   must contain and lack those texts (case-insensitive), and no active memory may hold the
//!   last one.
//!
//! Steps without `as` act for the user `u`.

pub mod locomo;

use std::collections::BTreeMap;
use std::sync::Arc;

use mnemo_core::lifecycle::CandidateFields;
use mnemo_core::ports::ListFilter;
use mnemo_core::transcript::{Message, Role};
use mnemo_core::{FixedClock, Status, Timestamp, UserRef};
use serde::Deserialize;

use crate::{ContextRequest, IngestOptions, Mnemo, NewSpace, Result, Tokenizer, TokenizerName};

/// One scripted scenario.
#[derive(Debug, Clone, Deserialize)]
pub struct Scenario {
    /// Its type (`recall`, `restraint`, `update`, `deletion`, `injection`, `shared`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// What it is about.
    pub name: String,
    /// Its steps, one day apart.
    pub steps: Vec<Step>,
}

/// One step of a scenario (see the module's documentation for each form).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
#[allow(missing_docs)]
pub enum Step {
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
    Space {
        space: String,
        members: BTreeMap<String, String>,
        #[serde(default)]
        maintainers_write_directly: bool,
    },
    Share {
        #[serde(rename = "as")]
        user: String,
        share: String,
        text: String,
    },
    Remember {
        #[serde(rename = "as")]
        user: String,
        remember: String,
    },
    Approve {
        #[serde(rename = "as")]
        user: String,
        approve: String,
    },
    Leave {
        leave: String,
        from: String,
    },
}

/// What a context block must show.
#[derive(Debug, Clone, Deserialize)]
pub struct Expectation {
    /// Whose context (default `u`).
    #[serde(default, rename = "as")]
    pub user: Option<String>,
    /// The session being continued.
    pub session: String,
    /// The question.
    pub query: String,
    /// Texts the block must contain.
    #[serde(default)]
    pub contains: Vec<String>,
    /// Texts it must not contain.
    #[serde(default)]
    pub absent: Vec<String>,
    /// A text no active memory may hold.
    #[serde(default)]
    pub no_active_memory_with: Option<String>,
}

/// How the scenarios of one type fared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Scenarios that passed.
    pub passed: usize,
    /// Scenarios run.
    pub total: usize,
}

/// What a run of the suite found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// By scenario type.
    pub by_type: BTreeMap<String, Tally>,
    /// Each failed scenario's name and type, with what failed.
    pub failures: Vec<(String, String, Vec<String>)>,
}

fn role(name: &str) -> Result<Role> {
    Ok(match name {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => {
            return Err(mnemo_core::error::InvalidInput::new(
                "messages",
                format!("unknown role `{other}` (user, assistant or tool)"),
            )
            .into());
        }
    })
}

impl Mnemo {
    /// Runs `scenarios`, each in a tenant of its own named from `tenant_prefix`, its first
    /// step at `start` and each next one a day later; deletes what each wrote afterwards.
    pub fn eval_scenarios(
        &self,
        scenarios: &[Scenario],
        tenant_prefix: &str,
        start: Timestamp,
    ) -> Result<Report> {
        let mut report = Report::default();
        for (n, scenario) in scenarios.iter().enumerate() {
            let tenant = format!("{tenant_prefix}-{n}");
            let outcome = self.eval_scenario(scenario, &tenant, start);
            let cleaned = self.eval_cleanup(&tenant, scenario);
            let failures = outcome?;
            cleaned?;
            let tally = report.by_type.entry(scenario.kind.clone()).or_default();
            tally.total += 1;
            if failures.is_empty() {
                tally.passed += 1;
            } else {
                report.failures.push((scenario.name.clone(), scenario.kind.clone(), failures));
            }
        }
        Ok(report)
    }

    /// The users a scenario acts as.
    fn eval_users(scenario: &Scenario) -> Vec<String> {
        let mut users = vec!["u".to_owned()];
        for step in &scenario.steps {
            let named: Vec<String> = match step {
                Step::Session { user, .. } => user.iter().cloned().collect(),
                Step::Expect { expect } => expect.user.iter().cloned().collect(),
                Step::Space { members, .. } => members.keys().cloned().collect(),
                Step::Share { user, .. }
                | Step::Remember { user, .. }
                | Step::Approve { user, .. } => {
                    vec![user.clone()]
                }
                Step::Leave { leave, .. } => vec![leave.clone()],
                Step::Forget { .. } => Vec::new(),
            };
            for user in named {
                if !users.contains(&user) {
                    users.push(user);
                }
            }
        }
        users
    }

    /// Deletes everything a scenario wrote in its tenant: its spaces, then its users.
    fn eval_cleanup(&self, tenant: &str, scenario: &Scenario) -> Result<()> {
        for space in self.spaces(tenant)? {
            self.delete_space(tenant, &space.id)?;
        }
        for user in Self::eval_users(scenario) {
            self.forget_all(&UserRef::new(tenant, &user)?)?;
        }
        Ok(())
    }

    /// Runs one scenario in `tenant`; returns what failed.
    fn eval_scenario(
        &self,
        scenario: &Scenario,
        tenant: &str,
        start: Timestamp,
    ) -> Result<Vec<String>> {
        let mut failures = Vec::new();
        let user = |name: Option<&String>| UserRef::new(tenant, name.map_or("u", String::as_str));
        let tokenizer = Tokenizer::new(TokenizerName::O200k)?;
        for (index, step) in scenario.steps.iter().enumerate() {
            let now = Timestamp::from_millis(start.as_millis() + index as i64 * 86_400_000);
            let mnemo = self.with_clock(Arc::new(FixedClock(now)));
            match step {
                Step::Session { session, messages, user: name } => {
                    let messages = messages
                        .iter()
                        .map(|(r, text)| {
                            Ok(Message {
                                role: role(r)?,
                                content: text.clone(),
                                id: None,
                                ts: Some(now),
                                source: None,
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    mnemo.ingest(
                        &user(name.as_ref())?,
                        &messages,
                        &IngestOptions::new(session.clone()),
                    )?;
                }
                Step::Forget { forget } => {
                    let who = user(None)?;
                    let all = mnemo.list(&who, &ListFilter::default())?;
                    let matching: Vec<_> =
                        all.iter().filter(|m| m.content.contains(forget.as_str())).collect();
                    if matching.is_empty() {
                        failures.push(format!("nothing to forget matching `{forget}`"));
                    }
                    for memory in matching {
                        // An id already removed with another record's history is fine.
                        let _ = mnemo.forget(&who, &memory.id);
                    }
                }
                Step::Space { space, members, maintainers_write_directly } => {
                    let new = NewSpace {
                        id: space.clone(),
                        maintainers_write_directly: *maintainers_write_directly,
                        ..Default::default()
                    };
                    mnemo.create_space(tenant, new)?;
                    for (member, role) in members {
                        mnemo.add_member(tenant, space, member, role.parse()?)?;
                    }
                }
                Step::Share { user: name, share, text } => {
                    let fields = CandidateFields { content: text.clone(), ..Default::default() };
                    mnemo.remember_in(&user(Some(name))?, share, fields, false)?;
                }
                Step::Remember { user: name, remember } => {
                    let fields =
                        CandidateFields { content: remember.clone(), ..Default::default() };
                    mnemo.remember(&user(Some(name))?, fields)?;
                }
                Step::Approve { user: name, approve } => {
                    let who = user(Some(name))?;
                    let waiting: Vec<_> = mnemo
                        .pending(&who)?
                        .into_iter()
                        .filter(|m| m.content.contains(approve.as_str()))
                        .collect();
                    if waiting.is_empty() {
                        failures.push(format!(
                            "nothing waits for {name}'s approval matching `{approve}`"
                        ));
                    }
                    for memory in waiting {
                        mnemo.confirm(&who, &memory.id)?;
                    }
                }
                Step::Leave { leave, from } => mnemo.remove_member(tenant, from, leave)?,
                Step::Expect { expect } => {
                    let who = user(expect.user.as_ref())?;
                    let request = ContextRequest {
                        query: expect.query.clone(),
                        budget: 1000,
                        session: Some(expect.session.clone()),
                        ..Default::default()
                    };
                    let block = mnemo.context(&who, &request, &tokenizer)?;
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
                        // The raw turn stays in the transcript for its retention (out of
                        // context, as checked above); no long-term memory may hold it.
                        let filter =
                            ListFilter { status: Some(Status::Active), ..Default::default() };
                        let saved = mnemo.list(&who, &filter)?;
                        if saved
                            .iter()
                            .any(|m| !m.transcript && m.content.contains(needle.as_str()))
                        {
                            failures.push(format!("an active memory holds `{needle}`"));
                        }
                    }
                }
            }
        }
        Ok(failures)
    }
}
