//! `mnemo serve` as a real process on loopback: keys from `mnemo keys`, an acknowledged write
//! that survives `kill -9`, and a clean exit on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use serde_json::Value;

use crate::Env;

/// Starts `mnemo serve` on a free port; returns the child and its address.
fn start(env: &Env) -> (Child, String) {
    let mut child = env
        .command()
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().rsplit("http://").next().unwrap().to_owned();
    (child, addr)
}

/// One HTTP/1.1 request; returns the status and JSON body.
fn http(addr: &str, method: &str, path: &str, key: &str, body: Option<&Value>) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let payload = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    // Bodies may be chunked: take the JSON between the first '{' and the last '}'.
    let json = match (body.find('{'), body.rfind('}')) {
        (Some(a), Some(b)) => serde_json::from_str(&body[a..=b]).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    (status, json)
}

#[test]
fn an_acknowledged_write_survives_kill_9_and_sigterm_stops_cleanly() {
    let env = Env::new();
    let created = env.json(&["keys", "create", "--tenant", "acme", "--user", "alice"]);
    let key = created["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("mnemo_"));
    let listed = env.json(&["keys", "list", "--tenant", "acme"]);
    assert!(listed.to_string().find(&key).is_none(), "a key list must not show secrets");

    let (mut server, addr) = start(&env);
    let (status, added) = http(
        &addr,
        "POST",
        "/v1/memories",
        &key,
        Some(&serde_json::json!({"content": "Keeps the spare key under the blue pot"})),
    );
    assert_eq!(status, 200, "{added}");
    let id = added["id"].as_str().unwrap().to_owned();
    server.kill().unwrap(); // SIGKILL: no chance to flush anything.
    server.wait().unwrap();

    let (mut server, addr) = start(&env);
    let (status, memory) = http(&addr, "GET", &format!("/v1/memories/{id}"), &key, None);
    assert_eq!(
        (status, memory["content"].as_str()),
        (200, Some("Keeps the spare key under the blue pot"))
    );
    let (status, _) = http(&addr, "GET", "/v1/memories", "mnemo_wrong", None);
    assert_eq!(status, 401);
    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());
    let exit = server.wait().unwrap();
    assert!(exit.success(), "server exited with {exit:?} on SIGTERM");
}
