//! What the sample tests of every adapter share: finding the corpus, draining an event stream,
//! splitting SSE text and listing the tool calls of a reply.

#![allow(dead_code)] // Each test binary uses its own share of these.

pub mod standin;

use std::path::{Path, PathBuf};

use futures_util::{Stream, StreamExt};
use kakeibo_core::{Block, Message, ModelResponse, ProviderError, StreamEvent, ToolResult};
use serde_json::Value;

/// `../shared/corpus/<provider>` (or `$KAKEIBO_CORPUS/<provider>`); `None`, saying so, when absent.
pub fn corpus(provider: &str, label: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("KAKEIBO_CORPUS")
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
            PathBuf::from,
        )
        .join(provider);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: no {label} samples at {}; conformance not checked",
            dir.display()
        );
        None
    }
}

/// The text deltas of a reply stream and its outcome: the completed reply or the last error.
pub async fn drain(
    events: impl Stream<Item = Result<StreamEvent, ProviderError>>,
) -> (Vec<String>, Result<ModelResponse, ProviderError>) {
    let mut deltas = Vec::new();
    let mut outcome = Err(ProviderError::Protocol("no event".into()));
    let mut events = Box::pin(events);
    while let Some(event) = events.next().await {
        match event {
            Ok(StreamEvent::TextDelta(d)) => deltas.push(d),
            Ok(StreamEvent::Completed(r)) => outcome = Ok(r),
            Ok(StreamEvent::ThoughtDelta(_)) => {}
            Err(e) => outcome = Err(e),
        }
    }
    (deltas, outcome)
}

/// The JSON events of SSE text (`data:` lines) or of one-event-per-line chunk files.
pub fn sse_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("event:"))
        .filter_map(|l| serde_json::from_str(l.strip_prefix("data:").map_or(l, str::trim)).ok())
        .collect()
}

/// (id, name, input) of every tool call in a reply.
pub fn tool_calls(r: &ModelResponse) -> Vec<(String, String, Value)> {
    r.message
        .content
        .iter()
        .filter_map(|b| {
            if let Block::ToolUse { id, name, input, .. } = b {
                Some((id.clone(), name.clone(), input.clone()))
            } else {
                None
            }
        })
        .collect()
}

/// The message answering every call of `reply` with `content`, as the loop would send it.
pub fn answered(reply: &ModelResponse, content: &str) -> Message {
    Message::results(tool_calls(reply).into_iter().map(|(id, name, _)| ToolResult {
        tool_use_id: id,
        name,
        content: content.to_owned(),
        is_error: false,
    }))
}
