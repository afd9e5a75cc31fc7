//! A bank statement as read, whatever its format: the types every reader gives (`Parsed`: rows,
//! refusals, where every line went), the options every reader takes, the bytes decoded into text
//! by their encoding, and the format sniffed from the content. The readers (`kakeibo-import` for
//! delimited text, `kakeibo-ofx`) build on it; no database, no HTTP.

// Offsets, line numbers and amounts here come from a file anyone may upload: none of their
// arithmetic may overflow or panic, so every step is checked or saturating; no indexing panics.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod decode;
mod options;
mod parsed;
mod reconciliation;
mod sniff;
mod words;

pub use self::{
    decode::{Decoded, MAX_BYTES, count_lines, decode, within_limits},
    options::{DateOrder, DecimalMark, Mapping, ParseOptions},
    parsed::{
        Correction, CorrectionAction, Fees, Figure, Figures, Format, ImportError, KindHint, LineCount,
        Parsed, ParsedRow, RowDetail, RowError, Split, StatementAccount, StatementInfo, TakenFigure, choose,
        counted, last_four,
    },
    reconciliation::{BalanceKind, BalancePosition, Closing, Reconciliation, TimeOrder},
    sniff::{CamtMessage, OfxSyntax, SNIFF_BYTES, Sniffed, StatementFormat, sniff},
    words::{balance_check, layout_in_words},
};
