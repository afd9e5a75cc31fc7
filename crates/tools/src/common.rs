//! What the tools share: input vocabularies, the amount shape, the transaction view.

use chrono::{Datelike, Months, NaiveDate};
use kakeibo_core::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use kakeibo_ledger::{Currency, LedgerError, Money, OwnerId};

use crate::ToolsError;

pub const MONTH_PATTERN: &str = r"^[0-9]{4}-(0[1-9]|1[0-2])$";
pub const ISO_DATE_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

/// An amount as every tool returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Amount {
    pub amount_minor: i64,
    pub formatted: String,
    pub currency: Currency,
}

impl From<Money> for Amount {
    fn from(money: Money) -> Self {
        Self {
            amount_minor: money.amount_minor,
            formatted: money.format(),
            currency: money.currency,
        }
    }
}

impl Amount {
    pub fn new(amount_minor: i64, currency: Currency) -> Self {
        Money::new(amount_minor, currency).into()
    }
}

/// The categories: the expense and income accounts of the chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
pub enum Category {
    Groceries,
    Dining,
    Transport,
    Rent,
    Utilities,
    Subscriptions,
    Shopping,
    Health,
    Entertainment,
    Travel,
    Fees,
    Uncategorized,
    Salary,
    Interest,
    #[serde(rename = "Other Income")]
    OtherIncome,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Self::Groceries => "Groceries",
            Self::Dining => "Dining",
            Self::Transport => "Transport",
            Self::Rent => "Rent",
            Self::Utilities => "Utilities",
            Self::Subscriptions => "Subscriptions",
            Self::Shopping => "Shopping",
            Self::Health => "Health",
            Self::Entertainment => "Entertainment",
            Self::Travel => "Travel",
            Self::Fees => "Fees",
            Self::Uncategorized => "Uncategorized",
            Self::Salary => "Salary",
            Self::Interest => "Interest",
            Self::OtherIncome => "Other Income",
        }
    }
}

/// A calendar month `YYYY-MM`, as inputs give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Month {
    pub first_day: NaiveDate,
}

impl Month {
    pub fn parse(text: &str) -> Option<Self> {
        let (year, month) = text.split_once('-')?;
        if year.len() != 4 || month.len() != 2 {
            return None;
        }
        NaiveDate::from_ymd_opt(year.parse().ok()?, month.parse().ok()?, 1)
            .map(|first_day| Self { first_day })
    }

    pub fn last_day(self) -> NaiveDate {
        self.first_day
            .checked_add_months(Months::new(1))
            .and_then(|d| d.pred_opt())
            .unwrap_or(self.first_day)
    }

    pub fn months_before(self, n: u32) -> NaiveDate {
        self.first_day
            .checked_sub_months(Months::new(n))
            .unwrap_or(self.first_day)
    }

    pub fn label(self) -> String {
        format!("{:04}-{:02}", self.first_day.year(), self.first_day.month())
    }
}

/// The key that groups one merchant's transactions: the description uppercased, every
/// non-letter turned into a space, and the first three words longer than two letters.
pub fn merchant_key(description: &str) -> String {
    description
        .to_uppercase()
        .chars()
        .map(|c| if c.is_alphabetic() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .filter(|w| w.chars().count() > 2)
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Maps a ledger failure to what the model is told.
pub fn tool_error(error: ToolsError) -> ToolError {
    match error {
        ToolsError::Ledger(LedgerError::Database(e)) if is_transient(&e) => {
            ToolError::Transient(e.to_string())
        }
        ToolsError::Ledger(LedgerError::Database(_) | LedgerError::Migrate(_)) => {
            ToolError::Failed("the ledger database refused the request".into())
        }
        fault @ ToolsError::Overflow(_) => ToolError::Failed(fault.to_string()),
        other => ToolError::Refused(other.to_string()),
    }
}

fn is_transient(error: &sqlx::Error) -> bool {
    matches!(
        error,
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed
    ) || error
        .as_database_error()
        .and_then(sqlx::error::DatabaseError::code)
        .is_some_and(|code| {
            // serialization_failure, deadlock_detected, connection exceptions, too many connections.
            matches!(code.as_ref(), "40001" | "40P01" | "53300" | "57P01") || code.starts_with("08")
        })
}

/// One transaction as the tools see it: the category is its expense or income account
/// (`Uncategorized` when it has none), the amount its effect on its asset or liability account.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TransactionView {
    pub id: Uuid,
    pub date: NaiveDate,
    pub description: String,
    pub category: String,
    pub category_type: Option<String>,
    pub amount_minor: i64,
    /// Read as a [`Currency`]: a stored code that is none fails the query, never becomes INR.
    pub currency: Currency,
}

/// `a + b` in minor units, refused past what an amount holds (`what` says whose sum it is).
pub fn add_minor(a: i64, b: i64, what: &'static str) -> Result<i64, ToolsError> {
    a.checked_add(b).ok_or(ToolsError::Overflow(what))
}

/// Filters for [`transactions`]; `None` means no filter.
#[derive(Debug, Clone, Default)]
pub struct Filter<'a> {
    pub query: Option<&'a str>,
    pub account: Option<&'a str>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub min_minor: Option<i64>,
    pub max_minor: Option<i64>,
    pub limit: Option<i64>,
    /// Oldest first (analyses) rather than newest first (search).
    pub ascending: bool,
}

/// The owner's transactions through `filter`: newest first (date, then insertion, then id), or
/// oldest first when asked.
pub async fn transactions(
    owner: OwnerId,
    conn: &mut PgConnection,
    filter: &Filter<'_>,
) -> Result<Vec<TransactionView>, ToolsError> {
    let sql = if filter.ascending {
        VIEW_ASCENDING
    } else {
        VIEW_DESCENDING
    };
    Ok(sqlx::query_as(sql)
        .bind(owner.as_uuid())
        .bind(filter.query)
        .bind(filter.account)
        .bind(filter.from)
        .bind(filter.to)
        .bind(filter.min_minor)
        .bind(filter.max_minor)
        .bind(filter.limit)
        .fetch_all(conn)
        .await?)
}

/// The view's filters on the transaction itself ($2 text, $3 account, $4–$5 dates), after its
/// owner's.
macro_rules! view_filters {
    () => {
        "
               AND ($2::text IS NULL OR strpos(lower(t.description), lower($2)) > 0)
               AND ($3::text IS NULL OR EXISTS (
                     SELECT 1 FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
                     WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id AND lower(a.name) = lower(btrim($3))))
               AND ($4::date IS NULL OR t.date >= $4)
               AND ($5::date IS NULL OR t.date <= $5)"
    };
}

pub(crate) use view_filters;

/// The view's columns for each of the owner's transactions ($1): what the filters of
/// [`view_sql`] and the rows of a figure ([`crate::rows`]) narrow.
macro_rules! view_select {
    () => {
        concat!(
            "SELECT t.id, t.date, t.description,
                    coalesce(cat.name, CASE WHEN money.transit THEN 'Transfers in transit'
                                            WHEN money.holders >= 2 THEN 'Transfer' END,
                             'Uncategorized') AS category,
                    cat.type::text AS category_type,
                    coalesce(money.amount_minor, 0)::bigint AS amount_minor,
                    coalesce(money.currency, cat.currency, 'INR') AS currency
             FROM transactions t
             LEFT JOIN LATERAL (
                 SELECT a.name, a.type, p.currency::text AS currency
                 FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
                 WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id AND a.type IN ('expense', 'income')
                 ORDER BY a.name = 'Uncategorized', a.name LIMIT 1
             ) cat ON true
             LEFT JOIN LATERAL (
                 -- A transfer between two own accounts shows the money that left one of them; a
                 -- row in transit, its own account's side.
                 SELECT CASE WHEN count(*) FILTER (WHERE a.kind IS DISTINCT FROM 'transit') >= 2
                             THEN (array_agg(p.amount_minor ORDER BY p.amount_minor)
                                   FILTER (WHERE a.kind IS DISTINCT FROM 'transit'))[1]
                             ELSE sum(p.amount_minor) FILTER (WHERE a.kind IS DISTINCT FROM 'transit') END AS amount_minor,
                        (array_agg(p.currency::text ORDER BY p.amount_minor)
                         FILTER (WHERE a.kind IS DISTINCT FROM 'transit'))[1] AS currency,
                        coalesce(bool_or(a.kind = 'transit'), false) AS transit,
                        count(*) FILTER (WHERE a.kind IS DISTINCT FROM 'transit') AS holders
                 FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
                 WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id AND a.type IN ('asset', 'liability')
             ) money ON true
             WHERE t.owner_id = $1"
        )
    };
}

pub(crate) use view_select;

macro_rules! view_sql {
    ($order:literal) => {
        concat!(
            view_select!(),
            view_filters!(),
            "
               AND ($6::bigint IS NULL OR EXISTS (
                     SELECT 1 FROM postings p WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id
                     AND abs(p.amount_minor) >= $6))
               AND ($7::bigint IS NULL OR NOT EXISTS (
                     SELECT 1 FROM postings p WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id
                     AND abs(p.amount_minor) > $7))
             ORDER BY ",
            $order,
            " LIMIT $8"
        )
    };
}

/// Newest first, for search: a page of the newest, each transaction's category and money looked
/// up for it alone.
const VIEW_DESCENDING: &str = view_sql!("t.date DESC, t.created_at DESC, t.id ASC");

/// [`VIEW_ASCENDING`]'s text, for queries that build on it (`flag_anomalies`).
macro_rules! view_ascending_sql {
    () => {
        concat!(
            "SELECT t.id, t.date, t.description,
                coalesce((array_agg(a.name ORDER BY a.name = 'Uncategorized', a.name)
                          FILTER (WHERE a.type IN ('expense', 'income')))[1],
                         CASE WHEN bool_or(a.kind = 'transit') THEN 'Transfers in transit'
                              WHEN count(*) FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind IS DISTINCT FROM 'transit') >= 2
                              THEN 'Transfer' END,
                         'Uncategorized') AS category,
                (array_agg(a.type::text ORDER BY a.name = 'Uncategorized', a.name)
                          FILTER (WHERE a.type IN ('expense', 'income')))[1] AS category_type,
                coalesce(CASE WHEN count(*) FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind IS DISTINCT FROM 'transit') >= 2
                              THEN (array_agg(p.amount_minor ORDER BY p.amount_minor)
                                    FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind IS DISTINCT FROM 'transit'))[1]
                              ELSE sum(p.amount_minor) FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind IS DISTINCT FROM 'transit') END,
                         0)::bigint AS amount_minor,
                coalesce((array_agg(p.currency::text ORDER BY p.amount_minor)
                          FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind IS DISTINCT FROM 'transit'))[1],
                         (array_agg(p.currency::text ORDER BY a.name = 'Uncategorized', a.name)
                          FILTER (WHERE a.type IN ('expense', 'income')))[1], 'INR') AS currency
             FROM transactions t
             LEFT JOIN postings p ON p.owner_id = t.owner_id AND p.transaction_id = t.id
             -- Every posting has its account (a foreign key on both columns): joined after the
             -- postings, the period's transactions lead and the postings are looked up for them.
             LEFT JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
             WHERE t.owner_id = $1",
            $crate::common::view_filters!(),
            "
             GROUP BY t.id
             HAVING ($6::bigint IS NULL OR max(abs(p.amount_minor)) >= $6)
                AND ($7::bigint IS NULL OR coalesce(max(abs(p.amount_minor)), 0) <= $7)
             ORDER BY t.date ASC, t.created_at ASC, t.id ASC LIMIT $8"
        )
    };
}
pub(crate) use view_ascending_sql;

/// Oldest first, for the analyses, which read every transaction of a period: the same view as
/// one join of the period's postings grouped by transaction (one pass, rather than two lookups a
/// transaction). Same columns, filters and order as [`VIEW_DESCENDING`] reversed.
const VIEW_ASCENDING: &str = view_ascending_sql!();

/// `field` holds a month, or this says why not.
pub fn check_month(field: &str, text: &str) -> Vec<String> {
    if Month::parse(text).is_some() {
        Vec::new()
    } else {
        vec![format!("{field}: {text:?} is not a month (YYYY-MM)")]
    }
}

/// A month argument, already checked by [`check_month`].
pub fn month_arg(text: &str) -> Result<Month, ToolError> {
    Month::parse(text).ok_or_else(|| ToolError::InvalidInput(check_month("month", text)))
}

/// Checks an optional `from`/`to` pair of ISO dates: each parses, and from is not after to.
pub fn check_range(from: Option<&str>, to: Option<&str>) -> Vec<String> {
    let mut problems = Vec::new();
    let parse = |name: &str, text: Option<&str>, problems: &mut Vec<String>| {
        text.and_then(|t| {
            let parsed = NaiveDate::parse_from_str(t, "%Y-%m-%d").ok();
            if parsed.is_none() {
                problems.push(format!("{name}: {t:?} is not a calendar date (YYYY-MM-DD)"));
            }
            parsed
        })
    };
    let from_date = parse("from", from, &mut problems);
    let to_date = parse("to", to, &mut problems);
    if let (Some(f), Some(t)) = (from_date, to_date)
        && f > t
    {
        problems.push(format!("from ({f}) is after to ({t})"));
    }
    problems
}

pub fn parse_date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_past_an_amount_is_a_failure_never_a_wrap() {
        assert_eq!(add_minor(2, 3, "a sum").unwrap(), 5);
        let past = add_minor(i64::MAX, 1, "the period's spending").unwrap_err();
        assert!(matches!(past, ToolsError::Overflow("the period's spending")));
        assert!(
            matches!(tool_error(past), ToolError::Failed(ref m) if m.contains("more money than an amount can hold")),
        );
    }

    #[test]
    fn merchant_keys() {
        assert_eq!(merchant_key("NETFLIX.COM 5034614"), "NETFLIX COM");
        assert_eq!(
            merchant_key("SALARY CREDIT ACME TECHNOLOGIES"),
            "SALARY CREDIT ACME"
        );
        assert_eq!(merchant_key("UPI/P2A/448120 Zomato"), "UPI ZOMATO");
        assert_eq!(merchant_key("12 34"), "");
    }

    #[test]
    fn months() {
        let feb = Month::parse("2024-02").unwrap();
        assert_eq!(feb.last_day().to_string(), "2024-02-29");
        assert_eq!(feb.months_before(6).to_string(), "2023-08-01");
        assert_eq!(feb.label(), "2024-02");
        for bad in ["2024-13", "2024-2", "24-02", "2024-02-01", ""] {
            assert!(Month::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn ranges() {
        assert!(check_range(Some("2025-01-01"), Some("2025-01-31")).is_empty());
        assert_eq!(check_range(Some("2025-02-01"), Some("2025-01-31")).len(), 1);
        assert_eq!(check_range(Some("2025-02-30"), None).len(), 1);
    }
}
