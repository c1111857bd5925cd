//! The real `mnemo serve` binary as a notebook under evaluation (the library's
//! `mnemo::eval::locomo::Notebook`), over HTTP with its clock at the time things were said
//! (`--now`, one server per moment, as a deployment's clock would read then). The library
//! in-process is `mnemo::eval::locomo::LibraryNotebook`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, format_err};
use mnemo::core::Timestamp;
use mnemo::eval::locomo::{EvalError, Notebook, Stored, Turn};
use serde_json::{Value, json};

use crate::locomo::TENANT;

/// The `mnemo` binary: `mnemo serve --now T` on loopback, restarted whenever the clock
/// moves, with turns posted to `/v1/memories` and questions to `/v1/search` under a tenant key.
pub(crate) struct Server {
    binary: PathBuf,
    db: PathBuf,
    key: String,
    running: Option<(Child, String)>,
}

impl Server {
    /// Creates the database and a tenant key with the binary at `binary`.
    pub(crate) fn open(binary: &Path, db: &Path) -> anyhow::Result<Self> {
        anyhow::ensure!(
            binary.is_file(),
            "no mnemo binary at {} (build it with `cargo build --release --bin mnemo`)",
            binary.display()
        );
        let output = Command::new(binary)
            .arg("--db")
            .arg(db)
            .args(["--json", "keys", "create", "--tenant", TENANT])
            .output()
            .context("cannot run mnemo keys create")?;
        anyhow::ensure!(
            output.status.success(),
            "mnemo keys create failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let created: Value = serde_json::from_slice(&output.stdout)?;
        let key = created["key"].as_str().ok_or_else(|| format_err!("no key in {created}"))?;
        Ok(Self {
            binary: binary.to_owned(),
            db: db.to_owned(),
            key: key.to_owned(),
            running: None,
        })
    }

    fn stop(&mut self) -> anyhow::Result<()> {
        if let Some((mut child, _)) = self.running.take() {
            // SIGTERM: the server finishes what it acknowledged and exits.
            Command::new("kill").args(["-TERM", &child.id().to_string()]).status()?;
            let status = child.wait()?;
            anyhow::ensure!(status.success(), "mnemo serve exited with {status}");
        }
        Ok(())
    }

    fn address(&self) -> anyhow::Result<&str> {
        self.running.as_ref().map(|(_, addr)| addr.as_str()).context("no server running")
    }

    /// One JSON request on a fresh connection; the status and the body.
    fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let addr = self.address()?;
        let mut stream = TcpStream::connect(addr)?;
        let payload = body.to_string();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
            self.key,
            payload.len()
        )?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        let (head, body) =
            response.split_once("\r\n\r\n").ok_or_else(|| format_err!("no HTTP response"))?;
        let status = head.split_whitespace().nth(1).unwrap_or_default();
        anyhow::ensure!(status == "200", "POST {path}: {head} {body}");
        Ok(serde_json::from_str(body)?)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some((child, _)) = &mut self.running {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Notebook for Server {
    fn set_clock(&mut self, at: Timestamp) -> Result<(), EvalError> {
        Ok(self.restart(at)?)
    }

    fn remember(&mut self, user: &str, turns: &[Turn]) -> Result<Vec<Stored>, EvalError> {
        Ok(self.post_turns(user, turns)?)
    }

    fn search(
        &mut self,
        user: &str,
        query: &str,
        k: usize,
        min_relevance: Option<f64>,
    ) -> Result<Vec<String>, EvalError> {
        Ok(self.ask(user, query, k, min_relevance)?)
    }
}

impl Server {
    /// Waits until the server's background refiner has refined everything written (the
    /// moments are days apart in a deployment).
    fn settle(&self) -> anyhow::Result<()> {
        let addr = self.address()?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
        loop {
            let mut stream = TcpStream::connect(addr)?;
            write!(stream, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
            let mut response = String::new();
            stream.read_to_string(&mut response)?;
            let waiting = response.lines().find_map(|line| {
                line.strip_prefix("mnemo_refine_waiting_notebooks ")?.trim().parse::<u64>().ok()
            });
            // No such metric: the embedder has no refining encoder.
            if waiting.is_none_or(|n| n == 0) {
                return Ok(());
            }
            anyhow::ensure!(std::time::Instant::now() < deadline, "refinement did not finish");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Restarts the server with its clock at `at`, once it has refined what it was given.
    fn restart(&mut self, at: Timestamp) -> anyhow::Result<()> {
        if self.running.is_some() {
            self.settle()?;
        }
        self.stop()?;
        let mut child = Command::new(&self.binary)
            .arg("--db")
            .arg(&self.db)
            .args(["--now", &at.to_string(), "serve", "--addr", "127.0.0.1:0"])
            // The evaluation is one client sending thousands of requests in a row.
            .args(["--rate-limit", "1000000"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start mnemo serve")?;
        let mut line = String::new();
        let stderr = child.stderr.take().context("no stderr")?;
        BufReader::new(stderr).read_line(&mut line)?;
        let addr = line
            .trim()
            .rsplit_once("http://")
            .map(|(_, addr)| addr.to_owned())
            .ok_or_else(|| format_err!("mnemo serve did not start: {line}"))?;
        self.running = Some((child, addr));
        Ok(())
    }

    /// Posts one session's turns, in order.
    fn post_turns(&self, user: &str, turns: &[Turn]) -> anyhow::Result<Vec<Stored>> {
        turns
            .iter()
            .map(|turn| {
                let mut body = json!({
                    "user_id": user,
                    "content": turn.text,
                    "kind": "episodic",
                    "session_id": turn.session,
                    "source": {"type": "user_stated", "ref": turn.reference},
                    "consent": true,
                });
                if let Some(speaker) = &turn.speaker {
                    body["metadata"] = json!({ "speaker": speaker });
                }
                let answer = self.post("/v1/memories", &body)?;
                Ok(Stored {
                    written: answer["id"].is_string(),
                    pending: answer["outcome"] == "pending",
                    reason: answer["reason"].as_str().unwrap_or_default().to_owned(),
                })
            })
            .collect()
    }

    /// The references of a search's results.
    fn ask(
        &self,
        user: &str,
        query: &str,
        k: usize,
        min_relevance: Option<f64>,
    ) -> anyhow::Result<Vec<String>> {
        let mut body = json!({"user_id": user, "query": query, "k": k});
        if let Some(min) = min_relevance {
            body["min_relevance"] = json!(min);
        }
        let answer = self.post("/v1/search", &body)?;
        Ok(answer["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["source"]["ref"].as_str().map(str::to_owned))
            .collect())
    }
}
