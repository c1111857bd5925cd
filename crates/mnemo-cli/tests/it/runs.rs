//! Runs (working memory) through the binary: every command is a fresh process, so a run
//! that is found again has survived a restart and resumed from the store.

use crate::Env;

#[test]
fn a_run_resumes_across_processes_and_ending_it_leaves_one_audit_line() {
    let env = Env::new();
    let started =
        env.run(&["run", "start", "--user", "alice", "--goal", "Rotate the Kestrelwing8821 keys"]);
    assert_eq!(started.code, 0, "{}", started.stderr);
    let id = started.stdout.trim().to_owned();
    assert!(!id.is_empty());
    for args in [
        vec!["run", "step", &id, "--add", "List the services that use the key"],
        vec!["run", "step", &id, "--add", "Issue the new key"],
        vec!["run", "step", &id, "--done", "1"],
        vec!["run", "step", &id, "--blocked", "2"],
        vec![
            "run",
            "evidence",
            &id,
            "--source",
            "inventory.csv",
            "--excerpt",
            "billing and search use it",
        ],
        vec![
            "run",
            "tool",
            &id,
            "--tool",
            "read_file",
            "--ref",
            "config.ts",
            "--note",
            "240 lines",
        ],
    ] {
        let mut all = vec!["--user", "alice"];
        all.extend(args);
        let out = env.run(&all);
        assert_eq!(out.code, 0, "{all:?}: {}", out.stderr);
    }
    let run = env.json(&["run", "show", &id, "--user", "alice"]);
    assert_eq!(run["goal"], "Rotate the Kestrelwing8821 keys");
    let steps: Vec<(String, String)> = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["text"].as_str().unwrap().to_owned(), s["status"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        steps,
        [
            ("List the services that use the key".to_owned(), "done".to_owned()),
            ("Issue the new key".to_owned(), "blocked".to_owned())
        ]
    );
    assert_eq!(run["evidence"][0]["source_id"], "inventory.csv");
    assert!(run["evidence"][0]["retrieved_at"].is_string());
    assert_eq!(run["tool_results"][0]["note"], "240 lines");
    let text = env.run(&["run", "show", &id, "--user", "alice"]);
    assert!(text.stdout.contains("1. [done] List the services"), "{}", text.stdout);
    let listed = env.json(&["run", "list", "--user", "alice"]);
    assert_eq!(listed["runs"].as_array().unwrap().len(), 1);

    let ended = env.json(&["run", "end", &id, "--user", "alice"]);
    assert_eq!((ended["ended"].as_bool(), ended["steps"].as_u64()), (Some(true), Some(2)));
    let gone = env.run(&["run", "show", &id, "--user", "alice"]);
    assert_eq!(gone.code, 3, "not found: {}", gone.stderr);
    assert!(gone.stderr.contains("not found"), "{}", gone.stderr);
    assert!(!env.file_contains("Kestrelwing8821"));
    let audit = env.json(&["audit", "--user", "alice"]);
    let entries = audit["entries"].as_array().unwrap();
    assert_eq!(entries[0]["action"], "run_ended");
    assert_eq!(entries[0]["run_id"], id.as_str());
    assert!(!audit.to_string().contains("Kestrelwing"));
}

#[test]
fn run_commands_reject_bad_input_and_other_users() {
    let env = Env::new();
    let id = env
        .run(&["run", "start", "--user", "alice", "--goal", "Plan the offsite"])
        .stdout
        .trim()
        .to_owned();
    let cases: [(&[&str], i32, &str); 5] = [
        (&["run", "start", "--user", "alice", "--goal", "  "], 2, "goal"),
        (&["run", "step", &id, "--user", "alice", "--done", "4"], 3, "no step 4"),
        (&["run", "step", &id, "--user", "alice"], 2, "--add"),
        (&["run", "step", &id, "--user", "bob", "--add", "steal"], 3, "not found"),
        (&["run", "end", &id, "--user", "bob"], 3, "not found"),
    ];
    for (args, code, needle) in cases {
        let out = env.run(args);
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{args:?}: {}", out.stderr);
    }
    let run = env.json(&["run", "show", &id, "--user", "alice"]);
    assert!(run["steps"].as_array().unwrap().is_empty());
}
