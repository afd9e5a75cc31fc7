//! What the ledger refuses, and why.

use uuid::Uuid;

use crate::money::{Currency, MoneyError};

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("a transaction needs at least two postings, got {count}")]
    TooFewPostings { count: usize },
    #[error("the postings of a transaction must share one currency, got {first} and {other}")]
    MixedCurrencies { first: Currency, other: Currency },
    #[error(
        "the postings of a transaction must sum to zero, they sum to {sum_minor} minor units of {currency}"
    )]
    Unbalanced { sum_minor: i128, currency: Currency },
    #[error("a transaction needs a description")]
    EmptyDescription,
    #[error("no account {0} in this ledger")]
    UnknownAccount(Uuid),
    #[error("no account named {0:?} in this ledger")]
    UnknownAccountName(String),
    #[error("account {account} holds {account_currency}, the posting is in {posting_currency}")]
    AccountCurrencyMismatch {
        account: Uuid,
        account_currency: Currency,
        posting_currency: Currency,
    },
    #[error("{0}")]
    Invalid(String),
    /// A fault of ours, not of the caller's input (answered as a bare 500).
    #[error("internal: {0}")]
    Internal(String),
    #[error("seed data: {0}")]
    Seed(String),
    #[error(transparent)]
    Money(#[from] MoneyError),
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}
