//! A turn as server-sent events: the events of SPEC §6 (`token`, `tool_call`, `tool_result`,
//! `confirm_request`, `turn_end`, `error`), shared by `chat` and `confirm`.

use std::{future::Future, time::Instant};

use kakeibo_core::{RunStatus, TurnEvent, pricing};
use kakeibo_ledger::turns::{ConfirmError, Outcome};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::sse::Events;

/// Forwards the loop's events as they happen. Confirmation requests are sent once the turn is
/// stored (they need its id), by [`send_outcome`].
pub fn forward(events: &Events) -> impl Fn(TurnEvent) + Send + Sync + '_ {
    move |event| match event {
        TurnEvent::Token(delta) => events.send("token", &json!({"delta": delta})),
        TurnEvent::ToolCall {
            id,
            name,
            input,
            tier,
        } => {
            events.send(
                "tool_call",
                &json!({"id": id, "name": name, "args": input, "tier": tier}),
            );
        }
        TurnEvent::ToolResult {
            id,
            name,
            is_error,
            summary,
        } => events.send(
            "tool_result",
            &json!({"id": id, "name": name, "summary": summary, "isError": is_error}),
        ),
        TurnEvent::ConfirmRequest(_) => {}
    }
}

/// Runs a turn's `work` in a task of its own, and says so on the stream when that task dies
/// (a panic would otherwise end the stream without `turn_end` or `error`).
pub fn spawn_turn<F>(events: &Events, work: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let watcher = events.clone();
    tokio::spawn(async move {
        if let Err(failure) = tokio::spawn(work).await {
            eprintln!("turn task failed: {failure}");
            watcher.send(
                "error",
                &json!({"message": "the turn stopped unexpectedly; what was saved is kept, try again"}),
            );
        }
    });
}

fn status_name(status: RunStatus) -> Value {
    serde_json::to_value(status).unwrap_or(Value::Null)
}

/// The last events of a leg of a turn: `confirm_request` per pending write and `turn_end`, or
/// `error` when the leg failed (its state is kept: a failed confirm can be retried).
pub fn send_outcome(
    events: &Events,
    conversation: Uuid,
    model: &str,
    started: Instant,
    result: Result<Outcome, ConfirmError>,
) {
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match result {
        Ok(Outcome::Finished {
            run_id, status, turn, ..
        }) => {
            let (_, uncached) = pricing::cost(model, &turn.usage);
            events.send(
                "turn_end",
                &json!({
                    "run_id": run_id,
                    "conversation_id": conversation,
                    "status": status_name(status),
                    "usage": {
                        "inputTokens": turn.usage.input_tokens,
                        "outputTokens": turn.usage.output_tokens,
                        "cachedTokens": turn.usage.cached_tokens,
                        "thoughtTokens": turn.usage.thought_tokens,
                    },
                    "cost_usd_est": turn.cost.decimal(),
                    "uncached_cost_usd_est": uncached.decimal(),
                    "latency_ms": latency_ms,
                    "iterations": turn.iteration,
                }),
            );
        }
        Ok(Outcome::Suspended {
            run_id,
            suspended_id,
            pending,
        }) => {
            for write in &pending {
                events.send(
                    "confirm_request",
                    &json!({"id": write.id, "tool": write.tool, "args": write.args, "summary": write.summary,
                            "tier": "write", "suspended_turn_id": suspended_id}),
                );
            }
            events.send(
                "turn_end",
                &json!({"run_id": run_id, "conversation_id": conversation, "status": "suspended",
                        "suspended_turn_id": suspended_id, "latency_ms": latency_ms}),
            );
        }
        Err(e) => {
            eprintln!("turn failed: {e}");
            let message = match e {
                ConfirmError::Claimed | ConfirmError::Gone => e.to_string(),
                _ => "the turn could not be completed; nothing was lost, try again".to_owned(),
            };
            events.send("error", &json!({"message": message}));
        }
    }
}
