//! The `reap` function: the nightly housekeeping (see `kakeibo_operator::housekeeping`), started by
//! a schedule. Every count is logged and recorded in `housekeeping_runs`.

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use chrono::Utc;
use kakeibo_ledger::OwnerRolePool;
use kakeibo_operator::OperatorError;
use kakeibo_operator::housekeeping;
use serde_json::{Value, json};

/// One invocation: whatever the event (a schedule's, or `{}` by hand), reap now.
pub async fn handle(pool: &OwnerRolePool, _event: Value) -> Result<Value, OperatorError> {
    let reaped = housekeeping::reap(pool, Utc::now()).await?;
    let summary = json!({"reaped": reaped});
    println!("{summary}");
    Ok(summary)
}
