//! Shared spaces through the real binary: `mnemo space …`, writing with `--space`, review by
//! a maintainer, labelled reads in search and context, the `--spaces` filter, bad input, and
//! the MCP tools' `space` arguments. The same flow runs on PostgreSQL (ignored unless asked
//! for; `.ci/run` runs it with `--ignored`).

use mnemo_testkit::pg::{Scratch, server_url};
use serde_json::{Value, json};

use crate::Env;

/// The whole flow on one store.
fn spaces_flow(env: &Env) {
    let created = env.json(&["space", "create", "eng", "--name", "Engineering"]);
    assert_eq!(created["id"], "eng", "{created}");
    for (user, role) in [("dev", "maintainer"), ("kim", "contributor"), ("lee", "reader")] {
        let member = env.json(&["space", "member", "add", "eng", user, "--role", role]);
        assert_eq!(member["role"], role, "{member}");
    }
    // Bad input gets a one-line error and changes nothing.
    let bad_role = env.run(&["space", "member", "add", "eng", "zed", "--role", "owner"]);
    assert_eq!(bad_role.code, 2, "{}", bad_role.stderr);
    assert!(bad_role.stderr.contains("owner") && bad_role.stderr.trim().lines().count() == 1);
    let unknown = env.run(&["space", "member", "add", "nope", "zed", "--role", "reader"]);
    assert_eq!(unknown.code, 3, "{}", unknown.stderr);
    assert!(unknown.stderr.contains("space nope not found"), "{}", unknown.stderr);
    let again = env.run(&["space", "create", "eng"]);
    assert_ne!(again.code, 0);
    let listed = env.json(&["space", "member", "list", "eng"]);
    assert_eq!(listed["members"].as_array().unwrap().len(), 3, "{listed}");

    // A contributor proposes; the maintainer sees why it waits and approves it.
    let proposed = env.json(&[
        "remember",
        "--user",
        "kim",
        "--space",
        "eng",
        "Every pull request needs a changelog entry",
    ]);
    assert_eq!(
        (&proposed["outcome"], &proposed["reason"]),
        (&json!("pending"), &json!("needs_review"))
    );
    let id = proposed["id"].as_str().unwrap().to_owned();
    let waiting = env.run(&["pending", "--user", "dev"]);
    assert!(
        waiting.stdout.contains(&id) && waiting.stdout.contains("review"),
        "{}",
        waiting.stdout
    );
    let reader = env.run(&["remember", "--user", "lee", "--space", "eng", "Reader's idea"]);
    assert_eq!(reader.code, 7, "{}", reader.stderr);
    assert!(reader.stderr.contains("a reader of space eng may not write"), "{}", reader.stderr);
    let approved = env.json(&["confirm", "--user", "dev", &id]);
    assert_eq!(approved["confirmed"], id.as_str(), "{approved}");

    // A convention with a review date past is listed for its maintainers to re-confirm,
    // not for a reader; a private memory past its date for its own user.
    let policy = env.json(&[
        "remember",
        "--user",
        "kim",
        "--space",
        "eng",
        "--source-ref",
        "docs/policies/releases.md",
        "--review-after",
        "2020-01-01T00:00:00Z",
        "Releases are cut every second Tuesday",
    ]);
    let policy_id = policy["id"].as_str().unwrap().to_owned();
    env.json(&["confirm", "--user", "dev", &policy_id]);
    env.json(&[
        "remember",
        "--user",
        "lee",
        "--review-after",
        "2020-01-01T00:00:00Z",
        "I use a standing desk",
    ]);
    let due = |user: &str| env.json(&["reviews", "--user", user])["memories"].to_string();
    assert!(due("dev").contains(&policy_id) && !due("dev").contains("standing desk"));
    let lee_due = due("lee");
    assert!(lee_due.contains("standing desk") && !lee_due.contains(&policy_id), "{lee_due}");
    let shown = env.json(&["get", "--user", "lee", &policy_id]);
    assert_eq!(shown["source"]["ref"], "docs/policies/releases.md", "{shown}");

    // Members read it beside their own, labelled; `--spaces` narrows the read.
    env.remember("lee", "I prefer descriptive variable names");
    let found =
        env.run(&["search", "--user", "lee", "--min-relevance", "0", "pull request changelog"]);
    assert!(found.stdout.contains("space eng, by kim"), "{}", found.stdout);
    let private = env.json(&[
        "search",
        "--user",
        "lee",
        "--spaces",
        "private",
        "--min-relevance",
        "0",
        "pull request changelog",
    ]);
    assert!(
        private["results"].as_array().unwrap().iter().all(|r| r["scope"] == "user"),
        "{private}"
    );
    let context = env.run(&["context", "--user", "lee", "what do pull requests need?"]);
    assert!(context.stdout.contains("; space eng] Every pull request"), "{}", context.stdout);
    let shown = env.run(&["space", "show", "eng"]);
    assert!(shown.stdout.contains("who can see its memories (3 members)"), "{}", shown.stdout);
    let mine = env.json(&["space", "list", "--user", "lee"]);
    assert_eq!(
        (&mine["spaces"][0]["id"], &mine["spaces"][0]["role"]),
        (&json!("eng"), &json!("reader"))
    );

    // The MCP tools write and read the user's spaces as the user may.
    let call = |id: u64, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let answers = env.mcp_answers(
        "kim",
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            call(2, "memory_remember", json!({"content": "Releases are tagged on Thursdays", "space": "eng"})),
            call(3, "memory_search", json!({"query": "what do pull requests need", "spaces": ["eng"]})),
            call(4, "memory_remember", json!({"content": "A note", "space": "ops"})),
        ],
    );
    assert_eq!(answers.len(), 4, "{answers:?}");
    // Calls may be answered in any order: by id.
    let mut answers = answers;
    answers.sort_by_key(|a| a["id"].as_u64());
    let text = |answer: &Value| answer["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text(&answers[1]).contains("needs_review"), "{}", text(&answers[1]));
    assert!(text(&answers[2]).contains("\"space\":\"eng\""), "{}", text(&answers[2]));
    assert_eq!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    assert!(text(&answers[3]).contains("space ops not found"), "{}", text(&answers[3]));

    // Leaving stops the reads; deleting the space deletes its memories.
    env.json(&["space", "member", "remove", "eng", "lee"]);
    let after = env.run(&["get", "--user", "lee", &id]);
    assert_eq!(after.code, 3, "{}", after.stderr);
    let deleted = env.json(&["space", "delete", "eng"]);
    assert_eq!(deleted["deleted"], "eng", "{deleted}");
    assert_eq!(env.run(&["get", "--user", "dev", &id]).code, 3);
}

#[test]
fn spaces_from_the_command_line_and_mcp() {
    let env = Env::new();
    spaces_flow(&env);
    let bytes = String::from_utf8_lossy(&env.raw_bytes()).into_owned();
    assert!(!bytes.contains("changelog entry"), "a deleted space's memory is still in the file");
}

#[test]
#[ignore = "needs PostgreSQL with pgvector at MNEMO_TEST_POSTGRES_URL; .ci/run starts one"]
fn spaces_on_postgres() {
    let scratch = Scratch::create(&server_url()).unwrap();
    spaces_flow(&Env::with_store(&scratch.url()));
}
