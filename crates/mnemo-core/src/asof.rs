//! As-of reads: what mnemo held true about a user at a past time.
//!
//! Worked out from what the store keeps anyway: each record's creation, validity and expiry,
//! its earlier versions (an edit keeps the old text with the time it was replaced), the record
//! that superseded it, and the audit trail's times of confirmations and supersessions. A
//! record counts at time `t` when it had been created and confirmed by `t`, was valid and not
//! yet expired at `t`, and had not yet been superseded; it is shown with the text it had at
//! `t`. A record deleted on purpose is gone from the store, so it never comes back here.

use std::collections::HashMap;

use crate::clock::Timestamp;
use crate::ports::{AuditAction, AuditEntry, ExportedMemory};
use crate::record::{Memory, MemoryId, MemoryVersion, Status};

/// When records changed state, from the audit trail.
#[derive(Debug, Clone, Default)]
pub struct Transitions {
    /// When a pending record was confirmed (it became active).
    confirmed: HashMap<MemoryId, Timestamp>,
    /// When a record was superseded.
    superseded: HashMap<MemoryId, Timestamp>,
}

impl Transitions {
    /// Reads confirmations and supersessions from audit entries (in any order).
    pub fn from_audit(entries: &[AuditEntry]) -> Self {
        let mut transitions = Self::default();
        for entry in entries {
            let Some(id) = &entry.memory_id else { continue };
            let map = match entry.action {
                AuditAction::Confirmed => &mut transitions.confirmed,
                AuditAction::Superseded => &mut transitions.superseded,
                _ => continue,
            };
            // The earliest, should an entry repeat.
            let at = map.entry(id.clone()).or_insert(entry.at);
            *at = (*at).min(entry.at);
        }
        transitions
    }
}

/// A record as it stood at a past time.
#[derive(Debug, Clone, PartialEq)]
pub struct Stood {
    /// The record with its text and fields at that time; status `active` when it held, else
    /// what it was then (`pending`, `superseded`).
    pub memory: Memory,
    /// Whether it held true then: confirmed, valid, unexpired and not yet superseded.
    pub held: bool,
}

/// Every record that existed at `at` (created by then and not deleted since), as it stood
/// then, in the order given.
pub fn stood_at(
    records: Vec<ExportedMemory>,
    transitions: &Transitions,
    at: Timestamp,
) -> Vec<Stood> {
    // When each record became active: confirmed, or created active.
    let activated = |m: &Memory| transitions.confirmed.get(&m.id).copied().unwrap_or(m.created_at);
    let activation: HashMap<MemoryId, Timestamp> =
        records.iter().map(|r| (r.memory.id.clone(), activated(&r.memory))).collect();
    records
        .into_iter()
        .filter(|r| r.memory.created_at <= at)
        .map(|ExportedMemory { memory, history }| {
            let status = match memory.status {
                Status::Active if activated(&memory) > at => Status::Pending,
                Status::Active => Status::Active,
                Status::Superseded => {
                    // Ended when the audit says, else when what replaced it became active.
                    let ended = transitions.superseded.get(&memory.id).copied().or_else(|| {
                        memory.superseded_by.as_ref().and_then(|by| activation.get(by).copied())
                    });
                    if ended.is_none_or(|ended| ended <= at) {
                        Status::Superseded
                    } else if activated(&memory) > at {
                        Status::Pending
                    } else {
                        Status::Active
                    }
                }
                other => other,
            };
            let held =
                status == Status::Active && memory.valid_from <= at && !memory.is_expired(at);
            Stood { memory: as_it_stood(memory, &history, at, status), held }
        })
        .collect()
}

/// The records that held at `at`, each as it stood then (its text and fields at that time,
/// status `active`, no later supersession or use), in the order given.
pub fn held_at(
    records: Vec<ExportedMemory>,
    transitions: &Transitions,
    at: Timestamp,
) -> Vec<Memory> {
    stood_at(records, transitions, at).into_iter().filter(|s| s.held).map(|s| s.memory).collect()
}

/// The record with the text and fields of its version current at `at`.
fn as_it_stood(
    mut memory: Memory,
    history: &[MemoryVersion],
    at: Timestamp,
    status: Status,
) -> Memory {
    let mut updated = memory.created_at;
    if let Some(version) = history.iter().find(|v| v.replaced_at > at) {
        memory.content.clone_from(&version.content);
        memory.importance = version.importance;
        memory.confidence = version.confidence;
        memory.version = version.version;
        updated = version.updated_at.max(memory.created_at);
    } else if let Some(last) = history.last() {
        updated = last.replaced_at;
    }
    if status != Status::Superseded {
        memory.superseded_by = None;
    }
    memory.status = status;
    memory.updated_at = updated;
    memory.last_used_at = memory.last_used_at.filter(|used| *used <= at);
    memory
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::{Candidate, CandidateFields};

    const HOUR: i64 = 3_600_000;

    fn t(hours: i64) -> Timestamp {
        Timestamp::from_millis(1_800_000_000_000 + hours * HOUR)
    }

    fn record(id: &str, content: &str, created: i64, status: Status) -> Memory {
        let fields = CandidateFields { content: content.into(), ..Default::default() };
        Candidate::validate(fields, t(created)).unwrap().into_memory(
            MemoryId(id.into()),
            "t",
            "u",
            status,
            t(created),
        )
    }

    fn audit(action: AuditAction, id: &str, at: i64) -> AuditEntry {
        AuditEntry {
            at: t(at),
            action,
            memory_id: Some(MemoryId(id.into())),
            reason: None,
            actor: "test".into(),
            run_id: None,
        }
    }

    fn ids(records: &[Memory]) -> Vec<&str> {
        records.iter().map(|m| m.id.0.as_str()).collect()
    }

    #[test]
    fn a_supersession_chain_reads_as_it_stood() {
        // Austin (0h) → Denver (10h) → Lisbon (20h), keyed or not.
        let mut austin = record("austin", "I live in Austin", 0, Status::Superseded);
        austin.superseded_by = Some(MemoryId("denver".into()));
        let mut denver = record("denver", "I live in Denver", 10, Status::Superseded);
        denver.superseded_by = Some(MemoryId("lisbon".into()));
        let lisbon = record("lisbon", "I live in Lisbon", 20, Status::Active);
        let all = [austin, denver, lisbon];
        let exported = || {
            all.iter()
                .map(|m| ExportedMemory { memory: m.clone(), history: vec![] })
                .collect::<Vec<_>>()
        };
        let trail = Transitions::from_audit(&[
            audit(AuditAction::Superseded, "austin", 10),
            audit(AuditAction::Superseded, "denver", 20),
        ]);
        for (hour, expected) in [
            (-1, vec![]),
            (0, vec!["austin"]),
            (9, vec!["austin"]),
            (10, vec!["denver"]),
            (25, vec!["lisbon"]),
        ] {
            let held = held_at(exported(), &trail, t(hour));
            assert_eq!(ids(&held), expected, "at {hour}h");
            assert!(held.iter().all(|m| m.status == Status::Active && m.superseded_by.is_none()));
        }
        // Without an audit trail (an imported notebook), what replaced a record dates its end.
        let held = held_at(exported(), &Transitions::default(), t(15));
        assert_eq!(ids(&held), ["denver"]);
    }

    #[test]
    fn edits_expiry_and_confirmation_are_read_at_their_times() {
        let mut edited = record("e", "Prefers window seats", 0, Status::Active);
        edited.version = 2;
        let history = vec![MemoryVersion {
            version: 1,
            content: "Prefers aisle seats".into(),
            status: Status::Active,
            importance: 0.5,
            confidence: 1.0,
            updated_at: t(0),
            replaced_at: t(5),
        }];
        let mut lapsing = record("x", "In Porto until Friday", 0, Status::Active);
        lapsing.expires_at = Some(t(8));
        let confirmed = record("c", "Always cc my manager", 0, Status::Active);
        let pending = record("p", "Forward invoices to x", 0, Status::Pending);
        let exported = vec![
            ExportedMemory { memory: edited, history },
            ExportedMemory { memory: lapsing, history: vec![] },
            ExportedMemory { memory: confirmed, history: vec![] },
            ExportedMemory { memory: pending, history: vec![] },
        ];
        let trail = Transitions::from_audit(&[audit(AuditAction::Confirmed, "c", 6)]);
        let at = |hour| held_at(exported.clone(), &trail, t(hour));
        let early = at(2);
        assert_eq!(ids(&early), ["e", "x"]);
        assert_eq!((early[0].content.as_str(), early[0].version), ("Prefers aisle seats", 1));
        let later = at(7);
        assert_eq!(ids(&later), ["e", "x", "c"]);
        assert_eq!(later[0].content, "Prefers window seats");
        assert_eq!(ids(&at(9)), ["e", "c"]);
    }
}
