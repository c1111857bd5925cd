//! Conversation ingestion (SPEC §3): raw turns are kept as session-scoped episodic records
//! with provenance and a retention TTL, secrets redacted first; the rule-based extractor
//! proposes memories from what the user said, and each goes through the policy gate and the
//! consistency rules. The whole ingestion is one transaction.

use std::collections::BTreeMap;

use mnemo_core::duration::Ttl;
use mnemo_core::error::InvalidInput;
use mnemo_core::extract::{RULESET, extract};
use mnemo_core::lifecycle::{CandidateFields, Outcome, Remembered};
use mnemo_core::policy::ReasonCode;
use mnemo_core::scope::validate_key;
use mnemo_core::screen::redact;
use mnemo_core::transcript::{Message, Role};
use mnemo_core::{Kind, Source, UserRef};

use crate::{Mnemo, Result};

/// How to ingest a conversation.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// The session the messages belong to.
    pub session: String,
    /// An incognito session neither reads nor writes memory.
    pub incognito: bool,
    /// How long raw turns are kept.
    pub retention: Ttl,
}

/// One memory the extractor proposed and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedMemory {
    /// Index of the message it came from.
    pub message: usize,
    /// The proposed statement.
    pub content: String,
    /// The write's outcome.
    pub result: Remembered,
}

/// What an ingestion did.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestReport {
    /// Raw turns stored.
    pub turns_stored: usize,
    /// Secrets replaced by `[redacted]` before anything was stored.
    pub secrets_redacted: usize,
    /// Memories proposed by the extractor, with their outcomes.
    pub proposed: Vec<ProposedMemory>,
    /// Why nothing was read or written, if so (`incognito`, `memory_disabled`).
    pub skipped: Option<ReasonCode>,
}

impl Mnemo {
    /// Ingests conversation messages for `who` (see the module documentation).
    pub fn ingest(
        &self,
        who: &UserRef,
        messages: &[Message],
        options: &IngestOptions,
    ) -> Result<IngestReport> {
        let session = validate_key(&options.session, "session")?;
        let empty = |reason| IngestReport {
            turns_stored: 0,
            secrets_redacted: 0,
            proposed: vec![],
            skipped: Some(reason),
        };
        if options.incognito {
            return Ok(empty(ReasonCode::Incognito));
        }
        if !self.settings(who)?.memory_enabled {
            return Ok(empty(ReasonCode::MemoryDisabled));
        }
        let now = self.now();
        let mut turns = Vec::new();
        let mut proposals: Vec<(usize, CandidateFields)> = Vec::new();
        let mut secrets_redacted = 0;
        for (index, message) in messages.iter().enumerate() {
            if message.content.trim().is_empty() {
                return Err(InvalidInput::new(
                    format!("messages[{index}].content"),
                    "must not be empty",
                )
                .into());
            }
            let (text, redacted) = redact(&message.content);
            secrets_redacted += redacted;
            let at = message.ts.unwrap_or(now);
            let reference = match &message.id {
                Some(id) => validate_key(id, &format!("messages[{index}].id"))?,
                None => format!("{session}:{index}"),
            };
            let source_type =
                message.source.as_ref().map_or(message.role.source_type(), |s| s.source_type);
            let source_ref =
                message.source.as_ref().and_then(|s| s.source_ref.clone()).unwrap_or(reference);
            let expires_at = at.plus(options.retention);
            if expires_at > now {
                turns.push(CandidateFields {
                    kind: Some(Kind::Episodic),
                    content: text.clone(),
                    session_id: Some(session.clone()),
                    source: Some(Source {
                        source_type,
                        source_ref: Some(source_ref.clone()),
                        captured_at: at,
                        extractor: None,
                    }),
                    valid_from: Some(at),
                    expires_at: Some(expires_at),
                    metadata: BTreeMap::from([(
                        "speaker".to_owned(),
                        message.role.as_str().to_owned(),
                    )]),
                    transcript: true,
                    ..Default::default()
                });
            }
            if message.role != Role::User {
                continue;
            }
            for found in extract(&text, at) {
                proposals.push((
                    index,
                    CandidateFields {
                        kind: Some(found.kind),
                        subject: found.key.as_ref().map(|k| k.0.clone()),
                        attribute: found.key.as_ref().map(|k| k.1.clone()),
                        content: found.content,
                        session_id: None,
                        source: Some(Source {
                            source_type,
                            source_ref: Some(source_ref.clone()),
                            captured_at: at,
                            extractor: Some(RULESET.to_owned()),
                        }),
                        valid_from: Some(at),
                        expires_at: found.expires_at.filter(|e| *e > at),
                        ..Default::default()
                    },
                ));
            }
        }
        let turn_count = turns.len();
        let contents: Vec<(usize, String)> =
            proposals.iter().map(|(i, f)| (*i, f.content.clone())).collect();
        let mut batch = turns;
        batch.extend(proposals.into_iter().map(|(_, f)| f));
        let results = self.remember_batch(who, batch)?;
        let turns_stored = results[..turn_count]
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Added | Outcome::Updated))
            .count();
        let proposed = contents
            .into_iter()
            .zip(results.into_iter().skip(turn_count))
            .map(|((message, content), result)| ProposedMemory { message, content, result })
            .collect();
        Ok(IngestReport { turns_stored, secrets_redacted, proposed, skipped: None })
    }
}
