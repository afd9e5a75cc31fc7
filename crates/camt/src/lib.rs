//! ISO 20022 camt statements read: camt.052 (account report), camt.053 (statement) and camt.054
//! (debit and credit notification), every version — bytes in, a [`Parsed`] statement out, no
//! database, no HTTP.
//!
//! The bytes are decoded by the XML declaration's `encoding` (valid UTF-8 stays UTF-8), and the
//! document read with quick-xml by local names ([`read`]); no entity a document type declares is
//! ever expanded and nesting past [`read::MAX_DEPTH`] is refused. Per the rules of camt (FORMATS.md
//! §3b): one row per `Ntry`, signed only by its `CdtDbtInd` (an `Amt` is never negative); only
//! booked entries are rows — pending ones are listed and kept out until they arrive booked,
//! informational ones left out; a reversal (`RvslInd`) keeps its sign and says so; the row is
//! dated by `BookgDt` as written; a batch's `TxDtls` are listed line by line in the notes with
//! their sum checked against the entry; `AcctSvcrRef` is the row's `bank_ref`; the opening booked
//! balance (`OPBD`, else `PRCD`) plus the booked entries is checked against the closing one
//! (`CLBD`), which the ledger then checks the account against. A file of several statements is
//! read one at a time, by its number ([`ParseOptions::statement`]).

// Everything here comes from a file anyone may upload: no arithmetic may overflow or panic and no
// indexing may panic.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod read;

use chrono::NaiveDate;
use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use kakeibo_money::{AccountKind, Currency, Money};
use kakeibo_statement::{
    Closing, DateOrder, DecimalMark, Format, ImportError, KindHint, LineCount, ParseOptions, Parsed,
    ParsedRow, RowDetail, RowError, StatementAccount, StatementFormat, StatementInfo, choose, count_lines,
    counted, last_four, within_limits,
};

use self::read::{Balance, Entry, Statement, Unreadable};

/// Reads a camt file's bytes into the statement `options.statement` names (the only one, when
/// the file holds one). `format` and `recognised_by` are what sniffing found.
pub fn parse(
    bytes: &[u8],
    format: StatementFormat,
    recognised_by: &str,
    options: &ParseOptions,
) -> Result<Parsed, ImportError> {
    within_limits(bytes)?;
    let (text, encoding) = decode(bytes).map_err(ImportError::Encoding)?;
    let statements = read::read(&text).map_err(|unreadable| {
        ImportError::Statement(match unreadable {
            Unreadable::NotXml { line, why } => {
                format!("the camt file is not well-formed XML at line {line} ({why}); download it again")
            }
            Unreadable::TooDeep { line } => format!(
                "the camt file nests elements deeper than {} at line {line}; no statement does",
                read::MAX_DEPTH
            ),
        })
    })?;
    let count = statements.len();
    if count == 0 {
        return Err(ImportError::Statement(
            "the camt file holds no statement, report or notification (Stmt, Rpt or Ntfctn)".to_owned(),
        ));
    }
    let index = choose(options.statement, count, || {
        statements.iter().map(statement_in_words).collect()
    })?;
    let statement = statements.into_iter().nth(index).ok_or(ImportError::Empty)?;
    let info = Info {
        format,
        recognised_by: recognised_by.to_owned(),
        number: index.saturating_add(1),
        of: count,
        encoding,
        total_lines: count_lines(&text),
    };
    Ok(into_parsed(&statement, &info, options))
}

/// The text of the bytes: valid UTF-8 as it is, else by the declared encoding, else Windows-1252.
fn decode(bytes: &[u8]) -> Result<(std::borrow::Cow<'_, str>, String), String> {
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok((std::borrow::Cow::Borrowed(text), "UTF-8".to_owned()));
    }
    let head = String::from_utf8_lossy(bytes.get(..200.min(bytes.len())).unwrap_or(bytes)).into_owned();
    let declared = head.split_once("encoding=").and_then(|(_, rest)| {
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        Some(
            rest.chars()
                .skip(1)
                .take_while(|c| *c != quote)
                .collect::<String>(),
        )
    });
    let encoding = declared
        .as_deref()
        .and_then(|d| Encoding::for_label(d.trim().as_bytes()))
        .filter(|e| *e != UTF_8)
        .unwrap_or(WINDOWS_1252);
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    if had_errors {
        return Err(format!("the bytes are neither UTF-8 nor {}", encoding.name()));
    }
    let why = declared.map_or_else(
        || "no encoding declared and the bytes are not UTF-8".to_owned(),
        |d| format!("as the XML declaration says, {d}"),
    );
    Ok((
        std::borrow::Cow::Owned(text.into_owned()),
        format!("{} ({why})", encoding.name()),
    ))
}

struct Info {
    format: StatementFormat,
    recognised_by: String,
    number: usize,
    of: usize,
    encoding: String,
    total_lines: usize,
}

/// The kind of account a camt account type code names, as OFX's words (`CACC` current, `SVGS`
/// savings, `CARD` a card).
fn kind_word(code: &str) -> &'static str {
    match code.to_ascii_uppercase().as_str() {
        "CACC" | "CASH" | "TRAN" => "CHECKING",
        "SVGS" | "MOMA" => "SAVINGS",
        "CARD" => "CREDITCARD",
        _ => "BANK",
    }
}

fn account_of(statement: &Statement) -> Option<StatementAccount> {
    (!statement.account.is_empty()).then(|| StatementAccount {
        id: statement.account.clone(),
        bank: None,
        kind_word: kind_word(&statement.account_kind).to_owned(),
    })
}

fn statement_in_words(statement: &Statement) -> String {
    let account =
        account_of(statement).map_or_else(|| "an account it does not name".to_owned(), |a| a.in_words());
    let currency = if statement.currency.is_empty() {
        "no currency"
    } else {
        statement.currency.as_str()
    };
    format!(
        "{account} ({currency}, {})",
        counted(statement.entries.len(), "entry", "entries")
    )
}

/// A camt date (`2024-03-12`, `2024-03-12T10:00:00+01:00`): the calendar date as written.
fn calendar_date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.trim().get(..10)?, "%Y-%m-%d").ok()
}

/// A camt amount, signed by its indicator: credit in, debit out.
fn signed(amount: &str, credit_debit: &str, currency: Currency) -> Result<i64, String> {
    if amount.trim_start().starts_with('-') {
        return Err(format!(
            "{amount:?} is negative, which a camt amount never is: the direction is CdtDbtInd's"
        ));
    }
    let minor = Money::parse_exact(amount, currency)
        .map_err(|e| e.to_string())?
        .amount_minor;
    match credit_debit.trim().to_ascii_uppercase().as_str() {
        "CRDT" => Ok(minor),
        "DBIT" => Ok(minor.saturating_neg()),
        "" => Err("no CdtDbtInd says which way the money went".to_owned()),
        other => Err(format!("CdtDbtInd {other:?} is neither CRDT nor DBIT")),
    }
}

/// A stated balance as held, in `currency`, when it reads and is in that currency.
fn held(balance: &Balance, currency: Currency) -> Option<Closing> {
    let own = Currency::parse(&balance.currency)
        .ok()
        .is_none_or(|c| c == currency);
    Some(Closing {
        date: calendar_date(&balance.date)?,
        held_minor: own
            .then(|| signed(&balance.amount, &balance.credit_debit, currency).ok())
            .flatten()?,
    })
}

fn balance<'a>(statement: &'a Statement, codes: &[&str]) -> Option<&'a Balance> {
    codes.iter().find_map(|code| {
        statement
            .balances
            .iter()
            .find(|b| b.code.eq_ignore_ascii_case(code))
    })
}

/// What the entry is called: the other party (the creditor of a debit, the debtor of a credit)
/// and the remittance text; else the entry's own words.
fn description(entry: &Entry) -> String {
    let debit = entry.credit_debit.eq_ignore_ascii_case("DBIT");
    let party = entry
        .details
        .iter()
        .map(|d| if debit { &d.creditor } else { &d.debtor })
        .find(|name| !name.is_empty())
        .cloned()
        .unwrap_or_default();
    let remittance = entry.details.first().map_or_else(String::new, |d| {
        let text = d.remittance.join(" ");
        if text.trim().is_empty() {
            d.reference.clone()
        } else {
            text
        }
    });
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut words: Vec<String> = [party, remittance]
        .iter()
        .map(|s| squeeze(s))
        .filter(|s| !s.is_empty())
        .collect();
    words.dedup();
    if words.is_empty() {
        let fallback = entry
            .details
            .first()
            .map(|d| d.additional.as_str())
            .filter(|a| !a.trim().is_empty())
            .unwrap_or(&entry.additional);
        return squeeze(fallback);
    }
    words.join(" · ")
}

/// A batch's lines in words, and whether they add up to the entry: "line 40: a batch of 2
/// payments (EUR 21.87 + EUR 12.96 = EUR 34.83, the entry's amount)".
fn batch_note(entry: &Entry, amount: i64, currency: Currency) -> Option<String> {
    if entry.details.len() < 2 {
        return None;
    }
    let lines: Vec<i64> = entry
        .details
        .iter()
        .filter_map(|d| {
            let (text, ccy) = d
                .transaction_amount
                .clone()
                .or_else(|| (!d.amount.is_empty()).then(|| (d.amount.clone(), d.currency.clone())))
                .or_else(|| d.instructed.clone())?;
            let own = Currency::parse(&ccy).ok().is_none_or(|c| c == currency);
            let way = if d.credit_debit.is_empty() {
                &entry.credit_debit
            } else {
                &d.credit_debit
            };
            own.then(|| signed(&text, way, currency).ok()).flatten()
        })
        .collect();
    let words: Vec<String> = lines.iter().map(|m| Money::new(*m, currency).format()).collect();
    let sum: i64 = lines.iter().fold(0i64, |a, b| a.saturating_add(*b));
    let all = lines.len() == entry.details.len();
    let verdict = if all && sum == amount {
        "the entry's amount".to_owned()
    } else if all {
        format!(
            "not the entry's {}: booked as one line at the entry's amount",
            Money::new(amount, currency).format()
        )
    } else {
        "some lines in another currency or unreadable: booked as one line at the entry's amount".to_owned()
    };
    Some(format!(
        "line {}: a batch of {} payments ({} = {}, {verdict})",
        entry.line,
        entry.details.len(),
        words.join(" + "),
        Money::new(sum, currency).format()
    ))
}

/// Reads each entry into a row (with its notes), one not booked, or an unreadable one; counts
/// their lines; gives the sum of the booked rows in the statement's currency.
fn read_entries(
    entries: &[Entry],
    (currency, unstated): (Currency, bool),
    parsed: &mut Parsed,
    lines: &mut LineCount,
    notes: &mut Vec<String>,
) -> i64 {
    let mut booked_sum: i64 = 0;
    let mut last_line = 0usize;
    for entry in entries {
        let own_line = usize::from(entry.line != last_line);
        let first = if own_line == 1 {
            entry.line
        } else {
            entry.line.saturating_add(1)
        };
        lines.continued = lines
            .continued
            .saturating_add(entry.end_line.saturating_sub(first));
        last_line = entry.end_line.max(entry.line);
        match row_of(entry, currency, unstated) {
            Ok(Read::Row(row, row_notes)) => {
                notes.extend(row_notes);
                if row.currency == currency {
                    booked_sum = booked_sum.saturating_add(row.amount_minor);
                }
                lines.rows = lines.rows.saturating_add(own_line);
                parsed.rows.push(row);
            }
            Ok(Read::Skipped(reason)) => {
                lines.skipped = lines.skipped.saturating_add(own_line);
                parsed.skipped.push(RowError {
                    line: entry.line,
                    column: None,
                    message: reason,
                    raw: format!(
                        "{} {} {} {}",
                        entry.credit_debit, entry.amount, entry.currency, entry.status
                    ),
                    figures: None,
                });
            }
            Err((column, message)) => {
                lines.unreadable = lines.unreadable.saturating_add(own_line);
                parsed.errors.push(RowError {
                    line: entry.line,
                    column: Some(column.to_owned()),
                    message,
                    raw: format!(
                        "{} {} {} {}",
                        entry.credit_debit, entry.amount, entry.currency, entry.status
                    ),
                    figures: None,
                });
            }
        }
    }
    booked_sum
}

/// The statement's closing and available balances in its currency, and the check of its opening
/// balance plus its booked entries against its closing one, in the notes.
fn balances(
    statement: &Statement,
    currency: Currency,
    booked_sum: i64,
    notes: &mut Vec<String>,
) -> (Option<Closing>, Option<Closing>) {
    let opening = balance(statement, &["OPBD", "PRCD"]).and_then(|b| held(b, currency));
    let closing = balance(statement, &["CLBD"]).and_then(|b| held(b, currency));
    let available = balance(statement, &["CLAV"]).and_then(|b| held(b, currency));
    if let (Some(opening), Some(closing)) = (opening, closing) {
        let reached = opening.held_minor.saturating_add(booked_sum);
        let money = |minor| Money::new(minor, currency).format();
        notes.push(if reached == closing.held_minor {
            format!(
                "the opening booked balance {} plus the booked entries {} is the closing booked balance {}",
                money(opening.held_minor),
                money(booked_sum),
                money(closing.held_minor)
            )
        } else {
            format!(
                "the opening booked balance {} plus the booked entries {} is {}, not the closing booked balance {}: \
                 an entry is missing or was changed",
                money(opening.held_minor),
                money(booked_sum),
                money(reached),
                money(closing.held_minor)
            )
        });
    }
    if closing.is_none() && balance(statement, &["CLBD"]).is_some() {
        notes.push(
            "its closing booked balance is in another currency or does not read, so it is not checked"
                .to_owned(),
        );
    }
    (closing, available)
}

/// What one entry reads as.
enum Read {
    Row(ParsedRow, Vec<String>),
    Skipped(String),
}

fn row_of(entry: &Entry, account_currency: Currency, unstated: bool) -> Result<Read, (&'static str, String)> {
    let status = entry.status.trim().to_ascii_uppercase();
    match status.as_str() {
        "BOOK" => {}
        "PDNG" => {
            return Ok(Read::Skipped(
                "pending (Sts PDNG): kept out of the ledger until a statement has it booked".to_owned(),
            ));
        }
        "INFO" => {
            return Ok(Read::Skipped(
                "for information only (Sts INFO): no booking".to_owned(),
            ));
        }
        "" => return Err(("Sts", "the entry has no status (Sts)".to_owned())),
        other => return Err(("Sts", format!("the status {other:?} is not BOOK, PDNG or INFO"))),
    }
    let currency = if entry.currency.is_empty() {
        account_currency
    } else {
        Currency::parse(&entry.currency).map_err(|e| ("Amt", e.to_string()))?
    };
    let amount = signed(&entry.amount, &entry.credit_debit, currency).map_err(|why| ("Amt", why))?;
    let mut notes = Vec::new();
    let date = match (calendar_date(&entry.booking), calendar_date(&entry.value)) {
        (Some(booked), _) => booked,
        (None, Some(value)) => {
            notes.push(format!(
                "line {}: no booking date (BookgDt), dated by its value date",
                entry.line
            ));
            value
        }
        (None, None) => {
            return Err((
                "BookgDt",
                "no booking date (BookgDt) or value date (ValDt)".to_owned(),
            ));
        }
    };
    if amount == 0 {
        return Ok(Read::Skipped("it moves no money (Amt is zero)".to_owned()));
    }
    let mut description = description(entry);
    if description.is_empty() {
        if amount > 0 { "Credit" } else { "Debit" }.clone_into(&mut description);
    }
    if entry.reversal {
        description = format!("Reversal: {description}");
        notes.push(format!(
            "line {}: a reversal (RvslInd) of an earlier {}, booked as the bank signs it",
            entry.line,
            if amount > 0 { "debit" } else { "credit" }
        ));
    }
    if currency != account_currency {
        notes.push(format!(
            "line {}: the entry is in {currency}, not the account's {account_currency}; it is kept in {currency}",
            entry.line
        ));
    }
    let instructed = entry.details.iter().find_map(|d| d.instructed.clone());
    if let Some((text, ccy)) = instructed.filter(|(_, ccy)| Currency::parse(ccy).ok() != Some(currency)) {
        notes.push(format!("line {}: instructed as {ccy} {text}", entry.line));
    }
    notes.extend(batch_note(entry, amount, currency));
    let counterparty = entry.details.iter().find_map(|d| {
        let account = if amount < 0 {
            &d.creditor_account
        } else {
            &d.debtor_account
        };
        Some(account.trim().to_owned()).filter(|a| !a.is_empty())
    });
    if let Some(account) = &counterparty {
        description = format!("{description} · account …{}", last_four(account));
    }
    Ok(Read::Row(
        ParsedRow {
            line: entry.line,
            date,
            description,
            amount_minor: amount,
            currency,
            category: None,
            currency_unstated: unstated && entry.currency.is_empty(),
            bank_ref: Some(entry.servicer_ref.clone()).filter(|r| !r.trim().is_empty()),
            detail: RowDetail::of(counterparty, Vec::new()),
        },
        notes,
    ))
}

fn into_parsed(statement: &Statement, info: &Info, options: &ParseOptions) -> Parsed {
    let stated = Currency::parse(&statement.currency).ok().or_else(|| {
        statement
            .balances
            .iter()
            .find_map(|b| Currency::parse(&b.currency).ok())
    });
    let currency = stated.or(options.currency).unwrap_or(Currency::INR);
    let unstated = stated.is_none() && options.currency.is_none();
    let kind = match kind_word(&statement.account_kind) {
        "CHECKING" => Some((
            AccountKind::Checking,
            "its account type is CACC, a current account",
        )),
        "SAVINGS" => Some((AccountKind::Savings, "its account type is a savings account")),
        "CREDITCARD" => Some((AccountKind::Card, "its account type is CARD")),
        _ => None,
    };
    let mut parsed = Parsed::new(Format {
        encoding: info.encoding.clone(),
        delimiter: String::new(),
        header_line: 0,
        columns: std::collections::BTreeMap::new(),
        date_order: DateOrder::YearFirst,
        date_order_reason: "camt dates are ISO 8601 (YYYY-MM-DD)".to_owned(),
        date_order_assumed: false,
        currency_from: None,
        decimal_mark: DecimalMark::Point,
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
    let mut notes = Vec::new();
    let mut lines = LineCount {
        total: info.total_lines,
        ..LineCount::default()
    };
    let booked_sum = read_entries(
        &statement.entries,
        (currency, unstated),
        &mut parsed,
        &mut lines,
        &mut notes,
    );
    lines.banner = lines.total.saturating_sub(lines.accounted());
    let (closing, available) = balances(statement, currency, booked_sum, &mut notes);
    let period = calendar_date(&statement.from).zip(calendar_date(&statement.to));
    parsed.lines = lines;
    parsed.format.statement = Some(StatementInfo {
        format: info.format,
        recognised_by: info.recognised_by.clone(),
        number: info.number,
        of: info.of,
        account: account_of(statement),
        currency: stated,
        period,
        closing,
        available,
        notes,
    });
    parsed
}

#[cfg(test)]
mod tests;
