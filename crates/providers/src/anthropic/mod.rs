//! Anthropic Messages over raw HTTP (`/v1/messages` with `stream: true`).

pub mod wire;

use std::time::Duration;

use futures_util::{Stream, stream::BoxStream};
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent};
use serde_json::Value;

use crate::http;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    pub api_key: http::Secret,
    pub model: String,
    /// Without a trailing slash; `ANTHROPIC_BASE_URL` or the public endpoint.
    pub base_url: String,
    pub timeout: Duration,
}

impl AnthropicConfig {
    /// From `ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL`) as `var` reads them; `None` without a key.
    pub fn from_vars(model: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        Some(Self {
            api_key: http::Secret(var("ANTHROPIC_API_KEY")?),
            model: model.to_owned(),
            base_url: var("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            timeout: http::timeout_setting(var),
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
        let client = http::client(config.timeout)?;
        Ok(Self { config, client })
    }

    async fn open(&self, body: Value) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}/v1/messages", self.config.base_url);
        http::send(
            || {
                self.client
                    .post(&url)
                    .header("x-api-key", &self.config.api_key.0)
                    .header("anthropic-version", API_VERSION)
                    .json(&body)
            },
            wire::error_from,
            http::no_retry_hint,
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
