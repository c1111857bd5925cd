//! The OpenAI-compatible client against a local server that speaks the real protocol, with
//! recorded good, error and malformed responses.
#![cfg(feature = "openai")]
#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::time::Duration;

use mnemo_core::ErrorKind;
use mnemo_core::ports::Embedder;
use mnemo_embed::{OpenAiConfig, OpenAiEmbedder};
use mnemo_testkit::fake_http::{embeddings_body as vectors, serve};

fn config(base: &str, dims: Option<usize>) -> OpenAiConfig {
    OpenAiConfig {
        base_url: base.to_owned(),
        model: "nomic-embed-text".into(),
        api_key: Some("sk-test".into()),
        dims,
        timeout: Duration::from_secs(5),
    }
}

#[test]
fn embeds_in_input_order_normalised_after_probing_dimensions() {
    let (base, seen) = serve(vec![
        (200, "", vectors(&[vec![1.0, 0.0, 0.0]])),
        (200, "", vectors(&[vec![3.0, 4.0, 0.0], vec![0.0, 0.0, 2.0]])),
    ]);
    let embedder = OpenAiEmbedder::new(config(&base, None)).unwrap();
    assert_eq!((embedder.id(), embedder.dims()), ("openai:nomic-embed-text", 3));
    let out = embedder.embed(&["first", "second"]).unwrap();
    assert_eq!(out, vec![vec![0.6, 0.8, 0.0], vec![0.0, 0.0, 1.0]]);
    let seen = seen.lock().unwrap();
    assert_eq!(seen[1].path, "/v1/embeddings");
    assert_eq!(seen[1].authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(seen[1].body["model"], "nomic-embed-text");
    assert_eq!(seen[1].body["input"], serde_json::json!(["first", "second"]));
}

#[test]
fn rate_limits_and_server_errors_are_unavailable_with_retry_after() {
    let (base, _) = serve(vec![
        (429, "Retry-After: 7\r\n", r#"{"error":{"message":"slow down"}}"#.into()),
        (503, "", "{}".into()),
    ]);
    let embedder = OpenAiEmbedder::new(config(&base, Some(3))).unwrap();
    let err = embedder.embed(&["x"]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unavailable { retry_after: Some(Duration::from_secs(7)) });
    assert!(err.message.contains("429"), "{}", err.message);
    let err = embedder.embed(&["x"]).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::Unavailable { .. }));
}

#[test]
fn bad_key_is_unauthorized() {
    let (base, _) = serve(vec![(401, "", r#"{"error":{"message":"bad key"}}"#.into())]);
    let embedder = OpenAiEmbedder::new(config(&base, Some(3))).unwrap();
    assert_eq!(embedder.embed(&["x"]).unwrap_err().kind, ErrorKind::Unauthorized);
}

#[test]
fn malformed_short_or_wrong_sized_responses_are_errors() {
    let (base, _) = serve(vec![
        (200, "", "{\"data\": [".into()),
        (200, "", vectors(&[vec![1.0, 0.0, 0.0]])),
        (200, "", vectors(&[vec![1.0, 0.0]])),
    ]);
    let embedder = OpenAiEmbedder::new(config(&base, Some(3))).unwrap();
    assert_eq!(embedder.embed(&["x"]).unwrap_err().kind, ErrorKind::Internal);
    let err = embedder.embed(&["x", "y"]).unwrap_err();
    assert!(err.message.contains("1 vectors for 2 texts"), "{}", err.message);
    let err = embedder.embed(&["x"]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidInput);
    assert!(err.message.contains("embedder mismatch"), "{}", err.message);
}

#[test]
fn unreachable_endpoint_is_unavailable() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let embedder = OpenAiEmbedder::new(config(&base, Some(3))).unwrap();
    assert!(matches!(embedder.embed(&["x"]).unwrap_err().kind, ErrorKind::Unavailable { .. }));
}
