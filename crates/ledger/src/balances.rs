//! What each account holds, what the owner is worth, and how that moved month by month.
//!
//! A balance is the sum of an account's postings: money held is positive, money owed on a card
//! or loan negative. Net worth, per currency, is the sum over every asset and liability account
//! — transit included, since money on its way between two own accounts is still the owner's.
//! Every figure is a sum of rows a person can list: [`AccountBalance::postings`] counts them.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::Serialize;
use sqlx::PgConnection;

use crate::{
    accounts::{AccountKind, AccountType},
    error::LedgerError,
    money::Currency,
    owner::OwnerId,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccountBalance {
    pub name: String,
    pub kind: AccountKind,
    #[serde(rename = "type")]
    pub account_type: AccountType,
    pub currency: Currency,
    /// Held positive, owed negative.
    pub balance_minor: i64,
    /// How many postings the balance sums.
    pub postings: i64,
}

/// A row waiting in transit for the other side of its transfer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InTransit {
    pub transaction_id: uuid::Uuid,
    pub date: NaiveDate,
    pub account: String,
    pub description: String,
    /// The effect on `account` (money in positive).
    pub amount_minor: i64,
    pub currency: Currency,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Balances {
    /// The currency new accounts and budgets take, once the owner has one.
    pub home_currency: Option<Currency>,
    pub accounts: Vec<AccountBalance>,
    /// Assets less liabilities, per currency (never converted).
    pub net_worth: BTreeMap<Currency, i64>,
    /// Net worth at each month's end, per currency, oldest first.
    pub history: Vec<MonthEnd>,
    pub in_transit: Vec<InTransit>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MonthEnd {
    /// The month, `YYYY-MM`.
    pub month: String,
    pub currency: Currency,
    pub net_worth_minor: i64,
}

/// The balances of `owner`'s accounts that hold money, net worth per currency, its month-end
/// history over the months that have postings (at most the last `months`), and what waits in
/// transit.
pub async fn balances(owner: OwnerId, conn: &mut PgConnection, months: u32) -> Result<Balances, LedgerError> {
    let rows: Vec<(String, AccountKind, AccountType, String, i64, i64)> = sqlx::query_as(
        "SELECT a.name, a.kind, a.type, a.currency::text,
                coalesce(sum(p.amount_minor), 0)::bigint, count(p.id)
         FROM accounts a
         LEFT JOIN postings p ON p.owner_id = a.owner_id AND p.account_id = a.id
         WHERE a.owner_id = $1 AND a.type IN ('asset', 'liability') AND a.kind IS NOT NULL AND a.currency IS NOT NULL
         GROUP BY a.id
         ORDER BY a.type, a.kind, a.name",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?;
    let mut accounts = Vec::with_capacity(rows.len());
    let mut net_worth: BTreeMap<Currency, i64> = BTreeMap::new();
    for (name, kind, account_type, currency, balance_minor, postings) in rows {
        let currency = Currency::parse(&currency)?;
        let total = net_worth.entry(currency).or_default();
        *total = total.saturating_add(balance_minor);
        accounts.push(AccountBalance {
            name,
            kind,
            account_type,
            currency,
            balance_minor,
            postings,
        });
    }
    let history: Vec<(String, String, i64)> = sqlx::query_as(
        "WITH monthly AS (
             SELECT date_trunc('month', t.date)::date AS month, p.currency, sum(p.amount_minor) AS moved
             FROM postings p
             JOIN transactions t ON t.owner_id = p.owner_id AND t.id = p.transaction_id
             JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id AND a.type IN ('asset', 'liability')
             WHERE p.owner_id = $1
             GROUP BY 1, 2
         ), running AS (
             SELECT month, currency, sum(moved) OVER (PARTITION BY currency ORDER BY month) AS worth FROM monthly
         )
         SELECT to_char(month, 'YYYY-MM'), currency::text, worth::bigint FROM running
         WHERE month > (SELECT max(month) FROM monthly) - make_interval(months => $2)
         ORDER BY month, currency",
    )
    .bind(owner.as_uuid())
    .bind(i32::try_from(months).unwrap_or(i32::MAX))
    .fetch_all(&mut *conn)
    .await?;
    let history = history
        .into_iter()
        .map(|(month, currency, net_worth_minor)| {
            Ok(MonthEnd {
                month,
                currency: Currency::parse(&currency)?,
                net_worth_minor,
            })
        })
        .collect::<Result<Vec<_>, LedgerError>>()?;
    let in_transit = crate::transfers::transit_legs(owner, &mut *conn)
        .await?
        .into_iter()
        .filter_map(|leg| {
            Some(InTransit {
                transaction_id: leg.transaction?,
                date: leg.date,
                account: leg.account,
                description: leg.description,
                amount_minor: leg.amount_minor,
                currency: leg.currency,
            })
        })
        .collect();
    let home_currency = crate::accounts::home_currency(owner, conn).await?;
    Ok(Balances {
        home_currency,
        accounts,
        net_worth,
        history,
        in_transit,
    })
}
