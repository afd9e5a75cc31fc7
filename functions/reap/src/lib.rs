//! The `reap` function: the nightly housekeeping (see `kakeibo_operator::housekeeping`), started by
//! a schedule. Every count is logged and recorded in `housekeeping_runs`.

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use chrono::Utc;
use kakeibo_ledger::OwnerRolePool;
use kakeibo_operator::OperatorError;
use kakeibo_operator::housekeeping;
use serde::Serialize;
use serde_json::Value;

/// What one invocation deleted: its answer, and the line it logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReapLine {
    pub reaped: housekeeping::Reaped,
}

/// One invocation: whatever the event (a schedule's, or `{}` by hand), reap now.
pub async fn handle(pool: &OwnerRolePool, _event: Value) -> Result<ReapLine, OperatorError> {
    let line = ReapLine {
        reaped: housekeeping::reap(pool, Utc::now()).await?,
    };
    println!("{}", serde_json::to_string(&line).unwrap_or_default());
    Ok(line)
}
