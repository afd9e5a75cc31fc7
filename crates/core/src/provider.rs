//! What a model provider does for the loop: one streamed completion, and a token count if it can.

use std::sync::Arc;

use futures_util::{StreamExt, future::BoxFuture, stream, stream::BoxStream};
use serde::{Deserialize, Serialize};

use crate::{
    message::{Message, StopReason, Usage},
    tool::Declaration,
};

/// One model call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<Message>,
    /// The tools the model may call; empty forbids tool calls. Shared, not copied: a turn sends
    /// the same declarations with every call ([`crate::ToolRegistry::declared`]).
    pub tools: Arc<[Declaration]>,
    pub max_tokens: u32,
}

/// A finished model reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The assistant message, tool calls and provider metadata included.
    pub message: Message,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub model_version: Option<String>,
}

/// What a streamed call yields: deltas as they come, then the whole reply.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ThoughtDelta(String),
    Completed(ModelResponse),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// Worth trying again later: 429, 5xx, a dropped connection, a timeout.
    #[error("the model provider is temporarily unavailable: {0}")]
    Transient(String),
    /// The provider refused the request (bad key, bad request, unknown model).
    #[error("the model provider refused the request ({status}): {message}")]
    Rejected { status: u16, message: String },
    /// The reply could not be understood.
    #[error("the model provider's reply could not be read: {0}")]
    Protocol(String),
}

pub trait Provider: Send + Sync {
    /// `gemini`, `anthropic`, `openai`, `script`, `scripted`.
    fn name(&self) -> &str;
    fn model(&self) -> &str;
    /// What a token costs on this model: its list price by default (`None` when it has none).
    fn price(&self) -> Option<crate::pricing::Price> {
        crate::pricing::price_of(self.model())
    }
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>>;
    /// The provider's own count of the request's input tokens, when it offers one.
    fn count_tokens<'a>(&'a self, _request: &'a ModelRequest) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async { None })
    }
}

/// A reply that exists whole (scripted, recorded) as a stream: its text in one delta, then the
/// reply; or the error alone.
pub fn whole_reply(
    outcome: Result<ModelResponse, ProviderError>,
) -> BoxStream<'static, Result<StreamEvent, ProviderError>> {
    let events = match outcome {
        Ok(response) => {
            let text = response.message.text();
            let delta = (!text.is_empty()).then_some(Ok(StreamEvent::TextDelta(text)));
            delta
                .into_iter()
                .chain([Ok(StreamEvent::Completed(response))])
                .collect()
        }
        Err(e) => vec![Err(e)],
    };
    Box::pin(stream::iter(events))
}

/// Runs one call to the end, handing text deltas to `on_text`.
pub async fn complete(
    provider: &dyn Provider,
    request: &ModelRequest,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<ModelResponse, ProviderError> {
    let mut stream = provider.stream(request);
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::TextDelta(text) => on_text(&text),
            StreamEvent::ThoughtDelta(_) => {}
            StreamEvent::Completed(response) => return Ok(response),
        }
    }
    Err(ProviderError::Protocol(
        "the stream ended without a complete reply".into(),
    ))
}
