//! The budgets screen: one month of every spending category — its budget, what was spent, the
//! transactions behind it — and a budget set, changed or removed.
//!
//! What was spent is the sum of the category's postings in the month, per currency: a refund
//! lowers it, and money moved between a person's own accounts never reaches a category, so it is
//! never spent. Each figure leads to its rows through the register's `category`, `from` and `to`.

use chrono::{Datelike, Months, NaiveDate};
use serde::Serialize;
use sqlx::PgConnection;
use uuid::Uuid;

use kakeibo_ledger::{Currency, OwnerId, home_currency};

use crate::RegisterError;

/// A month as the screen names it: `YYYY-MM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Month {
    pub first_day: NaiveDate,
}

impl Month {
    /// Reads `YYYY-MM`.
    pub fn parse(text: &str) -> Result<Self, RegisterError> {
        let bad = || RegisterError::Invalid(format!("“{text}” is not a month: write it as YYYY-MM"));
        let (year, month) = text.trim().split_once('-').ok_or_else(bad)?;
        if year.len() != 4 || month.len() != 2 {
            return Err(bad());
        }
        let (year, month) = (
            year.parse::<i32>().map_err(|_| bad())?,
            month.parse::<u32>().map_err(|_| bad())?,
        );
        NaiveDate::from_ymd_opt(year, month, 1)
            .map(|first_day| Self { first_day })
            .ok_or_else(bad)
    }

    /// The month holding `day`.
    pub fn of(day: NaiveDate) -> Self {
        Self {
            first_day: day.with_day(1).unwrap_or(day),
        }
    }

    pub fn last_day(self) -> NaiveDate {
        self.first_day
            .checked_add_months(Months::new(1))
            .and_then(|next| next.pred_opt())
            .unwrap_or(self.first_day)
    }

    pub fn label(self) -> String {
        self.first_day.format("%Y-%m").to_string()
    }
}

/// A category's budget for the month.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Budget {
    pub id: Uuid,
    pub amount_minor: i64,
    pub currency: String,
}

/// What was spent in one currency.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Spent {
    pub currency: String,
    /// Positive: spending net of refunds.
    pub amount_minor: i64,
}

/// One spending category in the month.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Line {
    pub category_id: Uuid,
    pub category: String,
    pub budget: Option<Budget>,
    /// One entry per currency spent in, largest first; empty when nothing was.
    pub spent: Vec<Spent>,
    /// Transactions with a posting on the category in the month.
    pub transactions: i64,
}

/// The budgets screen for one month.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MonthView {
    pub month: String,
    pub from: NaiveDate,
    pub to: NaiveDate,
    /// The currency a new budget takes when none is given: the books' home currency, or `None`
    /// before they have one (the first import, or the dashboard's choice, sets it).
    pub currency: Option<String>,
    /// Budgeted categories first (by name), then the rest with spending, then the unused ones.
    pub lines: Vec<Line>,
}

/// The currency a budget takes when none is given: the books' home currency; never a guess.
async fn default_currency(owner: OwnerId, conn: &mut PgConnection) -> Result<Currency, RegisterError> {
    home_currency(owner, conn).await?.ok_or_else(|| {
        RegisterError::Invalid(
            "say the budget's currency: the books have no home currency yet (the first import sets it)"
                .into(),
        )
    })
}

/// A spending category with its budget of the month (id, amount, currency) and its transactions.
type CategoryRow = (Uuid, String, Option<Uuid>, Option<i64>, Option<String>, i64);

/// Every spending category of the owner in `month`.
pub async fn month(
    owner: OwnerId,
    conn: &mut PgConnection,
    month: Month,
) -> Result<MonthView, RegisterError> {
    let categories: Vec<CategoryRow> = sqlx::query_as(
        "SELECT a.id, a.name, b.id, b.amount_minor, b.currency::text,
                (SELECT count(DISTINCT p.transaction_id) FROM postings p
                   JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
                  WHERE p.owner_id = a.owner_id AND p.account_id = a.id AND t.date BETWEEN $3 AND $4)
         FROM accounts a
         LEFT JOIN budgets b ON b.account_id = a.id AND b.owner_id = a.owner_id AND b.month = $2
         WHERE a.owner_id = $1 AND a.type = 'expense'",
    )
    .bind(owner.as_uuid())
    .bind(month.label())
    .bind(month.first_day)
    .bind(month.last_day())
    .fetch_all(&mut *conn)
    .await?;
    let spent: Vec<(Uuid, String, i64)> = sqlx::query_as(
        "SELECT p.account_id, p.currency::text, sum(p.amount_minor)::bigint
         FROM postings p
         JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
         JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
         WHERE p.owner_id = $1 AND a.type = 'expense' AND t.date BETWEEN $2 AND $3
         GROUP BY p.account_id, p.currency",
    )
    .bind(owner.as_uuid())
    .bind(month.first_day)
    .bind(month.last_day())
    .fetch_all(&mut *conn)
    .await?;
    let mut lines: Vec<Line> = categories
        .into_iter()
        .map(
            |(category_id, category, budget_id, amount, currency, transactions)| {
                let mut spent: Vec<Spent> = spent
                    .iter()
                    .filter(|(account, _, _)| *account == category_id)
                    .map(|(_, currency, amount_minor)| Spent {
                        currency: currency.clone(),
                        amount_minor: *amount_minor,
                    })
                    .collect();
                spent.sort_by(|a, b| {
                    b.amount_minor
                        .cmp(&a.amount_minor)
                        .then(a.currency.cmp(&b.currency))
                });
                let budget = match (budget_id, amount, currency) {
                    (Some(id), Some(amount_minor), Some(currency)) => Some(Budget {
                        id,
                        amount_minor,
                        currency,
                    }),
                    _ => None,
                };
                Line {
                    category_id,
                    category,
                    budget,
                    spent,
                    transactions,
                }
            },
        )
        .collect();
    let rank = |line: &Line| match (&line.budget, line.transactions) {
        (Some(_), _) => 0,
        (None, n) if n > 0 => 1,
        _ => 2,
    };
    lines.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then_with(|| a.category.to_lowercase().cmp(&b.category.to_lowercase()))
    });
    Ok(MonthView {
        month: month.label(),
        from: month.first_day,
        to: month.last_day(),
        currency: home_currency(owner, conn).await?.map(|c| c.as_str().to_owned()),
        lines,
    })
}

/// The month of the owner's newest transaction (this month for an empty ledger): the month the
/// screen opens on.
pub async fn latest(
    owner: OwnerId,
    conn: &mut PgConnection,
    today: NaiveDate,
) -> Result<Month, RegisterError> {
    let newest: Option<NaiveDate> =
        sqlx::query_scalar("SELECT max(date) FROM transactions WHERE owner_id = $1")
            .bind(owner.as_uuid())
            .fetch_one(&mut *conn)
            .await?;
    Ok(Month::of(newest.unwrap_or(today)))
}

/// The largest budget the screen takes, in minor units: far above any household's month.
pub const MAX_BUDGET_MINOR: i64 = 1_000_000_000_000;

/// Sets (or replaces) the budget of spending category `category` for `month`.
pub async fn set(
    owner: OwnerId,
    conn: &mut PgConnection,
    category: Uuid,
    month: Month,
    amount_minor: i64,
    currency: Option<&str>,
) -> Result<Budget, RegisterError> {
    if !(0..=MAX_BUDGET_MINOR).contains(&amount_minor) {
        return Err(RegisterError::Invalid(
            "a budget is an amount from 0 up, in the currency's smallest unit".into(),
        ));
    }
    let kind: Option<String> =
        sqlx::query_scalar("SELECT type::text FROM accounts WHERE owner_id = $1 AND id = $2")
            .bind(owner.as_uuid())
            .bind(category)
            .fetch_optional(&mut *conn)
            .await?;
    match kind.as_deref() {
        Some("expense") => {}
        Some("income") => {
            return Err(RegisterError::Refused(
                "that category is income; budgets are for spending".into(),
            ));
        }
        // Not a category of the owner's (an account that holds money is not one either).
        _ => return Err(RegisterError::NotFound),
    }
    let currency = match currency {
        Some(code) => Currency::parse(&code.trim().to_uppercase())
            .map_err(|_| RegisterError::Invalid(format!("“{code}” is not a currency code")))?,
        None => default_currency(owner, &mut *conn).await?,
    };
    let (id, amount_minor, currency): (Uuid, i64, String) = sqlx::query_as(
        "INSERT INTO budgets (owner_id, account_id, month, amount_minor, currency)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, month) DO UPDATE SET amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency
         RETURNING id, amount_minor, currency::text",
    )
    .bind(owner.as_uuid())
    .bind(category)
    .bind(month.label())
    .bind(amount_minor)
    .bind(currency.as_str())
    .fetch_one(&mut *conn)
    .await?;
    Ok(Budget {
        id,
        amount_minor,
        currency,
    })
}

/// Removes budget `id` (the category stays).
pub async fn delete(owner: OwnerId, conn: &mut PgConnection, id: Uuid) -> Result<Uuid, RegisterError> {
    let gone: Option<Uuid> =
        sqlx::query_scalar("DELETE FROM budgets WHERE owner_id = $1 AND id = $2 RETURNING id")
            .bind(owner.as_uuid())
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    gone.ok_or(RegisterError::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_is_read_and_bounded() {
        let m = Month::parse("2024-02").unwrap();
        assert_eq!(m.label(), "2024-02");
        assert_eq!(m.last_day(), NaiveDate::from_ymd_opt(2024, 2, 29).unwrap());
        assert_eq!(
            Month::parse("2023-12").unwrap().last_day().to_string(),
            "2023-12-31"
        );
        for bad in ["2024-13", "2024-2", "24-02", "2024/02", "", "2024-00", "abcd-ef"] {
            assert!(Month::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Month::of(NaiveDate::from_ymd_opt(2024, 3, 17).unwrap()).label(),
            "2024-03"
        );
    }
}
