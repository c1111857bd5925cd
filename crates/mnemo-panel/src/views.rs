//! What the pages show, in plain words: a memory as a person reads it (where it came from,
//! whether it lasts, who can see it), audit entries as sentences, deletion receipts as what
//! went and what remains, and the weekly timeline as an SVG drawing.

use std::collections::{BTreeMap, HashMap};

use mnemo::core::ledger::DeletionReceipt;
use mnemo::core::policy::ReasonCode;
use mnemo::core::ports::{AuditAction, AuditEntry};
use mnemo::core::space::Role;
use mnemo::core::{Kind, Memory, Scope, SourceType, Status, Timestamp};

/// A day as a person reads it (`2026-03-01`).
pub(crate) fn day(at: Timestamp) -> String {
    let text = at.to_string();
    text.get(..10).unwrap_or(&text).to_owned()
}

/// A memory as the panel shows it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) id: String,
    pub(crate) text: String,
    pub(crate) kind: String,
    pub(crate) status: String,
    /// Where it came from, in plain words, with its conversation and date.
    pub(crate) origin: String,
    /// Whether it lasts: "Persistent", or until when it is kept.
    pub(crate) lasting: String,
    /// When it should be re-confirmed, if it should.
    pub(crate) review: Option<String>,
    /// Who can see it.
    pub(crate) visible_to: String,
    /// Why it waits for confirmation, for a pending one.
    pub(crate) held: Option<String>,
    pub(crate) pending: bool,
}

/// The source of a memory in plain words.
fn source_words(source: SourceType) -> &'static str {
    match source {
        SourceType::UserStated => "Said by you",
        SourceType::UserAction => "Something you did",
        SourceType::Inferred => "Inferred from what you said",
        SourceType::Tool => "From a tool",
        SourceType::Document => "From a document",
        SourceType::Web => "From a web page",
        SourceType::System => "Set by the system",
    }
}

/// Who can see a memory: only its user, or a space's members.
pub(crate) fn visibility(memory: &Memory, spaces: &HashMap<String, (Role, usize)>) -> String {
    match &memory.scope {
        Scope::Space(id) => match spaces.get(id) {
            Some((_, members)) => format!("The {members} members of space {id}"),
            None => format!("Members of space {id}"),
        },
        _ => "Only you".to_owned(),
    }
}

impl Entry {
    /// The panel's view of `memory`; `held` is why a pending one waits.
    pub(crate) fn of(
        memory: &Memory,
        held: Option<ReasonCode>,
        spaces: &HashMap<String, (Role, usize)>,
    ) -> Self {
        let mut origin = source_words(memory.source.source_type).to_owned();
        if let Some(session) = &memory.session_id {
            origin.push_str(&format!(" in conversation {session}"));
        }
        origin.push_str(&format!(", {}", day(memory.valid_from)));
        if let Some(shared) = &memory.shared {
            origin.push_str(&format!("; written by {}", shared.author));
            if let Some(approval) = &shared.approval {
                origin.push_str(&format!(", approved by {} on {}", approval.by, day(approval.at)));
            }
        }
        let lasting = match (memory.transcript, memory.expires_at) {
            (true, Some(at)) => format!("Session-only: a conversation turn kept until {}", day(at)),
            (_, Some(at)) => format!("Until {}", day(at)),
            (_, None) => "Persistent".to_owned(),
        };
        Self {
            id: memory.id.0.clone(),
            text: memory.content.clone(),
            kind: memory.kind.to_string(),
            status: memory.status.to_string(),
            origin,
            lasting,
            review: memory.review_after.map(day),
            visible_to: visibility(memory, spaces),
            held: held.map(|r| r.explanation().to_owned()),
            pending: memory.status == Status::Pending,
        }
    }
}

/// Most entries a group shows; the rest are counted, and found by search or filters.
pub(crate) const GROUP_LIMIT: usize = 200;

/// One group of the notebook as a person thinks of it.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) title: &'static str,
    pub(crate) hint: &'static str,
    /// How many entries the group has in all.
    pub(crate) total: usize,
    /// The newest of them, at most [`GROUP_LIMIT`].
    pub(crate) entries: Vec<Entry>,
}

/// The notebook's groups: the always-on profile, facts and preferences, how-I-like-things-done,
/// events and summaries, and conversation turns kept for a while.
pub(crate) fn groups(active: Vec<Entry>, memories: &[Memory]) -> Vec<Group> {
    let kind_of: HashMap<&str, (Kind, bool)> =
        memories.iter().map(|m| (m.id.0.as_str(), (m.kind, m.transcript))).collect();
    let mut groups = vec![
        Group {
            title: "Always on: your profile",
            hint: "Shown to the assistant in every conversation.",
            total: 0,
            entries: Vec::new(),
        },
        Group {
            title: "Facts and preferences",
            hint: "Found when they are relevant to what you ask.",
            total: 0,
            entries: Vec::new(),
        },
        Group {
            title: "How you like things done",
            hint: "Standing instructions the assistant follows.",
            total: 0,
            entries: Vec::new(),
        },
        Group {
            title: "Events and conversation summaries",
            hint: "What happened, and what earlier conversations were about.",
            total: 0,
            entries: Vec::new(),
        },
        Group {
            title: "Conversation turns",
            hint: "What was said, kept for a while and then deleted by itself.",
            total: 0,
            entries: Vec::new(),
        },
    ];
    for entry in active {
        let at = match kind_of.get(entry.id.as_str()) {
            Some((_, true)) => 4,
            Some((Kind::Profile, _)) => 0,
            Some((Kind::Procedural, _)) => 2,
            Some((Kind::Episodic, _)) => 3,
            _ => 1,
        };
        groups[at].total += 1;
        if groups[at].entries.len() < GROUP_LIMIT {
            groups[at].entries.push(entry);
        }
    }
    groups
}

/// An audit entry as a sentence; `texts` holds what still-stored memories say.
pub(crate) fn activity_line(entry: &AuditEntry, texts: &HashMap<String, String>) -> String {
    let what = entry
        .memory_id
        .as_ref()
        .and_then(|id| texts.get(&id.0))
        .map(|text| format!("\u{201c}{text}\u{201d}"))
        .unwrap_or_else(|| "a memory".to_owned());
    // The reason says why something was held, refused or skipped (for a plain write it only
    // repeats that it was new).
    let why = match entry.action {
        AuditAction::Pending
        | AuditAction::Refused
        | AuditAction::Skipped
        | AuditAction::Edited => {
            entry.reason.map(|r| format!(" because {}", r.explanation())).unwrap_or_default()
        }
        _ => String::new(),
    };
    let via = match entry.actor.as_str() {
        "cli" => "from the command line".to_owned(),
        "mcp" => "through an assistant (MCP)".to_owned(),
        "panel" => "in this panel".to_owned(),
        other if other.starts_with("http:") => format!("through the API ({other})"),
        other => format!("by {other}"),
    };
    let sentence = match entry.action {
        AuditAction::Added => format!("Remembered {what}"),
        AuditAction::Updated => format!("Remembered {what} as a new value"),
        AuditAction::Superseded => format!("Replaced {what} with a newer value"),
        AuditAction::Skipped => "Did not write a statement again (already remembered)".to_owned(),
        AuditAction::Pending => format!("Held {what} for your confirmation"),
        AuditAction::Refused => "Refused to remember a statement".to_owned(),
        AuditAction::Confirmed => format!("Confirmed {what}"),
        AuditAction::Rejected => "Rejected a memory waiting for confirmation".to_owned(),
        AuditAction::Edited => format!("Edited {what}"),
        AuditAction::Forgotten => "Forgot a memory completely".to_owned(),
        AuditAction::Expired => "Deleted an expired memory".to_owned(),
        AuditAction::Imported => format!("Imported {what}"),
        AuditAction::SettingsChanged => "Changed your memory settings".to_owned(),
        AuditAction::RunStarted => "Started a task's working memory".to_owned(),
        AuditAction::RunEnded => "Ended a task and deleted its working memory".to_owned(),
    };
    format!("{}: {sentence}{why}, {via}.", day(entry.at))
}

/// A deletion receipt in plain words.
#[derive(Debug, Clone)]
pub(crate) struct Receipt {
    pub(crate) id: String,
    pub(crate) when: String,
    pub(crate) removed: Vec<String>,
    pub(crate) remains: Vec<String>,
}

impl Receipt {
    pub(crate) fn of(receipt: &DeletionReceipt) -> Self {
        let r = &receipt.removed;
        let counted =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut removed = vec![counted(
            r.records,
            "memory or conversation turn",
            "memories and conversation turns",
        )];
        for (count, one, many) in [
            (r.superseded, "older value it had replaced", "older values they had replaced"),
            (r.derived, "summary or fact drawn from it", "summaries and facts drawn from them"),
            (r.versions, "earlier version", "earlier versions"),
            (r.vectors, "search vector", "search vectors"),
            (r.runs, "task working memory", "task working memories"),
        ] {
            if count > 0 {
                removed.push(counted(count, one, many));
            }
        }
        removed.push(format!(
            "{} kept, so nothing brings it back by accident (no content is in it)",
            counted(receipt.tombstones, "tombstone", "tombstones")
        ));
        let remains = receipt
            .remains
            .iter()
            .map(|remnant| match remnant.until {
                Some(until) => {
                    format!("{} (until {}): {}", remnant.place, day(until), remnant.detail)
                }
                None => format!("{}: {}", remnant.place, remnant.detail),
            })
            .collect();
        Self { id: receipt.id.clone(), when: day(receipt.at), removed, remains }
    }
}

/// Monday of the week `at` falls in, as days since the epoch.
fn week_of(at: Timestamp) -> i64 {
    let days = at.as_millis().div_euclid(86_400_000);
    // 1970-01-01 was a Thursday: Monday is three days before it.
    days - (days + 3).rem_euclid(7)
}

/// The weekly timeline of what was remembered (by kind, from the stored memories) and
/// forgotten (from the audit trail) over the last `weeks` weeks, as an SVG drawing with a
/// text alternative.
pub(crate) fn timeline(
    memories: &[Memory],
    audit: &[AuditEntry],
    now: Timestamp,
    weeks: i64,
) -> String {
    let last = week_of(now);
    let first = last - 7 * (weeks - 1);
    let kinds = [Kind::Profile, Kind::Semantic, Kind::Procedural, Kind::Episodic];
    let colours = ["#1b5e20", "#1565c0", "#6a1b9a", "#e65100"];
    let mut remembered: BTreeMap<i64, [u32; 4]> = BTreeMap::new();
    for m in memories.iter().filter(|m| !m.transcript) {
        let week = week_of(m.created_at);
        if week < first {
            continue;
        }
        if let Some(at) = kinds.iter().position(|k| *k == m.kind) {
            remembered.entry(week).or_default()[at] += 1;
        }
    }
    let mut forgotten: BTreeMap<i64, u32> = BTreeMap::new();
    for e in audit.iter().filter(|e| {
        matches!(e.action, AuditAction::Forgotten | AuditAction::Expired | AuditAction::Rejected)
    }) {
        let week = week_of(e.at);
        if week >= first {
            *forgotten.entry(week).or_default() += 1;
        }
    }
    let top = (0..weeks)
        .map(|w| {
            let week = first + 7 * w;
            let kept: u32 = remembered.get(&week).map_or(0, |c| c.iter().sum());
            kept.max(forgotten.get(&week).copied().unwrap_or(0))
        })
        .max()
        .unwrap_or(0)
        .max(1);
    let (width, height, bar) = (40 * weeks + 40, 160, 14);
    let scale = |n: u32| f64::from(n) * 120.0 / f64::from(top);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" aria-labelledby=\"timeline-title\"><title id=\"timeline-title\">Memories remembered and forgotten per week, last {weeks} weeks</title>"
    );
    let mut summary = Vec::new();
    for w in 0..weeks {
        let week = first + 7 * w;
        let x = 30 + 40 * w;
        let mut y = 140.0;
        let counts = remembered.get(&week).copied().unwrap_or_default();
        for (at, count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            let h = scale(*count);
            y -= h;
            svg.push_str(&format!(
                "<rect x=\"{x}\" y=\"{y:.1}\" width=\"{bar}\" height=\"{h:.1}\" fill=\"{}\"><title>{count} {} remembered</title></rect>",
                colours[at], kinds[at]
            ));
        }
        let gone = forgotten.get(&week).copied().unwrap_or(0);
        if gone > 0 {
            let h = scale(gone);
            svg.push_str(&format!(
                "<rect x=\"{}\" y=\"{:.1}\" width=\"{bar}\" height=\"{h:.1}\" fill=\"#b71c1c\"><title>{gone} forgotten</title></rect>",
                x + bar + 2,
                140.0 - h
            ));
        }
        let date = day(Timestamp::from_millis(week * 86_400_000));
        svg.push_str(&format!(
            "<text x=\"{x}\" y=\"155\" font-size=\"9\" fill=\"#222\">{}</text>",
            date.get(5..).unwrap_or(&date)
        ));
        let kept: u32 = counts.iter().sum();
        if kept > 0 || gone > 0 {
            summary.push(format!("week of {date}: {kept} remembered, {gone} forgotten"));
        }
    }
    svg.push_str("<line x1=\"25\" y1=\"140\" x2=\"");
    svg.push_str(&format!("{}\" y2=\"140\" stroke=\"#222\"/></svg>", width - 5));
    if summary.is_empty() {
        summary.push("nothing remembered or forgotten in these weeks".to_owned());
    }
    format!("{svg}<p class=\"legend\">{}</p>", summary.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_shows_its_newest_entries_and_counts_the_rest() {
        let now = Timestamp::parse("2026-03-04T12:00:00Z", "t").unwrap();
        let memories: Vec<Memory> = (0..GROUP_LIMIT + 50)
            .map(|i| {
                let fields = mnemo::core::lifecycle::CandidateFields {
                    content: format!("Fact number {i}"),
                    ..Default::default()
                };
                mnemo::core::lifecycle::Candidate::validate(fields, now).unwrap().into_memory(
                    mnemo::core::MemoryId(format!("m{i}")),
                    "t",
                    "u",
                    Status::Active,
                    now,
                )
            })
            .collect();
        let entries = memories.iter().map(|m| Entry::of(m, None, &HashMap::new())).collect();
        let facts = &groups(entries, &memories)[1];
        assert_eq!((facts.total, facts.entries.len()), (GROUP_LIMIT + 50, GROUP_LIMIT));
        assert_eq!(facts.entries[0].visible_to, "Only you");
        assert_eq!(facts.entries[0].lasting, "Persistent");
    }

    #[test]
    fn weeks_start_on_monday() {
        // 2026-03-04 was a Wednesday; its week starts on Monday 2026-03-02.
        let wednesday = Timestamp::parse("2026-03-04T12:00:00Z", "t").unwrap();
        let monday = Timestamp::parse("2026-03-02T00:00:00Z", "t").unwrap();
        assert_eq!(week_of(wednesday), monday.as_millis() / 86_400_000);
        assert_eq!(week_of(monday), monday.as_millis() / 86_400_000);
    }

    #[test]
    fn activity_reads_as_a_sentence_without_content_it_does_not_have() {
        let entry = AuditEntry {
            at: Timestamp::parse("2026-03-04T12:00:00Z", "t").unwrap(),
            action: AuditAction::Pending,
            memory_id: Some(mnemo::core::MemoryId("m1".into())),
            reason: Some(ReasonCode::InstructionLike),
            actor: "cli".into(),
            run_id: None,
        };
        let texts = HashMap::from([("m1".to_owned(), "Always answer in French".to_owned())]);
        let line = activity_line(&entry, &texts);
        assert!(
            line.starts_with("2026-03-04: Held \u{201c}Always answer in French\u{201d}"),
            "{line}"
        );
        assert!(line.contains("because it reads like an instruction"), "{line}");
        assert!(activity_line(&entry, &HashMap::new()).contains("Held a memory"));
    }
}
