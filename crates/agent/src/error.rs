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
    #[error("run id {id:?} is not a UUID: {source}")]
    RunId {
        id: String,
        #[source]
        source: uuid::Error,
    },
    #[error(transparent)]
    Tools(#[from] ToolsError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

impl From<sqlx::Error> for AgentError {
    fn from(e: sqlx::Error) -> Self {
        Self::Ledger(LedgerError::Database(e))
    }
}

impl AgentError {
    /// A run id that must be a UUID.
    pub(crate) fn run_id(id: &str) -> Result<uuid::Uuid, Self> {
        uuid::Uuid::parse_str(id).map_err(|source| Self::RunId {
            id: id.to_owned(),
            source,
        })
    }
}
