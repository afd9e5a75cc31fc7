//! kakeibo-export: a person's whole ledger out, in the files the plain-text accounting tools read
//! — an hledger journal, a Ledger file, a Beancount file — and as CSV and JSON; and the JSON read
//! back into an empty ledger ([`restore()`]).
//!
//! Every format is written from one snapshot of the owner's rows (`REPEATABLE READ`), the
//! transactions streamed from the server a row at a time, so a ledger of a million postings is
//! written in the memory of one transaction. What each format holds:
//!
//! - the accounts with their type and currency, names escaped reversibly ([`names`]);
//! - every transaction with all its postings, its id, its statement and the bank's reference;
//! - a transfer across currencies with the rate its two amounts imply (a price);
//! - each closing balance a statement stated, as an assertion the tool checks — where kakeibo's
//!   ledger agrees with it; where it does not, a comment saying both figures;
//! - budgets as periodic transactions (hledger, Ledger) or `custom "budget"` (Beancount), and the
//!   categorisation rules as comments;
//! - the JSON adds the rest of what the person has: statements imported (with their plans),
//!   memories, remembered column mappings, edits, conversations and run summaries
//!   ([`model::Export`]).

mod beancount;
mod csv_out;
mod data;
mod journal;
mod json;
pub mod model;
pub mod names;
mod restore;
mod text;

use std::io::Write;

use chrono::NaiveDate;
use kakeibo_ledger::{LedgerError, MoneyError, OwnerId};
use sqlx::PgPool;
use uuid::Uuid;

pub use csv_out::COLUMNS as CSV_COLUMNS;
pub use restore::{RestoreError, Restored, read as read_export, restore};

/// The formats [`export`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Hledger,
    Ledger,
    Beancount,
    Csv,
    Json,
}

impl Format {
    pub const ALL: [Self; 5] = [
        Self::Hledger,
        Self::Ledger,
        Self::Beancount,
        Self::Csv,
        Self::Json,
    ];

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Hledger => "journal",
            Self::Ledger => "ledger",
            Self::Beancount => "beancount",
            Self::Csv => "csv",
            Self::Json => "json",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Hledger => "hledger",
            Self::Ledger => "ledger",
            Self::Beancount => "beancount",
            Self::Csv => "csv",
            Self::Json => "json",
        }
    }
}

/// The days an export is limited to (both ends included); the default is everything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Period {
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
}

impl Period {
    /// `YYYY-MM`, `YYYY`, or `FROM..TO` of `YYYY-MM-DD` (either end may be left out).
    pub fn parse(text: &str) -> Result<Self, ExportError> {
        let bad = || ExportError::BadPeriod(text.to_owned());
        let day = |s: &str| -> Result<Option<NaiveDate>, ExportError> {
            if s.is_empty() {
                return Ok(None);
            }
            NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .map(Some)
                .map_err(|_| bad())
        };
        let period = if let Some((from, to)) = text.split_once("..") {
            Self {
                from: day(from)?,
                to: day(to)?,
            }
        } else if text.len() == 7 {
            let from = NaiveDate::parse_from_str(&format!("{text}-01"), "%Y-%m-%d").map_err(|_| bad())?;
            let next = from.checked_add_months(chrono::Months::new(1)).ok_or_else(bad)?;
            Self {
                from: Some(from),
                to: next.pred_opt(),
            }
        } else if text.len() == 4 {
            let from = NaiveDate::parse_from_str(&format!("{text}-01-01"), "%Y-%m-%d").map_err(|_| bad())?;
            let to = NaiveDate::parse_from_str(&format!("{text}-12-31"), "%Y-%m-%d").map_err(|_| bad())?;
            Self {
                from: Some(from),
                to: Some(to),
            }
        } else {
            return Err(bad());
        };
        if let (Some(from), Some(to)) = (period.from, period.to)
            && from > to
        {
            return Err(bad());
        }
        Ok(period)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("reading the ledger: {0}")]
    Database(#[from] sqlx::Error),
    #[error("{0}")]
    Ledger(#[from] LedgerError),
    #[error("writing the export: {0}")]
    Write(#[from] std::io::Error),
    #[error("writing the JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("writing the CSV: {0}")]
    Csv(#[from] csv::Error),
    #[error("a currency in the ledger: {0}")]
    Money(#[from] MoneyError),
    #[error("a posting names account {0}, which is not among the owner's accounts")]
    UnknownAccount(Uuid),
    #[error("{0:?} is not a period: give YYYY, YYYY-MM, or FROM..TO as YYYY-MM-DD..YYYY-MM-DD")]
    BadPeriod(String),
}

impl ExportError {
    /// Whether the reader of the export went away (a pipe closed early).
    pub fn is_broken_pipe(&self) -> bool {
        let kind = match self {
            Self::Write(e) => Some(e.kind()),
            Self::Json(e) => e.io_error_kind(),
            Self::Csv(e) => match e.kind() {
                csv::ErrorKind::Io(io) => Some(io.kind()),
                _ => None,
            },
            _ => None,
        };
        kind == Some(std::io::ErrorKind::BrokenPipe)
    }
}

/// What [`export`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    pub accounts: usize,
    pub transactions: u64,
    pub postings: u64,
    /// Closing balances asserted (the ledger agrees with the bank) and only noted (it does not).
    pub assertions: usize,
    pub unasserted: usize,
}

/// Writes `owner`'s ledger as `format` into `out`, from one snapshot. `progress` is called with
/// the count of transactions written, every 10,000.
pub async fn export(
    owner: OwnerId,
    pool: &PgPool,
    format: Format,
    period: Period,
    out: &mut (dyn Write + Send),
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Written, ExportError> {
    let mut tx = kakeibo_ledger::begin_snapshot_for_owner(owner, pool).await?;
    let meta = data::Meta::load(owner, &mut tx, period).await?;
    let written = write_format(&mut tx, &meta, format, out, progress).await?;
    out.flush()?;
    tx.commit().await?;
    Ok(written)
}

/// The files of [`zip()`], in the order they are written.
pub const ZIP_FORMATS: [Format; 4] = [Format::Hledger, Format::Beancount, Format::Csv, Format::Json];

/// The whole ledger as a zip of `kakeibo.journal`, `kakeibo.beancount`, `kakeibo.csv` and
/// `kakeibo.json`, all four from one snapshot, each written straight into its deflated entry.
pub async fn zip<W: Write + std::io::Seek + Send>(
    owner: OwnerId,
    pool: &PgPool,
    out: W,
) -> Result<W, ExportError> {
    let mut tx = kakeibo_ledger::begin_snapshot_for_owner(owner, pool).await?;
    let meta = data::Meta::load(owner, &mut tx, Period::default()).await?;
    let mut archive = ::zip::ZipWriter::new(out);
    let options = ::zip::write::SimpleFileOptions::default()
        .compression_method(::zip::CompressionMethod::Deflated)
        .unix_permissions(0o600);
    for format in ZIP_FORMATS {
        archive
            .start_file(format!("kakeibo.{}", format.extension()), options)
            .map_err(zip_error)?;
        write_format(&mut tx, &meta, format, &mut archive, &mut |_| {}).await?;
    }
    let out = archive.finish().map_err(zip_error)?;
    tx.commit().await?;
    Ok(out)
}

fn zip_error(e: ::zip::result::ZipError) -> ExportError {
    match e {
        ::zip::result::ZipError::Io(io) => ExportError::Write(io),
        other => ExportError::Write(std::io::Error::other(other)),
    }
}

/// One format of the ledger `meta` describes, its transactions read on `conn`.
async fn write_format(
    conn: &mut sqlx::PgConnection,
    meta: &data::Meta,
    format: Format,
    out: &mut (dyn Write + Send),
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Written, ExportError> {
    let mut written = Written {
        accounts: meta.accounts.len(),
        assertions: meta.assertions.iter().filter(|a| a.holds()).count(),
        unasserted: meta.assertions.iter().filter(|a| !a.holds()).count(),
        ..Written::default()
    };
    let (transactions, postings) = match format {
        Format::Json => json::write(conn, meta, out, progress).await?,
        Format::Csv => {
            let mut sink = csv_out::Csv::new(out)?;
            let counts = stream(conn, meta, progress, |txn| sink.transaction(meta, txn)).await?;
            sink.finish()?;
            counts
        }
        Format::Hledger | Format::Ledger => {
            let dialect = if format == Format::Hledger {
                journal::Dialect::Hledger
            } else {
                journal::Dialect::Ledger
            };
            let mut sink = journal::Journal::new(out, dialect);
            sink.begin(meta)?;
            let mut pending = meta.assertions.iter().peekable();
            let counts = stream(conn, meta, progress, |txn| {
                while let Some(assertion) = pending.next_if(|a| a.date < txn.row.date) {
                    sink.assertion(meta, assertion)?;
                }
                sink.transaction(meta, txn)
            })
            .await?;
            for assertion in pending {
                sink.assertion(meta, assertion)?;
            }
            counts
        }
        Format::Beancount => {
            let mut sink = beancount::Beancount::new(out);
            sink.begin(meta)?;
            let counts = stream(conn, meta, progress, |txn| sink.transaction(meta, txn)).await?;
            for assertion in &meta.assertions {
                sink.assertion(meta, assertion)?;
            }
            counts
        }
    };
    written.transactions = transactions;
    written.postings = postings;
    Ok(written)
}

pub(crate) async fn stream(
    conn: &mut sqlx::PgConnection,
    meta: &data::Meta,
    progress: &mut (dyn FnMut(u64) + Send),
    mut each: impl FnMut(&data::Txn) -> Result<(), ExportError>,
) -> Result<(u64, u64), ExportError> {
    let (mut transactions, mut postings) = (0u64, 0u64);
    data::each_transaction(meta.owner, conn, meta.period, |txn| {
        each(txn)?;
        transactions += 1;
        postings += txn.row.postings.len() as u64;
        if transactions.is_multiple_of(10_000) {
            progress(transactions);
        }
        Ok(())
    })
    .await?;
    Ok((transactions, postings))
}
