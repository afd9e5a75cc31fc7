//! Reading a statement's records into rows: each record's date, amount, direction and
//! currency, the records passed over, and the chain of running balances the rows are checked
//! along.

use super::{
    Blank, CREDIT_WORDS, Columns, Currency, DEBIT_WORDS, DataRecord, DateOrder, DecimalMark, Fees, Layout,
    Parsed, ParsedRow, RowError, parse_amount, parse_date, raw_line, reconcile, unbooked_state,
};

/// The chain the balance column is checked along: one link per row read, in file order (none
/// without a balance column), and beside each link the fee of its row's fee column, if any.
#[derive(Debug, Default)]
pub(super) struct Chain {
    pub(super) links: Vec<reconcile::Link>,
    pub(super) fees: Vec<i64>,
}

/// Reads the records under the header into the statement's rows, skipped lines and errors, and
/// returns the chain of their balances.
pub(super) fn read_rows(
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

/// Whether the amount cells mark only money in (`CR`), never money out (`DR`, a minus sign,
/// parentheses): then an unmarked amount is money out.
pub(super) fn unmarked_debit(data: &[DataRecord], amount: Option<usize>) -> bool {
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
pub(super) fn direction_marked(cell: &str) -> bool {
    let cell = cell.trim();
    let upper = cell.to_uppercase();
    upper.ends_with("CR")
        || upper.ends_with("DR")
        || cell.starts_with('+')
        || (cell.starts_with('(') && cell.ends_with(')'))
}

/// A row as the balance chain sees it: its amount as the file has it (`invert` comes last), and the
/// balance cell beside it when that reads as money of the row's currency.
pub(super) fn link(
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
pub(super) fn series_of<'a>(accounts: &mut Vec<&'a str>, account: &'a str) -> usize {
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
pub(super) const MAX_ACCOUNTS: usize = 20;

/// A record that is no transaction to read.
pub(super) enum PassedOver {
    /// A note, a card number, a footer: no date and no money.
    Note,
    /// A summary line or a row the bank has not booked: the column to name, and why.
    Skipped(Option<usize>, String),
}

/// Whether a record under the header is passed over rather than read as a row, and how.
pub(super) fn passed_over(cells: &[String], layout: &Layout, order: DateOrder) -> Option<PassedOver> {
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
pub(super) fn still_link(
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

pub(super) fn cell(cells: &[String], i: Option<usize>) -> &str {
    i.and_then(|i| cells.get(i)).map_or("", String::as_str)
}

pub(super) type CellError = (Option<usize>, String);

/// What every row of one file is read with.
pub(super) struct RowContext<'a> {
    pub(super) columns: &'a Columns,
    pub(super) describing: &'a [usize],
    pub(super) mark: DecimalMark,
    pub(super) order: DateOrder,
    pub(super) default_currency: Currency,
    /// Whether `default_currency` was stated (by the options, a header or a currency column).
    pub(super) currency_stated: bool,
    /// What a blank cell of the direction column means.
    pub(super) blank_direction: Blank,
    /// The amounts mark only money in, with `CR` after them, and write no sign: an unmarked one is
    /// money out (a card statement's purchases beside its `1,234.56 CR` payments).
    pub(super) unmarked_debit: bool,
}

// A parsed amount's magnitude is at most `i64::MAX` (`Money::parse_decimal` refuses more), so
// turning its sign saturates nothing: these are exact on every amount the parser gives.

/// The amount as money out, whatever sign the file wrote it with.
pub(super) fn money_out(minor: i64) -> i64 {
    minor.saturating_abs().saturating_neg()
}

/// The amount as money in, whatever sign the file wrote it with.
pub(super) fn money_in(minor: i64) -> i64 {
    minor.saturating_abs()
}

/// The amount with its sign turned: a file that writes spending as positive.
pub(super) fn flipped(minor: i64) -> i64 {
    minor.saturating_neg()
}

/// Reads one data row: `Ok(None)` for a row that moves no money.
pub(super) fn read_row(cells: &[String], context: &RowContext<'_>) -> Result<Option<ParsedRow>, CellError> {
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
        bank_ref: None,
        detail: None,
    }))
}
