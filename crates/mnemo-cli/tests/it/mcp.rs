//! `mnemo mcp` over stdio as an agent host runs it: JSON-RPC lines on stdin and stdout,
//! nothing else on stdout; its background refiner takes up what the CLI wrote.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::Env;

#[test]
fn stdio_server_lists_and_calls_tools_with_a_clean_stdout() {
    let env = Env::new();
    env.remember("alice", "Alice prefers aisle seats");
    let vector = || env.json(&["--user", "alice", "export"])["memories"][0]["embedding"].clone();
    let written = vector();
    let mut child = env
        .command()
        .args(["mcp", "--user", "alice"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = move |value: Value| {
        writeln!(stdin, "{value}").unwrap();
        stdin.flush().unwrap();
    };
    let mut read = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line)
            .unwrap_or_else(|e| panic!("stdout is not protocol JSON ({e}): {line:?}"))
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}));
    let init = read();
    assert_eq!(init["result"]["serverInfo"]["name"], "mnemo");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools = read();
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 8, "{tools}");
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_search", "arguments": {"query": "does Alice prefer aisle seats?"}}}),
    );
    let called = read();
    let text = called["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Alice prefers aisle seats"), "{called}");
    // The record the CLI wrote is refined by the server's background thread.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while vector() == written {
        assert!(std::time::Instant::now() < deadline, "not refined within a minute");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(send);
    child.wait().unwrap();
}
