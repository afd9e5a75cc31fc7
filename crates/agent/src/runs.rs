//! The read side of traces, owner-scoped: the runs list and one run with its events.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use kakeibo_core::RunId;
use kakeibo_ledger::{OwnerId, begin_for_owner};

use crate::AgentError;

/// One row of the runs list.
#[derive(Debug, Clone, Serialize, JsonSchema, sqlx::FromRow)]
pub struct RunSummary {
    pub id: Uuid,
    pub conversation_id: Option<Uuid>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub channel: String,
    pub provider: String,
    pub model: String,
    /// `ok`, `error`, `blocked`, `aborted`, `stuck`, or for a run not finished: `running`,
    /// `waiting`, `expired` or `abandoned` (see `RUN_COLUMNS`).
    pub status: String,
    pub iterations: i32,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cached_tokens: i64,
    /// A list-price estimate, in micro-dollars (`1_500_000` is $1.50), exact as stored.
    pub cost_micro_usd: i64,
    pub latency_ms: i32,
    /// The person's message that began the run (its first 500 characters); none for runs from
    /// before runs kept it.
    pub question: Option<String>,
}

/// One trace event of a run, in `seq` order.
#[derive(Debug, Clone, Serialize, JsonSchema, sqlx::FromRow)]
pub struct RunEvent {
    pub seq: i32,
    #[sqlx(rename = "type")]
    #[serde(rename = "type")]
    pub kind: String,
    /// The event's own fields, as the trace stored them: a JSON object.
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub payload: Value,
    pub latency_ms: Option<i32>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
    pub thought_summary: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// One run with its trace events (`GET /api/runs/{id}`, and `/api/admin/runs/{id}`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunDetail {
    #[serde(flatten)]
    pub run: RunSummary,
    pub events: Vec<RunEvent>,
}

/// A run's columns. A run still `running` says what it is waiting on: `waiting` (a write waits
/// for the person), `expired` (the person never answered, so nothing was written), `abandoned`
/// (no turn has worked on it for longer than a function lives: it died mid-turn), else `running`.
/// The nightly reaper closes the last two for good.
const RUN_COLUMNS: &str =
    "id, conversation_id, started_at, finished_at, channel::text AS channel, provider, model,
    CASE
        WHEN status <> 'running' THEN status::text
        WHEN EXISTS (SELECT 1 FROM suspended_turns s WHERE s.owner_id = trace_runs.owner_id
                     AND s.run_id = trace_runs.id AND s.status <> 'pending') THEN 'running'
        WHEN EXISTS (SELECT 1 FROM suspended_turns s WHERE s.owner_id = trace_runs.owner_id
                     AND s.run_id = trace_runs.id AND s.expires_at > now()) THEN 'waiting'
        WHEN EXISTS (SELECT 1 FROM suspended_turns s WHERE s.owner_id = trace_runs.owner_id
                     AND s.run_id = trace_runs.id) THEN 'expired'
        WHEN started_at < now() - interval '15 minutes' THEN 'abandoned'
        ELSE 'running'
    END AS status,
    iterations, input_tokens, output_tokens, cached_tokens,
    (cost_usd_est * 1000000)::bigint AS cost_micro_usd, latency_ms, question";

/// The owner's latest runs, newest first (at most `limit`, which is clamped to 1..=500).
pub async fn list_runs(owner: OwnerId, pool: &PgPool, limit: i64) -> Result<Vec<RunSummary>, AgentError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let rows = sqlx::query_as::<_, RunSummary>(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS} FROM trace_runs WHERE owner_id = $1 ORDER BY started_at DESC, id LIMIT $2"
    )))
    .bind(owner.as_uuid())
    .bind(limit.clamp(1, 500))
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(rows)
}

/// One run of the owner with its events; `None` when the owner has no such run.
pub async fn run_detail(owner: OwnerId, pool: &PgPool, run: RunId) -> Result<Option<RunDetail>, AgentError> {
    let run = run.as_uuid();
    let mut tx = begin_for_owner(owner, pool).await?;
    let summary = sqlx::query_as::<_, RunSummary>(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS} FROM trace_runs WHERE owner_id = $1 AND id = $2"
    )))
    .bind(owner.as_uuid())
    .bind(run)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(run_row) = summary else {
        return Ok(None);
    };
    let events = sqlx::query_as::<_, RunEvent>(
        "SELECT seq, type::text AS type, payload, latency_ms, input_tokens, output_tokens, cached_tokens,
                thought_summary, created_at
         FROM trace_events WHERE owner_id = $1 AND run_id = $2 ORDER BY seq",
    )
    .bind(owner.as_uuid())
    .bind(run)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(RunDetail { run: run_row, events }))
}
