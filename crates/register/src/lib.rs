//! The register: a person's transactions as a list to search, and their own edits to them.
//!
//! - [`query`]: one page of the register — by text, dates, amount, account, category or import,
//!   sorted — each row with what it was to the household (spending, income, a transfer, one in
//!   transit) and the ids that lead back to its postings and its statement.
//! - [`edits`]: a category changed, a description rewritten, a split, a deletion, an import
//!   undone — no confirmation card (the person's own decision), each recorded in `ledger_edits`
//!   with the transactions before and after, and reversible while nothing changed them since.
//! - [`categories`]: the categories of a person's chart with what uses them; one added, one of
//!   their own renamed or merged into another (rows, rules and budgets moved in one recorded edit).
//! - [`rules`]: categorisation rules listed, added, changed, deleted; a rule's category given to
//!   the past rows like it, previewed first, then as one recorded edit.
//! - [`budgets`]: a month of spending categories with budget, spent and the rows behind it.
//! - [`snapshot`]: a transaction read whole and put back whole through the ledger's one insert
//!   path, which is how every edit and every revert is applied.
//!
//! Every function takes the [`OwnerId`](kakeibo_ledger::OwnerId) first and a connection already
//! scoped to that owner.

// A person's request can hold anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod answers;
pub mod budgets;
pub mod categories;
pub mod edits;
pub mod query;
pub mod rules;
pub mod snapshot;

pub use edits::{Edit, Share};
pub use query::{Page, Row, Search};

/// Why a register request was not done.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// No such transaction, import or edit of this owner.
    #[error("not found")]
    NotFound,
    /// The request itself is wrong (a category that does not exist, shares that do not add up).
    #[error("{0}")]
    Invalid(String),
    /// The ledger's rules forbid it (a transfer takes no category).
    #[error("{0}")]
    Refused(String),
    /// What the edit would change is no longer what it was: something changed it since.
    #[error("these transactions changed since; read them again and redo the edit")]
    Changed,
    #[error(transparent)]
    Ledger(#[from] kakeibo_ledger::LedgerError),
}

kakeibo_ledger::database_errors_are_ledger_errors!(RegisterError);
