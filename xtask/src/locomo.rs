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

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, format_err};
use mnemo::core::Timestamp;
use serde_json::Value;

use crate::notebook::{Library, Notebook, Server, Turn};

const KS: [usize; 4] = [1, 5, 10, 20];
/// Which of [`KS`] NDCG and latency are measured at (k = 10).
const NDCG_CUTOFF: usize = 2;
const CATEGORIES: [(u64, &str); 4] =
    [(1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop")];

#[derive(Default, serde::Serialize)]
struct Tally {
    questions: usize,
    any: [usize; 4],
    all: [usize; 4],
    ndcg10: f64,
}

impl Tally {
    /// Scores one question: `ranked[i]` is what a search for `KS[i]` results returned.
    fn add(&mut self, ranked: &[Vec<String>; 4], evidence: &HashSet<String>) {
        self.questions += 1;
        for (i, k) in KS.iter().enumerate() {
            let found = ranked[i].iter().take(*k).filter(|r| evidence.contains(*r)).count();
            self.any[i] += usize::from(found > 0);
            self.all[i] += usize::from(found == evidence.len());
        }
        let ranked = &ranked[NDCG_CUTOFF];
        let dcg: f64 = ranked
            .iter()
            .take(10)
            .enumerate()
            .filter(|(_, r)| evidence.contains(*r))
            .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        let ideal: f64 = (0..evidence.len().min(10)).map(|i| 1.0 / (i as f64 + 2.0).log2()).sum();
        self.ndcg10 += dcg / ideal;
    }

    fn row(&self, name: &str) -> String {
        let n = self.questions.max(1) as f64;
        let rate = |x: usize| format!("{:.3}", x as f64 / n);
        format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3} |",
            self.questions,
            rate(self.any[0]),
            rate(self.any[1]),
            rate(self.any[2]),
            rate(self.any[3]),
            rate(self.all[0]),
            rate(self.all[1]),
            rate(self.all[2]),
            rate(self.all[3]),
            self.ndcg10 / n
        )
    }
}

/// Parses LoCoMo's session time, e.g. `1:56 pm on 8 May, 2023`.
pub(crate) fn session_time(text: &str) -> anyhow::Result<Timestamp> {
    let bad = || format_err!("unreadable session time `{text}`");
    let (clock, date) = text.split_once(" on ").ok_or_else(bad)?;
    let (hm, meridiem) = clock.trim().split_once(' ').ok_or_else(bad)?;
    let (h, m) = hm.split_once(':').ok_or_else(bad)?;
    let mut hour: u32 = h.parse()?;
    let minute: u32 = m.parse()?;
    match meridiem.to_lowercase().as_str() {
        "pm" if hour != 12 => hour += 12,
        "am" if hour == 12 => hour = 0,
        _ => {}
    }
    let parts: Vec<&str> = date.split([' ', ',']).filter(|p| !p.is_empty()).collect();
    let [day, month, year] = parts.as_slice() else { return Err(bad()) };
    let month = mnemo::core::retrieval::MONTH_NAMES
        .iter()
        .position(|m| *m == month.to_lowercase())
        .ok_or_else(bad)?
        + 1;
    let rfc = format!("{year}-{month:02}-{:02}T{hour:02}:{minute:02}:00Z", day.parse::<u32>()?);
    Ok(Timestamp::parse(&rfc, "session time")?)
}

/// The text stored for a turn.
fn turn_text(turn: &Value) -> Option<String> {
    let speaker = turn["speaker"].as_str()?;
    let mut text = format!("{speaker}: {}", turn["text"].as_str().unwrap_or_default().trim());
    if let Some(caption) = turn["blip_caption"].as_str() {
        text.push_str(&format!(" [shares an image: {caption}]"));
    }
    Some(text)
}

/// How the evaluation sets the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ClockMode {
    /// Each session stored at its date, questions asked a day after the last session, gate on.
    Sessions,
    /// Everything stored and searched at one instant, gate off: the ranking alone.
    Fixed,
}

const DAY_MS: i64 = 86_400_000;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
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
) -> anyhow::Result<()> {
    let raw =
        std::fs::read_to_string(data).with_context(|| format!("cannot read {}", data.display()))?;
    let samples: Vec<Value> =
        serde_json::from_str(&raw).context("LoCoMo file is not a JSON list")?;
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("locomo.db");
    let fixed = Timestamp::parse("2024-01-01T00:00:00Z", "clock")?;
    let mut notebook: Box<dyn Notebook> = match via {
        Via::Library => Box::new(Library::open(&db, fixed)?),
        Via::Http => {
            // Over HTTP a turn's date is the server's clock: only session clocks say it.
            anyhow::ensure!(mode == ClockMode::Sessions, "--via http needs --clock sessions");
            Box::new(Server::open(binary, &db)?)
        }
    };

    let mut overall = Tally::default();
    let mut per_category: BTreeMap<u64, Tally> = BTreeMap::new();
    let mut latencies_ms = Vec::new();
    let mut ingested = 0usize;
    let ingest_start = Instant::now();
    let mut skipped_questions = 0usize;
    let mut held: BTreeMap<String, usize> = BTreeMap::new();
    for sample in &samples {
        let id = sample["sample_id"].as_str().ok_or_else(|| format_err!("sample without id"))?;
        let conversation = &sample["conversation"];
        let mut turn_ids = HashSet::new();
        let mut sessions: Vec<(Option<Timestamp>, Vec<Turn>)> = Vec::new();
        let mut session = 1;
        while let Some(turns) = conversation[format!("session_{session}")].as_array() {
            let date = conversation[format!("session_{session}_date_time")]
                .as_str()
                .map(session_time)
                .transpose()?;
            let mut batch = Vec::new();
            for turn in turns {
                let (Some(text), Some(dia)) = (turn_text(turn), turn["dia_id"].as_str()) else {
                    continue;
                };
                batch.push(Turn {
                    text,
                    reference: dia.to_owned(),
                    speaker: turn["speaker"].as_str().map(str::to_owned),
                    session: format!("session_{session}"),
                    said_at: date,
                });
                turn_ids.insert(dia.to_owned());
            }
            sessions.push((date, batch));
            session += 1;
        }
        let mut last = fixed;
        for (date, batch) in sessions {
            if let (ClockMode::Sessions, Some(date)) = (mode, date) {
                notebook.set_clock(date)?;
                last = last.max(date);
            }
            for (stored, turn) in notebook.remember(id, &batch)?.into_iter().zip(&batch) {
                anyhow::ensure!(
                    stored.written,
                    "turn {} of {id} was not stored: {} ({:?})",
                    turn.reference,
                    stored.reason,
                    turn.text
                );
                if stored.pending {
                    *held.entry(stored.reason).or_insert(0) += 1;
                }
                ingested += 1;
            }
        }
        notebook.set_clock(match mode {
            ClockMode::Sessions => Timestamp::from_millis(last.as_millis() + DAY_MS),
            ClockMode::Fixed => fixed,
        })?;
        for qa in sample["qa"].as_array().into_iter().flatten() {
            let category = qa["category"].as_u64().unwrap_or(0);
            if !(1..=4).contains(&category) {
                continue;
            }
            let evidence: HashSet<String> = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .flat_map(|e| e.split(';').map(|p| p.trim().to_owned()).collect::<Vec<_>>())
                .filter(|e| turn_ids.contains(e))
                .collect();
            let Some(question) = qa["question"].as_str() else { continue };
            if evidence.is_empty() {
                skipped_questions += 1;
                continue;
            }
            // Each cutoff is its own search for that many results, as a caller asks for
            // them: relevance picks the k, the blend orders them.
            let mut ranked: [Vec<String>; 4] = Default::default();
            let min_relevance = match mode {
                ClockMode::Sessions => None,
                ClockMode::Fixed => Some(0.0),
            };
            for (k, ranked) in KS.iter().zip(&mut ranked) {
                let start = Instant::now();
                *ranked = notebook.search(id, question, *k, min_relevance)?;
                if *k == KS[NDCG_CUTOFF] {
                    latencies_ms.push(start.elapsed().as_secs_f64() * 1000.0);
                }
            }
            overall.add(&ranked, &evidence);
            per_category.entry(category).or_default().add(&ranked, &evidence);
        }
    }
    let ingest_secs = ingest_start.elapsed().as_secs_f64();
    latencies_ms.sort_by(f64::total_cmp);
    println!(
        "LoCoMo retrieval: {} conversations, {ingested} turns, {} questions ({skipped_questions} skipped: no valid evidence)",
        samples.len(),
        overall.questions
    );
    println!();
    println!(
        "| category | n | any@1 | any@5 | any@10 | any@20 | all@1 | all@5 | all@10 | all@20 | NDCG@10 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (category, name) in CATEGORIES {
        if let Some(t) = per_category.get(&category) {
            println!("{}", t.row(&format!("{category} {name}")));
        }
    }
    println!("{}", overall.row("all"));
    println!();
    let (p50, p95) = (percentile(&latencies_ms, 0.5), percentile(&latencies_ms, 0.95));
    let path = match via {
        Via::Library => "in-process",
        Via::Http => "over HTTP from a client on loopback",
    };
    println!("search latency (ms, {path}, k=10): p50 {p50:.2}, p95 {p95:.2}");
    println!("ingest+search wall time {ingest_secs:.1} s");
    let held: Vec<String> =
        held.iter().filter(|(_, n)| **n > 0).map(|(r, n)| format!("{r} {n}")).collect();
    println!(
        "turns held as pending by the policy gate (not searchable): {}",
        if held.is_empty() { "none".to_owned() } else { held.join(", ") }
    );
    if let Some(path) = json_out {
        let figures = serde_json::json!({
            "overall": overall,
            "per_category": per_category,
            "latency_ms": {"p50": p50, "p95": p95},
            "turns": ingested,
        });
        std::fs::write(path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}
