//! OFX statements read: OFX 1 (SGML), OFX 2 (XML), Quicken's QFX and QuickBooks' QBO — bytes in,
//! a [`Parsed`] statement out, no database, no HTTP.
//!
//! The bytes are decoded by the charset the header declares (valid UTF-8 stays UTF-8; a header's
//! `1252`, `ISO-8859-1` or non-spec `8859-1` decides the rest), and the body is read by one
//! tolerant reader for SGML and XML alike ([`markup`]). A file may hold several statements — bank
//! accounts, cards, investment accounts — and each is read into its own [`Parsed`] (one at a time,
//! by its number: [`ParseOptions::statement`]). Each transaction keeps the bank's sign (`TRNAMT`
//! is from the holder's side), its `DTPOSTED`'s calendar date as written, and its `FITID` as the
//! row's `bank_ref`; a `TRNTYPE` that contradicts the sign is reported, never flipped; the
//! statement's `LEDGERBAL` is the closing balance the account is checked against. An investment
//! statement's cash lines are read and its securities left out with a sentence.

// Everything here comes from a file anyone may upload: no arithmetic may overflow or panic and no
// indexing may panic.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod fields;
pub mod markup;
mod read;

use kakeibo_money::{AccountKind, Currency};
use kakeibo_statement::{
    Closing, Correction, CorrectionAction, DateOrder, DecimalMark, Format, ImportError, KindHint, LineCount,
    OfxSyntax, ParseOptions, Parsed, ParsedRow, RowDetail, RowError, StatementAccount, StatementFormat,
    StatementInfo, choose, count_lines, counted, last_four, within_limits,
};

use self::{
    fields::{amount_minor, calendar_date, clip, description, sign_of_type},
    read::{Kind, Statement, Transaction, Unreadable},
};

/// Reads an OFX file's bytes into the statement `options.statement` names (the only one, when
/// the file holds one). `syntax` and `recognised_by` are what sniffing found.
pub fn parse(
    bytes: &[u8],
    syntax: OfxSyntax,
    recognised_by: &str,
    options: &ParseOptions,
) -> Result<Parsed, ImportError> {
    within_limits(bytes)?;
    let document = markup::decode(bytes).map_err(ImportError::Encoding)?;
    let body = read::read(document.body(), document.body_line).map_err(|unreadable| {
        ImportError::Statement(match unreadable {
            Unreadable::TooDeep { line } => format!(
                "the OFX file nests elements deeper than {} at line {line}; no statement does",
                markup::MAX_DEPTH
            ),
            Unreadable::CutShort { open, line } => format!(
                "the OFX file ends before its <{open}> (opened at line {line}) closes: it looks cut short; \
                 download it again"
            ),
        })
    })?;
    let statements = body.statements;
    if statements.is_empty() {
        return Err(ImportError::Statement(match body.errors.first() {
            Some((code, message)) => format!(
                "the OFX file is the bank's error answer, not a statement: code {code}{}",
                if message.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", clip(message))
                }
            ),
            None => "the OFX file holds no bank, card or investment statement".to_owned(),
        }));
    }
    let count = statements.len();
    let index = choose(options.statement, count, || {
        statements.iter().map(statement_in_words).collect()
    })?;
    let total_lines = document
        .body_line
        .saturating_sub(1)
        .saturating_add(count_lines(document.body()));
    let statement = statements.into_iter().nth(index).ok_or(ImportError::Empty)?;
    let info = Info {
        format: StatementFormat::Ofx { syntax },
        recognised_by: recognised_by.to_owned(),
        number: index.saturating_add(1),
        of: count,
        encoding: document.encoding,
        header_lines: document.body_line.saturating_sub(1),
        total_lines,
    };
    into_parsed(statement, &info, options)
}

/// A statement in a few words, as a refusal lists it: "checking account …5678 (USD, 3 transactions)".
fn statement_in_words(statement: &Statement) -> String {
    let account = account_of(statement).map_or_else(|| kind_word(statement).to_lowercase(), |a| a.in_words());
    let currency = if statement.currency.is_empty() {
        "no currency"
    } else {
        statement.currency.as_str()
    };
    format!(
        "{account} ({currency}, {})",
        counted(statement.transactions.len(), "transaction", "transactions")
    )
}

fn kind_word(statement: &Statement) -> &str {
    match statement.kind {
        Kind::Card => "CREDITCARD",
        Kind::Investment => "INVESTMENT",
        Kind::Bank if statement.account_type.is_empty() => "BANK",
        Kind::Bank => &statement.account_type,
    }
}

fn account_of(statement: &Statement) -> Option<StatementAccount> {
    (!statement.account_id.is_empty()).then(|| StatementAccount {
        id: statement.account_id.clone(),
        bank: Some(statement.bank_id.clone()).filter(|b| !b.is_empty()),
        kind_word: kind_word(statement).to_owned(),
    })
}

/// What the file says of the statement being read.
struct Info {
    format: StatementFormat,
    recognised_by: String,
    number: usize,
    of: usize,
    encoding: String,
    header_lines: usize,
    total_lines: usize,
}

/// The account kind a statement says it is of.
fn kind_hint(statement: &Statement) -> Option<KindHint> {
    let (kind, why) = match statement.kind {
        Kind::Card => (
            AccountKind::Card,
            "it is an OFX credit-card statement (CCSTMTRS)".to_owned(),
        ),
        Kind::Investment => return None,
        Kind::Bank => match statement.account_type.to_ascii_uppercase().as_str() {
            "CHECKING" => (AccountKind::Checking, "its ACCTTYPE is CHECKING".to_owned()),
            "SAVINGS" | "MONEYMRKT" | "CD" => (
                AccountKind::Savings,
                format!("its ACCTTYPE is {}", statement.account_type),
            ),
            "CREDITLINE" => (AccountKind::Card, "its ACCTTYPE is CREDITLINE".to_owned()),
            _ => return None,
        },
    };
    Some(KindHint { kind, why })
}

/// A stated balance as held, when it reads.
fn balance(stated: Option<&read::Balance>, currency: Currency) -> Option<Closing> {
    let stated = stated?;
    Some(Closing {
        date: calendar_date(&stated.as_of).ok()?,
        held_minor: amount_minor(&stated.amount, currency).ok()?,
    })
}

fn into_parsed(statement: Statement, info: &Info, options: &ParseOptions) -> Result<Parsed, ImportError> {
    let stated = Currency::parse(&statement.currency).ok();
    let currency = stated.or(options.currency).unwrap_or(Currency::INR);
    let currency_unstated = stated.is_none() && options.currency.is_none();
    let mut notes = Vec::new();
    if !statement.currency.is_empty() && stated.is_none() {
        notes.push(format!(
            "its CURDEF {:?} is not a currency code",
            clip(&statement.currency)
        ));
    }
    if let Some((code, message)) = &statement.status {
        notes.push(format!("the bank marked it with status {code} {}", clip(message)));
    }
    let closing = balance(statement.ledger.as_ref(), currency);
    let available = balance(statement.available.as_ref(), currency);
    if statement.ledger.is_some() && closing.is_none() {
        notes.push("its LEDGERBAL has no readable amount and date, so no balance is checked".to_owned());
    }
    let mut parsed = Parsed::new(Format {
        encoding: info.encoding.clone(),
        delimiter: String::new(),
        header_line: 0,
        columns: std::collections::BTreeMap::new(),
        date_order: DateOrder::YearFirst,
        date_order_reason: "OFX dates are written year first (YYYYMMDD)".to_owned(),
        date_order_assumed: false,
        currency_from: (!currency_unstated && stated.is_none())
            .then(|| "the currency given with the import".to_owned()),
        decimal_mark: DecimalMark::Point,
        reconciliation: None,
        inverted: false,
        spending_positive: None,
        mapping_from: None,
        accounts: Vec::new(),
        fees: None,
        account_kind: kind_hint(&statement),
        taken: Vec::new(),
        statement: None,
    });
    let mut lines = LineCount {
        total: info.total_lines,
        header: info.header_lines,
        ..LineCount::default()
    };
    let account = account_of(&statement);
    let in_transactions = read_transactions(
        statement.transactions,
        (currency, currency_unstated),
        &mut parsed,
        &mut lines,
        &mut notes,
    );
    // Securities transactions are listed; their lines are the statement's markup (below).
    for (name, line) in &statement.securities {
        parsed.skipped.push(RowError {
            line: *line,
            column: None,
            message: format!(
                "{name} is a securities transaction: kakeibo keeps cash accounts, so it is left out (the \
                 statement's cash lines are read)"
            ),
            raw: format!("<{name}>"),
            figures: None,
        });
    }
    if statement.kind == Kind::Investment
        && parsed.rows.is_empty()
        && parsed.errors.is_empty()
        && !statement.securities.is_empty()
    {
        let account = account
            .as_ref()
            .map_or_else(|| "an investment account".to_owned(), StatementAccount::in_words);
        return Err(ImportError::Statement(format!(
            "the statement is of {account} and holds only securities transactions ({}): kakeibo keeps cash \
             accounts, so there is nothing in it to import",
            statement.securities.len()
        )));
    }
    if !statement.securities.is_empty() {
        notes.push(format!(
            "{} securities transactions of this investment statement are left out; its cash lines are read",
            statement.securities.len()
        ));
    }
    // Every other line is the statement's markup around its transactions: account, balances,
    // sign-on. A transaction's own lines past its first continue it.
    lines.continued = in_transactions;
    lines.banner = lines.total.saturating_sub(lines.accounted());
    let period = calendar_date(&statement.start)
        .ok()
        .zip(calendar_date(&statement.end).ok());
    parsed.lines = lines;
    parsed.format.statement = Some(StatementInfo {
        format: info.format,
        recognised_by: info.recognised_by.clone(),
        number: info.number,
        of: info.of,
        account,
        currency: stated,
        period,
        closing,
        available,
        notes,
    });
    Ok(parsed)
}

/// Reads each transaction into a row (with a note when its type contradicts its sign), a row not
/// booked, or an unreadable one; counts their lines; gives how many lines they span past their
/// first.
fn read_transactions(
    transactions: Vec<Transaction>,
    (currency, currency_unstated): (Currency, bool),
    parsed: &mut Parsed,
    lines: &mut LineCount,
    notes: &mut Vec<String>,
) -> usize {
    let mut in_transactions = 0usize;
    let mut last_line = 0usize;
    parsed.rows.reserve_exact(transactions.len());
    for transaction in transactions {
        let line = transaction.line;
        // Lines are counted once each: a transaction that starts on the line of the one before
        // (a file written on one line) adds a row but no line.
        let own_line = usize::from(line != last_line);
        let spanned_from = if own_line == 1 {
            line
        } else {
            line.saturating_add(1)
        };
        in_transactions = in_transactions.saturating_add(transaction.end_line.saturating_sub(spanned_from));
        last_line = transaction.end_line.max(line);
        match row_of(transaction, currency, currency_unstated) {
            Ok(Read::Row(row, note)) => {
                if let Some(note) = note {
                    notes.push(note);
                }
                lines.rows = lines.rows.saturating_add(own_line);
                parsed.rows.push(row);
            }
            Ok(Read::Corrects(correction, replacement)) => {
                if let Some((row, note)) = replacement {
                    notes.extend(note);
                    lines.rows = lines.rows.saturating_add(own_line);
                    parsed.rows.push(row);
                } else {
                    lines.skipped = lines.skipped.saturating_add(own_line);
                }
                parsed.corrections.push(correction);
            }
            Ok(Read::Skipped(reason, raw)) => {
                lines.skipped = lines.skipped.saturating_add(own_line);
                parsed.skipped.push(RowError {
                    line,
                    column: None,
                    message: reason,
                    raw,
                    figures: None,
                });
            }
            Err((column, message, raw)) => {
                lines.unreadable = lines.unreadable.saturating_add(own_line);
                parsed.errors.push(RowError {
                    line,
                    column: Some(column.to_owned()),
                    message,
                    raw,
                    figures: None,
                });
            }
        }
    }
    in_transactions
}

/// What one transaction reads as.
enum Read {
    /// A row, and a note when its type contradicts its sign.
    Row(ParsedRow, Option<String>),
    /// Not booked, with why and the transaction as written.
    Skipped(String, String),
    /// A correction of an earlier statement's row, and the row that replaces it (with its note).
    Corrects(Correction, Option<(ParsedRow, Option<String>)>),
}

fn row_of(
    t: Transaction,
    currency: Currency,
    currency_unstated: bool,
) -> Result<Read, (&'static str, String, String)> {
    let raw = format!(
        "{} {} {} {}",
        t.trntype,
        t.posted,
        t.amount,
        clip(if t.name.is_empty() { &t.memo } else { &t.name })
    );
    let raw = raw.trim().to_owned();
    let correction = if t.correct_action.is_empty() && t.correct_fitid.is_empty() {
        None
    } else {
        match correction_of(&t) {
            Ok(correction) => Some(correction),
            Err(why) => return Ok(Read::Skipped(why, raw)),
        }
    };
    if let Some(correction) = correction
        .as_ref()
        .filter(|c| c.action == CorrectionAction::Delete)
    {
        return Ok(Read::Corrects(correction.clone(), None));
    }
    let date = calendar_date(&t.posted).map_err(|why| ("DTPOSTED", why, raw.clone()))?;
    let (row_currency, unstated) = match &t.currency {
        Some((code, true)) => match Currency::parse(code) {
            Ok(own) => (own, false),
            Err(_) => {
                return Err((
                    "CURRENCY",
                    format!("{:?} is not a currency code", clip(code)),
                    raw,
                ));
            }
        },
        _ => (currency, currency_unstated),
    };
    let amount = amount_minor(&t.amount, row_currency).map_err(|why| ("TRNAMT", why, raw.clone()))?;
    if amount == 0 {
        return Ok(Read::Skipped(
            "it moves no money (TRNAMT is zero)".to_owned(),
            raw,
        ));
    }
    let note = sign_of_type(&t.trntype)
        .filter(|money_in| *money_in != (amount > 0))
        .map(|money_in| {
            format!(
                "line {}: TRNTYPE {} says money {} but TRNAMT {} is {}; booked as the bank signed it",
                t.line,
                t.trntype.to_ascii_uppercase(),
                if money_in { "in" } else { "out" },
                t.amount,
                if amount > 0 { "positive" } else { "negative" }
            )
        });
    let mut description = description(&t.name, &t.payee, &t.memo);
    if description.is_empty() {
        // A cheque or a cash machine with no payee: its type, and its cheque number when it has one.
        format!("{} {}", t.trntype, t.check_number)
            .trim()
            .clone_into(&mut description);
    }
    if !t.to_account.is_empty() {
        // The bank marks a transfer to another account (BANKACCTTO): said in the row's words,
        // where the transfer matching reads them.
        description = format!(
            "{description} · transfer to account …{}",
            last_four(&t.to_account)
        );
    }
    let row = ParsedRow {
        line: t.line,
        date,
        description,
        amount_minor: amount,
        currency: row_currency,
        category: None,
        currency_unstated: unstated,
        bank_ref: Some(t.fitid).filter(|f| !f.is_empty()),
        detail: RowDetail::of(
            Some(t.to_account.trim().to_owned()).filter(|a| !a.is_empty()),
            Vec::new(),
        ),
    };
    Ok(match correction {
        Some(correction) => Read::Corrects(correction, Some((row, note))),
        None => Read::Row(row, note),
    })
}

/// What a transaction's `CORRECTFITID` and `CORRECTACTION` ask (rule O8), or why it cannot be
/// applied. A correction with no action replaces, as a correction with a row of its own does.
fn correction_of(t: &Transaction) -> Result<Correction, String> {
    if t.correct_fitid.trim().is_empty() {
        return Err(format!(
            "a correction ({}) that names no transaction (CORRECTFITID is empty): not booked",
            clip(&t.correct_action)
        ));
    }
    let action = match t.correct_action.trim().to_ascii_uppercase().as_str() {
        "" | "REPLACE" => CorrectionAction::Replace,
        "DELETE" => CorrectionAction::Delete,
        other => {
            return Err(format!(
                "a correction of the transaction {} with CORRECTACTION {:?}, which is neither REPLACE nor DELETE: \
                 not booked",
                clip(&t.correct_fitid),
                clip(other)
            ));
        }
    };
    Ok(Correction {
        line: t.line,
        bank_ref: t.correct_fitid.trim().to_owned(),
        action,
    })
}

#[cfg(test)]
mod tests;
