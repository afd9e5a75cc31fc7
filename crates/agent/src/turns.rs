//! Turns in PostgreSQL: conversations, traces, and the exactly-once confirm protocol.
//!
//! A turn that waits for a person is stored whole in `suspended_turns`. A confirm then
//! 1. **claims** the row with one compare-and-set (`pending` → `claimed`, stamping `claimed_at`,
//!    which is the claim's fence); a row whose claim is older than the lease may be claimed
//!    again, which is how a confirm retried after a crash gets through;
//! 2. **applies** the approved writes and stores their results, moving the row to `applied`, in
//!    one transaction that first checks the fence — a write and the record that it happened
//!    commit together, so no write runs twice;
//! 3. **continues** the turn from the stored results (an `applied` row never runs a write again);
//! 4. **finishes** by replacing the conversation's history and deleting the row in one
//!    transaction, again only under its fence.

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use kakeibo_core::{
    ConfirmPolicy, ConfirmTrace, ConversationId, Deps, Message, PendingWrite, PermissionRules, Phase,
    Provider, RunId, RunStatus, SuspendedTurnId, Tier, ToolCallTrace, ToolRegistry, ToolResult, TraceEvent,
    TracePayload, Tracer, Turn, TurnEvent, WriteDecision, context,
    turn::{
        DECLINED, EXPIRED, StateError, declined_result, drive, expired_result, result_summary, tool_data,
    },
};
use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::{Acquire, PgConnection, PgPool};
use uuid::Uuid;

use kakeibo_ledger::{OwnerId, begin_for_owner};
use kakeibo_tools::{Scope, memory, run_write};

use crate::AgentError;

/// The largest stored turn.
pub const MAX_STATE_BYTES: usize = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// Another request holds this confirmation (HTTP 409).
    #[error("this confirmation is being handled by another request")]
    Claimed,
    /// No such confirmation for this owner: finished, or never there (HTTP 410).
    #[error("there is no such confirmation: it was already completed, or it never existed")]
    Gone,
    #[error("the turn is too large to keep ({bytes} bytes; the limit is {MAX_STATE_BYTES})")]
    TooLarge { bytes: usize },
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Store(#[from] AgentError),
}

impl From<sqlx::Error> for ConfirmError {
    fn from(e: sqlx::Error) -> Self {
        Self::Store(AgentError::from(e))
    }
}

impl From<kakeibo_tools::ToolsError> for ConfirmError {
    fn from(e: kakeibo_tools::ToolsError) -> Self {
        Self::Store(AgentError::Tools(e))
    }
}

impl From<kakeibo_ledger::LedgerError> for ConfirmError {
    fn from(e: kakeibo_ledger::LedgerError) -> Self {
        Self::Store(AgentError::Ledger(e))
    }
}

/// Where conversations, runs and suspended turns live. Use the `app_user` pool: every query is
/// scoped to its owner by a filter and by row-level security.
#[derive(Debug, Clone)]
pub struct TurnStore {
    pool: PgPool,
    lease: Duration,
}

/// (conversation, fence, state, stored results, expired, arguments hash) of a freshly claimed row.
type ClaimedRow = (Uuid, DateTime<Utc>, Value, Option<Value>, bool, String);

/// A claimed suspended turn.
#[derive(Debug, Clone)]
pub struct Claim {
    pub id: SuspendedTurnId,
    pub conversation_id: ConversationId,
    /// The claim's `claimed_at`: whoever claims later gets another, and this one stops working.
    pub fence: DateTime<Utc>,
    pub turn: Turn,
    /// Results stored by an earlier apply: the writes already ran.
    pub applied: Option<Vec<ToolResult>>,
    pub expired: bool,
}

impl TurnStore {
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            lease: Duration::from_secs(30),
        }
    }

    /// How long a claim holds before a retried confirm may take the turn over.
    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub async fn new_conversation(
        &self,
        owner: OwnerId,
        title: Option<&str>,
    ) -> Result<ConversationId, AgentError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let id: Uuid =
            sqlx::query_scalar("INSERT INTO conversations (owner_id, title) VALUES ($1, $2) RETURNING id")
                .bind(owner.as_uuid())
                .bind(title)
                .fetch_one(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(ConversationId::from_uuid(id))
    }

    /// The stored messages of a conversation, in order.
    pub async fn history(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
    ) -> Result<Vec<Message>, AgentError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let rows: Vec<Value> = sqlx::query_scalar(
            "SELECT message FROM conversation_messages WHERE owner_id = $1 AND conversation_id = $2 ORDER BY seq",
        )
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        rows.into_iter()
            .map(|v| serde_json::from_value(v).map_err(AgentError::StoredMessage))
            .collect()
    }

    pub async fn start_run(
        &self,
        owner: OwnerId,
        run_id: RunId,
        conversation: Option<ConversationId>,
        provider: &str,
        model: &str,
        channel: &str,
    ) -> Result<(), AgentError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        sqlx::query(
            "INSERT INTO trace_runs (id, owner_id, conversation_id, provider, model, channel)
             VALUES ($1, $2, $3, $4, $5, $6::channel)",
        )
        .bind(run_id.as_uuid())
        .bind(owner.as_uuid())
        .bind(conversation.map(ConversationId::as_uuid))
        .bind(provider)
        .bind(model)
        .bind(channel)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Writes a run's totals so far (after each leg of a turn; a resumed turn carries them on).
    pub async fn update_run(
        &self,
        owner: OwnerId,
        turn: &Turn,
        finished: Option<RunStatus>,
    ) -> Result<(), AgentError> {
        let run_id = turn.run_id();
        let status = finished.map(RunStatus::as_str);
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        sqlx::query(
            "UPDATE trace_runs SET input_tokens = $3, output_tokens = $4, cached_tokens = $5, cost_usd_est = $6::numeric,
                    iterations = $7, status = coalesce($8::run_status, status),
                    finished_at = CASE WHEN $8 IS NULL THEN NULL ELSE now() END,
                    latency_ms = CASE WHEN $8 IS NULL THEN latency_ms
                                      ELSE least(extract(epoch FROM now() - started_at) * 1000, 2147483647)::int END
             WHERE owner_id = $1 AND id = $2",
        )
        .bind(owner.as_uuid())
        .bind(run_id.as_uuid())
        .bind(i64::try_from(turn.usage().input_tokens).unwrap_or(i64::MAX))
        .bind(i64::try_from(turn.usage().output_tokens).unwrap_or(i64::MAX))
        .bind(i64::try_from(turn.usage().cached_tokens).unwrap_or(i64::MAX))
        .bind(turn.cost().decimal())
        .bind(i32::try_from(turn.iteration()).unwrap_or(i32::MAX))
        .bind(status)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Marks the owner's unfinished runs of `conversation` as aborted (a turn stopped by the
    /// person mid-flight: its run row would otherwise stay open); runs waiting for a confirmation
    /// are left alone. Returns how many.
    pub async fn abort_open_runs(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
    ) -> Result<u64, AgentError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let done = sqlx::query(
            "UPDATE trace_runs SET status = 'aborted', finished_at = now(),
                    latency_ms = least(extract(epoch FROM now() - started_at) * 1000, 2147483647)::int
             WHERE owner_id = $1 AND conversation_id = $2 AND finished_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM suspended_turns s WHERE s.owner_id = $1 AND s.run_id = trace_runs.id)",
        )
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }

    /// Replaces a conversation's messages with `history` (a turn that finished without waiting).
    pub async fn save_history(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
        history: &[Message],
    ) -> Result<(), AgentError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        replace_history(owner, &mut tx, conversation, history).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Stores a turn that waits for a person; returns the id a confirm names.
    pub async fn suspend(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
        turn: &Turn,
    ) -> Result<SuspendedTurnId, ConfirmError> {
        let (state, args_hash, expires_at) = stored_form(turn)?;
        let run_id = turn.run_id();
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let id: Uuid = sqlx::query_scalar(
            "INSERT INTO suspended_turns (owner_id, conversation_id, run_id, version, state, args_hash, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .bind(run_id.as_uuid())
        .bind(i32::try_from(turn.version()).unwrap_or(i32::MAX))
        .bind(state)
        .bind(args_hash)
        .bind(expires_at)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(SuspendedTurnId::from_uuid(id))
    }

    /// Step 1: claims a suspended turn of `owner` (compare-and-set). A turn of another owner is
    /// as absent as one that never existed.
    pub async fn claim(&self, owner: OwnerId, id: SuspendedTurnId) -> Result<Claim, ConfirmError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let lease = self.lease.as_secs_f64();
        let row: Option<ClaimedRow> = sqlx::query_as(
            "UPDATE suspended_turns
             SET status = CASE WHEN status = 'pending' THEN 'claimed'::suspended_status ELSE status END,
                 claimed_at = clock_timestamp()
             WHERE owner_id = $1 AND id = $2
               AND (status = 'pending' OR claimed_at < clock_timestamp() - make_interval(secs => $3))
             RETURNING conversation_id, claimed_at, state, results, expires_at <= now(), args_hash",
        )
        .bind(owner.as_uuid())
        .bind(id.as_uuid())
        .bind(lease)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((conversation_id, fence, state, results, expired, args_hash)) = row else {
            let exists: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM suspended_turns WHERE owner_id = $1 AND id = $2)",
            )
            .bind(owner.as_uuid())
            .bind(id.as_uuid())
            .fetch_one(&mut *tx)
            .await?;
            return Err(if exists {
                ConfirmError::Claimed
            } else {
                ConfirmError::Gone
            });
        };
        tx.commit().await?;
        let applied = results
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| StateError::Unreadable(format!("stored results: {e}")))?;
        let turn = Turn::from_json(state)?;
        // The arguments a confirm applies are the stored ones, unchanged since the turn waited.
        let Phase::AwaitConfirm { pending, .. } = turn.phase() else {
            return Err(StateError::NotWaiting.into());
        };
        if hash_of_writes(pending) != args_hash {
            return Err(
                StateError::Unreadable("the stored writes do not match their recorded hash".into()).into(),
            );
        }
        Ok(Claim {
            id,
            conversation_id: ConversationId::from_uuid(conversation_id),
            fence,
            turn,
            applied,
            expired,
        })
    }

    /// Step 2: runs the approved writes and stores their results, in one transaction, under the
    /// claim's fence. `decisions` maps pending call ids to allowed; a missing decision declines.
    /// An expired turn runs nothing: every write is reported as expired. Returns the results and
    /// the new fence.
    pub async fn apply(
        &self,
        claim: &Claim,
        decisions: &[(String, bool)],
        scope: &Scope,
        tools: &ToolRegistry,
    ) -> Result<(Vec<ToolResult>, DateTime<Utc>), ConfirmError> {
        let Phase::AwaitConfirm { pending, .. } = claim.turn.phase() else {
            return Err(StateError::NotWaiting.into());
        };
        let owner = scope.owner;
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let held: Option<bool> = sqlx::query_scalar(
            "SELECT status = 'claimed' AND claimed_at = $3 FROM suspended_turns WHERE owner_id = $1 AND id = $2 FOR UPDATE",
        )
        .bind(owner.as_uuid())
        .bind(claim.id.as_uuid())
        .bind(claim.fence)
        .fetch_optional(&mut *tx)
        .await?;
        match held {
            None => return Err(ConfirmError::Gone),
            Some(false) => return Err(ConfirmError::Claimed),
            Some(true) => {}
        }
        let mut results = Vec::with_capacity(pending.len());
        for write in pending {
            let allowed = decisions.iter().any(|(id, allowed)| *id == write.id && *allowed);
            results.push(if claim.expired {
                expired_result(write)
            } else if allowed {
                apply_one(scope, tools, &mut tx, write).await?
            } else {
                declined_result(write)
            });
        }
        let stored = serde_json::to_value(&results).map_err(|e| StateError::Unreadable(e.to_string()))?;
        let fence: DateTime<Utc> = sqlx::query_scalar(
            "UPDATE suspended_turns SET status = 'applied', results = $3, claimed_at = clock_timestamp()
             WHERE owner_id = $1 AND id = $2 RETURNING claimed_at",
        )
        .bind(owner.as_uuid())
        .bind(claim.id.as_uuid())
        .bind(stored)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((results, fence))
    }

    /// The turn waits again (the continuation asked for another write): the row gets the new
    /// state and is pending once more.
    pub async fn resuspend(
        &self,
        owner: OwnerId,
        id: SuspendedTurnId,
        fence: DateTime<Utc>,
        turn: &Turn,
    ) -> Result<(), ConfirmError> {
        let (state, args_hash, expires_at) = stored_form(turn)?;
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let updated = sqlx::query(
            "UPDATE suspended_turns SET state = $4, args_hash = $5, expires_at = $6, status = 'pending',
                    claimed_at = NULL, results = NULL
             WHERE owner_id = $1 AND id = $2 AND claimed_at = $3",
        )
        .bind(owner.as_uuid())
        .bind(id.as_uuid())
        .bind(fence)
        .bind(state)
        .bind(args_hash)
        .bind(expires_at)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if updated == 0 {
            return Err(ConfirmError::Claimed);
        }
        tx.commit().await?;
        Ok(())
    }

    /// Step 4: the conversation gets the finished turn's history and the row goes, together,
    /// under the fence.
    pub async fn finish(
        &self,
        owner: OwnerId,
        id: SuspendedTurnId,
        fence: DateTime<Utc>,
        conversation: ConversationId,
        history: &[Message],
    ) -> Result<(), ConfirmError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let deleted =
            sqlx::query("DELETE FROM suspended_turns WHERE owner_id = $1 AND id = $2 AND claimed_at = $3")
                .bind(owner.as_uuid())
                .bind(id.as_uuid())
                .bind(fence)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if deleted == 0 {
            return Err(ConfirmError::Claimed);
        }
        replace_history(owner, &mut tx, conversation, history).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// What became of a pending write, read from its stored result (so a confirm retried after a
/// crash reports what the first attempt did, whatever the retry's decisions say).
fn decision_of(result: &ToolResult) -> WriteDecision {
    if result.content == EXPIRED {
        WriteDecision::Expired
    } else if result.content == DECLINED {
        WriteDecision::Declined
    } else {
        WriteDecision::Allowed
    }
}

/// Runs one approved write inside the apply transaction, in a savepoint of its own so a failing
/// write becomes an error result without spoiling the others.
async fn apply_one(
    scope: &Scope,
    tools: &ToolRegistry,
    tx: &mut PgConnection,
    write: &PendingWrite,
) -> Result<ToolResult, ConfirmError> {
    let result = |content: String, is_error: bool| ToolResult {
        tool_use_id: write.id.clone(),
        name: write.tool.clone(),
        content,
        is_error,
    };
    let problems = tools
        .get(&write.tool)
        .map_or_else(|| vec!["no such tool".into()], |t| t.validate(&write.args));
    if !problems.is_empty() {
        return Ok(result(
            format!("Invalid arguments for {}: {}.", write.tool, problems.join("; ")),
            true,
        ));
    }
    let mut savepoint = tx.begin().await?;
    match run_write(scope, &mut savepoint, &write.tool, write.args.clone()).await {
        Ok(value) => {
            savepoint.commit().await?;
            Ok(result(tool_data(&value), false))
        }
        Err(e) => {
            savepoint.rollback().await?;
            Ok(result(format!("The tool failed: {e}"), true))
        }
    }
}

async fn replace_history(
    owner: OwnerId,
    conn: &mut PgConnection,
    conversation: ConversationId,
    history: &[Message],
) -> Result<(), AgentError> {
    sqlx::query("DELETE FROM conversation_messages WHERE owner_id = $1 AND conversation_id = $2")
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .execute(&mut *conn)
        .await?;
    let messages: Vec<Value> = history
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(AgentError::StoringMessage)?;
    let seqs: Vec<i32> = (0..i32::try_from(messages.len()).unwrap_or(i32::MAX)).collect();
    sqlx::query(
        "INSERT INTO conversation_messages (owner_id, conversation_id, seq, message)
         SELECT $1, $2, seq, message FROM UNNEST($3::int[], $4::jsonb[]) AS m(seq, message)",
    )
    .bind(owner.as_uuid())
    .bind(conversation.as_uuid())
    .bind(&seqs)
    .bind(&messages)
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE conversations SET updated_at = now() WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .execute(conn)
        .await?;
    Ok(())
}

/// (state, hash of the pending writes' arguments, expiry) of a waiting turn, or why it cannot
/// be stored.
fn stored_form(turn: &Turn) -> Result<(Value, String, DateTime<Utc>), ConfirmError> {
    let Phase::AwaitConfirm {
        pending, expires_at, ..
    } = turn.phase()
    else {
        return Err(StateError::NotWaiting.into());
    };
    let state = turn.to_json()?;
    let bytes = state.to_string().len();
    if bytes > MAX_STATE_BYTES {
        return Err(ConfirmError::TooLarge { bytes });
    }
    let expires_at = DateTime::from_timestamp(*expires_at, 0).unwrap_or_else(Utc::now);
    Ok((state, hash_of_writes(pending), expires_at))
}

/// The hash of the writes a turn waits on: their ids and arguments, keys sorted.
fn hash_of_writes(pending: &[PendingWrite]) -> String {
    let mut hasher = Sha256::new();
    for write in pending {
        hasher.update(write.id.as_bytes());
        hasher.update(kakeibo_core::schema::sorted(&write.args).to_string().as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// Trace events into `trace_events`, for one owner. Tracing never fails a turn: a failed insert
/// is reported on stderr and the turn goes on. A confirm retried after a crash numbers its
/// events as the crashed attempt did; the events already recorded stay.
#[derive(Debug, Clone)]
pub struct PgTracer {
    pub pool: PgPool,
    pub owner: OwnerId,
}

impl Tracer for PgTracer {
    fn record(&self, event: TraceEvent) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Err(e) = self.insert(&event).await {
                tracing::warn!(seq = event.seq, run_id = %event.run_id, error = %e, "trace event not recorded");
            }
        })
    }
}

impl PgTracer {
    async fn insert(&self, event: &TraceEvent) -> Result<(), AgentError> {
        let run_id = event.run_id;
        let tokens = |f: fn(&kakeibo_core::Usage) -> u64| {
            event
                .usage
                .as_ref()
                .map(|u| i64::try_from(f(u)).unwrap_or(i64::MAX))
        };
        let mut tx = begin_for_owner(self.owner, &self.pool).await?;
        sqlx::query(
            "INSERT INTO trace_events (owner_id, run_id, seq, type, payload, latency_ms, input_tokens, output_tokens,
                                       cached_tokens, thought_summary)
             VALUES ($1, $2, $3, $4::trace_event_type, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (run_id, seq) DO NOTHING",
        )
        .bind(self.owner.as_uuid())
        .bind(run_id.as_uuid())
        .bind(i32::try_from(event.seq).unwrap_or(i32::MAX))
        .bind(event.kind().as_str())
        .bind(event.payload.stored())
        .bind(event.latency_ms.map(|l| i32::try_from(l).unwrap_or(i32::MAX)))
        .bind(tokens(|u| u.input_tokens))
        .bind(tokens(|u| u.output_tokens))
        .bind(tokens(|u| u.cached_tokens))
        .bind(event.thought_summary.as_deref())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

async fn record(tracer: &PgTracer, turn: &mut Turn, payload: TracePayload) {
    let seq = turn.take_seq();
    let event = TraceEvent {
        run_id: turn.run_id(),
        seq,
        payload,
        latency_ms: None,
        usage: None,
        thought_summary: None,
    };
    tracer.record(event).await;
}

/// Everything a turn of one owner runs with, end to end: the store, the tools, the model.
pub struct Agent<'a> {
    pub store: &'a TurnStore,
    pub scope: Scope,
    pub tools: ToolRegistry,
    pub provider: &'a dyn Provider,
    pub system: &'a str,
    pub rules: &'a PermissionRules,
    pub channel: &'a str,
    /// The model that summarises evicted history (the turn's own model when `None`).
    pub summarizer: Option<&'a dyn Provider>,
}

impl<'a> Agent<'a> {
    /// An agent with the owner's finance tools; the turn's own model summarises.
    pub fn new(
        store: &'a TurnStore,
        scope: Scope,
        provider: &'a dyn Provider,
        system: &'a str,
        rules: &'a PermissionRules,
        channel: &'a str,
    ) -> Self {
        Self {
            store,
            tools: kakeibo_tools::registry(&scope),
            scope,
            provider,
            system,
            rules,
            channel,
            summarizer: None,
        }
    }
}

impl std::fmt::Debug for Agent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("owner", &self.scope.owner)
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

/// How a leg of a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Finished {
        run_id: RunId,
        status: RunStatus,
        answer: String,
        turn: Box<Turn>,
    },
    /// Waiting for a person: confirm `suspended_id` with decisions on `pending`.
    Suspended {
        run_id: RunId,
        suspended_id: SuspendedTurnId,
        pending: Vec<PendingWrite>,
    },
}

impl Agent<'_> {
    fn deps<'b>(
        &'b self,
        policy: &'b ConfirmPolicy,
        tracer: &'b PgTracer,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
    ) -> Deps<'b> {
        Deps {
            provider: self.provider,
            tools: &self.tools,
            system: self.system,
            policy,
            rules: self.rules,
            tracer,
            on_event,
        }
    }

    /// Runs a new turn of `conversation` for the person's `text`.
    ///
    /// The future is boxed so it is `Send` for callers that spawn it (a function's stream).
    pub fn chat<'b>(
        &'b self,
        conversation: ConversationId,
        text: &'b str,
        policy: &'b ConfirmPolicy,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
    ) -> BoxFuture<'b, Result<Outcome, ConfirmError>> {
        Box::pin(self.chat_inner(conversation, text, policy, on_event))
    }

    #[tracing::instrument(name = "turn", skip_all, fields(conversation_id = %conversation, run_id = tracing::field::Empty))]
    async fn chat_inner(
        &self,
        conversation: ConversationId,
        text: &str,
        policy: &ConfirmPolicy,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Outcome, ConfirmError> {
        let owner = self.scope.owner;
        let history = self.store.history(owner, conversation).await?;
        let run_id = RunId::random();
        tracing::Span::current().record("run_id", tracing::field::display(run_id));
        tracing::info!(
            provider = self.provider.name(),
            model = self.provider.model(),
            "turn started"
        );
        self.store
            .start_run(
                owner,
                run_id,
                Some(conversation),
                self.provider.name(),
                self.provider.model(),
                self.channel,
            )
            .await?;
        let tracer = PgTracer {
            pool: self.store.pool.clone(),
            owner,
        };
        let mut tx = begin_for_owner(owner, &self.store.pool).await?;
        let memories = memory::recall(owner, &mut tx, text).await?;
        tx.commit().await?;
        let mut history = history;
        history.push(memory::with_memories(Message::user(text), &memories));
        let declarations: Vec<kakeibo_core::Declaration> =
            self.tools.declarations().into_iter().cloned().collect();
        let mut seq = 0;
        let (mut history, _) = context::fit(
            history,
            self.system,
            &declarations,
            self.provider,
            self.summarizer.unwrap_or(self.provider),
            context::CONTEXT_BUDGET_TOKENS,
            Some((&tracer, run_id, &mut seq)),
        )
        .await;
        let user = history.pop().unwrap_or_else(|| Message::user(text));
        let mut turn = Turn::start(run_id, history, user);
        turn.continue_seq_from(seq);
        let turn = drive(turn, &self.deps(policy, &tracer, on_event)).await;
        if let Phase::AwaitConfirm { pending, .. } = turn.phase() {
            let pending = pending.clone();
            let suspended_id = self.store.suspend(owner, conversation, &turn).await?;
            self.store.update_run(owner, &turn, None).await?;
            tracing::info!(suspended_turn_id = %suspended_id, "turn suspended until a person decides");
            return Ok(Outcome::Suspended {
                run_id: turn.run_id(),
                suspended_id,
                pending,
            });
        }
        self.store
            .save_history(owner, conversation, turn.history())
            .await?;
        self.finish(turn).await
    }

    /// Goes on with a suspended turn after the person decided: claim, apply, continue, finish.
    /// Retrying after any failure is safe; no write runs twice.
    pub async fn confirm(
        &self,
        suspended_id: SuspendedTurnId,
        decisions: &[(String, bool)],
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Outcome, ConfirmError> {
        let claim = self.store.claim(self.scope.owner, suspended_id).await?;
        self.confirm_claimed(claim, decisions, on_event).await
    }

    /// [`Agent::confirm`] after the claim, for callers that answer a lost claim before they start
    /// streaming (the HTTP confirm: `409`/`410` are statuses, not stream events).
    #[tracing::instrument(
        name = "confirm",
        skip_all,
        fields(conversation_id = %claim.conversation_id, suspended_turn_id = %claim.id)
    )]
    pub async fn confirm_claimed(
        &self,
        claim: Claim,
        decisions: &[(String, bool)],
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Outcome, ConfirmError> {
        let owner = self.scope.owner;
        let suspended_id = claim.id;
        let (results, fence) = match &claim.applied {
            Some(results) => (results.clone(), claim.fence),
            None => {
                self.store
                    .apply(&claim, decisions, &self.scope, &self.tools)
                    .await?
            }
        };
        let tracer = PgTracer {
            pool: self.store.pool.clone(),
            owner,
        };
        let mut turn = claim.turn.clone();
        if let Phase::AwaitConfirm { pending, .. } = claim.turn.phase() {
            for (write, result) in pending
                .iter()
                .filter_map(|w| results.iter().find(|r| r.tool_use_id == w.id).map(|r| (w, r)))
            {
                let allowed =
                    !claim.expired && decisions.iter().any(|(id, allowed)| *id == write.id && *allowed);
                let confirm = ConfirmTrace {
                    expired: Some(claim.expired),
                    ..ConfirmTrace::of(write, Some(allowed))
                };
                record(&tracer, &mut turn, TracePayload::Confirm(confirm)).await;
                if allowed {
                    let call = ToolCallTrace {
                        name: write.tool.clone(),
                        tier: Some(Tier::Write),
                        args: write.args.clone(),
                        result: result.content.clone(),
                        confirmed: Some(true),
                        error: result.is_error,
                    };
                    record(&tracer, &mut turn, TracePayload::ToolCall(call)).await;
                }
            }
            // The stream says what became of each write of the batch, in call order, before
            // anything the continued turn says.
            for (write, result) in pending
                .iter()
                .filter_map(|w| results.iter().find(|r| r.tool_use_id == w.id).map(|r| (w, r)))
            {
                on_event(TurnEvent::ToolResult {
                    id: write.id.clone(),
                    name: write.tool.clone(),
                    is_error: result.is_error,
                    summary: result_summary(&result.content),
                    decision: Some(decision_of(result)),
                });
            }
        }
        let turn = turn.resume(results)?;
        let turn = drive(turn, &self.deps(&ConfirmPolicy::Suspend, &tracer, on_event)).await;
        if let Phase::AwaitConfirm { pending, .. } = turn.phase() {
            let pending = pending.clone();
            self.store.resuspend(owner, suspended_id, fence, &turn).await?;
            self.store.update_run(owner, &turn, None).await?;
            return Ok(Outcome::Suspended {
                run_id: turn.run_id(),
                suspended_id,
                pending,
            });
        }
        self.store
            .finish(owner, suspended_id, fence, claim.conversation_id, turn.history())
            .await?;
        self.finish(turn).await
    }

    async fn finish(&self, turn: Turn) -> Result<Outcome, ConfirmError> {
        let (status, answer) = turn
            .finished()
            .map_or((RunStatus::Error, String::new()), |(s, a)| (s, a.to_owned()));
        self.store
            .update_run(self.scope.owner, &turn, Some(status))
            .await?;
        tracing::info!(run_id = %turn.run_id(), status = ?status, "turn finished");
        Ok(Outcome::Finished {
            run_id: turn.run_id(),
            status,
            answer,
            turn: Box::new(turn),
        })
    }
}
