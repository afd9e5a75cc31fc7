//! The turn's events as they go out to a person or a program: one serialisable type that the
//! web's server-sent events, the CLI's `stream-json` and the library all emit.
//!
//! Serialised, an event is an object whose `type` names it (`token`, `tool_call`,
//! `tool_result`, `confirm_request`, `turn_end`, `error`); [`Event::data`] is the same object
//! without `type`, which is what an SSE frame carries under `event: <type>`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    ids::{ConversationId, RunId, SuspendedTurnId},
    message::Usage,
    tool::Tier,
    turn::{TurnEvent, WriteDecision},
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Text of the answer as it streams.
    Token { delta: String },
    /// The model asked for a tool.
    ToolCall {
        id: String,
        name: String,
        args: Value,
        /// `None` for a tool the registry does not hold.
        tier: Option<Tier>,
    },
    /// A tool call answered. `decision` only for a write a person decided on a confirm — the key
    /// is absent otherwise, never `null`.
    ToolResult {
        id: String,
        name: String,
        summary: String,
        #[serde(rename = "isError")]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<WriteDecision>,
    },
    /// A write waits for a person, in the suspended turn named.
    ConfirmRequest {
        id: String,
        tool: String,
        args: Value,
        summary: String,
        tier: Tier,
        suspended_turn_id: SuspendedTurnId,
    },
    /// The turn's leg is over: finished (with its usage and cost) or suspended.
    TurnEnd(TurnEnd),
    /// The leg failed; what was saved is kept.
    Error { message: String },
}

/// The end of a leg of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEnd {
    pub run_id: RunId,
    pub conversation_id: ConversationId,
    /// `ok`, `error`, `stuck`, `blocked`, … or `suspended`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspended_turn_id: Option<SuspendedTurnId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<EventUsage>,
    /// List-price cost in US dollars, as a decimal string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd_est: Option<String>,
    /// What the run would have cost with no cached tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncached_cost_usd_est: Option<String>,
    pub latency_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// What stopped a finished turn short (`daily_cap`, `max_tokens`, …); absent when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<crate::turn::Stop>,
    /// The turn's own sentence about what stopped it (the model's failure, the budget, …), which
    /// is not streamed as text; absent when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Token counts as events carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub thought_tokens: u64,
}

impl From<&Usage> for EventUsage {
    fn from(u: &Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cached_tokens: u.cached_tokens,
            thought_tokens: u.thought_tokens,
        }
    }
}

impl Event {
    /// The event's `type`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Token { .. } => "token",
            Self::ToolCall { .. } => "tool_call",
            Self::ToolResult { .. } => "tool_result",
            Self::ConfirmRequest { .. } => "confirm_request",
            Self::TurnEnd(_) => "turn_end",
            Self::Error { .. } => "error",
        }
    }

    /// The whole event as JSON, `type` included (a `stream-json` line).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The event without its `type` (an SSE frame's data).
    pub fn data(&self) -> Value {
        let mut value = self.to_json();
        if let Value::Object(map) = &mut value {
            map.remove("type");
        }
        value
    }

    /// The event a loop event goes out as; `None` for a confirmation request, which goes out
    /// once the turn is stored (it needs the suspended turn's id).
    pub fn of(event: TurnEvent) -> Option<Self> {
        Some(match event {
            TurnEvent::Token(delta) => Self::Token { delta },
            TurnEvent::ToolCall {
                id,
                name,
                input,
                tier,
            } => Self::ToolCall {
                id,
                name,
                args: input,
                tier,
            },
            TurnEvent::ToolResult {
                id,
                name,
                is_error,
                summary,
                decision,
            } => Self::ToolResult {
                id,
                name,
                summary,
                is_error,
                decision,
            },
            TurnEvent::ConfirmRequest(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_decided_writes_carry_a_decision() {
        let read = Event::ToolResult {
            id: "c1".into(),
            name: "get_spend_report".into(),
            summary: "<tool_data>".into(),
            is_error: false,
            decision: None,
        };
        assert_eq!(
            read.data(),
            json!({"id": "c1", "name": "get_spend_report", "summary": "<tool_data>", "isError": false})
        );
        for (decision, said) in [
            (WriteDecision::Allowed, "allowed"),
            (WriteDecision::Declined, "declined"),
            (WriteDecision::Expired, "expired"),
        ] {
            let written = Event::ToolResult {
                id: "c2".into(),
                name: "set_budget".into(),
                summary: String::new(),
                is_error: false,
                decision: Some(decision),
            };
            assert_eq!(written.to_json()["decision"], said);
            assert_eq!(written.to_json()["type"], "tool_result");
        }
    }

    #[test]
    fn each_event_names_itself_as_it_serialises_and_reads_back() {
        let suspended = SuspendedTurnId::random();
        let events = [
            Event::Token { delta: "hi".into() },
            Event::ToolCall {
                id: "c1".into(),
                name: "list_accounts".into(),
                args: json!({}),
                tier: Some(Tier::Read),
            },
            Event::ConfirmRequest {
                id: "c2".into(),
                tool: "set_budget".into(),
                args: json!({"category": "Dining"}),
                summary: "Set Dining to ₹5,000".into(),
                tier: Tier::Write,
                suspended_turn_id: suspended,
            },
            Event::TurnEnd(TurnEnd {
                run_id: RunId::random(),
                conversation_id: ConversationId::random(),
                status: "suspended".into(),
                suspended_turn_id: Some(suspended),
                usage: None,
                cost_usd_est: None,
                uncached_cost_usd_est: None,
                latency_ms: 12,
                iterations: None,
                stop: None,
                message: None,
            }),
            Event::Error { message: "no".into() },
        ];
        for event in events {
            let line = event.to_json();
            assert_eq!(line["type"], event.name());
            assert!(event.data().get("type").is_none());
            let back: Event = serde_json::from_value(line).unwrap();
            assert_eq!(back, event);
        }
    }
}
