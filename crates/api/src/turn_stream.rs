//! A turn as server-sent events: the events of SPEC §6 (`token`, `tool_call`, `tool_result`,
//! `confirm_request`, `turn_end`, `error`), shared by `chat` and `confirm`.

use std::future::Future;

use kakeibo_agent::turns::ConfirmError;
use kakeibo_core::Event;
use serde_json::{Value, json};

use crate::sse::Events;

/// Emits each event of a run on the stream as it happens, `turn_end` last.
pub fn forward(events: &Events) -> impl Fn(&Event) + Send + Sync + '_ {
    move |event| events.emit(event)
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

/// Ends the stream of a run the agent finished (its closing events already sent, `turn_end`
/// last: its spend is recorded) or says on it why the run failed.
pub fn send_result(events: &Events, result: Result<kakeibo::RunResult, kakeibo::Error>) {
    match result {
        Ok(run) => {
            if !run.is_waiting() {
                record_spend(run.cost);
            }
        }
        Err(e) => {
            tracing::warn!(error = %crate::error::chain(&e), "turn failed");
            let message = match e {
                kakeibo::Error::Turn(
                    e @ (ConfirmError::Claimed { .. } | ConfirmError::Gone | ConfirmError::Decisions(_)),
                ) => e.to_string(),
                kakeibo::Error::Turn(ConfirmError::Busy(busy)) => {
                    format!("{}; the message was not counted", busy.message())
                }
                kakeibo::Error::Turn(ConfirmError::NotStarted(_)) => {
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
