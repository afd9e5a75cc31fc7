//! The turn store: conversations' turns opened, suspended, claimed, applied and finished in
//! PostgreSQL, each step one round trip under its fence (see the module above for the protocol).

use std::time::Duration;

use chrono::{DateTime, Utc};
use kakeibo_core::{
    ConversationId, Message, PendingWrite, Phase, RunStatus, SuspendedTurnId, ToolRegistry, ToolResult,
    TraceEvent, Turn, WriteDecision,
    turn::{DECLINED, EXPIRED, StateError, declined_result, expired_result, tool_data},
};
use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::{Acquire, PgConnection, PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use kakeibo_ledger::{OwnerId, begin_for_owner};
use kakeibo_tools::{Scope, memory, run_write};

use super::{ConfirmError, Leg, Thread, status_of};
use crate::{
    AgentError, history,
    record::{self, NewRun, Totals},
};

/// The largest stored turn.
pub const MAX_STATE_BYTES: usize = 256 * 1024;

/// Where conversations, runs and suspended turns live. Use the `app_user` pool: every query is
/// scoped to its owner by a filter and by row-level security.
#[derive(Debug, Clone)]
pub struct TurnStore {
    pool: PgPool,
    lease: Duration,
    /// This process, as the confirms it applies record it.
    claimer: String,
}

/// A suspended turn as a claim reads it, under its row lock.
#[derive(sqlx::FromRow)]
pub(super) struct LockedRow {
    conversation_id: Uuid,
    state: Value,
    /// The writes' results, once they ran.
    results: Option<Value>,
    expired: bool,
    /// The digest of the writes waiting, as stored with the turn.
    args_hash: String,
    history_base: Option<i32>,
    /// Pending, or applied by a holder silent past the lease.
    claimable: bool,
    /// Seconds left of the holder's lease.
    lease_left: f64,
}

/// A claimed suspended turn.
#[derive(Debug)]
pub struct Claim {
    pub id: SuspendedTurnId,
    pub conversation_id: ConversationId,
    pub turn: Turn,
    pub expired: bool,
    /// How many leading messages of the turn's history the conversation already holds (`None`
    /// for a turn stored before histories were appended: its finish rewrites the history).
    pub history_base: Option<usize>,
    hold: Hold,
}

impl Claim {
    /// The writes the claimed turn waits on (none for a turn not waiting).
    pub fn pending(&self) -> &[PendingWrite] {
        match self.turn.phase() {
            Phase::AwaitConfirm { pending, .. } => pending,
            _ => &[],
        }
    }

    /// Whether `decisions` name each of the turn's pending writes exactly once, and nothing else:
    /// a decision twice (contradicting itself, perhaps), one missing, or one for no such write is
    /// refused with a sentence that says which.
    pub fn check_decisions(&self, decisions: &[(String, bool)]) -> Result<(), ConfirmError> {
        let pending = self.pending();
        let mut seen = std::collections::HashSet::new();
        for (id, _) in decisions {
            if !seen.insert(id.as_str()) {
                return Err(ConfirmError::Decisions(format!(
                    "the write {id:?} is decided more than once; decide each write once"
                )));
            }
            if !pending.iter().any(|w| w.id == *id) {
                return Err(ConfirmError::Decisions(format!(
                    "there is no write {id:?} waiting in this turn"
                )));
            }
        }
        if let Some(missing) = pending.iter().find(|w| !seen.contains(w.id.as_str())) {
            return Err(ConfirmError::Decisions(format!(
                "the write {:?} ({}) has no decision; decide every write of the turn",
                missing.id, missing.summary
            )));
        }
        Ok(())
    }
}

/// How a [`Claim`] holds its turn.
#[derive(Debug)]
pub(super) enum Hold {
    /// The row is locked by this open transaction, in which the apply goes on.
    Locked(Transaction<'static, Postgres>),
    /// The writes ran and their results are stored; whoever claims later gets another fence, and
    /// this one stops working.
    Applied {
        results: Vec<ToolResult>,
        fence: DateTime<Utc>,
    },
    /// Nothing: an apply failed and its transaction was rolled back.
    Released,
}

impl Claim {
    /// Gives the claim up, unlocking its row at once (a claim dropped unlocks it only when its
    /// connection is next used). Nothing was applied under it.
    pub async fn release(mut self) {
        if let Hold::Locked(tx) = std::mem::replace(&mut self.hold, Hold::Released) {
            // A rollback that fails closes the connection, which unlocks the row as well.
            let _ = tx.rollback().await;
        }
    }

    /// The results an earlier apply stored (the writes already ran), if there are.
    pub fn applied(&self) -> Option<&[ToolResult]> {
        match &self.hold {
            Hold::Applied { results, .. } => Some(results),
            Hold::Locked(_) | Hold::Released => None,
        }
    }
}

impl TurnStore {
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            lease: Duration::from_secs(30),
            claimer: process_identity(),
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
        // One statement and its commit (`app_conversation`, migration 0011).
        let id: Option<Uuid> = sqlx::query_scalar("SELECT app_conversation($1, NULL, $2)")
            .bind(owner.as_uuid())
            .bind(title)
            .fetch_one(&self.pool)
            .await?;
        // An insert always returns its id.
        let id = id.ok_or(sqlx::Error::RowNotFound)?;
        Ok(ConversationId::from_uuid(id))
    }

    /// The stored messages of a conversation, in order.
    pub async fn history(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
    ) -> Result<Vec<Message>, AgentError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let history = history::load(&mut tx, owner, conversation).await?;
        tx.commit().await?;
        Ok(history)
    }

    /// The start of a new turn, in one transaction: the conversation's history as the model sees
    /// it (or, for a [`Thread::New`] one, the conversation itself), the run's row (with `text`,
    /// the question it answers), and the
    /// memories `text` recalls. Returns the history and the person's message carrying those
    /// memories.
    pub(crate) async fn open_turn(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
        thread: Thread<'_>,
        run: &NewRun<'_>,
        text: &str,
    ) -> Result<(Vec<Message>, Message), AgentError> {
        // One statement, one round trip, outside any explicit transaction: `app_open_turn` sets the
        // tenant and commits lazily (migrations 0010 and 0013) — until the turn's next, durable
        // commit carries it to disk, a crash can lose only the run row (and a new conversation)
        // of a turn that died with it.
        let (history, memories): (Vec<Value>, Vec<String>) = sqlx::query_as(
            "SELECT history, memories FROM app_open_turn($1, $2, $3, $4, $5, $6::channel, $7, $8, $9, $10, $11)",
        )
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .bind(run.run_id.as_uuid())
        .bind(run.provider)
        .bind(run.model)
        .bind(run.channel.as_str())
        .bind(memory::RECENT_MEMORIES)
        .bind(memory::recalled_categories(text))
        .bind(matches!(thread, Thread::New { .. }))
        .bind(match thread {
            Thread::New { title } => title,
            Thread::Existing => None,
        })
        .bind(text)
        .fetch_one(&self.pool)
        .await?;
        let history = history::parse(history)?;
        Ok((history, memory::with_memories(Message::user(text), &memories)))
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

    /// Marks the run of a turn that could not be stored as failed, with its totals so far; only
    /// logged when that fails too (the nightly reaper finishes runs left `running`).
    pub async fn fail_run(&self, owner: OwnerId, turn: &Turn) {
        let failed = async {
            let mut tx = begin_for_owner(owner, &self.pool).await?;
            record::update_run(&mut tx, owner, turn, Some(RunStatus::Error)).await?;
            tx.commit().await?;
            Ok::<(), AgentError>(())
        }
        .await;
        if let Err(e) = failed {
            tracing::error!(error = %e, run_id = %turn.run_id(), "the run of a turn that failed could not be marked failed");
        }
    }

    /// How the latest run of the owner's `conversation` ended (`ok`, `aborted`, `error`, …), if
    /// it has one that ended.
    pub async fn last_run_status(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
    ) -> Result<Option<String>, AgentError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let status = sqlx::query_scalar(
            "SELECT status::text FROM trace_runs WHERE owner_id = $1 AND conversation_id = $2
             AND finished_at IS NOT NULL ORDER BY started_at DESC, id LIMIT 1",
        )
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(status)
    }

    /// A new turn that finished without waiting, in one transaction: its new messages appended
    /// to the conversation (with the summary, when its context was fitted), its trace events, and
    /// its run's totals and status.
    pub async fn close(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
        turn: &Turn,
        leg: &Leg,
    ) -> Result<(), AgentError> {
        record::insert_subruns(&self.pool, owner, turn).await?;
        let new = history::rows(turn.history().get(leg.new_from..).unwrap_or_default())?;
        let (evicted, summary) = history::eviction_args(leg.evicted.as_ref())?;
        let query = sqlx::query(
            "SELECT app_close_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::numeric, $12, $13::run_status)",
        )
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .bind(new)
        .bind(evicted)
        .bind(summary)
        .bind(record::event_rows(&leg.events))
        .bind(turn.run_id().as_uuid());
        Totals::of(turn)
            .bind(query)
            .bind(status_of(turn).as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Stores a turn that waits for a person, in one transaction with the leg's trace events,
    /// the run's totals so far and the summary of a fitted context; returns the id a confirm
    /// names. The conversation gets the turn's messages when the turn finishes.
    pub async fn suspend(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
        turn: &Turn,
        leg: &Leg,
    ) -> Result<SuspendedTurnId, ConfirmError> {
        let (state, args_hash, expires_at) = stored_form(turn)?;
        record::insert_subruns(&self.pool, owner, turn).await?;
        let (evicted, summary) = history::eviction_args(leg.evicted.as_ref())?;
        let query = sqlx::query(
            "SELECT app_suspend_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::numeric, $16)",
        )
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .bind(turn.run_id().as_uuid())
        .bind(i32::try_from(turn.version()).unwrap_or(i32::MAX))
        .bind(state)
        .bind(args_hash)
        .bind(expires_at)
        .bind(i32::try_from(leg.new_from).unwrap_or(i32::MAX))
        .bind(evicted)
        .bind(summary)
        .bind(record::event_rows(&leg.events));
        let id: Uuid = Totals::of(turn)
            .bind(query)
            .fetch_one(&self.pool)
            .await?
            .try_get(0)?;
        Ok(SuspendedTurnId::from_uuid(id))
    }

    /// Step 1: claims a suspended turn of `owner`: locks its row in a transaction the apply goes
    /// on with, or — when its writes already ran and its holder has been silent past the lease —
    /// takes it over with a new fence. A row locked by another confirm is [`ConfirmError::Claimed`]
    /// at once (no waiting); a turn of another owner is as absent as one that never existed.
    pub async fn claim(&self, owner: OwnerId, id: SuspendedTurnId) -> Result<Claim, ConfirmError> {
        let mut tx = begin_for_owner(owner, &self.pool).await?;
        let row: Option<LockedRow> = sqlx::query_as(
            "SELECT conversation_id, state, results, expires_at <= now() AS expired, args_hash, history_base,
                    status = 'pending' OR claimed_at < clock_timestamp() - make_interval(secs => $3) AS claimable,
                    coalesce(extract(epoch FROM claimed_at + make_interval(secs => $3) - clock_timestamp()), 0)::float8
                      AS lease_left
             FROM suspended_turns WHERE owner_id = $1 AND id = $2
             FOR UPDATE NOWAIT",
        )
        .bind(owner.as_uuid())
        .bind(id.as_uuid())
        .bind(self.lease.as_secs_f64())
        .fetch_optional(&mut *tx)
        .await
        .map_err(
            |e| match e.as_database_error().and_then(sqlx::error::DatabaseError::code) {
                // lock_not_available: another confirm's transaction holds the row.
                Some(code) if code == "55P03" => ConfirmError::Claimed { retry_after_secs: 1 },
                _ => ConfirmError::from(e),
            },
        )?;
        let Some(LockedRow {
            conversation_id,
            state,
            results,
            expired,
            args_hash,
            history_base,
            claimable,
            lease_left,
        }) = row
        else {
            return Err(ConfirmError::Gone);
        };
        if !claimable {
            // Applied, and its holder is within the lease: it is continuing the turn. Once the
            // lease runs out, the next confirm takes over.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let retry_after_secs = lease_left.ceil().clamp(1.0, 86_400.0) as u64;
            return Err(ConfirmError::Claimed { retry_after_secs });
        }
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
        let hold = match results {
            None => Hold::Locked(tx),
            Some(results) => {
                let results = serde_json::from_value(results)
                    .map_err(|e| StateError::Unreadable(format!("stored results: {e}")))?;
                // The writes ran under a holder that went silent: a new fence for this one.
                let fence: DateTime<Utc> = sqlx::query_scalar(
                    "UPDATE suspended_turns SET claimed_at = clock_timestamp(), claimed_by = $3
                     WHERE owner_id = $1 AND id = $2 RETURNING claimed_at",
                )
                .bind(owner.as_uuid())
                .bind(id.as_uuid())
                .bind(&self.claimer)
                .fetch_one(&mut *tx)
                .await?;
                tx.commit().await?;
                Hold::Applied { results, fence }
            }
        };
        Ok(Claim {
            id,
            conversation_id: ConversationId::from_uuid(conversation_id),
            turn,
            expired,
            history_base: history_base.and_then(|base| usize::try_from(base).ok()),
            hold,
        })
    }

    /// Step 2: runs the approved writes and stores their results, in the claim's transaction.
    /// `decisions` maps pending call ids to allowed; a missing decision declines. An expired turn
    /// runs nothing: every write is reported as expired. Returns the results and the fence the
    /// continuation holds; for a claim whose writes already ran, the stored ones, running nothing.
    pub async fn apply(
        &self,
        claim: &mut Claim,
        decisions: &[(String, bool)],
        scope: &Scope,
        tools: &ToolRegistry,
    ) -> Result<(Vec<ToolResult>, DateTime<Utc>), ConfirmError> {
        if let Hold::Applied { results, fence } = &claim.hold {
            return Ok((results.clone(), *fence));
        }
        let Hold::Locked(tx) = std::mem::replace(&mut claim.hold, Hold::Released) else {
            // An earlier apply on this claim failed: it holds nothing any more.
            return Err(ConfirmError::Claimed { retry_after_secs: 1 });
        };
        // Most confirms approve writes that succeed: those run straight on the transaction. A write
        // that fails has aborted it or may have done part of its work, so then all of it is rolled
        // back — the claim's lock with it — and done again under a new claim, each write in a
        // savepoint of its own, its failure its result.
        let first = apply_in(tx, &self.claimer, claim, decisions, scope, tools, Isolate::None).await?;
        let (results, fence) = if let Ok(applied) = first {
            applied
        } else {
            let mut again = self.claim(scope.owner, claim.id).await?;
            let Hold::Locked(tx) = std::mem::replace(&mut again.hold, Hold::Released) else {
                // Another confirm applied it in between (it was unlocked for that moment).
                return Err(ConfirmError::Claimed { retry_after_secs: 1 });
            };
            apply_in(
                tx,
                &self.claimer,
                &again,
                decisions,
                scope,
                tools,
                Isolate::EachWrite,
            )
            .await?
            .map_err(ConfirmError::Write)?
        };
        claim.hold = Hold::Applied {
            results: results.clone(),
            fence,
        };
        Ok((results, fence))
    }

    /// The turn waits again (the continuation asked for another write): the row gets the new
    /// state and is pending once more, with the leg's `events` and the run's totals so far.
    pub async fn resuspend(
        &self,
        owner: OwnerId,
        id: SuspendedTurnId,
        fence: DateTime<Utc>,
        turn: &Turn,
        events: &[TraceEvent],
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
            return Err(ConfirmError::Claimed { retry_after_secs: 1 });
        }
        record::insert_subruns(&mut *tx, owner, turn).await?;
        record::insert_events(&mut tx, owner, events).await?;
        record::update_run(&mut tx, owner, turn, None).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Step 4, under the fence and in one statement (`app_finish_turn`): the row goes, the
    /// conversation gets the finished turn's new messages (those after `history_base`; the whole
    /// history when it is `None`), and the run its leg's `events`, totals and status.
    #[allow(clippy::too_many_arguments)]
    pub async fn finish(
        &self,
        owner: OwnerId,
        id: SuspendedTurnId,
        fence: DateTime<Utc>,
        conversation: ConversationId,
        history_base: Option<usize>,
        turn: &Turn,
        events: &[TraceEvent],
    ) -> Result<(), ConfirmError> {
        record::insert_subruns(&self.pool, owner, turn).await?;
        let messages = match history_base {
            Some(base) => turn.history().get(base..).unwrap_or_default(),
            None => turn.history(),
        };
        let query = sqlx::query(
            "SELECT app_finish_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::numeric, $13, $14::run_status)",
        )
        .bind(owner.as_uuid())
        .bind(id.as_uuid())
        .bind(fence)
        .bind(conversation.as_uuid())
        .bind(history::rows(messages)?)
        .bind(history_base.is_none())
        .bind(record::event_rows(events))
        .bind(turn.run_id().as_uuid());
        let held: bool = Totals::of(turn)
            .bind(query)
            .bind(status_of(turn).as_str())
            .fetch_one(&self.pool)
            .await?
            .try_get(0)?;
        if held {
            Ok(())
        } else {
            Err(ConfirmError::Claimed { retry_after_secs: 1 })
        }
    }
}

/// Who applies a confirm, as `suspended_turns.claimed_by` records it: the Lambda execution
/// environment (its log stream names one instance), or the host and the process.
pub(super) fn process_identity() -> String {
    match std::env::var("AWS_LAMBDA_LOG_STREAM_NAME") {
        Ok(stream) if !stream.is_empty() => format!("lambda:{stream}"),
        _ => {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map_or_else(|_| "localhost".to_owned(), |h| h.trim().to_owned());
            format!("{host}:{}", std::process::id())
        }
    }
}

/// One attempt at [`TurnStore::apply`] on the claim's transaction `tx`; with [`Isolate::None`],
/// the first write that fails ends it (everything rolled back, the lock with it) with its error.
pub(super) async fn apply_in(
    mut tx: Transaction<'static, Postgres>,
    claimer: &str,
    claim: &Claim,
    decisions: &[(String, bool)],
    scope: &Scope,
    tools: &ToolRegistry,
    isolate: Isolate,
) -> Result<Result<(Vec<ToolResult>, DateTime<Utc>), kakeibo_core::ToolError>, ConfirmError> {
    let Phase::AwaitConfirm { pending, .. } = claim.turn.phase() else {
        return Err(StateError::NotWaiting.into());
    };
    let mut results = Vec::with_capacity(pending.len());
    for write in pending {
        let allowed = decisions.iter().any(|(id, allowed)| *id == write.id && *allowed);
        results.push(if claim.expired {
            expired_result(write)
        } else if allowed {
            match apply_one(scope, tools, &mut tx, write, isolate).await? {
                Ok(result) => result,
                Err(failed) => {
                    tx.rollback().await?;
                    return Ok(Err(failed));
                }
            }
        } else {
            declined_result(write)
        });
    }
    let stored = serde_json::to_value(&results).map_err(|e| StateError::Unreadable(e.to_string()))?;
    // The row is locked by this transaction since the claim: nobody else changed it.
    let fence: DateTime<Utc> = sqlx::query_scalar(
        "UPDATE suspended_turns SET status = 'applied', results = $3, claimed_at = clock_timestamp(), claimed_by = $4
         WHERE owner_id = $1 AND id = $2 RETURNING claimed_at",
    )
    .bind(scope.owner.as_uuid())
    .bind(claim.id.as_uuid())
    .bind(stored)
    .bind(claimer)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Ok((results, fence)))
}

/// What became of a pending write, read from its stored result (so a confirm retried after a
/// crash reports what the first attempt did, whatever the retry's decisions say).
pub(super) fn decision_of(result: &ToolResult) -> WriteDecision {
    if result.content == EXPIRED {
        WriteDecision::Expired
    } else if result.content == DECLINED {
        WriteDecision::Declined
    } else {
        WriteDecision::Allowed
    }
}

/// How [`TurnStore::apply`] keeps a failing write from the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Isolate {
    /// Writes run on the transaction itself: the first failure gives up the attempt.
    None,
    /// Each write in a savepoint: a failure is rolled back alone and becomes its result.
    EachWrite,
}

/// Runs one approved write on `tx`. Its error when it failed and `isolate` is
/// [`Isolate::None`]: the transaction is then no longer usable.
pub(super) async fn apply_one(
    scope: &Scope,
    tools: &ToolRegistry,
    tx: &mut PgConnection,
    write: &PendingWrite,
    isolate: Isolate,
) -> Result<Result<ToolResult, kakeibo_core::ToolError>, ConfirmError> {
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
        return Ok(Ok(result(
            format!("Invalid arguments for {}: {}.", write.tool, problems.join("; ")),
            true,
        )));
    }
    if isolate == Isolate::None {
        return Ok(run_write(scope, &mut *tx, &write.tool, write.args.clone())
            .await
            .map(|value| result(tool_data(&value), false)));
    }
    let mut savepoint = tx.begin().await?;
    match run_write(scope, &mut savepoint, &write.tool, write.args.clone()).await {
        Ok(value) => {
            savepoint.commit().await?;
            Ok(Ok(result(tool_data(&value), false)))
        }
        Err(e) => {
            savepoint.rollback().await?;
            Ok(Ok(result(format!("The tool failed: {e}"), true)))
        }
    }
}

/// (state, hash of the pending writes' arguments, expiry) of a waiting turn, or why it cannot
/// be stored.
pub(super) fn stored_form(turn: &Turn) -> Result<(Value, String, DateTime<Utc>), ConfirmError> {
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
pub(super) fn hash_of_writes(pending: &[PendingWrite]) -> String {
    let mut hasher = Sha256::new();
    for write in pending {
        hasher.update(write.id.as_bytes());
        hasher.update(kakeibo_core::schema::sorted(&write.args).to_string().as_bytes());
    }
    hex::encode(hasher.finalize())
}
