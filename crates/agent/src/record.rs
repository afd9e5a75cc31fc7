//! What a turn writes besides its history: its run row (`trace_runs`) and its trace events
//! (`trace_events`), in the forms the phase functions of migration `0010_turn_phases.sql` take, so
//! a leg's events and totals commit with the step that ends the leg.

use kakeibo_core::{RunId, RunStatus, TraceEvent, Turn, Usage};
use kakeibo_ledger::OwnerId;
use serde_json::{Value, json};
use sqlx::PgConnection;

use crate::AgentError;

/// Which way of driving kakeibo a run came through: the value of `trace_runs.channel` (the SQL
/// enum `channel`), which the operator's pages group runs by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Channel {
    /// The website's chat (the `chat` and `confirm` functions).
    Web,
    /// The command line (`kakeibo chat`, `kakeibo -p`).
    Cli,
    /// An evaluation run.
    Eval,
    /// A program of its own, through the library.
    #[default]
    Library,
    /// An editor, through the ACP server (`kakeibo --acp`).
    Acp,
}

impl Channel {
    /// The stored name (the SQL enum's label).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Web => "web",
            Self::Cli => "cli",
            Self::Eval => "eval",
            Self::Library => "library",
            Self::Acp => "acp",
        }
    }
}

/// The run row of a new turn, open until its totals are written with a status.
pub(crate) struct NewRun<'a> {
    pub run_id: RunId,
    pub provider: &'a str,
    pub model: &'a str,
    pub channel: Channel,
}

/// A run's totals so far, as the phase functions take them.
pub(crate) struct Totals {
    pub input: i64,
    pub output: i64,
    pub cached: i64,
    /// US dollars, six decimals (`numeric`).
    pub cost: String,
    pub iterations: i32,
}

impl Totals {
    pub fn of(turn: &Turn) -> Self {
        let usage = turn.usage();
        let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        Self {
            input: tokens(usage.input_tokens),
            output: tokens(usage.output_tokens),
            cached: tokens(usage.cached_tokens),
            cost: turn.cost().decimal(),
            iterations: i32::try_from(turn.iteration()).unwrap_or(i32::MAX),
        }
    }

    /// Binds the totals as five arguments in a row: input, output and cached tokens, cost,
    /// iterations.
    pub fn bind(self, query: PgQuery<'_>) -> PgQuery<'_> {
        query
            .bind(self.input)
            .bind(self.output)
            .bind(self.cached)
            .bind(self.cost)
            .bind(self.iterations)
    }
}

/// Stores the runs of the subagents `turn` ran (`app_insert_subruns`), linked to its run, before
/// the events that name them; nothing when it ran none. A run stored before is kept.
pub(crate) async fn insert_subruns<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    owner: OwnerId,
    turn: &Turn,
) -> Result<(), AgentError> {
    if turn.subruns().is_empty() {
        return Ok(());
    }
    let runs = serde_json::to_value(turn.subruns()).map_err(AgentError::StoringMessage)?;
    sqlx::query("SELECT app_insert_subruns($1, $2, $3)")
        .bind(owner.as_uuid())
        .bind(turn.run_id().as_uuid())
        .bind(runs)
        .execute(executor)
        .await?;
    Ok(())
}

pub(crate) type PgQuery<'q> = sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>;

/// Writes a run's totals so far (`app_update_run`); with `finished`, its status, end and latency
/// too.
pub(crate) async fn update_run(
    conn: &mut PgConnection,
    owner: OwnerId,
    turn: &Turn,
    finished: Option<RunStatus>,
) -> Result<(), AgentError> {
    let query = sqlx::query("SELECT app_update_run($1, $2, $3, $4, $5, $6::numeric, $7, $8::run_status)")
        .bind(owner.as_uuid())
        .bind(turn.run_id().as_uuid());
    Totals::of(turn)
        .bind(query)
        .bind(finished.map(RunStatus::as_str))
        .execute(conn)
        .await?;
    Ok(())
}

/// A leg's trace events as the JSON rows `app_insert_events` stores.
pub(crate) fn event_rows(events: &[TraceEvent]) -> Value {
    let small = |n: Option<u64>| n.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
    let tokens =
        |usage: Option<&Usage>, f: fn(&Usage) -> u64| usage.map(|u| i64::try_from(f(u)).unwrap_or(i64::MAX));
    Value::Array(
        events
            .iter()
            .map(|e| {
                json!({
                    "run_id": e.run_id.as_uuid(),
                    "seq": i32::try_from(e.seq).unwrap_or(i32::MAX),
                    "type": e.kind().as_str(),
                    "payload": e.payload.stored(),
                    "latency_ms": small(e.latency_ms),
                    "input_tokens": tokens(e.usage.as_ref(), |u| u.input_tokens),
                    "output_tokens": tokens(e.usage.as_ref(), |u| u.output_tokens),
                    "cached_tokens": tokens(e.usage.as_ref(), |u| u.cached_tokens),
                    "thought_summary": e.thought_summary,
                })
            })
            .collect(),
    )
}

/// Stores a leg's trace events (`app_insert_events`); an event already stored is kept.
pub(crate) async fn insert_events(
    conn: &mut PgConnection,
    owner: OwnerId,
    events: &[TraceEvent],
) -> Result<(), AgentError> {
    if events.is_empty() {
        return Ok(());
    }
    sqlx::query("SELECT app_insert_events($1, $2)")
        .bind(owner.as_uuid())
        .bind(event_rows(events))
        .execute(conn)
        .await?;
    Ok(())
}
