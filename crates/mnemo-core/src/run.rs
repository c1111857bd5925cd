//! Working memory of one task (SPEC §1): a run's goal, its plan steps and their status, the
//! evidence gathered for it and references to tool results. A run is kept in the store, so
//! it survives a restart and resumes from there; ending it deletes its state and leaves one
//! audit line.
//!
//! This module holds the run's rules: what may be added, how steps change state, and the
//! bounds on everything a run accumulates. Stores persist [`Run`] values as they are.

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::error::InvalidInput;
use crate::screen;

/// The most steps one run may have.
pub const MAX_STEPS: usize = 200;
/// The most evidence items (and, separately, tool-result references) one run may hold.
pub const MAX_EVIDENCE: usize = 500;
/// The longest goal, step text, note or excerpt, in bytes.
pub const MAX_TEXT_BYTES: usize = 4_000;
/// The longest source id, tool name or reference, in bytes.
pub const MAX_REF_BYTES: usize = 500;

/// Where a plan step stands.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not done yet.
    #[default]
    Pending,
    /// Done.
    Done,
    /// Cannot go on until something changes.
    Blocked,
}

impl StepStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Done => "done",
            Self::Blocked => "blocked",
        }
    }
}

impl std::str::FromStr for StepStatus {
    type Err = InvalidInput;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pending" => Ok(Self::Pending),
            "done" => Ok(Self::Done),
            "blocked" => Ok(Self::Blocked),
            other => Err(InvalidInput::new(
                "status",
                format!("`{other}` is not one of pending, done, blocked"),
            )),
        }
    }
}

/// One step of a run's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunStep {
    /// Its number in the plan, from 1.
    pub number: u32,
    /// What the step is.
    pub text: String,
    /// Where it stands.
    pub status: StepStatus,
    /// When its status last changed (or when it was added).
    pub updated_at: Timestamp,
}

/// Something found while working on a run, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    /// The source: a memory id, a URL, a file path, a document id.
    pub source_id: String,
    /// The relevant excerpt (secrets redacted).
    pub excerpt: String,
    /// When it was retrieved.
    pub retrieved_at: Timestamp,
}

/// A reference to a tool's result, kept instead of the result itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolResultRef {
    /// The tool that produced it.
    pub tool: String,
    /// Where the full result can be found again (a path, an id, a URL).
    pub reference: String,
    /// A one-line note on what it held (secrets redacted).
    pub note: String,
    /// When it was recorded.
    pub recorded_at: Timestamp,
}

/// A run: one task's working memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Run {
    /// Its id.
    pub id: String,
    /// What the task is for.
    pub goal: String,
    /// The plan, in order.
    pub steps: Vec<RunStep>,
    /// Evidence gathered, oldest first.
    pub evidence: Vec<Evidence>,
    /// Tool results referred to, oldest first.
    pub tool_results: Vec<ToolResultRef>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// One change to a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunChange {
    /// Adds a pending step at the end of the plan.
    AddStep(String),
    /// Sets the status of step `number`.
    SetStatus {
        /// The step's number.
        number: u32,
        /// Its new status.
        status: StepStatus,
    },
    /// Records evidence.
    AddEvidence {
        /// Where it came from.
        source_id: String,
        /// The excerpt.
        excerpt: String,
    },
    /// Records a reference to a tool result.
    AddToolResult {
        /// The tool.
        tool: String,
        /// Where the result is.
        reference: String,
        /// What it held, in one line.
        note: String,
    },
}

/// Trims `text` and checks it is non-empty and at most `max` bytes; redacts secrets.
fn checked_text(text: &str, field: &str, max: usize) -> Result<String, InvalidInput> {
    let text = text.trim();
    if text.is_empty() {
        return Err(InvalidInput::new(field, "must not be empty"));
    }
    if text.len() > max {
        return Err(InvalidInput::new(
            field,
            format!("is {} bytes, over the maximum of {max}", text.len()),
        ));
    }
    Ok(screen::redact(text).0)
}

/// Flattens `text` to one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Run {
    /// A new run with an empty plan.
    pub fn start(id: String, goal: &str, now: Timestamp) -> Result<Self, InvalidInput> {
        Ok(Self {
            id,
            goal: checked_text(goal, "goal", MAX_TEXT_BYTES)?,
            steps: Vec::new(),
            evidence: Vec::new(),
            tool_results: Vec::new(),
            started_at: now,
            updated_at: now,
        })
    }

    /// Applies one change at `now`; on error the run is unchanged.
    pub fn apply(&mut self, change: &RunChange, now: Timestamp) -> Result<(), InvalidInput> {
        match change {
            RunChange::AddStep(text) => {
                if self.steps.len() >= MAX_STEPS {
                    return Err(InvalidInput::new(
                        "step",
                        format!("a run has at most {MAX_STEPS} steps"),
                    ));
                }
                let text = one_line(&checked_text(text, "step", MAX_TEXT_BYTES)?);
                let number = self.steps.len() as u32 + 1;
                self.steps.push(RunStep {
                    number,
                    text,
                    status: StepStatus::Pending,
                    updated_at: now,
                });
            }
            RunChange::SetStatus { number, status } => {
                let count = self.steps.len();
                let step = number
                    .checked_sub(1)
                    .and_then(|i| self.steps.get_mut(i as usize))
                    .ok_or_else(|| {
                        InvalidInput::new(
                            "step",
                            format!("run has no step {number} (it has {count})"),
                        )
                    })?;
                step.status = *status;
                step.updated_at = now;
            }
            RunChange::AddEvidence { source_id, excerpt } => {
                if self.evidence.len() >= MAX_EVIDENCE {
                    return Err(InvalidInput::new(
                        "evidence",
                        format!("a run holds at most {MAX_EVIDENCE} evidence items"),
                    ));
                }
                let evidence = Evidence {
                    source_id: one_line(&checked_text(source_id, "source", MAX_REF_BYTES)?),
                    excerpt: checked_text(excerpt, "excerpt", MAX_TEXT_BYTES)?,
                    retrieved_at: now,
                };
                self.evidence.push(evidence);
            }
            RunChange::AddToolResult { tool, reference, note } => {
                if self.tool_results.len() >= MAX_EVIDENCE {
                    return Err(InvalidInput::new(
                        "tool_result",
                        format!("a run holds at most {MAX_EVIDENCE} tool-result references"),
                    ));
                }
                let tool_result = ToolResultRef {
                    tool: one_line(&checked_text(tool, "tool", MAX_REF_BYTES)?),
                    reference: one_line(&checked_text(reference, "reference", MAX_REF_BYTES)?),
                    note: one_line(&checked_text(note, "note", MAX_TEXT_BYTES)?),
                    recorded_at: now,
                };
                self.tool_results.push(tool_result);
            }
        }
        self.updated_at = now;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    #[test]
    fn steps_evidence_and_tool_results_accumulate() {
        let mut run = Run::start("r1".into(), "  Ship the release notes ", at(1)).unwrap();
        assert_eq!(run.goal, "Ship the release notes");
        run.apply(&RunChange::AddStep("Collect merged changes".into()), at(2)).unwrap();
        run.apply(&RunChange::AddStep("Draft\nthe notes".into()), at(3)).unwrap();
        run.apply(&RunChange::SetStatus { number: 1, status: StepStatus::Done }, at(4)).unwrap();
        run.apply(&RunChange::SetStatus { number: 2, status: StepStatus::Blocked }, at(5)).unwrap();
        assert_eq!(
            run.steps.iter().map(|s| (s.number, s.text.as_str(), s.status)).collect::<Vec<_>>(),
            [
                (1, "Collect merged changes", StepStatus::Done),
                (2, "Draft the notes", StepStatus::Blocked)
            ]
        );
        let evidence = RunChange::AddEvidence {
            source_id: "CHANGELOG.md".into(),
            excerpt: "token sk-abcdefghijklmnopqrstuvwx1234 was rotated".into(),
        };
        run.apply(&evidence, at(6)).unwrap();
        assert!(!run.evidence[0].excerpt.contains("sk-abcdefghijklmnopqrstuvwx1234"));
        assert_eq!(run.evidence[0].retrieved_at, at(6));
        let tool = RunChange::AddToolResult {
            tool: "read_file".into(),
            reference: "config.ts".into(),
            note: "240 lines".into(),
        };
        run.apply(&tool, at(7)).unwrap();
        assert_eq!(run.updated_at, at(7));
    }

    #[test]
    fn bad_changes_name_the_problem_and_change_nothing() {
        let mut run = Run::start("r1".into(), "goal", at(1)).unwrap();
        let before = run.clone();
        let err = run
            .apply(&RunChange::SetStatus { number: 3, status: StepStatus::Done }, at(2))
            .unwrap_err();
        assert_eq!(err.field, "step");
        assert!(err.problem.contains("no step 3"), "{}", err.problem);
        assert!(
            run.apply(&RunChange::SetStatus { number: 0, status: StepStatus::Done }, at(2))
                .is_err()
        );
        assert_eq!(run.apply(&RunChange::AddStep("  ".into()), at(2)).unwrap_err().field, "step");
        let long = "x".repeat(MAX_TEXT_BYTES + 1);
        let err = run
            .apply(&RunChange::AddEvidence { source_id: "s".into(), excerpt: long }, at(2))
            .unwrap_err();
        assert_eq!(err.field, "excerpt");
        assert_eq!(run, before);
        assert_eq!(Run::start("r2".into(), "", at(1)).unwrap_err().field, "goal");
        assert_eq!("finished".parse::<StepStatus>().unwrap_err().field, "status");
    }

    #[test]
    fn a_run_is_bounded() {
        let mut run = Run::start("r1".into(), "goal", at(1)).unwrap();
        for i in 0..MAX_STEPS {
            run.apply(&RunChange::AddStep(format!("step {i}")), at(2)).unwrap();
        }
        assert!(run.apply(&RunChange::AddStep("one more".into()), at(3)).is_err());
        assert_eq!(run.steps.len(), MAX_STEPS);
    }
}
