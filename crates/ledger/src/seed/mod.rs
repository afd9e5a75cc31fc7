//! The deterministic demo ledger: generating it, writing and reading its files, loading it.
//!
//! `kakeibo seed --out DIR` writes `transactions.csv`, `labels.json` and `rates.json`;
//! `kakeibo seed --db` loads the rows into the development owner's ledger through the one insert
//! path, each with a deterministic transaction id. Its arithmetic (amounts, days, line
//! numbers) is checked or saturating, like the importer's.

#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

mod demo;
mod files;
mod generate;
mod load;
mod prng;

pub use demo::{ensure_demo_ledger, reset_demo_ledger};
pub use files::{CsvRow, labels_json, rates_json, read_transactions_csv, transactions_csv, write_files};
pub use generate::{
    Anomaly, AnomalyKind, END_DATE, Hostile, MONTHS, Recurring, SEED, SeedData, SeedRow, UNCATEGORIZED_COUNT,
    generate,
};
pub use load::{LoadReport, clear_ledger, load, transaction_id};
pub use prng::Mulberry32;
