//! A turn as server-sent events: the events of SPEC §6 (`token`, `tool_call`, `tool_result`,
//! `confirm_request`, `turn_end`, `error`), shared by `chat` and `confirm`.

use std::{future::Future, time::Instant};

use kakeibo_agent::{
    closing_events,
    turns::{ConfirmError, Outcome},
};
use kakeibo_core::{ConversationId, Event, TurnEvent};
use serde_json::{Value, json};

use crate::sse::Events;

/// Forwards the loop's events as they happen. Confirmation requests are sent once the turn is
/// stored (they need its id), by [`send_outcome`].
pub fn forward(events: &Events) -> impl Fn(TurnEvent) + Send + Sync + '_ {
    move |event| {
        if let Some(event) = Event::of(event) {
            events.emit(&event);
        }
    }
}

/// Runs a turn's `work` in a task of its own, and says so on the stream when that task dies
/// (a panic would otherwise end the stream without `turn_end` or `error`).
pub fn spawn_turn<F>(events: &Events, work: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let watcher = events.clone();
    // The turn keeps the request's span: its log lines carry the request id.
    let work = tracing::Instrument::in_current_span(work);
    tokio::spawn(async move {
        if let Err(failure) = tokio::spawn(work).await {
            tracing::error!(%failure, "turn task failed");
            watcher.emit(&Event::Error {
                message: "the turn stopped unexpectedly; what was saved is kept, try again".to_owned(),
            });
        }
    });
}

/// In Lambda, the run's list-price cost as a CloudWatch embedded metric (`kakeibo`
/// `ModelSpendUsd`), which the deployment's daily-spend alarm sums; elsewhere nothing.
pub fn record_spend(cost: kakeibo_core::MicroUsd) {
    if std::env::var_os("AWS_LAMBDA_FUNCTION_NAME").is_none() {
        return;
    }
    println!("{}", spend_metric(cost, chrono::Utc::now().timestamp_millis()));
}

/// The embedded-metric-format line for `cost` at `millis`.
pub fn spend_metric(cost: kakeibo_core::MicroUsd, millis: i64) -> Value {
    #[allow(clippy::cast_precision_loss)]
    let usd = cost.0 as f64 / 1_000_000.0;
    json!({
        "_aws": {
            "Timestamp": millis,
            "CloudWatchMetrics": [{
                "Namespace": "kakeibo",
                "Dimensions": [[]],
                "Metrics": [{"Name": "ModelSpendUsd", "Unit": "None"}],
            }],
        },
        "ModelSpendUsd": usd,
    })
}

/// The last events of a leg of a turn: `confirm_request` per pending write and `turn_end`, or
/// `error` when the leg failed (its state is kept: a failed confirm can be retried).
pub fn send_outcome(
    events: &Events,
    conversation: ConversationId,
    model: &str,
    started: Instant,
    result: Result<Outcome, ConfirmError>,
) {
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match result {
        Ok(outcome) => {
            if let Outcome::Finished { turn, .. } = &outcome {
                record_spend(turn.cost());
            }
            for event in closing_events(&outcome, conversation, model, latency_ms) {
                events.emit(&event);
            }
        }
        Err(e) => {
            tracing::warn!(error = %crate::error::chain(&e), "turn failed");
            let message = match e {
                ConfirmError::Claimed { .. } | ConfirmError::Gone | ConfirmError::Decisions(_) => {
                    e.to_string()
                }
                ConfirmError::Busy(busy) => format!("{}; the message was not counted", busy.message()),
                ConfirmError::NotStarted(_) => {
                    "the turn could not start; the message was not counted, send it again".to_owned()
                }
                _ => "the turn could not be completed; nothing was lost, try again".to_owned(),
            };
            events.emit(&Event::Error { message });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spend_metric_is_embedded_metric_format() {
        let line = spend_metric(kakeibo_core::MicroUsd(4_512), 1_795_986_000_000);
        assert_eq!(line["ModelSpendUsd"], 0.004_512);
        assert_eq!(line["_aws"]["CloudWatchMetrics"][0]["Namespace"], "kakeibo");
        assert_eq!(
            line["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Name"],
            "ModelSpendUsd"
        );
        assert_eq!(line["_aws"]["Timestamp"], 1_795_986_000_000_i64);
    }
}
