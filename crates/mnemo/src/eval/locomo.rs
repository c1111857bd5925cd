//! The LoCoMo retrieval benchmark, run as a user would (`mnemo eval locomo FILE`, and
//! `cargo xtask eval locomo`, which can also run it through the real server over HTTP). Each
//! conversation is one user; each turn is remembered as an episodic memory ("Speaker: text",
//! plus the image caption when the turn shares one) with the clock at its session's date, its
//! session id, its speaker and the participants' consent, and its `dia_id` as source ref.
//! Each question of categories 1-4 is then searched a day after the conversation's last
//! session with the default search settings (relevance gate on), once per cutoff k in 1, 5,
//! 10, 20 as a caller asking for k results would, and scored against its evidence turns:
//! any@k, all@k, NDCG@10 (of the k = 10 search), per category, and search latency.
//!
//! [`ClockMode::Fixed`] stores and searches everything at one instant with the gate off,
//! which measures the ranking alone (every record the same age).
//!
//! The input is LoCoMo's JSON: a list of samples with `sample_id`, `conversation`
//! (`session_N`: turns with `speaker`, `text`, `dia_id`, optional `blip_caption`;
//! `session_N_date_time` such as `1:56 pm on 8 May, 2023`) and `qa` (`question`, `category`,
//! `evidence`: `dia_id`s).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use mnemo_core::lifecycle::{CandidateFields, Outcome};
use mnemo_core::ports::SearchFilter;
use mnemo_core::{ConsentReceipt, Kind, ManualClock, Source, SourceType, Timestamp, UserRef};
use serde_json::Value;

use crate::{Mnemo, SearchRequest};

/// An evaluation's error: the notebook's (a library or a server), or the input's.
pub type EvalError = Box<dyn std::error::Error + Send + Sync>;

/// The search cutoffs.
pub const KS: [usize; 4] = [1, 5, 10, 20];
/// Which of [`KS`] NDCG and latency are measured at (k = 10).
const NDCG_CUTOFF: usize = 2;
/// LoCoMo's question categories scored here.
pub const CATEGORIES: [(u64, &str); 4] =
    [(1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop")];
const DAY_MS: i64 = 86_400_000;

/// One conversation turn to remember.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The stored text.
    pub text: String,
    /// Its reference (`dia_id`), returned by searches.
    pub reference: String,
    /// Who said it.
    pub speaker: Option<String>,
    /// Its session.
    pub session: String,
    /// When it was said, if known.
    pub said_at: Option<Timestamp>,
}

/// What became of one remembered turn.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Whether it was written (added, or held as pending).
    pub written: bool,
    /// Whether it is held for confirmation.
    pub pending: bool,
    /// The decision's reason code.
    pub reason: String,
}

/// A notebook under evaluation.
pub trait Notebook {
    /// Moves the clock: what is remembered or asked next happens at `at`.
    fn set_clock(&mut self, at: Timestamp) -> Result<(), EvalError>;

    /// Remembers one session's turns for `user`, in order.
    fn remember(&mut self, user: &str, turns: &[Turn]) -> Result<Vec<Stored>, EvalError>;

    /// The references of the `k` results of a search, in their order.
    fn search(
        &mut self,
        user: &str,
        query: &str,
        k: usize,
        min_relevance: Option<f64>,
    ) -> Result<Vec<String>, EvalError>;
}

/// The library in-process: a notebook's store, embedder and extractor with a clock the
/// evaluation moves, every conversation a user of one tenant.
pub struct LibraryNotebook {
    mnemo: Mnemo,
    clock: Arc<ManualClock>,
    tenant: String,
    users: Vec<String>,
}

impl LibraryNotebook {
    /// `base`'s store and models, in `tenant`, its clock at `at`.
    pub fn new(base: &Mnemo, tenant: &str, at: Timestamp) -> Self {
        let clock = Arc::new(ManualClock::new(at));
        let mnemo = base.with_clock(clock.clone());
        Self { mnemo, clock, tenant: tenant.to_owned(), users: Vec::new() }
    }

    /// Deletes everything the evaluation wrote.
    pub fn clean_up(&self) -> crate::Result<()> {
        for user in &self.users {
            self.mnemo.forget_all(&UserRef::new(&self.tenant, user)?)?;
        }
        Ok(())
    }
}

impl Notebook for LibraryNotebook {
    fn set_clock(&mut self, at: Timestamp) -> Result<(), EvalError> {
        self.clock.set(at);
        Ok(())
    }

    fn remember(&mut self, user: &str, turns: &[Turn]) -> Result<Vec<Stored>, EvalError> {
        let now = self.mnemo.now();
        let batch = turns
            .iter()
            .map(|turn| {
                let said_at = turn.said_at.unwrap_or(now);
                CandidateFields {
                    kind: Some(Kind::Episodic),
                    content: turn.text.clone(),
                    session_id: Some(turn.session.clone()),
                    source: Some(Source {
                        source_type: SourceType::UserStated,
                        source_ref: Some(turn.reference.clone()),
                        captured_at: said_at,
                        extractor: None,
                    }),
                    valid_from: Some(said_at),
                    metadata: turn
                        .speaker
                        .iter()
                        .map(|s| ("speaker".to_owned(), s.clone().into()))
                        .collect::<BTreeMap<_, _>>(),
                    // The participants agreed to their conversations being kept; without a
                    // receipt, turns that touch health, religion and the like would wait
                    // for consent instead of being searchable.
                    consent: Some(ConsentReceipt {
                        granted_at: said_at,
                        method: "conversation_history".to_owned(),
                        recorded_by: "locomo".to_owned(),
                    }),
                    ..Default::default()
                }
            })
            .collect();
        if !self.users.iter().any(|u| u == user) {
            self.users.push(user.to_owned());
        }
        let who = UserRef::new(&self.tenant, user)?;
        let stored = self
            .mnemo
            .remember_batch(&who, batch)?
            .into_iter()
            .map(|r| Stored {
                written: r.id.is_some(),
                pending: r.outcome == Outcome::Pending,
                reason: r.reason.as_str().to_owned(),
            })
            .collect();
        // Sessions are days apart: a server's background refiner has refined each one's
        // records long before the next.
        if self.mnemo.refines() {
            self.mnemo.refine(&who, usize::MAX)?;
        }
        Ok(stored)
    }

    fn search(
        &mut self,
        user: &str,
        query: &str,
        k: usize,
        min_relevance: Option<f64>,
    ) -> Result<Vec<String>, EvalError> {
        let who = UserRef::new(&self.tenant, user)?;
        let request = SearchRequest {
            query: query.to_owned(),
            k,
            filter: SearchFilter::default(),
            min_relevance,
            as_of: None,
            spaces: None,
        };
        Ok(self
            .mnemo
            .search(&who, &request)?
            .into_iter()
            .filter_map(|h| h.memory.source.source_ref)
            .collect())
    }
}

/// Scores of a set of questions.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Tally {
    /// Questions scored.
    pub questions: usize,
    /// Questions with at least one evidence turn among the top k, per cutoff of [`KS`].
    pub any: [usize; 4],
    /// Questions with every evidence turn among the top k, per cutoff.
    pub all: [usize; 4],
    /// The sum of NDCG@10 over the questions.
    pub ndcg10: f64,
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

    /// One row of the results table.
    pub fn row(&self, name: &str) -> String {
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

/// What a run found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Report {
    /// Conversations run.
    pub conversations: usize,
    /// Turns remembered.
    pub turns: usize,
    /// Questions skipped because none of their evidence is a turn.
    pub skipped_questions: usize,
    /// Every question.
    pub overall: Tally,
    /// By category.
    pub per_category: BTreeMap<u64, Tally>,
    /// Search latency at k = 10 (ms): p50 and p95.
    pub latency_ms: (f64, f64),
    /// Turns the gate held for confirmation (not searchable), by reason.
    pub held: BTreeMap<String, usize>,
}

impl Report {
    /// The results table (markdown) and the lines below it.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!(
                "LoCoMo retrieval: {} conversations, {} turns, {} questions ({} skipped: no valid evidence)",
                self.conversations, self.turns, self.overall.questions, self.skipped_questions
            ),
            String::new(),
            "| category | n | any@1 | any@5 | any@10 | any@20 | all@1 | all@5 | all@10 | all@20 | NDCG@10 |".to_owned(),
            "|---|---|---|---|---|---|---|---|---|---|---|".to_owned(),
        ];
        for (category, name) in CATEGORIES {
            if let Some(t) = self.per_category.get(&category) {
                lines.push(t.row(&format!("{category} {name}")));
            }
        }
        lines.push(self.overall.row("all"));
        lines.push(String::new());
        lines.push(format!(
            "search latency (ms, k=10): p50 {:.2}, p95 {:.2}",
            self.latency_ms.0, self.latency_ms.1
        ));
        let held: Vec<String> =
            self.held.iter().filter(|(_, n)| **n > 0).map(|(r, n)| format!("{r} {n}")).collect();
        lines.push(format!(
            "turns held as pending by the policy gate (not searchable): {}",
            if held.is_empty() { "none".to_owned() } else { held.join(", ") }
        ));
        lines
    }
}

/// How the evaluation sets the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockMode {
    /// Each session stored at its date, questions asked a day after the last session, gate on.
    Sessions,
    /// Everything stored and searched at one instant, gate off: the ranking alone.
    Fixed,
}

fn bad(what: impl Into<String>) -> EvalError {
    what.into().into()
}

/// Parses LoCoMo's session time, e.g. `1:56 pm on 8 May, 2023`.
pub fn session_time(text: &str) -> Result<Timestamp, EvalError> {
    let unreadable = || bad(format!("unreadable session time `{text}`"));
    let (clock, date) = text.split_once(" on ").ok_or_else(unreadable)?;
    let (hm, meridiem) = clock.trim().split_once(' ').ok_or_else(unreadable)?;
    let (h, m) = hm.split_once(':').ok_or_else(unreadable)?;
    let mut hour: u32 = h.parse().map_err(|_| unreadable())?;
    let minute: u32 = m.parse().map_err(|_| unreadable())?;
    match meridiem.to_lowercase().as_str() {
        "pm" if hour != 12 => hour += 12,
        "am" if hour == 12 => hour = 0,
        _ => {}
    }
    let parts: Vec<&str> = date.split([' ', ',']).filter(|p| !p.is_empty()).collect();
    let [day, month, year] = parts.as_slice() else { return Err(unreadable()) };
    let month = mnemo_core::retrieval::MONTH_NAMES
        .iter()
        .position(|m| *m == month.to_lowercase())
        .ok_or_else(unreadable)?
        + 1;
    let day: u32 = day.parse().map_err(|_| unreadable())?;
    let rfc = format!("{year}-{month:02}-{day:02}T{hour:02}:{minute:02}:00Z");
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

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Runs the benchmark on `samples` (LoCoMo's JSON list) through `notebook`; in
/// [`ClockMode::Fixed`] everything happens at `fixed`.
pub fn run(
    samples: &[Value],
    notebook: &mut dyn Notebook,
    mode: ClockMode,
    fixed: Timestamp,
) -> Result<Report, EvalError> {
    let mut report = Report { conversations: samples.len(), ..Default::default() };
    let mut latencies_ms = Vec::new();
    for sample in samples {
        let id = sample["sample_id"].as_str().ok_or_else(|| bad("a sample without sample_id"))?;
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
        // The last session's date (the fixed time when no session has one).
        let mut last: Option<Timestamp> = None;
        for (date, batch) in sessions {
            if let (ClockMode::Sessions, Some(date)) = (mode, date) {
                notebook.set_clock(date)?;
                last = Some(last.map_or(date, |l| l.max(date)));
            }
            for (stored, turn) in notebook.remember(id, &batch)?.into_iter().zip(&batch) {
                if !stored.written {
                    return Err(bad(format!(
                        "turn {} of {id} was not stored: {} ({:?})",
                        turn.reference, stored.reason, turn.text
                    )));
                }
                if stored.pending {
                    *report.held.entry(stored.reason).or_insert(0) += 1;
                }
                report.turns += 1;
            }
        }
        notebook.set_clock(match (mode, last) {
            (ClockMode::Sessions, Some(last)) => Timestamp::from_millis(last.as_millis() + DAY_MS),
            _ => fixed,
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
                report.skipped_questions += 1;
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
            report.overall.add(&ranked, &evidence);
            report.per_category.entry(category).or_default().add(&ranked, &evidence);
        }
    }
    latencies_ms.sort_by(f64::total_cmp);
    report.latency_ms = (percentile(&latencies_ms, 0.5), percentile(&latencies_ms, 0.95));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_times_read_as_locomo_writes_them() {
        let t = session_time("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(t, Timestamp::parse("2023-05-08T13:56:00Z", "t").unwrap());
        let t = session_time("12:09 am on 13 September, 2023").unwrap();
        assert_eq!(t, Timestamp::parse("2023-09-13T00:09:00Z", "t").unwrap());
        assert!(session_time("yesterday").is_err());
    }
}
