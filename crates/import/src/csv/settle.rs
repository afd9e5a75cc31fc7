//! The amounts as booked: checked against the balance column (a refused row taken in at the
//! figure its person chose), turned to money out when the file's words or a card's rows say
//! spending is written as positive, then flipped as the mapping asks.

use super::{
    CARD_WORDS, Chain, Fees, Figure, Figures, Layout, ParseOptions, Parsed, ParsedRow, RowError, TakenFigure,
    flipped, raw_line, reconcile, vocabulary,
};

/// The amounts as booked: checked against the balance column when there is one, turned to money
/// out when the file's words say spending is written as positive, then `invert` on top of the
/// file's own direction and the balance's signs, never instead.
pub(super) fn settle_amounts(
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

/// Every sign turned over: the rows', and the figures of rows refused or taken by the balance
/// column, so those read as the rows are booked.
pub(super) fn flip_signs(parsed: &mut Parsed) {
    for row in &mut parsed.rows {
        row.amount_minor = flipped(row.amount_minor);
    }
    for figures in parsed.figures_mut() {
        *figures = figures.flipped();
    }
}

/// Checks the rows against the balance column: rows that do not reconcile leave the rows for the
/// errors (never booked), and signs taken from the balance are applied.
///
/// A fee column is read both ways — the fee already in the amount, and the fee on top of it — and
/// the way under which fewer rows fail to reconcile is taken.
pub(super) fn apply_reconciliation(
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
            amount_minor: refusal.amount,
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

/// Why the file's amounts are spending written as positive, when its own words say so: an order
/// history's amount column is what was paid ("Item Total"), never money in.
pub(super) fn spending_positive(layout: &Layout) -> Option<String> {
    let header = layout.columns.amount.and_then(|i| layout.headers.get(i))?;
    matches!(
        vocabulary::normalise(header).as_str(),
        "item total" | "order total"
    )
    .then(|| format!("“{header}” is what was paid for an order"))
}

/// Why a statement is a card's that writes purchases as positive amounts: its banner or header
/// says card ("Credit Card", "Kreditkarte", "carte"), its amounts come from one signed column with
/// no direction beside it, and most of them are positive — on an account, most movements are
/// money out. A balance column decides signs itself, so this is asked only without one.
pub(super) fn card_statement(layout: &Layout, raw_lines: &[&str], rows: &[ParsedRow]) -> Option<String> {
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
