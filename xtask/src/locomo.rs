//! `cargo xtask eval locomo`: the library's LoCoMo run (`mnemo::eval::locomo`, also `mnemo
//! eval locomo FILE`) on a fresh SQLite file, or through the real binary over HTTP.
//!
//! The LoCoMo retrieval benchmark, run as a user would. Each conversation is one user; each
//! turn is remembered as an episodic memory ("Speaker: text", plus the image caption when the
//! turn shares one) with the clock at its session's date, its session id, its speaker and the
//! participants' consent, and its `dia_id` as source ref. Each question of categories 1-4 is
//! then searched a day after the conversation's last session with the default search
//! settings (relevance gate on), once per cutoff k in 1, 5, 10, 20 as a caller asking for k
//! results would, and scored against its evidence turns: any@k, all@k, NDCG@10 (of the
//! k = 10 search), per category, and search latency.
//!
//! `--clock fixed` stores and searches everything at one instant with the gate off, which
//! measures the ranking alone (every record the same age).

use std::path::Path;

use anyhow::{Context, format_err};
use mnemo::core::Timestamp;
use mnemo::eval::locomo::{self as bench, LibraryNotebook, Notebook};
use serde_json::Value;

use crate::notebook::Server;

/// The tenant every evaluated conversation is a user of.
pub(crate) const TENANT: &str = "locomo";

/// Parses LoCoMo's session time, e.g. `1:56 pm on 8 May, 2023`.
pub(crate) fn session_time(text: &str) -> anyhow::Result<Timestamp> {
    bench::session_time(text).map_err(|e| format_err!("{e}"))
}

/// How the evaluation sets the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ClockMode {
    /// Each session stored at its date, questions asked a day after the last session, gate on.
    Sessions,
    /// Everything stored and searched at one instant, gate off: the ranking alone.
    Fixed,
}

/// Where the evaluation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Via {
    /// The library in-process.
    Library,
    /// The real `mnemo serve` binary over HTTP, restarted with `--now` at each session.
    Http,
}

pub(crate) fn run(
    data: &Path,
    json_out: Option<&Path>,
    mode: ClockMode,
    via: Via,
    binary: &Path,
    minilm_dir: Option<&Path>,
) -> anyhow::Result<()> {
    let raw =
        std::fs::read_to_string(data).with_context(|| format!("cannot read {}", data.display()))?;
    let samples: Vec<Value> =
        serde_json::from_str(&raw).context("LoCoMo file is not a JSON list")?;
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("locomo.db");
    let fixed = Timestamp::parse("2024-01-01T00:00:00Z", "clock")?;
    let mode = match mode {
        ClockMode::Sessions => bench::ClockMode::Sessions,
        ClockMode::Fixed => bench::ClockMode::Fixed,
    };
    let start = std::time::Instant::now();
    let mut notebook: Box<dyn Notebook> = match via {
        Via::Library => {
            let clock = std::sync::Arc::new(mnemo::core::FixedClock(fixed));
            let embedder = match minilm_dir {
                Some(dir) => mnemo::minilm_embedder(dir)?,
                None => mnemo::builtin_embedder()?,
            };
            let mnemo = mnemo::Mnemo::open_sqlite(&db, Some(embedder), clock, "locomo")?;
            Box::new(LibraryNotebook::new(&mnemo, TENANT, fixed))
        }
        Via::Http => {
            anyhow::ensure!(minilm_dir.is_none(), "--minilm-dir is for the in-process run");
            // Over HTTP a turn's date is the server's clock: only session clocks say it.
            anyhow::ensure!(
                mode == bench::ClockMode::Sessions,
                "--via http needs --clock sessions"
            );
            Box::new(Server::open(binary, &db)?)
        }
    };
    let report =
        bench::run(&samples, notebook.as_mut(), mode, fixed).map_err(|e| format_err!("{e}"))?;
    for line in report.lines() {
        println!("{line}");
    }
    let path = match via {
        Via::Library => "in-process",
        Via::Http => "over HTTP from a client on loopback",
    };
    println!("(searches {path}; ingest and search took {:.1} s)", start.elapsed().as_secs_f64());
    if let Some(path) = json_out {
        let figures = serde_json::json!({
            "overall": report.overall,
            "per_category": report.per_category,
            "latency_ms": {"p50": report.latency_ms.0, "p95": report.latency_ms.1},
            "turns": report.turns,
        });
        std::fs::write(path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}
