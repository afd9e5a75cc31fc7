//! SWIFT MT940 statements and MT942 interim reports read — bytes in, a [`Parsed`] statement out,
//! no database, no HTTP.
//!
//! The bytes are decoded as every text statement is (UTF-8, else the legacy encoding they fit),
//! SWIFT's framing (`{1:…}{2:…}{4:`, SOH and ETX bytes) and prose before the first `:20:` are
//! passed over, and each message's fields read ([`fields`]). The messages of one account (a day
//! each, as banks send them) are one statement, in the order written: the first `:60F:` opens it,
//! the last `:62F:` closes it, and each message's opening plus its lines is checked against its
//! closing. A file of several accounts is read one account at a time, by its number
//! ([`ParseOptions::statement`]). A `:61:` line is a row dated by its entry date (else its value
//! date), signed by its mark (`RC`, a reversal of a credit, takes money out); its `:86:` names
//! it; the bank's reference after `//` is its `bank_ref`. An MT942's lines are not yet on a
//! statement: they are listed as pending and kept out of the ledger.

// Everything here comes from a file anyone may upload: no arithmetic may overflow or panic and no
// indexing may panic.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod fields;

use kakeibo_money::{Currency, Money};
use kakeibo_statement::{
    Closing, DateOrder, DecimalMark, Format, ImportError, LineCount, ParseOptions, Parsed, ParsedRow,
    RowDetail, RowError, StatementAccount, StatementFormat, StatementInfo, choose, count_lines, counted,
    decode,
};

use self::fields::{Balance, balance, clip, counterparty_account, information, statement_line};

/// One field: its tag, its text (continuation lines joined with `\n`), its first line.
#[derive(Debug, Clone)]
struct Field<'a> {
    tag: &'a str,
    text: std::borrow::Cow<'a, str>,
    line: usize,
    last_line: usize,
}

/// One message (`:20:` to `-`).
#[derive(Debug, Clone, Default)]
struct Message<'a> {
    account: String,
    fields: Vec<Field<'a>>,
}

/// The fields of the text's messages, in order.
fn messages(text: &str) -> Vec<Message<'_>> {
    let mut found: Vec<Message> = Vec::new();
    let mut current: Option<Message> = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index.saturating_add(1);
        let line = raw.trim_matches(|c: char| c == '\u{1}' || c == '\u{3}' || c == '\r');
        // Block 4 of a SWIFT envelope opens with `{4:`; what comes before it is the envelope.
        let line = line.rsplit_once("{4:").map_or(line, |(_, rest)| rest);
        let tag = line
            .strip_prefix(':')
            .and_then(|rest| rest.split_once(':'))
            .filter(|(tag, _)| {
                (2..=3).contains(&tag.len())
                    && tag
                        .get(..2)
                        .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
                    && tag
                        .get(2..)
                        .is_none_or(|l| l.bytes().all(|b| b.is_ascii_uppercase()))
            });
        if let Some((tag, value)) = tag {
            if tag == "20" {
                found.extend(current.take());
                current = Some(Message::default());
            }
            if let Some(message) = current.as_mut() {
                if tag == "25" {
                    value.trim().clone_into(&mut message.account);
                }
                message.fields.push(Field {
                    tag,
                    text: std::borrow::Cow::Borrowed(value),
                    line: number,
                    last_line: number,
                });
            }
        } else if line.trim() == "-" || line.trim_start().starts_with("-}") {
            found.extend(current.take());
        } else if let Some(field) = current.as_mut().and_then(|m| m.fields.last_mut()) {
            let text = field.text.to_mut();
            text.push('\n');
            text.push_str(line);
            field.last_line = number;
        }
    }
    found.extend(current);
    found
}

/// Reads an MT940 or MT942 file's bytes into the account `options.statement` names (the only
/// one, when the file is of one).
pub fn parse(
    bytes: &[u8],
    format: StatementFormat,
    recognised_by: &str,
    options: &ParseOptions,
) -> Result<Parsed, ImportError> {
    let decoded = decode(bytes)?;
    let total = count_lines(&decoded.text);
    let all = messages(&decoded.text);
    // The accounts in the order they first appear, each with its messages.
    let mut accounts: Vec<(String, Vec<Message<'_>>)> = Vec::new();
    for message in all {
        match accounts.iter_mut().find(|(a, _)| *a == message.account) {
            Some((_, messages)) => messages.push(message),
            None => accounts.push((message.account.clone(), vec![message])),
        }
    }
    let count = accounts.len();
    if count == 0 {
        return Err(ImportError::Statement(
            "the SWIFT file holds no message (no :20: field starts one)".to_owned(),
        ));
    }
    let index = choose(options.statement, count, || {
        accounts
            .iter()
            .map(|(account, messages)| {
                format!(
                    "account {account} ({})",
                    counted(messages.len(), "message", "messages")
                )
            })
            .collect()
    })?;
    let (account, messages) = accounts.into_iter().nth(index).ok_or(ImportError::Empty)?;
    let interim = format == StatementFormat::Mt942;
    let mut parsed = Parsed::new(Format {
        encoding: decoded.encoding.clone(),
        delimiter: String::new(),
        header_line: 0,
        columns: std::collections::BTreeMap::new(),
        date_order: DateOrder::YearFirst,
        date_order_reason: "SWIFT dates are written year first (YYMMDD)".to_owned(),
        date_order_assumed: false,
        currency_from: None,
        decimal_mark: DecimalMark::Comma,
        reconciliation: None,
        inverted: false,
        spending_positive: None,
        mapping_from: None,
        accounts: Vec::new(),
        fees: None,
        account_kind: None,
        taken: Vec::new(),
        statement: None,
    });
    // Sized once: a large statement's rows grown by doubling would hold them twice at a time.
    let lines_61 = messages
        .iter()
        .flat_map(|m| &m.fields)
        .filter(|f| f.tag == "61")
        .count();
    parsed.rows.reserve_exact(lines_61);
    let read = read_messages(&messages, interim, options, &mut parsed);
    let mut lines = read.lines;
    lines.total = total;
    lines.banner = total.saturating_sub(lines.accounted());
    parsed.lines = lines;
    parsed.format.statement = Some(StatementInfo {
        format,
        recognised_by: recognised_by.to_owned(),
        number: index.saturating_add(1),
        of: count,
        account: (!account.is_empty()).then(|| StatementAccount {
            id: account,
            bank: None,
            kind_word: "BANK".to_owned(),
        }),
        currency: read.currency,
        period: read.first.zip(read.last),
        closing: read.closing,
        available: read.available,
        notes: read.notes,
    });
    Ok(parsed)
}

/// What the messages of one account gave besides their rows.
struct Read {
    currency: Option<Currency>,
    closing: Option<Closing>,
    available: Option<Closing>,
    first: Option<chrono::NaiveDate>,
    last: Option<chrono::NaiveDate>,
    notes: Vec<String>,
    lines: LineCount,
}

fn held(balance: Balance) -> Closing {
    Closing {
        date: balance.date,
        held_minor: balance.minor,
    }
}

fn read_messages(messages: &[Message], interim: bool, options: &ParseOptions, parsed: &mut Parsed) -> Read {
    let mut read = Read {
        currency: None,
        closing: None,
        available: None,
        first: None,
        last: None,
        notes: Vec::new(),
        lines: LineCount::default(),
    };
    for (number, message) in messages.iter().enumerate() {
        let field = |tags: &[&str]| message.fields.iter().find(|f| tags.contains(&f.tag));
        let opening = field(&["60F", "60M"]).map(|f| (f, balance(&f.text)));
        let closing = field(&["62F", "62M"]).map(|f| (f, balance(&f.text)));
        for (f, outcome) in opening.iter().chain(closing.iter()) {
            if let Err(why) = outcome {
                read.notes.push(format!(
                    "line {}: the balance :{}: does not read: {why}",
                    f.line, f.tag
                ));
            }
        }
        let opening = opening.and_then(|(_, b)| b.ok());
        let closing = closing.and_then(|(_, b)| b.ok());
        // MT942 names its currency in its floor limit (`:34F:EURD0,00`).
        let floor =
            field(&["34F"]).and_then(|f| Currency::parse(f.text.trim().get(..3).unwrap_or_default()).ok());
        let currency = opening
            .or(closing)
            .map(|b| b.currency)
            .or(floor)
            .or(read.currency)
            .or(options.currency);
        read.currency = read.currency.or(currency);
        if number == 0 {
            read.first = opening.map(|b| b.date);
        }
        let currency_unstated = currency.is_none();
        let currency = currency.unwrap_or(Currency::INR);
        let mut sum: i64 = 0;
        let mut fields = message.fields.iter().peekable();
        while let Some(field) = fields.next() {
            if field.tag != "61" {
                continue;
            }
            let info = fields.next_if(|f| f.tag == "86");
            let last_line = info.map_or(field.last_line, |i| i.last_line);
            read.lines.continued = read
                .lines
                .continued
                .saturating_add(last_line.saturating_sub(field.line));
            sum = sum.saturating_add(read_line(
                field,
                info,
                (currency, currency_unstated),
                interim,
                parsed,
                &mut read,
            ));
        }
        if let (Some(opening), Some(closing)) = (opening, closing)
            && !interim
        {
            let reached = opening.minor.saturating_add(sum);
            if reached != closing.minor {
                let money = |minor| Money::new(minor, currency).format();
                read.notes.push(format!(
                    "message {}: the opening balance {} plus its lines {} is {}, not its closing balance {}: a line \
                     is missing or was changed",
                    number.saturating_add(1),
                    money(opening.minor),
                    money(sum),
                    money(reached),
                    money(closing.minor)
                ));
            }
        }
        if let Some(closing) = closing {
            read.closing = Some(held(closing));
            read.last = Some(read.last.map_or(closing.date, |l| l.max(closing.date)));
        }
        if let Some(available) = field(&["64"]).and_then(|f| balance(&f.text).ok()) {
            read.available = Some(held(available));
        }
    }
    if messages.len() > 1 {
        read.notes.push(format!(
            "{} messages of this account read as one statement, in the order written",
            messages.len()
        ));
    }
    read
}

/// One `:61:` line (and its `:86:`) read into a row, a line not booked, or an unreadable one;
/// the money it books.
fn read_line(
    field: &Field,
    info: Option<&Field>,
    (currency, currency_unstated): (Currency, bool),
    interim: bool,
    parsed: &mut Parsed,
    read: &mut Read,
) -> i64 {
    let raw = clip(field.text.lines().next().unwrap_or_default());
    let mut booked = 0;
    match statement_line(&field.text, currency) {
        Err(why) => {
            read.lines.unreadable = read.lines.unreadable.saturating_add(1);
            parsed.errors.push(RowError {
                line: field.line,
                column: Some(":61:".to_owned()),
                message: why,
                raw,
                figures: None,
            });
        }
        Ok(_) if interim => {
            read.lines.skipped = read.lines.skipped.saturating_add(1);
            parsed.skipped.push(RowError {
                line: field.line,
                column: None,
                message: "pending (an MT942 interim report): kept out of the ledger until a statement has it"
                    .to_owned(),
                raw,
                figures: None,
            });
        }
        Ok(line) if line.minor == 0 => {
            read.lines.skipped = read.lines.skipped.saturating_add(1);
            parsed.skipped.push(RowError {
                line: field.line,
                column: None,
                message: "it moves no money (the amount is zero)".to_owned(),
                raw,
                figures: None,
            });
        }
        Ok(line) => {
            read.notes
                .extend(line.notes.iter().map(|n| format!("line {}: {n}", field.line)));
            let mut description = info.map(|i| information(&i.text)).unwrap_or_default();
            if description.is_empty() {
                [line.details.as_str(), line.reference.as_str()]
                    .into_iter()
                    .find(|s| !s.is_empty() && *s != "NONREF")
                    .unwrap_or(&line.kind)
                    .clone_into(&mut description);
            }
            if line.reversal {
                description = format!("Reversal: {description}");
                read.notes.push(format!(
                    "line {}: a reversal (R{}), booked as money {}",
                    field.line,
                    if line.minor > 0 { "D" } else { "C" },
                    if line.minor > 0 { "in" } else { "out" }
                ));
            }
            let date = line.entry_date.unwrap_or(line.value_date);
            read.last = Some(read.last.map_or(date, |l| l.max(date)));
            read.lines.rows = read.lines.rows.saturating_add(1);
            booked = line.minor;
            parsed.rows.push(ParsedRow {
                line: field.line,
                date,
                description,
                amount_minor: line.minor,
                currency,
                category: None,
                currency_unstated,
                bank_ref: Some(line.bank_reference)
                    .filter(|r| !r.is_empty() && !r.eq_ignore_ascii_case("NONREF")),
                detail: RowDetail::of(info.and_then(|i| counterparty_account(&i.text)), Vec::new()),
            });
        }
    }
    booked
}

#[cfg(test)]
mod tests;
