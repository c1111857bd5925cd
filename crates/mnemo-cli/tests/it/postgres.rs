//! The PostgreSQL store behind real processes: the CLI with `--store postgres://...`, and two
//! `mnemo serve` nodes on one database under parallel writers. Ignored unless asked for
//! (`.ci/run` runs them with `--ignored`): they need the server at MNEMO_TEST_POSTGRES_URL.

use std::collections::BTreeMap;

use mnemo_testkit::pg::{Scratch, server_url};
use serde_json::{Value, json};

use crate::Env;
use crate::serve::{http, start};

/// Writers per node, and writes per writer.
const WRITERS: usize = 8;
const WRITES: usize = 20;

#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn the_cli_runs_on_postgres() {
    let base = server_url();
    let scratch = Scratch::create(&base).unwrap();
    let env = Env::with_store(&scratch.url());
    let home = |text: &str| {
        let args = ["remember", "--user", "alice", "--subject", "user", "--attribute", "home_city"];
        env.json(&[&args[..], &[text]].concat())
    };
    let first = home("I live in Dallas");
    assert_eq!(first["outcome"], "added", "{first}");
    let second = home("I moved to Austin");
    assert_eq!(second["outcome"], "updated", "{second}");
    let found = env.json(&["search", "--user", "alice", "Austin"]);
    assert!(found.to_string().contains("I moved to Austin"), "{found}");
    // Another user of the same database sees nothing of alice's.
    let bob = env.json(&["list", "--user", "bob"]);
    assert_eq!(bob["memories"].as_array().map(Vec::len), Some(0), "{bob}");
    // A server on it stops cleanly on SIGTERM (closing its pool outside the async runtime).
    let (mut server, _addr) = start(&env);
    let terminated =
        std::process::Command::new("kill").args(["-TERM", &server.id().to_string()]).status();
    assert!(terminated.unwrap().success());
    let exit = server.wait().unwrap();
    assert!(exit.success(), "server exited with {exit:?} on SIGTERM");
    // A bad URL is a clear error that names the store, without the password.
    let bad =
        Env::with_store("postgres://mnemo:hunter2@127.0.0.1:1/none").run(&["list", "--user", "a"]);
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("PostgreSQL store"), "{}", bad.stderr);
    assert!(!bad.stderr.contains("hunter2"), "{}", bad.stderr);
}

#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn two_nodes_lose_no_writes_and_keep_one_active_value_per_key() {
    let base = server_url();
    let scratch = Scratch::create(&base).unwrap();
    let env = Env::with_store(&scratch.url());
    // A tenant key per writer: each key has its own rate limit.
    let keys: Vec<String> = (0..=2 * WRITERS)
        .map(|_| {
            env.json(&["keys", "create", "--tenant", "acme"])["key"].as_str().unwrap().to_owned()
        })
        .collect();
    let key = keys[2 * WRITERS].clone();
    // Both are killed when the test ends, failed or not, so they hold no connections.
    let (_node_a, a) = start(&env);
    let (_node_b, b) = start(&env);
    let nodes = [a.as_str(), b.as_str()];

    // Parallel writers, each alternating between the nodes: facts of their own, and new
    // values of one key that every writer of the user updates at once.
    std::thread::scope(|threads| {
        for writer in 0..2 * WRITERS {
            let key = &keys[writer];
            threads.spawn(move || {
                for i in 0..WRITES {
                    let node = nodes[(writer + i) % 2];
                    let user = format!("user-{}", writer % 2);
                    let fact = json!({"user_id": user, "content": format!("Writer {writer} logged parcel {i} at dock {}", 100 + writer * WRITES + i)});
                    let (status, body) = http(node, "POST", "/v1/memories", key, Some(&fact));
                    assert_eq!((status, body["outcome"].as_str()), (200, Some("added")), "{body}");
                    let update = json!({"user_id": user, "subject": "user", "attribute": "shift",
                        "content": format!("I work the shift at station {}", 1000 + writer * WRITES + i)});
                    let (status, body) = http(node, "POST", "/v1/memories", key, Some(&update));
                    assert_eq!(status, 200, "{body}");
                    assert!(matches!(body["outcome"].as_str(), Some("added" | "updated")), "{body}");
                }
            });
        }
    });

    for user in ["user-0", "user-1"] {
        for node in nodes {
            let (status, listed) =
                http(node, "GET", &format!("/v1/memories?user_id={user}"), &key, None);
            assert_eq!(status, 200, "{listed}");
            let memories = listed["memories"].as_array().unwrap();
            let facts = memories.iter().filter(|m| m["attribute"].is_null()).count();
            assert_eq!(facts, WRITERS * WRITES, "every acknowledged fact of {user} is stored");
            let mut by_key: BTreeMap<String, (usize, usize)> = BTreeMap::new();
            for m in memories.iter().filter(|m| !m["attribute"].is_null()) {
                let entry = by_key.entry(m["attribute"].as_str().unwrap().to_owned()).or_default();
                match m["status"].as_str() {
                    Some("active") => entry.0 += 1,
                    Some("superseded") => entry.1 += 1,
                    other => panic!("unexpected status {other:?}"),
                }
            }
            assert_eq!(by_key.len(), 1, "{by_key:?}");
            for (attribute, (active, superseded)) in &by_key {
                assert_eq!(*active, 1, "{user} {attribute}: exactly one active value");
                assert_eq!(
                    active + superseded,
                    WRITERS * WRITES,
                    "{user} {attribute}: no update lost"
                );
            }
        }
    }

    // A node's cached index follows the other node's writes and deletions.
    let search = |node: &str, query: &str| -> Value {
        let (status, found) = http(
            node,
            "POST",
            "/v1/search",
            &key,
            Some(&json!({"user_id": "user-0", "query": query, "min_relevance": 0.0})),
        );
        assert_eq!(status, 200, "{found}");
        found
    };
    assert!(!search(a.as_str(), "zeppelin hangar").to_string().contains("zeppelin"));
    let (status, added) = http(
        &b,
        "POST",
        "/v1/memories",
        &key,
        Some(&json!({"user_id": "user-0", "content": "The zeppelin hangar opens at dawn"})),
    );
    assert_eq!(status, 200, "{added}");
    assert!(
        search(a.as_str(), "zeppelin hangar")
            .to_string()
            .contains("The zeppelin hangar opens at dawn")
    );
    let id = added["id"].as_str().unwrap();
    let (status, _) = http(&b, "DELETE", &format!("/v1/memories/{id}?user_id=user-0"), &key, None);
    assert_eq!(status, 200);
    assert!(!search(a.as_str(), "zeppelin hangar").to_string().contains("zeppelin"));
}
