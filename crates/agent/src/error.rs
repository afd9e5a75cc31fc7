//! What fails in the agent's store: the database, the ledger under it, or a stored row that no
//! longer reads.

use kakeibo_ledger::LedgerError;
use kakeibo_tools::ToolsError;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("a stored message cannot be read: {0}")]
    StoredMessage(#[source] serde_json::Error),
    #[error("a message cannot be stored: {0}")]
    StoringMessage(#[source] serde_json::Error),
    #[error(transparent)]
    Tools(#[from] ToolsError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

kakeibo_ledger::database_errors_are_ledger_errors!(AgentError);
