//! The `mnemo` binary: parses the command line, opens the notebook, runs one library
//! operation and prints its result. Exit code 0 on success; otherwise a one-line reason on
//! stderr and the exit code of the error's kind (see `mnemo_api::error_mapping`).

mod cli;
mod output;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, format_err};
use clap::Parser;
use mnemo::core::error::InvalidInput;
use mnemo::core::export::ExportDocument;
use mnemo::core::ledger::Restatement;
use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::policy::UserSettings;
use mnemo::core::ports::ListFilter;
use mnemo::core::{
    Clock, ConsentReceipt, FixedClock, MemoryId, Source, SourceType, Timestamp, UserRef,
};
use mnemo::{Mnemo, SystemClock};
use mnemo_api as api;

use mnemo::core::run::{RunChange, StepStatus};

use crate::cli::{
    Cli, Command, ContextArgs, EvalAction, IngestArgs, KeysAction, ListArgs, MemberAction,
    RememberArgs, RunAction, SearchArgs, SessionAction, SpaceAction, Switch,
};

const ACTOR: &str = "cli";

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.downcast_ref::<output::StdoutClosed>().is_some() => ExitCode::SUCCESS,
        Err(error) => {
            // Library errors repeat their cause in their own message; print each part once.
            let mut message = String::new();
            for cause in error.chain().map(ToString::to_string) {
                if !message.contains(&cause) {
                    if !message.is_empty() {
                        message.push_str(": ");
                    }
                    message.push_str(&cause);
                }
            }
            output::error(&message);
            ExitCode::from(exit_code(&error))
        }
    }
}

/// Prints help and version as clap renders them, and any other parse error as one line.
fn usage_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind as Clap;
    if matches!(
        error.kind(),
        Clap::DisplayHelp | Clap::DisplayVersion | Clap::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = error.print();
        return if error.kind() == Clap::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    // The first paragraph, on one line: the problem and what it names (e.g. the missing
    // arguments clap lists under it).
    let rendered = error.render().to_string();
    let first: Vec<&str> =
        rendered.lines().map(str::trim).take_while(|line| !line.is_empty()).collect();
    let message = if first.is_empty() { "invalid arguments".to_owned() } else { first.join(" ") };
    output::error(message.trim_start_matches("error: "));
    ExitCode::from(2)
}

/// The exit code for an error: that of the first library error in its chain.
fn exit_code(error: &anyhow::Error) -> u8 {
    let kind = error.chain().find_map(|cause| {
        if let Some(e) = cause.downcast_ref::<mnemo::Error>() {
            Some(e.kind())
        } else if cause.downcast_ref::<InvalidInput>().is_some() {
            Some(mnemo::core::ErrorKind::InvalidInput)
        } else {
            None
        }
    });
    let code = api::error_mapping(kind.unwrap_or(mnemo::core::ErrorKind::Internal)).exit_code;
    u8::try_from(code).unwrap_or(1)
}

fn default_db_path() -> anyhow::Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "mnemo")
        .ok_or_else(|| format_err!("no home directory: pass --db or set MNEMO_DB"))?;
    let dir = dirs.data_dir();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create data directory {}", dir.display()))?;
    Ok(dir.join("mnemo.db"))
}

/// A connection URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.find(':') {
                Some(colon) => {
                    format!("{}{}:***{}", &url[..scheme + 3], &credentials[..colon], &url[at..])
                }
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

fn parse_time(value: Option<&str>, field: &str) -> Result<Option<Timestamp>, InvalidInput> {
    value.map(|v| Timestamp::parse(v, field)).transpose()
}

/// The embedder the configuration names.
fn embedder(cli: &Cli) -> anyhow::Result<Arc<dyn mnemo::core::ports::Embedder>> {
    match cli.embedder.as_str() {
        "builtin" => Ok(mnemo::builtin_embedder()?),
        "static" => Ok(mnemo::builtin_static_embedder()?),
        "openai" => {
            let config = mnemo::OpenAiConfig {
                base_url: cli.embed_url.clone(),
                model: cli.embed_model.clone(),
                api_key: std::env::var("MNEMO_EMBED_API_KEY").ok().filter(|k| !k.is_empty()),
                dims: cli.embed_dims,
                timeout: std::time::Duration::from_secs(30),
            };
            mnemo::openai_embedder(config)
                .with_context(|| format!("embedder {} at {}", cli.embed_model, cli.embed_url))
        }
        "minilm" => {
            let dir = cli.model_dir.as_deref().ok_or_else(|| {
                InvalidInput::new(
                    "--model-dir",
                    "is required with --embedder minilm (or set MNEMO_MINILM_DIR)",
                )
            })?;
            Ok(mnemo::minilm_embedder(dir)?)
        }
        other => Err(InvalidInput::new(
            "--embedder",
            format!("unknown embedder `{other}` (expected builtin, static, minilm or openai)"),
        )
        .into()),
    }
}

/// `mnemo info`: the store in use, its schema version, counts by status, the embedder and
/// the extractor.
fn info(cli: &Cli, mnemo: &Mnemo, store: &(String, String, u32)) -> anyhow::Result<()> {
    let (kind, location, schema) = store;
    let counts = mnemo.store().count_by_status().context("cannot count the memories")?;
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    let embedder = mnemo.embedder_info();
    let extractor = mnemo.extractor_info();
    if cli.json {
        return output::json_pretty(&serde_json::json!({
            "store": {"kind": kind, "location": location, "schema_version": schema},
            "memories": {
                "total": total,
                "by_status": counts
                    .iter()
                    .map(|(status, n)| (status.as_str().to_owned(), serde_json::json!(n)))
                    .collect::<serde_json::Map<_, _>>(),
            },
            "embedder": embedder.as_ref().map(|(id, dims)| serde_json::json!({"id": id, "dims": dims})),
            "extractor": extractor,
        }));
    }
    let by_status: Vec<String> =
        counts.iter().map(|(status, n)| format!("{n} {}", status.as_str())).collect();
    output::lines([
        format!("store      {kind} {location} (schema version {schema})"),
        format!(
            "memories   {total} in all tenants{}",
            if by_status.is_empty() {
                String::new()
            } else {
                format!(": {}", by_status.join(", "))
            }
        ),
        match embedder {
            Some((id, dims)) => format!("embedder   {id} ({dims} dimensions)"),
            None => "embedder   none (lexical search only)".to_owned(),
        },
        format!("extractor  {extractor}"),
    ])
}

/// The embedded database's path: `--store sqlite:PATH`, `--db`, or the default location.
fn sqlite_path(cli: &Cli) -> anyhow::Result<PathBuf> {
    Ok(match (cli.store.as_deref(), &cli.db) {
        (Some(path), _) => PathBuf::from(path.strip_prefix("sqlite:").unwrap_or(path)),
        (None, Some(path)) => path.clone(),
        (None, None) => default_db_path()?,
    })
}

/// A database key from `file` or else the environment variable `var` (none if neither).
fn database_key(
    file: Option<&std::path::Path>,
    var: &str,
    option: &str,
) -> anyhow::Result<Option<mnemo::DatabaseKey>> {
    let text = match (file, std::env::var(var).ok().filter(|v| !v.is_empty())) {
        (Some(_), Some(_)) => {
            return Err(
                InvalidInput::new(option, format!("and {var} are both set: give one key")).into()
            );
        }
        (Some(file), None) => std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the key file {}", file.display()))?,
        (None, Some(text)) => text,
        (None, None) => return Ok(None),
    };
    Ok(Some(mnemo::DatabaseKey::new(&text).map_err(|e| InvalidInput::new(option, e.to_string()))?))
}

/// The embedded database's path, for a command that applies to it alone (`why_not` says why
/// a PostgreSQL store is refused).
fn embedded_database(cli: &Cli, why_not: &str) -> anyhow::Result<std::path::PathBuf> {
    if cli.store.as_deref().is_some_and(|url| url.starts_with("postgres")) {
        return Err(InvalidInput::new("--store", why_not).into());
    }
    sqlite_path(cli)
}

/// `mnemo rekey`: rewrites the embedded database under a new key, or unencrypted.
fn rekey(cli: &Cli, new_key_file: Option<&std::path::Path>, decrypt: bool) -> anyhow::Result<()> {
    let db = embedded_database(
        cli,
        "rekey applies to the embedded database; PostgreSQL encrypts at rest on its own server (docs/OPERATIONS.md)",
    )?;
    let old = database_key(cli.db_key_file.as_deref(), "MNEMO_DB_KEY", "--db-key-file")?;
    let new = database_key(new_key_file, "MNEMO_DB_NEW_KEY", "--new-key-file")?;
    if new.is_none() && !decrypt {
        return Err(InvalidInput::new(
            "--new-key-file",
            "or MNEMO_DB_NEW_KEY is required (or --decrypt to store the database unencrypted)",
        )
        .into());
    }
    if new.is_some() && decrypt {
        return Err(InvalidInput::new("--decrypt", "conflicts with MNEMO_DB_NEW_KEY").into());
    }
    mnemo::rekey_sqlite(&db, old.as_ref(), new.as_ref())
        .map_err(|e| mnemo::Error::Port(e.into()))
        .with_context(|| format!("cannot rekey {}", db.display()))?;
    let encrypted = new.is_some();
    if cli.json {
        return output::json(
            &serde_json::json!({"path": db.display().to_string(), "encrypted": encrypted}),
        );
    }
    let state = if encrypted { "encrypted under the new key" } else { "unencrypted" };
    output::lines([format!("{} is now {state}", db.display())])
}

fn reembed(
    cli: &Cli,
    embedder: &dyn mnemo::core::ports::Embedder,
    now: Timestamp,
) -> anyhow::Result<()> {
    let db = embedded_database(
        cli,
        "reembed applies to the embedded database; for PostgreSQL, export each user and import into a store in use by the new embedder (import embeds again)",
    )?;
    if !db.exists() {
        return Err(InvalidInput::new("--db", format!("{} holds no database", db.display())).into());
    }
    let key = database_key(cli.db_key_file.as_deref(), "MNEMO_DB_KEY", "--db-key-file")?;
    let count = mnemo::reembed_sqlite(&db, key.as_ref(), now, embedder)
        .with_context(|| format!("cannot embed the memories of {} again", db.display()))?;
    if cli.json {
        return output::json(&serde_json::json!({
            "path": db.display().to_string(),
            "model": embedder.id(),
            "reembedded": count,
        }));
    }
    output::lines([format!(
        "{count} memories of {} embedded again with {}",
        db.display(),
        embedder.id()
    )])
}

/// How many of a user's records a search refines before it runs (a few seconds on a
/// 2-core machine).
const CLI_REFINE_MAX: usize = 512;

/// Whether the command searches the user's notebook by meaning.
fn searches_notebook(command: &Command) -> bool {
    matches!(command, Command::Search(_) | Command::Context(_))
}

fn user(cli: &Cli) -> anyhow::Result<UserRef> {
    let user = cli.user.as_deref().ok_or_else(|| {
        InvalidInput::new("--user", "is required for this command (or set MNEMO_USER)")
    })?;
    Ok(UserRef::new(&cli.tenant, user)?)
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let clock: Arc<dyn Clock> = match parse_time(cli.now.as_deref(), "--now")? {
        Some(now) => Arc::new(FixedClock(now)),
        None => Arc::new(SystemClock),
    };
    if let Command::Rekey { new_key_file, decrypt } = &cli.command {
        return rekey(cli, new_key_file.as_deref(), *decrypt);
    }
    let embedder = embedder(cli)?;
    if let Command::Reembed = &cli.command {
        return reembed(cli, embedder.as_ref(), clock.now());
    }
    // What `mnemo info` reports: the store and the schema version it was migrated to.
    let store_in_use: (String, String, u32);
    let mut mnemo = match cli.store.as_deref() {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            store_in_use = ("postgres".into(), redact(url), mnemo::POSTGRES_SCHEMA_VERSION);
            Mnemo::open_postgres(url, Some(embedder), clock, ACTOR)
                .with_context(|| format!("cannot open the PostgreSQL store at {}", redact(url)))?
        }
        _ => {
            let db = sqlite_path(cli)?;
            store_in_use =
                ("sqlite".into(), db.display().to_string(), mnemo::SQLITE_SCHEMA_VERSION);
            let options = mnemo::SqliteOptions {
                key: database_key(cli.db_key_file.as_deref(), "MNEMO_DB_KEY", "--db-key-file")?,
                max_bytes: cli.max_db_mib.map(|mib| mib.saturating_mul(1024 * 1024)),
            };
            Mnemo::open_sqlite_with(&db, Some(embedder), clock, ACTOR, &options)
                .with_context(|| format!("cannot open {}", db.display()))?
        }
    };
    let retention = match cli.backup_retention.as_str() {
        "unknown" => None,
        text => Some(mnemo::core::duration::Ttl::parse(text, "--backup-retention")?),
    };
    mnemo = mnemo.with_backup_retention(retention);
    match cli.extractor.as_str() {
        "rules" => {}
        "llm" => {
            if !(cli.llm_timeout.is_finite() && cli.llm_timeout > 0.0) {
                return Err(InvalidInput::new(
                    "--llm-timeout",
                    "must be a positive number of seconds",
                )
                .into());
            }
            let chat = mnemo_llm::OpenAiChat::new(mnemo_llm::ChatConfig {
                base_url: cli.llm_url.clone(),
                model: cli.llm_model.clone(),
                api_key: std::env::var("MNEMO_LLM_API_KEY").ok().filter(|k| !k.is_empty()),
                timeout: std::time::Duration::from_secs_f64(cli.llm_timeout),
            });
            mnemo = mnemo.with_chat_model(Arc::new(chat));
        }
        other => {
            return Err(InvalidInput::new(
                "--extractor",
                format!("unknown extractor `{other}` (expected rules or llm)"),
            )
            .into());
        }
    }
    // A search first refines what was written since the last one (the query encoder it
    // loads anyway is the refining encoder), as a server's background refiner would have
    // shortly after the writes; a large backlog is refined over several searches.
    if searches_notebook(&cli.command) && mnemo.refines() {
        let who = user(cli)?;
        if let Err(e) = mnemo.refine(&who, CLI_REFINE_MAX) {
            eprintln!("mnemo: records written since the last search keep their first vectors: {e}");
        }
    }
    match &cli.command {
        Command::Remember(args) => remember(cli, &mnemo, args),
        Command::List(args) => list(cli, &mnemo, args),
        Command::Ingest(args) => ingest(cli, &mnemo, args),
        Command::Serve {
            addr,
            rate_limit,
            failed_auth_limit,
            max_connections,
            header_timeout,
            calls_at_once,
            request_log,
        } => {
            let limits = mnemo_server::Limits {
                max_connections: *max_connections,
                header_timeout: std::time::Duration::from_secs(*header_timeout),
                calls_at_once: *calls_at_once,
            };
            log_requests(*request_log);
            let rates = (*rate_limit, *failed_auth_limit);
            serve(mnemo.acting_as("http").refine_in_background()?, addr, rates, limits)
        }
        Command::Mcp => mcp(cli, mnemo.acting_as("mcp").refine_in_background()?),
        Command::Keys { action } => keys(cli, &mnemo, action),
        Command::Search(args) => search(cli, &mnemo, args),
        Command::Context(args) => context(cli, &mnemo, args),
        Command::Get { id } => {
            let memory = mnemo.get(&user(cli)?, &MemoryId(id.clone()))?;
            if cli.json {
                output::json(&memory)
            } else {
                output::lines(output::memory_detail(&memory))
            }
        }
        Command::History { id } => {
            let history = mnemo.history(&user(cli)?, &MemoryId(id.clone()))?;
            if cli.json {
                output::json(&history)
            } else {
                output::lines(output::history_lines(&history))
            }
        }
        Command::Edit { id, text } => {
            let memory = mnemo.edit(&user(cli)?, &MemoryId(id.clone()), text)?;
            if cli.json {
                output::json(&memory)
            } else {
                output::lines([format!("edited {} (now version {})", memory.id, memory.version)])
            }
        }
        Command::Forget { id, all } => {
            let who = user(cli)?;
            if *all {
                let receipt = mnemo.forget_all(&who)?;
                if cli.json {
                    output::json(&api::ForgetAllResponse::from(receipt))
                } else {
                    let count = receipt.removed.records;
                    output::lines(
                        std::iter::once(format!("forgot {count} memories of {}", who.user_id()))
                            .chain(output::receipt_lines(&receipt)),
                    )
                }
            } else {
                let id = id.clone().ok_or_else(|| InvalidInput::new("id", "is required"))?;
                let receipt = mnemo.forget(&who, &MemoryId(id))?;
                if cli.json {
                    output::json(&api::ForgetResponse::from(receipt))
                } else {
                    output::lines(
                        receipt
                            .removed_ids
                            .iter()
                            .map(|id| format!("forgot {id}"))
                            .chain(output::receipt_lines(&receipt)),
                    )
                }
            }
        }
        Command::Pending => {
            if cli.json {
                let memories = mnemo.pending(&user(cli)?)?;
                output::json(&api::MemoryList { memories })
            } else {
                let held = mnemo.pending_with_reasons(&user(cli)?)?;
                if held.is_empty() {
                    output::notice("nothing is waiting for confirmation");
                }
                output::lines(held.iter().map(|(m, reason)| {
                    let why = reason
                        .map(|r| format!("\n       held: {} ({r})", r.explanation()))
                        .unwrap_or_default();
                    format!("{}{why}", output::memory_line(m))
                }))
            }
        }
        Command::Confirm { id } => {
            let id = MemoryId(id.clone());
            let superseded = mnemo.confirm(&user(cli)?, &id)?;
            if cli.json {
                output::json(&api::ConfirmResponse { confirmed: id, superseded })
            } else {
                let mut lines = vec![format!("confirmed {id}")];
                lines.extend(superseded.iter().map(|s| format!("superseded {s}")));
                output::lines(lines)
            }
        }
        Command::Used { ids } => {
            let used: Vec<MemoryId> = ids.iter().cloned().map(MemoryId).collect();
            let last_used_at = mnemo.mark_used(&user(cli)?, &used)?;
            if cli.json {
                output::json(&api::UsedResponse { used, last_used_at })
            } else {
                output::lines(used.iter().map(|id| format!("used {id} at {last_used_at}")))
            }
        }
        Command::MemoryTool { input } => {
            let call: mnemo::core::memory_tool::Command =
                serde_json::from_str(input).map_err(|e| {
                    InvalidInput::new(
                        "memory tool input",
                        format!("is not a memory-tool call: {e}"),
                    )
                })?;
            let answer = api::MemoryToolResponse::from(mnemo.memory_tool(&user(cli)?, &call)?);
            if cli.json {
                output::json(&answer)
            } else if answer.is_error {
                output::notice(&answer.result);
                Ok(())
            } else {
                output::lines(answer.result.lines().map(str::to_owned))
            }
        }
        Command::Reject { id } => {
            let id = MemoryId(id.clone());
            mnemo.reject(&user(cli)?, &id)?;
            if cli.json {
                output::json(&api::RejectResponse { rejected: id })
            } else {
                output::lines([format!("rejected and deleted {id}")])
            }
        }
        Command::Export => output::json_pretty(&mnemo.export(&user(cli)?)?),
        Command::Info => info(cli, &mnemo, &store_in_use),
        // Handled before the store is opened.
        Command::Rekey { .. } | Command::Reembed => Ok(()),
        Command::Import { file, allow_forgotten } => import(cli, &mnemo, file, *allow_forgotten),
        Command::Deletions { limit } => {
            let deletions = mnemo.deletions(&user(cli)?, *limit)?;
            if cli.json {
                output::json(&api::DeletionsResponse { deletions })
            } else {
                if deletions.is_empty() {
                    output::notice("no deletions recorded for this user");
                }
                output::lines(deletions.iter().flat_map(|r| {
                    std::iter::once(output::receipt_heading(r)).chain(output::receipt_lines(r))
                }))
            }
        }
        Command::Expire => {
            let removed = mnemo.expire(&cli.tenant, cli.user.as_deref())?;
            if cli.json {
                output::json(&api::ExpireResponse { expired: removed })
            } else {
                output::lines([format!("expired {} memories", removed.len())])
            }
        }
        Command::Settings { memory } => {
            let who = user(cli)?;
            if let Some(switch) = memory {
                let memory_enabled = matches!(switch, Switch::On);
                mnemo.set_settings(&who, UserSettings { memory_enabled })?;
            }
            let settings = mnemo.settings(&who)?;
            if cli.json {
                output::json(&api::SettingsResponse {
                    user_id: who.user_id().to_owned(),
                    memory_enabled: settings.memory_enabled,
                })
            } else {
                let state = if settings.memory_enabled { "on" } else { "off" };
                output::lines([format!("memory for {}: {state}", who.user_id())])
            }
        }
        Command::Audit { limit } => {
            let entries = mnemo.audit(&user(cli)?, *limit)?;
            if cli.json {
                output::json(&api::AuditResponse { entries })
            } else {
                output::lines(entries.iter().map(output::audit_line))
            }
        }
        Command::Run { action } => run_command(cli, &mnemo, action),
        Command::Space { action } => space_command(cli, &mnemo, action),
        Command::Eval { action: EvalAction::Locomo { file, clock } } => {
            use mnemo::eval::locomo;
            let mode = match clock.as_str() {
                "sessions" => locomo::ClockMode::Sessions,
                "fixed" => locomo::ClockMode::Fixed,
                other => {
                    return Err(InvalidInput::new(
                        "--clock",
                        format!("unknown value `{other}` (expected one of: sessions, fixed)"),
                    )
                    .into());
                }
            };
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let samples: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| {
                InvalidInput::new("locomo", format!("{} is not a JSON list: {e}", file.display()))
            })?;
            // A tenant of its own for this run, which nothing else uses.
            let tenant = format!("eval-{}-{}", std::process::id(), mnemo.now().as_millis());
            let mut notebook = locomo::LibraryNotebook::new(&mnemo, &tenant, mnemo.now());
            let outcome = locomo::run(&samples, &mut notebook, mode, mnemo.now());
            notebook.clean_up()?;
            let report = outcome.map_err(|e| anyhow::anyhow!("{e}"))?;
            if cli.json {
                return output::json(&report);
            }
            output::lines(report.lines())
        }
        Command::Eval { action: EvalAction::Scenarios { file, start } } => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let scenarios: Vec<mnemo::eval::Scenario> = serde_json::from_str(&text)
                .map_err(|e| InvalidInput::new("scenarios", format!("{}: {e}", file.display())))?;
            let start = parse_time(start.as_deref(), "--start")?.unwrap_or_else(|| mnemo.now());
            // A tenant of its own for this run, which nothing else uses.
            let tenant = format!("eval-{}-{}", std::process::id(), mnemo.now().as_millis());
            let report = mnemo.eval_scenarios(&scenarios, &tenant, start)?;
            let failures: Vec<serde_json::Value> = report
                .failures
                .iter()
                .map(|(name, kind, what)| serde_json::json!({"name": name, "type": kind, "failures": what}))
                .collect();
            if cli.json {
                let by_type: serde_json::Map<String, serde_json::Value> = report
                    .by_type
                    .iter()
                    .map(|(kind, t)| {
                        (kind.clone(), serde_json::json!({"passed": t.passed, "total": t.total}))
                    })
                    .collect();
                return output::json(
                    &serde_json::json!({"by_type": by_type, "failures": failures}),
                );
            }
            let mut lines = vec!["| type | passed |".to_owned(), "|---|---|".to_owned()];
            lines.extend(
                report
                    .by_type
                    .iter()
                    .map(|(kind, t)| format!("| {kind} | {}/{} |", t.passed, t.total)),
            );
            lines.extend(report.failures.iter().map(|(name, kind, what)| {
                format!("not passed: {name} ({kind}): {}", what.join("; "))
            }));
            output::lines(lines)
        }
        Command::Panel { base_url } => {
            let who = user(cli)?;
            let secret = mnemo.create_sign_in(&who)?;
            let link = format!("{}/panel/signin?token={secret}", base_url.trim_end_matches('/'));
            if cli.json {
                output::json(&serde_json::json!({ "link": link, "user_id": who.user_id() }))
            } else {
                output::lines([
                    link,
                    format!(
                        "(signs {} in once, within {} minutes)",
                        who.user_id(),
                        mnemo::SIGN_IN_TTL.as_millis() / 60_000
                    ),
                ])
            }
        }
        Command::Reviews => {
            let memories = mnemo.overdue_reviews(&user(cli)?)?;
            if cli.json {
                return output::json(&api::MemoryList { memories });
            }
            if memories.is_empty() {
                output::notice("no memory is past its review date");
            }
            output::lines(memories.iter().map(|m| {
                let due = m.review_after.map(|t| t.to_string()).unwrap_or_default();
                format!("{}\n       review was due {due}", output::memory_line(m))
            }))
        }
        Command::Session { action } => session_command(cli, &mnemo, action),
        Command::Consolidate { quiet_for } => {
            let quiet_for = mnemo::core::duration::Ttl::parse(quiet_for, "--quiet-for")?;
            consolidation(cli, &mnemo.consolidate(&user(cli)?, quiet_for)?)
        }
    }
}

/// Prints what a consolidation wrote.
fn consolidation(cli: &Cli, report: &mnemo::ConsolidationReport) -> anyhow::Result<()> {
    if cli.json {
        output::json(&serde_json::json!({
            "sessions": report.sessions,
            "summaries": report.summaries,
            "facts": report.facts,
            "turns_deleted": report.turns_deleted,
            "model_failures": report.model_failures.iter()
                .map(|(session, error)| serde_json::json!({"session": session, "error": error}))
                .collect::<Vec<_>>(),
        }))
    } else if report.turns_deleted > 0 {
        output::lines([format!("ended incognito session: {} turns deleted", report.turns_deleted)])
    } else {
        output::lines([format!(
            "consolidated {} session(s): {} summaries, {} facts",
            report.sessions.len(),
            report.summaries.len(),
            report.facts.len()
        )])
    }
}

fn session_command(cli: &Cli, mnemo: &Mnemo, action: &SessionAction) -> anyhow::Result<()> {
    let who = user(cli)?;
    match action {
        SessionAction::List => {
            let sessions = mnemo.sessions(&who)?;
            if cli.json {
                output::json(&serde_json::json!({ "sessions": sessions }))
            } else {
                output::lines(sessions.iter().map(|s| {
                    let expires = s.expires_at.map_or("-".to_owned(), |t| t.to_string());
                    format!(
                        "{}  {} turns  {} .. {}  expires {expires}",
                        s.id, s.turns, s.first_at, s.last_at
                    )
                }))
            }
        }
        SessionAction::End { id } => consolidation(cli, &mnemo.end_session(&who, id)?),
        SessionAction::Show { id, tokenizer, compaction } => {
            let tokenizer = mnemo::Tokenizer::new(tokenizer.parse()?)?;
            let view = mnemo.session_view(&who, id, Some(&compaction.config()), &tokenizer)?;
            if view.recent.is_empty() {
                return Err(mnemo::Error::SessionNotFound(id.clone()).into());
            }
            if cli.json {
                output::json(&view)
            } else {
                let mut lines = Vec::new();
                if let Some(summary) = &view.summary {
                    lines.extend(summary.lines());
                }
                lines.extend(view.recent.iter().map(|t| t.line.clone()));
                output::lines(lines)
            }
        }
    }
}

fn run_command(cli: &Cli, mnemo: &Mnemo, action: &RunAction) -> anyhow::Result<()> {
    let who = user(cli)?;
    let change = |id: &str, change: RunChange| mnemo.change_run(&who, id, &change);
    let run = match action {
        RunAction::Start { goal } => {
            let run = mnemo.start_run(&who, goal)?;
            return if cli.json { output::json(&run) } else { output::lines([run.id]) };
        }
        RunAction::Step { id, add, done, blocked, pending } => {
            let status = |number: &Option<u32>, status| {
                number.map(|number| RunChange::SetStatus { number, status })
            };
            let step = add
                .clone()
                .map(RunChange::AddStep)
                .or_else(|| status(done, StepStatus::Done))
                .or_else(|| status(blocked, StepStatus::Blocked))
                .or_else(|| status(pending, StepStatus::Pending))
                .context("give one of --add, --done, --blocked, --pending")?;
            change(id, step)?
        }
        RunAction::Evidence { id, source, excerpt } => change(
            id,
            RunChange::AddEvidence { source_id: source.clone(), excerpt: excerpt.clone() },
        )?,
        RunAction::Tool { id, tool, reference, note } => change(
            id,
            RunChange::AddToolResult {
                tool: tool.clone(),
                reference: reference.clone(),
                note: note.clone(),
            },
        )?,
        RunAction::Show { id } => mnemo.run(&who, id)?,
        RunAction::List => {
            let runs = mnemo.runs(&who)?;
            return if cli.json {
                output::json(&api::RunList { runs })
            } else {
                output::lines(runs.iter().map(output::run_line))
            };
        }
        RunAction::End { id } => {
            let run = mnemo.end_run(&who, id)?;
            return if cli.json {
                output::json(&api::RunEnded::from(&run))
            } else {
                output::lines([format!("ended run {} (state deleted)", run.id)])
            };
        }
    };
    if cli.json { output::json(&run) } else { output::lines(output::run_detail(&run)) }
}

fn remember(cli: &Cli, mnemo: &Mnemo, args: &RememberArgs) -> anyhow::Result<()> {
    let who = user(cli)?;
    let now = mnemo.now();
    let expires_at = match (&args.ttl, &args.expires) {
        (Some(ttl), _) => Some(now.plus(mnemo::core::duration::Ttl::parse(ttl, "--ttl")?)),
        (None, expires) => parse_time(expires.as_deref(), "--expires")?,
    };
    let source_type: SourceType = match &args.source {
        Some(s) => s.parse()?,
        None => SourceType::UserStated,
    };
    let mut metadata = BTreeMap::new();
    for pair in &args.metadata {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| InvalidInput::new("--meta", format!("`{pair}` is not KEY=VALUE")))?;
        metadata.insert(key.to_owned(), value.into());
    }
    let fields = CandidateFields {
        kind: args.kind.as_deref().map(str::parse).transpose()?,
        scope: args.scope.as_deref().map(str::parse).transpose()?,
        agent_id: args.agent.clone(),
        session_id: args.session.clone(),
        subject: args.subject.clone(),
        attribute: args.attribute.clone(),
        content: args.text.clone(),
        importance: args.importance,
        confidence: args.confidence,
        sensitive: args.sensitive,
        source: Some(Source {
            source_type,
            source_ref: args.source_ref.clone(),
            captured_at: now,
            extractor: None,
        }),
        valid_from: parse_time(args.valid_from.as_deref(), "--valid-from")?,
        expires_at,
        review_after: parse_time(args.review_after.as_deref(), "--review-after")?,
        consent: args.consent.then(|| ConsentReceipt {
            granted_at: now,
            method: "explicit_remember".to_owned(),
            recorded_by: ACTOR.to_owned(),
        }),
        metadata,
        transcript: false,
        derived_from: Vec::new(),
        shared: None,
        restatement: if args.restate { Restatement::Explicit } else { Restatement::Not },
    };
    let remembered = match &args.space {
        Some(space) => mnemo.remember_in(&who, space, fields, args.mandatory)?,
        None => mnemo.remember(&who, fields)?,
    };
    let result = api::RememberResponse::from(remembered);
    if cli.json {
        return output::json(&result);
    }
    let mut line = format!("{} ({})", result.outcome, result.reason);
    if let Some(id) = &result.id {
        line = format!("{} {id} ({})", result.outcome, result.reason);
    }
    let mut lines = vec![line];
    lines.extend(result.superseded.iter().map(|id| format!("superseded {id}")));
    output::lines(lines)
}

/// Sends the server's request events (target `mnemo::request`) to stderr, one line each.
fn log_requests(format: crate::cli::RequestLog) {
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let only_requests = Targets::new().with_target("mnemo::request", LevelFilter::INFO);
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false);
    // A subscriber set twice (never here) keeps the first: nothing to report.
    let _ = match format {
        crate::cli::RequestLog::Off => return,
        crate::cli::RequestLog::Json => tracing_subscriber::registry()
            .with(fmt.json().flatten_event(true).with_filter(only_requests))
            .try_init(),
        crate::cli::RequestLog::Text => tracing_subscriber::registry()
            .with(fmt.with_ansi(false).with_filter(only_requests))
            .try_init(),
    };
}

/// Serves the HTTP API; `rates` are the requests per second each key may make and the failed
/// authentications per minute each client address may make.
fn serve(
    mnemo: Mnemo,
    addr: &str,
    rates: (f64, f64),
    limits: mnemo_server::Limits,
) -> anyhow::Result<()> {
    let (rate_limit, failed_auth_limit) = rates;
    if limits.max_connections == 0 || limits.header_timeout.is_zero() {
        return Err(
            InvalidInput::new("--max-connections/--header-timeout", "must be at least 1").into()
        );
    }
    if limits.calls_at_once == Some(0) {
        return Err(InvalidInput::new("--calls-at-once", "must be at least 1").into());
    }
    if !(rate_limit.is_finite() && rate_limit > 0.0) {
        return Err(InvalidInput::new(
            "--rate-limit",
            format!("must be a positive number of requests per second, not {rate_limit}"),
        )
        .into());
    }
    if !(failed_auth_limit.is_finite() && failed_auth_limit > 0.0) {
        return Err(InvalidInput::new(
            "--failed-auth-limit",
            format!("must be a positive number per minute, not {failed_auth_limit}"),
        )
        .into());
    }
    let keyless = !mnemo.has_live_keys().context("cannot read the API keys")?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let address = listener.local_addr()?;
        let state =
            mnemo_server::AppState::new(mnemo, mnemo_server::RateLimit::per_second(rate_limit))
                .with_failed_auth_limit(mnemo_server::RateLimit::per_minute(failed_auth_limit));
        // Signal handlers are in place before readiness is reported.
        let server = mnemo_server::serve(listener, state, limits);
        output::notice(&format!("mnemo serving on http://{address}"));
        if keyless {
            output::notice(
                "no API key exists yet, so every request will be refused (401): create one with \
                 `mnemo keys create --tenant T [--user U | --admin]`",
            );
        }
        server.await.context("server stopped")
    })
}

fn mcp(cli: &Cli, mnemo: Mnemo) -> anyhow::Result<()> {
    let who = user(cli)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let tools = mnemo_mcp::MemoryTools::new(Arc::new(mnemo), who);
    runtime.block_on(mnemo_mcp::serve_stdio(tools)).map_err(|e| format_err!("mcp: {e}"))
}

fn space_command(cli: &Cli, mnemo: &Mnemo, action: &SpaceAction) -> anyhow::Result<()> {
    let tenant = &cli.tenant;
    let member_line = |m: &mnemo::core::space::Member| {
        format!("{}  {}  (since {}, by {})", m.user_id, m.role, m.added_at, m.added_by)
    };
    match action {
        SpaceAction::Create {
            id,
            name,
            description,
            maintainers_write_directly,
            on_author_deleted,
        } => {
            let new = mnemo::NewSpace {
                id: id.clone(),
                name: name.clone(),
                description: description.clone(),
                maintainers_write_directly: *maintainers_write_directly,
                on_author_deleted: on_author_deleted.parse()?,
            };
            let space = mnemo.create_space(tenant, new)?;
            if cli.json {
                output::json(&api::SpaceEntry { space, role: None })
            } else {
                output::lines([format!("created space {} ({})", space.id, space.name)])
            }
        }
        SpaceAction::List => {
            let spaces: Vec<api::SpaceEntry> = match &cli.user {
                Some(_) => mnemo
                    .memberships(&user(cli)?)?
                    .into_iter()
                    .map(|(space, role)| api::SpaceEntry { space, role: Some(role) })
                    .collect(),
                None => mnemo
                    .spaces(tenant)?
                    .into_iter()
                    .map(|space| api::SpaceEntry { space, role: None })
                    .collect(),
            };
            if cli.json {
                return output::json(&api::SpaceList { spaces });
            }
            if spaces.is_empty() {
                output::notice("no space");
            }
            output::lines(spaces.iter().map(|e| {
                let role = e.role.map(|r| format!("  ({r})")).unwrap_or_default();
                format!("{}  {}{role}", e.space.id, e.space.name)
            }))
        }
        SpaceAction::Show { id } => {
            let space = mnemo.space(tenant, id)?;
            let members = mnemo.members(tenant, id)?;
            if cli.json {
                return output::json(&api::SpaceDetail { space, members });
            }
            let mut lines = vec![
                format!("space:        {} ({})", space.id, space.name),
                format!("description:  {}", space.description.as_deref().unwrap_or("-")),
                format!(
                    "writes:       {}",
                    if space.maintainers_write_directly {
                        "a maintainer's apply at once; a contributor's wait for review"
                    } else {
                        "every write waits for a maintainer's review"
                    }
                ),
                format!(
                    "on deletion:  an author's approved contributions {}",
                    match space.on_author_deleted {
                        mnemo::core::space::OnAuthorDeleted::Keep => {
                            "stay, attributed to a forgotten author"
                        }
                        mnemo::core::space::OnAuthorDeleted::Remove => "are deleted",
                    }
                ),
                format!("created:      {} by {}", space.created_at, space.created_by),
                format!("who can see its memories ({} members):", members.len()),
            ];
            lines.extend(members.iter().map(|m| format!("  {}", member_line(m))));
            output::lines(lines)
        }
        SpaceAction::Delete { id } => {
            let receipt = mnemo.delete_space(tenant, id)?;
            if cli.json {
                return output::json(&api::SpaceDeleted { deleted: id.clone(), receipt });
            }
            let mut lines = vec![format!("deleted space {id}")];
            lines.extend(output::receipt_lines(&receipt));
            output::lines(lines)
        }
        SpaceAction::Member { action } => match action {
            MemberAction::Add { space, user, role } => {
                let member = mnemo.add_member(tenant, space, user, role.parse()?)?;
                if cli.json {
                    output::json(&member)
                } else {
                    output::lines([format!(
                        "{} is {} of space {space}",
                        member.user_id, member.role
                    )])
                }
            }
            MemberAction::Remove { space, user } => {
                mnemo.remove_member(tenant, space, user)?;
                if cli.json {
                    output::json(&api::MemberRemoved {
                        space_id: space.clone(),
                        user_id: user.clone(),
                    })
                } else {
                    output::lines([format!("removed {user} from space {space}")])
                }
            }
            MemberAction::List { space } => {
                let members = mnemo.members(tenant, space)?;
                if cli.json {
                    return output::json(&api::MemberList { members });
                }
                if members.is_empty() {
                    output::notice("the space has no members");
                }
                output::lines(members.iter().map(member_line))
            }
        },
    }
}

fn keys(cli: &Cli, mnemo: &Mnemo, action: &KeysAction) -> anyhow::Result<()> {
    match action {
        KeysAction::Create { admin, rate } => {
            let (secret, key) =
                mnemo.create_key(&cli.tenant, cli.user.as_deref(), *admin, *rate)?;
            if cli.json {
                let mut value = serde_json::to_value(&key)?;
                value["key"] = serde_json::Value::String(secret);
                output::json(&value)
            } else {
                output::lines([
                    format!(
                        "created {} for tenant {}{}",
                        key.id,
                        key.tenant,
                        key.user_id.as_ref().map(|u| format!(", user {u}")).unwrap_or_default()
                    ),
                    secret,
                    "(shown once: only its hash is stored)".to_owned(),
                ])
            }
        }
        KeysAction::List => {
            let keys = mnemo.list_keys(&cli.tenant)?;
            if cli.json {
                output::json(&serde_json::json!({ "keys": keys }))
            } else {
                output::lines(keys.iter().map(|k| {
                    format!(
                        "{}  {}{}  {}{}{}",
                        k.id,
                        k.user_id.as_deref().map_or("tenant".to_owned(), |u| format!("user {u}")),
                        if k.admin { " (admin)" } else { "" },
                        k.created_at,
                        k.rate.map(|r| format!("  {r}/s")).unwrap_or_default(),
                        if k.revoked_at.is_some() { "  revoked" } else { "" }
                    )
                }))
            }
        }
        KeysAction::Revoke { id } => {
            mnemo.revoke_key(&cli.tenant, id)?;
            if cli.json {
                output::json(&serde_json::json!({ "revoked": id }))
            } else {
                output::lines([format!("revoked {id}")])
            }
        }
    }
}

/// Reads a file, or standard input for `-`, naming the file in errors.
fn read_input(file: &std::path::Path, what: &str) -> anyhow::Result<String> {
    let name = file.display().to_string();
    let text = if name == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| InvalidInput::new(what, format!("cannot read stdin: {e}")))?
    } else {
        std::fs::read_to_string(file)
            .map_err(|e| InvalidInput::new(what, format!("cannot read {name}: {e}")))?
    };
    Ok(text)
}

fn ingest(cli: &Cli, mnemo: &Mnemo, args: &IngestArgs) -> anyhow::Result<()> {
    let who = user(cli)?;
    let text = read_input(&args.file, "ingest file")?;
    let mut messages = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let message: mnemo::core::transcript::Message =
            serde_json::from_str(line).map_err(|e| {
                InvalidInput::new("ingest file", format!("line {}: not a message: {e}", number + 1))
            })?;
        messages.push(message);
    }
    let options = mnemo::IngestOptions {
        incognito: args.incognito,
        retention: mnemo::core::duration::Ttl::parse(&args.retention, "--retention")?,
        ..mnemo::IngestOptions::new(args.session.clone())
    };
    let report = mnemo.ingest(&who, &messages, &options)?;
    let response = api::IngestResponse::from(report);
    if cli.json {
        return output::json(&response);
    }
    let mut lines = vec![match response.skipped {
        Some(reason) => format!("nothing read or written ({reason})"),
        None => format!(
            "stored {} turns ({} secrets redacted), {} candidate memories",
            response.turns_stored,
            response.secrets_redacted,
            response.candidates.len()
        ),
    }];
    lines.extend(response.failures.iter().map(|f| {
        format!(
            "  extraction failed for message {}: {} (turn kept; ingest again to retry)",
            f.message, f.error
        )
    }));
    lines.extend(response.candidates.iter().map(|c| {
        format!(
            "  {} ({}) {}  {}",
            c.outcome,
            c.reason,
            c.id.as_ref().map_or("-".to_owned(), ToString::to_string),
            c.content
        )
    }));
    output::lines(lines)
}

/// An `--as-of` option as a time.
fn as_of(text: Option<&str>) -> anyhow::Result<Option<mnemo::core::Timestamp>> {
    Ok(text.map(|t| mnemo::core::Timestamp::parse(t, "--as-of")).transpose()?)
}

fn search(cli: &Cli, mnemo: &Mnemo, args: &SearchArgs) -> anyhow::Result<()> {
    let request = mnemo::SearchRequest {
        query: args.query.clone(),
        k: args.k,
        filter: mnemo::core::ports::SearchFilter {
            kind: args.kind.as_deref().map(str::parse).transpose()?,
            scope: args.scope.as_deref().map(str::parse).transpose()?,
            exclude_sensitive: false,
        },
        min_relevance: args.min_relevance,
        as_of: as_of(args.as_of.as_deref())?,
        spaces: args.spaces.clone(),
    };
    let hits = mnemo.search(&user(cli)?, &request)?;
    let w = mnemo.retrieval().weights;
    let weights = args.explain.then_some((w.relevance, w.recency, w.importance));
    let response = api::SearchResponse::new(hits, weights);
    if cli.json {
        return output::json(&response);
    }
    if response.results.is_empty() {
        output::notice("no memory is relevant to that query");
    }
    output::lines(response.results.iter().map(output::search_line))
}

fn context(cli: &Cli, mnemo: &Mnemo, args: &ContextArgs) -> anyhow::Result<()> {
    let name = args.tokenizer.parse()?;
    // The tokenizer's table (0.14 s) loads beside the query encoder (0.17 s).
    let tokenizer = std::thread::scope(|scope| {
        let loading = scope.spawn(|| mnemo::Tokenizer::new(name));
        let encoder = mnemo.load_query_encoder();
        let tokenizer = loading.join().map_err(|_| anyhow::anyhow!("loading the tokenizer failed"));
        encoder?;
        anyhow::Ok(tokenizer??)
    })?;
    let request = mnemo::ContextRequest {
        query: args.query.clone(),
        budget: args.budget,
        session: args.session.clone(),
        as_of: as_of(args.as_of.as_deref())?,
        compaction: Some(args.compaction.config()),
        spaces: args.spaces.clone(),
    };
    let block = mnemo.context(&user(cli)?, &request, &tokenizer)?;
    let response =
        api::ContextResponse::new(block, mnemo::core::context::TokenCounter::name(&tokenizer));
    if cli.json {
        return output::json(&response);
    }
    let mut lines = vec![response.rendered.clone()];
    lines.push(format!(
        "({} of {} tokens, {}; memories: {})",
        response.total_tokens,
        response.budget,
        response.tokenizer,
        response.memory_ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    ));
    output::lines(lines)
}

fn list(cli: &Cli, mnemo: &Mnemo, args: &ListArgs) -> anyhow::Result<()> {
    let filter = ListFilter {
        kind: args.kind.as_deref().map(str::parse).transpose()?,
        status: args.status.as_deref().map(str::parse).transpose()?,
        scope: match &args.space {
            Some(space) => Some(format!("space:{space}").parse()?),
            None => args.scope.as_deref().map(str::parse).transpose()?,
        },
        include_expired: args.include_expired,
        ..Default::default()
    };
    let memories = match as_of(args.as_of.as_deref())? {
        None => mnemo.list(&user(cli)?, &filter)?,
        Some(at) => mnemo.list_as_of(&user(cli)?, &filter, at)?,
    };
    if cli.json {
        output::json(&api::MemoryList { memories })
    } else {
        if memories.is_empty() {
            output::notice("no memories match");
        }
        output::lines(memories.iter().map(output::memory_line))
    }
}

fn import(
    cli: &Cli,
    mnemo: &Mnemo,
    file: &std::path::Path,
    allow_forgotten: bool,
) -> anyhow::Result<()> {
    let name = file.display().to_string();
    let text = read_input(file, "import file")?;
    let document: ExportDocument = serde_json::from_str(&text).map_err(|e| {
        InvalidInput::new("import file", format!("{name} is not a mnemo export: {e}"))
    })?;
    if let Some(user) = &cli.user
        && user.trim() != document.user_id
    {
        return Err(InvalidInput::new(
            "--user",
            format!("`{user}` differs from the export's user `{}`", document.user_id),
        )
        .into());
    }
    let who = UserRef::new(&cli.tenant, &document.user_id)?;
    let report = mnemo.import(&who, document, allow_forgotten)?;
    if cli.json {
        output::json(&api::ImportResponse::from(report))
    } else {
        let mut lines =
            vec![format!("imported {} memories for {}", report.imported, who.user_id())];
        for (list, what) in [(&report.refused, "refused"), (&report.held, "held for confirmation")]
        {
            for (id, reason) in list {
                lines.push(format!("{what}: {id} ({})", reason.explanation()));
            }
        }
        if !report.forgotten.is_empty() {
            lines.push(format!(
                "left out {} the user had asked to forget (--allow-forgotten restores them): {}",
                report.forgotten.len(),
                report.forgotten.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ));
        }
        output::lines(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn redact_hides_only_the_password() {
        assert_eq!(
            redact("postgres://mnemo:s3cret@db.internal:5432/mnemo"),
            "postgres://mnemo:***@db.internal:5432/mnemo"
        );
        assert_eq!(redact("postgres://mnemo@db/mnemo"), "postgres://mnemo@db/mnemo");
        assert_eq!(redact("/var/lib/mnemo.db"), "/var/lib/mnemo.db");
    }
}
