//! The turn's events as they go out to a person or a program: one serialisable type that the
//! web's server-sent events, the CLI's `stream-json` and the library all emit.
//!
//! Serialised, an event is an object whose `type` names it (`token`, `tool_call`,
//! `tool_result`, `confirm_request`, `turn_end`, `error`); [`Event::data`] is the same object
//! without `type`, which is what an SSE frame carries under `event: <type>`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    figures::{FigureCheck, Headline},
    ids::{ConversationId, RunId, SuspendedTurnId},
    message::Usage,
    pricing,
    tool::Tier,
    turn::{CallRecord, RunStatus, Stop, ToolOutcome, Turn, TurnEvent, WriteDecision},
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Text of the answer as it streams.
    Token { delta: String },
    /// The model asked for a tool.
    ToolCall {
        id: String,
        name: String,
        /// The call's input: a JSON object.
        #[schemars(with = "serde_json::Map<String, Value>")]
        args: Value,
        /// `None` for a tool the registry does not hold.
        tier: Option<Tier>,
    },
    /// A tool call answered: how it ended, and what the model was told, clipped. `decision`
    /// only for a write a person decided on a confirm — the key is absent otherwise, never `null`.
    ToolResult {
        id: String,
        name: String,
        summary: String,
        outcome: ToolOutcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<WriteDecision>,
        /// The result's headline figure (a report's total, a search's first row), when it
        /// states one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        headline: Option<Headline>,
    },
    /// A write waits for a person, in the suspended turn named.
    ConfirmRequest {
        id: String,
        tool: String,
        /// The write's input: a JSON object.
        #[schemars(with = "serde_json::Map<String, Value>")]
        args: Value,
        summary: String,
        tier: Tier,
        suspended_turn_id: SuspendedTurnId,
    },
    /// Every figure the answer states, each grounded in the tool figures named (and through
    /// them the rows that make it) or ungrounded. Sent before `turn_end`, only for an answer
    /// that states a figure.
    Figures(FigureCheck),
    /// The answer streamed so far states `figures`, which no tool of the turn returned: the model
    /// is asked once to correct it (`FIGURES=retry`), and the corrected answer streams next —
    /// the text streamed so far is superseded by it.
    Correcting { figures: Vec<String> },
    /// What a subagent did for the `task` call `call_id`: one of its `tool_call` or
    /// `tool_result` events.
    Subagent { call_id: String, event: Box<Event> },
    /// The turn's leg is over: finished (with its usage and cost) or suspended.
    TurnEnd(TurnEnd),
    /// The leg failed; what was saved is kept.
    Error { message: String },
}

/// The end of a leg of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnEnd {
    pub run_id: RunId,
    pub conversation_id: ConversationId,
    /// How the run finished (`ok`, `error`, `stuck`, `blocked`, `aborted`), or `suspended`.
    pub status: EndStatus,
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

/// How a leg of a turn ended: the run's status once it finished, or suspended while a write waits
/// for a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndStatus {
    Ok,
    Error,
    Blocked,
    Aborted,
    Stuck,
    Suspended,
}

impl From<RunStatus> for EndStatus {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Ok => Self::Ok,
            RunStatus::Error => Self::Error,
            RunStatus::Blocked => Self::Blocked,
            RunStatus::Aborted => Self::Aborted,
            RunStatus::Stuck => Self::Stuck,
        }
    }
}

/// A finished run in the words every channel uses: the web's `turn_end`, the CLI's `result`
/// line and ACP's stop are all made from this one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: RunId,
    pub status: RunStatus,
    /// What stopped the run short; absent when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
    /// The answer, or the turn's sentence about what stopped it.
    pub answer: String,
    pub usage: EventUsage,
    /// List-price cost in US dollars, as a decimal string.
    pub cost_usd_est: String,
    /// What the run would have cost with no cached tokens.
    pub uncached_cost_usd_est: String,
    pub iterations: u32,
    /// Every tool call of the run, in order, with how it ended.
    pub tool_calls: Vec<CallRecord>,
    /// The answer's figures, checked; absent when it states none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<FigureCheck>,
}

impl RunSummary {
    /// The summary of a finished turn (`None` while it runs or waits); `model` prices its
    /// uncached cost.
    pub fn of(turn: &Turn, model: &str) -> Option<Self> {
        let (status, answer) = turn.finished()?;
        let (_, uncached) = pricing::cost(model, &turn.usage());
        Some(Self {
            run_id: turn.run_id(),
            status,
            stop: turn.stop().filter(|stop| *stop != Stop::End),
            answer: answer.to_owned(),
            usage: EventUsage::from(&turn.usage()),
            cost_usd_est: turn.cost().decimal(),
            uncached_cost_usd_est: uncached.decimal(),
            iterations: turn.iteration(),
            tool_calls: turn.calls().to_vec(),
            figures: turn.figures().cloned(),
        })
    }
}

impl TurnEnd {
    /// The end of a finished run's last leg.
    pub fn finished(run: &RunSummary, conversation_id: ConversationId, latency_ms: u64) -> Self {
        Self {
            run_id: run.run_id,
            conversation_id,
            status: run.status.into(),
            suspended_turn_id: None,
            usage: Some(run.usage),
            cost_usd_est: Some(run.cost_usd_est.clone()),
            uncached_cost_usd_est: Some(run.uncached_cost_usd_est.clone()),
            latency_ms,
            iterations: Some(run.iterations),
            stop: run.stop,
            // The turn's own sentence about what stopped it; a cut-off answer streamed as text
            // already.
            message: run
                .stop
                .is_some_and(|stop| stop != Stop::MaxTokens)
                .then(|| run.answer.clone()),
        }
    }

    /// The end of a leg that stopped to wait for a person in `suspended`.
    pub fn suspended(
        run_id: RunId,
        conversation_id: ConversationId,
        suspended: SuspendedTurnId,
        latency_ms: u64,
    ) -> Self {
        Self {
            run_id,
            conversation_id,
            status: EndStatus::Suspended,
            suspended_turn_id: Some(suspended),
            usage: None,
            cost_usd_est: None,
            uncached_cost_usd_est: None,
            latency_ms,
            iterations: None,
            stop: None,
            message: None,
        }
    }
}

/// The CLI's `result` line (`kakeibo -p … --output-format json|stream-json`): the run's summary
/// with where it belongs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "result")]
pub struct ResultLine {
    #[serde(flatten)]
    pub run: RunSummary,
    pub conversation_id: ConversationId,
    /// `provider:model`.
    pub model: String,
    pub latency_ms: u64,
}

/// Token counts as events carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
            Self::Figures(_) => "figures",
            Self::Correcting { .. } => "correcting",
            Self::TurnEnd(_) => "turn_end",
            Self::Error { .. } => "error",
            Self::Subagent { .. } => "subagent",
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
                outcome,
                summary,
                decision,
                headline,
            } => Self::ToolResult {
                id,
                name,
                summary,
                outcome,
                decision,
                headline,
            },
            TurnEvent::Figures(checked) => Self::Figures(checked),
            TurnEvent::Correcting(figures) => Self::Correcting { figures },
            TurnEvent::ConfirmRequest(_) => return None,
            TurnEvent::Subagent { call_id, event } => Self::Subagent {
                call_id,
                event: Box::new(Self::of(*event)?),
            },
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
            outcome: ToolOutcome::Ran,
            decision: None,
            headline: None,
        };
        assert_eq!(
            read.data(),
            json!({"id": "c1", "name": "get_spend_report", "summary": "<tool_data>", "outcome": "ran"})
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
                outcome: ToolOutcome::Ran,
                decision: Some(decision),
                headline: None,
            };
            assert_eq!(written.to_json()["decision"], said);
            assert_eq!(written.to_json()["type"], "tool_result");
        }
    }

    #[test]
    fn every_outcome_and_status_is_one_snake_case_word_on_the_wire() {
        for (outcome, ran, error) in [
            (ToolOutcome::Ran, true, false),
            (ToolOutcome::Failed, true, true),
            (ToolOutcome::Declined, false, false),
            (ToolOutcome::Expired, false, false),
            (ToolOutcome::DeniedByRule, false, false),
            (ToolOutcome::RefusedByHook, false, false),
        ] {
            assert_eq!(json!(outcome), json!(outcome.as_str()));
            assert_eq!(outcome.not_run().is_none(), ran, "{outcome}");
            assert_eq!(outcome.is_error(), error, "{outcome}");
        }
        let usage = EventUsage::from(&Usage {
            input_tokens: 3,
            ..Usage::default()
        });
        assert_eq!(json!(usage)["input_tokens"], 3, "snake_case like every other key");
        assert_eq!(json!(EndStatus::from(RunStatus::Stuck)), "stuck");
        assert_eq!(json!(EndStatus::Suspended), "suspended");
    }

    #[test]
    fn a_result_line_is_the_summary_with_its_place() {
        let run = RunSummary {
            run_id: RunId::random(),
            status: RunStatus::Ok,
            stop: None,
            answer: "₹8,000".into(),
            usage: EventUsage::from(&Usage::default()),
            cost_usd_est: "0.000000".into(),
            uncached_cost_usd_est: "0.000000".into(),
            iterations: 1,
            tool_calls: Vec::new(),
            figures: None,
        };
        let line = ResultLine {
            run: run.clone(),
            conversation_id: ConversationId::random(),
            model: "script:rules".into(),
            latency_ms: 3,
        };
        let json = serde_json::to_value(&line).unwrap();
        assert_eq!(json["type"], "result");
        assert_eq!(json["status"], "ok");
        assert_eq!(json["answer"], "₹8,000");
        assert!(json.get("stop").is_none(), "an answered run has no stop");
        assert_eq!(serde_json::from_value::<ResultLine>(json).unwrap(), line);
        let end = TurnEnd::finished(&run, line.conversation_id, 3);
        assert_eq!(end.status, EndStatus::Ok);
        assert_eq!(end.message, None);
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
            Event::TurnEnd(TurnEnd::suspended(
                RunId::random(),
                ConversationId::random(),
                suspended,
                12,
            )),
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
