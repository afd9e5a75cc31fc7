//! What becomes of a row waiting in transit, when the person says what it was.
//!
//! A row that looked like a transfer waits against *Transfers in transit* until its other side is
//! imported ([`crate::transfers`]). Some never will be: the other account is one kakeibo does not
//! know, or the row was spending after all, or its other side is in another currency (the
//! importer pairs only equal amounts). [`settle`] is the one action for each:
//!
//! - [`Settle::Category`]: it was spending or income — the transit posting moves to a category;
//! - [`Settle::Account`]: it went to (or came from) an account of the person's — the transit
//!   posting moves to that account; into an account of another currency, the amount that arrived
//!   there is given, and the transaction keeps both amounts through *Currency conversion*
//!   (equity), one posting per currency, so each currency still sums to zero and the rate is
//!   what the two amounts imply;
//! - [`Settle::With`]: it is one transfer with another row — in transit too, or booked as spending
//!   or income because it did not look like a transfer (a deposit that says only "DEPOSIT") — of
//!   another account, the opposite direction, any currency: the two become one transaction, both
//!   statement lines kept, and the other row's category posting goes with it.
//!
//! Each is a write: the tools run it behind the confirm gate. Whatever it does, the transaction's
//! postings still sum to zero per currency, checked before it returns.

use serde::Serialize;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::{
    accounts::{Account, AccountKind, AccountType, find_account},
    error::LedgerError,
    money::{Currency, Money},
    owner::OwnerId,
};

/// The equity account through which a transfer across currencies keeps both of its amounts.
pub const CONVERSION: &str = "Currency conversion";

/// What a row in transit was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settle {
    /// Spending or income after all: the category (an expense or income account) it goes to.
    Category(String),
    /// Money that went to (or came from) this account of the person's. `arrived_minor` is the
    /// amount on that account's side (a magnitude), needed when it holds another currency.
    Account {
        name: String,
        arrived_minor: Option<i64>,
    },
    /// One transfer with this other row: in transit, or booked as spending or income.
    With(Uuid),
}

/// What [`settle`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settled {
    pub transaction_id: Uuid,
    /// What the row became, in words with its figures.
    pub became: String,
    /// For a transfer across currencies: one unit of the row's currency in the other's, as the
    /// two amounts imply (six decimals, as text: no floating point touches money).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
}

/// A posting of a transaction as [`leg`] reads it: (posting, account, its name, amount, currency,
/// the account's kind and type).
type PostingRow = (Uuid, Uuid, String, i64, String, Option<AccountKind>, AccountType);

/// A transaction waiting in transit: its transit posting and its other posting.
#[derive(Debug, Clone)]
struct Leg {
    transaction: Uuid,
    transit_posting: Uuid,
    account: Uuid,
    account_name: String,
    /// The effect on `account` (money in positive).
    amount_minor: i64,
    currency: Currency,
}

/// The leg `transaction`, locked for this transaction; refused unless it is in transit: exactly
/// two postings, one on a transit account, one on an account that holds money.
async fn leg(owner: OwnerId, conn: &mut PgConnection, transaction: Uuid) -> Result<Leg, LedgerError> {
    side(owner, conn, transaction, false).await
}

/// Like [`leg`]; with `booked`, also a row booked as spending or income (its other posting on a
/// category): a row that was the other side of a transfer but did not look like one.
async fn side(
    owner: OwnerId,
    conn: &mut PgConnection,
    transaction: Uuid,
    booked: bool,
) -> Result<Leg, LedgerError> {
    let postings: Vec<PostingRow> = sqlx::query_as(
        "SELECT p.id, a.id, a.name, p.amount_minor, p.currency::text, a.kind, a.type
         FROM postings p JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
         WHERE p.owner_id = $1 AND p.transaction_id = $2 ORDER BY p.id FOR UPDATE OF p",
    )
    .bind(owner.as_uuid())
    .bind(transaction)
    .fetch_all(&mut *conn)
    .await?;
    let not = || LedgerError::NotInTransit { transaction };
    let [a, b] = postings.as_slice() else {
        return Err(not());
    };
    let holds = |p: &PostingRow| p.5.is_some_and(|k| k != AccountKind::Transit);
    let clears = |p: &PostingRow| p.5 == Some(AccountKind::Transit) || (booked && p.6.is_category());
    let (transit, held) = if clears(a) && holds(b) {
        (a, b)
    } else if clears(b) && holds(a) {
        (b, a)
    } else {
        return Err(not());
    };
    Ok(Leg {
        transaction,
        transit_posting: transit.0,
        account: held.1,
        account_name: held.2.clone(),
        amount_minor: held.3,
        currency: Currency::parse(&held.4)?,
    })
}

/// The conversion account in `currency` (created when missing).
async fn conversion_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    currency: Currency,
) -> Result<Account, LedgerError> {
    crate::import::plan::equity_account(owner, conn, CONVERSION, currency).await
}

async fn repoint(
    owner: OwnerId,
    conn: &mut PgConnection,
    posting: Uuid,
    account: Uuid,
) -> Result<(), LedgerError> {
    sqlx::query("UPDATE postings SET account_id = $3 WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(posting)
        .bind(account)
        .execute(conn)
        .await?;
    Ok(())
}

async fn add_posting(
    owner: OwnerId,
    conn: &mut PgConnection,
    transaction: Uuid,
    account: Uuid,
    amount: Money,
) -> Result<(), LedgerError> {
    sqlx::query(
        "INSERT INTO postings (owner_id, transaction_id, account_id, amount_minor, currency) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(owner.as_uuid())
    .bind(transaction)
    .bind(account)
    .bind(amount.amount_minor)
    .bind(amount.currency.as_str())
    .execute(conn)
    .await?;
    Ok(())
}

/// One unit of `from` in `to`, as `from_minor` and `to_minor` (magnitudes) imply, to six decimals.
fn implied_rate(from_minor: i64, from: Currency, to_minor: i64, to: Currency) -> Option<String> {
    let rate = Money::new(from_minor, from).implied_rate(Money::new(to_minor, to))?;
    Some(format!("1 {from} = {rate} {to}"))
}

/// Settles the row in transit `transaction` as `how` says. Refused when it is not in transit
/// ([`LedgerError::NotInTransit`]), or when what it is asked to become does not fit.
pub async fn settle(
    owner: OwnerId,
    conn: &mut PgConnection,
    transaction: Uuid,
    how: &Settle,
) -> Result<Settled, LedgerError> {
    let mine = leg(owner, &mut *conn, transaction).await?;
    let money = |minor: i64, currency| Money::new(minor, currency).format();
    let settled = match how {
        Settle::Category(name) => {
            let category = find_account(owner, &mut *conn, name)
                .await?
                .filter(|a| a.account_type.is_category())
                .ok_or_else(|| LedgerError::NotACategory { name: name.clone() })?;
            repoint(owner, &mut *conn, mine.transit_posting, category.id).await?;
            Settled {
                transaction_id: transaction,
                became: format!(
                    "{} of {} is now {} in {}",
                    money(mine.amount_minor, mine.currency),
                    mine.account_name,
                    if category.account_type == AccountType::Income {
                        "income"
                    } else {
                        "spending"
                    },
                    category.name
                ),
                rate: None,
            }
        }
        Settle::Account { name, arrived_minor } => {
            let other = find_account(owner, &mut *conn, name)
                .await?
                .filter(|a| {
                    matches!(a.account_type, AccountType::Asset | AccountType::Liability)
                        && a.kind != Some(AccountKind::Transit)
                        && a.id != mine.account
                })
                .ok_or_else(|| LedgerError::NotAnotherAccount {
                    name: name.clone(),
                    account: mine.account_name.clone(),
                })?;
            to_account(owner, &mut *conn, &mine, &other, *arrived_minor).await?
        }
        Settle::With(other) => {
            let theirs = side(owner, &mut *conn, *other, true).await?;
            with_leg(owner, &mut *conn, &mine, &theirs).await?
        }
    };
    balanced(owner, conn, transaction).await?;
    Ok(settled)
}

/// The row's transit posting moved to `other`; across currencies, through conversion.
async fn to_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    mine: &Leg,
    other: &Account,
    arrived_minor: Option<i64>,
) -> Result<Settled, LedgerError> {
    let other_currency = other.currency.ok_or_else(|| LedgerError::NotAnotherAccount {
        name: other.name.clone(),
        account: mine.account_name.clone(),
    })?;
    let direction = if mine.amount_minor < 0 { "to" } else { "from" };
    if other_currency == mine.currency {
        if let Some(arrived) = arrived_minor
            && Some(arrived) != mine.amount_minor.checked_abs()
        {
            return Err(LedgerError::AmountDisagrees {
                account: other.name.clone(),
                currency: other_currency,
            });
        }
        repoint(owner, &mut *conn, mine.transit_posting, other.id).await?;
        return Ok(Settled {
            transaction_id: mine.transaction,
            became: format!(
                "{} moved {direction} {}: one transfer between your accounts",
                Money::new(mine.amount_minor.saturating_abs(), mine.currency).format(),
                other.name
            ),
            rate: None,
        });
    }
    let arrived = arrived_minor
        .filter(|a| *a > 0)
        .ok_or_else(|| LedgerError::NeedsArrivedAmount {
            account: other.name.clone(),
            currency: other_currency,
        })?;
    // Money out of the row's account arrives in the other (and the other way round).
    let theirs = if mine.amount_minor < 0 { arrived } else { -arrived };
    let from = conversion_account(owner, &mut *conn, mine.currency).await?;
    let to = conversion_account(owner, &mut *conn, other_currency).await?;
    repoint(owner, &mut *conn, mine.transit_posting, from.id).await?;
    add_posting(
        owner,
        &mut *conn,
        mine.transaction,
        to.id,
        Money::new(-theirs, other_currency),
    )
    .await?;
    add_posting(
        owner,
        &mut *conn,
        mine.transaction,
        other.id,
        Money::new(theirs, other_currency),
    )
    .await?;
    Ok(Settled {
        transaction_id: mine.transaction,
        became: format!(
            "{} moved {direction} {} as {}: one transfer between your accounts, both amounts kept",
            Money::new(mine.amount_minor.saturating_abs(), mine.currency).format(),
            other.name,
            Money::new(arrived, other_currency).format()
        ),
        rate: implied_rate(mine.amount_minor, mine.currency, arrived, other_currency),
    })
}

/// Two rows in transit made one transfer: the same currency through the importer's merge, two
/// currencies through conversion.
async fn with_leg(
    owner: OwnerId,
    conn: &mut PgConnection,
    mine: &Leg,
    theirs: &Leg,
) -> Result<Settled, LedgerError> {
    let mismatch = || LedgerError::NotTheOtherSide {
        transaction: mine.transaction,
        other: theirs.transaction,
    };
    if mine.transaction == theirs.transaction
        || mine.account == theirs.account
        || mine.amount_minor.signum() == theirs.amount_minor.signum()
    {
        return Err(mismatch());
    }
    let became = format!(
        "{} of {} and {} of {} are one transfer between your accounts",
        Money::new(mine.amount_minor, mine.currency).format(),
        mine.account_name,
        Money::new(theirs.amount_minor, theirs.currency).format(),
        theirs.account_name
    );
    if mine.currency == theirs.currency {
        if Some(mine.amount_minor) != theirs.amount_minor.checked_neg() {
            return Err(mismatch());
        }
        // This row's transit posting moves to the other row's account; the other row goes (its
        // transit or category posting with it), its statement line kept on this one.
        repoint(owner, &mut *conn, mine.transit_posting, theirs.account).await?;
        crate::transfers::absorb(owner, conn, mine.transaction, theirs.transaction).await?;
        return Ok(Settled {
            transaction_id: mine.transaction,
            became,
            rate: None,
        });
    }
    // Across currencies: the other row's account posting joins this transaction; each transit
    // posting goes to conversion in its currency; the other transaction goes, its line kept.
    let from = conversion_account(owner, &mut *conn, mine.currency).await?;
    let to = conversion_account(owner, &mut *conn, theirs.currency).await?;
    sqlx::query(
        "UPDATE postings SET transaction_id = $3 WHERE owner_id = $1 AND transaction_id = $2 AND account_id = $4",
    )
    .bind(owner.as_uuid())
    .bind(theirs.transaction)
    .bind(mine.transaction)
    .bind(theirs.account)
    .execute(&mut *conn)
    .await?;
    repoint(owner, &mut *conn, mine.transit_posting, from.id).await?;
    add_posting(
        owner,
        &mut *conn,
        mine.transaction,
        to.id,
        Money::new(theirs.amount_minor.saturating_neg(), theirs.currency),
    )
    .await?;
    crate::transfers::absorb(owner, conn, mine.transaction, theirs.transaction).await?;
    Ok(Settled {
        transaction_id: mine.transaction,
        became,
        rate: implied_rate(
            mine.amount_minor,
            mine.currency,
            theirs.amount_minor,
            theirs.currency,
        ),
    })
}

/// Refuses (and so rolls back) a transaction whose postings no longer sum to zero per currency.
async fn balanced(owner: OwnerId, conn: &mut PgConnection, transaction: Uuid) -> Result<(), LedgerError> {
    let off: Option<(String, i64)> = sqlx::query_as(
        "SELECT currency::text, sum(amount_minor)::bigint FROM postings WHERE owner_id = $1 AND transaction_id = $2
         GROUP BY currency HAVING sum(amount_minor) <> 0 LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(transaction)
    .fetch_optional(conn)
    .await?;
    match off {
        None => Ok(()),
        Some((currency, sum)) => Err(LedgerError::Unbalanced {
            sum_minor: i128::from(sum),
            currency: Currency::parse(&currency)?,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_what_the_amounts_imply() {
        assert_eq!(
            implied_rate(-10_000, Currency::USD, 9_210, Currency::EUR).as_deref(),
            Some("1 USD = 0.921000 EUR")
        );
        assert_eq!(
            implied_rate(10_000, Currency::USD, 15_000, Currency::JPY).as_deref(),
            Some("1 USD = 150.000000 JPY")
        );
        assert_eq!(implied_rate(0, Currency::USD, 1, Currency::EUR), None);
    }
}
