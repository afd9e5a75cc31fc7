//! CSV: one row per posting (RFC 4180: comma-separated, fields quoted where they need it, CRLF
//! line ends, UTF-8 without a byte-order mark). The columns are [`COLUMNS`]. A text field that a
//! spreadsheet would run as a formula (it opens with `=`, `+`, `-`, `@`, a tab or a carriage
//! return) is written with a leading `'`, as spreadsheets themselves mark text; amounts are
//! never touched.

use std::io::Write;

use kakeibo_ledger::Currency;

use crate::{
    ExportError,
    data::{Meta, Txn, decimal, label},
};

/// The header row.
pub const COLUMNS: [&str; 14] = [
    "date",
    "transaction_id",
    "posting_id",
    "description",
    "bank_description",
    "account",
    "account_type",
    "account_kind",
    "amount",
    "currency",
    "amount_minor",
    "source_file",
    "bank_ref",
    "bank_category",
];

pub struct Csv<'w> {
    out: csv::Writer<&'w mut (dyn Write + Send)>,
}

fn cell(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    }
}

impl<'w> Csv<'w> {
    pub fn new(out: &'w mut (dyn Write + Send)) -> Result<Self, ExportError> {
        let mut out = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(out);
        out.write_record(COLUMNS)?;
        Ok(Self { out })
    }

    pub fn transaction(&mut self, meta: &Meta, txn: &Txn) -> Result<(), ExportError> {
        let row = &txn.row;
        for posting in &row.postings {
            let account = meta.account(posting.account_id)?;
            let currency = Currency::parse(&posting.currency)?;
            self.out.write_record([
                row.date.to_string(),
                row.id.to_string(),
                posting.id.to_string(),
                cell(&row.description),
                cell(&row.raw_description),
                cell(&account.name),
                label(account.account_type),
                account.kind.map(label).unwrap_or_default(),
                decimal(posting.amount_minor, currency),
                posting.currency.clone(),
                posting.amount_minor.to_string(),
                cell(txn.source_file.as_deref().unwrap_or_default()),
                cell(row.bank_ref.as_deref().unwrap_or_default()),
                cell(row.bank_category.as_deref().unwrap_or_default()),
            ])?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<(), ExportError> {
        self.out.flush()?;
        Ok(())
    }
}
