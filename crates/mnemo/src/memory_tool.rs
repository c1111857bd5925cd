//! Anthropic's memory tool over a notebook: each file the model keeps under `/memories` is
//! one memory (its path in the record's metadata), so what the model writes gets versions,
//! the policy gate, the audit trail, export and complete deletion. The tool's own rules
//! (paths, listings, text edits) are in `mnemo_core::memory_tool`.
//!
//! The model's notes are its inferences (`SourceType::Inferred`): the gate stores them as
//! active unless they read as instructions or touch a sensitive topic without the user's
//! consent (then they wait for the user's confirmation and the model is not shown them until
//! then), and refuses a secret. A file is created as an episodic record with a reference of
//! its own, so two files with the same text stay two files, and it is never superseded by
//! the user's statements nor supersedes them.

use mnemo_core::lifecycle::{CandidateFields, Outcome};
use mnemo_core::memory_tool::{
    Command, Listed, PATH_KEY, ROOT, ToolError, check_path, insert_after, render_directory,
    render_file, replace_once, within,
};
use mnemo_core::ports::ListFilter;
use mnemo_core::{Kind, Memory, Source, SourceType, Status, UserRef};

use crate::{Error, Mnemo, Result};

/// The memory tool's answer to one call, as the model is shown it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolAnswer {
    /// What the tool says.
    pub text: String,
    /// Whether the call failed (nothing was changed).
    pub is_error: bool,
}

impl ToolAnswer {
    fn ok(text: impl Into<String>) -> Self {
        Self { text: text.into(), is_error: false }
    }

    fn error(text: impl Into<String>) -> Self {
        Self { text: text.into(), is_error: true }
    }
}

/// The extractor name recorded on files the memory tool writes.
const EXTRACTOR: &str = "memory_tool";

fn path_of(memory: &Memory) -> Option<&str> {
    mnemo_core::record::metadata_str(&memory.metadata, PATH_KEY)
}

fn file_metadata(path: &str) -> mnemo_core::Metadata {
    [(PATH_KEY.to_owned(), serde_json::Value::from(path))].into()
}

/// A mistake of the call, or the gate's refusal, as an answer; anything else stays an error.
fn told(error: Error) -> Result<ToolAnswer> {
    match error {
        Error::InvalidInput(e) => Ok(ToolAnswer::error(format!("Error: {e}"))),
        Error::EditRefused { reason, .. } => {
            Ok(ToolAnswer::error(format!("Error: refused, {}", reason.explanation())))
        }
        Error::MemoryOff(_) => Ok(ToolAnswer::error(
            "Error: memory is switched off for this user: nothing was written",
        )),
        other => Err(other),
    }
}

impl Mnemo {
    /// The memory tool's files of `who`: active and pending records with a path, by path.
    fn tool_files(&self, who: &UserRef) -> Result<Vec<(String, Memory)>> {
        let filter = ListFilter { kind: Some(Kind::Episodic), ..Default::default() };
        let mut files: Vec<(String, Memory)> = self
            .list(who, &filter)?
            .into_iter()
            .filter(|m| matches!(m.status, Status::Active | Status::Pending))
            .filter_map(|m| Some((path_of(&m)?.to_owned(), m)))
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(files)
    }

    /// Runs one memory-tool call for `who`. A mistake of the call (a path outside
    /// `/memories`, a missing file, an ambiguous replacement, a line out of range) and a text
    /// the gate refuses are answers marked as errors, and change nothing; a store failure is
    /// an error.
    pub fn memory_tool(&self, who: &UserRef, command: &Command) -> Result<ToolAnswer> {
        match self.run_tool(who, command) {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(ToolError(message))) => Ok(ToolAnswer::error(message)),
            Err(error) => told(error),
        }
    }

    fn run_tool(
        &self,
        who: &UserRef,
        command: &Command,
    ) -> Result<std::result::Result<ToolAnswer, ToolError>> {
        let files = self.tool_files(who)?;
        let find = |path: &str| files.iter().find(|(p, _)| p == path).map(|(_, m)| m);
        let missing =
            |path: &str| Ok(Err(ToolError(format!("Error: The path {path} does not exist"))));
        Ok(Ok(match command {
            Command::View { path, view_range } => {
                let path = match check_path(path) {
                    Ok(path) => path,
                    Err(e) => return Ok(Err(e)),
                };
                if let Some(file) = find(&path) {
                    if file.status == Status::Pending {
                        return Ok(Err(ToolError(format!(
                            "Error: {path} is awaiting the user's confirmation and cannot be \
                             shown until then"
                        ))));
                    }
                    return Ok(render_file(&path, &file.content, *view_range).map(ToolAnswer::ok));
                }
                let listed: Vec<Listed> = files
                    .iter()
                    .filter(|(p, _)| within(p, &path))
                    .map(|(p, m)| Listed {
                        path: p.clone(),
                        bytes: m.content.len(),
                        pending: m.status == Status::Pending,
                    })
                    .collect();
                if listed.is_empty() && path != ROOT {
                    return missing(&path);
                }
                ToolAnswer::ok(render_directory(&path, &listed))
            }
            Command::Create { path, file_text } => {
                let path = match check_path(path) {
                    Ok(path) if path != ROOT => path,
                    Ok(_) => return Ok(Err(ToolError(format!("Error: {ROOT} is a directory")))),
                    Err(e) => return Ok(Err(e)),
                };
                if files.iter().any(|(p, _)| within(p, &path) && *p != path) {
                    return Ok(Err(ToolError(format!("Error: {path} is a directory"))));
                }
                if let Some(file) = find(&path) {
                    self.revise(who, &file.id, Some(file_text), None, SourceType::Inferred)?;
                    return Ok(Ok(ToolAnswer::ok(format!("File created successfully at: {path}"))));
                }
                self.create_file(who, &path, file_text)?
            }
            Command::StrReplace { path, old_str, new_str } => {
                let Some(file) = find(path.trim()) else { return missing(path) };
                let text = match replace_once(path, &file.content, old_str, new_str) {
                    Ok(text) => text,
                    Err(e) => return Ok(Err(e)),
                };
                self.revise(who, &file.id, Some(&text), None, SourceType::Inferred)?;
                ToolAnswer::ok(format!("The memory file {} has been edited.", path.trim()))
            }
            Command::Insert { path, insert_line, insert_text } => {
                let Some(file) = find(path.trim()) else { return missing(path) };
                let text = match insert_after(path, &file.content, *insert_line, insert_text) {
                    Ok(text) => text,
                    Err(e) => return Ok(Err(e)),
                };
                self.revise(who, &file.id, Some(&text), None, SourceType::Inferred)?;
                ToolAnswer::ok(format!("The memory file {} has been edited.", path.trim()))
            }
            Command::Delete { path } => {
                let path = match check_path(path) {
                    Ok(path) if path != ROOT => path,
                    Ok(_) => {
                        return Ok(Err(ToolError(format!(
                            "Error: the {ROOT} directory itself cannot be deleted"
                        ))));
                    }
                    Err(e) => return Ok(Err(e)),
                };
                let doomed: Vec<_> = files
                    .iter()
                    .filter(|(p, _)| within(p, &path))
                    .map(|(_, m)| m.id.clone())
                    .collect();
                if doomed.is_empty() {
                    return missing(&path);
                }
                // One deletion for the file or the whole directory: all of it goes, or none.
                self.forget_each(who, &doomed)?;
                ToolAnswer::ok(format!("Successfully deleted {path}"))
            }
            Command::Rename { old_path, new_path } => {
                let (old, new) = match (check_path(old_path), check_path(new_path)) {
                    (Ok(old), Ok(new)) if old != ROOT && new != ROOT => (old, new),
                    (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
                    _ => {
                        return Ok(Err(ToolError(format!("Error: {ROOT} itself cannot be moved"))));
                    }
                };
                let Some(file) = find(&old) else {
                    if files.iter().any(|(p, _)| within(p, &old)) {
                        return Ok(Err(ToolError(format!(
                            "Error: {old} is a directory: rename its files one by one"
                        ))));
                    }
                    return missing(&old);
                };
                if files.iter().any(|(p, _)| within(p, &new)) {
                    return Ok(Err(ToolError(format!(
                        "Error: The destination {new} already exists"
                    ))));
                }
                self.set_metadata(who, &file.id, file_metadata(&new))?;
                ToolAnswer::ok(format!("Successfully renamed {old} to {new}"))
            }
        }))
    }

    /// Writes a new file as a record of the model's inference.
    fn create_file(&self, who: &UserRef, path: &str, text: &str) -> Result<ToolAnswer> {
        let now = self.now();
        let fields = CandidateFields {
            kind: Some(Kind::Episodic),
            content: text.to_owned(),
            source: Some(Source {
                source_type: SourceType::Inferred,
                source_ref: Some(format!("memory-tool:{}", uuid::Uuid::now_v7().simple())),
                captured_at: now,
                extractor: Some(EXTRACTOR.to_owned()),
            }),
            metadata: file_metadata(path),
            ..Default::default()
        };
        let written = self.remember(who, fields)?;
        Ok(match written.outcome {
            Outcome::Added | Outcome::Updated => {
                ToolAnswer::ok(format!("File created successfully at: {path}"))
            }
            // Each file has a reference of its own, so no other record is its duplicate; if one
            // ever were, the file would not exist, and the answer must not say it does.
            Outcome::Skipped => ToolAnswer::error(format!(
                "Error: {path} was not written: the same note is already stored"
            )),
            Outcome::Pending => ToolAnswer::ok(format!(
                "File created at {path}; it awaits the user's confirmation ({}) and is not shown \
                 until then",
                written.reason.explanation()
            )),
            Outcome::Refused => {
                ToolAnswer::error(format!("Error: refused, {}", written.reason.explanation()))
            }
        })
    }
}
