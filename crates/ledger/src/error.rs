//! What the ledger refuses, and why.

use uuid::Uuid;

use crate::{
    accounts::AccountType,
    money::{Currency, MoneyError},
    owner::OwnerId,
};

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
    #[error("the account {account} holds another currency")]
    AccountHoldsAnotherCurrency { account: String },
    #[error(
        "the statement states no currency (no symbol or code in its amounts, no currency column or \
         header) and {account} holds nothing yet to go by: say which currency it is in (kakeibo import \
         --currency EUR; the import tool's currency)"
    )]
    NoCurrencyToGoBy { account: String },
    #[error("{account} is a {account_type:?} account; statements go into an asset or liability account")]
    NotAStatementAccount {
        account: String,
        account_type: AccountType,
    },
    #[error("{account} is a {is} account, not a {asked} one: name another account, or leave out the kind")]
    KindMismatch {
        account: String,
        is: crate::accounts::AccountKind,
        asked: crate::accounts::AccountKind,
    },
    #[error(
        "the transfer waiting in transit as transaction {transaction} changed since the preview: preview the statement again"
    )]
    TransferChanged { transaction: Uuid },
    #[error("transaction {transaction} is not waiting in transit: only a row in transit can be settled")]
    NotInTransit { transaction: Uuid },
    #[error("{name} is not a category (an expense or income account)")]
    NotACategory { name: String },
    #[error("{name} is not another of your accounts that holds money (it must differ from {account})")]
    NotAnotherAccount { name: String, account: String },
    #[error("{account} holds {currency}: say how much arrived there, in {currency}")]
    NeedsArrivedAmount { account: String, currency: Currency },
    #[error("{account} holds {currency} like the row: the amount that moved is the row's own")]
    AmountDisagrees { account: String, currency: Currency },
    #[error(
        "transactions {transaction} and {other} cannot be one transfer: they must be rows in transit of two \
         different accounts, money out of one and into the other (in one currency, the same amount)"
    )]
    NotTheOtherSide { transaction: Uuid, other: Uuid },
    #[error("import plan {plan} asks nothing about line {line}, or has no such candidate for it")]
    NoSuchQuestion { plan: Uuid, line: usize },
    #[error("no import plan {0}: preview the statement first")]
    NoPlan(Uuid),
    #[error("import plan {0} was already committed")]
    PlanCommitted(Uuid),
    #[error("import plan {0} holds no plan")]
    EmptyPlan(Uuid),
    #[error("import plan {plan} is of a newer version {version}")]
    NewerPlan { plan: Uuid, version: u32 },
    #[error("import plan {plan} cannot be read: {source}")]
    UnreadablePlan {
        plan: Uuid,
        #[source]
        source: serde_json::Error,
    },
    #[error("no visitor {0}")]
    NoVisitor(OwnerId),
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

impl LedgerError {
    /// Whether this is a refusal of what the caller asked (answered with its sentence), rather
    /// than a fault of the ledger's rules being broken by our own code, or of the database.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Self::AccountHoldsAnotherCurrency { .. }
                | Self::NoCurrencyToGoBy { .. }
                | Self::NotAStatementAccount { .. }
                | Self::KindMismatch { .. }
                | Self::TransferChanged { .. }
                | Self::NotInTransit { .. }
                | Self::NotACategory { .. }
                | Self::NotAnotherAccount { .. }
                | Self::NeedsArrivedAmount { .. }
                | Self::AmountDisagrees { .. }
                | Self::NotTheOtherSide { .. }
                | Self::NoSuchQuestion { .. }
                | Self::NoPlan(_)
                | Self::PlanCommitted(_)
                | Self::EmptyPlan(_)
                | Self::NewerPlan { .. }
                | Self::UnreadablePlan { .. }
                | Self::NoVisitor(_)
        )
    }
}

/// `From<sqlx::Error>` for error enums that hold a `Ledger(LedgerError)` variant: a database
/// error met over the ledger is the ledger's (`LedgerError::Database`), so each caller tells it
/// apart in one place.
#[macro_export]
macro_rules! database_errors_are_ledger_errors {
    ($($error:ty),+ $(,)?) => {
        $(
            impl From<$crate::__sqlx::Error> for $error {
                fn from(e: $crate::__sqlx::Error) -> Self {
                    Self::Ledger($crate::LedgerError::Database(e))
                }
            }
        )+
    };
}

impl From<kakeibo_seed::SeedError> for LedgerError {
    fn from(error: kakeibo_seed::SeedError) -> Self {
        Self::Seed(error.0)
    }
}
