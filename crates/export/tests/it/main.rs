//! kakeibo-export against a real PostgreSQL and the real tools: Debian's `hledger` and `ledger`,
//! and Beancount 3 from the suite's virtual environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod formats;
mod household;
mod in_the_tools;
mod restore;
mod tools;
