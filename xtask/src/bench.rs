//! Speed benchmark of the stores: batch `remember` throughput, in-process search latency
//! (k = 10) at a given number of memories and users, recall of the int8 vector index against
//! exact f32 search, and the process's resident memory. With `--postgres URL` the same corpus
//! and queries run on the embedded SQLite store and then on PostgreSQL (in a fresh schema
//! dropped afterwards), and the two are printed side by side.
//!
//! Memories are synthetic sentences built from fixed word lists with a seeded generator, so
//! every run stores the same data.

use std::sync::Arc;
use std::time::Instant;

use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::ports::{Embedded, SearchFilter};
use mnemo::core::{FixedClock, Kind, Source, SourceType, Timestamp, UserRef};
use mnemo::{Mnemo, SearchRequest};

const NAMES: &[&str] = &[
    "Ana", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira",
    "Liam", "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Theo",
];
const VERBS: &[&str] = &[
    "visited",
    "cooked",
    "painted",
    "repaired",
    "bought",
    "planned",
    "booked",
    "wrote about",
    "practised",
    "studied",
    "photographed",
    "sold",
    "rebuilt",
    "designed",
    "cleaned",
    "ordered",
    "shared",
    "borrowed",
    "recommended",
    "cancelled",
];
const OBJECTS: &[&str] = &[
    "a sailing trip",
    "the garden shed",
    "a birthday cake",
    "the old bicycle",
    "a pottery class",
    "a concert ticket",
    "the kitchen shelves",
    "a mountain hike",
    "the quarterly report",
    "a chess tournament",
    "a vegan lasagne",
    "the family photo album",
    "a guitar lesson",
    "the electric car",
    "a yoga retreat",
    "the science fair project",
    "a camping stove",
    "the rooftop party",
    "a language course",
    "the wedding playlist",
];
const WHEN: &[&str] = &[
    "last weekend",
    "on Monday",
    "in early spring",
    "after work",
    "during the holidays",
    "yesterday evening",
    "two weeks ago",
    "before the deadline",
    "on a rainy afternoon",
    "with friends",
    "for the first time",
    "again this year",
];

/// A small deterministic generator (xorshift64*).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

pub(crate) fn sentence(rng: &mut Rng, serial: usize) -> String {
    format!(
        "{} {} {} {} (note {serial})",
        rng.pick(NAMES),
        rng.pick(VERBS),
        rng.pick(OBJECTS),
        rng.pick(WHEN)
    )
}

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// What one store measured.
struct Measured {
    store: String,
    ingest_per_s: f64,
    p50: f64,
    p95: f64,
    p99: f64,
    recall: f64,
    resident_mib: f64,
}

/// What a bench run stores and asks.
pub(crate) struct Workload {
    /// Memories in all.
    pub(crate) memories: usize,
    /// Users they are spread over.
    pub(crate) users: usize,
    /// Timed searches.
    pub(crate) queries: usize,
    /// Every how many searches the index's recall is checked (0: never).
    pub(crate) recall_every: usize,
    /// Shared spaces of user 0.
    pub(crate) spaces: usize,
}

pub(crate) fn run(
    workload: &Workload,
    keep: Option<&std::path::Path>,
    postgres: Option<&str>,
    embedder: &Arc<dyn mnemo::core::ports::Embedder>,
) -> anyhow::Result<()> {
    let Workload { memories, users, queries, recall_every, spaces } = *workload;
    anyhow::ensure!(users > 0 && memories >= users, "need at least one memory per user");
    let dir = tempfile::tempdir()?;
    let db = keep.map_or_else(|| dir.path().join("bench.db"), std::path::Path::to_path_buf);
    let reuse = db.exists();
    let clock = Arc::new(FixedClock(Timestamp::parse("2026-06-01T00:00:00Z", "clock")?));
    let mut results = Vec::new();
    {
        let mnemo = Mnemo::open_sqlite(&db, Some(embedder.clone()), clock.clone(), "bench")?;
        println!("== sqlite ({})", db.display());
        results.push(measure(
            "sqlite",
            &mnemo,
            embedder,
            memories,
            users,
            queries,
            recall_every,
            reuse,
        )?);
        if spaces > 0 {
            with_spaces(&mnemo, memories / users, spaces, queries)?;
        }
    }
    if let Some(url) = postgres {
        let scratch = mnemo_testkit::pg::Scratch::create(url)?;
        println!("== postgres (schema {})", scratch.schema());
        let mnemo = Mnemo::open_postgres(&scratch.url(), Some(embedder.clone()), clock, "bench")?;
        results.push(measure(
            "postgres",
            &mnemo,
            embedder,
            memories,
            users,
            queries,
            recall_every,
            false,
        )?);
    }
    if results.len() > 1 {
        println!();
        println!(
            "| store | ingest (memories/s) | search p50 | p95 | p99 | recall@10 | resident after |"
        );
        println!("|---|---|---|---|---|---|---|");
        for r in &results {
            println!(
                "| {} | {:.0} | {:.2} ms | {:.2} ms | {:.2} ms | {:.3} | {:.0} MiB |",
                r.store, r.ingest_per_s, r.p50, r.p95, r.p99, r.recall, r.resident_mib
            );
        }
    }
    Ok(())
}

/// Ingests the corpus (unless `reuse`), then times the queries and measures recall.
#[allow(clippy::too_many_arguments)]
fn measure(
    store: &str,
    mnemo: &Mnemo,
    embedder: &Arc<dyn mnemo::core::ports::Embedder>,
    memories: usize,
    users: usize,
    queries: usize,
    recall_every: usize,
    reuse: bool,
) -> anyhow::Result<Measured> {
    let per_user = memories / users;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = Instant::now();
    let mut written = 0usize;
    for u in (0..users).filter(|_| !reuse) {
        let who = UserRef::new("bench", &format!("user-{u}"))?;
        for chunk_start in (0..per_user).step_by(5000) {
            let chunk_end = (chunk_start + 5000).min(per_user);
            let batch: Vec<CandidateFields> = (chunk_start..chunk_end)
                .map(|i| CandidateFields {
                    kind: Some(Kind::Episodic),
                    content: sentence(&mut rng, i),
                    source: Some(Source {
                        source_type: SourceType::UserStated,
                        source_ref: Some(format!("msg-{u}-{i}")),
                        captured_at: Timestamp::from_millis(0),
                        extractor: None,
                    }),
                    ..Default::default()
                })
                .collect();
            written += mnemo.remember_batch(&who, batch)?.iter().filter(|r| r.id.is_some()).count();
        }
    }
    let ingest = start.elapsed().as_secs_f64();
    println!(
        "ingest: {written} memories for {users} users in {ingest:.1} s = {:.0} memories/s (batches of up to 5000, episodic, built-in embedder, FULL sync)",
        written as f64 / ingest
    );

    // Queries: fresh sentences from the same vocabulary, each against a random user. The
    // timed pass runs alone; recall is measured afterwards on a sample of the same queries,
    // so its exports do not disturb the caches the timed searches see.
    let mut latencies = Vec::with_capacity(queries);
    let mut recall_hits = 0usize;
    let mut recall_total = 0usize;
    let filter = SearchFilter::default();
    let asked: Vec<(usize, String)> = (0..queries)
        .map(|_| {
            let user = (rng.next() % users as u64) as usize;
            (user, format!("{} {} {}", rng.pick(NAMES), rng.pick(VERBS), rng.pick(OBJECTS)))
        })
        .collect();
    for (user, text) in &asked {
        let who = UserRef::new("bench", &format!("user-{user}"))?;
        let request = SearchRequest {
            query: text.clone(),
            k: 10,
            filter: filter.clone(),
            min_relevance: Some(0.0),
            as_of: None,
            // The user's own notebook (a kept database may hold spaces of `--spaces`).
            spaces: Some(vec![mnemo::PRIVATE.to_owned()]),
        };
        let t = Instant::now();
        let hits = mnemo.search(&who, &request)?;
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(&hits);
    }
    for (user, text) in asked.iter().step_by(recall_every.max(1)).filter(|_| recall_every > 0) {
        let who = UserRef::new("bench", &format!("user-{user}"))?;
        // Recall of the int8 vector index against exact f32 cosine.
        {
            let vector = embedder.embed_queries(&[text.as_str()])?.remove(0);
            let query = Embedded {
                model: embedder.id().to_owned(),
                vector: vector.clone(),
                calibration: None,
            };
            let now = mnemo.now();
            let by_cosine = |signals: &mnemo::core::retrieval::Signals<'_>| {
                let mut ranked: Vec<mnemo::core::retrieval::Fused> = signals
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(index, r)| mnemo::core::retrieval::Fused {
                        index,
                        score: r.cosine,
                        evidence: 1.0,
                    })
                    .collect();
                ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
                ranked.truncate(10);
                ranked
            };
            let search = mnemo::core::ports::SearchQuery {
                terms: &[],
                modifiers: &[],
                vector: Some(&query),
                // Raw cosines, compared with the exact raw cosine below.
                common: None,
                filter: &filter,
                notebooks: 1,
            };
            let approx = mnemo.store().search(&who, &search, now, &by_cosine)?;
            let exported = mnemo.store().export(&who)?;
            let mut exact: Vec<(f32, String)> = exported
                .iter()
                .filter_map(|e| {
                    let v = e.memory.embedding.as_ref()?.vector.as_ref()?;
                    Some((
                        v.iter().zip(&vector).map(|(a, b)| a * b).sum::<f32>(),
                        e.memory.id.0.clone(),
                    ))
                })
                .collect();
            exact.sort_by(|a, b| b.0.total_cmp(&a.0));
            let truth: std::collections::HashSet<&String> =
                exact.iter().take(10).map(|(_, id)| id).collect();
            recall_hits += approx.iter().filter(|f| truth.contains(&f.memory.id.0)).count();
            recall_total += truth.len();
        }
    }
    latencies.sort_by(f64::total_cmp);
    // The part of a search that is the query's encoding alone (the same texts, again).
    let mut encoding = Vec::with_capacity(asked.len());
    for (_, text) in &asked {
        let t = Instant::now();
        std::hint::black_box(embedder.embed_queries(&[text.as_str()])?);
        encoding.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    encoding.sort_by(f64::total_cmp);
    println!(
        "query encoding alone ({} queries): p50 {:.2} ms, p95 {:.2} ms",
        encoding.len(),
        percentile(&encoding, 0.5),
        percentile(&encoding, 0.95)
    );
    println!(
        "search k=10 over {per_user} memories/user ({queries} queries): p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99)
    );
    println!(
        "int8 vector index recall@10 vs exact f32: {:.4} ({recall_hits}/{recall_total})",
        recall_hits as f64 / recall_total.max(1) as f64
    );
    println!("resident memory: {:.0} MiB", rss_mib());
    Ok(Measured {
        store: store.to_owned(),
        ingest_per_s: written as f64 / ingest,
        p50: percentile(&latencies, 0.5),
        p95: percentile(&latencies, 0.95),
        p99: percentile(&latencies, 0.99),
        recall: recall_hits as f64 / recall_total.max(1) as f64,
        resident_mib: rss_mib(),
    })
}

/// Shared spaces: `spaces` spaces of `per_space` memories each, of which user 0 is a member,
/// then the same queries against user 0's own notebook only and against it with every space
/// (alternating, so both see the same machine), with the ratio of their latencies.
fn with_spaces(
    mnemo: &Mnemo,
    per_space: usize,
    spaces: usize,
    queries: usize,
) -> anyhow::Result<()> {
    let who = UserRef::new("bench", "user-0")?;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let start = Instant::now();
    let mut written = 0usize;
    for s in 0..spaces {
        let id = format!("space-{s}");
        if mnemo.space("bench", &id).is_ok() {
            continue;
        }
        let new = mnemo::NewSpace {
            id: id.clone(),
            maintainers_write_directly: true,
            ..Default::default()
        };
        mnemo.create_space("bench", new)?;
        mnemo.add_member("bench", &id, "user-0", mnemo::core::space::Role::Maintainer)?;
        for chunk_start in (0..per_space).step_by(5000) {
            let batch: Vec<CandidateFields> = (chunk_start..(chunk_start + 5000).min(per_space))
                .map(|i| CandidateFields {
                    kind: Some(Kind::Episodic),
                    content: sentence(&mut rng, i),
                    source: Some(Source {
                        source_type: SourceType::UserStated,
                        source_ref: Some(format!("doc-{s}-{i}")),
                        captured_at: Timestamp::from_millis(0),
                        extractor: None,
                    }),
                    ..Default::default()
                })
                .collect();
            written += mnemo
                .remember_batch_in(&who, &id, batch)?
                .iter()
                .filter(|r| r.id.is_some())
                .count();
        }
    }
    if written > 0 {
        println!(
            "spaces: {written} memories in {spaces} spaces in {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
    let ask = |text: &str, spaces: Option<Vec<String>>| SearchRequest {
        query: text.to_owned(),
        k: 10,
        filter: SearchFilter::default(),
        min_relevance: Some(0.0),
        as_of: None,
        spaces,
    };
    // Warm every notebook's index first.
    mnemo.search(&who, &ask("warm up", None))?;
    let (mut alone, mut merged) = (Vec::new(), Vec::new());
    for _ in 0..queries {
        let text = format!("{} {} {}", rng.pick(NAMES), rng.pick(VERBS), rng.pick(OBJECTS));
        let t = Instant::now();
        std::hint::black_box(mnemo.search(&who, &ask(&text, Some(vec![mnemo::PRIVATE.into()])))?);
        alone.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let hits = mnemo.search(&who, &ask(&text, None))?;
        merged.push(t.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(hits);
    }
    // The merged ranking against each notebook ranked alone, in full, and merged here by
    // relevance: the same ten best fused scores means a shared exact pass missed nothing.
    let notebooks: Vec<String> = std::iter::once(mnemo::PRIVATE.to_owned())
        .chain((0..spaces).map(|s| format!("space-{s}")))
        .collect();
    let top_scores = |hits: &[mnemo::core::retrieval::Hit]| {
        let mut scores: Vec<f64> = hits.iter().map(|h| h.fused.score).collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        scores.truncate(10);
        scores
    };
    let checked = queries.min(300);
    let mut same = 0;
    for _ in 0..checked {
        let text = format!("{} {} {}", rng.pick(NAMES), rng.pick(VERBS), rng.pick(OBJECTS));
        let mut each = Vec::new();
        for notebook in &notebooks {
            each.extend(mnemo.search(&who, &ask(&text, Some(vec![notebook.clone()])))?);
        }
        let merged = mnemo.search(&who, &ask(&text, None))?;
        let (full, shared) = (top_scores(&each), top_scores(&merged));
        if full.len() == shared.len() && full.iter().zip(&shared).all(|(a, b)| (a - b).abs() < 1e-9)
        {
            same += 1;
        }
    }
    println!(
        "merged top 10 the same as each notebook ranked alone in full: {same} of {checked} queries"
    );
    alone.sort_by(f64::total_cmp);
    merged.sort_by(f64::total_cmp);
    let (a50, a95) = (percentile(&alone, 0.5), percentile(&alone, 0.95));
    let (m50, m95) = (percentile(&merged, 0.5), percentile(&merged, 0.95));
    println!(
        "search k=10, own notebook only: p50 {a50:.2} ms, p95 {a95:.2} ms; with {spaces} spaces of {per_space} memories: p50 {m50:.2} ms, p95 {m95:.2} ms ({:.2}x the p95)",
        m95 / a95
    );
    Ok(())
}
