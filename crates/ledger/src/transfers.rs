//! Money moved between a person's own accounts: never spending, never income.
//!
//! A statement row that looks like a transfer ([`looks_like_transfer`]) is booked against the
//! *Transfers in transit* clearing account (an asset) until its other side is found. The other
//! side is a row of another of the owner's accounts that also looks like a transfer, with the
//! opposite amount in the same currency, dated within a window of days. When both sides are in
//! the ledger they become **one** transaction between the two accounts ([`merge`]): the clearing
//! postings disappear, and the second row's identity (its source hash), text and batch are kept
//! beside the first's, so a re-import of either statement finds it.
//!
//! Pairs are chosen closest dates first, over every candidate at once ([`pair`]), so the order in
//! which statements arrive does not change which rows pair. Two candidates that fit equally are
//! never guessed between: the row is left to ask.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::{
    accounts::{Account, AccountKind, AccountType},
    error::LedgerError,
    money::Currency,
    owner::OwnerId,
};

/// The default window, in days, between the two sides of a transfer.
pub const DEFAULT_WINDOW_DAYS: u32 = 5;

/// Words of a payment to another person (a transfer app): spending, not a transfer, even when it
/// says "payment" or "transfer".
const PERSON_WORDS: &[&str] = &[
    "zelle",
    "venmo",
    "cash app",
    "cashapp",
    "upi",
    "paypal",
    "p2p",
    "interac",
    "e-transfer",
];
/// Words of money moved between accounts.
const TRANSFER_WORDS: &[&str] = &["transfer", "xfer", "trnsfr", "tfr", "own account", "sweep"];
/// Words of a card or loan being paid.
const PAYMENT_WORDS: &[&str] = &[
    "payment",
    "thank you",
    "autopay",
    "auto pay",
    "pymt",
    "pmt",
    "repayment",
];
/// Words that name a card, beside a payment word on the paying account's side.
const CARD_WORDS: &[&str] = &[
    "card",
    "crd",
    "visa",
    "mastercard",
    "amex",
    "american express",
    "discover",
    "credit",
];

/// The first of `words` that `lower` (lower-case text) mentions: a phrase anywhere, a single word
/// at the start of one of its words (`transfer` in "transferred", never `upi` in "groupie").
fn mention<'w>(lower: &str, words: &[&'w str]) -> Option<&'w str> {
    words.iter().copied().find(|w| {
        if w.contains(' ') {
            lower.contains(w)
        } else {
            lower
                .split(|c: char| !c.is_alphanumeric())
                .any(|token| token.starts_with(w))
        }
    })
}

/// Why a row looks like money moved between the owner's own accounts, or `None`.
///
/// `kind` is the kind of the account the row is in; `others` are the owner's other asset and
/// liability accounts (a row that names one of them is a transfer to it). A payment to a person
/// through a transfer app is never a transfer.
#[must_use]
pub fn looks_like_transfer(
    description: &str,
    kind: AccountKind,
    amount_minor: i64,
    others: &[&Account],
) -> Option<String> {
    let lower = description.to_lowercase();
    if mention(&lower, PERSON_WORDS).is_some() {
        return None;
    }
    if let Some(word) = mention(&lower, TRANSFER_WORDS) {
        return Some(format!("it says “{word}”"));
    }
    if let Some(other) = others.iter().find(|a| {
        a.kind != Some(AccountKind::Transit)
            && a.name.chars().count() >= 4
            && lower.contains(&a.name.to_lowercase())
    }) {
        return Some(format!("it names your account {}", other.name));
    }
    let payment = mention(&lower, PAYMENT_WORDS);
    match (kind.account_type(), payment) {
        (AccountType::Liability, Some(word)) if amount_minor > 0 => {
            Some(format!("money into a {kind} that says “{word}”"))
        }
        (AccountType::Asset, Some(word)) if amount_minor < 0 && mention(&lower, CARD_WORDS).is_some() => {
            Some(format!("a card payment (“{word}”)"))
        }
        _ => None,
    }
}

/// One side of a possible transfer: a row to import, or a transit leg already in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Side {
    /// The transit leg's transaction, when it is in the ledger; none for a row to import.
    pub transaction: Option<Uuid>,
    /// The row's line in its statement, for a row to import.
    pub line: Option<usize>,
    pub account: String,
    pub date: NaiveDate,
    /// The effect on `account` (money in positive).
    pub amount_minor: i64,
    pub currency: Currency,
    pub description: String,
}

/// What becomes of a row to import that looks like a transfer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "decision")]
pub enum Decision {
    /// It is one transfer with `with`.
    Paired { with: Side },
    /// Its other side is not in the ledger yet: it waits in transit.
    Transit,
    /// Two or more candidates fit equally: the person says which (or none: it waits in transit).
    Ask { candidates: Vec<Side> },
}

/// The pairs among `new` rows (each with its index) and transit `legs`, closest dates first; a
/// row's decision, by its index in `new`. A pair needs two different accounts, one currency,
/// opposite amounts and dates at most `window` days apart.
#[must_use]
pub fn pair(new: &[Side], legs: &[Side], window: u32) -> Vec<Decision> {
    // Every side: the new rows first, then the legs.
    let sides: Vec<&Side> = new.iter().chain(legs).collect();
    let mut edges: Vec<(u64, usize, usize)> = Vec::new();
    for (i, a) in sides.iter().enumerate().take(new.len()) {
        for (j, b) in sides.iter().enumerate() {
            // A new row pairs with a leg, or with a later new row (each pair once).
            if j < new.len() && j <= i {
                continue;
            }
            if a.account == b.account
                || a.currency != b.currency
                || Some(a.amount_minor) != b.amount_minor.checked_neg()
            {
                continue;
            }
            let days = a.date.signed_duration_since(b.date).num_days().unsigned_abs();
            if days <= u64::from(window) {
                edges.push((days, i, j));
            }
        }
    }
    edges.sort_unstable();
    let mut taken: BTreeSet<usize> = BTreeSet::new();
    let mut decisions: Vec<Option<Decision>> = vec![None; new.len()];
    let fits = |side: usize, days: u64, taken: &BTreeSet<usize>| -> Vec<usize> {
        edges
            .iter()
            .filter(|(d, i, j)| *d == days && (*i == side || *j == side))
            .map(|(_, i, j)| if *i == side { *j } else { *i })
            .filter(|other| !taken.contains(other))
            .collect()
    };
    for &(days, i, j) in &edges {
        if taken.contains(&i) || taken.contains(&j) {
            continue;
        }
        if decisions.get(i).is_some_and(Option::is_some) {
            continue;
        }
        let of_i = fits(i, days, &taken);
        let of_j = fits(j, days, &taken);
        if of_i.len() > 1 || of_j.len() > 1 {
            // A tie. The new rows in it with more than one equal candidate ask; when none has
            // (two new rows fit one leg), each of them asks.
            let mut involved: Vec<usize> = [i, j]
                .into_iter()
                .chain(of_i)
                .chain(of_j)
                .filter(|s| *s < new.len())
                .collect();
            involved.sort_unstable();
            involved.dedup();
            let lists: Vec<(usize, Vec<usize>)> = involved
                .iter()
                .map(|&row| (row, fits(row, days, &taken)))
                .collect();
            let several = lists.iter().any(|(_, l)| l.len() > 1);
            for (row, list) in lists {
                if several && list.len() < 2 {
                    continue;
                }
                let candidates = list
                    .into_iter()
                    .filter_map(|c| sides.get(c).map(|s| (*s).clone()))
                    .collect();
                if let Some(slot) = decisions.get_mut(row) {
                    *slot = Some(Decision::Ask { candidates });
                }
                taken.insert(row);
            }
            continue;
        }
        taken.insert(i);
        taken.insert(j);
        if let (Some(a), Some(b)) = (sides.get(i), sides.get(j)) {
            if let Some(slot) = decisions.get_mut(i) {
                *slot = Some(Decision::Paired { with: (*b).clone() });
            }
            if j < new.len()
                && let Some(slot) = decisions.get_mut(j)
            {
                *slot = Some(Decision::Paired { with: (*a).clone() });
            }
        }
    }
    decisions
        .into_iter()
        .map(|d| d.unwrap_or(Decision::Transit))
        .collect()
}

/// The transit legs of `owner` waiting for their other side: a posting on a transit account and
/// one on another account, as that account sees it.
pub async fn transit_legs(owner: OwnerId, conn: &mut PgConnection) -> Result<Vec<Side>, LedgerError> {
    let rows: Vec<(Uuid, String, NaiveDate, i64, String, String)> = sqlx::query_as(
        // From the transit accounts' postings (few), never a scan of the whole ledger.
        "SELECT t.id, a.name, t.date, p.amount_minor, p.currency::text, t.description
         FROM accounts k
         JOIN postings q ON q.owner_id = k.owner_id AND q.account_id = k.id
         JOIN transactions t ON t.owner_id = q.owner_id AND t.id = q.transaction_id AND t.paired_source_hash IS NULL
         JOIN postings p ON p.owner_id = t.owner_id AND p.transaction_id = t.id AND p.id <> q.id
         JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id AND a.kind IS DISTINCT FROM 'transit'
         WHERE k.owner_id = $1 AND k.kind = 'transit'
         ORDER BY t.date, t.id",
    )
    .bind(owner.as_uuid())
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|(id, account, date, amount_minor, currency, description)| {
            Ok(Side {
                transaction: Some(id),
                line: None,
                account,
                date,
                amount_minor,
                currency: Currency::parse(&currency)?,
                description,
            })
        })
        .collect()
}

/// Makes the transit legs `keep` and `other` one transfer: `keep`'s transit posting moves to the
/// account of `other`'s other posting, `other` goes, and its source hash, text, date and batch are kept
/// on `keep`. Refused ([`LedgerError::TransferChanged`]) unless both are still transit legs of
/// opposite amounts in one currency between two different accounts.
pub async fn merge(
    owner: OwnerId,
    conn: &mut PgConnection,
    keep: Uuid,
    other: Uuid,
) -> Result<(), LedgerError> {
    let legs: Vec<(Uuid, Uuid, i64, String, bool)> = sqlx::query_as(
        "SELECT p.transaction_id, p.account_id, p.amount_minor, p.currency::text, a.kind IS NOT DISTINCT FROM 'transit'
         FROM postings p JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
         JOIN transactions t ON t.owner_id = p.owner_id AND t.id = p.transaction_id AND t.paired_source_hash IS NULL
         WHERE p.owner_id = $1 AND p.transaction_id = ANY($2) FOR UPDATE OF p",
    )
    .bind(owner.as_uuid())
    .bind([keep, other])
    .fetch_all(&mut *conn)
    .await?;
    let changed = || LedgerError::TransferChanged { transaction: keep };
    let shape = |id: Uuid| -> Option<(Uuid, i64, Uuid, String)> {
        let mine: Vec<_> = legs.iter().filter(|l| l.0 == id).collect();
        let [a, b] = mine.as_slice() else { return None };
        let (transit, account) = match (a.4, b.4) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => return None,
        };
        Some((transit.1, transit.2, account.1, account.3.clone()))
    };
    let (keep_transit, keep_amount, keep_account, keep_currency) = shape(keep).ok_or_else(changed)?;
    let (other_transit, other_amount, other_account, other_currency) = shape(other).ok_or_else(changed)?;
    if keep == other
        || keep_transit != other_transit
        || keep_account == other_account
        || keep_currency != other_currency
        || Some(keep_amount) != other_amount.checked_neg()
    {
        return Err(changed());
    }
    sqlx::query(
        "UPDATE postings SET account_id = $3 WHERE owner_id = $1 AND transaction_id = $2 AND account_id = $4",
    )
    .bind(owner.as_uuid())
    .bind(keep)
    .bind(other_account)
    .bind(keep_transit)
    .execute(&mut *conn)
    .await?;
    absorb(owner, conn, keep, other).await
}

/// Deletes the transaction `other`, its statement line (source hash, text, date and batch) kept
/// on `keep` as the transfer's second line, so a re-import of either statement finds it.
pub(crate) async fn absorb(
    owner: OwnerId,
    conn: &mut PgConnection,
    keep: Uuid,
    other: Uuid,
) -> Result<(), LedgerError> {
    let (hash, description, batch, date): (Option<String>, String, Option<Uuid>, NaiveDate) = sqlx::query_as(
        "DELETE FROM transactions WHERE owner_id = $1 AND id = $2
         RETURNING source_hash, raw_description, import_batch_id, date",
    )
    .bind(owner.as_uuid())
    .bind(other)
    .fetch_one(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE transactions SET paired_source_hash = $3, paired_description = $4, paired_batch_id = $5,
                paired_date = $6
         WHERE owner_id = $1 AND id = $2",
    )
    .bind(owner.as_uuid())
    .bind(keep)
    .bind(hash)
    .bind(description)
    .bind(batch)
    .bind(date)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(name: &str, kind: AccountKind) -> Account {
        Account {
            id: Uuid::new_v4(),
            name: name.into(),
            account_type: kind.account_type(),
            kind: Some(kind),
            currency: Some(Currency::USD),
        }
    }

    fn side(account: &str, day: u32, amount_minor: i64) -> Side {
        Side {
            transaction: None,
            line: Some(day as usize),
            account: account.into(),
            date: NaiveDate::from_ymd_opt(2025, 10, day).unwrap(),
            amount_minor,
            currency: Currency::USD,
            description: String::new(),
        }
    }

    #[test]
    fn transfer_words() {
        let savings = account("Savings", AccountKind::Savings);
        let others = [&savings];
        let check = |d: &str, kind, amount| looks_like_transfer(d, kind, amount, &others).is_some();
        assert!(check(
            "ONLINE TRANSFER TO SAV 4521",
            AccountKind::Checking,
            -50_000
        ));
        assert!(check("Move to Savings", AccountKind::Checking, -50_000));
        assert!(check("CHASE CREDIT CRD AUTOPAY", AccountKind::Checking, -120_000));
        assert!(check("Payment Thank You-Mobile", AccountKind::Card, 120_000));
        // A bill paid from checking is spending, though it says payment.
        assert!(!check(
            "CITY ELECTRIC BILL PAYMENT",
            AccountKind::Checking,
            -120_000
        ));
        // A refund on a card is not a payment of it.
        assert!(!check("AMAZON RETURN", AccountKind::Card, 2_000));
        // Money to a person is spending.
        assert!(!check("Zelle payment to ANNA LEE", AccountKind::Checking, -4_000));
        assert!(!check("VENMO TRANSFER", AccountKind::Checking, -4_000));
    }

    #[test]
    fn closest_dates_pair_whatever_the_order() {
        // Two withdrawals of the same amount, one deposit between them: the closer one pairs.
        let a1 = side("Checking", 1, -500);
        let a2 = side("Checking", 6, -500);
        let b = side("Savings", 4, 500);
        let leg = |s: &Side| Side {
            transaction: Some(Uuid::from_u128(u128::from(chrono::Datelike::ordinal(&s.date)))),
            line: None,
            ..s.clone()
        };
        let first = pair(std::slice::from_ref(&b), &[leg(&a1), leg(&a2)], 5);
        assert_eq!(first, vec![Decision::Paired { with: leg(&a2) }]);
        let second = pair(&[a1.clone(), a2.clone()], &[leg(&b)], 5);
        assert_eq!(
            second,
            vec![Decision::Transit, Decision::Paired { with: leg(&b) }]
        );
    }

    #[test]
    fn ties_ask_and_the_window_holds() {
        let a1 = side("Checking", 2, -500);
        let a2 = side("Checking", 6, -500);
        let b = side("Savings", 4, 500);
        let decisions = pair(&[b.clone(), a1.clone(), a2.clone()], &[], 5);
        assert!(matches!(&decisions[0], Decision::Ask { candidates } if candidates.len() == 2));
        // Outside the window: nothing pairs.
        let far = side("Savings", 20, 500);
        assert_eq!(
            pair(&[far, a1], &[], 5),
            vec![Decision::Transit, Decision::Transit]
        );
        // The same account never pairs with itself.
        assert_eq!(
            pair(&[side("Checking", 2, 500), side("Checking", 2, -500)], &[], 5),
            vec![Decision::Transit, Decision::Transit]
        );
    }
}
