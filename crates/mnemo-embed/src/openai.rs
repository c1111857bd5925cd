//! A client for OpenAI-compatible `POST /v1/embeddings` endpoints: hosted APIs and local
//! servers (Ollama, vLLM, llama.cpp, TEI) alike.
//!
//! Errors are classified at this boundary: 401/403 are `Unauthorized`, 429 and 5xx are
//! `Unavailable` (with `Retry-After` when given), other 4xx are `InvalidInput`, and a response
//! of the wrong shape, count or dimension is never passed on as vectors.

use std::time::Duration;

use mnemo_core::ErrorKind;
use mnemo_core::ports::{Embedder, PortError};
use serde::{Deserialize, Serialize};

/// Where and how to reach an embeddings endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL up to and including `/v1`, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// Model name sent in each request.
    pub model: String,
    /// Bearer token, if the server needs one.
    pub api_key: Option<String>,
    /// Expected vector length; probed with one request when not given.
    pub dims: Option<usize>,
    /// Per-request timeout.
    pub timeout: Duration,
}

/// An embedder backed by an OpenAI-compatible endpoint.
#[derive(Debug)]
pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    id: String,
    dims: usize,
    agent: ureq::Agent,
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: &'a [&'a str],
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl OpenAiEmbedder {
    /// Connects to the endpoint; without configured dimensions, embeds one probe text to learn
    /// them.
    pub fn new(config: OpenAiConfig) -> Result<Self, PortError> {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let id = format!("openai:{}", config.model);
        let mut embedder = Self { dims: config.dims.unwrap_or(0), config, id, agent };
        if embedder.dims == 0 {
            let probe = embedder.request(&["dimension probe"])?;
            embedder.dims = probe.first().map_or(0, Vec::len);
            if embedder.dims == 0 {
                return Err(PortError::new(
                    ErrorKind::Internal,
                    "embeddings endpoint returned an empty vector",
                ));
            }
        }
        Ok(embedder)
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        let url = format!("{}/embeddings", self.config.base_url.trim_end_matches('/'));
        let mut request = self.agent.post(&url);
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send_json(Request { model: &self.config.model, input: texts })
            .map_err(|e| {
            PortError::new(
                ErrorKind::Unavailable { retry_after: None },
                format!("embeddings endpoint {url}: {e}"),
            )
        })?;
        let status = response.status().as_u16();
        if status != 200 {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = response.body_mut().read_to_string().unwrap_or_default();
            return Err(PortError::http_answer(
                &format!("embeddings endpoint {url}"),
                status,
                retry_after.as_deref(),
                &body,
            ));
        }
        let parsed: Response = response.body_mut().read_json().map_err(|e| {
            PortError::new(
                ErrorKind::Internal,
                format!("embeddings endpoint {url} sent malformed JSON: {e}"),
            )
        })?;
        if parsed.data.len() != texts.len() {
            return Err(PortError::new(
                ErrorKind::Internal,
                format!(
                    "embeddings endpoint {url} returned {} vectors for {} texts",
                    parsed.data.len(),
                    texts.len()
                ),
            ));
        }
        let mut items = parsed.data;
        if items.iter().all(|i| i.index.is_some()) {
            items.sort_by_key(|i| i.index);
        }
        Ok(items.into_iter().map(|i| i.embedding).collect())
    }
}

impl Embedder for OpenAiEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn in_process(&self) -> bool {
        false
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(256) {
            for mut vector in self.request(chunk)? {
                if vector.len() != self.dims {
                    return Err(PortError::new(
                        ErrorKind::InvalidInput,
                        format!(
                            "embedder mismatch: {} returned {} dimensions, expected {}",
                            self.id,
                            vector.len(),
                            self.dims
                        ),
                    ));
                }
                let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    vector.iter_mut().for_each(|x| *x /= norm);
                }
                out.push(vector);
            }
        }
        Ok(out)
    }
}
