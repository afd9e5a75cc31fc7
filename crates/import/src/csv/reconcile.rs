//! Reconciliation against a statement's running-balance column.
//!
//! When a statement carries the balance after each row (or before it, as some Dutch banks do),
//! every row's amount must equal the change of that balance across the row. The file may list rows
//! oldest first or newest first (its dates say which, when they move at all), and may list a row
//! out of its order of time or a day's rows in any order: the rows are followed as listed and as
//! their dates put them (within a day, as their balances follow each other), each reading is tried
//! and the one under which more rows reconcile is taken. An export of several accounts has each
//! account's rows followed on their own. A balance may count
//! what the account holds (it falls when money goes out) or what is owed on it (a card's balance
//! rises with each purchase): the orientation most rows agree with is taken. A row whose amount
//! does not equal its balance change is not booked: the caller lists it as unreadable with the
//! reason. When the amounts carry no sign at all (every one positive), each row's sign is taken
//! from its balance change, and the row that opens the balance — its change cannot be seen — is not
//! booked either: nothing says which way its money went.

use kakeibo_statement::{BalanceKind, BalancePosition, Closing, Reconciliation, TimeOrder};

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
    /// Which of the file's accounts the row belongs to (0 when the file has one): each account's
    /// rows chain on their own.
    pub series: usize,
}

/// The balance held after the newest row of a file of one account: its date, and the balance
/// after it in held terms. `amounts` are the amounts as booked (money in positive).
#[must_use]
pub fn closing(links: &[Link], amounts: &[i64], reconciliation: &Reconciliation) -> Option<Closing> {
    if reconciliation.accounts != 1 {
        return None;
    }
    let newest = links
        .iter()
        .zip(amounts)
        .enumerate()
        .filter(|(_, (l, _))| l.balance_minor.is_some() && l.date.is_some())
        .max_by_key(|(index, (l, _))| {
            // The newest date; within it, the row listed last in time.
            let place = match reconciliation.order {
                TimeOrder::OldestFirst => *index,
                TimeOrder::NewestFirst => usize::MAX.saturating_sub(*index),
            };
            (l.date, place)
        })
        .map(|(_, pair)| pair)?;
    let (link, amount) = newest;
    let balance = link.balance_minor?;
    let held = match reconciliation.balance_kind {
        BalanceKind::Held => balance,
        BalanceKind::Owed => balance.checked_neg()?,
    };
    let held_minor = match reconciliation.position {
        BalancePosition::After => held,
        BalancePosition::Before => held.checked_add(*amount)?,
    };
    Some(Closing {
        date: link.date?,
        held_minor,
    })
}

/// A row the chain refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The index into the links.
    pub index: usize,
    pub message: String,
    /// The balance change the row's amount disagrees with (money in positive, as the amounts
    /// are read): the other figure a person may take the row at. None when no change can be seen.
    pub balance_change: Option<i64>,
    /// The row's amount as it would be booked (money in positive): as read, or — where the
    /// amounts carry no sign — with the sign of its balance change, never as money in by default.
    pub amount: i64,
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

/// Days with more rows than this keep the file's order within them (ordering a day by its
/// balances costs the square of its rows).
const DAY_CHAIN_LIMIT: usize = 64;

/// The rows (indices into the links) as the file lists them, oldest first (read backwards when it
/// lists the newest first), each account's rows together.
#[allow(
    clippy::indexing_slicing,
    reason = "every index is a position in `links` (from `0..links.len()` or a step's row), never a figure of the statement"
)]
fn listed(links: &[Link], accounts: Accounts, order: TimeOrder) -> Vec<usize> {
    let mut sequence: Vec<usize> = match order {
        TimeOrder::OldestFirst => (0..links.len()).collect(),
        TimeOrder::NewestFirst => (0..links.len()).rev().collect(),
    };
    sequence.sort_by_key(|&i| accounts.series(&links[i]));
    sequence
}

/// The `listed` rows put in order by their dates, the file's order kept within a day unless the
/// balances say another: a row the file lists out of its order of time is checked where its date
/// puts it. `None` when a row has no date to go by.
#[allow(
    clippy::indexing_slicing,
    reason = "every index is a position in `links` (from `0..links.len()` or a step's row), never a figure of the statement"
)]
fn by_dates(
    links: &[Link],
    accounts: Accounts,
    listed: &[usize],
    position: BalancePosition,
) -> Option<Vec<usize>> {
    if links.iter().any(|l| l.date.is_none()) {
        return None;
    }
    let series = |i: usize| accounts.series(&links[i]);
    let day = |i: usize| (series(i), links[i].date);
    let mut sequence = listed.to_vec();
    sequence.sort_by_key(|&i| day(i));
    let mut start = 0;
    while start < sequence.len() {
        let len = sequence[start..]
            .iter()
            .take_while(|&&i| day(i) == day(sequence[start]))
            .count();
        let before = start
            .checked_sub(1)
            .map(|p| sequence[p])
            .filter(|&p| series(p) == series(sequence[start]));
        if (2..=DAY_CHAIN_LIMIT).contains(&len) {
            chain_day(
                links,
                &mut sequence[start..start.saturating_add(len)],
                before,
                position,
            );
        }
        start = start.saturating_add(len);
    }
    Some(sequence)
}

/// Orders one day's rows so that each one's balance follows from the one before it where the
/// balances allow (a bank may list a day's rows in any order): from the row before the day, the
/// next is one whose balance follows; when none does, the first left that no other row left leads
/// to; the file's order otherwise.
#[allow(
    clippy::indexing_slicing,
    reason = "every index is a position in `links` (from `0..links.len()` or a step's row), never a figure of the statement"
)]
fn chain_day(links: &[Link], day: &mut [usize], mut before: Option<usize>, position: BalancePosition) {
    let pair = |a: Option<i64>, b: Option<i64>| [a, b];
    // The balance a row leaves, and the ones it may start from (its amount's sign is not trusted).
    let leaves = |i: usize| {
        let (b, a) = (links[i].balance_minor, links[i].amount_minor);
        match position {
            BalancePosition::After => pair(b, None),
            BalancePosition::Before => {
                pair(b.and_then(|b| b.checked_add(a)), b.and_then(|b| b.checked_sub(a)))
            }
        }
    };
    let starts = |i: usize| {
        let (b, a) = (links[i].balance_minor, links[i].amount_minor);
        match position {
            BalancePosition::After => {
                pair(b.and_then(|b| b.checked_sub(a)), b.and_then(|b| b.checked_add(a)))
            }
            BalancePosition::Before => pair(b, None),
        }
    };
    let follows =
        |x: usize, y: usize| x != y && leaves(x).iter().flatten().any(|k| starts(y).contains(&Some(*k)));
    let mut left: Vec<usize> = day.to_vec();
    // How many rows left lead to each row left.
    let mut led: Vec<usize> = left
        .iter()
        .map(|&y| left.iter().filter(|&&x| follows(x, y)).count())
        .collect();
    let mut ordered = Vec::with_capacity(day.len());
    while !left.is_empty() {
        let pick = before
            .and_then(|p| left.iter().position(|&y| follows(p, y)))
            .or_else(|| led.iter().position(|&n| n == 0))
            .unwrap_or(0);
        let next = left.remove(pick);
        led.remove(pick);
        for (y, n) in left.iter().zip(led.iter_mut()) {
            if follows(next, *y) {
                *n = n.saturating_sub(1);
            }
        }
        ordered.push(next);
        before = Some(next);
    }
    day.copy_from_slice(&ordered);
}

/// The steps between rows neighbouring in time: which row each checks, and by how much the
/// balance moved across it (later minus earlier). Rows of different accounts are never
/// neighbours, nor rows with an unreadable line between them in the file.
///
/// `broken[i]` counts the unreadable lines before link `i`, from the top ([`broken_counts`]): any
/// between two rows breaks the step across them.
#[allow(
    clippy::indexing_slicing,
    reason = "every index is a position in `links` (from `0..links.len()` or a step's row), never a figure of the statement"
)]
fn steps(
    links: &[Link],
    accounts: Accounts,
    broken: &[usize],
    sequence: &[usize],
    position: BalancePosition,
) -> Vec<Step> {
    sequence
        .windows(2)
        .filter_map(|pair| {
            let (earlier, later) = (pair[0], pair[1]);
            let (low, high) = (earlier.min(later), earlier.max(later));
            if accounts.series(&links[earlier]) != accounts.series(&links[later])
                || broken[high] != broken[low]
            {
                return None;
            }
            let delta = links[later]
                .balance_minor?
                .checked_sub(links[earlier].balance_minor?)?;
            // With balances after each row the later row moved it; with balances before, the earlier.
            let row = match position {
                BalancePosition::After => later,
                BalancePosition::Before => earlier,
            };
            Some(Step { row, delta })
        })
        .collect()
}

/// For each link, how many unreadable lines lie before it in the file.
fn broken_counts(links: &[Link]) -> Vec<usize> {
    links
        .iter()
        .scan(0usize, |seen, link| {
            *seen = seen.saturating_add(usize::from(link.broken_before));
            Some(*seen)
        })
        .collect()
}

/// The orders of time the dates allow: the one they move in, or both when they do not move.
fn orders(links: &[Link]) -> Vec<TimeOrder> {
    let dated: Vec<chrono::NaiveDate> = links.iter().filter_map(|l| l.date).collect();
    let pairs = || dated.iter().zip(dated.iter().skip(1));
    let rising = pairs().filter(|(a, b)| b > a).count();
    let falling = pairs().filter(|(a, b)| b < a).count();
    match rising.cmp(&falling) {
        std::cmp::Ordering::Greater => vec![TimeOrder::OldestFirst],
        std::cmp::Ordering::Less => vec![TimeOrder::NewestFirst],
        std::cmp::Ordering::Equal => vec![TimeOrder::OldestFirst, TimeOrder::NewestFirst],
    }
}

/// A reading of the chain: its order of time, where the balances stand, whether the rows were
/// put in order by their dates (and that moved any), its steps, and its score.
struct Reading {
    order: TimeOrder,
    position: BalancePosition,
    by_date: bool,
    steps: Vec<Step>,
    score: (usize, usize),
}

/// Whether the rows of each of the file's accounts chain on their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accounts {
    /// One chain: the account column, if any, is not the rows' own account.
    One,
    /// A chain per account.
    Each,
}

impl Accounts {
    fn series(self, link: &Link) -> usize {
        match self {
            Self::One => 0,
            Self::Each => link.series,
        }
    }
}

/// Checks the rows against their balances; `None` when not one step can be checked.
///
/// When the file names more than one account, the rows are read both as one chain and as a chain
/// per account, and a chain per account is taken when it refuses fewer rows: an "Account" column
/// may hold the rows' own accounts (an app's export of several) or the other party's.
pub fn reconcile(column: &str, links: &[Link]) -> Option<Verdict> {
    let one = read(column, links, Accounts::One);
    if links.iter().all(|l| l.series == 0) {
        return one;
    }
    let each = read(column, links, Accounts::Each);
    let refused = |v: &Option<Verdict>| v.as_ref().map_or(0, |v| v.refused.len());
    if refused(&each) < refused(&one) { each } else { one }
}

/// Each reading the dates allow, balances after the rows first, rows by their dates before rows
/// as listed; the first of those under which the most amounts equal their balance change wins.
#[allow(
    clippy::indexing_slicing,
    reason = "every index is a position in `links` (from `0..links.len()` or a step's row), never a figure of the statement"
)]
fn best_reading(links: &[Link], accounts: Accounts) -> Option<Reading> {
    let magnitude = |steps: &[Step]| {
        steps
            .iter()
            .filter(|s| links[s.row].amount_minor.checked_abs() == s.delta.checked_abs())
            .count()
    };
    let broken = broken_counts(links);
    let mut best: Option<Reading> = None;
    for order in orders(links) {
        let listed = listed(links, accounts, order);
        for position in [BalancePosition::After, BalancePosition::Before] {
            // Rows by their dates first (a tie goes to it), then as listed, when those differ.
            let dated = by_dates(links, accounts, &listed, position).filter(|d| *d != listed);
            let readings = dated.iter().map(|d| (d, true)).chain([(&listed, false)]);
            for (sequence, by_date) in readings {
                let candidate = steps(links, accounts, &broken, sequence, position);
                // Ties go to the reading under which the amounts move a held balance as they say.
                let held = candidate
                    .iter()
                    .filter(|s| links[s.row].amount_minor == s.delta)
                    .count();
                let score = (magnitude(&candidate), held);
                if best.as_ref().is_none_or(|b| score > b.score) {
                    best = Some(Reading {
                        order,
                        position,
                        by_date,
                        steps: candidate,
                        score,
                    });
                }
            }
        }
    }
    best
}

/// Checks the rows against their balances, with the accounts as said.
#[allow(
    clippy::indexing_slicing,
    reason = "every index is a position in `links` (from `0..links.len()` or a step's row), never a figure of the statement"
)]
fn read(column: &str, links: &[Link], accounts: Accounts) -> Option<Verdict> {
    let best = best_reading(links, accounts);
    let Reading {
        order,
        position,
        by_date,
        steps: chosen,
        ..
    } = best?;
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
            // An unsigned amount goes the way its balance moved, whichever figure is taken.
            let booked = if unsigned && wanted < 0 {
                amount.saturating_neg()
            } else {
                amount
            };
            refused.push(Refused {
                index: step.row,
                balance_change: Some(wanted),
                amount: booked,
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
                    balance_change: None,
                    amount: links[index].amount_minor,
                    message: format!(
                        "the amounts have no sign, and this row's balance change cannot be seen \
                         (it opens the balance in {column}): say which way its money went"
                    ),
                });
            }
        }
    }
    refused.sort_by_key(|r| r.index);
    let reconciled = chosen
        .len()
        .saturating_sub(refused.iter().filter(|r| checked_rows[r.index]).count());
    Some(Verdict {
        reconciliation: Reconciliation {
            column: column.to_owned(),
            order,
            position,
            balance_kind: kind,
            checked: chosen.len(),
            reconciled,
            signs_from_balance: unsigned,
            by_date,
            closing: None,
            accounts: match accounts {
                Accounts::One => 1,
                Accounts::Each => links
                    .iter()
                    .map(|l| l.series)
                    .max()
                    .map_or(1, |m| m.saturating_add(1)),
            },
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
                series: 0,
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
        assert_eq!(verdict.refused[0].balance_change, Some(10_000));
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
    fn an_unsigned_amount_refused_keeps_the_direction_its_balance_moved() {
        // The third row states 30.00 (no sign); the balance fell by 25.00 across it.
        let rows = links(&[
            (500, 9_500),
            (100_000, 109_500),
            (3_000, 107_000),
            (1_000, 106_000),
        ]);
        let verdict = reconcile("Balance", &rows).unwrap();
        assert!(verdict.reconciliation.signs_from_balance);
        let refused = verdict
            .refused
            .iter()
            .find(|r| r.index == 2)
            .expect("the third row refused");
        assert_eq!((refused.amount, refused.balance_change), (-3_000, Some(-2_500)));
    }

    fn dated(rows: &[(i64, i64, u32)]) -> Vec<Link> {
        let mut out = links(&rows.iter().map(|&(a, b, _)| (a, b)).collect::<Vec<_>>());
        for (link, &(_, _, day)) in out.iter_mut().zip(rows) {
            link.date = chrono::NaiveDate::from_ymd_opt(2024, 3, day);
        }
        out
    }

    #[test]
    fn a_row_listed_out_of_time_is_checked_where_its_date_puts_it() {
        // Newest first, with a row of the 20th appended last; its balance follows nothing.
        let rows = dated(&[
            (300, 20_300, 9),
            (-1_000, 20_000, 7),
            (-500, 21_000, 5),
            (5_000, 99_000, 20),
        ]);
        let verdict = reconcile("Balance", &rows).unwrap();
        assert_eq!(verdict.reconciliation.order, TimeOrder::NewestFirst);
        assert!(verdict.reconciliation.by_date);
        let refused: Vec<usize> = verdict.refused.iter().map(|r| r.index).collect();
        assert_eq!(refused, [3], "the row out of its place, not the oldest row");
        assert_eq!(verdict.reconciliation.reconciled, 2);
    }

    #[test]
    fn a_day_listed_in_any_order_is_followed_by_its_balances() {
        // Two days, newest first; within each the file's order is not the order of time.
        let rows = dated(&[
            (-35_738, 78_762, 24),
            (-1_135, 77_627, 24),
            (12_500, 14_500, 24),
            (2_017, 2_017, 20),
            (-17, 2_000, 20),
        ]);
        let verdict = reconcile("Running Balance", &rows).unwrap();
        let refused: Vec<usize> = verdict.refused.iter().map(|r| r.index).collect();
        assert_eq!(refused, [0], "only the row whose balance follows no other");
        assert_eq!(
            (verdict.reconciliation.checked, verdict.reconciliation.reconciled),
            (4, 3)
        );
        assert!(verdict.reconciliation.by_date);
    }

    #[test]
    fn each_account_of_an_export_chains_on_its_own() {
        // Two accounts interleaved: as one chain every step fails.
        let mut rows = links(&[(-100, 9_900), (-200, 49_800), (-300, 9_600), (-400, 49_400)]);
        for (link, series) in rows.iter_mut().zip([0, 1, 0, 1]) {
            link.series = series;
        }
        let verdict = reconcile("Balance", &rows).unwrap();
        assert!(verdict.refused.is_empty(), "{:?}", verdict.refused);
        assert_eq!(verdict.reconciliation.accounts, 2);
        assert_eq!(verdict.reconciliation.reconciled, 2);
        // An account column that holds the other party's accounts does not break one chain.
        let mut rows = links(&[(-100, 9_900), (-200, 9_700), (-300, 9_400)]);
        for (link, series) in rows.iter_mut().zip([0, 1, 2]) {
            link.series = series;
        }
        let verdict = reconcile("Balance", &rows).unwrap();
        assert_eq!(verdict.reconciliation.accounts, 1);
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
