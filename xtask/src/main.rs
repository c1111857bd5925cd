//! Project tasks: `cargo xtask eval locomo` measures retrieval quality and latency on the
//! LoCoMo benchmark through the real library (SQLite store, built-in embedder).

mod bench;
mod locomo;

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
    /// Speed of the embedded default: ingest throughput, search latency, index recall, memory.
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
    },
    /// Retrieval evaluations.
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
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().task {
        Task::Eval { eval: Eval::Locomo { data, json } } => locomo::run(&data, json.as_deref()),
        Task::Bench { memories, users, queries, recall_every, keep } => {
            bench::run(memories, users, queries, recall_every, keep.as_deref())
        }
    }
}
