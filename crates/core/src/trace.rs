//! What a run leaves behind: numbered events, stored by whoever implements [`Tracer`].

use std::sync::Mutex;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::Usage;

/// Longest text kept in a trace payload; longer ones are clipped with their length noted.
pub const PAYLOAD_CLIP: usize = 4000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    ModelCall,
    ToolCall,
    Confirm,
    SummaryEviction,
    Error,
}

/// One event of a run; `seq` numbers the run's events from 0 and continues across a resume.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceEvent {
    pub run_id: String,
    pub seq: u32,
    pub kind: TraceKind,
    pub payload: Value,
    pub latency_ms: Option<u64>,
    pub usage: Option<Usage>,
    pub thought_summary: Option<String>,
}

pub trait Tracer: Send + Sync {
    /// Records an event. Tracing never fails a turn: implementations log their own errors.
    fn record(&self, event: TraceEvent) -> BoxFuture<'_, ()>;
}

/// Records nothing.
#[derive(Debug, Default)]
pub struct NoTrace;

impl Tracer for NoTrace {
    fn record(&self, _event: TraceEvent) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// Keeps events in memory (tests, one-shot runs).
#[derive(Debug, Default)]
pub struct MemoryTracer(Mutex<Vec<TraceEvent>>);

impl MemoryTracer {
    pub fn events(&self) -> Vec<TraceEvent> {
        self.0.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl Tracer for MemoryTracer {
    fn record(&self, event: TraceEvent) -> BoxFuture<'_, ()> {
        if let Ok(mut events) = self.0.lock() {
            events.push(event);
        }
        Box::pin(async {})
    }
}

/// `text` cut to `max` characters, saying how long it was.
pub fn clip(text: &str, max: usize) -> String {
    let length = text.chars().count();
    if length <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}… [clipped: {length} characters]")
}

/// Every string in `value` clipped to [`PAYLOAD_CLIP`].
pub fn clip_payload(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(clip(&s, PAYLOAD_CLIP)),
        Value::Array(items) => Value::Array(items.into_iter().map(clip_payload).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, clip_payload(v))).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_notes_the_length() {
        assert_eq!(clip("abc", 5), "abc");
        assert_eq!(clip("abcdef", 3), "abc… [clipped: 6 characters]");
        let long = "x".repeat(5000);
        let clipped = clip_payload(serde_json::json!({"a": [long]}));
        assert!(
            clipped["a"][0]
                .as_str()
                .unwrap()
                .ends_with("[clipped: 5000 characters]")
        );
    }
}
