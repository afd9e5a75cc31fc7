//! The units of kakeibo's books, shared by the ledger that stores them and the importer that
//! reads statements into them: an ISO 4217 [`Currency`], [`Money`] as integer minor units of one
//! currency, the [`AccountType`] and [`AccountKind`] of an account, and the static exchange
//! rates ([`STATIC_RATES`]).
//!
//! No database here: the `postgres` feature adds how the ledger stores these types.

// Amounts come from files and people: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod accounts;
mod money;
mod rates;

pub use self::{
    accounts::{AccountKind, AccountType},
    money::{Currency, Money, MoneyError},
    rates::{STATIC_RATES, StaticRates},
};
