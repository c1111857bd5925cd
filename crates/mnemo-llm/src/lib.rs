//! An OpenAI-compatible chat completions client that asks for a strict JSON-schema answer
//! (`response_format: {"type": "json_schema", ...}`), as hosted APIs, Ollama, vLLM and
//! llama.cpp's server accept. It implements `mnemo_core::ports::ChatModel`.
//!
//! Errors are classified at this boundary like the embeddings client's: 401/403
//! `Unauthorized`, 429/5xx and transport failures (timeouts included) `Unavailable`, other
//! 4xx `InvalidInput`, and an answer that is not JSON `Internal`.

use std::time::Duration;

use mnemo_core::ErrorKind;
use mnemo_core::ports::{ChatModel, PortError};
use serde::Deserialize;
use serde_json::{Value, json};

/// Where and how to reach a chat completions endpoint.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// Base URL up to and including `/v1`.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// Bearer token, if needed.
    pub api_key: Option<String>,
    /// Per-request timeout.
    pub timeout: Duration,
}

/// A chat model behind an OpenAI-compatible endpoint.
#[derive(Debug)]
pub struct OpenAiChat {
    config: ChatConfig,
    id: String,
    agent: ureq::Agent,
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<String>,
}

impl OpenAiChat {
    /// A client for `config`.
    pub fn new(config: ChatConfig) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Self { id: format!("openai-chat:{}", config.model), config, agent }
    }
}

impl ChatModel for OpenAiChat {
    fn id(&self) -> &str {
        &self.id
    }

    fn complete_json(
        &self,
        system: &str,
        user: &str,
        schema_name: &str,
        schema: &Value,
    ) -> Result<Value, PortError> {
        let url = format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'));
        let body = json!({
            "model": self.config.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "strict": true, "schema": schema},
            },
        });
        let mut request = self.agent.post(&url);
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request.send_json(body).map_err(|e| {
            PortError::new(
                ErrorKind::Unavailable { retry_after: None },
                format!("chat endpoint {url}: {e}"),
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
                &format!("chat endpoint {url}"),
                status,
                retry_after.as_deref(),
                &body,
            ));
        }
        let completion: Completion = response.body_mut().read_json().map_err(|e| {
            PortError::new(
                ErrorKind::Internal,
                format!("chat endpoint {url} sent a malformed completion: {e}"),
            )
        })?;
        let content = completion
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .ok_or_else(|| {
                PortError::new(ErrorKind::Internal, format!("chat endpoint {url} sent no content"))
            })?;
        serde_json::from_str(&content).map_err(|e| {
            PortError::new(ErrorKind::Internal, format!("model answer is not JSON: {e}"))
        })
    }
}
