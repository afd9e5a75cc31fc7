//! Importing bank statements: read (`kakeibo-import`: bytes in, statements out, no database),
//! plan (a dry run stored as a plan), commit (exactly the stored plan).
//!
//! The reader's types are re-exported here under the names the ledger's callers have always used.

// Offsets, line numbers and amounts here come from a file anyone may upload: none of their
// arithmetic may overflow or panic, so every step is checked or saturating.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

mod card;
mod kept;
pub(crate) mod plan;
mod preview;
mod saved;

pub use kakeibo_import::{
    BalanceKind, BalancePosition, Closing, Columns, Correction, CorrectionAction, DateOrder, DecimalMark,
    Decoded, Fees, Figure, Figures, Format, ImportError, KindHint, Layout, LineCount, MAX_BYTES, Mapping,
    MappingFile, ParseOptions, Parsed, ParsedRow, Reconciliation, Record, Role, RowError, StatementAccount,
    StatementFormat, StatementInfo, TakenFigure, TimeOrder, balance_check, bank_categories,
    decide_decimal_mark, decide_order, decode, detect, file_sha256, last_four, layout_in_words, parse,
    parse_amount, parse_date, read_mapping, spanned_records,
};

pub use self::{
    card::plan_in_words,
    kept::{MAX_KEPT_PLANS, forget_kept_plans, keep_plan, reusable_plan},
    plan::{
        BalanceCheck, CommitReport, DuplicateRow, Elsewhere, Opening, Plan, PlannedAccount,
        PlannedCorrection, PlannedRow, PlannedTransfer, RowSummary, Target, account_for, answer, commit,
        commit_with, plan, plan_into, transit_account,
    },
    preview::{
        CategoryRows, ClosingBalance, DateRange, Direction, END_ROWS, ImportPreview, OpeningBalance,
        PreviewMoney, PreviewRow, TransferPreview, TransferSide, TransferStatus, preview,
    },
    saved::{SavedMapping, parse_with_saved, save_mapping, saved_mapping},
};
