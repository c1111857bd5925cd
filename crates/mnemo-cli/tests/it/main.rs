//! Integration tests that drive the real `mnemo` binary in a temporary directory.
#![allow(clippy::unwrap_used)]

mod cli;
mod deletion;
mod encryption;
mod ingest;
mod isolation;
mod mcp;
mod panel;
mod policy;
mod postgres;
mod readme;
mod runs;
mod search;
mod serve;
mod sessions;
mod spaces;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A temporary database (or a given store) and a way to run `mnemo` against it.
pub struct Env {
    dir: tempfile::TempDir,
    db: PathBuf,
    store: Option<String>,
}

/// The result of one run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn json(&self) -> Value {
        assert_eq!(self.code, 0, "command failed: {}", self.stderr);
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("bad JSON {e}: {}", self.stdout))
    }
}

impl Default for Env {
    fn default() -> Self {
        Self::new()
    }
}

impl Env {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("mnemo.db");
        Self { dir, db, store: None }
    }

    /// Runs against the store at `url` (`--store`) instead of a temporary file.
    pub fn with_store(url: &str) -> Self {
        Self { store: Some(url.to_owned()), ..Self::new() }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemo"));
        match &self.store {
            Some(url) => cmd.arg("--store").arg(url),
            None => cmd.arg("--db").arg(&self.db),
        };
        cmd.env_remove("MNEMO_DB")
            .env_remove("MNEMO_STORE")
            .env_remove("MNEMO_USER")
            .env_remove("MNEMO_TENANT");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let output: Output = self.command().args(args).output().expect("mnemo runs");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs with `--json` and parses stdout.
    #[track_caller]
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(&all).json()
    }

    /// Remembers `text` for `user` and returns the new id.
    #[track_caller]
    pub fn remember(&self, user: &str, text: &str) -> String {
        let out = self.json(&["remember", "--user", user, text]);
        assert_eq!(out["outcome"], "added", "{out}");
        out["id"].as_str().unwrap().to_owned()
    }

    /// Every byte of the database file and its WAL.
    pub fn raw_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        for suffix in ["", "-wal", "-journal"] {
            let mut file = self.db.clone().into_os_string();
            file.push(suffix);
            if let Ok(content) = std::fs::read(&file) {
                bytes.extend(content);
            }
        }
        bytes
    }

    /// Sends JSON-RPC requests to `mnemo mcp --user USER` on stdio; returns its answers.
    pub fn mcp_answers(&self, user: &str, requests: &[Value]) -> Vec<Value> {
        use std::io::Write;
        let mut child = self
            .command()
            .args(["mcp", "--user", user])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for request in requests {
            writeln!(stdin, "{request}").unwrap();
        }
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn file_contains(&self, needle: &str) -> bool {
        let bytes = self.raw_bytes();
        bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
    }
}
