//! Load benchmark of `mnemo serve` on loopback: N concurrent clients, each sending searches
//! and writes (80% / 20% unless `--write-percent` says otherwise) over keep-alive HTTP/1.1 connections for a fixed time, against a
//! store seeded with M memories. Reports throughput, latency percentiles and errors, then
//! checks that every acknowledged write is stored. With `--postgres URL --nodes N`, the store
//! is PostgreSQL (a fresh schema, dropped afterwards) and N server nodes, each with its own
//! store handle, connection pool and search cache, serve it on their own ports while the
//! clients take turns among them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::{Kind, Source, SourceType, Timestamp, UserRef};
use mnemo::{Mnemo, SystemClock};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const WORDS: &[&str] = &[
    "sailing",
    "pottery",
    "chess",
    "baking",
    "cycling",
    "astronomy",
    "origami",
    "jazz",
    "hiking",
    "gardening",
    "climbing",
    "painting",
    "running",
    "coffee",
    "tea",
    "lisbon",
    "berlin",
    "tokyo",
];

/// One keep-alive connection speaking just enough HTTP/1.1.
struct Connection {
    reader: BufReader<TcpStream>,
    addr: String,
}

impl Connection {
    async fn open(addr: &str) -> anyhow::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self { reader: BufReader::new(stream), addr: addr.to_owned() })
    }

    /// Sends a JSON POST; returns the status and the body's bytes (a search's are read, not
    /// decoded).
    async fn post(&mut self, path: &str, key: &str, body: &str) -> anyhow::Result<(u16, Vec<u8>)> {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        self.reader.get_mut().write_all(request.as_bytes()).await?;
        let mut status_line = String::new();
        self.reader.read_line(&mut status_line).await?;
        let status: u16 = status_line.split_whitespace().nth(1).context("no status")?.parse()?;
        let (mut length, mut line) = (0usize, String::new());
        loop {
            line.clear();
            self.reader.read_line(&mut line).await?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse()?;
            }
        }
        let mut body = vec![0u8; length];
        self.reader.read_exact(&mut body).await?;
        Ok((status, body))
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

pub(crate) fn run(
    clients: usize,
    memories: usize,
    seconds: u64,
    postgres: Option<&str>,
    nodes: usize,
    write_percent: u8,
) -> anyhow::Result<()> {
    anyhow::ensure!(nodes >= 1, "--nodes must be at least 1");
    anyhow::ensure!(nodes == 1 || postgres.is_some(), "several nodes need --postgres");
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("load.db");
    let embedder = mnemo::builtin_embedder()?;
    let scratch = postgres.map(mnemo_testkit::pg::Scratch::create).transpose()?;
    let open = || match &scratch {
        Some(scratch) => Mnemo::open_postgres(
            &scratch.url(),
            Some(embedder.clone()),
            Arc::new(SystemClock),
            "load",
        ),
        None => Mnemo::open_sqlite(&db, Some(embedder.clone()), Arc::new(SystemClock), "load"),
    };
    let mnemo = open()?;
    // Seed one user per client group so searches hit realistic per-user sizes.
    let users = 20usize;
    let per_user = memories / users;
    let mut serial = 0usize;
    for u in 0..users {
        let who = UserRef::new("load", &format!("user-{u}"))?;
        for chunk in (0..per_user).collect::<Vec<_>>().chunks(5000) {
            let batch: Vec<CandidateFields> = chunk
                .iter()
                .map(|i| {
                    serial += 1;
                    CandidateFields {
                        kind: Some(Kind::Episodic),
                        content: format!(
                            "{} {} note {i} about {}",
                            WORDS[i % WORDS.len()],
                            WORDS[(i / 7) % WORDS.len()],
                            WORDS[(i / 3) % WORDS.len()]
                        ),
                        source: Some(Source {
                            source_type: SourceType::UserStated,
                            source_ref: Some(format!("seed-{serial}")),
                            captured_at: Timestamp::from_millis(0),
                            extractor: None,
                        }),
                        ..Default::default()
                    }
                })
                .collect();
            mnemo.remember_batch(&who, batch)?;
        }
    }
    let key = mnemo.create_key("load", None, false, None)?.0;
    let limit = mnemo_server::RateLimit { burst: 1e9, per_second: 1e9 };
    let mut states = vec![mnemo_server::AppState::new(mnemo, limit)];
    for _ in 1..nodes {
        states.push(mnemo_server::AppState::new(open()?, limit));
    }
    let checker = Arc::clone(&states[0].mnemo);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = runtime.block_on(async move {
        let mut addrs = Vec::new();
        for state in states {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            addrs.push(listener.local_addr()?.to_string());
            tokio::spawn(mnemo_server::serve(listener, state, mnemo_server::Limits::default()));
        }
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let mut tasks = Vec::new();
        for c in 0..clients {
            let (addr, key) = (addrs[c % addrs.len()].clone(), key.clone());
            tasks.push(tokio::spawn(async move {
                let mut conn = Connection::open(&addr).await?;
                let (mut search_ms, mut write_ms, mut errors, mut acked) = (Vec::new(), Vec::new(), 0usize, Vec::new());
                let mut i = 0usize;
                while Instant::now() < deadline {
                    i += 1;
                    let user = format!("user-{}", (c + i) % users);
                    let start = Instant::now();
                    // Writes spread evenly: request i writes when the running share falls short.
                    if (i * usize::from(write_percent)) / 100 > ((i - 1) * usize::from(write_percent)) / 100 {
                        let text = format!("client {c} wrote fact {i} about {}", WORDS[(c * 31 + i) % WORDS.len()]);
                        let body = serde_json::json!({"user_id": user, "content": text, "kind": "episodic", "source": {"type": "user_stated", "ref": format!("c{c}-{i}")}}).to_string();
                        match conn.post("/v1/memories", &key, &body).await {
                            Ok((200, b)) => {
                                write_ms.push(start.elapsed().as_secs_f64() * 1000.0);
                                let v: serde_json::Value = serde_json::from_slice(&b).unwrap_or_default();
                                if v["outcome"] == "added" {
                                    acked.push((user, v["id"].as_str().unwrap_or_default().to_owned()));
                                }
                            }
                            _ => errors += 1,
                        }
                    } else {
                        let q = format!("{} and {}", WORDS[(c + i) % WORDS.len()], WORDS[(c * 7 + i) % WORDS.len()]);
                        let body = serde_json::json!({"user_id": user, "query": q, "k": 10}).to_string();
                        match conn.post("/v1/search", &key, &body).await {
                            Ok((200, _)) => search_ms.push(start.elapsed().as_secs_f64() * 1000.0),
                            _ => errors += 1,
                        }
                    }
                }
                anyhow::Ok((search_ms, write_ms, errors, acked))
            }));
        }
        let mut all_search = Vec::new();
        let mut all_write = Vec::new();
        let mut errors = 0;
        let mut acked = Vec::new();
        for t in tasks {
            let (s, w, e, a) = t.await??;
            all_search.extend(s);
            all_write.extend(w);
            errors += e;
            acked.extend(a);
        }
        anyhow::Ok((all_search, all_write, errors, acked))
    })?;
    let (mut search, mut write, errors, acked) = report;
    search.sort_by(f64::total_cmp);
    write.sort_by(f64::total_cmp);
    let mut all: Vec<f64> = search.iter().chain(&write).copied().collect();
    all.sort_by(f64::total_cmp);
    let lost = acked
        .iter()
        .filter(|(user, id)| {
            let who = UserRef::new("load", user).expect("valid user");
            checker.get(&who, &mnemo::core::MemoryId(id.clone())).is_err()
        })
        .count();
    let total = all.len();
    let store = if postgres.is_some() { "postgres" } else { "sqlite" };
    println!(
        "load: {clients} clients, {seconds} s, {memories} memories over {users} users ({}% search k=10 / {write_percent}% remember), {store}, {nodes} node(s)",
        100 - write_percent
    );
    println!("requests: {total} ok ({:.0}/s), {errors} errors", total as f64 / seconds as f64);
    println!(
        "all:    p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        percentile(&all, 0.5),
        percentile(&all, 0.95),
        percentile(&all, 0.99)
    );
    println!(
        "search: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms ({} requests)",
        percentile(&search, 0.5),
        percentile(&search, 0.95),
        percentile(&search, 0.99),
        search.len()
    );
    println!(
        "write:  p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms ({} requests)",
        percentile(&write, 0.5),
        percentile(&write, 0.95),
        percentile(&write, 0.99),
        write.len()
    );
    println!("acknowledged writes: {}, missing afterwards: {lost}", acked.len());
    anyhow::ensure!(errors == 0 && lost == 0, "errors or lost writes");
    Ok(())
}
