//! Project tasks: `cargo xtask eval locomo` measures retrieval quality and latency on the
//! LoCoMo benchmark through the real library (SQLite store, built-in embedder).

mod bench;
mod extraction;
mod load;
mod locomo;
mod notebook;
mod personal;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Write generated files (docs/openapi.json, the built-in embedder's shipped
    /// calibration); with --check, fail if they drifted.
    Codegen {
        /// Compare instead of writing.
        #[arg(long)]
        check: bool,
    },
    /// Speed of the stores: ingest throughput, search latency, index recall, memory.
    Bench {
        /// Memories to store in all.
        #[arg(long, default_value_t = 100_000)]
        memories: usize,
        /// Users to spread them over.
        #[arg(long, default_value_t = 1)]
        users: usize,
        /// Searches to time.
        #[arg(long, default_value_t = 1000)]
        queries: usize,
        /// Check the vector index's recall against exact search on every Nth query (0: never).
        #[arg(long, default_value_t = 10)]
        recall_every: usize,
        /// Keep the database here; an existing file is searched without ingesting again.
        #[arg(long)]
        keep: Option<PathBuf>,
        /// Also run on the PostgreSQL server at this URL (in a fresh schema), side by side.
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// Turns of the conversation-ingest case (0: skip it).
        #[arg(long, default_value_t = 3000)]
        conversation_turns: usize,
        /// The LoCoMo JSON file whose turns the conversation-ingest case replays.
        #[arg(long, default_value = "../shared/data/locomo/locomo-dev.json")]
        conversation: PathBuf,
        /// Shared spaces of user 0, each with as many memories as a user has: searches of
        /// user 0's own notebook are timed beside searches of it with every space (0: skip).
        #[arg(long, default_value_t = 0)]
        spaces: usize,
        /// Search with the built-in static model for queries too (`--embedder static`)
        /// instead of the built-in embedder's MiniLM query encoder; stored vectors are the same.
        #[arg(long)]
        static_queries: bool,
    },
    /// Load benchmark of `mnemo serve` on loopback.
    Load {
        /// Concurrent clients.
        #[arg(long, default_value_t = 200)]
        clients: usize,
        /// Memories stored before the run.
        #[arg(long, default_value_t = 100_000)]
        memories: usize,
        /// Seconds to run.
        #[arg(long, default_value_t = 30)]
        seconds: u64,
        /// Run on the PostgreSQL server at this URL (in a fresh schema) instead of SQLite.
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// Server nodes sharing the store (more than one needs --postgres).
        #[arg(long, default_value_t = 1)]
        nodes: usize,
        /// Percent of requests that write a memory; the rest search (0: search only).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u8).range(0..=100))]
        write_percent: u8,
    },
    /// Train the self-disclosure selector on LoCoMo's observations and write its weights.
    TrainDisclosure {
        /// The LoCoMo JSON file.
        #[arg(long, default_value = "../shared/data/locomo/locomo-dev.json")]
        data: PathBuf,
        /// Where the weights go.
        #[arg(long, default_value = "models/extractor/disclosure.json")]
        out: PathBuf,
        /// Fail if the file differs from what training produces instead of writing it.
        #[arg(long)]
        check: bool,
    },
    /// Retrieval and extraction evaluations.
    Eval {
        #[command(subcommand)]
        eval: Eval,
    },
}

#[derive(Debug, Subcommand)]
enum Eval {
    /// LoCoMo: every turn an episodic memory, every category 1-4 question a query.
    Locomo {
        /// The LoCoMo JSON file.
        #[arg(long, default_value = "../shared/data/locomo/locomo-dev.json")]
        data: PathBuf,
        /// Also write the figures as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// `sessions`: each session stored at its date, questions a day after the last one,
        /// default search settings; `fixed`: one instant, gate off (the ranking alone).
        #[arg(long, value_enum, default_value = "sessions")]
        clock: locomo::ClockMode,
        /// `library`: in-process; `http`: the real `mnemo serve` binary (see --mnemo),
        /// restarted with `--now` at each session's date.
        #[arg(long, value_enum, default_value = "library")]
        via: locomo::Via,
        /// The mnemo binary for `--via http`.
        #[arg(long, default_value = "target/release/mnemo")]
        mnemo: PathBuf,
        /// In-process, embed with all-MiniLM-L6-v2 from this model directory instead of the
        /// built-in model.
        #[arg(long)]
        minilm_dir: Option<PathBuf>,
    },
    /// The personal-facts workload: first-person facts among chatter, one question per
    /// category (top-3 hit when stated, abstention when never mentioned).
    PersonalFacts {
        /// The workload file.
        #[arg(long, default_value = "testdata/personal_facts_workload.json")]
        data: PathBuf,
        /// Notebook sizes (facts per user).
        #[arg(long, value_delimiter = ',', default_value = "10,100,1000")]
        sizes: Vec<usize>,
        /// Users per size (at most 20 at 1,000 facts per user).
        #[arg(long, default_value_t = 100)]
        users: usize,
        /// Also run with all-MiniLM-L6-v2 in-process from this model directory.
        #[arg(long, env = "MNEMO_MINILM_DIR")]
        minilm_dir: Option<PathBuf>,
        /// Write each size's users (statements in order, questions with the statement that
        /// answers them) to DIR/personal-facts-N.json instead of measuring, for running the
        /// same workload through other memory systems.
        #[arg(long)]
        dump: Option<PathBuf>,
        /// Print each question that missed its fact: the three results it got (fused score,
        /// BM25F, cosine) and where the fact ranked among the first 100 with the gate off.
        #[arg(long)]
        show_misses: bool,
    },
    /// Extraction against LoCoMo's observations: leave-one-conversation-out and shipped
    /// weights, recall of observations and precision of memories.
    Extraction {
        /// The LoCoMo JSON file.
        #[arg(long, default_value = "../shared/data/locomo/locomo-dev.json")]
        data: PathBuf,
        /// Also measure the shipped weights through this `mnemo` binary's `ingest` command.
        #[arg(long)]
        mnemo: Option<PathBuf>,
    },
}

/// Writes or checks `docs/openapi.json` against the document the code generates.
fn codegen(check: bool) -> anyhow::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    openapi(&root, check)?;
    builtin_calibration(&root, check)
}

/// `docs/openapi.json`, from the API's types.
fn openapi(root: &std::path::Path, check: bool) -> anyhow::Result<()> {
    let path = root.join("docs/openapi.json");
    let generated = serde_json::to_string_pretty(&mnemo_api::openapi::document())? + "\n";
    if check {
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        anyhow::ensure!(
            committed == generated,
            "docs/openapi.json is out of date: run `cargo xtask codegen` and commit it"
        );
        println!("docs/openapi.json is up to date");
        return Ok(());
    }
    std::fs::create_dir_all(root.join("docs"))?;
    std::fs::write(&path, generated)?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The built-in embedder's shipped calibration (`models/minilm-l6-fit-256/
/// query_calibration.bin`), computed from its encoder: checked within a tolerance, since the
/// encoder's vector code and plain loop differ in the last bits.
fn builtin_calibration(root: &std::path::Path, check: bool) -> anyhow::Result<()> {
    use mnemo::core::calibration::Calibration;
    let path = root.join("models/minilm-l6-fit-256/query_calibration.bin");
    let computed = mnemo_embed::QueryEncoded::builtin()?
        .computed_calibration()
        .ok_or_else(|| anyhow::anyhow!("the built-in query encoder could not be calibrated"))?;
    if check {
        let committed = Calibration::from_bytes(&std::fs::read(&path)?)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        anyhow::ensure!(
            committed.agrees_with(&computed, 1e-4),
            "{} is out of date: run `cargo xtask codegen` and commit it",
            path.display()
        );
        println!("{} is up to date", path.display());
        return Ok(());
    }
    std::fs::write(&path, computed.to_bytes())?;
    println!("wrote {}", path.display());
    Ok(())
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().task {
        Task::Codegen { check } => codegen(check),
        Task::Load { clients, memories, seconds, postgres, nodes, write_percent } => {
            load::run(clients, memories, seconds, postgres.as_deref(), nodes, write_percent)
        }
        Task::Eval { eval: Eval::Locomo { data, json, clock, via, mnemo, minilm_dir } } => {
            locomo::run(&data, json.as_deref(), clock, via, &mnemo, minilm_dir.as_deref())
        }
        Task::TrainDisclosure { data, out, check } => extraction::train_command(&data, &out, check),
        Task::Eval {
            eval: Eval::PersonalFacts { data, sizes, users, minilm_dir, dump, show_misses },
        } => match dump {
            Some(dir) => personal::dump(&data, &sizes, users, &dir),
            None => personal::run(&data, &sizes, users, minilm_dir.as_deref(), show_misses),
        },
        Task::Eval { eval: Eval::Extraction { data, mnemo } } => {
            extraction::eval_command(&data, mnemo.as_deref())
        }
        Task::Bench {
            memories,
            users,
            queries,
            recall_every,
            keep,
            postgres,
            conversation_turns,
            conversation,
            spaces,
            static_queries,
        } => {
            if conversation_turns > 0 {
                extraction::conversation_ingest(&conversation, conversation_turns)?;
            }
            let embedder = if static_queries {
                mnemo::builtin_static_embedder()?
            } else {
                mnemo::builtin_embedder()?
            };
            let workload = bench::Workload { memories, users, queries, recall_every, spaces };
            bench::run(&workload, keep.as_deref(), postgres.as_deref(), &embedder)
        }
    }
}
