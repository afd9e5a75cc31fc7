//! The demo household's year: six months of synthetic transactions generated deterministically
//! (mulberry32 draws as the reference generator makes them, Unicode collation for the row
//! order), with the anomalies, hostile descriptions and recurring merchants planted in it, and
//! its files written and read (`files`). No database: the ledger (`kakeibo-ledger`'s `seed`) loads
//! the rows.

// Its arithmetic (amounts, days, line numbers) is checked or saturating, like the importer's.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod files;
mod generate;
mod prng;

pub use self::{
    files::{
        CsvRow, labels_json, neutralise_formula, rates_json, read_transactions_csv, transactions_csv,
        write_files,
    },
    generate::{
        Anomaly, AnomalyKind, END_DATE, Hostile, MONTHS, Recurring, SEED, SeedData, SeedRow,
        UNCATEGORIZED_COUNT, UNCATEGORIZED_SEED, generate,
    },
    prng::Mulberry32,
};

/// Why the demo data could not be generated (a planted row missing, bad collation data): a
/// defect of this crate, never of its input, which it has none of.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SeedError(pub String);
