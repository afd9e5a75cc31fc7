//! What a run leaves behind: numbered events, stored by whoever implements [`Tracer`].

use std::sync::{Mutex, PoisonError};

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    ids::RunId,
    message::{Block, StopReason, Usage},
    policy::PendingWrite,
    tool::Tier,
};

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

impl TraceKind {
    /// The name stored in `trace_events.type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ModelCall => "model_call",
            Self::ToolCall => "tool_call",
            Self::Confirm => "confirm",
            Self::SummaryEviction => "summary_eviction",
            Self::Error => "error",
        }
    }
}

/// The version of the payload shapes below, stored in each payload as `v`. A reader meets
/// payloads of older versions in old rows: a change of shape adds fields, or raises this.
pub const PAYLOAD_VERSION: u32 = 1;

/// The payload keys that readers of stored traces query by name (the operator's panels), in
/// one place; a test holds each to the field the payload types serialise.
pub mod keys {
    /// [`super::ModelCallTrace::figures`]: on the model call whose answer states figures.
    pub const MODEL_FIGURES: &str = "figures";
    /// [`super::ToolCallTrace::name`].
    pub const TOOL_NAME: &str = "name";
    /// [`super::ToolCallTrace::error`].
    pub const TOOL_ERROR: &str = "error";
    /// [`super::ToolCallTrace::confirmed`].
    pub const TOOL_CONFIRMED: &str = "confirmed";
    /// The tag of [`super::ErrorTrace`].
    pub const ERROR_KIND: &str = "kind";
    /// [`super::ConfirmTrace::allowed`].
    pub const CONFIRM_ALLOWED: &str = "allowed";
    /// [`super::ConfirmTrace::suspended`]: present on the proposal that suspended a turn.
    pub const CONFIRM_SUSPENDED: &str = "suspended";
    /// [`super::ConfirmTrace::expired`]: present on the decision that followed a suspension.
    pub const CONFIRM_EXPIRED: &str = "expired";
}

/// A model call: what the model was asked with and what it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelCallTrace {
    pub iteration: u32,
    pub model: String,
    pub model_version: Option<String>,
    pub stop_reason: StopReason,
    pub message_count: usize,
    pub content: Vec<Block>,
    /// For the call that answered: the answer's figures, checked against the run's tool figures
    /// (absent when it states none, and on every other call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<crate::figures::FigureCheck>,
}

/// One tool call answered: run, declined, or refused before running.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCallTrace {
    pub name: String,
    /// `None` for a tool the registry does not hold.
    pub tier: Option<Tier>,
    pub args: Value,
    pub result: String,
    /// `Some` for a write: whether the person allowed it.
    pub confirmed: Option<bool>,
    pub error: bool,
}

/// A write proposed to a person, and what they decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConfirmTrace {
    pub id: String,
    pub tool: String,
    pub tier: Tier,
    pub args: Value,
    pub summary: String,
    /// `None` while the decision waits (a suspension).
    pub allowed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspended: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired: Option<bool>,
}

impl ConfirmTrace {
    /// A decision on `write` (`allowed: None` while it waits).
    pub fn of(write: &PendingWrite, allowed: Option<bool>) -> Self {
        Self {
            id: write.id.clone(),
            tool: write.tool.clone(),
            tier: Tier::Write,
            args: write.args.clone(),
            summary: write.summary.clone(),
            allowed,
            suspended: None,
            expired: None,
        }
    }
}

/// Older turns summarised to fit the context window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvictionTrace {
    pub evicted_turns: usize,
    pub evicted_messages: usize,
    pub kept_turns: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub budget: u64,
    pub summary: String,
}

/// Why a run ended in an error, or hit a limit on its way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ErrorTrace {
    Provider {
        error: String,
    },
    Blocked,
    MaxTokens,
    IterationLimit {
        iterations: u32,
    },
    /// The daily budget refused the next model call.
    Budget {
        reason: String,
    },
}

impl ErrorTrace {
    /// The name stored under [`keys::ERROR_KIND`].
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::Provider { .. } => "provider",
            Self::Blocked => "blocked",
            Self::MaxTokens => "max_tokens",
            Self::IterationLimit { .. } => "iteration_limit",
            Self::Budget { .. } => "budget",
        }
    }
}

/// What an event holds, one shape per [`TraceKind`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TracePayload {
    ModelCall(ModelCallTrace),
    ToolCall(ToolCallTrace),
    Confirm(ConfirmTrace),
    SummaryEviction(EvictionTrace),
    Error(ErrorTrace),
}

impl TracePayload {
    pub fn kind(&self) -> TraceKind {
        match self {
            Self::ModelCall(_) => TraceKind::ModelCall,
            Self::ToolCall(_) => TraceKind::ToolCall,
            Self::Confirm(_) => TraceKind::Confirm,
            Self::SummaryEviction(_) => TraceKind::SummaryEviction,
            Self::Error(_) => TraceKind::Error,
        }
    }

    /// The payload as stored: its JSON with `v` set to [`PAYLOAD_VERSION`], long texts clipped.
    pub fn stored(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("v".to_owned(), Value::from(PAYLOAD_VERSION));
        }
        clip_payload(value)
    }

    /// A stored payload of `kind` read back (from a reference: a reader that keeps the stored
    /// value when it does not read copies nothing).
    pub fn from_stored(kind: TraceKind, value: &Value) -> Result<Self, serde_json::Error> {
        Ok(match kind {
            TraceKind::ModelCall => Self::ModelCall(Deserialize::deserialize(value)?),
            TraceKind::ToolCall => Self::ToolCall(Deserialize::deserialize(value)?),
            TraceKind::Confirm => Self::Confirm(Deserialize::deserialize(value)?),
            TraceKind::SummaryEviction => Self::SummaryEviction(Deserialize::deserialize(value)?),
            TraceKind::Error => Self::Error(Deserialize::deserialize(value)?),
        })
    }
}

/// One event of a run; `seq` numbers the run's events from 0 and continues across a resume.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceEvent {
    pub run_id: RunId,
    pub seq: u32,
    pub payload: TracePayload,
    pub latency_ms: Option<u64>,
    pub usage: Option<Usage>,
    pub thought_summary: Option<String>,
}

impl TraceEvent {
    pub fn kind(&self) -> TraceKind {
        self.payload.kind()
    }
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

/// Keeps events in memory until they are taken: the agent writes a leg's events with the commit
/// that ends it (tests and one-shot runs read them here).
#[derive(Debug, Default)]
pub struct MemoryTracer(Mutex<Vec<TraceEvent>>);

impl MemoryTracer {
    /// The events so far, kept.
    pub fn events(&self) -> Vec<TraceEvent> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The events so far, in order, taken: the tracer is empty after.
    pub fn take(&self) -> Vec<TraceEvent> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Tracer for MemoryTracer {
    fn record(&self, event: TraceEvent) -> BoxFuture<'_, ()> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(event);
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

/// `text` on one line (runs of whitespace made one space), cut to `chars` characters with an
/// ellipsis: for a line a person or a judge reads.
pub fn one_line(text: &str, chars: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= chars {
        one_line
    } else {
        format!("{}…", one_line.chars().take(chars).collect::<String>())
    }
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

    fn object_keys(payload: &TracePayload) -> Vec<String> {
        payload
            .stored()
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn the_named_keys_are_the_keys_the_payloads_store() {
        let call = TracePayload::ToolCall(ToolCallTrace {
            name: "set_budget".into(),
            tier: Some(Tier::Write),
            args: serde_json::json!({}),
            result: "{}".into(),
            confirmed: Some(true),
            error: false,
        });
        let keys = object_keys(&call);
        for key in [keys::TOOL_NAME, keys::TOOL_ERROR, keys::TOOL_CONFIRMED, "v"] {
            assert!(keys.iter().any(|k| k == key), "{key} not in {keys:?}");
        }
        let write = PendingWrite {
            id: "c1".into(),
            tool: "set_budget".into(),
            args: serde_json::json!({}),
            summary: "Set a budget".into(),
        };
        let mut confirm = ConfirmTrace::of(&write, None);
        assert!(
            !object_keys(&TracePayload::Confirm(confirm.clone()))
                .iter()
                .any(|k| k == keys::CONFIRM_SUSPENDED)
        );
        confirm.suspended = Some(true);
        confirm.expired = Some(false);
        let keys_of = object_keys(&TracePayload::Confirm(confirm));
        for key in [
            keys::CONFIRM_ALLOWED,
            keys::CONFIRM_SUSPENDED,
            keys::CONFIRM_EXPIRED,
        ] {
            assert!(keys_of.iter().any(|k| k == key), "{key} not in {keys_of:?}");
        }
        for kind in [
            ErrorTrace::Provider { error: "x".into() },
            ErrorTrace::Blocked,
            ErrorTrace::MaxTokens,
            ErrorTrace::IterationLimit { iterations: 8 },
            ErrorTrace::Budget { reason: "x".into() },
        ] {
            assert_eq!(
                TracePayload::Error(kind.clone()).stored()[keys::ERROR_KIND],
                kind.kind_name()
            );
        }
        let error = TracePayload::Error(ErrorTrace::IterationLimit { iterations: 8 }).stored();
        assert_eq!(error["iterations"], 8);
        assert_eq!(error["v"], PAYLOAD_VERSION);
    }

    #[test]
    fn each_payload_reads_back_as_stored() {
        let payloads = [
            TracePayload::Error(ErrorTrace::Provider {
                error: "timeout".into(),
            }),
            TracePayload::Error(ErrorTrace::Blocked),
            TracePayload::SummaryEviction(EvictionTrace {
                evicted_turns: 2,
                evicted_messages: 6,
                kept_turns: 4,
                tokens_before: 9000,
                tokens_after: 3000,
                budget: 8000,
                summary: "March".into(),
            }),
        ];
        for payload in payloads {
            let back = TracePayload::from_stored(payload.kind(), &payload.stored()).unwrap();
            assert_eq!(back, payload);
        }
        // Kinds are stored under the names the database's `trace_events.type` holds.
        for kind in [
            TraceKind::ModelCall,
            TraceKind::ToolCall,
            TraceKind::Confirm,
            TraceKind::SummaryEviction,
            TraceKind::Error,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }

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
