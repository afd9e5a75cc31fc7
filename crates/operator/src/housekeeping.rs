//! The nightly housekeeping: what no one will come back for, deleted, and each count recorded.
//!
//! - anonymous visitors not seen for 24 hours (their ledger, conversations and runs cascade);
//! - suspended turns still pending a day after their expiry (a confirm after expiry still closes
//!   the turn properly, so they get a day's grace; one claimed or applied is in flight and stays),
//!   their runs marked aborted;
//! - per-address counters of earlier UTC days, per-owner message counters of earlier days;
//! - sign-in attempt counts untouched for a day;
//! - import plans never committed, older than a day;
//! - runs still `running` an hour after they started with no suspended turn waiting on them
//!   (their function died mid-turn), finished as `error`;
//! - budget holds past their expiry (a model call whose function died), their amount given back
//!   to their day (the day's next reservation gives back today's too; this sweeps the rest).
//!
//! It runs as the owner role (it crosses owners by design).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::OperatorError;
use kakeibo_ledger::OwnerRolePool;

/// How many rows each step deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Reaped {
    pub anonymous_visitors: u64,
    pub expired_suspended_turns: u64,
    pub old_rate_limits: u64,
    pub old_message_counters: u64,
    pub old_sign_in_attempts: u64,
    pub stale_import_plans: u64,
    pub expired_budget_holds: u64,
    pub abandoned_runs: u64,
}

impl Reaped {
    /// Each count, in the order of [`STEPS`].
    fn counts(&mut self) -> [&mut u64; 8] {
        [
            &mut self.anonymous_visitors,
            &mut self.expired_suspended_turns,
            &mut self.old_rate_limits,
            &mut self.old_message_counters,
            &mut self.old_sign_in_attempts,
            &mut self.stale_import_plans,
            &mut self.expired_budget_holds,
            &mut self.abandoned_runs,
        ]
    }
}

/// The steps, in the order of [`Reaped::counts`]; `$1` is now.
const STEPS: [&str; 8] = [
    "DELETE FROM users WHERE is_anonymous AND last_seen_at < $1 - interval '24 hours'",
    "WITH gone AS (
        DELETE FROM suspended_turns WHERE status = 'pending' AND expires_at < $1 - interval '1 day'
        RETURNING owner_id, run_id
     ), closed AS (
        UPDATE trace_runs r SET status = 'aborted', finished_at = coalesce(r.finished_at, $1)
        FROM gone WHERE r.owner_id = gone.owner_id AND r.id = gone.run_id AND r.finished_at IS NULL
        RETURNING 1
     )
     SELECT count(*) FROM gone",
    "DELETE FROM rate_limits WHERE window_start < ($1 AT TIME ZONE 'UTC')::date",
    "DELETE FROM owner_daily_messages WHERE day < ($1 AT TIME ZONE 'UTC')::date",
    "DELETE FROM sign_in_failures WHERE last_failed_at < $1 - interval '1 day'",
    "DELETE FROM import_batches WHERE status = 'planned' AND created_at < $1 - interval '1 day'",
    "WITH gone AS (
        DELETE FROM budget_holds WHERE expires_at < $1 RETURNING day, amount_micro_usd
     ), per_day AS (
        SELECT day, sum(amount_micro_usd)::bigint AS amount FROM gone GROUP BY day
     ), released AS (
        UPDATE budget_days b SET reserved_micro_usd = greatest(b.reserved_micro_usd - per_day.amount, 0)
        FROM per_day WHERE b.day = per_day.day
        RETURNING 1
     )
     SELECT count(*) FROM gone",
    "UPDATE trace_runs r SET status = 'error', finished_at = $1
     WHERE r.status = 'running' AND r.started_at < $1 - interval '1 hour'
       AND NOT EXISTS (SELECT 1 FROM suspended_turns s WHERE s.owner_id = r.owner_id AND s.run_id = r.id)",
];

/// Deletes what is stale as of `now`, in one transaction, and records the counts in
/// `housekeeping_runs`.
pub async fn reap(pool: &OwnerRolePool, now: DateTime<Utc>) -> Result<Reaped, OperatorError> {
    let mut tx = pool.get().begin().await?;
    let mut reaped = Reaped::default();
    for (count, sql) in reaped.counts().into_iter().zip(STEPS) {
        *count = if sql.starts_with("WITH") {
            let n: i64 = sqlx::query_scalar(sql).bind(now).fetch_one(&mut *tx).await?;
            u64::try_from(n).unwrap_or(0)
        } else {
            sqlx::query(sql)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected()
        };
    }
    let deleted = serde_json::to_value(&reaped).map_err(OperatorError::Serialise)?;
    sqlx::query("INSERT INTO housekeeping_runs (ran_at, deleted) VALUES ($1, $2)")
        .bind(now)
        .bind(deleted)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(reaped)
}
