//! Running one task: reset the evaluation owner's ledger, play the turns through the real agent
//! loop with the task's confirm answers, and keep what happened.

use std::time::{Duration, Instant};

use kakeibo::{Agent, Channel, ConfirmPolicy, Models};
use kakeibo_core::{MicroUsd, RunStatus, ToolRegistry, Usage, turn::CallRecord};
use kakeibo_ledger::{LedgerError, OwnerId, begin_for_owner, seed::reset_demo_ledger};
use kakeibo_tools::Scope;
use sqlx::PgPool;

use crate::task::{ConfirmAnswer, Task};

/// One turn as it happened.
#[derive(Debug, Clone)]
pub struct TurnRecord {
    pub user: String,
    pub confirm: ConfirmAnswer,
    pub run_id: kakeibo_core::RunId,
    pub status: RunStatus,
    pub answer: String,
    pub calls: Vec<CallRecord>,
    pub usage: Usage,
    pub cost: MicroUsd,
    pub iterations: u32,
    pub latency: Duration,
    /// The answer's figures, checked against the turn's tool results (`None`: it states none).
    pub figures: Option<kakeibo_core::figures::FigureCheck>,
}

/// A task's turns as they happened, and the error that ended them early, if any.
#[derive(Debug, Clone, Default)]
pub struct TaskRun {
    pub turns: Vec<TurnRecord>,
    pub error: Option<String>,
    /// Resetting the ledger included.
    pub wall: Duration,
}

impl TaskRun {
    pub fn answers(&self) -> Vec<String> {
        self.turns.iter().map(|t| t.answer.clone()).collect()
    }

    pub fn calls(&self) -> impl Iterator<Item = &CallRecord> {
        self.turns.iter().flat_map(|t| t.calls.iter())
    }

    /// Whether a turn ended in an error or was blocked (judges are then skipped).
    pub fn failed(&self) -> Option<String> {
        if let Some(error) = &self.error {
            return Some(error.clone());
        }
        self.turns
            .iter()
            .find(|t| matches!(t.status, RunStatus::Error | RunStatus::Blocked))
            .map(|t| format!("a turn ended {}", t.status.as_str()))
    }
}

/// Where tasks run: the `app_user` pool and the owner whose ledger every task resets.
#[derive(Debug, Clone)]
pub struct Bench {
    pub pool: PgPool,
    pub owner: OwnerId,
}

impl Bench {
    pub fn new(pool: PgPool, owner: OwnerId) -> Self {
        Self { pool, owner }
    }

    /// Replaces the owner's ledger with a fresh demo ledger, in one transaction.
    pub async fn reset(&self) -> Result<(), LedgerError> {
        let mut tx = begin_for_owner(self.owner, &self.pool).await?;
        reset_demo_ledger(self.owner, &mut tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Forgets the owner's evaluation conversations and runs of earlier UTC days (at the start of
    /// a suite). Today's stay: their cost counts toward the day's budget like anyone's.
    pub async fn forget_history(&self) -> Result<(), LedgerError> {
        let mut tx = begin_for_owner(self.owner, &self.pool).await?;
        for statement in [
            "DELETE FROM trace_runs WHERE owner_id = $1 AND started_at < date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
            "DELETE FROM conversations WHERE owner_id = $1 AND created_at < date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
        ] {
            sqlx::query(statement)
                .bind(self.owner.as_uuid())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Whether the pool's role is under row-level security (`app_user`), so a check's SQL sees
    /// only this owner's rows whatever it says.
    pub async fn restricted(&self) -> Result<bool, sqlx::Error> {
        let mut tx = begin_for_owner(self.owner, &self.pool).await?;
        let active: bool = sqlx::query_scalar("SELECT row_security_active('transactions')")
            .fetch_one(&mut *tx)
            .await?;
        tx.rollback().await?;
        Ok(active)
    }

    /// Closes the owner's runs left open (a task stopped by a deadline); returns how many.
    pub async fn close_open_runs(&self) -> Result<u64, LedgerError> {
        let mut tx = begin_for_owner(self.owner, &self.pool).await?;
        let closed = sqlx::query(
            "UPDATE trace_runs SET status = 'aborted', finished_at = now() WHERE owner_id = $1 AND finished_at IS NULL",
        )
        .bind(self.owner.as_uuid())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(closed)
    }

    /// The owner's tools (the judge reads each write's confirmation summary from them).
    pub fn tools(&self) -> ToolRegistry {
        kakeibo_tools::registry(&Scope::new(self.owner, self.pool.clone()))
    }

    /// Runs `task`'s turns on a fresh ledger with `models`, in one new conversation.
    pub async fn run(&self, task: &Task, models: &Models, system: &str) -> TaskRun {
        let started = Instant::now();
        let mut run = TaskRun::default();
        if let Err(e) = self.play(task, models, system, &mut run).await {
            run.error = Some(e);
        }
        run.wall = started.elapsed();
        run
    }

    async fn play(
        &self,
        task: &Task,
        models: &Models,
        system: &str,
        run: &mut TaskRun,
    ) -> Result<(), String> {
        self.reset()
            .await
            .map_err(|e| format!("resetting the ledger: {e}"))?;
        let agent = Agent::builder(self.pool.clone(), self.owner)
            .models(models.clone())
            .system_prompt(system)
            .channel(Channel::Eval)
            .build()
            .map_err(|e| format!("building the agent: {e}"))?;
        let conversation = agent
            .new_conversation(Some(&format!("eval {}", task.id)))
            .await
            .map_err(|e| format!("starting a conversation: {e}"))?;
        for spec in &task.turns {
            let policy = match spec.confirm {
                ConfirmAnswer::Allow => ConfirmPolicy::AutoAllow,
                ConfirmAnswer::Deny | ConfirmAnswer::None => ConfirmPolicy::AutoDeny,
            };
            let started = Instant::now();
            let result = agent
                .prompt(&spec.user)
                .in_conversation(conversation)
                .confirm_policy(policy)
                .await
                .map_err(|e| format!("the turn failed: {e}"))?;
            let Some(status) = result.status.finished() else {
                return Err("the turn waited for a confirmation under an automatic policy".into());
            };
            run.turns.push(TurnRecord {
                user: spec.user.clone(),
                confirm: spec.confirm,
                run_id: result.run_id,
                status,
                answer: result.text,
                calls: result.calls,
                usage: result.usage,
                cost: result.cost,
                iterations: result.iterations,
                latency: started.elapsed(),
                figures: result.figures,
            });
        }
        Ok(())
    }
}

impl TaskRun {
    /// A run of one declined-writes turn that went well (for unit tests of what reads runs).
    #[cfg(test)]
    pub(crate) fn one_turn(user: &str, answer: &str, calls: Vec<CallRecord>) -> Self {
        Self {
            turns: vec![TurnRecord {
                user: user.into(),
                confirm: ConfirmAnswer::Deny,
                run_id: kakeibo_core::RunId::random(),
                status: RunStatus::Ok,
                answer: answer.into(),
                calls,
                usage: Usage::default(),
                cost: MicroUsd(0),
                iterations: 1,
                latency: Duration::ZERO,
                figures: None,
            }],
            ..Self::default()
        }
    }
}
