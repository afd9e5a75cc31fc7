//! What a statement says of itself beyond naming its columns: the order of its dates, the
//! currency of its amounts, which way its money goes when a column says it in words, and what
//! kind of account it is of.

use super::{
    Currency, DataRecord, DateOrder, ImportError, KindHint, Layout, ParseOptions, cell, decide_order,
    vocabulary,
};

/// The order of day and month a known exporter's layout implies: Mint, a US service, writes month
/// first (its header: Date, Description, Original Description, Amount, Transaction Type, …).
pub(super) fn layout_hint(layout: &Layout) -> Option<(DateOrder, String)> {
    let names: Vec<String> = layout.headers.iter().map(|h| vocabulary::normalise(h)).collect();
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
        let name = vocabulary::normalise(h);
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
pub(super) const DAY_FIRST_WORDS: &[&str] = &[
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

/// What kind of account the statement is of, when it says: a type column whose rows are a
/// card's (Sale with Payment or Return), or a banner naming a credit card.
pub(super) fn kind_of_statement(
    layout: &Layout,
    raw_lines: &[&str],
    data: &[DataRecord],
) -> Option<KindHint> {
    let card = kakeibo_money::AccountKind::Card;
    if let Some(column) = layout
        .headers
        .iter()
        .position(|h| matches!(vocabulary::normalise(h).as_str(), "type" | "transaction type"))
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
pub(super) const CARD_WORDS: &[&str] = &[
    "credit card",
    "card statement",
    "kreditkarte",
    "carte de crédit",
    "tarjeta de crédito",
];

/// The state cell of a row the bank has not booked ("PENDING", "declined", "reverted"), if the
/// statement has a `State` column (Revolut's) and this row is one. A `Status` column is not
/// enough: PayPal marks as "Pending" the bank deposits that fund a payment, which do move money.
pub(super) fn unbooked_state<'a>(layout: &Layout, cells: &'a [String]) -> Option<&'a str> {
    let column = layout
        .headers
        .iter()
        .position(|h| vocabulary::normalise(h) == "state")?;
    let state = cells.get(column)?.trim();
    matches!(
        state.to_lowercase().as_str(),
        "pending" | "declined" | "reverted" | "failed" | "cancelled" | "canceled"
    )
    .then_some(state)
}

/// What a blank cell of the direction column means: what its cells showed, else money out for a
/// column named as a sign flag (a card's `BillingAmountSign`, blank for purchases).
pub(super) fn blank_direction(layout: &Layout, found: Option<Blank>) -> Blank {
    let named_sign_flag = layout
        .columns
        .direction
        .and_then(|i| layout.headers.get(i))
        .is_some_and(|h| vocabulary::normalise(h).contains("sign"));
    match found {
        Some(blank) => blank,
        None if named_sign_flag => Blank::Debit,
        None => Blank::AsWritten,
    }
}

/// Words a direction column says money went out with, and came in with.
pub(super) const DEBIT_WORDS: &[&str] = &["af", "debit", "dr", "d", "withdrawal", "s", "soll", "debet"];

pub(super) const CREDIT_WORDS: &[&str] = &["bij", "credit", "cr", "c", "deposit", "h", "haben"];

/// What a blank cell of a direction column means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Blank {
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
pub(super) fn find_direction(layout: &mut Layout, data: &[(usize, Vec<String>)]) -> Option<Blank> {
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

/// The currency the statement states, and where it says so: the one asked for, else an amount
/// header's code, else the first currency cell of the rows.
pub(super) fn stated_currency(
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
pub(super) fn date_order(
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
pub(super) fn header_currency(layout: &Layout) -> Option<Currency> {
    let columns = &layout.columns;
    [columns.amount, columns.debit, columns.credit]
        .into_iter()
        .flatten()
        .filter_map(|i| layout.headers.get(i))
        .find_map(|h| {
            let name = vocabulary::normalise(h);
            let last = name.rsplit_once(' ').map_or(name.as_str(), |(_, w)| w);
            if vocabulary::KNOWN_CODES.contains(&last) {
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
pub(super) fn describing_columns(layout: &Layout) -> Vec<usize> {
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
