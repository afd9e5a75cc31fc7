//! What a prompt comes to.

use kakeibo_agent::Outcome;
use kakeibo_core::{
    ConversationId, MicroUsd, PendingWrite, RunId, RunStatus, RunSummary, Stop, SuspendedTurnId, Usage,
    figures::FigureCheck, turn::CallRecord,
};
use serde::Serialize;

/// How a run stands once a prompt (or a confirm) returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// The model answered.
    Ok,
    /// The model or the turn failed; `text` says what happened.
    Error,
    /// The provider refused to answer.
    Blocked,
    /// Stopped before it finished (the daily budget, …).
    Aborted,
    /// The same calls kept coming back, so the run was stopped.
    Stuck,
    /// A write waits for a person: confirm `suspended` with [`Agent::confirm`](crate::Agent::confirm),
    /// in this process or another, naming each of `pending` once.
    Waiting {
        /// The stored turn that waits.
        suspended: SuspendedTurnId,
        /// The writes it waits on, as the person should see them.
        pending: Vec<PendingWrite>,
    },
}

impl Status {
    /// How a finished run ended; `None` while a write waits.
    pub fn finished(&self) -> Option<RunStatus> {
        Some(match self {
            Self::Ok => RunStatus::Ok,
            Self::Error => RunStatus::Error,
            Self::Blocked => RunStatus::Blocked,
            Self::Aborted => RunStatus::Aborted,
            Self::Stuck => RunStatus::Stuck,
            Self::Waiting { .. } => return None,
        })
    }
}

impl From<RunStatus> for Status {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Ok => Self::Ok,
            RunStatus::Error => Self::Error,
            RunStatus::Blocked => Self::Blocked,
            RunStatus::Aborted => Self::Aborted,
            RunStatus::Stuck => Self::Stuck,
        }
    }
}

/// What a prompt came to: the answer, how the run ended, what it cost and the tools it called.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    /// The answer, or the turn's sentence about what stopped it; empty while a write waits.
    pub text: String,
    /// How the run stands: answered, stopped, or waiting for a person.
    pub status: Status,
    /// What stopped a finished run short (`None` when it answered, or while it waits).
    pub stop: Option<Stop>,
    /// Tokens of the whole run (zero while a write waits: they are counted when it finishes).
    pub usage: Usage,
    /// The run's list-price cost.
    pub cost: MicroUsd,
    /// The run, as the traces (`/admin`'s runs) name it.
    pub run_id: RunId,
    /// The conversation the turn belongs to: name it in the next prompt to go on with it.
    pub conversation: ConversationId,
    /// Every tool call of the run, in order (empty while a write waits).
    pub calls: Vec<CallRecord>,
    /// How many times the model was called (zero while a write waits).
    pub iterations: u32,
    /// Every figure the answer states, each grounded in the run's tool results (and through them
    /// the ledger rows that make it) or ungrounded; `None` when it states none, or while a
    /// write waits.
    pub figures: Option<FigureCheck>,
    /// The subagents the run's `task` calls ran, in order: each one's run (stored linked to
    /// this one), usage and cost — already counted in [`RunResult::usage`] and
    /// [`RunResult::cost`].
    pub subagents: Vec<kakeibo_core::turn::subagent::SubRun>,
    /// The finished run as the wire says it (`turn_end`, the CLI's result line); `None` while a
    /// write waits.
    #[serde(skip)]
    pub summary: Option<RunSummary>,
}

impl RunResult {
    pub(crate) fn of(outcome: Outcome, conversation: ConversationId, model: &str) -> Self {
        match outcome {
            Outcome::Finished {
                run_id,
                status,
                answer,
                turn,
            } => Self {
                text: answer,
                status: status.into(),
                stop: turn.stop().filter(|stop| *stop != Stop::End),
                usage: turn.usage(),
                cost: turn.cost(),
                run_id,
                conversation,
                calls: turn.calls().to_vec(),
                iterations: turn.iteration(),
                figures: turn.figures().cloned(),
                subagents: turn.subruns().to_vec(),
                summary: RunSummary::of(&turn, model),
            },
            Outcome::Suspended {
                run_id,
                suspended_id,
                pending,
            } => Self {
                text: String::new(),
                status: Status::Waiting {
                    suspended: suspended_id,
                    pending,
                },
                stop: None,
                usage: Usage::default(),
                cost: MicroUsd::default(),
                run_id,
                conversation,
                calls: Vec::new(),
                iterations: 0,
                figures: None,
                subagents: Vec::new(),
                summary: None,
            },
        }
    }

    /// Whether a write waits for a person.
    pub fn is_waiting(&self) -> bool {
        matches!(self.status, Status::Waiting { .. })
    }
}
