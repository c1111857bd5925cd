//! Conversation ingestion (SPEC §3): raw turns are kept as session-scoped episodic records
//! with provenance and a retention TTL, secrets redacted first; the rule-based extractor
//! proposes memories from what the user said, and each goes through the policy gate and the
//! consistency rules. The whole ingestion is one transaction.

use std::collections::{BTreeMap, BTreeSet};

use mnemo_core::duration::Ttl;
use mnemo_core::error::InvalidInput;
use mnemo_core::extract::Extracted;
use mnemo_core::extract::{RULESET, extract_knowing, names_someone, opening_names, told_part};
use mnemo_core::ledger::Restatement;
use mnemo_core::lifecycle::{CandidateFields, Outcome, Remembered};
use mnemo_core::llm_extract::{
    PROMPT_VERSION, Proposal, Shown, schema, system_prompt, user_prompt, validate,
};
use mnemo_core::policy::ReasonCode;
use mnemo_core::ports::{ChatModel, SearchFilter};
use mnemo_core::scope::validate_key;
use mnemo_core::screen::redact;
use mnemo_core::screen::{Screening, screen, sensitive_category};
use mnemo_core::transcript::{Message, Role};
use mnemo_core::{Kind, MemoryId, Source, SourceType, Timestamp, UserRef};

use crate::{Mnemo, PRIVATE, Parts, Result, SearchRequest, Staged};
use mnemo_core::lifecycle::Candidate;
use mnemo_core::space::WriteRule;

/// Metadata key set to `true` on the turns of an incognito session: held for that session
/// only and deleted when it ends.
pub const INCOGNITO: &str = "incognito";

/// Whether a record is a turn of an incognito session.
pub fn is_incognito(memory: &mnemo_core::Memory) -> bool {
    memory.transcript && memory.metadata.get(INCOGNITO).is_some_and(|v| v == "true")
}

/// Metadata key set to `true` on a transcript turn the extractor drew a memory from.
pub const EXTRACTED: &str = "extracted";

/// The distilled static embedding of a message (`mnemo_embed::StaticModel::distilled`),
/// which the self-disclosure selector was trained on and reads whatever embedder the
/// notebook searches with (empty without the built-in models).
fn disclosure_embedding(text: &str) -> Vec<f32> {
    #[cfg(feature = "builtin-embedder")]
    if let Ok(model) = mnemo_embed::StaticModel::distilled() {
        return model.embed_text(text);
    }
    let _ = text;
    Vec::new()
}

/// The self-disclosure selector's features for a message: its distilled static embedding
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

/// Most names one ingestion looks up among the user's memories (one search each).
const MAX_NAMES_LOOKED_UP: usize = 16;

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
        let mut failures = Vec::new();
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
        // With a chat model, each user message is asked about in order first; its updates of
        // unkeyed memories are applied as edits before the batch.
        let mut asked: BTreeMap<usize, Asked> = BTreeMap::new();
        if let (Some(chat), false) = (&self.chat, options.incognito) {
            let mut updates: Vec<(usize, MemoryId, CandidateFields)> = Vec::new();
            for (index, message) in messages.iter().enumerate() {
                if message.role != Role::User {
                    continue;
                }
                let (text, _) = redact(&message.content);
                let at = message.ts.unwrap_or(now);
                let (source_type, source_ref) = source_of(message, &references[index]);
                let extractor = format!("{PROMPT_VERSION}:{}", chat.id());
                let mut answer = Asked { message: index, ..Asked::default() };
                match self.llm_extract(who, chat.as_ref(), &text, at) {
                    Ok(list) => {
                        // The model rewrites clauses apart; each keeps the category its
                        // message falls in ("I'm trans and I started HRT").
                        let sensitive = sensitive_category(&text).is_some();
                        for proposal in list {
                            match proposal {
                                Proposal::Add(mut e) => {
                                    e.sensitive |= sensitive;
                                    answer.found.push(e);
                                }
                                Proposal::Update { target, mut statement } => {
                                    statement.sensitive |= sensitive;
                                    let fields = candidate(
                                        statement,
                                        source_type,
                                        &source_ref,
                                        at,
                                        &extractor,
                                    );
                                    updates.push((index, target, fields));
                                }
                                Proposal::Delete { target } => {
                                    answer.deletes.push(target);
                                    answer.touched = true;
                                }
                            }
                        }
                    }
                    Err(error) => failures.push(ExtractionFailure { message: index, error }),
                }
                answer.extractor = extractor;
                asked.insert(index, answer);
            }
            // An update of a keyed memory is a new value of its key (the old one is
            // superseded); an update of an unkeyed one is a new version of it, if the new
            // text passes screening.
            for (index, target, fields) in updates {
                let answer = asked.entry(index).or_default();
                if fields.subject.is_some()
                    || fields.sensitive
                    || screen(&fields.content) != Screening::default()
                {
                    answer.updates.push(fields);
                    continue;
                }
                match self.edit(who, &target, &fields.content) {
                    Ok(m) => {
                        answer.touched = true;
                        answer.edited.push(ProposedMemory {
                            message: index,
                            content: fields.content,
                            result: Remembered {
                                outcome: Outcome::Updated,
                                id: Some(m.id),
                                reason: ReasonCode::NewValue,
                                superseded: vec![],
                            },
                        });
                    }
                    Err(e) => {
                        failures.push(ExtractionFailure { message: index, error: e.to_string() })
                    }
                }
            }
        }
        // Edits and proposed deletions are reported after what the batch wrote.
        let mut answered: Vec<ProposedMemory> = Vec::new();
        let mut asked: Vec<(usize, Asked)> = asked.into_iter().collect();
        for (_, answer) in &mut asked {
            answered.append(&mut answer.edited);
            answered.extend(answer.deletes.drain(..).map(|target| ProposedMemory {
                message: answer.message,
                content: format!("delete {target}"),
                result: Remembered {
                    outcome: Outcome::Skipped,
                    id: Some(target),
                    reason: ReasonCode::ModelDeleteNotApplied,
                    superseded: vec![],
                },
            }));
        }
        let mut asked = asked.into_iter().peekable();
        let items: Vec<Item<'_>> = messages
            .iter()
            .zip(references)
            .enumerate()
            .map(|(index, (message, reference))| {
                let answer = asked.next_if(|(i, _)| *i == index).map(|(_, a)| a);
                Item { index, message, reference, asked: answer }
            })
            .collect();
        // Redaction, the offline extractor, screening and embedding are pure: a long
        // conversation is prepared on the other cores while its transaction writes the
        // messages before. The messages are written in the order they were said, each as its
        // turn and then what was drawn from it, so a statement is decided against what had
        // been said up to it.
        let secrets_redacted = std::sync::atomic::AtomicUsize::new(0);
        let refused = std::sync::Mutex::new(Vec::new());
        let builtin = self.embedder.as_ref().is_some_and(|e| e.id() == selector_embedder_id());
        let known = if self.chat.is_none() && !options.incognito {
            self.names_known(who, messages)?
        } else {
            BTreeMap::new()
        };
        let prepare = |_, run: Vec<Item<'_>>| {
            run.into_iter()
                .map(|item| {
                    let prepared =
                        self.prepare_message(item, options, &session, now, builtin, &known)?;
                    secrets_redacted
                        .fetch_add(prepared.redacted, std::sync::atomic::Ordering::Relaxed);
                    if !prepared.refused.is_empty() {
                        refused
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .extend(prepared.refused);
                    }
                    Ok(prepared.parts)
                })
                .collect()
        };
        let written = self.write_prepared(who, who, items, WriteRule::Direct, prepare)?;
        let mut turns_stored = 0;
        let mut proposed = Vec::new();
        for (label, result) in written {
            match label {
                Label::Turn => {
                    turns_stored +=
                        usize::from(matches!(result.outcome, Outcome::Added | Outcome::Updated));
                }
                Label::Drawn { message, content } => {
                    proposed.push(ProposedMemory { message, content, result });
                }
            }
        }
        proposed.extend(answered);
        proposed.extend(refused.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner));
        proposed.sort_by_key(|p| p.message);
        let skipped = options.incognito.then_some(ReasonCode::Incognito);
        Ok(IngestReport {
            failures,
            turns_stored,
            secrets_redacted: secrets_redacted.into_inner(),
            proposed,
            skipped,
        })
    }

    /// The names the user's messages open sentences with ("Rex is a golden retriever") that
    /// the user had named as someone of their life: each with the index of the first message
    /// it is known for, 0 when a memory of the user's names it ("User has a dog named Rex"),
    /// `i + 1` when message `i` of this conversation does. Each name is looked up by its
    /// word alone (no embedding), in the user's own notebook.
    fn names_known(&self, who: &UserRef, messages: &[Message]) -> Result<BTreeMap<String, usize>> {
        let said: Vec<(usize, &str)> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == Role::User)
            .map(|(i, m)| (i, m.content.as_str()))
            .collect();
        let names: BTreeSet<String> =
            said.iter().flat_map(|(_, text)| opening_names(text)).collect();
        let mut known = BTreeMap::new();
        for name in names.into_iter().take(MAX_NAMES_LOOKED_UP) {
            let request = SearchRequest {
                query: name.clone(),
                k: 5,
                filter: SearchFilter::default(),
                min_relevance: Some(0.0),
                as_of: None,
                spaces: Some(vec![PRIVATE.to_owned()]),
            };
            let stored = self.search_words(who, &request)?.iter().any(|hit| {
                !hit.memory.transcript
                    && hit.memory.kind != Kind::Episodic
                    && names_someone(&hit.memory.content, &name)
            });
            if stored {
                known.insert(name, 0);
            } else if let Some((i, _)) = said.iter().find(|(_, text)| names_someone(text, &name)) {
                known.insert(name, i + 1);
            }
        }
        Ok(known)
    }

    /// One message prepared for the ingestion's batch: its turn (unless already expired)
    /// and the statements drawn from it, validated, and the turn embedded when the
    /// self-disclosure selector's embedding of it is the notebook's own (`builtin`).
    fn prepare_message(
        &self,
        item: Item<'_>,
        options: &IngestOptions,
        session: &str,
        now: Timestamp,
        builtin: bool,
        known: &BTreeMap<String, usize>,
    ) -> Result<PreparedMessage> {
        let Item { index, message, reference, asked } = item;
        let (text, redacted) = redact(&message.content);
        let at = message.ts.unwrap_or(now);
        let (source_type, source_ref) = source_of(message, &reference);
        let user = message.role == Role::User && !options.incognito;
        // The offline extractor reads the user's messages, the selector with the built-in
        // embedding of each.
        let mut embedding = None;
        let (found, extractor, updates, touched) = match asked {
            Some(asked) => (asked.found, asked.extractor, asked.updates, asked.touched),
            None if user && self.chat.is_none() => {
                let vector = disclosure_embedding(&text);
                let mut p = self.disclosure.probability(&text, &vector);
                // A message that also asks something is read again by what it tells alone.
                if !self.disclosure.selects(p)
                    && let Some(told) = told_part(&text)
                {
                    p = p.max(self.disclosure.probability(&told, &disclosure_embedding(&told)));
                }
                embedding = Some(vector);
                let known = |name: &str| known.get(name).is_some_and(|from| *from <= index);
                let found = extract_knowing(&text, at, self.disclosure.selects(p), &known);
                (found, RULESET.to_owned(), vec![], false)
            }
            None => (Vec::new(), String::new(), Vec::new(), false),
        };
        // A message that carried a secret is refused whole, as `remember` refuses it: its turn
        // is kept redacted, and what was drawn from it is reported refused, not written (what
        // it says beside the secret is about the secret: "aws creds are … and I'm getting
        // access denied").
        let refused: Vec<ProposedMemory> = if redacted > 0 {
            found
                .iter()
                .map(|e| e.content.clone())
                .chain(updates.iter().map(|u| u.content.clone()))
                .map(|content| ProposedMemory {
                    message: index,
                    content,
                    result: Remembered::refused(ReasonCode::Secret),
                })
                .collect()
        } else {
            Vec::new()
        };
        let (found, updates) =
            if redacted > 0 { (Vec::new(), Vec::new()) } else { (found, updates) };
        let validate = |fields: CandidateFields| {
            Candidate::validate(fields, now).map_err(|e| {
                crate::Error::from(InvalidInput::new(
                    format!("messages[{index}].{}", e.field),
                    e.problem,
                ))
            })
        };
        let mut parts = Parts::new();
        let expires_at = at.plus(options.retention);
        if expires_at > now {
            let drawn = touched || !found.is_empty() || !updates.is_empty();
            let turn = validate(CandidateFields {
                kind: Some(Kind::Episodic),
                content: text.clone(),
                session_id: Some(session.to_owned()),
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
                            // A turn the extractor drew a memory from is represented by that
                            // memory; context shows a past session's user turn only when
                            // nothing was drawn from it.
                            .chain(drawn.then_some((EXTRACTED, "true")))
                            .map(|(k, v)| (k.to_owned(), v.into())),
                    )
                    .collect(),
                transcript: true,
                restatement: Restatement::SaidAt(at),
                ..Default::default()
            })?;
            // The selector's vector is the turn's own when the notebook embeds with the
            // built-in model and validation left the text as it was.
            let vector = embedding.filter(|_| builtin && turn.content == text);
            parts.push((Label::Turn, (turn, vector)));
        }
        let drawn = found
            .into_iter()
            .map(|e| {
                let mut fields = candidate(e, source_type, &source_ref, at, &extractor);
                fields.agent_id.clone_from(&options.agent_id);
                fields.metadata.clone_from(&options.metadata);
                fields
            })
            .chain(updates);
        for fields in drawn {
            let content = fields.content.clone();
            let statement = validate(fields)?;
            parts.push((Label::Drawn { message: index, content }, (statement, None)));
        }
        Ok(PreparedMessage { parts, redacted, refused })
    }
}

/// A message of an ingestion with what its batch needs to know of it.
struct Item<'a> {
    index: usize,
    message: &'a Message,
    /// Its source reference (its id, or the session and its index).
    reference: String,
    /// What the chat model made of it, when one was asked.
    asked: Option<Asked>,
}

/// What the chat model made of one user message.
#[derive(Default)]
struct Asked {
    /// Its index in the ingestion.
    message: usize,
    /// New statements.
    found: Vec<Extracted>,
    /// Updates written as new statements (of a key, or held by screening).
    updates: Vec<CandidateFields>,
    /// Updates applied as edits of unkeyed memories.
    edited: Vec<ProposedMemory>,
    /// Deletions it proposed, never applied automatically.
    deletes: Vec<MemoryId>,
    /// Whether it edited a memory or proposed a deletion.
    touched: bool,
    /// The extractor named on what is drawn.
    extractor: String,
}

/// What an ingestion's answer is read by: a message's turn, or a statement drawn from a
/// message.
enum Label {
    Turn,
    Drawn { message: usize, content: String },
}

/// A message as its batch writes it.
struct PreparedMessage {
    parts: Parts<Label, Staged>,
    /// Secrets redacted from it.
    redacted: usize,
    /// What was drawn from it and refused without a write (it carried a secret).
    refused: Vec<ProposedMemory>,
}

/// The source type and reference of a message's records.
fn source_of(message: &Message, reference: &str) -> (SourceType, String) {
    let source_type = message.source.as_ref().map_or(message.role.source_type(), |s| s.source_type);
    let source_ref = message
        .source
        .as_ref()
        .and_then(|s| s.source_ref.clone())
        .unwrap_or_else(|| reference.to_owned());
    (source_type, source_ref)
}

/// The id of the model whose vectors the self-disclosure selector reads: a notebook that
/// embeds with it takes a turn's vector from the selector's.
fn selector_embedder_id() -> &'static str {
    #[cfg(feature = "builtin-embedder")]
    if let Ok(model) = mnemo_embed::StaticModel::distilled() {
        use mnemo_core::ports::Embedder;
        static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        return ID.get_or_init(|| model.id().to_owned());
    }
    ""
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
    use std::sync::Arc;

    use mnemo_core::ports::Embedder;

    #[cfg(feature = "builtin-embedder")]
    fn notebook(embedder: Arc<dyn Embedder>) -> (tempfile::TempDir, Mnemo) {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(mnemo_core::FixedClock(
            Timestamp::parse("2026-06-01T00:00:00Z", "now").unwrap(),
        ));
        let mnemo = Mnemo::open_sqlite(&dir.path().join("m.db"), Some(embedder), clock, "test");
        (dir, mnemo.unwrap())
    }

    /// The vector a user message's turn is staged with, if any.
    #[cfg(feature = "builtin-embedder")]
    fn staged_vector(mnemo: &Mnemo, content: &str) -> Option<Vec<f32>> {
        let message =
            Message { role: Role::User, content: content.into(), id: None, ts: None, source: None };
        let item = Item { index: 0, message: &message, reference: "s:0".into(), asked: None };
        let builtin = mnemo.embedder.as_ref().is_some_and(|e| e.id() == selector_embedder_id());
        let now = mnemo.now();
        let options = IngestOptions::new("s");
        let prepared =
            mnemo.prepare_message(item, &options, "s", now, builtin, &BTreeMap::new()).unwrap();
        let mut turns = prepared.parts.into_iter().filter(|(l, _)| matches!(l, Label::Turn));
        let (_, (turn, vector)) = turns.next().unwrap();
        assert_eq!(turn.content, content.trim());
        vector
    }

    #[cfg(feature = "builtin-embedder")]
    #[test]
    fn a_turn_keeps_the_selectors_vector_only_where_it_is_the_notebooks_own() {
        let distilled = mnemo_embed::StaticModel::distilled().unwrap();
        let (_dir, mnemo) = notebook(distilled.clone());
        // The notebook embeds with the selector's model: the selector's vector of the text
        // is the one the turn would be embedded with.
        let text = "I moved to Leeds last spring and I love it";
        assert_eq!(staged_vector(&mnemo, text), Some(distilled.embed_text(text)));
        // Validation trims the text, so the selector's vector is not the turn's own.
        assert_eq!(staged_vector(&mnemo, "  I moved to Leeds last spring  "), None);
        // The built-in model, or any other, embeds the turn itself.
        let (_dir, builtin) = notebook(mnemo_embed::StaticModel::builtin().unwrap());
        assert_eq!(staged_vector(&builtin, text), None);
        let (_dir, other) = notebook(Arc::new(mnemo_testkit::fakes::FakeEmbedder::new(8)));
        assert_eq!(staged_vector(&other, text), None);
    }

    #[test]
    fn the_default_retention_reads_as_its_duration() {
        assert_eq!(Ttl::parse(DEFAULT_RETENTION, "retention").ok(), Some(DEFAULT_RETENTION_TTL));
    }
}
