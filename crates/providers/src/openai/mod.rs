//! OpenAI-compatible Chat Completions over raw HTTP (`/chat/completions` with `stream: true`):
//! Ollama, vLLM, llama.cpp's server, DeepSeek and others.

pub mod wire;

use std::time::Duration;

use futures_util::{Stream, stream::BoxStream};
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent};
use serde_json::Value;

use crate::http;

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Optional: local servers usually need none.
    pub api_key: Option<http::Secret>,
    pub model: String,
    /// Without a trailing slash, up to the version (`http://localhost:11434/v1`).
    pub base_url: String,
    pub timeout: Duration,
}

impl OpenAiConfig {
    /// From `OPENAI_BASE_URL` (and the optional `OPENAI_API_KEY`) as `var` reads them; `None`
    /// without a base URL.
    pub fn from_vars(model: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        Some(Self {
            base_url: var("OPENAI_BASE_URL")?.trim_end_matches('/').to_owned(),
            api_key: var("OPENAI_API_KEY").map(http::Secret),
            model: model.to_owned(),
            timeout: http::timeout_setting(var),
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
        let client = http::client(config.timeout)?;
        Ok(Self { config, client })
    }

    /// Whether the server is on this machine (a loopback address or `localhost`): then nothing
    /// the agent sends leaves it.
    pub fn is_local(&self) -> bool {
        let Ok(url) = reqwest::Url::parse(&self.config.base_url) else {
            return false;
        };
        let host = url.host_str().unwrap_or_default();
        host.eq_ignore_ascii_case("localhost")
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// The models the server says it serves (`GET /models`, the ids of its `data`).
    pub async fn served_models(&self) -> Result<Vec<String>, ProviderError> {
        let url = format!("{}/models", self.config.base_url);
        let response = http::send(
            || {
                let request = self.client.get(&url);
                match &self.config.api_key {
                    Some(key) => request.bearer_auth(&key.0),
                    None => request,
                }
            },
            wire::error_from,
            http::no_retry_hint,
        )
        .await?;
        let body: Value = response
            .json()
            .await
            .map_err(|e| ProviderError::Protocol(format!("the model list: {e}")))?;
        Ok(body
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect())
    }

    async fn open(&self, body: Value) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}/chat/completions", self.config.base_url);
        http::send(
            || {
                let request = self.client.post(&url).json(&body);
                match &self.config.api_key {
                    Some(key) => request.bearer_auth(&key.0),
                    None => request,
                }
            },
            wire::error_from,
            http::no_retry_hint,
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
        http::reply_stream(self.open(body), wire::Accumulator::default())
    }
}

/// Turns response chunks into stream events: text deltas as they come, then the whole reply.
pub fn events<S>(chunks: S) -> impl Stream<Item = Result<StreamEvent, ProviderError>>
where
    S: Stream<Item = Result<Value, ProviderError>> + Send,
{
    http::events(chunks, wire::Accumulator::default())
}
