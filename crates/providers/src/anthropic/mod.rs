//! Anthropic Messages over raw HTTP (`/v1/messages` with `stream: true`).

pub mod wire;

use std::time::Duration;

use futures_util::{
    Stream, StreamExt,
    stream::{self, BoxStream},
};
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent};
use serde_json::Value;

use crate::http;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";

#[derive(Clone)]
pub struct AnthropicConfig {
    pub api_key: String,
    pub model: String,
    /// Without a trailing slash; `ANTHROPIC_BASE_URL` or the public endpoint.
    pub base_url: String,
    pub timeout: Duration,
}

impl std::fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl AnthropicConfig {
    /// From `ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL`); `None` without a key.
    pub fn from_env(model: &str) -> Option<Self> {
        let api_key = std::env::var("ANTHROPIC_API_KEY")
            .ok()
            .filter(|k| !k.trim().is_empty())?;
        let base_url = std::env::var("ANTHROPIC_BASE_URL")
            .ok()
            .filter(|u| !u.trim().is_empty());
        Some(Self {
            api_key,
            model: model.to_owned(),
            base_url: base_url
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            timeout: Duration::from_mins(2),
        })
    }
}

#[derive(Debug, Clone)]
pub struct Anthropic {
    config: AnthropicConfig,
    client: reqwest::Client,
}

impl Anthropic {
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(config.timeout)
            .build()
            .map_err(|e| ProviderError::Protocol(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self { config, client })
    }

    async fn open(&self, body: Value) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}/v1/messages", self.config.base_url);
        http::send(
            || {
                self.client
                    .post(&url)
                    .header("x-api-key", &self.config.api_key)
                    .header("anthropic-version", API_VERSION)
                    .json(&body)
            },
            wire::error_from,
            wire::retry_delay,
        )
        .await
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
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
