//! Importing bank statements: parse (no database), plan (a dry run stored as a plan), commit
//! (exactly the stored plan).
//!
//! Parsing accepts real exports: the encoding is sniffed (UTF-8 with or without a byte-order
//! mark, UTF-16 with one, Windows-1252/Latin-1 and other legacy encodings), the delimiter
//! (`,` `;` tab `|`) and the header row past banner lines are found, columns are mapped by their
//! names, amounts may be signed or split into debit and credit, and the order of day and month is
//! decided per file from its dates. A problem with the whole file refuses it; a bad row is
//! reported with its line and column and skipped, never guessed.

// Offsets, line numbers and amounts here come from a file anyone may upload: none of their
// arithmetic may overflow or panic, so every step is checked or saturating.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

mod amount;
mod bank_categories;
mod card;
mod clues;
mod date;
mod decode;
mod kept;
mod layout;
mod mapping;
pub(crate) mod plan;
mod preview;
mod reconcile;
mod rows;
mod saved;
mod settle;
#[cfg(test)]
mod tests;
mod vocabulary;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

pub use self::{
    amount::{DecimalMark, decide_decimal_mark, parse_amount},
    card::plan_in_words,
    date::{DateOrder, decide_order, parse_date},
    decode::{Decoded, MAX_BYTES, decode},
    kept::{MAX_KEPT_PLANS, forget_kept_plans, keep_plan, reusable_plan},
    layout::{Columns, Layout, Mapping, Record, detect, spanned_records},
    mapping::{MappingFile, read_mapping},
    plan::{
        BalanceCheck, CommitReport, DuplicateRow, Elsewhere, Opening, Plan, PlannedAccount, PlannedRow,
        PlannedTransfer, RowSummary, Target, account_for, answer, commit, commit_with, neutralise_formula,
        plan, plan_into, transit_account,
    },
    preview::{
        CategoryRows, ClosingBalance, DateRange, Direction, END_ROWS, ImportPreview, OpeningBalance,
        PreviewMoney, PreviewRow, TransferPreview, TransferSide, TransferStatus, balance_check,
        layout_in_words, preview,
    },
    reconcile::{BalanceKind, BalancePosition, Closing, Reconciliation, TimeOrder},
    saved::{SavedMapping, parse_with_saved, save_mapping, saved_mapping},
    vocabulary::Role,
};
use self::{
    clues::{
        Blank, CARD_WORDS, CREDIT_WORDS, DEBIT_WORDS, blank_direction, date_order, describing_columns,
        find_direction, kind_of_statement, layout_hint, stated_currency, unbooked_state,
    },
    rows::{Chain, RowContext, cell, direction_marked, flipped, read_rows, unmarked_debit},
    settle::settle_amounts,
};
use crate::money::Currency;

/// Why a whole file is refused (nothing is written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("the file is empty")]
    Empty,
    #[error("the file is not a text statement (it looks binary)")]
    Binary,
    #[error("the file is {bytes} bytes; statements up to {limit} bytes are accepted")]
    TooLarge { bytes: usize, limit: usize },
    #[error("cannot read the text: {0}")]
    Encoding(String),
    #[error(
        "no header row with a date column and an amount (or debit/credit) column was found in the first lines; \
         name the date and amount (or debit and credit) columns in the mapping, by header or 1-based number"
    )]
    NoHeader,
    #[error("{0}")]
    Dates(String),
    #[error("no data rows under the header (line {header_line})")]
    NoRows { header_line: usize },
    #[error("the mapping cannot be used: {0}")]
    Mapping(String),
}

/// One problem row: where, which column, what, and the line as written (clipped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RowError {
    pub line: usize,
    pub column: Option<String>,
    pub message: String,
    pub raw: String,
    /// The two figures of a row whose amount disagrees with the statement's balance column: the
    /// person may take it in at either ([`ParseOptions::figures`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
}

/// A row's amount as read and the change of the balance column across it, as they would be
/// booked (money in positive, after any flip of the statement's signs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figures {
    pub amount_minor: i64,
    pub balance_minor: i64,
    pub currency: Currency,
    /// Nothing named the row's currency: the plan gives the figures its rows' (as
    /// [`ParsedRow::currency_unstated`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub currency_unstated: bool,
}

impl Figures {
    fn flipped(self) -> Self {
        Self {
            amount_minor: flipped(self.amount_minor),
            balance_minor: flipped(self.balance_minor),
            ..self
        }
    }

    /// The figure `take` names.
    #[must_use]
    pub fn of(&self, take: Figure) -> i64 {
        match take {
            Figure::Amount => self.amount_minor,
            Figure::Balance => self.balance_minor,
        }
    }
}

/// Which figure a row refused by the balance column is taken in at, as its person said.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// The amount the row states.
    Amount,
    /// The change of the balance column across the row.
    Balance,
}

/// A row the balance column refused, taken in at the figure its person chose: recorded with the
/// plan, so the import says which rows were booked on a person's word and at what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TakenFigure {
    pub line: usize,
    pub take: Figure,
    #[serde(flatten)]
    pub figures: Figures,
}

impl TakenFigure {
    /// "line 4 at the balance's change -$12.00", or "line 6 left out: its balance did not move"
    /// for a row taken at a balance change of nothing (it moves no money, and is not booked).
    #[must_use]
    pub fn in_words(&self) -> String {
        let minor = self.figures.of(self.take);
        let money = crate::money::Money::new(minor, self.figures.currency).format();
        match self.take {
            Figure::Balance if minor == 0 => format!("line {} left out: its balance did not move", self.line),
            Figure::Balance => format!("line {} at the balance's change {money}", self.line),
            Figure::Amount => format!("line {} at its amount {money}", self.line),
        }
    }
}

/// One row read from a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParsedRow {
    pub line: usize,
    pub date: NaiveDate,
    pub description: String,
    pub amount_minor: i64,
    pub currency: Currency,
    /// The statement's own category cell, if it has one.
    pub category: Option<String>,
    /// Nothing in the file or the options named this row's currency: the plan takes it from the
    /// account the statement goes into when that account is in use, or refuses.
    #[serde(default)]
    pub currency_unstated: bool,
}

/// What was detected about the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Format {
    pub encoding: String,
    pub delimiter: String,
    pub header_line: usize,
    pub columns: std::collections::BTreeMap<String, String>,
    pub date_order: DateOrder,
    pub date_order_reason: String,
    /// Every numeric date could be read either way and nothing in the file decided: the order is
    /// a hint's or the default, and the preview says so.
    #[serde(default)]
    pub date_order_assumed: bool,
    /// Where the currency of amounts that name none came from ("the currency column", "the
    /// account Checking, which holds INR"); none when every amount names its own.
    #[serde(default)]
    pub currency_from: Option<String>,
    pub decimal_mark: DecimalMark,
    /// How the amounts agreed with the running-balance column, when the statement has one.
    #[serde(default)]
    pub reconciliation: Option<Reconciliation>,
    /// Every sign was flipped, as the mapping asked (a statement that writes spending as positive).
    #[serde(default)]
    pub inverted: bool,
    /// Why the amounts are spending written as positive (and so were turned to money out), when
    /// the file's own words say so.
    #[serde(default)]
    pub spending_positive: Option<String>,
    /// Where the mapping came from when it was not given with this import ("the mapping saved
    /// with Checking by the import of jan.csv").
    #[serde(default)]
    pub mapping_from: Option<String>,
    /// The accounts the rows belong to, when the file names more than one in an account column
    /// (an app's export of several); each one's balances are checked on their own.
    #[serde(default)]
    pub accounts: Vec<String>,
    /// How the fees of a fee column were read, when any row has one.
    #[serde(default)]
    pub fees: Option<Fees>,
    /// What kind of account the statement is of, when the file says (a card's Sale, Payment and
    /// Return rows; a banner naming a credit card), and why.
    #[serde(default)]
    pub account_kind: Option<KindHint>,
    /// Rows the balance column refused that were taken in at the figure their person chose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taken: Vec<TakenFigure>,
}

/// The kind of account a statement says it is of, and the words that say so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindHint {
    pub kind: crate::accounts::AccountKind,
    pub why: String,
}

/// How a statement's fee column moves the money, as its balance column says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fees {
    /// The balance falls by the amount and the fee (Revolut): each row moves its amount less its fee.
    TakenOff,
    /// The balance falls by the amount alone: the fee is already in it (a net amount).
    Included,
    /// No balance column says which: the amounts are booked as written, the fees not taken off.
    Unchecked,
}

/// Where every physical line of a statement went. The counts add up to `total`: no line is
/// dropped without a word.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LineCount {
    /// The file's lines.
    pub total: usize,
    /// Lines above the header row (the bank's banner: account, period, …).
    pub banner: usize,
    /// The header row (0 for a file without one).
    pub header: usize,
    /// Empty lines, and lines of empty cells.
    pub blank: usize,
    /// Lines with neither a date nor an amount (notes, footers) and `#` comments.
    pub notes: usize,
    /// Rows read; in a plan, the rows to add.
    pub rows: usize,
    /// In a plan: rows already in the ledger.
    pub duplicates: usize,
    /// Summary lines ("Closing balance") and rows that move no money.
    pub skipped: usize,
    /// Lines that could not be read, each in the errors with its reason.
    pub unreadable: usize,
    /// Lines that continue a quoted cell of the line above (a description written over two lines).
    pub continued: usize,
}

impl LineCount {
    /// The sum of every kind of line: `total` when every line is accounted for.
    #[must_use]
    pub fn accounted(&self) -> usize {
        [
            self.banner,
            self.header,
            self.blank,
            self.notes,
            self.rows,
            self.duplicates,
            self.skipped,
            self.unreadable,
            self.continued,
        ]
        .into_iter()
        .fold(0, usize::saturating_add)
    }
}

/// A parsed statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Parsed {
    pub format: Format,
    pub rows: Vec<ParsedRow>,
    pub errors: Vec<RowError>,
    /// Rows that move no money (a zero or missing amount), with the reason; not errors.
    pub skipped: Vec<RowError>,
    /// Where every line of the file went.
    pub lines: LineCount,
    /// The mapping to save with the account when this statement is committed: the one it was read
    /// with, and the order of day and month its dates decided.
    #[serde(default)]
    pub mapping: Mapping,
}

impl Parsed {
    /// A statement of this format with nothing read yet.
    fn new(format: Format) -> Self {
        Self {
            format,
            rows: Vec::new(),
            errors: Vec::new(),
            skipped: Vec::new(),
            lines: LineCount::default(),
            mapping: Mapping::default(),
        }
    }
}

/// How to read a statement.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    pub mapping: Mapping,
    /// The currency of amounts that name none (when unset and nothing in the file names one, the
    /// rows are marked `currency_unstated` and the plan decides).
    pub currency: Option<Currency>,
    /// The order of day and month to take when every date reads either way, and why (a previous
    /// import into the same account); the file's own dates and the mapping's order come first.
    pub date_hint: Option<(DateOrder, String)>,
    /// Rows the balance column refuses, taken in anyway at the figure their person chose (by
    /// line). A line the balance column does not refuse, or refuses with no change to take, is
    /// left as it would be without.
    pub figures: std::collections::BTreeMap<usize, Figure>,
}

const RAW_CLIP: usize = 200;

/// The SHA-256 of a statement file, in hex: what an import batch is known by.
pub fn file_sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

/// Parses a statement's bytes.
pub fn parse(bytes: &[u8], options: &ParseOptions) -> Result<Parsed, ImportError> {
    let decoded = decode(bytes)?;
    let mut layout = detect(&decoded.text, &options.mapping)?;
    let raw_lines = lines_of(&decoded.text);
    let (data, line_count, swallowed) = split_lines(&decoded.text, &raw_lines, &layout);
    let found_blank = find_direction(&mut layout, &data);
    let columns = &layout.columns;
    if swallowed.is_empty() && data.iter().all(|(_, cells)| cells.iter().all(String::is_empty)) {
        return Err(ImportError::NoRows {
            header_line: layout.header_line,
        });
    }

    let mark = decide_decimal_mark(
        data.iter()
            .flat_map(|(_, c)| [columns.amount, columns.debit, columns.credit].map(|i| cell(c, i))),
    );
    let stated = stated_currency(options, &layout, &data);
    let hint = options.date_hint.clone().or_else(|| layout_hint(&layout));
    let (order, order_reason, date_order_assumed) = date_order(
        &data,
        columns.date,
        options.mapping.date_order,
        hint.as_ref(),
        stated.as_ref().map(|(c, _)| *c),
    )?;
    let currency_stated = stated.is_some();
    let default_currency = stated.as_ref().map_or(Currency::INR, |(c, _)| *c);

    let mut parsed = Parsed::new(Format {
        encoding: decoded.encoding,
        delimiter: delimiter_name(layout.delimiter),
        header_line: layout.header_line,
        columns: layout
            .described()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        date_order: order,
        date_order_reason: order_reason,
        date_order_assumed,
        currency_from: stated.map(|(_, from)| from),
        decimal_mark: mark,
        reconciliation: None,
        inverted: options.mapping.invert,
        spending_positive: None,
        mapping_from: None,
        accounts: Vec::new(),
        fees: None,
        account_kind: kind_of_statement(&layout, &raw_lines, &data),
        taken: Vec::new(),
    });
    parsed.lines = line_count;
    parsed.errors = swallowed;
    let describing = describing_columns(&layout);
    let context = RowContext {
        columns,
        describing: &describing,
        mark,
        order,
        default_currency,
        currency_stated,
        blank_direction: blank_direction(&layout, found_blank),
        unmarked_debit: unmarked_debit(&data, columns.amount),
    };
    let marked = data
        .iter()
        .any(|(_, c)| direction_marked(cell(c, columns.amount)));
    let chain = read_rows(&mut parsed, &data, &layout, &context, &raw_lines);
    // The cells are read: what a large statement holds beyond its rows goes before the amounts are
    // settled.
    drop(data);
    settle_amounts(&mut parsed, &layout, &chain, options, &raw_lines, marked);
    Ok(finished(parsed, &options.mapping))
}

/// A line of the file as an error shows it: clipped to [`RAW_CLIP`] characters.
fn raw_line(raw_lines: &[&str], line: usize) -> String {
    raw_lines
        .get(line.saturating_sub(1))
        .map(|l| l.chars().take(RAW_CLIP).collect())
        .unwrap_or_default()
}

/// The errors in line order, the rows, skipped and unreadable lines counted, and the mapping to
/// save: the one asked for, with the order of day and month the dates decided.
fn finished(mut parsed: Parsed, mapping: &Mapping) -> Parsed {
    parsed.mapping = Mapping {
        date_order: (!parsed.format.date_order_assumed).then_some(parsed.format.date_order),
        ..mapping.clone()
    };
    parsed.errors.sort_by_key(|e| e.line);
    parsed.rows.shrink_to_fit();
    parsed.lines.rows = parsed.rows.len();
    parsed.lines.skipped = parsed.skipped.len();
    parsed.lines.unreadable = parsed.errors.len();
    parsed
}

/// The lines of `text`, in a list sized once: a large statement's lines are not copied as the
/// list grows.
#[allow(clippy::naive_bytecount)] // Once per file.
fn lines_of(text: &str) -> Vec<&str> {
    let mut lines = Vec::with_capacity(text.bytes().filter(|b| *b == b'\n').count().saturating_add(1));
    lines.extend(text.lines());
    lines
}

/// A record under the header: its line and its cells.
type DataRecord = (usize, Vec<String>);

/// The records under the header that are read as rows, where every line of the file went so far
/// (the banner, the header, blank lines, comments, lines continuing a quoted cell), and the lines
/// an unterminated quote swallowed — each an error of its own, never a row.
fn split_lines(
    text: &str,
    raw_lines: &[&str],
    layout: &Layout,
) -> (Vec<DataRecord>, LineCount, Vec<RowError>) {
    let mut lines = LineCount {
        total: raw_lines.len(),
        ..LineCount::default()
    };
    let mut covered = vec![false; raw_lines.len()];
    let mut data = Vec::with_capacity(raw_lines.len());
    let mut swallowed = Vec::new();
    let raw = |line: usize| raw_line(raw_lines, line);
    for record in layout::spanned_records(text, layout.delimiter) {
        let span = record.line..=record.last_line.min(raw_lines.len());
        for line in span.clone() {
            if let Some(seen) = covered.get_mut(line.saturating_sub(1)) {
                *seen = true;
            }
        }
        let extra = span.clone().count().saturating_sub(1);
        if record.cells.iter().all(String::is_empty) {
            lines.blank = lines.blank.saturating_add(1);
            lines.continued = lines.continued.saturating_add(extra);
        } else if record.line < layout.header_line || record.line <= layout.skip {
            lines.banner = lines.banner.saturating_add(extra).saturating_add(1);
        } else if record.line == layout.header_line {
            lines.header = lines.header.saturating_add(1);
            lines.continued = lines.continued.saturating_add(extra);
        } else if layout.header_line == 0 && record.cells.first().is_some_and(|c| c.starts_with('#')) {
            lines.notes = lines.notes.saturating_add(extra).saturating_add(1);
        } else if extra > 0 && swallows(&record, raw_lines, layout) {
            let (next, last) = (record.line.saturating_add(1), record.line.saturating_add(extra));
            swallowed.push(RowError {
                line: record.line,
                column: None,
                message: format!(
                    "a quote (\") opened on this line is never closed where the cell ends: it takes in {}, \
                     so none of them is read; close the quote and import again",
                    if extra == 1 {
                        format!("line {next}")
                    } else {
                        format!("lines {next} to {last}")
                    }
                ),
                raw: raw(record.line),
                figures: None,
            });
            for line in next..=last {
                swallowed.push(RowError {
                    line,
                    column: None,
                    message: format!("inside the quote left open on line {}", record.line),
                    raw: raw(line),
                    figures: None,
                });
            }
        } else if extra == 0
            && record.cells.len() < layout.headers.len()
            && raw_lines
                .get(record.line.saturating_sub(1))
                .is_some_and(|text| text.matches('"').count() % 2 == 1)
        {
            // The last line's quote left open: it took in the rest of its own line, delimiters
            // and all, and there was nothing after it to take.
            swallowed.push(RowError {
                line: record.line,
                column: None,
                message:
                    "a quote (\") opened on this line is never closed, so its cells cannot be told apart; \
                          close the quote and import again"
                        .to_owned(),
                raw: raw(record.line),
                figures: None,
            });
        } else {
            lines.continued = lines.continued.saturating_add(extra);
            data.push((record.line, record.cells));
        }
    }
    for (index, seen) in covered.iter().enumerate() {
        if *seen {
            continue;
        }
        if raw_lines.get(index).is_none_or(|l| l.trim().is_empty()) {
            lines.blank = lines.blank.saturating_add(1);
        } else {
            // Every non-blank line is a record; should one ever not be, say so rather than lose it.
            let line = index.saturating_add(1);
            swallowed.push(RowError {
                line,
                column: None,
                message: "this line could not be split into cells".to_owned(),
                raw: raw(line),
                figures: None,
            });
        }
    }
    (data, lines, swallowed)
}

/// Whether a record over several lines is a quote left open rather than a cell written over two
/// lines: it has the wrong number of cells, or a line it took in reads as a row of its own (a date
/// where the date column is).
fn swallows(record: &layout::Record, raw_lines: &[&str], layout: &Layout) -> bool {
    // A row as wide as the header, or one wider with an empty last cell (a delimiter ending
    // every line).
    let width = layout.headers.len();
    let fits = |cells: usize, last: Option<&str>| {
        cells == width || (cells == width.saturating_add(1) && last.is_some_and(|c| c.trim().is_empty()))
    };
    if layout.header_line > 0 && !fits(record.cells.len(), record.cells.last().map(String::as_str)) {
        return true;
    }
    let delimiter = char::from(layout.delimiter);
    (record.line.saturating_add(1)..=record.last_line).any(|line| {
        raw_lines.get(line.saturating_sub(1)).is_some_and(|text| {
            let cells: Vec<&str> = text.split(delimiter).collect();
            fits(cells.len(), cells.last().copied())
                && cells.get(layout.columns.date).is_some_and(|c| {
                    let c = c.trim().trim_matches('"');
                    parse_date(c, DateOrder::DayFirst).is_ok() || parse_date(c, DateOrder::MonthFirst).is_ok()
                })
        })
    })
}

/// "," ";" "|" or "tab".
fn delimiter_name(delimiter: u8) -> String {
    match delimiter {
        b'\t' => "tab".to_owned(),
        other => char::from(other).to_string(),
    }
}
