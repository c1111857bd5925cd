//! Conversation ingestion (SPEC §3): raw turns are kept as session-scoped episodic records
//! with provenance and a retention TTL, secrets redacted first; the rule-based extractor
//! proposes memories from what the user said, and each goes through the policy gate and the
//! consistency rules. The whole ingestion is one transaction.

use std::collections::BTreeMap;

use mnemo_core::duration::Ttl;
use mnemo_core::error::InvalidInput;
use mnemo_core::extract::Extracted;
use mnemo_core::extract::{RULESET, extract};
use mnemo_core::ledger::Restatement;
use mnemo_core::lifecycle::{CandidateFields, Outcome, Remembered};
use mnemo_core::llm_extract::{
    PROMPT_VERSION, Proposal, Shown, schema, system_prompt, user_prompt, validate,
};
use mnemo_core::policy::ReasonCode;
use mnemo_core::ports::ChatModel;
use mnemo_core::scope::validate_key;
use mnemo_core::screen::redact;
use mnemo_core::screen::{Screening, screen, sensitive_category};
use mnemo_core::transcript::{Message, Role};
use mnemo_core::{Kind, MemoryId, Source, SourceType, Timestamp, UserRef};

use crate::{Mnemo, Result};

/// Metadata key set to `true` on the turns of an incognito session: held for that session
/// only and deleted when it ends.
pub const INCOGNITO: &str = "incognito";

/// Whether a record is a turn of an incognito session.
pub fn is_incognito(memory: &mnemo_core::Memory) -> bool {
    memory.transcript && memory.metadata.get(INCOGNITO).is_some_and(|v| v == "true")
}

/// Metadata key set to `true` on a transcript turn the extractor drew a memory from.
pub const EXTRACTED: &str = "extracted";

/// The built-in static embedding of a message, which the self-disclosure selector reads
/// whatever embedder the notebook searches with (empty without the built-in model).
fn disclosure_embedding(text: &str) -> Vec<f32> {
    #[cfg(feature = "builtin-embedder")]
    if let Ok(model) = mnemo_embed::StaticModel::builtin() {
        return model.embed_text(text);
    }
    let _ = text;
    Vec::new()
}

/// The self-disclosure selector's features for a message: its built-in static embedding
/// followed by the structural features (what `cargo xtask train-disclosure` trains on).
pub fn disclosure_features(text: &str) -> Vec<f32> {
    mnemo_core::disclosure::features(text, &disclosure_embedding(text))
}

/// How long raw turns are kept when the caller does not say (`30d`; [`IngestOptions::new`]
/// uses it).
pub const DEFAULT_RETENTION: &str = "30d";

/// [`DEFAULT_RETENTION`] as a duration.
pub(crate) const DEFAULT_RETENTION_TTL: Ttl = Ttl::from_millis(30 * 86_400_000);

/// How to ingest a conversation.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// The session the messages belong to.
    pub session: String,
    /// An incognito session neither reads nor writes long-term memory: its turns are held
    /// for the session only and deleted when it ends.
    pub incognito: bool,
    /// How long raw turns are kept.
    pub retention: Ttl,
    /// The agent the conversation was with, recorded on its turns and memories.
    pub agent_id: Option<String>,
    /// Caller metadata recorded on the turns and memories (the turns' `speaker` aside).
    pub metadata: mnemo_core::Metadata,
}

impl IngestOptions {
    /// A session kept the default time ([`DEFAULT_RETENTION`]), not incognito, with no agent
    /// or metadata; set the other fields with struct update syntax.
    pub fn new(session: impl Into<String>) -> Self {
        Self {
            session: session.into(),
            incognito: false,
            retention: DEFAULT_RETENTION_TTL,
            agent_id: None,
            metadata: BTreeMap::new(),
        }
    }
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

/// A message whose extraction failed (the model was unreachable, slow or malformed). Its raw
/// turn is stored all the same; ingesting it again retries the extraction.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtractionFailure {
    /// Index of the message.
    pub message: usize,
    /// What went wrong.
    pub error: String,
}

/// What an ingestion did.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestReport {
    /// Messages whose extraction failed.
    pub failures: Vec<ExtractionFailure>,
    /// Raw turns stored.
    pub turns_stored: usize,
    /// Secrets replaced by `[redacted]` before anything was stored.
    pub secrets_redacted: usize,
    /// Memories proposed by the extractor, with their outcomes.
    pub proposed: Vec<ProposedMemory>,
    /// Why memory was neither read nor written, if so: `incognito` (the turns are held for
    /// the session only, until it ends) or `memory_disabled` (nothing was stored).
    pub skipped: Option<ReasonCode>,
}

/// Attempts per question when the model is unavailable.
const MODEL_ATTEMPTS: u32 = 3;

/// Asks the chat model for a JSON answer, retrying with backoff while it is unavailable;
/// any other failure ends the attempts. The error is the last failure, as text.
pub(crate) fn ask_model(
    chat: &dyn ChatModel,
    system: &str,
    prompt: &str,
    schema_name: &str,
    schema: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    let mut last = String::new();
    for attempt in 0..MODEL_ATTEMPTS {
        match chat.complete_json(system, prompt, schema_name, schema) {
            Ok(answer) => return Ok(answer),
            Err(e) => {
                last = e.to_string();
                if !matches!(e.kind, mnemo_core::ErrorKind::Unavailable { .. }) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100 << (2 * attempt)));
            }
        }
    }
    Err(last)
}

impl Mnemo {
    /// Asks the chat model for proposals about one user message, showing it the nearest
    /// existing memories; retries while the model is unavailable.
    fn llm_extract(
        &self,
        who: &UserRef,
        chat: &dyn ChatModel,
        text: &str,
        at: Timestamp,
    ) -> Result<Vec<Proposal>, String> {
        let request = crate::SearchRequest {
            query: text.to_owned(),
            k: 20,
            filter: Default::default(),
            min_relevance: Some(0.0),
            as_of: None,
            // The model updates the user's own memories only.
            spaces: Some(vec![crate::PRIVATE.to_owned()]),
        };
        let shown: Vec<Shown> = self
            .search(who, &request)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|h| h.memory.kind != Kind::Episodic)
            .take(5)
            .map(|h| Shown {
                key: h.memory.key().map(|(s, a)| (s.to_owned(), a.to_owned())),
                id: h.memory.id,
                content: h.memory.content,
            })
            .collect();
        let prompt = user_prompt(text, at, &shown);
        let answer = ask_model(chat, system_prompt(), &prompt, "memory_decisions", &schema())?;
        validate(&answer, &shown, at).map_err(|e| format!("model answer rejected: {e}"))
    }

    /// Ingests conversation messages for `who` (see the module documentation).
    pub fn ingest(
        &self,
        who: &UserRef,
        messages: &[Message],
        options: &IngestOptions,
    ) -> Result<IngestReport> {
        let session = validate_key(&options.session, "session")?;
        let empty = |reason| IngestReport {
            failures: vec![],
            turns_stored: 0,
            secrets_redacted: 0,
            proposed: vec![],
            skipped: Some(reason),
        };
        if !self.settings(who)?.memory_enabled {
            return Ok(empty(ReasonCode::MemoryDisabled));
        }
        let now = self.now();
        let mut turns = Vec::new();
        // Message index → its turn in `turns` (expired turns are not stored).
        let mut turn_of_message: BTreeMap<usize, usize> = BTreeMap::new();
        let mut proposals: Vec<(usize, CandidateFields)> = Vec::new();
        let mut updates: Vec<(usize, MemoryId, CandidateFields)> = Vec::new();
        let mut model_deletes: Vec<(usize, MemoryId)> = Vec::new();
        let mut failures = Vec::new();
        let mut secrets_redacted = 0;
        // Each message's checks come first, in order, so bad input is refused before any
        // extraction runs.
        let references = messages
            .iter()
            .enumerate()
            .map(|(index, message)| {
                if message.content.trim().is_empty() {
                    return Err(InvalidInput::new(
                        format!("messages[{index}].content"),
                        "must not be empty",
                    )
                    .into());
                }
                Ok(match &message.id {
                    Some(id) => validate_key(id, &format!("messages[{index}].id"))?,
                    None => format!("{session}:{index}"),
                })
            })
            .collect::<Result<Vec<String>>>()?;
        // Redaction and the offline extractor are pure: a long conversation is prepared on
        // every core, then read in order.
        let offline = self.chat.is_none() && !options.incognito;
        let prepared = crate::parallel::in_runs(messages.iter().collect(), |_, run| {
            Ok::<_, std::convert::Infallible>(
                run.into_iter()
                    .map(|message: &Message| {
                        let (text, redacted) = redact(&message.content);
                        let found = (offline && message.role == Role::User).then(|| {
                            let p =
                                self.disclosure.probability(&text, &disclosure_embedding(&text));
                            extract(&text, message.ts.unwrap_or(now), self.disclosure.selects(p))
                        });
                        (text, redacted, found)
                    })
                    .collect(),
            )
        });
        let Ok(prepared) = prepared;
        let read = messages.iter().enumerate().zip(references).zip(prepared);
        for (((index, message), reference), (text, redacted, found)) in read {
            secrets_redacted += redacted;
            let at = message.ts.unwrap_or(now);
            let source_type =
                message.source.as_ref().map_or(message.role.source_type(), |s| s.source_type);
            let source_ref =
                message.source.as_ref().and_then(|s| s.source_ref.clone()).unwrap_or(reference);
            let expires_at = at.plus(options.retention);
            if expires_at > now {
                turn_of_message.insert(index, turns.len());
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
                    agent_id: options.agent_id.clone(),
                    metadata: options
                        .metadata
                        .clone()
                        .into_iter()
                        .chain(
                            [("speaker", message.role.as_str())]
                                .into_iter()
                                .chain(options.incognito.then_some((INCOGNITO, "true")))
                                .map(|(k, v)| (k.to_owned(), v.into())),
                        )
                        .collect(),
                    transcript: true,
                    restatement: Restatement::SaidAt(at),
                    ..Default::default()
                });
            }
            // An incognito session neither reads nor writes long-term memory.
            if message.role != Role::User || options.incognito {
                continue;
            }
            let (found, extractor) = match &self.chat {
                None => (found.unwrap_or_default(), RULESET.to_owned()),
                Some(chat) => match self.llm_extract(who, chat.as_ref(), &text, at) {
                    Ok(list) => {
                        let mut adds = Vec::new();
                        // The model rewrites clauses apart; each keeps the category its
                        // message falls in ("I'm trans and I started HRT").
                        let sensitive = sensitive_category(&text).is_some();
                        for proposal in list {
                            match proposal {
                                Proposal::Add(mut e) => {
                                    e.sensitive |= sensitive;
                                    adds.push(e);
                                }
                                Proposal::Update { target, mut statement } => updates.push((
                                    index,
                                    target,
                                    candidate(
                                        {
                                            statement.sensitive |= sensitive;
                                            statement
                                        },
                                        source_type,
                                        &source_ref,
                                        at,
                                        &format!("{PROMPT_VERSION}:{}", chat.id()),
                                    ),
                                )),
                                Proposal::Delete { target } => model_deletes.push((index, target)),
                            }
                        }
                        (adds, format!("{PROMPT_VERSION}:{}", chat.id()))
                    }
                    Err(error) => {
                        failures.push(ExtractionFailure { message: index, error });
                        (Vec::new(), String::new())
                    }
                },
            };
            for e in found {
                let mut fields = candidate(e, source_type, &source_ref, at, &extractor);
                fields.agent_id.clone_from(&options.agent_id);
                fields.metadata.clone_from(&options.metadata);
                proposals.push((index, fields));
            }
        }
        // An update of a keyed memory is a new value of its key (the old one is superseded);
        // an update of an unkeyed one is a new version of it, if the new text passes screening.
        let mut edited = Vec::new();
        for (index, target, fields) in updates {
            if fields.subject.is_some()
                || fields.sensitive
                || screen(&fields.content) != Screening::default()
            {
                proposals.push((index, fields));
                continue;
            }
            match self.edit(who, &target, &fields.content) {
                Ok(m) => edited.push(ProposedMemory {
                    message: index,
                    content: fields.content,
                    result: Remembered {
                        outcome: Outcome::Updated,
                        id: Some(m.id),
                        reason: ReasonCode::NewValue,
                        superseded: vec![],
                    },
                }),
                Err(e) => failures.push(ExtractionFailure { message: index, error: e.to_string() }),
            }
        }
        // A turn the extractor drew a memory from is represented by that memory; context
        // shows a past session's user turn only when nothing was drawn from it.
        let drawn = proposals.iter().map(|(i, _)| *i).chain(edited.iter().map(|e| e.message));
        for index in drawn.chain(model_deletes.iter().map(|(i, _)| *i)) {
            if let Some(turn) = turn_of_message.get(&index).and_then(|t| turns.get_mut(*t)) {
                turn.metadata.insert(EXTRACTED.to_owned(), "true".into());
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
        let mut proposed: Vec<ProposedMemory> = contents
            .into_iter()
            .zip(results.into_iter().skip(turn_count))
            .map(|((message, content), result)| ProposedMemory { message, content, result })
            .collect();
        proposed.extend(edited);
        proposed.extend(model_deletes.into_iter().map(|(message, target)| ProposedMemory {
            message,
            content: format!("delete {target}"),
            result: Remembered {
                outcome: Outcome::Skipped,
                id: Some(target),
                reason: ReasonCode::ModelDeleteNotApplied,
                superseded: vec![],
            },
        }));
        proposed.sort_by_key(|p| p.message);
        let skipped = options.incognito.then_some(ReasonCode::Incognito);
        Ok(IngestReport { failures, turns_stored, secrets_redacted, proposed, skipped })
    }
}

/// The write fields of an extracted statement from a message.
fn candidate(
    found: Extracted,
    source_type: SourceType,
    source_ref: &str,
    at: Timestamp,
    extractor: &str,
) -> CandidateFields {
    CandidateFields {
        kind: Some(found.kind),
        subject: found.key.as_ref().map(|k| k.0.clone()),
        attribute: found.key.as_ref().map(|k| k.1.clone()),
        content: found.content,
        source: Some(Source {
            source_type,
            source_ref: Some(source_ref.to_owned()),
            captured_at: at,
            extractor: Some(extractor.to_owned()),
        }),
        valid_from: Some(at),
        expires_at: found.expires_at.filter(|e| *e > at),
        sensitive: found.sensitive,
        // Said in a message at `at`: a re-statement of something forgotten only if said after
        // the deletion, in another message.
        restatement: Restatement::SaidAt(at),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_retention_reads_as_its_duration() {
        assert_eq!(Ttl::parse(DEFAULT_RETENTION, "retention").ok(), Some(DEFAULT_RETENTION_TTL));
    }
}
