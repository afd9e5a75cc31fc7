//! Gemini over its REST API (`streamGenerateContent?alt=sse`, `countTokens`), with an API key.

pub mod wire;

use std::time::Duration;

use futures_util::{
    Stream, StreamExt,
    future::BoxFuture,
    stream::{self, BoxStream},
};
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent};
use serde_json::{Value, json};

use crate::http;

pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// Where and as whom to call Gemini.
#[derive(Clone)]
pub struct GeminiConfig {
    pub api_key: String,
    pub model: String,
    /// Without a trailing slash; `GEMINI_BASE_URL` or the public endpoint.
    pub base_url: String,
    /// For one whole request, reply included.
    pub timeout: Duration,
}

impl std::fmt::Debug for GeminiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiConfig")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl GeminiConfig {
    /// From `GEMINI_API_KEY` (and `GEMINI_BASE_URL`); `None` without a key.
    pub fn from_env(model: &str) -> Option<Self> {
        let api_key = std::env::var("GEMINI_API_KEY")
            .ok()
            .filter(|k| !k.trim().is_empty())?;
        let base_url = std::env::var("GEMINI_BASE_URL")
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

/// The Gemini provider.
#[derive(Debug, Clone)]
pub struct Gemini {
    config: GeminiConfig,
    client: reqwest::Client,
}

impl Gemini {
    pub fn new(config: GeminiConfig) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(config.timeout)
            .build()
            .map_err(|e| ProviderError::Protocol(format!("cannot build the HTTP client: {e}")))?;
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
                    .header("x-goog-api-key", &self.config.api_key)
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
        Box::pin(stream::once(self.open(body)).flat_map(
            |opened| -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
                match opened {
                    Ok(response) => Box::pin(events(http::sse_json(response))),
                    Err(e) => Box::pin(stream::iter([Err(e)])),
                }
            },
        ))
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
                        .header("x-goog-api-key", &self.config.api_key)
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
