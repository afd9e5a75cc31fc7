//! The deterministic demo ledger: its rows loaded (the rows are generated, and its files written
//! and read, by `kakeibo-seed`).
//!
//! `kakeibo seed --out DIR` writes `transactions.csv`, `labels.json` and `rates.json`;
//! `kakeibo seed --db` loads the rows into the development owner's ledger through the one insert
//! path, each with a deterministic transaction id. Its arithmetic (amounts, days, line
//! numbers) is checked or saturating, like the importer's.

#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

mod demo;
mod load;

pub use demo::{ensure_demo_ledger, reset_demo_ledger};
pub use kakeibo_seed::Mulberry32;
pub use kakeibo_seed::{
    Anomaly, AnomalyKind, END_DATE, Hostile, MONTHS, Recurring, SEED, SeedData, SeedRow, UNCATEGORIZED_COUNT,
    generate,
};
pub use kakeibo_seed::{
    CsvRow, labels_json, neutralise_formula, rates_json, read_transactions_csv, transactions_csv, write_files,
};
pub use load::{LoadReport, clear_ledger, load, transaction_id};
