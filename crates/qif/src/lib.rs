//! QIF (Quicken Interchange Format) statements read — bank, card, cash and other asset or
//! liability accounts; investment accounts refused with a sentence. Bytes in, a [`Parsed`]
//! statement out, no database, no HTTP.
//!
//! QIF has no date standard: `D2/10'2020`, `D12/21' 7`, `D2024'01'02` and `D25/11/2023` all
//! occur. The order of day and month is decided per file from the evidence (a first number past
//! 12 is a day, a second past 12 is a day), else taken from the mapping or a previous import
//! (`--date-order`, as for CSV), else asked; in a file whose dates say both orders, each date
//! that says its own is read that way and the rest as most say. An apostrophe before a two-digit year means the
//! 2000s. Amounts may group thousands with `,` (or `.` where `,` is the decimal mark, decided per
//! file). A record's splits (`S`/`E`/`$`) that add up to its amount are the row's parts, each
//! to its category (one transaction of several postings); splits that do not, or that name a
//! transfer, leave the record one row, said in the notes. A category in brackets (`L[Savings]`) is a
//! transfer to that account, said in the row's words for the transfer matching. QIF has no
//! transaction id: rows are known by their content and their occurrence in the file. A file of
//! several accounts (`!Account` blocks) is read one account at a time, by its number.

// Everything here comes from a file anyone may upload: no arithmetic may overflow or panic and no
// indexing may panic.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use chrono::NaiveDate;
use kakeibo_money::{AccountKind, Currency, Money};
use kakeibo_statement::{
    DateOrder, DecimalMark, Format, ImportError, KindHint, LineCount, ParseOptions, Parsed, ParsedRow,
    RowDetail, RowError, Split, StatementAccount, StatementFormat, StatementInfo, choose, count_lines,
    counted, decode,
};

/// One record (`^`-terminated) as written.
#[derive(Debug, Clone, Default)]
struct Record<'a> {
    line: usize,
    last_line: usize,
    date: &'a str,
    amount: &'a str,
    payee: &'a str,
    memo: &'a str,
    category: &'a str,
    number: &'a str,
    splits: Vec<(&'a str, &'a str)>,
}

/// One account's records: its `!Type:` and its name when an `!Account` block gave one.
#[derive(Debug, Clone, Default)]
struct Block<'a> {
    kind: String,
    name: String,
    records: Vec<Record<'a>>,
}

fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut pending_name = String::new();
    let mut in_account_list = false;
    let mut record: Option<Record> = None;
    // Records are sized once, by the `^` lines left: a large file's grown by doubling would hold
    // them twice at a time. What a block did not use is given back when the next one opens.
    let mut unread = text.lines().filter(|l| l.starts_with('^')).count();
    let opened = |blocks: &mut Vec<Block<'_>>, unread: usize| {
        if let Some(last) = blocks.last_mut() {
            last.records.shrink_to_fit();
        }
        Vec::with_capacity(unread)
    };
    for (index, raw) in text.lines().enumerate() {
        let number = index.saturating_add(1);
        let line = raw.trim_end_matches('\r');
        if let Some(header) = line.strip_prefix('!') {
            let header = header.trim();
            let upper = header.to_ascii_uppercase();
            if upper == "ACCOUNT" {
                in_account_list = true;
            } else if let Some(kind) = header.get(5..).filter(|_| upper.starts_with("TYPE:")) {
                in_account_list = false;
                let records = opened(&mut blocks, unread);
                blocks.push(Block {
                    kind: kind.trim().to_owned(),
                    name: std::mem::take(&mut pending_name),
                    records,
                });
            }
            // `!Option:AutoSwitch` and `!Clear:AutoSwitch` only frame the account list.
            continue;
        }
        let Some(code) = line.chars().next() else { continue };
        let value = line.get(code.len_utf8()..).unwrap_or_default().trim();
        if in_account_list {
            if code == 'N' {
                value.clone_into(&mut pending_name);
            }
            continue;
        }
        if blocks.is_empty() {
            // Records before any `!Type:` (a file that starts without one): a bank account's.
            blocks.push(Block {
                kind: "Bank".to_owned(),
                records: Vec::with_capacity(unread),
                ..Block::default()
            });
        }
        let current = record.get_or_insert_with(|| Record {
            line: number,
            ..Record::default()
        });
        current.last_line = number;
        match code {
            '^' => {
                unread = unread.saturating_sub(1);
                if let (Some(done), Some(block)) = (record.take(), blocks.last_mut()) {
                    block.records.push(done);
                }
            }
            'D' => current.date = value,
            'T' => current.amount = value,
            'U' if current.amount.is_empty() => current.amount = value,
            'P' => current.payee = value,
            'M' => current.memo = value,
            'L' => current.category = value,
            'N' => current.number = value,
            'S' => current.splits.push((value, "")),
            '$' => {
                if let Some(split) = current.splits.last_mut() {
                    split.1 = value;
                }
            }
            _ => {}
        }
    }
    if let (Some(done), Some(block)) = (record, blocks.last_mut())
        && (!done.date.is_empty() || !done.amount.is_empty())
    {
        block.records.push(done);
    }
    if let Some(last) = blocks.last_mut() {
        last.records.shrink_to_fit();
    }
    blocks
}

/// A QIF date's three numbers and whether its year came after an apostrophe.
fn date_parts(text: &str) -> Option<(u32, u32, i32, usize, bool)> {
    let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let apostrophe = cleaned.contains('\'');
    let numbers: Vec<&str> = cleaned
        .split(['/', '-', '.', '\''])
        .filter(|s| !s.is_empty())
        .collect();
    let [a, b, c] = numbers.as_slice() else {
        return None;
    };
    if !cleaned
        .bytes()
        .all(|ch| ch.is_ascii_digit() || b"/-.'".contains(&ch))
    {
        return None;
    }
    if a.len() == 4 {
        // Year first: `2024'01'02`, `2024-01-02`.
        return Some((b.parse().ok()?, c.parse().ok()?, a.parse().ok()?, 4, false));
    }
    Some((
        a.parse().ok()?,
        b.parse().ok()?,
        c.parse().ok()?,
        c.len(),
        apostrophe,
    ))
}

fn full_year(year: i32, digits: usize, apostrophe: bool) -> i32 {
    match (digits, apostrophe) {
        (4, _) => year,
        (_, true) => 2000_i32.saturating_add(year),
        _ if year < 50 => 2000_i32.saturating_add(year),
        _ => 1900_i32.saturating_add(year),
    }
}

/// The dates of `records` that read one way only: the first and how many read day-first, and
/// the same month-first (a four-digit year first says its own order and is left out).
fn evidence<'a>(records: &'a [Record<'a>]) -> [(Option<&'a Record<'a>>, usize); 2] {
    let mut found = [(None, 0usize), (None, 0usize)];
    for record in records {
        let Some((a, b, _, digits, _)) = date_parts(record.date) else {
            continue;
        };
        if digits == 4 && year_first(record.date) {
            continue;
        }
        let side = if a > 12 && b <= 12 {
            &mut found[0]
        } else if b > 12 && a <= 12 {
            &mut found[1]
        } else {
            continue;
        };
        side.0 = side.0.or(Some(record));
        side.1 = side.1.saturating_add(1);
    }
    found
}

/// Whether a date starts with a four-digit year (`2024-03-05`).
fn year_first(text: &str) -> bool {
    text.trim()
        .get(..4)
        .is_some_and(|y| y.bytes().all(|c| c.is_ascii_digit()))
}

/// The order of day and month the file's dates decide, and why; none when every date reads both
/// ways. A file whose dates say both (records exported under two settings) is read record by
/// record where a date says its order, and in the order most of them say where it does not.
fn decided_order(records: &[Record]) -> Option<(DateOrder, String)> {
    let [(day_first, days), (month_first, months)] = evidence(records);
    match (day_first, month_first) {
        (Some(d), Some(m)) => {
            let order = if days >= months {
                DateOrder::DayFirst
            } else {
                DateOrder::MonthFirst
            };
            Some((
                order,
                format!(
                    "the file mixes the orders: {days} date(s) read day-first only (line {} reads {}), {months} \
                     month-first only (line {} reads {}); each of those is read its own way, a date that reads \
                     either way {}",
                    d.line,
                    d.date,
                    m.line,
                    m.date,
                    order.name()
                ),
            ))
        }
        (Some(d), None) => Some((
            DateOrder::DayFirst,
            format!("day-first: line {} reads {}", d.line, d.date),
        )),
        (None, Some(m)) => Some((
            DateOrder::MonthFirst,
            format!("month-first: line {} reads {}", m.line, m.date),
        )),
        (None, None) => None,
    }
}

/// Whether the file's dates say both orders (see [`decided_order`]).
fn mixes_orders(records: &[Record]) -> bool {
    let [(day_first, _), (month_first, _)] = evidence(records);
    day_first.is_some() && month_first.is_some()
}

/// A QIF date in `order`; in a file that `mixes` the orders, a date that reads one way only is
/// read that way.
fn date_of(text: &str, (order, mixes): (DateOrder, bool)) -> Result<NaiveDate, String> {
    let (a, b, year, digits, apostrophe) =
        date_parts(text).ok_or_else(|| format!("{text:?} is not a date"))?;
    let year = full_year(year, digits, apostrophe);
    let order = match (mixes, a > 12, b > 12) {
        (true, true, false) => DateOrder::DayFirst,
        (true, false, true) => DateOrder::MonthFirst,
        _ => order,
    };
    let (month, day) = if year_first(text) || order == DateOrder::MonthFirst {
        (a, b)
    } else {
        (b, a)
    };
    NaiveDate::from_ymd_opt(year, month, day).ok_or_else(|| format!("{text:?} is not a date"))
}

/// Whether the file writes decimal commas (`1.234,56`, `-12,5`): an amount ending in a comma and
/// one or two digits.
fn decimal_comma(records: &[Record]) -> bool {
    records.iter().any(|r| {
        let amount = r.amount.trim();
        amount.rsplit_once(',').is_some_and(|(_, tail)| {
            (1..=2).contains(&tail.len()) && tail.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

fn amount_of(text: &str, comma: bool, currency: Currency) -> Result<i64, String> {
    let grouping = if comma { '.' } else { ',' };
    let plain: String = text
        .trim()
        .chars()
        .filter(|c| *c != grouping && !c.is_whitespace())
        .collect();
    Money::parse_exact(&plain, currency)
        .map(|m| m.amount_minor)
        .map_err(|e| e.to_string())
}

/// Reads a QIF file's bytes into the account `options.statement` names (the only one, when the
/// file is of one).
pub fn parse(bytes: &[u8], recognised_by: &str, options: &ParseOptions) -> Result<Parsed, ImportError> {
    let decoded = decode(bytes)?;
    let total = count_lines(&decoded.text);
    let all = blocks(&decoded.text);
    let (investments, cash): (Vec<Block<'_>>, Vec<Block<'_>>) = all
        .into_iter()
        .partition(|b| b.kind.to_ascii_lowercase().starts_with("invst"));
    let cash: Vec<Block<'_>> = cash
        .into_iter()
        .filter(|b| !b.records.is_empty() || b.kind.is_empty())
        .collect();
    if cash.is_empty() {
        return Err(ImportError::Statement(if investments.is_empty() {
            "the QIF file holds no transactions".to_owned()
        } else {
            "the QIF file is of an investment account (!Type:Invst): kakeibo keeps cash accounts, so there is \
             nothing in it to import"
                .to_owned()
        }));
    }
    let count = cash.len();
    let index = choose(options.statement, count, || {
        cash.iter()
            .map(|b| {
                let name = if b.name.is_empty() {
                    "an unnamed account"
                } else {
                    b.name.as_str()
                };
                format!(
                    "{name} ({}, {})",
                    b.kind,
                    counted(b.records.len(), "transaction", "transactions")
                )
            })
            .collect()
    })?;
    let block = cash.into_iter().nth(index).ok_or(ImportError::Empty)?;
    let (order, reason, assumed) = order_of(&block.records, options)?;
    let mixes = mixes_orders(&block.records);
    let comma = decimal_comma(&block.records);
    let currency = options.currency.unwrap_or(Currency::INR);
    let currency_unstated = options.currency.is_none();
    let kind = match block.kind.to_ascii_lowercase().as_str() {
        "ccard" => Some((AccountKind::Card, "its !Type is CCard, a credit card")),
        "cash" => Some((AccountKind::Cash, "its !Type is Cash")),
        "bank" => Some((AccountKind::Checking, "its !Type is Bank")),
        "oth l" => Some((AccountKind::Loan, "its !Type is Oth L, a liability")),
        _ => None,
    };
    let mut parsed = Parsed::new(Format {
        encoding: decoded.encoding.clone(),
        delimiter: String::new(),
        header_line: 0,
        columns: std::collections::BTreeMap::new(),
        date_order: order,
        date_order_reason: reason,
        date_order_assumed: assumed,
        currency_from: None,
        decimal_mark: if comma {
            DecimalMark::Comma
        } else {
            DecimalMark::Point
        },
        reconciliation: None,
        inverted: false,
        spending_positive: None,
        mapping_from: None,
        accounts: Vec::new(),
        fees: None,
        account_kind: kind.map(|(kind, why)| KindHint {
            kind,
            why: why.to_owned(),
        }),
        taken: Vec::new(),
        statement: None,
    });
    parsed.mapping.date_order = Some(order);
    let mut notes = Vec::new();
    if !investments.is_empty() {
        notes.push(format!(
            "{} investment account(s) in the file (!Type:Invst) are left out: kakeibo keeps cash accounts",
            investments.len()
        ));
    }
    let mut lines = LineCount {
        total,
        ..LineCount::default()
    };
    parsed.rows.reserve_exact(block.records.len());
    read_records(
        &block.records,
        ((order, mixes), comma),
        (currency, currency_unstated),
        &mut parsed,
        &mut lines,
        &mut notes,
    );
    lines.banner = total.saturating_sub(lines.accounted());
    parsed.lines = lines;
    let first = parsed.rows.iter().map(|r| r.date).min();
    let last = parsed.rows.iter().map(|r| r.date).max();
    parsed.format.statement = Some(StatementInfo {
        format: StatementFormat::Qif,
        recognised_by: recognised_by.to_owned(),
        number: index.saturating_add(1),
        of: count,
        account: (!block.name.is_empty()).then(|| StatementAccount {
            id: block.name.clone(),
            bank: None,
            kind_word: block.kind.to_ascii_uppercase(),
        }),
        currency: options.currency,
        period: first.zip(last),
        closing: None,
        available: None,
        notes,
    });
    Ok(parsed)
}

/// The order of day and month the dates are read in, why, and whether it was assumed.
fn order_of(records: &[Record], options: &ParseOptions) -> Result<(DateOrder, String, bool), ImportError> {
    let decided = decided_order(records)
        .or_else(|| {
            options
                .mapping
                .date_order
                .map(|o| (o, format!("{} as the mapping says", o.name())))
        })
        .or_else(|| options.date_hint.clone());
    if let Some((order, reason)) = decided {
        return Ok((order, reason, false));
    }
    if records
        .iter()
        .all(|r| date_parts(r.date).is_none_or(|(a, b, _, _, _)| a == b) || year_first(r.date))
    {
        return Ok((DateOrder::MonthFirst, "no date reads two ways".to_owned(), false));
    }
    Err(ImportError::Dates(
        "every date of the QIF file reads either way (day-first or month-first) and nothing in it says which: give \
         the order (--date-order dmy or mdy)"
            .to_owned(),
    ))
}

/// Reads each record into a row, one moving no money, or an unreadable one, counting their lines.
fn read_records(
    records: &[Record],
    (dates, comma): ((DateOrder, bool), bool),
    (currency, currency_unstated): (Currency, bool),
    parsed: &mut Parsed,
    lines: &mut LineCount,
    notes: &mut Vec<String>,
) {
    for record in records {
        lines.continued = lines
            .continued
            .saturating_add(record.last_line.saturating_sub(record.line));
        match row_of(record, dates, comma, currency, currency_unstated, notes) {
            Ok(Some(row)) => {
                lines.rows = lines.rows.saturating_add(1);
                parsed.rows.push(row);
            }
            Ok(None) => {
                lines.skipped = lines.skipped.saturating_add(1);
                parsed.skipped.push(RowError {
                    line: record.line,
                    column: None,
                    message: "it moves no money (the amount is zero)".to_owned(),
                    raw: format!("D{} T{} P{}", record.date, record.amount, record.payee),
                    figures: None,
                });
            }
            Err((column, message)) => {
                lines.unreadable = lines.unreadable.saturating_add(1);
                parsed.errors.push(RowError {
                    line: record.line,
                    column: Some(column.to_owned()),
                    message,
                    raw: format!("D{} T{} P{}", record.date, record.amount, record.payee),
                    figures: None,
                });
            }
        }
    }
}

fn row_of(
    record: &Record,
    dates: (DateOrder, bool),
    comma: bool,
    currency: Currency,
    currency_unstated: bool,
    notes: &mut Vec<String>,
) -> Result<Option<ParsedRow>, (&'static str, String)> {
    let date = date_of(record.date, dates).map_err(|why| ("D", why))?;
    let amount = amount_of(record.amount, comma, currency).map_err(|why| ("T", why))?;
    if amount == 0 {
        return Ok(None);
    }
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut words: Vec<String> = [squeeze(record.payee), squeeze(record.memo)]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    words.dedup();
    let mut description = words.join(" · ");
    let transfer = record
        .category
        .trim()
        .strip_prefix('[')
        .and_then(|c| c.split(']').next())
        .map(str::to_owned);
    if let Some(account) = &transfer {
        let way = if amount < 0 { "to" } else { "from" };
        format!("{description} · transfer {way} {account}")
            .trim_start_matches(" · ")
            .clone_into(&mut description);
    }
    if description.is_empty() {
        description = if record.number.is_empty() {
            "QIF transaction".to_owned()
        } else {
            format!("Cheque {}", record.number)
        };
    }
    let splits = splits_of(record, amount, (comma, currency), notes);
    let category = if transfer.is_some() || record.splits.len() > 1 {
        None
    } else {
        Some(record.category.trim().to_owned()).filter(|c| !c.is_empty())
    };
    Ok(Some(ParsedRow {
        line: record.line,
        date,
        description,
        amount_minor: amount,
        currency,
        category,
        currency_unstated,
        bank_ref: None,
        detail: RowDetail::of(None, splits),
    }))
}

/// A record's splits as the row's parts, each to its category: when every part reads, none is a
/// transfer (`[Account]`) and they add up to the record's amount. Otherwise the record is one row
/// and the notes list its parts with why.
fn splits_of(
    record: &Record,
    amount: i64,
    (comma, currency): (bool, Currency),
    notes: &mut Vec<String>,
) -> Vec<Split> {
    if record.splits.is_empty() {
        return Vec::new();
    }
    let read: Vec<(&str, Option<i64>)> = record
        .splits
        .iter()
        .map(|(category, part)| (category.trim(), amount_of(part, comma, currency).ok()))
        .collect();
    let sum = read
        .iter()
        .filter_map(|(_, a)| *a)
        .fold(0i64, i64::saturating_add);
    let listed: Vec<String> = read
        .iter()
        .map(|(c, a)| {
            format!(
                "{} {}",
                if c.is_empty() { "(no category)" } else { c },
                a.map_or("?".to_owned(), |a| Money::new(a, currency).format())
            )
        })
        .collect();
    let whole = read.iter().all(|(_, a)| a.is_some()) && sum == amount;
    let transfer = read.iter().any(|(c, _)| c.starts_with('['));
    if whole && !transfer && read.len() > 1 {
        notes.push(format!(
            "line {}: split {}; each part booked to its category in one transaction",
            record.line,
            listed.join(", ")
        ));
        return read
            .into_iter()
            .map(|(category, part)| Split {
                category: category.to_owned(),
                amount_minor: part.unwrap_or_default(),
            })
            .collect();
    }
    let why = if !whole {
        "they do not add up to it"
    } else if transfer {
        "a part is a transfer, which kakeibo books as a row of its own only"
    } else {
        "they add up to it"
    };
    notes.push(format!(
        "line {}: split {} ({why}); booked as one row of {}",
        record.line,
        listed.join(", "),
        Money::new(amount, currency).format()
    ));
    Vec::new()
}

#[cfg(test)]
mod tests;
