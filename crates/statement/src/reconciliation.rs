//! How a statement's rows agreed with the balances it states: the outcome a preview shows.

use serde::{Deserialize, Serialize};

/// In which order of time the file lists its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimeOrder {
    OldestFirst,
    NewestFirst,
}

/// Whether a row's balance is the one after it (most banks) or before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BalancePosition {
    After,
    Before,
}

/// What the balance column counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BalanceKind {
    /// What the account holds: it falls when money goes out.
    Held,
    /// What is owed on the account: it rises when money goes out.
    Owed,
}

/// The outcome, for the preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reconciliation {
    /// The balance column's header.
    pub column: String,
    pub order: TimeOrder,
    /// Whether each row's balance is the one after it or before it.
    pub position: BalancePosition,
    pub balance_kind: BalanceKind,
    /// Rows whose balance change could be checked (each but the opening row of a run).
    pub checked: usize,
    /// Of those, the rows whose amount equals the change.
    pub reconciled: usize,
    /// The amounts had no sign; each was given the sign of its balance change.
    pub signs_from_balance: bool,
    /// The file lists some rows out of their order of time (by date, or within a day by their
    /// balances): the rows were checked in the order their dates and balances give.
    #[serde(default)]
    pub by_date: bool,
    /// How many accounts the file's rows belong to, each checked against its own balances.
    #[serde(default = "one")]
    pub accounts: usize,
    /// What the account held after the statement's last row, by its balance column (what is owed
    /// on a card counts negative), and that row's date: for a file of one account only.
    #[serde(default)]
    pub closing: Option<Closing>,
}

/// A statement's closing balance, as held (owed money is negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Closing {
    pub date: chrono::NaiveDate,
    pub held_minor: i64,
}

fn one() -> usize {
    1
}
