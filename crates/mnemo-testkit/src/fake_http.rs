//! A minimal local HTTP/1.1 server for tests of HTTP clients: it answers each connection with
//! the next canned response and records what it was sent. Loopback only.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request path.
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The JSON body (`Null` when not JSON).
    pub body: serde_json::Value,
}

/// One canned answer: status, extra header lines (each ending `\r\n`), body.
pub type Canned = (u16, &'static str, String);

/// Starts a server answering one connection per canned response, in order; returns its base
/// URL (`http://127.0.0.1:PORT/v1`) and the log of requests.
pub fn serve(responses: Vec<Canned>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    serve_delayed(responses, std::time::Duration::ZERO)
}

/// Like [`serve`], waiting `delay` before each answer (to test client timeouts).
pub fn serve_delayed(
    responses: Vec<Canned>,
    delay: std::time::Duration,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for (status, headers, body) in responses {
            let Ok((stream, _)) = listener.accept() else { return };
            let mut reader = BufReader::new(stream);
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut length = 0;
            let mut authorization = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end().to_owned();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.trim().parse().unwrap_or(0),
                        "authorization" => authorization = Some(value.trim().to_owned()),
                        _ => {}
                    }
                }
            }
            let mut raw = vec![0; length];
            let _ = reader.read_exact(&mut raw);
            log.lock().unwrap().push(Seen {
                path: request_line.split_whitespace().nth(1).unwrap_or_default().to_owned(),
                authorization,
                body: serde_json::from_slice(&raw).unwrap_or(serde_json::Value::Null),
            });
            std::thread::sleep(delay);
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
                body.len()
            );
        }
    });
    (base, seen)
}

/// An OpenAI `/v1/embeddings` response body holding `rows` (listed in reverse, with indexes,
/// as servers may).
pub fn embeddings_body(rows: &[Vec<f32>]) -> String {
    let data: Vec<_> = rows
        .iter()
        .enumerate()
        .rev()
        .map(|(i, v)| serde_json::json!({"object": "embedding", "index": i, "embedding": v}))
        .collect();
    serde_json::json!({"object": "list", "data": data, "model": "test-model"}).to_string()
}

/// An OpenAI chat completion whose message content is `content` (a JSON string for
/// structured answers).
pub fn chat_body(content: &str) -> String {
    serde_json::json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]
    })
    .to_string()
}
