//! Store handles on one database behave as server nodes: migrations run once however many
//! start together, a newer schema is refused, and the database, not a node's memory, decides
//! which embedder's vectors may be stored. Ignored unless asked for (`.ci/run` runs them with
//! `--ignored`): they need the server at MNEMO_TEST_POSTGRES_URL.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use mnemo_core::lifecycle::{self, Candidate};
use mnemo_core::ports::{Embedded, MemoryStore, NewRecord};
use mnemo_core::{ErrorKind, MemoryId, Timestamp};
use mnemo_store_postgres::PostgresStore;
use mnemo_testkit::pg::{Scratch, server_url};
use mnemo_testkit::{T0, deletion, stated, who};

fn one_hot(seed: usize) -> Vec<f32> {
    let mut vector = vec![0.0; 64];
    vector[seed % 64] = 1.0;
    vector
}

fn record(id: &str, text: &str, model: &str) -> NewRecord {
    NewRecord {
        id: MemoryId(id.to_owned()),
        candidate: Candidate::validate(stated(text), T0).unwrap(),
        // Orthogonal vectors, so no record is a near-duplicate of another.
        embedding: Some(Embedded {
            model: model.to_owned(),
            vector: one_hot(id.len() + text.len()),
            calibration: None,
        }),
    }
}

fn write(store: &PostgresStore, id: &str, text: &str, model: &str) -> Result<(), ErrorKind> {
    let now: Timestamp = T0;
    store
        .write(&who("acme", "alice"), record(id, text, model), now, "test", &|c, ctx| {
            lifecycle::decide(c, ctx, now)
        })
        .map(|_| ())
        .map_err(|e| e.kind)
}

#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn a_node_that_remembers_an_old_embedder_cannot_mix_embedders() {
    let base = server_url();
    let scratch = Scratch::create(&base).unwrap();
    let a = mnemo_store_postgres::open(&scratch.url(), T0).unwrap();
    let b = mnemo_store_postgres::open(&scratch.url(), T0).unwrap();
    write(&a, "m1", "Keeps bees on the roof", "model-x").unwrap();
    // Its second write reads the stored embedder, which node A then remembers.
    write(&a, "m1b", "Keeps a kayak in the garage", "model-x").unwrap();
    // Every vector goes, then node B stores vectors of another embedder.
    a.forget_all(&who("acme", "alice"), &deletion(T0)).unwrap();
    write(&b, "m2", "Grows basil on the balcony", "model-y").unwrap();
    // Node A still remembers model-x; the database refuses the mix.
    assert_eq!(
        write(&a, "m3", "Walks to work on Fridays", "model-x"),
        Err(ErrorKind::InvalidInput)
    );
    assert_eq!(
        write(&b, "m4", "Walks to work on Fridays", "model-x"),
        Err(ErrorKind::InvalidInput)
    );
    write(&a, "m5", "Walks to work on Fridays", "model-y").unwrap();
}

#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn nodes_starting_together_migrate_once_and_refuse_a_newer_schema() {
    let base = server_url();
    let scratch = Scratch::create(&base).unwrap();
    let url = scratch.url();
    // Four nodes open an empty schema at once: each migration is applied exactly once.
    let versions: Vec<u32> = std::thread::scope(|threads| {
        let opening: Vec<_> = (0..4)
            .map(|_| {
                threads.spawn(|| {
                    mnemo_store_postgres::open(&url, T0).unwrap().schema_version().unwrap()
                })
            })
            .collect();
        opening.into_iter().map(|node| node.join().unwrap()).collect()
    });
    assert_eq!(versions, [mnemo_store_postgres::SCHEMA_VERSION; 4]);
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let applied: Vec<i32> = client
        .query("SELECT version FROM schema_migrations ORDER BY version", &[])
        .unwrap()
        .iter()
        .map(|row| row.try_get(0).unwrap())
        .collect();
    let expected: Vec<i32> = (1..=mnemo_store_postgres::SCHEMA_VERSION as i32).collect();
    assert_eq!(applied, expected);
    // A schema migrated by a newer mnemo is refused with a message naming both versions.
    client
        .execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)",
            &[],
        )
        .unwrap();
    let refused = mnemo_store_postgres::open(&url, T0).unwrap_err().to_string();
    assert!(refused.contains("99") && refused.contains("newer"), "{refused}");
}

/// Searches of a user are served while a batch of that user is being written on the same
/// node: the batch takes the user's cached index for one record at a time, never for its
/// whole transaction, so no search waits for most of the batch (before, one waited for all of
/// it and its commit).
#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn searches_are_served_while_a_batch_of_the_same_user_is_written() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    let scratch = Scratch::create(&server_url()).unwrap();
    let store = mnemo_store_postgres::open(&scratch.url(), T0).unwrap();
    let alice = who("acme", "alice");
    write(&store, "seed", "Keeps bees on the roof", "model-x").unwrap();
    let terms = vec!["bees".to_owned()];
    let filter = mnemo_core::ports::SearchFilter::default();
    let search = || {
        let query = mnemo_core::ports::SearchQuery {
            terms: &terms,
            modifiers: &[],
            vector: None,
            common: None,
            filter: &filter,
            notebooks: 1,
        };
        store.search(&alice, &query, T0, &|_| Vec::new()).unwrap();
    };
    search();
    let records: Vec<NewRecord> = (0..1500)
        .map(|i| record(&format!("b{i}"), &format!("Batch note {i} about the garden"), "model-x"))
        .collect();
    let done = AtomicBool::new(false);
    let (batch_time, waits) = std::thread::scope(|threads| {
        let writer = threads.spawn(|| {
            let start = Instant::now();
            store
                .write_batch(&alice, records, T0, "test", &|c, ctx| lifecycle::decide(c, ctx, T0))
                .unwrap();
            done.store(true, Ordering::SeqCst);
            start.elapsed()
        });
        let mut waits = Vec::new();
        while !done.load(Ordering::SeqCst) {
            let start = Instant::now();
            search();
            waits.push(start.elapsed());
        }
        (writer.join().unwrap(), waits)
    });
    let longest = waits.iter().max().copied().unwrap_or_default();
    eprintln!("{} searches during a {batch_time:?} batch; longest wait {longest:?}", waits.len());
    assert!(waits.len() >= 10, "{} searches during a {batch_time:?} batch", waits.len());
    assert!(
        longest < batch_time / 4 && longest < Duration::from_secs(1),
        "a search waited {longest:?} during a {batch_time:?} batch"
    );
}
