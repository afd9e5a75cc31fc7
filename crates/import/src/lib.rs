//! Bank statements read: bytes in, statements out — no database, no HTTP.
//!
//! [`parse`] reads a statement's bytes into a [`Parsed`] statement (the types of
//! `kakeibo-statement`): its rows, the rows it refuses with their line and reason, and where every
//! line went. The ledger (`kakeibo-ledger`) plans an import from it and commits the plan. The
//! format is [`sniff`]ed from the content, never the file's name: delimited text (CSV and its kin)
//! is read by [`csv`], OFX, QFX and QBO by `kakeibo-ofx`, camt.052/053/054 by `kakeibo-camt`,
//! MT940 and MT942 by `kakeibo-mt940`, QIF by `kakeibo-qif`; an XML document that is no
//! statement is refused with a sentence that names what in the file said so.

// Offsets, line numbers and amounts here come from a file anyone may upload: none of their
// arithmetic may overflow or panic, so every step is checked or saturating; no indexing panics.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod bank_categories;
pub mod csv;

pub use kakeibo_statement::{
    BalanceKind, BalancePosition, CamtMessage, Closing, Correction, CorrectionAction, DateOrder, DecimalMark,
    Decoded, Fees, Figure, Figures, Format, ImportError, KindHint, LineCount, MAX_BYTES, Mapping, OfxSyntax,
    ParseOptions, Parsed, ParsedRow, Reconciliation, RowError, SNIFF_BYTES, Sniffed, StatementAccount,
    StatementFormat, StatementInfo, TakenFigure, TimeOrder, balance_check, decode, last_four,
    layout_in_words, sniff,
};

pub use self::csv::{
    Columns, Layout, MappingFile, Record, Role, decide_decimal_mark, decide_order, detect, file_sha256,
    parse_amount, parse_date, read_mapping, spanned_records,
};

/// Reads a statement's bytes: its format sniffed from its content, then read by that format's
/// reader. A format kakeibo does not read yet is [`ImportError::NotRead`], naming it.
pub fn parse(bytes: &[u8], options: &ParseOptions) -> Result<Parsed, ImportError> {
    let sniffed = sniff(bytes);
    match sniffed.format {
        StatementFormat::Delimited => csv::parse(bytes, options),
        StatementFormat::Ofx { syntax } => kakeibo_ofx::parse(bytes, syntax, &sniffed.why, options),
        StatementFormat::Camt { .. } => kakeibo_camt::parse(bytes, sniffed.format, &sniffed.why, options),
        StatementFormat::Mt940 | StatementFormat::Mt942 => {
            kakeibo_mt940::parse(bytes, sniffed.format, &sniffed.why, options)
        }
        StatementFormat::Qif => kakeibo_qif::parse(bytes, &sniffed.why, options),
        format @ StatementFormat::OtherXml => Err(ImportError::NotRead {
            format,
            why: sniffed.why,
        }),
    }
}
