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
    /// The most output tokens a request asks for, whatever the loop would allow
    /// (`OPENAI_MAX_TOKENS`): a small local model rambles to the end of its context, minutes a
    /// turn, and then stops short here instead — which the turn says.
    pub max_output_tokens: Option<u32>,
}

impl OpenAiConfig {
    /// From `OPENAI_BASE_URL` (and the optional `OPENAI_API_KEY` and `OPENAI_MAX_TOKENS`) as `var`
    /// reads them; `None` without a base URL. A `OPENAI_MAX_TOKENS` that is not a number of
    /// tokens is logged and not used.
    pub fn from_vars(model: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        let max_output_tokens = var("OPENAI_MAX_TOKENS").and_then(|text| {
            let cap = text.trim().parse::<u32>().ok().filter(|n| *n > 0);
            if cap.is_none() {
                tracing::warn!("OPENAI_MAX_TOKENS is not a number of tokens above 0; no cap is used");
            }
            cap
        });
        Some(Self {
            base_url: var("OPENAI_BASE_URL")?.trim_end_matches('/').to_owned(),
            api_key: var("OPENAI_API_KEY").map(http::Secret),
            model: model.to_owned(),
            timeout: http::timeout_setting(var),
            max_output_tokens,
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
        let mut body = wire::request_body(&self.config.model, request, true);
        if let Some(cap) = self.config.max_output_tokens {
            http::set(&mut body, "max_tokens", request.max_tokens.min(cap).into());
        }
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
