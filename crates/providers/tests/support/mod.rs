//! What the sample tests of every adapter share: finding the corpus, draining an event stream,
//! splitting SSE text and listing the tool calls of a reply.

#![allow(dead_code)] // Each test binary uses its own share of these.

pub mod standin;

use std::path::{Path, PathBuf};

use futures_util::{Stream, StreamExt, stream::BoxStream};
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

/// What differs between adapters when their samples are read.
pub struct Adapter {
    /// The adapter's event stream over chunks.
    pub events: fn(Vec<Value>) -> BoxStream<'static, Result<StreamEvent, ProviderError>>,
    /// The outcome of one whole body, with its HTTP status when the sample records one.
    pub body: fn(&Value, Option<u16>) -> Result<ModelResponse, ProviderError>,
    /// Whether a whole body records a failure.
    pub failed: fn(&Value) -> bool,
}

/// (name, outcome, whether the sample records a failure) for every file in `dirs` (relative to
/// `root`): JSON bodies, recorded exchanges (arrays of request/response pairs), and SSE or
/// one-event-per-line chunk files.
pub async fn all_samples(
    root: &Path,
    dirs: &[&str],
    adapter: &Adapter,
) -> Vec<(String, Result<ModelResponse, ProviderError>, bool)> {
    let streamed = async |chunks: Vec<Value>| drain((adapter.events)(chunks)).await.1;
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let name = path.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(exchanges)) => {
                for (i, exchange) in exchanges.iter().enumerate() {
                    let (status, body) = if exchange.get("scope").is_some() {
                        (exchange["status"].as_u64(), exchange["response"].clone())
                    } else {
                        (
                            exchange["response"]["status_code"].as_u64(),
                            exchange["response"]["body"].clone(),
                        )
                    };
                    let status = status.and_then(|s| u16::try_from(s).ok());
                    if let Value::String(sse) = &body {
                        out.push((format!("{name}#{i}"), streamed(sse_lines(sse)).await, false));
                    } else if body.is_object() {
                        let failed = status.is_some_and(|s| s >= 400);
                        out.push((format!("{name}#{i}"), (adapter.body)(&body, status), failed));
                    }
                }
            }
            Ok(body) => out.push((name, (adapter.body)(&body, None), (adapter.failed)(&body))),
            Err(_) => out.push((name, streamed(sse_lines(&text)).await, false)),
        }
    }
    out
}
