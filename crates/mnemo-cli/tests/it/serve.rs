//! `mnemo serve` as a real process on loopback: keys from `mnemo keys`, an acknowledged write
//! that survives `kill -9`, and a clean exit on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use serde_json::Value;

use crate::Env;

/// A running `mnemo serve`, killed when the test ends, failed or not, so a failing test
/// leaves no server behind.
pub(crate) struct Server(Child);

impl std::ops::Deref for Server {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Already stopped by the test: both fail harmlessly.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `mnemo serve` on a free port; returns the server and its address.
pub(crate) fn start(env: &Env) -> (Server, String) {
    start_with(env, &[])
}

/// Spawns `mnemo serve` on a free port with extra options, its stderr piped to the test.
fn spawn_server(env: &Env, options: &[&str]) -> Server {
    let child = env
        .command()
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(options)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    Server(child)
}

/// Starts `mnemo serve` on a free port with extra options.
fn start_with(env: &Env, options: &[&str]) -> (Server, String) {
    let mut child = spawn_server(env, options);
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().rsplit("http://").next().unwrap().to_owned();
    (child, addr)
}

/// A new key for one user of a tenant.
fn user_key(env: &Env, tenant: &str, user: &str) -> String {
    let created = env.json(&["keys", "create", "--tenant", tenant, "--user", user]);
    created["key"].as_str().unwrap().to_owned()
}

/// One HTTP/1.1 request; returns the status and JSON body.
pub(crate) fn http(
    addr: &str,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&Value>,
) -> (u16, Value) {
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

/// Group commit under `kill -9`: many clients write at once, so writes share commits; the
/// server is killed mid-stream, and every write it acknowledged is there after a restart.
#[test]
fn acknowledged_concurrent_writes_survive_kill_9() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    let env = Env::new();
    let key = env.json(&["keys", "create", "--tenant", "acme"])["key"].as_str().unwrap().to_owned();
    let (mut server, addr) = start_with(&env, &["--rate-limit", "100000"]);
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..16)
        .map(|client| {
            let (addr, key) = (addr.clone(), key.clone());
            let (acknowledged, count) = (acknowledged.clone(), count.clone());
            std::thread::spawn(move || {
                for n in 0.. {
                    let body = serde_json::json!({
                        "user_id": format!("user-{}", client % 4),
                        "content": format!("Client {client} wrote note number {n} about the garden"),
                    });
                    // Once the server is gone, connecting or reading fails: stop.
                    let Some((200, answer)) = try_http(&addr, "/v1/memories", &key, &body) else {
                        return;
                    };
                    let id = answer["id"].as_str().unwrap().to_owned();
                    acknowledged.lock().unwrap().push((client % 4, id));
                    count.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    while count.load(Ordering::SeqCst) < 300 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    server.kill().unwrap(); // SIGKILL, with writes in flight.
    server.wait().unwrap();
    for writer in writers {
        writer.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() >= 300);
    let (mut server, addr) = start_with(&env, &["--rate-limit", "100000"]);
    for (user, id) in &acknowledged {
        let (status, memory) =
            http(&addr, "GET", &format!("/v1/memories/{id}?user_id=user-{user}"), &key, None);
        assert_eq!(status, 200, "acknowledged write {id} of user-{user} is missing: {memory}");
    }
    server.kill().unwrap();
    server.wait().unwrap();
}

/// One POST like [`http`], or `None` when the server cannot be reached or hangs up.
fn try_http(addr: &str, path: &str, key: &str, body: &Value) -> Option<(u16, Value)> {
    let mut stream = TcpStream::connect(addr).ok()?;
    let payload = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response.split("\r\n\r\n").nth(1)?;
    let json = serde_json::from_str(body.get(body.find('{')?..=body.rfind('}')?)?).ok()?;
    Some((status, json))
}

/// A server started before any key exists says how to make one, after its address.
#[test]
fn serve_without_keys_says_how_to_create_one() {
    let env = Env::new();
    let mut child = spawn_server(&env, &[]);
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(first.contains("serving on http://"), "{first}");
    assert!(
        second.contains("no API key exists") && second.contains("mnemo keys create"),
        "{second}"
    );
}

/// MCP over streamable HTTP at /mcp, spoken as raw JSON-RPC.
#[test]
fn mcp_over_streamable_http() {
    let env = Env::new();
    let key = user_key(&env, "acme", "alice");
    let tenant_key =
        env.json(&["keys", "create", "--tenant", "acme"])["key"].as_str().unwrap().to_owned();
    let (mut server, addr) = start(&env);
    // One MCP request with `key` (and, for a tenant key, the user it acts for).
    let call = |key: &str, user: Option<&str>, body: Value, session: Option<&str>| {
        let mut stream = TcpStream::connect(&addr).unwrap();
        let payload = body.to_string();
        let mut headers = session.map(|s| format!("Mcp-Session-Id: {s}\r\n")).unwrap_or_default();
        if let Some(user) = user {
            headers.push_str(&format!("x-mnemo-user: {user}\r\n"));
        }
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{payload}",
            payload.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status: u16 = response.split_whitespace().nth(1).unwrap().parse().unwrap();
        let session = response
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("mcp-session-id:"))
            .map(|l| l.split_once(':').unwrap().1.trim().to_owned());
        (status, response, session)
    };
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let open_session = |key: &str, user: Option<&str>| {
        let (status, response, session) = call(key, user, initialize.clone(), None);
        assert_eq!(status, 200, "{response}");
        assert!(response.contains("\"mnemo\""), "{response}");
        call(
            key,
            user,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            session.as_deref(),
        );
        session
    };
    let tool = |name: &str, arguments: Value| serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let rpc = |body: Value, session: Option<&str>| call(&key, None, body, session);

    let session = open_session(&key, None);
    let (_, listed, _) = rpc(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        session.as_deref(),
    );
    assert!(listed.contains("memory_search") && listed.contains("profile_get"), "{listed}");
    let (status, saved, _) = rpc(
        tool(
            "memory_remember",
            serde_json::json!({"content": "Keeps the spare key under the blue pot"}),
        ),
        session.as_deref(),
    );
    assert_eq!(status, 200, "{saved}");
    assert!(saved.contains("added"), "{saved}");

    // A user key cannot name another user; a tenant key acts for the user it names, and sees
    // only that user's memories.
    let (status, refused, _) = call(&key, Some("bob"), initialize.clone(), None);
    assert_eq!(status, 403, "{refused}");
    let bob = open_session(&tenant_key, Some("bob"));
    let (_, bobs, _) =
        call(&tenant_key, Some("bob"), tool("memory_list", serde_json::json!({})), bob.as_deref());
    assert!(bobs.contains("\"result\"") && !bobs.contains("blue pot"), "{bobs}");
    let alices_session = open_session(&tenant_key, Some("alice"));
    let (_, alices, _) = call(
        &tenant_key,
        Some("alice"),
        tool("memory_list", serde_json::json!({})),
        alices_session.as_deref(),
    );
    assert!(alices.contains("blue pot"), "{alices}");
    let (status, _, _) = call(&tenant_key, None, initialize.clone(), None);
    assert_eq!(status, 400, "a tenant key must name the user");

    // Without a key there is no MCP either.
    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");

    server.kill().unwrap();
    server.wait().unwrap();
}

/// Runs over HTTP: a run survives a `kill -9` of the server and resumes from the store; a
/// key of another user cannot see it; ending it deletes it.
#[test]
fn runs_over_http_survive_a_restart() {
    let env = Env::new();
    let (alice, bob) = (user_key(&env, "acme", "alice"), user_key(&env, "acme", "bob"));
    let (mut server, addr) = start(&env);
    let goal = serde_json::json!({"goal": "Upgrade the database cluster"});
    let (status, run) = http(&addr, "POST", "/v1/runs", &alice, Some(&goal));
    assert_eq!(status, 200, "{run}");
    let id = run["id"].as_str().unwrap().to_owned();
    let step = serde_json::json!({"text": "Snapshot every node"});
    let (status, _) = http(&addr, "POST", &format!("/v1/runs/{id}/steps"), &alice, Some(&step));
    assert_eq!(status, 200);
    let evidence =
        serde_json::json!({"source_id": "wiki/upgrades", "excerpt": "one node at a time"});
    let (status, _) =
        http(&addr, "POST", &format!("/v1/runs/{id}/evidence"), &alice, Some(&evidence));
    assert_eq!(status, 200);
    server.kill().unwrap();
    server.wait().unwrap();

    let (mut server, addr) = start(&env);
    let done = serde_json::json!({"status": "done"});
    let (status, run) = http(&addr, "PUT", &format!("/v1/runs/{id}/steps/1"), &alice, Some(&done));
    assert_eq!(status, 200, "{run}");
    assert_eq!(run["steps"][0]["status"], "done");
    assert_eq!(run["evidence"][0]["excerpt"], "one node at a time");
    let bad = serde_json::json!({"status": "finished"});
    let (status, error) = http(&addr, "PUT", &format!("/v1/runs/{id}/steps/1"), &alice, Some(&bad));
    assert_eq!((status, error["code"].as_str()), (400, Some("invalid_input")), "{error}");
    let (status, _) = http(&addr, "GET", &format!("/v1/runs/{id}"), &bob, None);
    assert_eq!(status, 404);
    let (status, ended) = http(&addr, "DELETE", &format!("/v1/runs/{id}"), &alice, None);
    assert_eq!((status, ended["ended"].as_bool()), (200, Some(true)), "{ended}");
    let (status, _) = http(&addr, "GET", &format!("/v1/runs/{id}"), &alice, None);
    assert_eq!(status, 404);
    server.kill().unwrap();
    server.wait().unwrap();
}

/// The official Python MCP SDK's client against `mnemo serve` at /mcp
/// (`tests/mcp/python_client.py`).
#[test]
#[ignore = "needs the Python MCP SDK (pip install mcp); .ci/run installs it"]
fn python_mcp_sdk_client_over_streamable_http() {
    let env = Env::new();
    let key = user_key(&env, "acme", "alice");
    let (mut server, addr) = start(&env);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/python_client.py");
    let out = std::process::Command::new("python3")
        .args([script, &format!("http://{addr}/mcp"), &key])
        .output()
        .unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        out.status.success(),
        "python client failed (is the SDK installed? `pip install mcp`):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `/healthz` stays fast with 1,000 idle or half-sent connections open; a half-sent request is
/// closed after the header timeout; a connection over the limit gets 503 with Retry-After.
#[test]
fn the_server_stays_up_under_idle_and_half_sent_connections() {
    let env = Env::new();
    let (mut server, addr) =
        start_with(&env, &["--header-timeout", "1", "--max-connections", "1100"]);
    let mut held = Vec::new();
    for i in 0..1000 {
        let mut stream = TcpStream::connect(&addr).unwrap();
        if i % 2 == 0 {
            stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").unwrap();
        }
        held.push(stream);
    }
    // One request first, untimed, while the server accepts the burst of 1,000 connections;
    // then the held connections are open and idle, which is what is timed.
    let (status, _) = http(&addr, "GET", "/healthz", "", None);
    assert_eq!(status, 200);
    let mut slowest = std::time::Duration::ZERO;
    for _ in 0..5 {
        let started = std::time::Instant::now();
        let (status, body) = http(&addr, "GET", "/healthz", "", None);
        slowest = slowest.max(started.elapsed());
        assert_eq!((status, body["status"].as_str()), (200, Some("ok")));
    }
    assert!(slowest < std::time::Duration::from_millis(100), "healthz took {slowest:?}");
    // After the header timeout the server has closed the half-sent requests.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let stream = &mut held[0];
    stream.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
    let mut buffer = Vec::new();
    let read = stream.read_to_end(&mut buffer);
    assert!(read.is_ok(), "the half-sent connection was not closed: {read:?}");
    drop(held);
    server.kill().unwrap();
    server.wait().unwrap();

    // Over the connection limit: 503 with Retry-After at once.
    let (mut server, addr) = start_with(&env, &["--max-connections", "3"]);
    let idle: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut extra = TcpStream::connect(&addr).unwrap();
    extra.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
    write!(extra, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut response = String::new();
    extra.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 503"), "{response}");
    assert!(response.contains("Retry-After: 1"), "{response}");
    drop(idle);
    server.kill().unwrap();
    server.wait().unwrap();
}

/// Concurrent requests to a server that runs one library call at a time are each answered;
/// no slots at all is refused before the server starts.
#[test]
fn a_server_of_one_call_at_once_answers_every_request_in_turn() {
    let env = Env::new();
    let refused = env
        .command()
        .args(["serve", "--addr", "127.0.0.1:0", "--calls-at-once", "0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--calls-at-once") && stderr.contains("at least 1"), "{stderr}");

    let key = user_key(&env, "acme", "sam");
    let (mut server, addr) = start_with(&env, &["--calls-at-once", "1"]);
    let requests: Vec<_> = (0..8)
        .map(|i| {
            let (addr, key) = (addr.clone(), key.clone());
            std::thread::spawn(move || {
                let facts = [
                    "I keep my passport in the blue folder",
                    "My sister lives in Porto",
                    "I am allergic to cats",
                    "I play the cello on Sundays",
                    "My car is a green Volvo",
                    "I work as a nurse at the city hospital",
                    "I am learning Japanese",
                    "My favourite film is Alien",
                ];
                let body = serde_json::json!({"content": facts[i]});
                let (status, _) = http(&addr, "POST", "/v1/memories", &key, Some(&body));
                let query = serde_json::json!({"query": "where is my passport"});
                (status, http(&addr, "POST", "/v1/search", &key, Some(&query)).0)
            })
        })
        .collect();
    for request in requests {
        assert_eq!(request.join().unwrap(), (200, 200));
    }
    let (status, listed) = http(&addr, "GET", "/v1/memories", &key, None);
    assert_eq!(status, 200);
    assert_eq!(listed["memories"].as_array().map(Vec::len), Some(8), "{listed}");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// Over real connections: a key's own rate is stored and listed, and failed authentications
/// are counted by the client's address (past the allowance it is refused, even with a good
/// key).
#[test]
fn key_rates_and_failed_authentications_over_real_connections() {
    let env = Env::new();
    let created = env.json(&["keys", "create", "--tenant", "acme", "--rate", "250"]);
    assert_eq!(created["rate"], 250.0);
    let key = created["key"].as_str().unwrap().to_owned();
    let listed = env.run(&["keys", "list", "--tenant", "acme"]);
    assert!(listed.stdout.contains("250/s"), "{}", listed.stdout);
    let bad = env.run(&["keys", "create", "--tenant", "acme", "--rate", "0"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--rate"), "{}", bad.stderr);

    let (mut server, addr) = start(&env);
    for attempt in 0..20 {
        let (status, _) = http(&addr, "GET", "/v1/memories?user_id=u", "mnemo_guess", None);
        assert_eq!(status, 401, "attempt {attempt}");
    }
    let (status, body) = http(&addr, "GET", "/v1/memories?user_id=u", "mnemo_guess", None);
    assert_eq!((status, body["code"].as_str()), (429, Some("rate_limited")), "{body}");
    let (status, _) = http(&addr, "GET", "/v1/memories?user_id=u", &key, None);
    assert_eq!(status, 429, "the address is refused whatever key it sends");
    server.kill().unwrap();
    server.wait().unwrap();

    // Behind a proxy the allowance is raised: 60 a minute lets 60 failures through at once.
    let (mut server, addr) = start_with(&env, &["--failed-auth-limit", "60"]);
    for attempt in 0..60 {
        let (status, _) = http(&addr, "GET", "/v1/memories?user_id=u", "mnemo_guess", None);
        assert_eq!(status, 401, "attempt {attempt} with the raised allowance");
    }
    let (status, _) = http(&addr, "GET", "/v1/memories?user_id=u", "mnemo_guess", None);
    assert_eq!(status, 429, "past the raised allowance the address is refused");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// The request log: one JSON line per request on stderr with method, route template, status,
/// latency, key id and client address, and nothing of what was sent (no body, no query, no
/// memory content, no key).
#[test]
fn every_request_is_logged_without_content() {
    let env = Env::new();
    let created = env.json(&["keys", "create", "--tenant", "acme"]);
    let (key, key_id) =
        (created["key"].as_str().unwrap().to_owned(), created["id"].as_str().unwrap().to_owned());
    let mut child = spawn_server(&env, &[]);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line.trim().rsplit("http://").next().unwrap().to_owned();
    let body = serde_json::json!({"user_id": "u", "content": "Keeps the ledger in Marker5150"});
    assert_eq!(http(&addr, "POST", "/v1/memories", &key, Some(&body)).0, 200);
    assert_eq!(http(&addr, "GET", "/v1/memories?user_id=u&kind=semantic", &key, None).0, 200);
    assert_eq!(http(&addr, "GET", "/v1/memories", "mnemo_guess", None).0, 401);
    child.kill().unwrap();
    child.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let events: Vec<Value> = rest.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.len(), 3, "{rest}");
    fn fields(e: &Value) -> (Option<&str>, Option<&str>, Option<u64>, Option<&str>) {
        (e["method"].as_str(), e["route"].as_str(), e["status"].as_u64(), e["key"].as_str())
    }
    assert_eq!(
        fields(&events[0]),
        (Some("POST"), Some("/v1/memories"), Some(200), Some(key_id.as_str()))
    );
    assert_eq!(
        fields(&events[1]),
        (Some("GET"), Some("/v1/memories"), Some(200), Some(key_id.as_str()))
    );
    assert_eq!(fields(&events[2]), (Some("GET"), Some("/v1/memories"), Some(401), Some("-")));
    assert!(events.iter().all(|e| e["latency_ms"].is_number() && e["peer"] == "127.0.0.1"));
    for secret in ["Marker5150", "semantic", &key, "mnemo_guess"] {
        assert!(!rest.contains(secret), "{secret} in the log: {rest}");
    }
}

/// Storage full: with the database capped (`--max-db-mib`, as a full disk behaves), a write
/// that does not fit fails with 507 `storage_full` and `/healthz` says degraded; nothing
/// acknowledged is lost, a forget still works, and once there is room writes succeed and the
/// server is healthy again.
#[test]
fn a_full_store_refuses_writes_clearly_and_recovers() {
    let env = Env::new();
    let key = env.json(&["keys", "create", "--tenant", "acme"])["key"].as_str().unwrap().to_owned();
    let (mut server, addr) = start_with(&env, &["--max-db-mib", "1", "--rate-limit", "100000"]);
    let mut stored = Vec::new();
    let mut full = None;
    for n in 0..2000 {
        let text =
            format!("Note {n}: {}", "the quick brown fox jumps over the lazy dog ".repeat(40));
        let body = serde_json::json!({"user_id": "u", "content": text});
        let (status, answer) = http(&addr, "POST", "/v1/memories", &key, Some(&body));
        if status != 200 {
            full = Some((status, answer));
            break;
        }
        stored.push(answer["id"].as_str().unwrap().to_owned());
    }
    let (status, answer) = full.expect("the capped store fills up");
    assert_eq!((status, answer["code"].as_str()), (507, Some("storage_full")), "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("nothing was written"), "{answer}");
    let (_, health) = http(&addr, "GET", "/healthz", &key, None);
    assert_eq!(health["status"], "degraded", "{health}");
    // Everything acknowledged is there.
    let (_, listed) = http(&addr, "GET", "/v1/memories?user_id=u", &key, None);
    assert_eq!(listed["memories"].as_array().unwrap().len(), stored.len());
    // Forgetting works while full (a deletion may use a small reserve past the cap).
    for id in stored.iter().take(5) {
        let (status, gone) =
            http(&addr, "DELETE", &format!("/v1/memories/{id}?user_id=u"), &key, None);
        assert_eq!(status, 200, "{gone}");
    }
    server.kill().unwrap();
    server.wait().unwrap();
    // Room again (as when the disk is freed): writes succeed and the server is healthy.
    let (mut server, addr) = start_with(&env, &["--max-db-mib", "8"]);
    let body = serde_json::json!({"user_id": "u", "content": "A short note once there is room"});
    let (status, answer) = http(&addr, "POST", "/v1/memories", &key, Some(&body));
    assert_eq!(status, 200, "{answer}");
    let (_, health) = http(&addr, "GET", "/healthz", &key, None);
    assert_eq!(health["status"], "ok");
    let (_, listed) = http(&addr, "GET", "/v1/memories?user_id=u", &key, None);
    assert_eq!(listed["memories"].as_array().unwrap().len(), stored.len() - 5 + 1);
    server.kill().unwrap();
    server.wait().unwrap();
    // The CLI says the same with exit code 6 (the file is past 1 MiB now), and a larger cap
    // lets the write through.
    let big = |n: usize| format!("Big note {n} {}", "lorem ipsum dolor sit amet ".repeat(280));
    let refused = (0..100)
        .map(|n| env.run(&["--max-db-mib", "1", "remember", "--user", "u", &big(n)]))
        .find(|run| run.code != 0)
        .expect("the capped file refuses a write");
    assert_eq!(refused.code, 6, "{}", refused.stderr);
    assert!(refused.stderr.contains("storage full"), "{}", refused.stderr);
    let ok = env.run(&["--max-db-mib", "64", "remember", "--user", "u", &big(1000)]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
}

/// The value of one unlabelled metric on `/metrics` (0 when absent).
fn metric(addr: &str, name: &str) -> u64 {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_server_refines_written_vectors_in_the_background() {
    let env = Env::new();
    let (alice, bob) = (user_key(&env, "acme", "alice"), user_key(&env, "acme", "bob"));
    let (_server, addr) = start(&env);
    for (key, content) in [
        (&alice, "On weekends I enjoy rock climbing."),
        (&alice, "I work as a pharmacist."),
        (&bob, "My favourite food is tacos."),
    ] {
        let (status, body) = http(
            &addr,
            "POST",
            "/v1/memories",
            key,
            Some(&serde_json::json!({"content": content})),
        );
        assert_eq!(status, 200, "{body}");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while metric(&addr, "mnemo_refined_vectors_total") < 3 {
        assert!(std::time::Instant::now() < deadline, "not refined within a minute");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(metric(&addr, "mnemo_refine_waiting_notebooks"), 0);
    assert_eq!(metric(&addr, "mnemo_refine_failures_total"), 0);
    let query = serde_json::json!({"query": "What hobbies do I have?", "k": 1});
    let (status, found) = http(&addr, "POST", "/v1/search", &alice, Some(&query));
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["results"][0]["content"], "On weekends I enjoy rock climbing.", "{found}");
    let (_, found) = http(&addr, "POST", "/v1/search", &bob, Some(&query));
    assert!(
        found["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["content"] != "On weekends I enjoy rock climbing."),
        "{found}"
    );
}
