//! The one place the CLI writes to stdout and stderr: human-readable text by default, JSON
//! with `--json`.

use std::io::Write;

use mnemo::core::Memory;
use mnemo::core::ports::{AuditEntry, History};
use serde::Serialize;

/// Prints a JSON value on one line of stdout.
pub(crate) fn json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Prints pretty JSON (for documents meant to be saved, like exports).
pub(crate) fn json_pretty<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Prints lines of text.
pub(crate) fn lines<I: IntoIterator<Item = String>>(lines: I) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Prints a one-line notice to stderr (stdout stays for results).
pub(crate) fn notice(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}

/// Prints a one-line error to stderr.
pub(crate) fn error(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "error: {message}");
}

/// One line per memory for listings.
pub(crate) fn memory_line(m: &Memory) -> String {
    let key = m.key().map(|(s, a)| format!(" {s}.{a}")).unwrap_or_default();
    let expiry = m.expires_at.map(|t| format!(" (expires {t})")).unwrap_or_default();
    format!("{}  [{} {}{}]  {}{}", m.id, m.kind, m.status, key, m.content, expiry)
}

/// One line per search result, with its score and, with `--explain`, how it was made.
pub(crate) fn search_line(r: &mnemo_api::SearchResult) -> String {
    let mut line =
        format!("{:.3}  {}  [{}]  {}", r.score, r.memory.id, r.memory.kind, r.memory.content);
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
    vec![
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
    ]
}

/// A history as text.
pub(crate) fn history_lines(h: &History) -> Vec<String> {
    let mut out = vec![format!(
        "v{} (current)  {}  {}",
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
    format!(
        "{}  {}  {}  {}  by {}",
        e.at,
        e.action,
        e.memory_id.as_ref().map_or("-".to_owned(), ToString::to_string),
        e.reason.map_or("-", |r| r.as_str()),
        e.actor
    )
}
