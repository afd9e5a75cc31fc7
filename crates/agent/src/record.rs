//! What a turn writes besides its history: its run row (`trace_runs`) and its trace events
//! (`trace_events`). Each takes the connection of the transaction it belongs to, so a leg's events
//! and totals commit with the step that ends the leg.

use kakeibo_core::{ConversationId, RunId, RunStatus, TraceEvent, Turn, Usage};
use kakeibo_ledger::OwnerId;
use sqlx::PgConnection;

use crate::AgentError;

/// The run row of a new turn, open until its totals are written with a status.
pub(crate) struct NewRun<'a> {
    pub run_id: RunId,
    pub conversation: Option<ConversationId>,
    pub provider: &'a str,
    pub model: &'a str,
    pub channel: &'a str,
}

pub(crate) async fn insert_run(
    conn: &mut PgConnection,
    owner: OwnerId,
    run: &NewRun<'_>,
) -> Result<(), AgentError> {
    sqlx::query(
        "INSERT INTO trace_runs (id, owner_id, conversation_id, provider, model, channel)
         VALUES ($1, $2, $3, $4, $5, $6::channel)",
    )
    .bind(run.run_id.as_uuid())
    .bind(owner.as_uuid())
    .bind(run.conversation.map(ConversationId::as_uuid))
    .bind(run.provider)
    .bind(run.model)
    .bind(run.channel)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes a run's totals so far; with `finished`, its status, end and latency too.
pub(crate) async fn update_run(
    conn: &mut PgConnection,
    owner: OwnerId,
    turn: &Turn,
    finished: Option<RunStatus>,
) -> Result<(), AgentError> {
    let usage = turn.usage();
    let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    sqlx::query(
        "UPDATE trace_runs SET input_tokens = $3, output_tokens = $4, cached_tokens = $5, cost_usd_est = $6::numeric,
                iterations = $7, status = coalesce($8::run_status, status),
                finished_at = CASE WHEN $8 IS NULL THEN NULL ELSE now() END,
                latency_ms = CASE WHEN $8 IS NULL THEN latency_ms
                                  ELSE least(extract(epoch FROM now() - started_at) * 1000, 2147483647)::int END
         WHERE owner_id = $1 AND id = $2",
    )
    .bind(owner.as_uuid())
    .bind(turn.run_id().as_uuid())
    .bind(tokens(usage.input_tokens))
    .bind(tokens(usage.output_tokens))
    .bind(tokens(usage.cached_tokens))
    .bind(turn.cost().decimal())
    .bind(i32::try_from(turn.iteration()).unwrap_or(i32::MAX))
    .bind(finished.map(RunStatus::as_str))
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes `events` in one statement. An event already recorded (a confirm retried after its first
/// attempt committed) is left as it was.
pub(crate) async fn insert_events(
    conn: &mut PgConnection,
    owner: OwnerId,
    events: &[TraceEvent],
) -> Result<(), AgentError> {
    if events.is_empty() {
        return Ok(());
    }
    let small = |n: Option<u64>| n.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
    let tokens = |f: fn(&Usage) -> u64| -> Vec<Option<i64>> {
        events
            .iter()
            .map(|e| e.usage.as_ref().map(|u| i64::try_from(f(u)).unwrap_or(i64::MAX)))
            .collect()
    };
    let runs: Vec<_> = events.iter().map(|e| e.run_id.as_uuid()).collect();
    let seqs: Vec<i32> = events
        .iter()
        .map(|e| i32::try_from(e.seq).unwrap_or(i32::MAX))
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind().as_str()).collect();
    let payloads: Vec<_> = events.iter().map(|e| e.payload.stored()).collect();
    let latencies: Vec<Option<i32>> = events.iter().map(|e| small(e.latency_ms)).collect();
    let thoughts: Vec<Option<&str>> = events.iter().map(|e| e.thought_summary.as_deref()).collect();
    sqlx::query(
        "INSERT INTO trace_events (owner_id, run_id, seq, type, payload, latency_ms, input_tokens, output_tokens,
                                   cached_tokens, thought_summary)
         SELECT $1, e.* FROM UNNEST($2::uuid[], $3::int[], $4::text[]::trace_event_type[], $5::jsonb[], $6::int[],
                                    $7::bigint[], $8::bigint[], $9::bigint[], $10::text[]) AS e
         ON CONFLICT (run_id, seq) DO NOTHING",
    )
    .bind(owner.as_uuid())
    .bind(&runs)
    .bind(&seqs)
    .bind(&kinds)
    .bind(&payloads)
    .bind(&latencies)
    .bind(tokens(|u| u.input_tokens))
    .bind(tokens(|u| u.output_tokens))
    .bind(tokens(|u| u.cached_tokens))
    .bind(&thoughts)
    .execute(conn)
    .await?;
    Ok(())
}
