//! The confirm protocol's refusals: a turn gone, expired, claimed by another confirm, or
//! stored in a state it cannot be resumed from.

use kakeibo_core::turn::StateError;

use super::MAX_STATE_BYTES;
use crate::AgentError;

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
