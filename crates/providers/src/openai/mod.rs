//! OpenAI-compatible Chat Completions over raw HTTP (`/chat/completions` with `stream: true`):
//! Ollama, vLLM, llama.cpp's server, DeepSeek and others.

pub mod wire;

use std::time::Duration;

use futures_util::{
    Stream, StreamExt,
    stream::{self, BoxStream},
};
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent};
use serde_json::Value;

use crate::http;

#[derive(Clone)]
pub struct OpenAiConfig {
    /// Optional: local servers usually need none.
    pub api_key: Option<String>,
    pub model: String,
    /// Without a trailing slash, up to the version (`http://localhost:11434/v1`).
    pub base_url: String,
    pub timeout: Duration,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl OpenAiConfig {
    /// From `OPENAI_BASE_URL` (and the optional `OPENAI_API_KEY`); `None` without a base URL.
    pub fn from_env(model: &str) -> Option<Self> {
        let base_url = std::env::var("OPENAI_BASE_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())?;
        let api_key = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.trim().is_empty());
        Some(Self {
            api_key,
            model: model.to_owned(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            timeout: Duration::from_mins(2),
        })
    }
}

#[derive(Debug, Clone)]
pub struct OpenAi {
    config: OpenAiConfig,
    client: reqwest::Client,
}

impl OpenAi {
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(config.timeout)
            .build()
            .map_err(|e| ProviderError::Protocol(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self { config, client })
    }

    async fn open(&self, body: Value) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}/chat/completions", self.config.base_url);
        http::send(
            || {
                let request = self.client.post(&url).json(&body);
                match &self.config.api_key {
                    Some(key) => request.bearer_auth(key),
                    None => request,
                }
            },
            wire::error_from,
            wire::retry_delay,
        )
        .await
    }
}

impl Provider for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        let body = wire::request_body(&self.config.model, request, true);
        Box::pin(stream::once(self.open(body)).flat_map(
            |opened| -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
                match opened {
                    Ok(response) => Box::pin(events(http::sse_json(response))),
                    Err(e) => Box::pin(stream::iter([Err(e)])),
                }
            },
        ))
    }
}

/// Turns response chunks into stream events: text deltas as they come, then the whole reply.
pub fn events<S>(chunks: S) -> impl Stream<Item = Result<StreamEvent, ProviderError>>
where
    S: Stream<Item = Result<Value, ProviderError>> + Send,
{
    http::events(chunks, wire::Accumulator::default())
}
