//! Turns in PostgreSQL: conversations, traces, and the exactly-once confirm protocol.
//!
//! A turn that waits for a person is stored whole in `suspended_turns`. A confirm then
//! 1. **claims** the row: a transaction locks it (`FOR UPDATE NOWAIT`), so a concurrent confirm
//!    is refused at once instead of waiting; a row whose writes already ran and whose holder
//!    stopped answering for longer than the lease is taken over with a new fence (`claimed_at`);
//! 2. **applies** the approved writes in that same transaction and stores their results, moving
//!    the row to `applied` with a fresh fence — a write and the record that it happened commit
//!    together, so no write runs twice, and a claim that dies before this commit leaves the row
//!    as it was, at once claimable again (nothing to wait out);
//! 3. **continues** the turn from the stored results (an `applied` row never runs a write again);
//! 4. **finishes** by appending the turn's new messages to the conversation, writing the leg's
//!    trace events and the run's totals, and deleting the row, in one transaction, only under
//!    its fence.
//!
//! A new turn commits twice: once before the model is first called (history, run row and
//! memories, [`TurnStore::open_turn`]) and once when it ends ([`TurnStore::close`] or
//! [`TurnStore::suspend`]). Trace events wait in a [`MemoryTracer`] and commit with the step that
//! ends their leg: a crash before it loses only an unfinished leg's events, never a finished one's.
//!
//! Only two kinds of commit wait for the log to reach the disk: a write applied (with the record
//! that it ran) and a turn finished. The opening, the suspension and the claim commit lazily
//! (migrations 0008, 0013, 0024): what they hold has not finished, and the next durable commit
//! carries them to disk with it. A read-only turn waits for one flush, a confirmed write for two.
//!
//! Each of those steps, and the finish, is one statement calling a phase function of migration
//! `0010_turn_phases.sql`, sent outside any explicit transaction: one round trip that sets the
//! tenant, does the step's work and commits. The claim and apply are a transaction of their own,
//! since the writes they run are the tools' code.

use std::{future::Future, pin::Pin, time::Duration};

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use kakeibo_core::{
    ConfirmPolicy, ConfirmTrace, ConversationId, Deps, Message, PendingWrite, PermissionRules, Phase,
    Provider, RunId, RunStatus, SuspendedTurnId, Tier, ToolCallTrace, ToolRegistry, ToolResult, ToolUse,
    TraceEvent, TracePayload, Tracer, Turn, TurnEvent, WriteDecision,
    budget::Budgeted,
    context,
    hooks::{HookSite, Hooks, with_notes},
    trace::MemoryTracer,
    turn::{
        DECLINED, EXPIRED, StateError, declined_result, drive, drive_until, expired_result, result_summary,
        tool_data,
    },
};
use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::{Acquire, PgConnection, PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use kakeibo_ledger::{OwnerId, begin_for_owner};
use kakeibo_tools::{Scope, memory, run_write};

use crate::{
    AgentError,
    history::{self, Evicted},
    record::{self, NewRun, Totals},
};

/// The largest stored turn.
pub const MAX_STATE_BYTES: usize = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// Another request holds this confirmation (HTTP 409): it is applying the writes, or going on
    /// with the turn after them; if it stopped, a confirm may take over in `retry_after_secs`.
    #[error("a confirmation of this turn is in progress; if it stopped, try again in {retry_after_secs} s")]
    Claimed { retry_after_secs: u64 },
    /// No such confirmation for this owner: finished, or never there (HTTP 410).
    #[error("there is no such confirmation: it was already completed, or it never existed")]
    Gone,
    #[error("the turn is too large to keep ({bytes} bytes; the limit is {MAX_STATE_BYTES})")]
    TooLarge { bytes: usize },
    /// An approved write failed where its failure could not become its result (each write runs
    /// in a savepoint of its own when one has failed, so this is a fault of ours).
    #[error("an approved write failed: {0}")]
    Write(#[source] kakeibo_core::ToolError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Store(#[from] AgentError),
    /// The turn's opening failed: nothing of it was recorded and no model was called (a charge
    /// made for it can be given back).
    #[error("the turn could not start: {0}")]
    NotStarted(#[source] AgentError),
    /// The conversation has a turn in flight or a write waiting for a person: nothing of this
    /// turn was recorded and no model was called (HTTP 409).
    #[error("{}", .0.message())]
    Busy(Busy),
    /// The decisions do not name each pending write exactly once (HTTP 400); nothing ran.
    #[error("{0}")]
    Decisions(String),
}

/// Why a conversation cannot take a new message now: one turn per conversation at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Busy {
    /// A turn of it is still running.
    TurnRunning,
    /// A turn of it waits for the person to allow or decline a write.
    AwaitingConfirm,
}

impl Busy {
    /// The `reason` of the `409`.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::TurnRunning => "turn_running",
            Self::AwaitingConfirm => "awaiting_confirm",
        }
    }

    /// A sentence for the person.
    pub const fn message(self) -> &'static str {
        match self {
            Self::TurnRunning => {
                "a turn of this conversation is still running; wait for it to finish, then send again"
            }
            Self::AwaitingConfirm => {
                "this conversation is waiting for you to allow or decline a write; answer it first, then send again"
            }
        }
    }

    /// The reason as `app_conversation_busy` names it (migration 0019).
    pub fn parse(reason: &str) -> Option<Self> {
        match reason {
            "turn_running" => Some(Self::TurnRunning),
            "awaiting_confirm" => Some(Self::AwaitingConfirm),
            _ => None,
        }
    }

    /// The refusal an opening raised (SQLSTATE `KB409`, the reason as its message), if `e` is one.
    pub fn of(e: &AgentError) -> Option<Self> {
        let AgentError::Ledger(kakeibo_ledger::LedgerError::Database(sqlx::Error::Database(db))) = e else {
            return None;
        };
        (db.code().as_deref() == Some("KB409"))
            .then(|| Self::parse(db.message()))
            .flatten()
    }
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
    /// This process, as the confirms it applies record it.
    claimer: String,
}

/// (conversation, state, stored results, expired, arguments hash, history base, claimable,
/// seconds left of the holder's lease) of a suspended turn, read under its row lock.
type LockedRow = (Uuid, Value, Option<Value>, bool, String, Option<i32>, bool, f64);

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
enum Hold {
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
        .bind(run.channel)
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
            "SELECT conversation_id, state, results, expires_at <= now(), args_hash, history_base,
                    status = 'pending' OR claimed_at < clock_timestamp() - make_interval(secs => $3),
                    coalesce(extract(epoch FROM claimed_at + make_interval(secs => $3) - clock_timestamp()), 0)::float8
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
        let Some((conversation_id, state, results, expired, args_hash, history_base, claimable, lease_left)) =
            row
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
fn process_identity() -> String {
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
async fn apply_in(
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
fn decision_of(result: &ToolResult) -> WriteDecision {
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
enum Isolate {
    /// Writes run on the transaction itself: the first failure gives up the attempt.
    None,
    /// Each write in a savepoint: a failure is rolled back alone and becomes its result.
    EachWrite,
}

/// Runs one approved write on `tx`. Its error when it failed and `isolate` is
/// [`Isolate::None`]: the transaction is then no longer usable.
async fn apply_one(
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

/// The conversation a new turn opens in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Thread<'a> {
    /// One that exists.
    Existing,
    /// One the turn's opening makes, with this title.
    New { title: Option<&'a str> },
}

/// What a leg of a new turn stores with the commit that ends it, besides the turn itself.
#[derive(Debug, Default)]
pub struct Leg {
    /// The leg's trace events, in order.
    pub events: Vec<TraceEvent>,
    /// Where the turn's new messages start in its history: the messages before are stored.
    pub new_from: usize,
    /// The summary that now stands for evicted messages, when the turn's context was fitted.
    pub evicted: Option<Evicted>,
}

/// The status a turn's run ends with: an unfinished turn is an error.
fn status_of(turn: &Turn) -> RunStatus {
    turn.finished().map_or(RunStatus::Error, |(status, _)| status)
}

async fn record(tracer: &MemoryTracer, turn: &mut Turn, payload: TracePayload) {
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
    /// Where each model call of the turn reserves its worst case first (the web's daily budget);
    /// `None` spends without asking.
    pub budget: Option<&'a dyn kakeibo_core::Budget>,
    /// The operator's hooks ([`kakeibo_core::hooks`]); `None` for none.
    pub hooks: Option<&'a dyn Hooks>,
    /// The decision layer's stop judge; `None`: the repeat check alone.
    pub stop_judge: Option<&'a dyn kakeibo_core::turn::StopJudge>,
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
            budget: None,
            hooks: None,
            stop_judge: None,
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
        tracer: &'b MemoryTracer,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
        session: &'b str,
    ) -> Deps<'b> {
        Deps {
            provider: self.provider,
            budget: self.budget,
            tools: &self.tools,
            system: self.system,
            policy,
            rules: self.rules,
            tracer,
            on_event,
            hooks: self.hooks.map(|hooks| HookSite { hooks, session }),
            stop_judge: self.stop_judge,
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
        Box::pin(self.chat_inner(conversation, Thread::Existing, text, policy, on_event, None))
    }

    /// Runs the first turn of a new conversation, which the turn's opening makes — `conversation`
    /// a fresh id ([`ConversationId::random`]), titled `title` — in the same round trip and commit
    /// as the rest of the opening, instead of one of its own before it
    /// ([`TurnStore::new_conversation`]). When the turn fails before it opens, there is no
    /// conversation.
    pub fn start<'b>(
        &'b self,
        conversation: ConversationId,
        title: Option<&'b str>,
        text: &'b str,
        policy: &'b ConfirmPolicy,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
    ) -> BoxFuture<'b, Result<Outcome, ConfirmError>> {
        Box::pin(self.chat_inner(conversation, Thread::New { title }, text, policy, on_event, None))
    }

    /// [`Agent::chat`] (`title` `None`) or [`Agent::start`] (`title` `Some`, the new
    /// conversation's title or none), stopped when `stop` completes first: the turn then finishes
    /// `aborted` ([`kakeibo_core::drive_until`]) and is stored like any finished turn — the
    /// question, what ran before the stop, its events and its run.
    pub fn run_until<'b>(
        &'b self,
        conversation: ConversationId,
        title: Option<Option<&'b str>>,
        text: &'b str,
        policy: &'b ConfirmPolicy,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
        stop: Pin<&'b mut (dyn Future<Output = ()> + Send + 'b)>,
    ) -> BoxFuture<'b, Result<Outcome, ConfirmError>> {
        let thread = match title {
            None => Thread::Existing,
            Some(title) => Thread::New { title },
        };
        Box::pin(self.chat_inner(conversation, thread, text, policy, on_event, Some(stop)))
    }

    #[tracing::instrument(name = "turn", skip_all, fields(conversation_id = %conversation, run_id = tracing::field::Empty))]
    async fn chat_inner(
        &self,
        conversation: ConversationId,
        thread: Thread<'_>,
        text: &str,
        policy: &ConfirmPolicy,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
        stop: Option<Pin<&mut (dyn Future<Output = ()> + Send + '_)>>,
    ) -> Result<Outcome, ConfirmError> {
        let owner = self.scope.owner;
        let run_id = RunId::random();
        tracing::Span::current().record("run_id", tracing::field::display(run_id));
        tracing::info!(
            provider = self.provider.name(),
            model = self.provider.model(),
            "turn started"
        );
        let run = NewRun {
            run_id,
            provider: self.provider.name(),
            model: self.provider.model(),
            channel: self.channel,
        };
        let (text, refused) = self.prompt_hooks(conversation, &thread, text).await;
        let text = text.as_ref();
        let (mut history, user) = self
            .store
            .open_turn(owner, conversation, thread, &run, text)
            .await
            .map_err(|e| Busy::of(&e).map_or(ConfirmError::NotStarted(e), ConfirmError::Busy))?;
        let tracer = MemoryTracer::default();
        history.push(user);
        let declarations = self.tools.declared();
        let mut seq = 0;
        let summarizer = self.summarizer.unwrap_or(self.provider);
        let budgeted = self.budget.map(|budget| Budgeted {
            inner: summarizer,
            budget,
            run: run_id,
        });
        let (mut history, eviction) = context::fit(
            history,
            self.system,
            &declarations,
            self.provider,
            budgeted.as_ref().map_or(summarizer, |b| b as &dyn Provider),
            context::CONTEXT_BUDGET_TOKENS,
            Some((&tracer, run_id, &mut seq)),
        )
        .await;
        let user = history.pop().unwrap_or_else(|| Message::user(text));
        let new_from = history.len();
        let mut turn = Turn::start(run_id, history, user);
        turn.continue_seq_from(seq);
        let session = conversation.to_string();
        let deps = self.deps(policy, &tracer, on_event, &session);
        let turn = match (refused, stop) {
            (Some(reason), _) => turn.refused_by_hook(&reason),
            (None, Some(stop)) => drive_until(turn, &deps, stop).await,
            (None, None) => drive(turn, &deps).await,
        };
        let leg = Leg {
            events: tracer.take(),
            new_from,
            evicted: eviction.as_ref().map(Evicted::of),
        };
        let ended = if let Phase::AwaitConfirm { pending, .. } = turn.phase() {
            let pending = pending.clone();
            self.store
                .suspend(owner, conversation, &turn, &leg)
                .await
                .map(|suspended_id| {
                    tracing::info!(suspended_turn_id = %suspended_id, "turn suspended until a person decides");
                    Some(Outcome::Suspended {
                        run_id: turn.run_id(),
                        suspended_id,
                        pending,
                    })
                })
        } else {
            self.store
                .close(owner, conversation, &turn, &leg)
                .await
                .map(|()| None)
                .map_err(ConfirmError::from)
        };
        match ended {
            Ok(Some(suspended)) => Ok(suspended),
            Ok(None) => Ok(finished(turn)),
            Err(e) => {
                // The run's row exists (the opening committed it): it must not stay `running`.
                // If the database itself is gone this fails too, and the reaper finishes it.
                self.store.fail_run(owner, &turn).await;
                Err(e)
            }
        }
    }

    /// The person's message as the turn takes it — with the notes of the `SessionStart` (a new
    /// conversation) and `UserPromptSubmit` hooks — and the reason a hook refused it, if one did.
    async fn prompt_hooks<'t>(
        &self,
        conversation: ConversationId,
        thread: &Thread<'_>,
        text: &'t str,
    ) -> (std::borrow::Cow<'t, str>, Option<String>) {
        let Some(hooks) = self.hooks else {
            return (text.into(), None);
        };
        let session = conversation.to_string();
        let mut notes = Vec::new();
        if matches!(thread, Thread::New { .. }) {
            notes.extend(hooks.session_start(&session).await);
        }
        let submit = hooks.user_prompt_submit(&session, text).await;
        notes.extend(submit.notes);
        (with_notes(text, &notes).into(), submit.block)
    }

    /// The `PostToolUse` hooks of the writes a confirm ran: their notes join the results the
    /// model reads (the stored results stay as the tools gave them, so a retry sees the same);
    /// the reason a hook asked to stop, if one did.
    async fn post_confirm_hooks(
        &self,
        claim: &Claim,
        decisions: &[(String, bool)],
        session: &str,
        results: &mut [ToolResult],
    ) -> Option<String> {
        let (Some(hooks), Phase::AwaitConfirm { pending, .. }) = (self.hooks, claim.turn.phase()) else {
            return None;
        };
        let mut stop = None;
        for write in pending {
            let ran = !claim.expired && decisions.iter().any(|(id, allowed)| *id == write.id && *allowed);
            let Some(result) = results
                .iter_mut()
                .find(|r| r.tool_use_id == write.id)
                .filter(|_| ran)
            else {
                continue;
            };
            let call = ToolUse {
                id: write.id.clone(),
                name: write.tool.clone(),
                input: write.args.clone(),
            };
            let post = hooks
                .post_tool_use(session, &call, &result.content, result.is_error)
                .await;
            result.content = with_notes(&result.content, &post.notes);
            stop = stop.or(post.stop);
        }
        stop
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
        mut claim: Claim,
        decisions: &[(String, bool)],
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Outcome, ConfirmError> {
        if let Err(refused) = claim.check_decisions(decisions) {
            // Unlock the row now: dropped, the lock would go only when the pool next uses the
            // connection, and a corrected confirm sent at once would find it still held.
            claim.release().await;
            return Err(refused);
        }
        let owner = self.scope.owner;
        let suspended_id = claim.id;
        let (mut results, fence) = self
            .store
            .apply(&mut claim, decisions, &self.scope, &self.tools)
            .await?;
        let session = claim.conversation_id.to_string();
        let hook_stop = self
            .post_confirm_hooks(&claim, decisions, &session, &mut results)
            .await;
        let tracer = MemoryTracer::default();
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
        let turn = match hook_stop {
            Some(reason) => turn.stopped_by_hook(&reason),
            None => {
                drive(
                    turn,
                    &self.deps(&ConfirmPolicy::Suspend, &tracer, on_event, &session),
                )
                .await
            }
        };
        if let Phase::AwaitConfirm { pending, .. } = turn.phase() {
            let pending = pending.clone();
            self.store
                .resuspend(owner, suspended_id, fence, &turn, &tracer.take())
                .await?;
            return Ok(Outcome::Suspended {
                run_id: turn.run_id(),
                suspended_id,
                pending,
            });
        }
        self.store
            .finish(
                owner,
                suspended_id,
                fence,
                claim.conversation_id,
                claim.history_base,
                &turn,
                &tracer.take(),
            )
            .await?;
        Ok(finished(turn))
    }
}

/// The outcome of a turn whose end is stored.
fn finished(turn: Turn) -> Outcome {
    let status = status_of(&turn);
    let answer = turn.finished().map(|(_, a)| a.to_owned()).unwrap_or_default();
    tracing::info!(run_id = %turn.run_id(), status = ?status, "turn finished");
    Outcome::Finished {
        run_id: turn.run_id(),
        status,
        answer,
        turn: Box::new(turn),
    }
}
