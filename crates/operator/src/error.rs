//! What fails on the operator's side.

use kakeibo_agent::AgentError;
use kakeibo_ledger::LedgerError;

use crate::uploads::{MAX_UPLOAD_BYTES, MAX_UPLOAD_STORAGE, MAX_UPLOADS_PER_OWNER};

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The quota gate's SQL answered a verdict this code does not know: a fault of ours.
    #[error("the quota gate answered {0:?}")]
    UnknownVerdict(String),
    /// The reaper's report would not serialise: a fault of ours.
    #[error("serialising the reaper's report: {0}")]
    Serialise(#[source] serde_json::Error),
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// Why an upload was not kept.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("the statement is {bytes} bytes; the limit is {MAX_UPLOAD_BYTES}")]
    TooLarge { bytes: usize },
    #[error("the file name must be 1 to 255 characters without control characters")]
    BadFileName,
    /// The visitor keeps too many statements already; deleting one makes room.
    #[error(
        "you keep {count} statements ({bytes} bytes); the limit is {MAX_UPLOADS_PER_OWNER} statements and \
         {MAX_UPLOAD_STORAGE} bytes: delete one first (your statements are listed on the privacy page)"
    )]
    Full { count: i64, bytes: i64 },
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

kakeibo_ledger::database_errors_are_ledger_errors!(OperatorError, UploadError);
