//! Reconciliation against a statement's running-balance column.
//!
//! When a statement carries the balance after each row (or before it, as some Dutch banks do),
//! every row's amount must equal the change of that balance across the row. The file may list rows
//! oldest first or newest first (its dates say which, when they move at all); each reading is tried
//! and the one under which more rows reconcile is taken. A balance may count
//! what the account holds (it falls when money goes out) or what is owed on it (a card's balance
//! rises with each purchase): the orientation most rows agree with is taken. A row whose amount
//! does not equal its balance change is not booked: the caller lists it as unreadable with the
//! reason. When the amounts carry no sign at all (every one positive), each row's sign is taken
//! from its balance change, and the row that opens the balance — its change cannot be seen — is not
//! booked either: nothing says which way its money went.

use serde::{Deserialize, Serialize};

/// One row in file order, as the chain sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The row's line in the file.
    pub line: usize,
    /// Its amount as read (money in positive), before any `invert`.
    pub amount_minor: i64,
    /// The balance after it, when the cell holds one.
    pub balance_minor: Option<i64>,
    /// Whether an unreadable line lies between this row and the one before it in the file (the
    /// change between the two then says nothing about either).
    pub broken_before: bool,
    /// The row's date, which tells the order of time when dates move.
    pub date: Option<chrono::NaiveDate>,
}

/// In which order of time the file lists its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeOrder {
    OldestFirst,
    NewestFirst,
}

/// Whether a row's balance is the one after it (most banks) or before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BalancePosition {
    After,
    Before,
}

/// What the balance column counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BalanceKind {
    /// What the account holds: it falls when money goes out.
    Held,
    /// What is owed on the account: it rises when money goes out.
    Owed,
}

/// The outcome, for the preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconciliation {
    /// The balance column's header.
    pub column: String,
    pub order: TimeOrder,
    /// Whether each row's balance is the one after it or before it.
    pub position: BalancePosition,
    pub balance_kind: BalanceKind,
    /// Rows whose balance change could be checked (each but the opening row of a run).
    pub checked: usize,
    /// Of those, the rows whose amount equals the change.
    pub reconciled: usize,
    /// The amounts had no sign; each was given the sign of its balance change.
    pub signs_from_balance: bool,
}

/// A row the chain refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The index into the links.
    pub index: usize,
    pub message: String,
}

/// The chain's verdict: the outcome, the rows refused, and the amounts to book (money in
/// positive; the same as read unless the signs came from the balance).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub reconciliation: Reconciliation,
    pub refused: Vec<Refused>,
    pub amounts: Vec<i64>,
}

/// One checkable step: the row it checks and the balance change it should equal.
#[derive(Debug, Clone, Copy)]
struct Step {
    row: usize,
    delta: i64,
}

/// The steps between neighbouring rows: which row each checks, and by how much the balance moved
/// across it (later in time minus earlier).
fn steps(links: &[Link], order: TimeOrder, position: BalancePosition) -> Vec<Step> {
    (1..links.len())
        .filter_map(|k| {
            let (first, second) = (&links[k - 1], &links[k]);
            if second.broken_before {
                return None;
            }
            let (b0, b1) = (first.balance_minor?, second.balance_minor?);
            let (later_minus_earlier, later, earlier) = match order {
                TimeOrder::OldestFirst => (b1.checked_sub(b0)?, k, k - 1),
                TimeOrder::NewestFirst => (b0.checked_sub(b1)?, k - 1, k),
            };
            // With balances after each row the later row moved it; with balances before, the earlier.
            let row = match position {
                BalancePosition::After => later,
                BalancePosition::Before => earlier,
            };
            Some(Step {
                row,
                delta: later_minus_earlier,
            })
        })
        .collect()
}

/// The orders of time the dates allow: the one they move in, or both when they do not move.
fn orders(links: &[Link]) -> Vec<TimeOrder> {
    let dated: Vec<chrono::NaiveDate> = links.iter().filter_map(|l| l.date).collect();
    let rising = dated.windows(2).filter(|w| w[1] > w[0]).count();
    let falling = dated.windows(2).filter(|w| w[1] < w[0]).count();
    match rising.cmp(&falling) {
        std::cmp::Ordering::Greater => vec![TimeOrder::OldestFirst],
        std::cmp::Ordering::Less => vec![TimeOrder::NewestFirst],
        std::cmp::Ordering::Equal => vec![TimeOrder::OldestFirst, TimeOrder::NewestFirst],
    }
}

/// A reading of the chain: its order of time, where the balances stand, its steps, and its score.
type Reading = (TimeOrder, BalancePosition, Vec<Step>, (usize, usize));

/// Checks the rows against their balances; `None` when not one step can be checked.
pub fn reconcile(column: &str, links: &[Link]) -> Option<Verdict> {
    let magnitude = |steps: &[Step]| {
        steps
            .iter()
            .filter(|s| links[s.row].amount_minor.checked_abs() == s.delta.checked_abs())
            .count()
    };
    // Each reading the dates allow, balances after the rows first; the first best one wins.
    let mut best: Option<Reading> = None;
    for order in orders(links) {
        for position in [BalancePosition::After, BalancePosition::Before] {
            let candidate = steps(links, order, position);
            // Ties go to the reading under which the amounts move a held balance as they say.
            let held = candidate
                .iter()
                .filter(|s| links[s.row].amount_minor == s.delta)
                .count();
            let score = (magnitude(&candidate), held);
            if best.as_ref().is_none_or(|(_, _, _, s)| score > *s) {
                best = Some((order, position, candidate, score));
            }
        }
    }
    let (order, position, chosen, _) = best?;
    if chosen.is_empty() {
        return None;
    }
    // Rows of nothing (an amount of zero) say nothing about signs.
    let unsigned = links.iter().all(|l| l.amount_minor >= 0)
        && links.iter().any(|l| l.amount_minor > 0)
        && chosen.iter().any(|s| s.delta < 0);
    let same = chosen
        .iter()
        .filter(|s| links[s.row].amount_minor == s.delta)
        .count();
    let opposite = chosen
        .iter()
        .filter(|s| Some(links[s.row].amount_minor) == s.delta.checked_neg())
        .count();
    let kind = if unsigned || same >= opposite {
        BalanceKind::Held
    } else {
        BalanceKind::Owed
    };
    let expected = |delta: i64| match kind {
        BalanceKind::Held => Some(delta),
        BalanceKind::Owed => delta.checked_neg(),
    };
    let show = |minor: i64| {
        let sign = if minor < 0 { "−" } else { "+" };
        let abs = minor.unsigned_abs();
        format!("{sign}{}.{:02}", abs / 100, abs % 100)
    };

    let mut amounts: Vec<i64> = links.iter().map(|l| l.amount_minor).collect();
    let mut refused = Vec::new();
    let mut checked_rows = vec![false; links.len()];
    for step in &chosen {
        checked_rows[step.row] = true;
        let amount = links[step.row].amount_minor;
        let Some(wanted) = expected(step.delta) else {
            continue;
        };
        if unsigned && amount.checked_abs() == wanted.checked_abs() {
            amounts[step.row] = wanted;
        } else if amount != wanted {
            refused.push(Refused {
                index: step.row,
                message: format!(
                    "does not reconcile with the balance column ({column}): the balance moved by {} \
                     but the amount is {}",
                    show(step.delta),
                    show(amount)
                ),
            });
        }
    }
    if unsigned {
        // The amounts carry no sign: a row whose balance change is not seen has none to take.
        for (index, checked) in checked_rows.iter().enumerate() {
            if !checked {
                refused.push(Refused {
                    index,
                    message: format!(
                        "the amounts have no sign, and this row's balance change cannot be seen \
                         (it opens the balance in {column}): say which way its money went"
                    ),
                });
            }
        }
    }
    refused.sort_by_key(|r| r.index);
    let reconciled = chosen.len() - refused.iter().filter(|r| checked_rows[r.index]).count();
    Some(Verdict {
        reconciliation: Reconciliation {
            column: column.to_owned(),
            order,
            position,
            balance_kind: kind,
            checked: chosen.len(),
            reconciled,
            signs_from_balance: unsigned,
        },
        refused,
        amounts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(rows: &[(i64, i64)]) -> Vec<Link> {
        rows.iter()
            .enumerate()
            .map(|(i, &(amount, balance))| Link {
                line: i + 2,
                amount_minor: amount,
                balance_minor: Some(balance),
                broken_before: false,
                date: None,
            })
            .collect()
    }

    #[test]
    fn either_order_of_time_reconciles() {
        let oldest = links(&[(-500, 9_500), (100_000, 109_500), (-2_500, 107_000)]);
        let verdict = reconcile("Balance", &oldest).unwrap();
        assert_eq!(verdict.reconciliation.order, TimeOrder::OldestFirst);
        assert_eq!(
            (verdict.reconciliation.checked, verdict.reconciliation.reconciled),
            (2, 2)
        );
        assert!(verdict.refused.is_empty());
        assert_eq!(verdict.reconciliation.balance_kind, BalanceKind::Held);

        let mut newest = oldest.clone();
        newest.reverse();
        let verdict = reconcile("Balance", &newest).unwrap();
        assert_eq!(verdict.reconciliation.order, TimeOrder::NewestFirst);
        assert_eq!(verdict.reconciliation.reconciled, 2);
        assert!(verdict.refused.is_empty());
    }

    #[test]
    fn a_balance_before_each_row_reconciles_and_dates_set_the_order() {
        // ASN: the balance before the row, oldest first (figures from its export).
        let mut rows = links(&[
            (22_377, 13_044),
            (-20_000, 35_421),
            (-220, 15_421),
            (50_315, 15_201),
        ]);
        for (i, day) in [17, 17, 25, 27].into_iter().enumerate() {
            rows[i].date = chrono::NaiveDate::from_ymd_opt(2022, 6, day);
        }
        let verdict = reconcile("column 9", &rows).unwrap();
        assert_eq!(verdict.reconciliation.order, TimeOrder::OldestFirst);
        assert_eq!(verdict.reconciliation.position, BalancePosition::Before);
        assert_eq!(verdict.reconciliation.balance_kind, BalanceKind::Held);
        assert_eq!(
            (verdict.reconciliation.checked, verdict.reconciliation.reconciled),
            (3, 3)
        );
        assert!(verdict.refused.is_empty());
    }

    #[test]
    fn a_row_that_does_not_reconcile_is_refused_with_the_figures() {
        // The second row's amount is 1,000.00 but the balance rose by 100.00.
        let rows = links(&[(-500, 9_500), (100_000, 19_500), (-2_500, 17_000), (-100, 16_900)]);
        let verdict = reconcile("Closing Balance", &rows).unwrap();
        assert_eq!(
            (verdict.reconciliation.checked, verdict.reconciliation.reconciled),
            (3, 2)
        );
        assert_eq!(verdict.refused.len(), 1);
        assert_eq!(verdict.refused[0].index, 1);
        assert!(
            verdict.refused[0]
                .message
                .contains("moved by +100.00 but the amount is +1000.00"),
            "{}",
            verdict.refused[0].message
        );
    }

    #[test]
    fn a_balance_of_what_is_owed_reconciles_with_its_changes_opposite() {
        // A card: purchases are money out and raise the balance owed; a payment lowers it.
        let mut rows = links(&[(-4_000, 4_000), (-1_000, 5_000), (5_000, 0)]);
        for (i, day) in [3, 9, 28].into_iter().enumerate() {
            rows[i].date = chrono::NaiveDate::from_ymd_opt(2024, 5, day);
        }
        let verdict = reconcile("Balance", &rows).unwrap();
        assert_eq!(
            verdict.reconciliation.order,
            TimeOrder::OldestFirst,
            "the dates rise"
        );
        assert_eq!(verdict.reconciliation.balance_kind, BalanceKind::Owed);
        assert!(verdict.refused.is_empty());
        assert_eq!(verdict.amounts, [-4_000, -1_000, 5_000], "amounts as read");
    }

    #[test]
    fn unsigned_amounts_take_the_sign_of_their_balance_change() {
        let rows = links(&[(500, 9_500), (100_000, 109_500), (2_500, 107_000)]);
        let verdict = reconcile("Balance", &rows).unwrap();
        assert!(verdict.reconciliation.signs_from_balance);
        assert_eq!(&verdict.amounts[1..], [100_000, -2_500]);
        // The opening row's direction cannot be seen: it is refused, not guessed.
        assert_eq!(verdict.refused.len(), 1);
        assert_eq!(verdict.refused[0].index, 0);
        assert!(verdict.refused[0].message.contains("say which way"));
        assert_eq!(verdict.reconciliation.reconciled, 2);
    }

    #[test]
    fn an_unreadable_line_between_two_rows_breaks_the_step_not_the_rows() {
        let mut rows = links(&[(-500, 9_500), (-700, 8_000), (-800, 7_200)]);
        rows[1].broken_before = true; // a row of -800 between them could not be read
        let verdict = reconcile("Balance", &rows).unwrap();
        assert_eq!(verdict.reconciliation.checked, 1);
        assert!(verdict.refused.is_empty());
        assert_eq!(
            reconcile("Balance", &rows[..1]),
            None,
            "one row: nothing to check"
        );
    }
}
