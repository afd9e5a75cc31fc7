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
mod date;
mod decode;
mod kept;
mod layout;
mod mapping;
pub(crate) mod plan;
mod preview;
mod reconcile;
mod saved;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

pub use self::{
    amount::{DecimalMark, decide_decimal_mark, parse_amount},
    card::plan_in_words,
    date::{DateOrder, decide_order, parse_date},
    decode::{Decoded, MAX_BYTES, decode},
    kept::{MAX_KEPT_PLANS, forget_kept_plans, keep_plan, reusable_plan},
    layout::{Columns, Layout, Mapping, Record, Role, detect, spanned_records},
    mapping::{MappingFile, read_mapping},
    plan::{
        BalanceCheck, CommitReport, DuplicateRow, Elsewhere, Opening, Plan, PlannedAccount, PlannedRow,
        PlannedTransfer, RowSummary, Target, account_for, answer, commit, commit_with, neutralise_formula,
        plan, plan_into, transit_account,
    },
    preview::{END_ROWS, balance_check, layout_in_words, preview},
    reconcile::{BalanceKind, BalancePosition, Closing, Reconciliation, TimeOrder},
    saved::{SavedMapping, parse_with_saved, save_mapping, saved_mapping},
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// The amount the row states.
    Amount,
    /// The change of the balance column across the row.
    Balance,
}

/// A row the balance column refused, taken in at the figure its person chose: recorded with the
/// plan, so the import says which rows were booked on a person's word and at what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TakenFigure {
    pub line: usize,
    pub take: Figure,
    #[serde(flatten)]
    pub figures: Figures,
}

/// One row read from a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindHint {
    pub kind: crate::accounts::AccountKind,
    pub why: String,
}

/// How a statement's fee column moves the money, as its balance column says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// The chain the balance column is checked along: one link per row read, in file order (none
/// without a balance column), and beside each link the fee of its row's fee column, if any.
#[derive(Debug, Default)]
struct Chain {
    links: Vec<reconcile::Link>,
    fees: Vec<i64>,
}

/// Reads the records under the header into the statement's rows, skipped lines and errors, and
/// returns the chain of their balances.
fn read_rows(
    parsed: &mut Parsed,
    data: &[DataRecord],
    layout: &Layout,
    context: &RowContext<'_>,
    raw_lines: &[&str],
) -> Chain {
    let columns = &layout.columns;
    let mut links: Vec<reconcile::Link> =
        Vec::with_capacity(if columns.balance.is_some() { data.len() } else { 0 });
    let mut fees: Vec<i64> = Vec::new();
    parsed.rows.reserve_exact(data.len());
    let mut broken = false;
    // The account column's values, in the order met: a row's place in it is its series.
    let mut accounts: Vec<&str> = Vec::new();
    for (line, cells) in data {
        let fail = |column: Option<usize>, message: String| RowError {
            line: *line,
            column: column.and_then(|i| layout.headers.get(i).cloned()),
            message,
            raw: raw_line(raw_lines, *line),
            figures: None,
        };
        match passed_over(cells, layout, context.order) {
            Some(PassedOver::Note) => {
                parsed.lines.notes = parsed.lines.notes.saturating_add(1);
                continue;
            }
            Some(PassedOver::Skipped(column, why)) => {
                parsed.skipped.push(fail(column, why));
                continue;
            }
            None => {}
        }
        let series = series_of(&mut accounts, cell(cells, columns.account));
        match read_row(cells, context) {
            Ok(Some(row)) => {
                // A fee is money out whichever sign the file gives it.
                let fee = parse_amount(cell(cells, columns.fee), context.mark, row.currency)
                    .ok()
                    .flatten()
                    .map_or(0, |f| f.minor.saturating_abs());
                if columns.balance.is_some() {
                    let mut link = link(cells, context, &row, *line, std::mem::take(&mut broken));
                    link.series = series;
                    links.push(link);
                    if columns.fee.is_some() {
                        fees.push(fee);
                    }
                } else if fee != 0 {
                    parsed.format.fees = Some(Fees::Unchecked);
                }
                parsed.rows.push(ParsedRow { line: *line, ..row });
            }
            Ok(None) => {
                // A row that moves no money must leave the balance where it was: it joins the
                // chain with an amount of nothing.
                if let Some(link) = still_link(cells, context, *line, broken) {
                    broken = false;
                    links.push(reconcile::Link { series, ..link });
                    if columns.fee.is_some() {
                        fees.push(0);
                    }
                }
                parsed.skipped.push(fail(
                    [columns.amount, columns.debit].into_iter().flatten().next(),
                    "moves no money (zero or no amount)".to_owned(),
                ));
            }
            Err((column, message)) => {
                broken = true;
                parsed.errors.push(fail(column, message));
            }
        }
    }
    if accounts.len() > MAX_ACCOUNTS {
        for link in &mut links {
            link.series = 0;
        }
    } else if accounts.len() > 1 {
        parsed.format.accounts = accounts.iter().map(|a| (*a).to_owned()).collect();
    }
    Chain { links, fees }
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

/// The amounts as booked: checked against the balance column when there is one, turned to money
/// out when the file's words say spending is written as positive, then `invert` on top of the
/// file's own direction and the balance's signs, never instead.
fn settle_amounts(
    parsed: &mut Parsed,
    layout: &Layout,
    chain: &Chain,
    options: &ParseOptions,
    raw_lines: &[&str],
    marked: bool,
) {
    let invert = options.mapping.invert;
    if let Some(balance_column) = layout.columns.balance {
        let header = layout
            .headers
            .get(balance_column)
            .cloned()
            .unwrap_or_else(|| format!("column {}", balance_column.saturating_add(1)));
        apply_reconciliation(parsed, chain, &header, raw_lines, &options.figures);
    }
    // The card rule only where nothing else says which way money went: no balance, and no amount
    // written with its own direction (CR/DR, a plus sign, parentheses).
    let card = (parsed.format.reconciliation.is_none() && !marked)
        .then(|| card_statement(layout, raw_lines, &parsed.rows))
        .flatten();
    let spending = spending_positive(layout).or(card);
    if let Some(why) = &spending {
        flip_signs(parsed);
        parsed.format.spending_positive = Some(if invert {
            // --invert says the same as the file's words: the signs are flipped once, not twice.
            format!("{why}; --invert asks the same, so the signs are flipped once")
        } else {
            why.clone()
        });
    }
    if invert && spending.is_none() {
        flip_signs(parsed);
    } else if invert {
        parsed.format.inverted = false;
    }
}

impl Parsed {
    /// The figures of rows the balance column refused and of rows taken in anyway.
    pub(crate) fn figures_mut(&mut self) -> impl Iterator<Item = &mut Figures> {
        self.errors
            .iter_mut()
            .filter_map(|e| e.figures.as_mut())
            .chain(self.format.taken.iter_mut().map(|t| &mut t.figures))
    }
}

/// Every sign turned over: the rows', and the figures of rows refused or taken by the balance
/// column, so those read as the rows are booked.
fn flip_signs(parsed: &mut Parsed) {
    for row in &mut parsed.rows {
        row.amount_minor = flipped(row.amount_minor);
    }
    for figures in parsed.figures_mut() {
        *figures = figures.flipped();
    }
}

/// Whether the amount cells mark only money in (`CR`), never money out (`DR`, a minus sign,
/// parentheses): then an unmarked amount is money out.
fn unmarked_debit(data: &[DataRecord], amount: Option<usize>) -> bool {
    let mut credit = false;
    for (_, cells) in data {
        let text = cell(cells, amount).trim();
        let upper = text.to_uppercase();
        if upper.ends_with("DR") || text.starts_with(['-', '−', '(']) || text.ends_with('-') {
            return false;
        }
        credit |= upper.ends_with("CR");
    }
    credit
}

/// Whether an amount cell says its own direction: `CR`/`DR` after it, a plus sign, parentheses.
fn direction_marked(cell: &str) -> bool {
    let cell = cell.trim();
    let upper = cell.to_uppercase();
    upper.ends_with("CR")
        || upper.ends_with("DR")
        || cell.starts_with('+')
        || (cell.starts_with('(') && cell.ends_with(')'))
}

/// Checks the rows against the balance column: rows that do not reconcile leave the rows for the
/// errors (never booked), and signs taken from the balance are applied.
///
/// A fee column is read both ways — the fee already in the amount, and the fee on top of it — and
/// the way under which fewer rows fail to reconcile is taken.
fn apply_reconciliation(
    parsed: &mut Parsed,
    chain: &Chain,
    header: &str,
    raw_lines: &[&str],
    choices: &std::collections::BTreeMap<usize, Figure>,
) {
    let links = chain.links.as_slice();
    let mut verdict = reconcile::reconcile(header, links);
    if chain.fees.iter().any(|f| *f != 0) {
        let less: Vec<reconcile::Link> = links
            .iter()
            .zip(&chain.fees)
            .map(|(link, fee)| reconcile::Link {
                amount_minor: link.amount_minor.saturating_sub(*fee),
                ..*link
            })
            .collect();
        let taken_off = reconcile::reconcile(header, &less);
        let refused = |v: &Option<reconcile::Verdict>| v.as_ref().map_or(usize::MAX, |v| v.refused.len());
        parsed.format.fees = Some(match (refused(&taken_off), refused(&verdict)) {
            (usize::MAX, usize::MAX) => Fees::Unchecked,
            (less, plain) if less < plain => {
                verdict = taken_off;
                Fees::TakenOff
            }
            _ => Fees::Included,
        });
    }
    let Some(verdict) = verdict else {
        return;
    };
    // The links of rows that move money, in order, are the rows; links of nothing are skipped lines.
    let moving = links
        .iter()
        .zip(&verdict.amounts)
        .filter(|(link, _)| link.amount_minor != 0);
    for (row, (_, amount)) in parsed.rows.iter_mut().zip(moving) {
        row.amount_minor = *amount;
    }
    let refused: std::collections::BTreeMap<usize, &reconcile::Refused> = verdict
        .refused
        .iter()
        .filter_map(|r| Some((links.get(r.index)?.line, r)))
        .collect();
    // In place: a copy of every row would double a large statement's memory.
    let errors = &mut parsed.errors;
    let skipped = &mut parsed.skipped;
    let taken = &mut parsed.format.taken;
    parsed.rows.retain_mut(|row| {
        let Some(refusal) = refused.get(&row.line) else {
            return true;
        };
        let figures = refusal.balance_change.map(|balance_minor| Figures {
            amount_minor: row.amount_minor,
            balance_minor,
            currency: row.currency,
            currency_unstated: row.currency_unstated,
        });
        let raw = raw_line(raw_lines, row.line);
        // The person said which figure is right: the row is booked at it, and the plan says so.
        if let (Some(figures), Some(&take)) = (figures, choices.get(&row.line)) {
            taken.push(TakenFigure {
                line: row.line,
                take,
                figures,
            });
            row.amount_minor = figures.of(take);
            if row.amount_minor != 0 {
                return true;
            }
            skipped.push(RowError {
                line: row.line,
                column: Some(header.to_owned()),
                message: "moves no money, as its balance says (taken at the balance's figure)".to_owned(),
                raw,
                figures: None,
            });
            return false;
        }
        errors.push(RowError {
            line: row.line,
            column: Some(header.to_owned()),
            message: refusal.message.clone(),
            raw,
            figures,
        });
        false
    });
    // A row of nothing whose balance moved is not nothing: unreadable, with the figures. (A row
    // taken at a balance that did not move is nothing, on its person's word.)
    let taken = &parsed.format.taken;
    parsed.skipped.retain(|skipped| {
        let Some(refusal) = refused.get(&skipped.line) else {
            return true;
        };
        if taken.iter().any(|t| t.line == skipped.line) {
            return true;
        }
        errors.push(RowError {
            line: skipped.line,
            column: Some(header.to_owned()),
            message: format!("{}, though the row moves no money", refusal.message),
            raw: skipped.raw.clone(),
            figures: None,
        });
        false
    });
    parsed.errors.sort_by_key(|e| e.line);
    parsed.skipped.sort_by_key(|e| e.line);
    let mut reconciliation = verdict.reconciliation;
    // The closing balance only when every row reconciled: an opening balance is booked from it.
    if reconciliation.reconciled == reconciliation.checked && verdict.refused.is_empty() {
        reconciliation.closing = reconcile::closing(links, &verdict.amounts, &reconciliation);
    }
    parsed.format.reconciliation = Some(reconciliation);
}

/// The order of day and month a known exporter's layout implies: Mint, a US service, writes month
/// first (its header: Date, Description, Original Description, Amount, Transaction Type, …).
fn layout_hint(layout: &Layout) -> Option<(DateOrder, String)> {
    let names: Vec<String> = layout.headers.iter().map(|h| layout::normalise(h)).collect();
    let has = |name: &str| names.iter().any(|n| n == name);
    if has("original description") && has("transaction type") && has("account name") {
        return Some((
            DateOrder::MonthFirst,
            "month-first assumed from the layout, which is Mint's (a US service): every date could be read either way"
                .to_owned(),
        ));
    }
    // Headers in a language whose countries write the day first.
    let header = layout.headers.iter().find(|h| {
        let name = layout::normalise(h);
        DAY_FIRST_WORDS
            .iter()
            .any(|w| name.split(' ').any(|part| part == *w))
    })?;
    Some((
        DateOrder::DayFirst,
        format!(
            "day-first assumed from the header's language (“{}”): every date could be read either way",
            header.trim()
        ),
    ))
}

/// Header words of languages whose countries write the day before the month (German, Dutch,
/// French, Spanish, Italian, Portuguese, Hungarian, Czech, Polish).
const DAY_FIRST_WORDS: &[&str] = &[
    "datum",
    "buchung",
    "buchungstag",
    "betrag",
    "bedrag",
    "omschrijving",
    "montant",
    "libellé",
    "fecha",
    "importe",
    "importo",
    "data",
    "valor",
    "összeg",
    "částka",
    "kwota",
    "verwendungszweck",
    "umsatz",
];

/// Why the file's amounts are spending written as positive, when its own words say so: an order
/// history's amount column is what was paid ("Item Total"), never money in.
fn spending_positive(layout: &Layout) -> Option<String> {
    let header = layout.columns.amount.and_then(|i| layout.headers.get(i))?;
    matches!(layout::normalise(header).as_str(), "item total" | "order total")
        .then(|| format!("“{header}” is what was paid for an order"))
}

/// Why a statement is a card's that writes purchases as positive amounts: its banner or header
/// says card ("Credit Card", "Kreditkarte", "carte"), its amounts come from one signed column with
/// no direction beside it, and most of them are positive — on an account, most movements are
/// money out. A balance column decides signs itself, so this is asked only without one.
fn card_statement(layout: &Layout, raw_lines: &[&str], rows: &[ParsedRow]) -> Option<String> {
    let columns = &layout.columns;
    if columns.amount.is_none() || columns.direction.is_some() || rows.len() < 2 {
        return None;
    }
    let words = raw_lines.iter().take(layout.header_line).find_map(|line| {
        let lower = line.to_lowercase();
        CARD_WORDS
            .iter()
            .find(|w| lower.contains(*w))
            .map(|w| (*w, line.trim()))
    })?;
    let positive = rows.iter().filter(|r| r.amount_minor > 0).count();
    (positive.saturating_mul(5) >= rows.len().saturating_mul(4)).then(|| {
        format!(
            "the file says it is a card statement (“{}”) and writes {positive} of its {} amounts as positive",
            words.1.chars().take(60).collect::<String>(),
            rows.len()
        )
    })
}

/// What kind of account the statement is of, when it says: a type column whose rows are a
/// card's (Sale with Payment or Return), or a banner naming a credit card.
fn kind_of_statement(layout: &Layout, raw_lines: &[&str], data: &[DataRecord]) -> Option<KindHint> {
    let card = crate::accounts::AccountKind::Card;
    if let Some(column) = layout
        .headers
        .iter()
        .position(|h| matches!(layout::normalise(h).as_str(), "type" | "transaction type"))
    {
        let mut seen = std::collections::BTreeSet::new();
        for (_, cells) in data {
            let value = cell(cells, Some(column)).trim().to_lowercase();
            if matches!(value.as_str(), "sale" | "payment" | "return") {
                seen.insert(value);
            }
        }
        if seen.contains("sale") && seen.len() > 1 {
            let header = layout.headers.get(column).map_or("", |h| h.trim());
            return Some(KindHint {
                kind: card,
                why: format!(
                    "its “{header}” column has {} rows, as a card's statement does",
                    seen.into_iter().collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    raw_lines.iter().take(layout.header_line).find_map(|line| {
        let lower = line.to_lowercase();
        CARD_WORDS.iter().find(|w| lower.contains(*w)).map(|w| KindHint {
            kind: card,
            why: format!("its banner says “{w}”"),
        })
    })
}

/// Words by which a statement says it is a card's.
const CARD_WORDS: &[&str] = &[
    "credit card",
    "card statement",
    "kreditkarte",
    "carte de crédit",
    "tarjeta de crédito",
];

/// The state cell of a row the bank has not booked ("PENDING", "declined", "reverted"), if the
/// statement has a `State` column (Revolut's) and this row is one. A `Status` column is not
/// enough: PayPal marks as "Pending" the bank deposits that fund a payment, which do move money.
fn unbooked_state<'a>(layout: &Layout, cells: &'a [String]) -> Option<&'a str> {
    let column = layout
        .headers
        .iter()
        .position(|h| layout::normalise(h) == "state")?;
    let state = cells.get(column)?.trim();
    matches!(
        state.to_lowercase().as_str(),
        "pending" | "declined" | "reverted" | "failed" | "cancelled" | "canceled"
    )
    .then_some(state)
}

/// What a blank cell of the direction column means: what its cells showed, else money out for a
/// column named as a sign flag (a card's `BillingAmountSign`, blank for purchases).
fn blank_direction(layout: &Layout, found: Option<Blank>) -> Blank {
    let named_sign_flag = layout
        .columns
        .direction
        .and_then(|i| layout.headers.get(i))
        .is_some_and(|h| layout::normalise(h).contains("sign"));
    match found {
        Some(blank) => blank,
        None if named_sign_flag => Blank::Debit,
        None => Blank::AsWritten,
    }
}

/// Words a direction column says money went out with, and came in with.
const DEBIT_WORDS: &[&str] = &["af", "debit", "dr", "d", "withdrawal", "s", "soll", "debet"];
const CREDIT_WORDS: &[&str] = &["bij", "credit", "cr", "c", "deposit", "h", "haben"];

/// What a blank cell of a direction column means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blank {
    /// Nothing: the amount's own sign stands.
    AsWritten,
    /// Money out: the column marks only credits ("CR") and leaves debits blank.
    Debit,
    /// Money in: the column marks only debits ("DR").
    Credit,
}

/// A direction column found from its cells when no header names one: a column no other role
/// uses whose cells are all direction words — both a debit and a credit word (Mint's
/// `Transaction Type` of debit/credit), or only `CR` (or only `DR`) beside blanks (a card
/// statement's unnamed CR column). Returns what its blank cells mean.
fn find_direction(layout: &mut Layout, data: &[(usize, Vec<String>)]) -> Option<Blank> {
    let columns = &layout.columns;
    if columns.amount.is_none() || columns.direction.is_some() {
        return None;
    }
    let used = [
        Some(columns.date),
        columns.amount,
        columns.currency,
        columns.category,
        columns.balance,
    ];
    let width = data.iter().map(|(_, cells)| cells.len()).max().unwrap_or(0);
    for column in (0..width).filter(|c| !used.contains(&Some(*c))) {
        let mut words = std::collections::BTreeSet::new();
        let mut blanks = 0usize;
        for (_, cells) in data {
            match cells.get(column).map(|c| c.trim().to_lowercase()) {
                Some(word) if !word.is_empty() => {
                    words.insert(word);
                }
                _ => blanks = blanks.saturating_add(1),
            }
        }
        if words.is_empty()
            || !words
                .iter()
                .all(|w| DEBIT_WORDS.contains(&w.as_str()) || CREDIT_WORDS.contains(&w.as_str()))
        {
            continue;
        }
        let debit = words.iter().any(|w| DEBIT_WORDS.contains(&w.as_str()));
        let credit = words.iter().any(|w| CREDIT_WORDS.contains(&w.as_str()));
        let only = |word: &str| words.len() == 1 && words.contains(word);
        let blank = if debit && credit {
            Blank::AsWritten
        } else if only("cr") && blanks > 0 {
            Blank::Debit
        } else if only("dr") && blanks > 0 {
            Blank::Credit
        } else {
            continue;
        };
        layout.columns.direction = Some(column);
        layout.columns.description.retain(|c| *c != column);
        return Some(blank);
    }
    None
}

/// A row as the balance chain sees it: its amount as the file has it (`invert` comes last), and the
/// balance cell beside it when that reads as money of the row's currency.
fn link(
    cells: &[String],
    context: &RowContext<'_>,
    row: &ParsedRow,
    line: usize,
    broken_before: bool,
) -> reconcile::Link {
    let balance = parse_amount(cell(cells, context.columns.balance), context.mark, row.currency)
        .ok()
        .flatten()
        .filter(|b| b.currency.is_none_or(|c| c == row.currency))
        .map(|b| b.minor);
    reconcile::Link {
        line,
        amount_minor: row.amount_minor,
        balance_minor: balance,
        broken_before,
        date: Some(row.date),
        series: 0,
    }
}

/// The place of a row's account among the accounts met so far (0 for a file without an account
/// column). Past [`MAX_ACCOUNTS`] no more are taken in: the caller then chains every row as one.
fn series_of<'a>(accounts: &mut Vec<&'a str>, account: &'a str) -> usize {
    if account.is_empty() {
        return 0;
    }
    if let Some(found) = accounts.iter().position(|a| *a == account) {
        return found;
    }
    if accounts.len() <= MAX_ACCOUNTS {
        accounts.push(account);
    }
    accounts.len().saturating_sub(1)
}

/// The most accounts one file is taken to hold: a column with more holds the other party's
/// accounts, not the file's own.
const MAX_ACCOUNTS: usize = 20;

/// A record that is no transaction to read.
enum PassedOver {
    /// A note, a card number, a footer: no date and no money.
    Note,
    /// A summary line or a row the bank has not booked: the column to name, and why.
    Skipped(Option<usize>, String),
}

/// Whether a record under the header is passed over rather than read as a row, and how.
fn passed_over(cells: &[String], layout: &Layout, order: DateOrder) -> Option<PassedOver> {
    let columns = &layout.columns;
    let date_cell = cell(cells, Some(columns.date));
    let amount_present = [columns.amount, columns.debit, columns.credit]
        .iter()
        .any(|i| !cell(cells, *i).is_empty());
    if !amount_present && (date_cell.is_empty() || parse_date(date_cell, order).is_err()) {
        return Some(PassedOver::Note);
    }
    if !date_cell.chars().any(|c| c.is_ascii_digit()) && parse_date(date_cell, order).is_err() {
        // "Transactions Total", "Closing balance": a label where the date would be.
        return Some(PassedOver::Skipped(
            Some(columns.date),
            format!("a summary line ({date_cell:?}), not a transaction"),
        ));
    }
    unbooked_state(layout, cells).map(|state| {
        PassedOver::Skipped(
            None,
            format!("{state}: the bank has not booked it, so no money moved yet"),
        )
    })
}

/// A row that moves no money as the balance chain sees it: an amount of nothing, and the balance
/// beside it — when there is a balance column and its cell reads as a balance of the statement's
/// currency (a blank one would only break the chain around it).
fn still_link(
    cells: &[String],
    context: &RowContext<'_>,
    line: usize,
    broken_before: bool,
) -> Option<reconcile::Link> {
    context.columns.balance?;
    let balance = parse_amount(
        cell(cells, context.columns.balance),
        context.mark,
        context.default_currency,
    )
    .ok()
    .flatten()
    .filter(|b| b.currency.is_none_or(|c| c == context.default_currency))?;
    Some(reconcile::Link {
        line,
        amount_minor: 0,
        balance_minor: Some(balance.minor),
        broken_before,
        date: parse_date(cell(cells, Some(context.columns.date)), context.order).ok(),
        series: 0,
    })
}

/// The currency the statement states, and where it says so: the one asked for, else an amount
/// header's code, else the first currency cell of the rows.
fn stated_currency(
    options: &ParseOptions,
    layout: &Layout,
    data: &[(usize, Vec<String>)],
) -> Option<(Currency, String)> {
    if let Some(currency) = options.currency {
        return Some((currency, format!("{currency}, as asked")));
    }
    if let Some(currency) = header_currency(layout) {
        return Some((currency, format!("{currency}, from an amount column's header")));
    }
    data.iter()
        .find_map(|(_, c)| Currency::parse(cell(c, layout.columns.currency)).ok())
        .map(|currency| (currency, "the currency column".to_owned()))
}

/// The order of day and month: the mapping's when it names one; else what the dates show; else,
/// when no date decides, a hint from the currency (a USD statement writes month first) or the
/// day-first default — flagged as assumed either way.
fn date_order(
    data: &[(usize, Vec<String>)],
    date_column: usize,
    given: Option<DateOrder>,
    hint: Option<&(DateOrder, String)>,
    currency: Option<Currency>,
) -> Result<(DateOrder, String, bool), ImportError> {
    if let Some(order) = given {
        return Ok((order, format!("{}, as the mapping says", order.name()), false));
    }
    let (order, reason) =
        decide_order(data.iter().map(|(_, c)| cell(c, Some(date_column)))).map_err(ImportError::Dates)?;
    if !reason.contains("assumed") {
        return Ok((order, reason, false));
    }
    if let Some((order, why)) = hint {
        return Ok((*order, why.clone(), true));
    }
    if currency == Some(Currency::USD) {
        return Ok((
            DateOrder::MonthFirst,
            "month-first assumed from the currency (USD): every date could be read either way".to_owned(),
            true,
        ));
    }
    Ok((order, reason, true))
}

/// The currency an amount header names: a code it ends with ("Amount (EUR)"), the word for
/// rupees ("Amount(in Rs)"), or a symbol that belongs to one currency ("Betrag €"; not `$`, which
/// several share).
fn header_currency(layout: &Layout) -> Option<Currency> {
    let columns = &layout.columns;
    [columns.amount, columns.debit, columns.credit]
        .into_iter()
        .flatten()
        .filter_map(|i| layout.headers.get(i))
        .find_map(|h| {
            let name = layout::normalise(h);
            let last = name.rsplit_once(' ').map_or(name.as_str(), |(_, w)| w);
            if layout::KNOWN_CODES.contains(&last) {
                return Currency::parse(last).ok();
            }
            if matches!(last, "rs" | "rupees" | "inr") {
                return Some(Currency::INR);
            }
            [
                ('₹', Currency::INR),
                ('€', Currency::EUR),
                ('£', Currency::GBP),
                ('¥', Currency::JPY),
            ]
            .into_iter()
            .find_map(|(symbol, currency)| h.contains(symbol).then_some(currency))
        })
}

/// Where a row's description comes from: its description columns, then any column no role uses.
fn describing_columns(layout: &Layout) -> Vec<usize> {
    let columns = &layout.columns;
    let used: Vec<usize> = [
        Some(columns.date),
        columns.amount,
        columns.debit,
        columns.credit,
        columns.direction,
        columns.currency,
        columns.category,
        columns.balance,
        columns.fee,
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut describing = columns.description.clone();
    for i in 0..layout.headers.len() {
        if !used.contains(&i) && !describing.contains(&i) {
            describing.push(i);
        }
    }
    describing
}

fn cell(cells: &[String], i: Option<usize>) -> &str {
    i.and_then(|i| cells.get(i)).map_or("", String::as_str)
}

type CellError = (Option<usize>, String);

/// What every row of one file is read with.
struct RowContext<'a> {
    columns: &'a Columns,
    describing: &'a [usize],
    mark: DecimalMark,
    order: DateOrder,
    default_currency: Currency,
    /// Whether `default_currency` was stated (by the options, a header or a currency column).
    currency_stated: bool,
    /// What a blank cell of the direction column means.
    blank_direction: Blank,
    /// The amounts mark only money in, with `CR` after them, and write no sign: an unmarked one is
    /// money out (a card statement's purchases beside its `1,234.56 CR` payments).
    unmarked_debit: bool,
}

// A parsed amount's magnitude is at most `i64::MAX` (`Money::parse_decimal` refuses more), so
// turning its sign saturates nothing: these are exact on every amount the parser gives.

/// The amount as money out, whatever sign the file wrote it with.
fn money_out(minor: i64) -> i64 {
    minor.saturating_abs().saturating_neg()
}

/// The amount as money in, whatever sign the file wrote it with.
fn money_in(minor: i64) -> i64 {
    minor.saturating_abs()
}

/// The amount with its sign turned: a file that writes spending as positive.
fn flipped(minor: i64) -> i64 {
    minor.saturating_neg()
}

/// Reads one data row: `Ok(None)` for a row that moves no money.
fn read_row(cells: &[String], context: &RowContext<'_>) -> Result<Option<ParsedRow>, CellError> {
    let columns = context.columns;
    let cell = |i: Option<usize>| i.and_then(|i| cells.get(i)).map_or("", String::as_str);
    let date = parse_date(cell(Some(columns.date)), context.order).map_err(|e| (Some(columns.date), e))?;
    let description = context
        .describing
        .iter()
        .map(|i| cell(Some(*i)))
        .find(|d| d.chars().any(char::is_alphabetic))
        .map_or_else(
            || "(no description)".to_owned(),
            |d| d.split_whitespace().collect::<Vec<_>>().join(" "),
        );
    let row_currency = match cell(columns.currency) {
        "" => None,
        code => Some(Currency::parse(code).map_err(|e| (columns.currency, e.to_string()))?),
    };
    let currency = row_currency.unwrap_or(context.default_currency);
    let amount = |i: Option<usize>| parse_amount(cell(i), context.mark, currency).map_err(|e| (i, e));

    let (minor, named) = if columns.amount.is_some() {
        let Some(parsed) = amount(columns.amount)? else {
            return Ok(None);
        };
        let minor = match cell(columns.direction).to_lowercase().as_str() {
            word if DEBIT_WORDS.contains(&word) => money_out(parsed.minor),
            word if CREDIT_WORDS.contains(&word) => money_in(parsed.minor),
            "" if context.blank_direction == Blank::Debit => money_out(parsed.minor),
            "" if context.blank_direction == Blank::Credit => money_in(parsed.minor),
            _ if context.unmarked_debit && !cell(columns.amount).to_uppercase().ends_with("CR") => {
                money_out(parsed.minor)
            }
            _ => parsed.minor,
        };
        (minor, parsed.currency)
    } else {
        let debit = amount(columns.debit)?.filter(|a| a.minor != 0);
        let credit = amount(columns.credit)?.filter(|a| a.minor != 0);
        match (debit, credit) {
            // A money-out column with no money-in column beside it is a signed amount, spending
            // positive: a negative figure in it is money in (a card's payment).
            (Some(d), None) if columns.credit.is_none() => (flipped(d.minor), d.currency),
            (Some(d), None) => (money_out(d.minor), d.currency),
            (None, Some(c)) => (money_in(c.minor), c.currency),
            (Some(_), Some(_)) => {
                return Err((columns.debit, "both a debit and a credit on one row".to_owned()));
            }
            (None, None) => return Ok(None),
        }
    };
    if minor == 0 {
        return Ok(None);
    }
    if let (Some(column), Some(cell_currency)) = (row_currency, named)
        && column != cell_currency
    {
        return Err((
            columns.currency,
            format!("the currency column says {column} but the amount is written in {cell_currency}"),
        ));
    }
    Ok(Some(ParsedRow {
        line: 0,
        date,
        description,
        amount_minor: minor,
        currency: row_currency.or(named).unwrap_or(currency),
        category: Some(cell(columns.category).to_owned()).filter(|c| !c.is_empty()),
        currency_unstated: row_currency.is_none() && named.is_none() && !context.currency_stated,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text to the bytes of one encoding.
    type Encode = fn(&str) -> Vec<u8>;

    fn parse_text(text: &str) -> Parsed {
        parse(text.as_bytes(), &ParseOptions::default()).unwrap()
    }

    #[test]
    fn a_plain_statement() {
        let parsed = parse_text(
            "date,description,amount,category\n2025-01-01,SALARY,185000.00,Salary\n2025-01-02,=HYPERLINK(\"x\"),-649.00,\n",
        );
        assert_eq!(parsed.rows.len(), 2);
        assert_eq!(parsed.rows[0].amount_minor, 18_500_000);
        assert_eq!(
            parsed.rows[1].description, "=HYPERLINK(\"x\")",
            "stored as the text it is"
        );
        assert_eq!(parsed.rows[0].category.as_deref(), Some("Salary"));
        assert_eq!(parsed.rows[1].line, 3);
        assert!(parsed.errors.is_empty());
    }

    #[test]
    fn a_fee_beside_the_amount_is_money_out_when_the_balance_shows_it() {
        // Revolut's layout: the balance falls by the amount and the fee.
        let revolut = "Type,Product,Started Date,Completed Date,Description,Amount,Fee,Currency,State,Balance\n\
            TOPUP,Current,2022-01-01 10:00:00,2022-01-01 10:00:01,Top-up,100.00,0.00,EUR,COMPLETED,100.00\n\
            ATM,Current,2022-01-02 10:00:00,2022-01-02 10:00:01,Cash,-20.00,1.00,EUR,COMPLETED,79.00\n\
            EXCHANGE,Current,2022-01-03 10:00:00,2022-01-03 10:00:01,To USD,-10.00,0.50,EUR,COMPLETED,68.50\n";
        let parsed = parse_text(revolut);
        assert_eq!(
            parsed.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
            [10_000, -2_100, -1_050]
        );
        let reconciliation = parsed.format.reconciliation.as_ref().unwrap();
        assert_eq!((reconciliation.checked, reconciliation.reconciled), (2, 2));
        assert_eq!(parsed.format.fees, Some(Fees::TakenOff));
        assert!(
            preview::layout_in_words(&parsed.format)
                .contains("less the fee in “Fee” (the balance falls by both)"),
            "{}",
            preview::layout_in_words(&parsed.format)
        );
        // A net amount (the fee already in it) as the balance shows: the fee is not taken twice.
        let net = "Date,Description,Fees,Amount,Balance\n2014-04-14,BOUGHT,7.95,-4925.45,25674.63\n\
                   2014-05-08,BOUGHT,7.95,-9580.26,16094.37\n2014-05-09,SOLD,7.95,1000.00,17094.37\n";
        let parsed = parse_text(net);
        assert_eq!(
            parsed.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
            [-492_545, -958_026, 100_000]
        );
        assert_eq!(parsed.format.fees, Some(Fees::Included));
        // Without a balance nothing says which: the amounts as written, and the preview says so.
        let parsed = parse_text("Date,Description,Amount,Fee\n2022-01-02,Cash,-20.00,1.00\n");
        assert_eq!(parsed.rows[0].amount_minor, -2_000);
        assert_eq!(parsed.format.fees, Some(Fees::Unchecked));
        assert!(preview::layout_in_words(&parsed.format).contains("the fees in “Fee” are not taken off"));
    }

    /// A statement whose line 4 states −21.00 where its balance fell by 12.00, and whose line 6
    /// states −7.00 where its balance did not move.
    const DISAGREEING: &str = "Date,Description,Amount,Balance\n\
        2025-07-01,Salary,100.00,1100.00\n\
        2025-07-02,Coffee,-5.00,1095.00\n\
        2025-07-03,Groceries,-21.00,1083.00\n\
        2025-07-04,Rent,-50.00,1033.00\n\
        2025-07-05,Ghost,-7.00,1033.00\n\
        2025-07-06,Book,-10.00,1023.00\n";

    fn with_figures(invert: bool, figures: &[(usize, Figure)]) -> Parsed {
        let options = ParseOptions {
            currency: Some(Currency::EUR),
            mapping: Mapping {
                invert,
                ..Mapping::default()
            },
            figures: figures.iter().copied().collect(),
            ..ParseOptions::default()
        };
        parse(DISAGREEING.as_bytes(), &options).unwrap()
    }

    fn amount_of(parsed: &Parsed, line: usize) -> Option<i64> {
        parsed
            .rows
            .iter()
            .find(|r| r.line == line)
            .map(|r| r.amount_minor)
    }

    #[test]
    fn a_row_the_balance_refuses_carries_both_figures() {
        let parsed = with_figures(false, &[]);
        let refused: Vec<(usize, Option<Figures>)> =
            parsed.errors.iter().map(|e| (e.line, e.figures)).collect();
        let figures = |amount_minor, balance_minor| {
            Some(Figures {
                amount_minor,
                balance_minor,
                currency: Currency::EUR,
                currency_unstated: false,
            })
        };
        assert_eq!(refused, [(4, figures(-2_100, -1_200)), (6, figures(-700, 0))]);
        assert_eq!(parsed.rows.len(), 4);
        assert!(parsed.format.taken.is_empty());
    }

    #[test]
    fn a_refused_row_is_taken_in_at_the_figure_chosen_and_recorded() {
        // Line 3 reconciles: a figure named for it changes nothing.
        let parsed = with_figures(false, &[(4, Figure::Balance), (3, Figure::Amount)]);
        assert_eq!(amount_of(&parsed, 4), Some(-1_200));
        assert_eq!(amount_of(&parsed, 3), Some(-500));
        assert_eq!(parsed.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [6]);
        assert_eq!(parsed.format.taken.len(), 1);
        let taken = parsed.format.taken[0];
        assert_eq!(
            (taken.line, taken.take, taken.figures.amount_minor),
            (4, Figure::Balance, -2_100)
        );
        let parsed = with_figures(false, &[(4, Figure::Amount)]);
        assert_eq!(amount_of(&parsed, 4), Some(-2_100));
        // Taken at a balance that did not move, the row moves no money: skipped, not booked.
        let parsed = with_figures(false, &[(6, Figure::Balance)]);
        assert_eq!(amount_of(&parsed, 6), None);
        assert!(parsed.skipped.iter().any(|s| s.line == 6), "{:?}", parsed.skipped);
        assert_eq!(parsed.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [4]);
        assert_eq!(parsed.format.taken[0].line, 6);
        // Not every row agreed: no closing balance is read from the column.
        assert!(parsed.format.reconciliation.unwrap().closing.is_none());
    }

    #[test]
    fn figures_read_as_booked_when_the_signs_are_flipped() {
        let parsed = with_figures(true, &[(4, Figure::Balance)]);
        assert_eq!(amount_of(&parsed, 4), Some(1_200));
        assert_eq!(amount_of(&parsed, 3), Some(500));
        let taken = parsed.format.taken[0].figures;
        assert_eq!((taken.amount_minor, taken.balance_minor), (2_100, 1_200));
        let refused = parsed.errors[0].figures.unwrap();
        assert_eq!((refused.amount_minor, refused.balance_minor), (700, 0));
    }

    #[test]
    fn an_amount_in_another_currency_than_its_column_says_is_refused() {
        let parsed = parse_text(
            "Date,Description,Amount,Currency\n2024-01-02,Tea,€3.50,EUR\n2024-01-03,Cab,$9.00,EUR\n",
        );
        assert_eq!(parsed.rows.len(), 1);
        assert_eq!(parsed.errors[0].line, 3);
        assert!(
            parsed.errors[0]
                .message
                .contains("the currency column says EUR but the amount is written in USD"),
            "{}",
            parsed.errors[0].message
        );
    }

    #[test]
    fn bad_rows_are_reported_and_skipped() {
        let parsed = parse_text(
            "Date,Narration,Withdrawal Amt.,Deposit Amt.\n13/01/2025,ATM,500.00,\n14/01/2025,,10.00,\n\
             15/01/2025,BOTH,1.00,2.00\n31/02/2025,NO SUCH DAY,1.00,\n16/01/2025,TEN,ten,\n,,,\n\
             Pending items are not shown,,,\n18/01/2025,WAIVED FEE,0.00,\n17/01/2025,SALARY,,900.00\n",
        );
        assert_eq!(
            parsed.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
            [-50_000, -1000, 90_000]
        );
        assert_eq!(parsed.rows[1].description, "(no description)");
        assert_eq!(parsed.format.date_order, DateOrder::DayFirst);
        let errors: Vec<(usize, Option<&str>)> = parsed
            .errors
            .iter()
            .map(|e| (e.line, e.column.as_deref()))
            .collect();
        assert_eq!(
            errors,
            [
                (4, Some("Withdrawal Amt.")),
                (5, Some("Date")),
                (6, Some("Withdrawal Amt."))
            ]
        );
        assert_eq!(parsed.errors[2].raw, "16/01/2025,TEN,ten,");
        assert_eq!(parsed.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), [9]);
        assert_eq!(parsed.lines.notes, 1);
        assert_eq!(parsed.lines.blank, 1);
        assert_eq!(parsed.lines.accounted(), parsed.lines.total);
    }

    #[test]
    fn an_unterminated_quote_names_every_line_it_swallowed() {
        let parsed = parse_text(
            "Date,Description,Amount\n2025-01-01,\"Coffee,-3.00\n2025-01-02,Tea,-2.00\n\n2025-01-03,Cake,-4.00\n",
        );
        assert!(parsed.rows.is_empty(), "{:?}", parsed.rows);
        let errors: Vec<usize> = parsed.errors.iter().map(|e| e.line).collect();
        assert_eq!(errors, [2, 3, 4, 5]);
        assert!(
            parsed.errors[0].message.contains("lines 3 to 5"),
            "{}",
            parsed.errors[0].message
        );
        assert!(
            parsed.errors[1].message.contains("line 2"),
            "{}",
            parsed.errors[1].message
        );
        assert_eq!(parsed.lines.unreadable, 4);
        assert_eq!((parsed.lines.accounted(), parsed.lines.total), (5, 5));
        // The last line's quote left open takes in nothing after it, and is still not read.
        let parsed = parse_text("Date,Description,Amount\n2025-01-02,Tea,-2.00\n2025-01-03,\"Cake,-4.00\n");
        assert_eq!(parsed.rows.len(), 1);
        assert_eq!(parsed.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [3]);
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        // A description written over two lines is one row, and its second line is accounted for.
        let parsed = parse_text(
            "Date,Description,Amount\n2025-01-01,\"Coffee\nand cake\",-3.00\n2025-01-02,Tea,-2.00\n",
        );
        assert_eq!(parsed.rows.len(), 2);
        assert_eq!(parsed.rows[0].description, "Coffee and cake");
        assert_eq!(
            (parsed.lines.rows, parsed.lines.continued, parsed.lines.total),
            (2, 1, 4)
        );
        assert_eq!(parsed.lines.accounted(), 4);
        // The same, in a file whose every line ends with the delimiter.
        let parsed = parse_text(
            "Date,Description,Amount\n2025-01-01,\"Coffee\nand cake\",-3.00,\n2025-01-02,Tea,-2.00,\n",
        );
        assert_eq!(parsed.rows.len(), 2, "{:?}", parsed.errors);
        assert_eq!(parsed.rows[0].description, "Coffee and cake");
    }

    #[test]
    fn every_line_is_accounted_for() {
        let parsed = parse_text(
            "Account 1234\nPeriod: January\n\nDate,Description,Amount\n2025-01-01,A,-1.00\n,,\n2025-01-02,B,0.00\n\
             Closing balance,,5.00\nPending items are not shown\n2025-01-03,C,x\n",
        );
        let l = &parsed.lines;
        assert_eq!(
            (
                l.total,
                l.banner,
                l.blank,
                l.header,
                l.rows,
                l.skipped,
                l.notes,
                l.unreadable
            ),
            (10, 2, 2, 1, 1, 2, 1, 1),
            "{l:?}"
        );
        assert_eq!(l.accounted(), l.total);
    }

    #[test]
    fn a_row_of_nothing_whose_balance_moved_is_unreadable() {
        let parsed = parse_text(
            "Date,Description,Amount,Balance\n2025-01-01,SALARY,100.00,100.00\n2025-01-02,HOLD,0.00,78.07\n\
             2025-01-03,SHOP,-8.07,70.00\n2025-01-04,NOTHING,0.00,70.00\n2025-01-05,TEA,-2.00,68.00\n",
        );
        assert_eq!(parsed.rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 4, 6]);
        assert_eq!(parsed.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [3]);
        assert!(
            parsed.errors[0].message.contains("though the row moves no money"),
            "{}",
            parsed.errors[0].message
        );
        assert_eq!(parsed.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), [5]);
        assert_eq!(parsed.lines.accounted(), parsed.lines.total);
    }

    #[test]
    fn a_card_statement_that_writes_purchases_as_positive_is_read_as_spending() {
        let card = "Credit Card Statement\nCard number: XXXX 1234\nDate,Description,Amount\n\
                    2025-01-02,SHOP,12.00\n2025-01-03,CAFE,3.50\n2025-01-04,BOOKS,20.00\n\
                    2025-01-05,TAXI,8.00\n2025-01-06,PAYMENT THANK YOU,-100.00\n";
        let parsed = parse_text(card);
        let amounts: Vec<i64> = parsed.rows.iter().map(|r| r.amount_minor).collect();
        assert_eq!(amounts, [-1200, -350, -2000, -800, 10_000]);
        assert!(
            parsed
                .format
                .spending_positive
                .as_deref()
                .is_some_and(|w| w.contains("card statement")),
            "{:?}",
            parsed.format.spending_positive
        );
        // An account's statement that mentions a card but spends as negative is left as written.
        let account = card
            .replace("12.00", "-12.00")
            .replace("3.50", "-3.50")
            .replace("20.00", "-20.00");
        let amounts: Vec<i64> = parse_text(&account).rows.iter().map(|r| r.amount_minor).collect();
        assert_eq!(amounts, [-1200, -350, -2000, 800, -10_000]);
        // --invert says the same as the card's words: flipped once, not twice.
        let inverted = parse(
            card.as_bytes(),
            &ParseOptions {
                mapping: Mapping {
                    invert: true,
                    ..Mapping::default()
                },
                ..ParseOptions::default()
            },
        )
        .unwrap();
        let amounts: Vec<i64> = inverted.rows.iter().map(|r| r.amount_minor).collect();
        assert_eq!(amounts, [-1200, -350, -2000, -800, 10_000]);
        // Payments marked CR in their cells: the unmarked purchases are money out, the CR ones
        // money in, and the card rule does not flip them again.
        let marked = card.replace("-100.00", "\"100.00 CR\"");
        let amounts: Vec<i64> = parse_text(&marked).rows.iter().map(|r| r.amount_minor).collect();
        assert_eq!(amounts, [-1200, -350, -2000, -800, 10_000]);
        // No word of a card: as written.
        let plain = card.replace("Credit Card Statement", "Statement");
        assert_eq!(parse_text(&plain).rows[0].amount_minor, 1200);
    }

    #[test]
    fn whole_file_refusals() {
        let refuse = |bytes: &[u8]| parse(bytes, &ParseOptions::default()).unwrap_err();
        assert_eq!(refuse(b""), ImportError::Empty);
        assert_eq!(refuse(b"\0\0binary"), ImportError::Binary);
        assert_eq!(refuse(b"name,colour\nx,y\n"), ImportError::NoHeader);
        assert_eq!(refuse(b"date,amount\n"), ImportError::NoRows { header_line: 1 });
        assert!(matches!(
            refuse(b"date,amount\n13/02/2025,1\n02/13/2025,2\n"),
            ImportError::Dates(_)
        ));
    }

    /// Any order of the columns, any delimiter, any encoding, either order of time: the same rows,
    /// all reconciled against the balance.
    #[test]
    fn a_statement_with_a_balance_reads_the_same_however_it_is_laid_out() {
        let rows = [
            ("2025-03-01", "OPENING SHOP", "-120.50", "879.50"),
            ("2025-03-02", "SALARY", "2500.00", "3379.50"),
            ("2025-03-05", "RENT", "-1200.00", "2179.50"),
            ("2025-03-09", "CAFÉ CRÈME", "-4.25", "2175.25"),
            ("2025-03-12", "REFUND", "20.00", "2195.25"),
        ];
        let header = ["Date", "Description", "Amount", "Balance"];
        let mut orders: Vec<Vec<usize>> = Vec::new();
        for a in 0..4 {
            for b in 0..4 {
                for c in 0..4 {
                    if a != b && a != c && b != c {
                        let d = (0..4).find(|x| ![a, b, c].contains(x)).unwrap();
                        orders.push(vec![a, b, c, d]);
                    }
                }
            }
        }
        assert_eq!(orders.len(), 24);
        let expected: Vec<(String, String, i64)> = rows
            .iter()
            .map(|r| {
                let minor: i64 = r.2.replace('.', "").parse().unwrap();
                (r.0.to_owned(), r.1.to_owned(), minor)
            })
            .collect();
        let encodings: [(&str, Encode); 4] = [
            ("UTF-8", |t| t.as_bytes().to_vec()),
            ("UTF-8 (BOM)", |t| {
                [&[0xEF, 0xBB, 0xBF][..], t.as_bytes()].concat()
            }),
            ("UTF-16LE (BOM)", |t| {
                [0xFF, 0xFE]
                    .into_iter()
                    .chain(t.encode_utf16().flat_map(u16::to_le_bytes))
                    .collect()
            }),
            ("windows-1252", |t| {
                encoding_rs::WINDOWS_1252.encode(t).0.into_owned()
            }),
        ];
        for order in &orders {
            for delimiter in [",", ";", "\t"] {
                for (newest_first, (encoding, encode)) in [false, true]
                    .into_iter()
                    .flat_map(|n| encodings.iter().map(move |e| (n, e)))
                {
                    let line = |cells: [&str; 4]| {
                        order
                            .iter()
                            .map(|i| cells[*i])
                            .collect::<Vec<_>>()
                            .join(delimiter)
                    };
                    let mut lines = vec![line(header)];
                    let mut body: Vec<String> = rows.iter().map(|r| line([r.0, r.1, r.2, r.3])).collect();
                    if newest_first {
                        body.reverse();
                    }
                    lines.extend(body);
                    let bytes = encode(&(lines.join("\n") + "\n"));
                    let parsed = parse(&bytes, &ParseOptions::default()).unwrap();
                    assert_eq!(parsed.format.encoding, *encoding);
                    let mut got: Vec<(String, String, i64)> = parsed
                        .rows
                        .iter()
                        .map(|r| (r.date.to_string(), r.description.clone(), r.amount_minor))
                        .collect();
                    got.sort();
                    let mut want = expected.clone();
                    want.sort();
                    assert_eq!(
                        got, want,
                        "{order:?} {delimiter:?} {encoding} newest first {newest_first}"
                    );
                    let r = parsed.format.reconciliation.as_ref().unwrap();
                    assert_eq!((r.checked, r.reconciled), (4, 4), "{order:?} {delimiter:?}");
                    assert!(parsed.errors.is_empty());
                }
            }
        }
    }

    #[test]
    fn a_direction_column_is_found_from_its_cells_only_when_it_cannot_be_anything_else() {
        // Debit and credit words: a direction column, whatever its header.
        let parsed = parse_text("Date,Amount,Kind\n2025-01-02,10.00,debit\n2025-01-03,5.00,credit\n");
        let amounts: Vec<i64> = parsed.rows.iter().map(|r| r.amount_minor).collect();
        assert_eq!(amounts, [-1000, 500]);
        // Only CR beside blanks: the blanks are money out.
        let parsed = parse_text("Date,Amount,\n2025-01-02,10.00,\n2025-01-03,5.00,CR\n");
        let amounts: Vec<i64> = parsed.rows.iter().map(|r| r.amount_minor).collect();
        assert_eq!(amounts, [-1000, 500]);
        // A cleared flag (C and U) or a lone letter is not a direction.
        for flags in [("C", "U"), ("C", ""), ("X", "Y")] {
            let text = format!(
                "Date,Amount,Cleared\n2025-01-02,-10.00,{}\n2025-01-03,5.00,{}\n",
                flags.0, flags.1
            );
            let amounts: Vec<i64> = parse_text(&text).rows.iter().map(|r| r.amount_minor).collect();
            assert_eq!(amounts, [-1000, 500], "{flags:?}");
        }
    }
}
