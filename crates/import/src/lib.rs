//! Bank statements read: bytes in, statements out — no database, no HTTP.
//!
//! [`parse`] reads a statement's bytes ([`decode`] first turns them into text by their encoding)
//! into a [`Parsed`] statement: its rows, the rows it refuses with their line and reason, and where
//! every line went. The ledger (`kakeibo-ledger`) plans an import from it and commits the plan.
//! The format is [`sniff`]ed from the content, never the file's name. Delimited text (CSV and its
//! kin, [`csv`]) is read today; OFX, camt, MT940/MT942 and QIF are recognised and refused with a
//! sentence that names the format and what in the file said so.

// Offsets, line numbers and amounts here come from a file anyone may upload: none of their
// arithmetic may overflow or panic, so every step is checked or saturating; no indexing panics.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod bank_categories;
pub mod csv;
mod decode;
mod sniff;
mod statement;

pub use self::{
    csv::{
        BalanceKind, BalancePosition, Closing, Columns, DateOrder, DecimalMark, Layout, Mapping, MappingFile,
        ParseOptions, Reconciliation, Record, Role, TimeOrder, decide_decimal_mark, decide_order, detect,
        file_sha256, parse_amount, parse_date, read_mapping, spanned_records,
    },
    decode::{Decoded, MAX_BYTES, decode},
    sniff::{CamtMessage, OfxSyntax, SNIFF_BYTES, Sniffed, StatementFormat, sniff},
    statement::{
        Fees, Figure, Figures, Format, ImportError, KindHint, LineCount, Parsed, ParsedRow, RowError,
        TakenFigure,
    },
};

/// Reads a statement's bytes: its format sniffed from its content, then read by that format's
/// reader. A format kakeibo does not read yet is [`ImportError::NotRead`], naming it.
pub fn parse(bytes: &[u8], options: &ParseOptions) -> Result<Parsed, ImportError> {
    let sniffed = sniff(bytes);
    match sniffed.format {
        StatementFormat::Delimited => csv::parse(bytes, options),
        format => Err(ImportError::NotRead {
            format,
            why: sniffed.why,
        }),
    }
}
