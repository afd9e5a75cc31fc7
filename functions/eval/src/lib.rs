//! The `eval` function: runs the built-in evaluation suite against the configured models and
//! stores the report (`GET /api/evals/latest` reads it). A schedule starts it nightly; the
//! admin function starts it on demand with an asynchronous invoke (`{"trigger": "admin"}`).
//!
//! A run's tasks must end a minute before the invocation's time runs out: one still running
//! then is stopped, and it and the tasks left are in the report as not run (`complete: false`). Without a model it fails, saying which setting is missing.

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kakeibo_evals::launch::{LaunchError, Trigger, run_built_in};
use serde_json::{Value, json};
use sqlx::PgPool;

/// Time kept back at the end of an invocation, to store the report.
pub const MARGIN: Duration = Duration::from_mins(1);

/// The instant by which every task ends, from the invocation's deadline (milliseconds since the
/// epoch, as the Lambda runtime gives it).
pub fn task_deadline(deadline_ms: u64, now: SystemTime) -> Instant {
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let left = Duration::from_millis(deadline_ms.saturating_sub(now_ms));
    Instant::now() + left.saturating_sub(MARGIN)
}

/// One invocation: run, store, and answer with the summary (also logged as one JSON line).
pub async fn handle(
    pool: &PgPool,
    var: &(dyn Fn(&str) -> Option<String> + Sync),
    event: &Value,
    deadline: Option<Instant>,
) -> Result<Value, LaunchError> {
    let trigger = Trigger::of(event);
    let progress = |line: &str| println!("{}", json!({"eval": line}));
    let report = run_built_in(pool, var, trigger, deadline, &progress).await?;
    let summary = json!({
        "trigger": trigger.name(),
        "model": report.model,
        "task_count": report.task_count,
        "passed": report.passed,
        "pass_rate": report.pass_rate,
        "complete": report.complete,
        "not_run": report.not_run.len(),
        "injection_block_rate": report.injection_block_rate,
        "total_cost_micro_usd": report.total_cost_micro_usd,
    });
    println!("{summary}");
    Ok(summary)
}
