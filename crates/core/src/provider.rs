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
    /// Characters per token for estimating this model's count of a request (see
    /// [`crate::context::estimate_tokens`]): by its model's name by default.
    fn divisors(&self) -> crate::context::Divisors {
        crate::context::Divisors::for_model(self.model())
    }
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>>;
    /// The provider's own count of the request's input tokens, when it offers one.
    fn count_tokens<'a>(&'a self, _request: &'a ModelRequest) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async { None })
    }
}

/// `text` with every NUL replaced by U+FFFD (unchanged, and not copied, when it has none).
pub fn storable(text: String) -> String {
    if text.contains('\0') {
        text.replace('\0', "\u{FFFD}")
    } else {
        text
    }
}

fn scrub_text(text: &mut String) {
    *text = storable(std::mem::take(text));
}

/// Every string of `value`, keys included, made [`storable`].
pub fn scrub_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => scrub_text(text),
        serde_json::Value::Array(items) => items.iter_mut().for_each(scrub_json),
        serde_json::Value::Object(map) => {
            if map.keys().any(|k| k.contains('\0')) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (storable(k), v))
                    .collect();
            }
            map.values_mut().for_each(scrub_json);
        }
        _ => {}
    }
}

fn scrub_block(block: &mut crate::message::Block) {
    use crate::message::Block;
    match block {
        Block::Text { text, .. } | Block::ThoughtSummary { text, .. } => scrub_text(text),
        Block::ToolUse { id, name, input, .. } => {
            scrub_text(id);
            scrub_text(name);
            scrub_json(input);
        }
        Block::ToolResult {
            tool_use_id,
            name,
            content,
            ..
        } => {
            scrub_text(tool_use_id);
            scrub_text(name);
            scrub_text(content);
        }
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
///
/// A NUL character in anything the model sent becomes U+FFFD here: PostgreSQL's text and jsonb
/// refuse NUL, and a reply must never make a turn impossible to store.
pub async fn complete(
    provider: &dyn Provider,
    request: &ModelRequest,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<ModelResponse, ProviderError> {
    let mut stream = provider.stream(request);
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::TextDelta(text) => on_text(&storable(text)),
            StreamEvent::ThoughtDelta(_) => {}
            StreamEvent::Completed(mut response) => {
                for block in &mut response.message.content {
                    scrub_block(block);
                }
                return Ok(response);
            }
        }
    }
    Err(ProviderError::Protocol(
        "the stream ended without a complete reply".into(),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{
        message::{Block, Message, StopReason, Usage},
        scripted::Scripted,
    };

    #[tokio::test]
    async fn a_nul_from_the_model_never_reaches_the_store() {
        let reply = ModelResponse {
            message: Message::assistant(vec![
                Block::text("a\0b"),
                Block::ToolUse {
                    id: "c\0".into(),
                    name: "search_transactions".into(),
                    input: json!({"query\0": ["x\0y", {"k": "\0"}]}),
                    provider_meta: None,
                },
            ]),
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
            model_version: None,
        };
        let model = Scripted::new(vec![Ok(reply)]);
        let request = ModelRequest {
            system: String::new(),
            messages: vec![Message::user("hi")],
            tools: Vec::new().into(),
            max_tokens: 10,
        };
        let mut streamed = String::new();
        let answer = complete(&model, &request, &mut |t| streamed.push_str(t))
            .await
            .unwrap();
        let stored = serde_json::to_string(&answer.message).unwrap();
        assert!(!stored.contains("\\u0000"), "{stored}");
        assert_eq!(answer.message.text(), "a\u{FFFD}b");
        assert!(!streamed.contains('\0'));
        let Some(Block::ToolUse { input, .. }) = answer.message.content.get(1) else {
            panic!("no call")
        };
        assert_eq!(
            input,
            &json!({"query\u{FFFD}": ["x\u{FFFD}y", {"k": "\u{FFFD}"}]})
        );
    }
}
