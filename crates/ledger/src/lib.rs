//! kakeibo-ledger: the double-entry ledger in PostgreSQL.
//!
//! It holds what every owner-scoped piece of kakeibo stands on: [`OwnerId`], money as integer
//! minor units ([`Money`], [`Currency`]), [`with_owner`] (one transaction scoped to one tenant for
//! row-level security), the chart of accounts, the **one insert path** for transactions
//! ([`insert_transaction`]: at least two postings, one currency, summing to exactly zero), the
//! migrations, and the deterministic demo seed.
//!
//! Every owner-scoped function takes an [`OwnerId`] first and filters by it explicitly, even
//! though row-level security filters again under `app_user`: each mechanism must hold alone.
//! The CSV importer ([`import`]: decode, layout, amounts, dates, reconcile, plan and commit)
//! writes through the same insert path. This crate knows PostgreSQL (sqlx) and nothing of HTTP,
//! providers, turns or AWS: the tools stand on it in `kakeibo-tools`, the agent in
//! `kakeibo-agent`, and the operator's side (the admin door, quotas, uploads, housekeeping) in
//! `kakeibo-operator`.

// A statement, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod accounts;
mod balances;
mod db;
mod error;
pub mod import;
mod money;
mod owner;
pub mod seed;
pub mod settle;
mod transactions;
pub mod transfers;

pub use accounts::{
    Account, AccountKind, AccountType, CHECKING, DEFAULT_CHART, OPENING_BALANCES, TRANSIT, UNCATEGORIZED,
    create_account, ensure_chart, find_account, home_currency, list_accounts, set_home_currency,
};
pub use balances::{AccountBalance, Balances, InTransit, MonthEnd, balances};
pub use db::{
    MIGRATOR, OwnerRolePool, TRUSTED_IDLE, begin_for_owner, begin_snapshot_for_owner, connect, migrate,
    pool_options, scope_to_owner, with_owner,
};
pub use error::LedgerError;
pub use kakeibo_money::{STATIC_RATES, StaticRates};
pub use money::{Currency, Money, MoneyError};
pub use owner::{DEV_OWNER, EVAL_OWNER, OwnerId};
/// For [`database_errors_are_ledger_errors!`]: the sqlx this crate's errors hold.
#[doc(hidden)]
pub use sqlx as __sqlx;
pub use transactions::{
    InsertOutcome, NewPosting, NewTransaction, insert_transaction, insert_transactions, source_hash,
};
