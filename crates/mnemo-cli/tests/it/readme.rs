//! The README's CLI examples, run as written: each line of the "Using the CLI" block goes to
//! a shell with the built `mnemo` first on `PATH` and `MNEMO_DB` pointing at a fresh file;
//! `<ID>` stands for the memory the examples are about (the Austin one). Only `serve`, which
//! runs until stopped, is left out; every other line must succeed, and the search for
//! "where do I live?" must find Austin.

use std::process::Command;

use crate::Env;

/// The commands of the README's first `sh` block after `## Using the CLI`, comments removed.
fn readme_cli_lines() -> Vec<String> {
    readme_lines("## Using the CLI")
}

/// The commands of the README's first `sh` block after `heading`, comments removed.
fn readme_lines(heading: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md is readable");
    let section = readme.split(heading).nth(1).expect("the README section");
    let block =
        section.split("```sh").nth(1).and_then(|b| b.split("```").next()).expect("an sh block");
    block
        .lines()
        .map(|line| line.split("  #").next().unwrap_or_default().trim().to_owned())
        .filter(|line| !line.is_empty())
        .collect()
}

#[test]
fn the_readme_cli_examples_work_as_written() {
    let env = Env::new();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_mnemo")).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let chat = "{\"role\":\"user\",\"content\":\"I just adopted a beagle called Biscuit\"}\n\
                {\"role\":\"assistant\",\"content\":\"Congratulations!\"}\n";
    std::fs::write(env.path().join("chat.jsonl"), chat).unwrap();
    let lines = readme_cli_lines();
    assert!(lines.len() >= 15, "{lines:?}");
    let mut id: Option<String> = None;
    let mut ran = 0;
    for line in &lines {
        if line.contains("mnemo serve") {
            continue;
        }
        let line = match &id {
            Some(id) => line.replace("<ID>", id.as_str()),
            None => {
                assert!(!line.contains("<ID>"), "an example needs an id before any exists: {line}");
                line.clone()
            }
        };
        let stdout = run_line(&env, &path, &line);
        // The search example finds what the examples stored (the --as-of one asks about a
        // time before they were).
        if line.contains("search") && line.contains("--explain") {
            assert!(stdout.contains("Austin"), "{line} found no Austin:\n{stdout}");
        }
        if line.contains("--json list") {
            let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            let austin = listed["memories"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["content"].as_str().is_some_and(|c| c.contains("Austin")))
                .unwrap_or_else(|| panic!("no Austin memory listed: {stdout}"));
            id = Some(austin["id"].as_str().unwrap().to_owned());
        }
        ran += 1;
    }
    assert_eq!(ran, lines.len() - 1, "every line but serve ran");
}

/// Runs one README line in a shell with the built `mnemo` first on `path` and the
/// environment's database; fails unless it succeeds; returns its stdout.
fn run_line(env: &Env, path: &str, line: &str) -> String {
    let output = Command::new("sh")
        .args(["-c", line])
        .current_dir(env.path())
        .env("PATH", path)
        .env("MNEMO_DB", env.path().join("mnemo.db"))
        .env_remove("MNEMO_STORE")
        .env_remove("MNEMO_USER")
        .env_remove("MNEMO_DB_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "README line failed: {line}\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The "Shared spaces" example, run as written: `<ID>` is the proposal kim's write makes,
/// which dev approves, and lee's search then finds it, labelled.
#[test]
fn the_readme_shared_spaces_example_works_as_written() {
    let env = Env::new();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_mnemo")).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let lines = readme_lines("## Shared spaces");
    assert!(lines.len() >= 10, "{lines:?}");
    let mut id: Option<String> = None;
    for line in &lines {
        let line = match &id {
            Some(id) => line.replace("<ID>", id),
            None => line.clone(),
        };
        assert!(!line.contains("<ID>"), "an example needs an id before any exists: {line}");
        let stdout = run_line(&env, &path, &line);
        if line.contains("--user kim --space eng") {
            assert!(stdout.starts_with("pending "), "{line}: {stdout}");
            id = stdout.split_whitespace().nth(1).map(str::to_owned);
        }
        if line.contains("mnemo search --user lee") {
            assert!(stdout.contains("changelog entry") && stdout.contains("space eng"), "{stdout}");
        }
    }
}

/// `examples/walkthrough.sh` runs as its comment says, on the sample conversation: the
/// secret is redacted, the instruction is held, the forgotten statement is refused until the
/// user restates it.
#[test]
fn the_example_walkthrough_runs() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new("bash")
        .arg(format!("{root}/examples/walkthrough.sh"))
        .env("MNEMO", env!("CARGO_BIN_EXE_mnemo"))
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for expected in [
        "stored 14 turns (1 secrets redacted)",
        "pending (instruction_like)",
        "held: it reads like an instruction to the assistant",
        "Works as data engineer at a logistics startup",
        "Lives in Lisbon (moved from Chicago)",
        "refused (forgotten)",
    ] {
        assert!(stdout.contains(expected), "no {expected:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("sk-live-"), "the secret was shown:\n{stdout}");
}
