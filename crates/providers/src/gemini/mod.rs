//! Gemini over its REST API (`streamGenerateContent?alt=sse`, `countTokens`), with an API key.

pub mod wire;

use std::time::Duration;

use futures_util::{Stream, future::BoxFuture, stream::BoxStream};
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent};
use serde_json::{Value, json};

use crate::http;

pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// Where and as whom to call Gemini.
#[derive(Debug, Clone)]
pub struct GeminiConfig {
    pub api_key: http::Secret,
    pub model: String,
    /// Without a trailing slash; `GEMINI_BASE_URL` or the public endpoint.
    pub base_url: String,
    /// For one whole request, reply included.
    pub timeout: Duration,
}

impl GeminiConfig {
    /// From `GEMINI_API_KEY` (and `GEMINI_BASE_URL`); `None` without a key.
    pub fn from_env(model: &str) -> Option<Self> {
        Self::from_vars(model, &http::env_value)
    }

    /// As [`Self::from_env`], reading settings through `var`.
    pub fn from_vars(model: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        Some(Self {
            api_key: http::Secret(var("GEMINI_API_KEY")?),
            model: model.to_owned(),
            base_url: var("GEMINI_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            timeout: Duration::from_mins(2),
        })
    }
}

/// The Gemini provider.
#[derive(Debug, Clone)]
pub struct Gemini {
    config: GeminiConfig,
    client: reqwest::Client,
}

impl Gemini {
    pub fn new(config: GeminiConfig) -> Result<Self, ProviderError> {
        let client = http::client(config.timeout)?;
        Ok(Self { config, client })
    }

    fn url(&self, method: &str) -> String {
        format!("{}/models/{}:{method}", self.config.base_url, self.config.model)
    }

    async fn open(&self, body: Value) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}?alt=sse", self.url("streamGenerateContent"));
        http::send(
            || {
                self.client
                    .post(&url)
                    .header("x-goog-api-key", &self.config.api_key.0)
                    .json(&body)
            },
            wire::error_from,
            wire::retry_delay,
        )
        .await
    }
}

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        let body = wire::request_body(request, None);
        http::reply_stream(self.open(body), wire::Accumulator::default())
    }

    fn count_tokens<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async move {
            let mut inner = wire::request_body(request, None);
            if let Some(config) = inner.as_object_mut() {
                config.remove("generationConfig");
                config.remove("toolConfig");
            }
            inner["model"] = json!(format!("models/{}", self.config.model));
            let body = json!({"generateContentRequest": inner});
            let url = self.url("countTokens");
            let response = http::send(
                || {
                    self.client
                        .post(&url)
                        .header("x-goog-api-key", &self.config.api_key.0)
                        .json(&body)
                },
                wire::error_from,
                wire::retry_delay,
            )
            .await
            .ok()?;
            response.json::<Value>().await.ok()?.get("totalTokens")?.as_u64()
        })
    }
}

/// Turns response chunks into stream events: text deltas as they come, then the whole reply.
pub fn events<S>(chunks: S) -> impl Stream<Item = Result<StreamEvent, ProviderError>>
where
    S: Stream<Item = Result<Value, ProviderError>> + Send,
{
    http::events(chunks, wire::Accumulator::default())
}
