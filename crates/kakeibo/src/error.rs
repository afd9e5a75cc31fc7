//! What can go wrong when building an agent or running a prompt, each with what to do.

use kakeibo_agent::{AgentError, ConfirmError};
use kakeibo_core::DuplicateTool;
use kakeibo_ledger::LedgerError;
use kakeibo_providers::select::SelectError;

/// Why building an agent, a prompt or a confirm failed; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `build()` was called before a model was given.
    #[error("the agent has no model: call provider(..) or provider_from_env() before build()")]
    NoProvider,
    /// The settings name no usable model (the message lists the settings that would).
    #[error(transparent)]
    Settings(#[from] SelectError),
    /// A tool of yours has the name of another tool (the fourteen finance tools' names are taken).
    #[error("{0}: give your tool another name")]
    DuplicateTool(#[from] DuplicateTool),
    /// No database was named, and no running local cluster was found (the sentence says how to
    /// start one or which variable to set).
    #[error("no database: {0}; or set APP_DATABASE_URL")]
    NoDatabase(String),
    /// The database URL could not be used.
    #[error("the database: {0}")]
    Database(#[from] LedgerError),
    /// A hooks settings file could not be read or names what kakeibo cannot run.
    #[error(transparent)]
    Hooks(#[from] kakeibo_hooks::SettingsError),
    /// The prompt's turn, or a confirm, failed; what it says is what to do (a busy conversation,
    /// a confirm already made, the database away, …). Nothing was half-written.
    #[error(transparent)]
    Turn(#[from] ConfirmError),
    /// The ledger's conversations could not be read or written.
    #[error("the conversations: {0}")]
    Store(#[from] AgentError),
}
