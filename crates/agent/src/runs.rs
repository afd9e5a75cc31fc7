//! The read side of traces, owner-scoped: the runs list, one run with its events, and the rows
//! behind a figure of a run's answer.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use kakeibo_core::{
    RunId,
    figures::{Checked, FigureCheck, How, Source},
    trace::{
        ConfirmTrace, ErrorTrace, EvictionTrace, ModelCallTrace, ToolCallTrace, TraceKind, TracePayload,
    },
};
use kakeibo_ledger::{OwnerId, begin_for_owner};
use kakeibo_tools::rows::{self, BackingRows};

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
    /// For a subagent's run: the run whose `task` call started it (whose row holds its usage
    /// and cost, so this one's totals are zero).
    pub parent_run_id: Option<Uuid>,
}

/// One trace event of a run, in `seq` order.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunEvent {
    pub seq: i32,
    /// The event's kind (`type`) and its fields (`payload`).
    #[serde(flatten)]
    pub recorded: Recorded,
    pub latency_ms: Option<i32>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
    pub thought_summary: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// What a trace event recorded, read back as the type the loop wrote it with: `type` names the
/// kind, `payload` holds its fields (long texts clipped as stored).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", content = "payload", rename_all = "snake_case")]
pub enum Recorded {
    ModelCall(ModelCallTrace),
    ToolCall(ToolCallTrace),
    Confirm(ConfirmTrace),
    SummaryEviction(EvictionTrace),
    Error(ErrorTrace),
    /// An event stored in a shape this version does not read (written by an older one): its
    /// kind and its payload as stored.
    Unread {
        kind: String,
        stored: Value,
    },
}

impl Recorded {
    /// The event of `kind` stored as `payload`.
    pub fn read(kind: String, payload: Value) -> Self {
        let typed = TraceKind::deserialize(serde_json::Value::String(kind.clone()))
            .ok()
            .and_then(|known| TracePayload::from_stored(known, &payload).ok());
        match typed {
            Some(TracePayload::ModelCall(call)) => Self::ModelCall(call),
            Some(TracePayload::ToolCall(call)) => Self::ToolCall(call),
            Some(TracePayload::Confirm(confirm)) => Self::Confirm(confirm),
            Some(TracePayload::SummaryEviction(eviction)) => Self::SummaryEviction(eviction),
            Some(TracePayload::Error(error)) => Self::Error(error),
            None => Self::Unread {
                kind,
                stored: payload,
            },
        }
    }
}

/// A `trace_events` row as selected.
#[derive(sqlx::FromRow)]
struct EventRow {
    seq: i32,
    kind: String,
    payload: Value,
    latency_ms: Option<i32>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cached_tokens: Option<i64>,
    thought_summary: Option<String>,
    created_at: DateTime<Utc>,
}

impl From<EventRow> for RunEvent {
    fn from(row: EventRow) -> Self {
        Self {
            seq: row.seq,
            recorded: Recorded::read(row.kind, row.payload),
            latency_ms: row.latency_ms,
            input_tokens: row.input_tokens,
            output_tokens: row.output_tokens,
            cached_tokens: row.cached_tokens,
            thought_summary: row.thought_summary,
            created_at: row.created_at,
        }
    }
}

/// One run with its trace events (`GET /api/runs/{id}`, and `/api/admin/runs/{id}`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunDetail {
    #[serde(flatten)]
    pub run: RunSummary,
    pub events: Vec<RunEvent>,
    /// The subagents the run's `task` calls ran, in the order they started.
    pub subagents: Vec<RunSummary>,
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
    (cost_usd_est * 1000000)::bigint AS cost_micro_usd, latency_ms, question, parent_run_id";

/// The owner's latest runs, newest first (at most `limit`, which is clamped to 1..=500): the
/// runs a person started, each subagent's run read from its parent's ([`RunDetail::subagents`]).
pub async fn list_runs(owner: OwnerId, pool: &PgPool, limit: i64) -> Result<Vec<RunSummary>, AgentError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let rows = sqlx::query_as::<_, RunSummary>(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS} FROM trace_runs WHERE owner_id = $1 AND parent_run_id IS NULL
         ORDER BY started_at DESC, id LIMIT $2"
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
    let events = sqlx::query_as::<_, EventRow>(
        "SELECT seq, type::text AS kind, payload, latency_ms, input_tokens, output_tokens, cached_tokens,
                thought_summary, created_at
         FROM trace_events WHERE owner_id = $1 AND run_id = $2 ORDER BY seq",
    )
    .bind(owner.as_uuid())
    .bind(run)
    .fetch_all(&mut *tx)
    .await?;
    let subagents = sqlx::query_as::<_, RunSummary>(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS} FROM trace_runs WHERE owner_id = $1 AND parent_run_id = $2
         ORDER BY started_at, id"
    )))
    .bind(owner.as_uuid())
    .bind(run)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    let events = events.into_iter().map(RunEvent::from).collect();
    Ok(Some(RunDetail {
        run: run_row,
        events,
        subagents,
    }))
}

/// The rows behind one figure of a run's answer: the figure as checked, and each tool figure it
/// was found in with its rows, fetched again now.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FigureRows {
    pub figure: Checked,
    /// The tool figures named by `figure.how`, in its order (one, or two for a sum, a
    /// difference, a ratio or a change); none for an ungrounded figure.
    pub sources: Vec<SourceRows>,
}

/// A tool figure and its rows.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SourceRows {
    #[serde(flatten)]
    pub source: Source,
    /// The rows `rows` names, fetched again; `None` for a figure no row makes (a budget, a
    /// converted amount).
    pub found: Option<BackingRows>,
}

/// Figure `n` (from 0) of the owner's run's answer, with the rows behind it; `None` when the
/// owner has no such run, or its answer no such figure — another owner's run answers exactly as
/// one that never existed.
pub async fn figure_rows(
    owner: OwnerId,
    pool: &PgPool,
    run: RunId,
    n: usize,
) -> Result<Option<FigureRows>, AgentError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    // The check rides on the model call that answered (the last one that has one).
    let stored: Option<Value> = sqlx::query_scalar(
        "SELECT payload -> $3 FROM trace_events
         WHERE owner_id = $1 AND run_id = $2 AND type = 'model_call' AND payload ? $3
         ORDER BY seq DESC LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(run.as_uuid())
    .bind(kakeibo_core::trace::keys::MODEL_FIGURES)
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    let Some(stored) = stored else {
        return Ok(None);
    };
    let checked: FigureCheck = serde_json::from_value(stored).map_err(AgentError::StoredMessage)?;
    let Some(figure) = checked.figures.get(n).cloned() else {
        return Ok(None);
    };
    let named: Vec<usize> = match figure.how {
        None => Vec::new(),
        Some(How::Equal { source }) => vec![source],
        Some(How::Sum { a, b } | How::Difference { a, b }) => vec![a, b],
        Some(How::Ratio { part, whole }) => vec![part, whole],
        Some(How::Change { from, to }) => vec![from, to],
    };
    let mut sources = Vec::with_capacity(named.len());
    for source in named.into_iter().filter_map(|i| checked.sources.get(i).cloned()) {
        let rows = match &source.figure.rows {
            Some(reference) => Some(rows::fetch(owner, pool, reference).await?),
            None => None,
        };
        sources.push(SourceRows { source, found: rows });
    }
    Ok(Some(FigureRows { figure, sources }))
}

#[cfg(test)]
mod tests {
    use kakeibo_core::trace::TracePayload;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_stored_event_reads_back_as_its_type_and_an_older_shape_as_stored() {
        let call = TracePayload::ToolCall(ToolCallTrace {
            name: "get_spend_report".into(),
            tier: None,
            args: json!({"month": "2025-06"}),
            result: "{}".into(),
            confirmed: None,
            error: false,
        });
        let read = Recorded::read("tool_call".into(), call.stored());
        assert!(
            matches!(&read, Recorded::ToolCall(c) if c.name == "get_spend_report"),
            "{read:?}"
        );
        // On the wire: the kind and the fields, as the page reads them.
        let wire = serde_json::to_value(&read).unwrap();
        assert_eq!(wire["type"], "tool_call");
        assert_eq!(wire["payload"]["name"], "get_spend_report");

        let older = json!({"tool": "get_spend_report", "ok": true});
        let read = Recorded::read("tool_call".into(), older.clone());
        assert!(
            matches!(&read, Recorded::Unread { kind, stored } if kind == "tool_call" && *stored == older),
            "{read:?}"
        );
        let read = Recorded::read("heartbeat".into(), json!({}));
        assert!(matches!(read, Recorded::Unread { .. }), "{read:?}");
    }
}
