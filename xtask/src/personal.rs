//! `cargo xtask eval personal-facts`: the personal-facts workload (the one mem0's own
//! benchmark uses, with more categories and phrasings): each user states short first-person
//! facts in some categories among everyday chatter, then asks one question per category, in
//! their own words. A question whose fact was stated should find it in the top 3; a question
//! about a category the user never mentioned should come back empty (abstention).
//!
//! Data: `testdata/personal_facts_workload.json` (19 categories, each with statement
//! templates, values and questions, and first-person filler), written before the rules it
//! measures. Users are drawn with a fixed seed. Everything goes through the library with
//! default search settings (k = 3, relevance gate on), with the built-in embedder and, given
//! `--minilm-dir`, with all-MiniLM-L6-v2 in-process, side by side.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::ports::{Embedder, SearchFilter};
use mnemo::core::{ConsentReceipt, ManualClock, Timestamp, UserRef};
use mnemo::{Mnemo, SearchRequest};
use serde::Deserialize;

use crate::bench::{Rng, percentile, sentence};

#[derive(Debug, Deserialize)]
struct Category {
    templates: Vec<String>,
    values: Vec<String>,
    questions: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Workload {
    categories: Vec<Category>,
    filler: Vec<String>,
}

/// Categories each user never mentions, asked about to test abstention.
const UNMENTIONED: usize = 3;

/// What one configuration measured.
struct Figures {
    embedder: String,
    per_user: usize,
    users: usize,
    asked: usize,
    found: usize,
    empty_with_fact: usize,
    probes: usize,
    abstained: usize,
    p50: f64,
    p95: f64,
    ingest_per_s: f64,
    /// Records refined per second after the writes (for the rows that refine).
    refined_per_s: Option<f64>,
    /// Statements superseded by another statement of the same user: all false, since every
    /// statement of a user is about something else.
    superseded: usize,
}

/// One user's notebook and questions: statements, and questions with the index of the
/// statement that answers them (`None` for a category never mentioned).
type Script = (Vec<String>, Vec<(String, Option<usize>)>);

/// The users of one notebook size, from that size's fixed seed: `measure` and `dump` run the
/// same ones.
fn scripts(workload: &Workload, per_user: usize, users: usize) -> Vec<Script> {
    let mut rng = Rng(0x005e_ed0f_fac7 + per_user as u64);
    (0..users).map(|_| user_script(workload, &mut rng, per_user)).collect()
}

/// One user's [`Script`].
fn user_script(
    workload: &Workload,
    rng: &mut Rng,
    per_user: usize,
) -> (Vec<String>, Vec<(String, Option<usize>)>) {
    let n = workload.categories.len();
    // A random order of the categories: the first UNMENTIONED are never mentioned.
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let mentioned = (n - UNMENTIONED).min(per_user * 8 / 10).max(1);
    let mut statements = Vec::new();
    let mut questions = Vec::new();
    let pick =
        |rng: &mut Rng, items: &[String]| items[(rng.next() % items.len() as u64) as usize].clone();
    for &c in &order[UNMENTIONED..UNMENTIONED + mentioned] {
        let category = &workload.categories[c];
        let value = pick(rng, &category.values);
        let template = pick(rng, &category.templates);
        questions.push((pick(rng, &category.questions), Some(statements.len())));
        statements.push(template.replace("{v}", &value));
    }
    for &c in &order[..UNMENTIONED] {
        questions.push((pick(rng, &workload.categories[c].questions), None));
    }
    // Everyday chatter, then notes about other things, up to the notebook's size.
    let mut filler = 0;
    while statements.len() < per_user {
        let text = match workload.filler.get(filler) {
            Some(f) => f.clone(),
            None => sentence(rng, filler),
        };
        statements.push(text);
        filler += 1;
    }
    // Mix the facts among the chatter, keeping track of where they went.
    let mut positions: Vec<usize> = (0..statements.len()).collect();
    for i in (1..positions.len()).rev() {
        positions.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let mut shuffled = vec![String::new(); statements.len()];
    for (from, &to) in positions.iter().enumerate() {
        shuffled[to] = std::mem::take(&mut statements[from]);
    }
    let questions = questions.into_iter().map(|(q, at)| (q, at.map(|i| positions[i]))).collect();
    (shuffled, questions)
}

fn measure(
    workload: &Workload,
    name: &str,
    embedder: Arc<dyn Embedder>,
    refine: bool,
    per_user: usize,
    users: usize,
    show_misses: bool,
) -> anyhow::Result<Figures> {
    let dir = tempfile::tempdir()?;
    let start = Timestamp::parse("2026-03-02T09:00:00Z", "t")?;
    let clock = Arc::new(ManualClock::new(start));
    let mnemo =
        Mnemo::open_sqlite(&dir.path().join("m.db"), Some(embedder), clock.clone(), "eval")?;
    let mut figures = Figures {
        embedder: name.to_owned(),
        per_user,
        users,
        asked: 0,
        found: 0,
        empty_with_fact: 0,
        probes: 0,
        abstained: 0,
        p50: 0.0,
        p95: 0.0,
        ingest_per_s: 0.0,
        refined_per_s: None,
        superseded: 0,
    };
    let mut latencies = Vec::new();
    let mut written = 0usize;
    let mut writing = 0.0;
    let (mut refined, mut refining) = (0usize, 0.0);
    for (u, (statements, questions)) in scripts(workload, per_user, users).into_iter().enumerate() {
        let who = UserRef::new("eval", &format!("user-{u}"))?;
        clock.set(start);
        // The user agreed to being remembered (allergies are health facts, which wait for
        // consent otherwise).
        let consent = ConsentReceipt {
            granted_at: start,
            method: "explicit_remember".into(),
            recorded_by: "eval".into(),
        };
        let batch: Vec<CandidateFields> = statements
            .iter()
            .map(|s| CandidateFields {
                content: s.clone(),
                consent: Some(consent.clone()),
                ..Default::default()
            })
            .collect();
        let began = Instant::now();
        let outcomes = mnemo.remember_batch(&who, batch)?;
        // Every statement of a user is about something else, so any it supersedes is a
        // false contradiction.
        figures.superseded += outcomes.iter().map(|o| o.superseded.len()).sum::<usize>();
        if show_misses {
            for (statement, outcome) in statements.iter().zip(&outcomes) {
                for id in &outcome.superseded {
                    let old = mnemo.get(&who, id)?;
                    println!("superseded: {:?} replaced {:?}", statement, old.content);
                }
            }
        }
        writing += began.elapsed().as_secs_f64();
        written += outcomes.len();
        if refine {
            // What a server's background refiner does shortly after the writes.
            let began = Instant::now();
            refined += mnemo.refine(&who, usize::MAX)?;
            refining += began.elapsed().as_secs_f64();
        }
        clock.set(Timestamp::from_millis(start.as_millis() + 86_400_000));
        for (question, answer) in questions {
            let request = SearchRequest {
                query: question,
                k: 3,
                filter: SearchFilter::default(),
                min_relevance: None,
                as_of: None,
                spaces: None,
            };
            let began = Instant::now();
            let hits = mnemo.search(&who, &request)?;
            latencies.push(began.elapsed().as_secs_f64() * 1000.0);
            match answer.map(|i| &outcomes[i]) {
                // The fact was stored: it should be among the three.
                Some(outcome) => {
                    let Some(id) = &outcome.id else { continue };
                    figures.asked += 1;
                    let found = hits.iter().any(|h| &h.memory.id == id);
                    figures.found += usize::from(found);
                    figures.empty_with_fact += usize::from(hits.is_empty());
                    if show_misses && !found {
                        print_miss(&mnemo, &who, &request, &hits, id)?;
                    }
                }
                None => {
                    figures.probes += 1;
                    figures.abstained += usize::from(hits.is_empty());
                    if show_misses && !hits.is_empty() {
                        print_answered_probe(&request.query, &hits);
                    }
                }
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    figures.p50 = percentile(&latencies, 0.5);
    figures.p95 = percentile(&latencies, 0.95);
    figures.ingest_per_s = written as f64 / writing.max(1e-9);
    figures.refined_per_s = refine.then(|| refined as f64 / refining.max(1e-9));
    Ok(figures)
}

/// Prints a question that missed its fact: the results it got, and where the fact ranks
/// among the first 100 with the gate off (absent when it is not among them).
fn print_miss(
    mnemo: &Mnemo,
    who: &UserRef,
    request: &SearchRequest,
    hits: &[mnemo::core::retrieval::Hit],
    fact: &mnemo::core::MemoryId,
) -> anyhow::Result<()> {
    let deep = SearchRequest { k: 100, min_relevance: Some(0.0), ..request.clone() };
    let ranked = mnemo.search(who, &deep)?;
    println!("miss: {:?}", request.query);
    hits.iter().enumerate().for_each(|(rank, h)| print_hit(rank + 1, h));
    match ranked.iter().position(|h| &h.memory.id == fact) {
        Some(rank) => print_hit(rank + 1, &ranked[rank]),
        None => println!("  the fact is not among the first 100"),
    }
    Ok(())
}

/// Prints a question about something never mentioned that did not come back empty, with
/// what it returned.
fn print_answered_probe(query: &str, hits: &[mnemo::core::retrieval::Hit]) {
    println!("answered, never mentioned: {query:?}");
    hits.iter().enumerate().for_each(|(rank, h)| print_hit(rank + 1, h));
}

/// One result line of [`print_miss`] and [`print_answered_probe`]: its rank and signals.
fn print_hit(rank: usize, h: &mnemo::core::retrieval::Hit) {
    println!(
        "  {rank:>3} fused {:.2} evidence {:.2} bm25 {:.2} cosine {:.3} {:?}",
        h.fused.score, h.fused.evidence, h.bm25, h.cosine, h.memory.content
    );
}

/// Users per notebook size: fewer for the largest notebooks keeps a run short (each still
/// asks 19 questions).
fn users_for(per_user: usize, users: usize) -> usize {
    if per_user >= 1000 { users.min(20) } else { users }
}

/// Writes the users `measure` would run at each size (the same seed, so the same
/// statements and questions) to `dir/personal-facts-<size>.json`.
pub(crate) fn dump(data: &Path, sizes: &[usize], users: usize, dir: &Path) -> anyhow::Result<()> {
    let workload: Workload = serde_json::from_str(&std::fs::read_to_string(data)?)?;
    std::fs::create_dir_all(dir)?;
    for &per_user in sizes {
        let listed: Vec<serde_json::Value> =
            scripts(&workload, per_user, users_for(per_user, users))
                .into_iter()
                .enumerate()
                .map(|(u, (statements, questions))| {
                    serde_json::json!({
                        "user": format!("user-{u}"),
                        "statements": statements,
                        "questions": questions
                            .into_iter()
                            .map(|(q, at)| serde_json::json!({"question": q, "answer": at}))
                            .collect::<Vec<_>>(),
                    })
                })
                .collect();
        let path = dir.join(format!("personal-facts-{per_user}.json"));
        std::fs::write(
            &path,
            serde_json::to_string(&serde_json::json!({"per_user": per_user, "users": listed}))?,
        )?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Runs the workload at each notebook size with each embedder and prints a table.
pub(crate) fn run(
    data: &Path,
    sizes: &[usize],
    users: usize,
    minilm_dir: Option<&Path>,
    show_misses: bool,
) -> anyhow::Result<()> {
    let workload: Workload = serde_json::from_str(&std::fs::read_to_string(data)?)?;
    let builtin = mnemo::builtin_embedder()?;
    let mut embedders: Vec<(String, Arc<dyn Embedder>, bool)> = vec![
        ("built-in".into(), Arc::clone(&builtin), true),
        ("built-in before refinement".into(), builtin, false),
        ("built-in static only".into(), mnemo::builtin_static_embedder()?, false),
    ];
    if let Some(dir) = minilm_dir {
        embedders.push(("all-MiniLM-L6-v2".into(), mnemo::minilm_embedder(dir)?, false));
    }
    println!(
        "| embedder | facts/user | users | top-3 hit (fact stated) | empty though stated | abstained (never mentioned) | falsely superseded | search p50 | p95 | remember_batch | refinement |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for &per_user in sizes {
        let users = users_for(per_user, users);
        for (name, embedder, refine) in &embedders {
            let f = measure(
                &workload,
                name,
                Arc::clone(embedder),
                *refine,
                per_user,
                users,
                show_misses,
            )?;
            let refinement = f.refined_per_s.map_or("-".into(), |r| format!("{r:.0}/s"));
            println!(
                "| {} | {} | {} | {:.3} ({}/{}) | {} | {:.3} ({}/{}) | {} of {} | {:.2} ms | {:.2} ms | {:.0}/s | {} |",
                f.embedder,
                f.per_user,
                f.users,
                f.found as f64 / f.asked.max(1) as f64,
                f.found,
                f.asked,
                f.empty_with_fact,
                f.abstained as f64 / f.probes.max(1) as f64,
                f.abstained,
                f.probes,
                f.superseded,
                f.per_user * f.users,
                f.p50,
                f.p95,
                f.ingest_per_s,
                refinement,
            );
        }
    }
    Ok(())
}
