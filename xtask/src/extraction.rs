//! The self-disclosure selector's training and the extraction evaluation on LoCoMo's
//! observations.
//!
//! `cargo xtask train-disclosure` trains the selector on every turn of the dev half (a turn
//! an annotator drew an observation from is a positive) and writes
//! `models/extractor/disclosure.json`; `--check` fails when the committed file differs from
//! what training produces now, byte for byte.
//!
//! `cargo xtask eval extraction` ingests each conversation through the library's real
//! ingestion (rule-based extractor, policy gate, consistency rules), once with each speaker as
//! the user and the other as the assistant, each session at its date, and scores the
//! memories against the observations: recall is the share of the user's observations whose
//! turn yields a memory, precision the share of memories drawn from a turn that carries one
//! of the user's observations. Leave-one-conversation-out runs train on the other
//! conversations; the shipped-weights run uses the committed file on all of them.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, format_err};
use mnemo::core::disclosure::{Selector, TrainConfig};
use mnemo::core::duration::Ttl;
use mnemo::core::transcript::{Message, Role};
use mnemo::core::{ManualClock, UserRef};
use mnemo::{IngestOptions, Mnemo};
use serde_json::Value;

use crate::locomo::session_time;

/// Version recorded in the weights file.
const VERSION: &str = "disclosure/v1 (LoCoMo dev observations)";

/// One turn of a conversation.
struct Turn {
    dia: String,
    speaker: String,
    text: String,
}

/// One conversation: its speakers, sessions (date and turns) and how many observations each
/// turn carries.
struct Conversation {
    id: String,
    speakers: [String; 2],
    sessions: Vec<(mnemo::core::Timestamp, Vec<Turn>)>,
    observations: HashMap<String, usize>,
}

fn load(data: &Path) -> anyhow::Result<Vec<Conversation>> {
    let raw =
        std::fs::read_to_string(data).with_context(|| format!("cannot read {}", data.display()))?;
    let samples: Vec<Value> =
        serde_json::from_str(&raw).context("LoCoMo file is not a JSON list")?;
    let mut out = Vec::new();
    for sample in &samples {
        let id = sample["sample_id"].as_str().ok_or_else(|| format_err!("sample without id"))?;
        let conversation = &sample["conversation"];
        let speaker = |k: &str| {
            conversation[k].as_str().map(str::to_owned).ok_or_else(|| format_err!("{id}: no {k}"))
        };
        let speakers = [speaker("speaker_a")?, speaker("speaker_b")?];
        let mut sessions = Vec::new();
        let mut n = 1;
        while let Some(turns) = conversation[format!("session_{n}")].as_array() {
            let date = conversation[format!("session_{n}_date_time")]
                .as_str()
                .ok_or_else(|| format_err!("{id}: session {n} has no date"))?;
            let turns = turns
                .iter()
                .filter_map(|t| {
                    Some(Turn {
                        dia: t["dia_id"].as_str()?.to_owned(),
                        speaker: t["speaker"].as_str()?.to_owned(),
                        text: t["text"].as_str()?.trim().to_owned(),
                    })
                })
                .filter(|t| !t.text.is_empty())
                .collect();
            sessions.push((session_time(date)?, turns));
            n += 1;
        }
        let mut observations: HashMap<String, usize> = HashMap::new();
        for per_session in sample["observation"].as_object().into_iter().flat_map(|o| o.values()) {
            for list in per_session.as_object().into_iter().flat_map(|o| o.values()) {
                for observation in list.as_array().into_iter().flatten() {
                    let refs = match &observation[1] {
                        Value::String(s) => vec![s.clone()],
                        Value::Array(a) => {
                            a.iter().filter_map(Value::as_str).map(str::to_owned).collect()
                        }
                        _ => vec![],
                    };
                    for r in refs {
                        for part in r.split([';', ',']) {
                            *observations.entry(part.trim().to_owned()).or_insert(0) += 1;
                        }
                    }
                }
            }
        }
        out.push(Conversation { id: id.to_owned(), speakers, sessions, observations });
    }
    Ok(out)
}

/// Training examples: every turn's features, labelled by whether it carries an observation.
fn examples(conversations: &[&Conversation]) -> Vec<(Vec<f32>, bool)> {
    conversations
        .iter()
        .flat_map(|c| {
            c.sessions
                .iter()
                .flat_map(|(_, turns)| turns.iter())
                .map(|t| (mnemo::disclosure_features(&t.text), c.observations.contains_key(&t.dia)))
        })
        .collect()
}

fn train(conversations: &[&Conversation]) -> Selector {
    let dims = mnemo::disclosure_features("").len() - mnemo::core::disclosure::STRUCTURAL_FEATURES;
    Selector::train(VERSION, dims, &examples(conversations), TrainConfig::default())
}

/// Trains on the whole file and writes (or checks) the shipped weights.
pub(crate) fn train_command(data: &Path, out: &Path, check: bool) -> anyhow::Result<()> {
    let conversations = load(data)?;
    let selector = train(&conversations.iter().collect::<Vec<_>>());
    let json = selector.to_json();
    if check {
        let committed = std::fs::read_to_string(out).unwrap_or_default();
        anyhow::ensure!(
            committed == json,
            "{} differs from what training produces: run `cargo xtask train-disclosure`",
            out.display()
        );
        println!("{} is what training produces", out.display());
        return Ok(());
    }
    std::fs::write(out, json).with_context(|| format!("cannot write {}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(())
}

/// Memories and observation counts for one conversation with one speaker as the user.
#[derive(Default, Clone, Copy)]
struct Score {
    observations: usize,
    observations_found: usize,
    memories: usize,
    memories_on_observed_turns: usize,
    user_turns: usize,
}

impl Score {
    fn add(&mut self, other: Score) {
        self.observations += other.observations;
        self.observations_found += other.observations_found;
        self.memories += other.memories;
        self.memories_on_observed_turns += other.memories_on_observed_turns;
        self.user_turns += other.user_turns;
    }
    fn recall(&self) -> f64 {
        self.observations_found as f64 / self.observations.max(1) as f64
    }
    fn precision(&self) -> f64 {
        self.memories_on_observed_turns as f64 / self.memories.max(1) as f64
    }
    fn row(&self, name: &str) -> String {
        format!(
            "| {name} | {} | {} | {:.3} | {} | {:.3} |",
            self.user_turns,
            self.observations,
            self.recall(),
            self.memories,
            self.precision()
        )
    }
}

/// What ingests the sessions: the library with given weights, or the real `mnemo` binary
/// (the shipped weights) through `mnemo ingest`.
#[derive(Clone, Copy)]
enum Ingester<'a> {
    Library(&'a Selector),
    Binary(&'a Path),
}

/// Ingests one session the way `ingester` does and returns the index of the message each
/// written memory was drawn from.
struct SessionIngest<'a> {
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    backend: Backend<'a>,
}

/// An open ingester: the library's notebook, or the binary writing to the same folder.
enum Backend<'a> {
    Library(Box<Mnemo>),
    Binary(&'a Path),
}

impl<'a> SessionIngest<'a> {
    fn open(ingester: Ingester<'a>, first: mnemo::core::Timestamp) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let clock = Arc::new(ManualClock::new(first));
        let backend = match ingester {
            Ingester::Library(selector) => Backend::Library(Box::new(
                Mnemo::open_sqlite(
                    &dir.path().join("extraction.db"),
                    Some(mnemo::builtin_embedder()?),
                    clock.clone(),
                    "eval-extraction",
                )?
                .with_disclosure_selector(selector.clone()),
            )),
            Ingester::Binary(binary) => Backend::Binary(binary),
        };
        Ok(Self { dir, clock, backend })
    }

    fn ingest(
        &self,
        conversation: &str,
        session: &str,
        date: mnemo::core::Timestamp,
        messages: &[Message],
    ) -> anyhow::Result<Vec<usize>> {
        const RETENTION: &str = "3650d";
        let binary = match &self.backend {
            Backend::Binary(binary) => *binary,
            Backend::Library(notebook) => {
                self.clock.set(date);
                let options = IngestOptions {
                    retention: Ttl::parse(RETENTION, "retention")?,
                    ..IngestOptions::new(session)
                };
                let report =
                    notebook.ingest(&UserRef::new("locomo", conversation)?, messages, &options)?;
                return Ok(report
                    .proposed
                    .iter()
                    .filter(|p| p.result.id.is_some())
                    .map(|p| p.message)
                    .collect());
            }
        };
        let file = self.dir.path().join(format!("{session}.jsonl"));
        let lines: Vec<String> = messages
            .iter()
            .map(|m| {
                serde_json::json!({
                    "role": if m.role == Role::User { "user" } else { "assistant" },
                    "content": m.content,
                    "id": m.id,
                    "ts": date.to_string(),
                })
                .to_string()
            })
            .collect();
        std::fs::write(&file, lines.join("\n") + "\n")?;
        let output = std::process::Command::new(binary)
            .args(["ingest", "--json", "--retention", RETENTION, "--user", conversation])
            .args(["--session", session, "--now", &date.to_string()])
            .arg("--db")
            .arg(self.dir.path().join("extraction.db"))
            .arg(&file)
            .output()
            .with_context(|| format!("cannot run {}", binary.display()))?;
        anyhow::ensure!(
            output.status.success(),
            "mnemo ingest failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_slice(&output.stdout)?;
        Ok(report["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["id"].is_string())
            .filter_map(|c| c["message"].as_u64().map(|m| m as usize))
            .collect())
    }
}

/// Ingests a conversation with `user` as the user and scores what was drawn from it.
fn score(conversation: &Conversation, user: &str, ingester: Ingester) -> anyhow::Result<Score> {
    let first =
        conversation.sessions.first().map(|(d, _)| *d).ok_or_else(|| format_err!("empty"))?;
    let notebook = SessionIngest::open(ingester, first)?;
    let mut drawn: BTreeMap<String, usize> = BTreeMap::new();
    let mut score = Score::default();
    for (n, (date, turns)) in conversation.sessions.iter().enumerate() {
        let messages: Vec<Message> = turns
            .iter()
            .map(|t| Message {
                role: if t.speaker == user { Role::User } else { Role::Assistant },
                content: t.text.clone(),
                id: Some(t.dia.replace(':', "-")),
                ts: Some(*date),
                source: None,
            })
            .collect();
        let session = format!("session-{}", n + 1);
        for message in notebook.ingest(&conversation.id, &session, *date, &messages)? {
            let turn = turns.get(message).ok_or_else(|| format_err!("no message {message}"))?;
            *drawn.entry(turn.dia.clone()).or_insert(0) += 1;
        }
        for t in turns.iter().filter(|t| t.speaker == user) {
            score.user_turns += 1;
            let observed = conversation.observations.get(&t.dia).copied().unwrap_or(0);
            let memories = drawn.get(&t.dia).copied().unwrap_or(0);
            score.observations += observed;
            if memories > 0 {
                score.observations_found += observed;
            }
            score.memories += memories;
            if observed > 0 {
                score.memories_on_observed_turns += memories;
            }
        }
    }
    Ok(score)
}

/// The conversation-ingest case of `cargo xtask bench`: one `ingest` call (as `mnemo ingest`
/// makes) of a `turns`-turn session replaying LoCoMo's turns in order, the first speaker of
/// each conversation as the user, with the built-in embedder, extractor and selector on a
/// fresh SQLite file; prints turns per second and what was extracted.
pub(crate) fn conversation_ingest(data: &Path, turns: usize) -> anyhow::Result<()> {
    let conversations = load(data)?;
    let all: Vec<(bool, &str)> = conversations
        .iter()
        .flat_map(|c| {
            c.sessions
                .iter()
                .flat_map(|(_, t)| t.iter())
                .map(|t| (t.speaker == c.speakers[0], t.text.as_str()))
        })
        .collect();
    anyhow::ensure!(!all.is_empty(), "{} has no turns", data.display());
    // Content screening alone, which every turn and every memory drawn from one goes through:
    // the best of five passes over every turn of the file.
    let best = (0..5)
        .map(|_| {
            let start = std::time::Instant::now();
            for (_, text) in &all {
                std::hint::black_box(mnemo::core::screen::screen(text));
            }
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    println!(
        "screening: {} turns, {:.1} µs per turn (best of 5 passes)",
        all.len(),
        best * 1e6 / all.len() as f64
    );
    let messages: Vec<Message> = (0..turns)
        .map(|i| {
            let (user, text) = all[i % all.len()];
            Message {
                role: if user { Role::User } else { Role::Assistant },
                content: text.to_owned(),
                id: Some(format!("t{i}")),
                ts: None,
                source: None,
            }
        })
        .collect();
    let dir = tempfile::tempdir()?;
    let now = mnemo::core::Timestamp::parse("2026-03-04T12:00:00Z", "now")?;
    let notebook = Mnemo::open_sqlite(
        &dir.path().join("ingest.db"),
        Some(mnemo::builtin_embedder()?),
        Arc::new(mnemo::core::FixedClock(now)),
        "bench-ingest",
    )?;
    let who = UserRef::new("bench", "ingest")?;
    let options = IngestOptions::new("s1");
    let start = std::time::Instant::now();
    let report = notebook.ingest(&who, &messages, &options)?;
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "conversation ingest: {turns} turns ({} from the user) in {seconds:.2} s = {:.0} turns/s; {} turns stored, {} memories proposed",
        messages.iter().filter(|m| m.role == Role::User).count(),
        turns as f64 / seconds,
        report.turns_stored,
        report.proposed.len()
    );
    Ok(())
}

/// Leave-one-conversation-out, shipped weights and the rules alone, side by side.
/// With `binary`, the shipped weights are also measured through the real `mnemo ingest`.
pub(crate) fn eval_command(data: &Path, binary: Option<&Path>) -> anyhow::Result<()> {
    let conversations = load(data)?;
    let shipped = Selector::builtin();
    let mut loco = Score::default();
    let mut whole = Score::default();
    let mut rules = Score::default();
    let mut through_binary = Score::default();
    println!("| run | user turns | observations | recall | memories | precision |");
    println!("|---|---|---|---|---|---|");
    for (i, held_out) in conversations.iter().enumerate() {
        let rest: Vec<&Conversation> =
            conversations.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| c).collect();
        let fold = train(&rest);
        let mut fold_score = Score::default();
        for user in &held_out.speakers {
            fold_score.add(score(held_out, user, Ingester::Library(&fold))?);
            whole.add(score(held_out, user, Ingester::Library(shipped))?);
            rules.add(score(held_out, user, Ingester::Library(&Selector::never()))?);
            if let Some(binary) = binary {
                through_binary.add(score(held_out, user, Ingester::Binary(binary))?);
            }
        }
        println!("{}", fold_score.row(&format!("held out: {}", held_out.id)));
        loco.add(fold_score);
    }
    println!("{}", loco.row("**leave-one-conversation-out, all**"));
    println!("{}", whole.row("shipped weights, whole dev half"));
    if let Some(binary) = binary {
        println!(
            "{}",
            through_binary.row(&format!("shipped weights through `{} ingest`", binary.display()))
        );
    }
    println!("{}", rules.row("structural rules only (no selector)"));
    Ok(())
}
