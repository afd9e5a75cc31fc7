//! CSV and other delimited text statements, as banks export them.
//!
//! Parsing accepts real exports: the encoding is sniffed (UTF-8 with or without a byte-order
//! mark, UTF-16 with one, Windows-1252/Latin-1 and other legacy encodings), the delimiter
//! (`,` `;` tab `|`) and the header row past banner lines are found, columns are mapped by their
//! names, amounts may be signed or split into debit and credit, and the order of day and month is
//! decided per file from its dates. A problem with the whole file refuses it; a bad row is
//! reported with its line and column and skipped, never guessed.

mod amount;
mod clues;
mod date;
mod layout;
mod mapping;
mod reconcile;
mod rows;
mod settle;
#[cfg(test)]
mod tests;
mod vocabulary;

use kakeibo_money::Currency;

pub use kakeibo_statement::{
    BalanceKind, BalancePosition, Closing, DateOrder, DecimalMark, Mapping, ParseOptions, Reconciliation,
    TimeOrder,
};

pub use self::{
    amount::{decide_decimal_mark, parse_amount},
    date::{decide_order, parse_date},
    layout::{Columns, Layout, Record, detect, spanned_records},
    mapping::{MappingFile, read_mapping},
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
use kakeibo_statement::{
    Fees, Figure, Figures, Format, ImportError, KindHint, LineCount, Parsed, ParsedRow, RowError,
    TakenFigure, decode,
};

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
        statement: None,
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
