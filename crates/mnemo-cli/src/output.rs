//! The one place the CLI writes to stdout and stderr: human-readable text by default, JSON
//! with `--json`.

use std::io::Write;

use mnemo::core::Memory;
use mnemo::core::ledger::{DeletionReceipt, DeletionScope};
use mnemo::core::ports::{AuditEntry, History};
use mnemo::core::run::Run;
use serde::Serialize;

/// Whoever read stdout stopped reading (`mnemo list | head`): not a failure of the command,
/// which ends quietly with success.
#[derive(Debug)]
pub(crate) struct StdoutClosed;

impl std::fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed")
    }
}

impl std::error::Error for StdoutClosed {}

/// A write to stdout's result, a closed pipe told apart from other failures.
fn written(result: std::io::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        other => Ok(other?),
    }
}

/// Prints a JSON value on one line of stdout.
pub(crate) fn json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string(value)?;
    text.push('\n');
    written(std::io::stdout().lock().write_all(text.as_bytes()))
}

/// Prints pretty JSON (for documents meant to be saved, like exports).
pub(crate) fn json_pretty<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    written(std::io::stdout().lock().write_all(text.as_bytes()))
}

/// Text made safe for a terminal: control characters (an escape sequence, a carriage return,
/// a bell) and bidirectional overrides a stored memory might hold are shown as `\u{…}`
/// escapes; line breaks and tabs stay.
pub(crate) fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if (c.is_control() && c != '\n' && c != '\t') || bidi {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Prints lines of text, made [`printable`].
pub(crate) fn lines<I: IntoIterator<Item = String>>(lines: I) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    for line in lines {
        written(writeln!(out, "{}", printable(&line)))?;
    }
    written(out.flush())
}

/// Prints a one-line notice to stderr (stdout stays for results).
pub(crate) fn notice(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", printable(message));
}

/// Prints a one-line error to stderr.
pub(crate) fn error(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "error: {}", printable(message));
}

/// One line per memory for listings.
pub(crate) fn memory_line(m: &Memory) -> String {
    let key = m.key().map(|(s, a)| format!(" {s}.{a}")).unwrap_or_default();
    let expiry = m.expires_at.map(|t| format!(" (expires {t})")).unwrap_or_default();
    format!(
        "{}  [{} {}{}{}]  {}{}",
        m.id,
        m.kind,
        m.status,
        key,
        shared_label(m),
        m.content,
        expiry
    )
}

/// `; space eng, by alice` for a shared space's record (empty for a private one).
fn shared_label(m: &Memory) -> String {
    match (&m.scope, &m.shared) {
        (mnemo::core::Scope::Space(id), Some(shared)) => {
            let mandatory = if shared.mandatory { ", mandatory" } else { "" };
            format!("; space {id}, by {}{mandatory}", shared.author)
        }
        (mnemo::core::Scope::Space(id), None) => format!("; space {id}"),
        _ => String::new(),
    }
}

/// One line per search result, with its score and, with `--explain`, how it was made.
pub(crate) fn search_line(r: &mnemo_api::SearchResult) -> String {
    let mut line = format!(
        "{:.3}  {}  [{}{}]  {}",
        r.score,
        r.memory.id,
        r.memory.kind,
        shared_label(&r.memory),
        r.memory.content
    );
    if let Some(e) = &r.explain {
        line.push_str(&format!(
            "\n       evidence {:.3} (bm25 {:.3}, cosine {:.3}); fused {:.3} -> relevance {:.3} -> {:.3}; recency {:.3} -> {:.3}; importance {:.2} -> {:.3}",
            e.evidence,
            e.bm25,
            e.cosine,
            e.fused,
            r.relevance,
            e.relevance_term,
            r.recency,
            e.recency_term,
            r.memory.importance,
            e.importance_term
        ));
    }
    line
}

/// Every field of a memory, one per line.
pub(crate) fn memory_detail(m: &Memory) -> Vec<String> {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
    let mut lines = vec![
        format!("id:            {}", m.id),
        format!("content:       {}", m.content),
        format!("kind:          {}", m.kind),
        format!("status:        {}", m.status),
        format!("scope:         {}", m.scope),
        format!("key:           {}", opt(m.key().map(|(s, a)| format!("{s}.{a}")))),
        format!("importance:    {}", m.importance),
        format!("confidence:    {}", m.confidence),
        format!("sensitivity:   {}", m.sensitivity),
        format!(
            "source:        {}{} (captured {})",
            m.source.source_type,
            m.source.source_ref.as_ref().map(|r| format!(" ref {r}")).unwrap_or_default(),
            m.source.captured_at
        ),
        format!("created_at:    {}", m.created_at),
        format!("updated_at:    {}", m.updated_at),
        format!("last_used_at:  {}", opt(m.last_used_at.map(|t| t.to_string()))),
        format!("valid_from:    {}", m.valid_from),
        format!("expires_at:    {}", opt(m.expires_at.map(|t| t.to_string()))),
        format!("review_after:  {}", opt(m.review_after.map(|t| t.to_string()))),
        format!("superseded_by: {}", opt(m.superseded_by.as_ref().map(ToString::to_string))),
        format!("version:       {}", m.version),
        format!(
            "embedding:     {}",
            opt(m.embedding.as_ref().map(|e| format!("{} ({} dims)", e.model, e.dims)))
        ),
    ];
    if let Some(shared) = &m.shared {
        lines.push(format!("author:        {}", shared.author));
        lines.push(format!(
            "approved:      {}",
            opt(shared.approval.as_ref().map(|a| format!("by {} at {} via {}", a.by, a.at, a.via)))
        ));
        lines.push(format!("mandatory:     {}", shared.mandatory));
    }
    lines
}

/// A history as text.
pub(crate) fn history_lines(h: &History) -> Vec<String> {
    // "current" only for a record that is still the one in force.
    let state = match (&h.memory.status, &h.memory.superseded_by) {
        (_, Some(by)) => format!("superseded by {by}"),
        (mnemo::core::Status::Active, None) => "current".to_owned(),
        (status, None) => status.as_str().to_owned(),
    };
    let mut out = vec![format!(
        "v{} ({state})  {}  {}",
        h.memory.version, h.memory.updated_at, h.memory.content
    )];
    for v in h.versions.iter().rev() {
        out.push(format!("v{}  {}  {}", v.version, v.updated_at, v.content));
    }
    for m in &h.superseded {
        out.push(format!("superseded {}  {}  {}", m.id, m.updated_at, m.content));
    }
    out
}

/// An audit entry as text.
pub(crate) fn audit_line(e: &AuditEntry) -> String {
    let subject = match (&e.memory_id, &e.run_id) {
        (Some(id), _) => id.to_string(),
        (None, Some(run)) => format!("run {run}"),
        (None, None) => "-".to_owned(),
    };
    format!(
        "{}  {}  {}  {}  by {}",
        e.at,
        e.action,
        subject,
        e.reason.map_or("-", |r| r.as_str()),
        e.actor
    )
}

/// A deletion receipt's first line: id, when, what and who.
pub(crate) fn receipt_heading(r: &DeletionReceipt) -> String {
    let what = match (&r.scope, &r.memory_id) {
        (DeletionScope::User, _) => "every memory of the user".to_owned(),
        (DeletionScope::Space, _) => "every memory of the shared space".to_owned(),
        (DeletionScope::Rejected, Some(id)) => format!("pending memory {id}, rejected"),
        (_, Some(id)) => format!("memory {id}"),
        (_, None) => "-".to_owned(),
    };
    format!("{}  {}  {}  by {}", r.id, r.at, what, r.actor)
}

/// What a deletion removed and what remains, in plain words.
pub(crate) fn receipt_lines(r: &DeletionReceipt) -> Vec<String> {
    let n = &r.removed;
    let mut lines = vec![format!(
        "  removed {} records ({} older values, {} derived), {} versions, {} vectors, {} \
         index entries, {} links, {} runs",
        n.records, n.superseded, n.derived, n.versions, n.vectors, n.index_entries, n.links, n.runs
    )];
    lines.push(format!(
        "  {} tombstones (no text) keep it from being written again by a retry, replay or import",
        r.tombstones
    ));
    for remnant in &r.remains {
        let until = remnant.until.map_or_else(|| "no fixed date".to_owned(), |t| t.to_string());
        lines.push(format!("  remains in {}: until {until}: {}", remnant.place, remnant.detail));
    }
    lines
}

/// One line per run: id, progress and goal.
pub(crate) fn run_line(run: &Run) -> String {
    let done = run.steps.iter().filter(|s| s.status == mnemo::core::run::StepStatus::Done).count();
    format!("{}  {}/{} steps done  {}", run.id, done, run.steps.len(), run.goal)
}

/// A run in full: goal, plan, evidence and tool-result references.
pub(crate) fn run_detail(run: &Run) -> Vec<String> {
    let mut lines = vec![
        format!("run {}  started {}  updated {}", run.id, run.started_at, run.updated_at),
        format!("goal: {}", run.goal),
        "steps:".to_owned(),
    ];
    lines.extend(
        run.steps.iter().map(|s| format!("  {}. [{}] {}", s.number, s.status.as_str(), s.text)),
    );
    lines.push("evidence:".to_owned());
    lines.extend(run.evidence.iter().map(|e| {
        let excerpt = e.excerpt.split_whitespace().collect::<Vec<_>>().join(" ");
        format!("  - {} ({}): {excerpt}", e.source_id, e.retrieved_at)
    }));
    lines.push("tool results:".to_owned());
    lines.extend(
        run.tool_results.iter().map(|t| format!("  - {} {}: {}", t.tool, t.reference, t.note)),
    );
    lines
}
