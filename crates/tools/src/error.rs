//! What the tools refuse, and what fails under them.

use kakeibo_core::CallError;
use kakeibo_ledger::{LedgerError, import::ImportError};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum ToolsError {
    #[error(
        "month must be a calendar month written YYYY-MM, from 1900-01 to 9999-12, such as 2025-03; {0:?} is not one"
    )]
    BadMonth(String),
    /// Another preview of the owner's is being made (one at a time).
    #[error("a statement of yours is being read right now; wait for it to finish, then try again")]
    PreviewBusy,
    /// The parse's worker thread failed (it panicked or was cancelled).
    #[error("reading the statement failed: {0}")]
    Parser(String),
    #[error("plan_id is missing")]
    MissingPlanId,
    #[error("upload_id or path is missing")]
    MissingStatement,
    #[error("there is no upload {0}")]
    NoUpload(Uuid),
    /// A path outside the import folder, or no import folder at all: the sentence names the rule.
    #[error("{0}")]
    PathRefused(String),
    #[error("{filename}: {source}")]
    Unreadable {
        filename: String,
        #[source]
        source: ImportError,
    },
    /// `settle_transit` asked for none, or more than one, of the things a row in transit can be.
    #[error("{0}")]
    SettleHow(String),
    #[error("{category} is income; budgets are for spending categories")]
    IncomeBudget { category: String },
    /// A budget without a currency, in a ledger with no home currency yet (nothing imported):
    /// never a guessed one.
    #[error(
        "this ledger has no home currency yet (no statement is imported): say which currency the budget is in"
    )]
    NoHomeCurrency,
    /// A tool's answer that would not serialise: a fault of ours.
    #[error("serialising a tool's answer: {0}")]
    Serialise(#[source] serde_json::Error),
    /// A read tool the dashboard calls failed: a fault of ours or of the database.
    #[error("the dashboard's {tool}: {source}")]
    Dashboard {
        tool: &'static str,
        #[source]
        source: CallError,
    },
    /// Month arithmetic out of the calendar's range: a fault of ours.
    #[error("no month {0}")]
    Calendar(String),
    /// A figure's row reference that names no rows (a date that is none).
    #[error("the figure's rows cannot be read: {0}")]
    BadReference(String),
    /// Money added up past what an amount can hold.
    #[error("{0} comes to more money than an amount can hold")]
    Overflow(&'static str),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

impl ToolsError {
    /// Whether this refuses what the caller asked (answered with its sentence), rather than a
    /// fault of ours or of the database (logged, answered as a bare failure).
    pub fn is_refusal(&self) -> bool {
        match self {
            Self::BadMonth(_)
            | Self::MissingPlanId
            | Self::MissingStatement
            | Self::NoUpload(_)
            | Self::PathRefused(_)
            | Self::Unreadable { .. }
            | Self::IncomeBudget { .. }
            | Self::NoHomeCurrency
            | Self::SettleHow(_)
            | Self::BadReference(_)
            | Self::PreviewBusy => true,
            Self::Serialise(_)
            | Self::Dashboard { .. }
            | Self::Calendar(_)
            | Self::Parser(_)
            | Self::Overflow(_) => false,
            Self::Ledger(e) => e.is_refusal(),
        }
    }
}

kakeibo_ledger::database_errors_are_ledger_errors!(ToolsError);
