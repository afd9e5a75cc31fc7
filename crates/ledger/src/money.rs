//! Money as integer minor units of one currency: the `kakeibo-money` crate's, stored by the
//! ledger (its `postgres` feature).

pub use kakeibo_money::{Currency, Money, MoneyError};
