//! The `eval` function: runs the built-in evaluation suite against the configured models and
//! stores the report (`GET /api/evals/latest` reads it). A schedule starts it nightly; the
//! admin function starts it on demand with an asynchronous invoke (`{"trigger": "admin"}`).
//!
//! A run's tasks must end a minute before the invocation's time runs out: one still running
//! then is stopped, and it and the tasks left are in the report as not run (`complete: false`). Without a model it fails, saying which setting is missing.

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kakeibo_evals::launch::{Invocation, LaunchError, RunLine, run_built_in};
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
) -> Result<RunLine, LaunchError> {
    let trigger = Invocation::of(event).trigger;
    let progress = |line: &str| println!("{}", json!({"eval": line}));
    let report = run_built_in(pool, var, trigger, deadline, &progress).await?;
    let line = RunLine::of(trigger, &report);
    println!("{}", serde_json::to_string(&line).unwrap_or_default());
    Ok(line)
}
