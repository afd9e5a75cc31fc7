//! The dashboard of one owner: spend by category and by month, budgets, recurring payments,
//! anomalies, the accounts with net worth and what waits in transit, and the month's transactions — the read tools' own figures, so the page and the
//! agent never disagree.

use chrono::{Datelike, NaiveDate};
use kakeibo_core::TypedTool;
use kakeibo_ledger::OwnerId;
use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

use crate::{
    Amount, DetectRecurring, FlagAnomalies, GetBalances, GetBudgetStatus, GetSpendReport, Month, Scope,
    SearchTransactions, ToolsError,
    anomalies::{AnomaliesInput, AnomaliesOutput},
    balances::{BalancesInput, BalancesOutput},
    in_snapshot,
    recurring::{RecurringInput, RecurringOutput},
    reports::{BudgetStatus, BudgetStatusInput, GroupBy, Period, SpendReport, SpendReportInput},
    search::{Found, SearchInput},
};

/// How many months the by-month series covers, ending with the chosen month.
pub const DASHBOARD_MONTHS: u32 = 6;
/// The most transactions of the month the dashboard lists (newest first).
pub const DASHBOARD_TRANSACTIONS: i64 = 200;

/// The years a month may be asked for in: four digits, and none before 1900 (no statement is
/// older; the dashboard's months before the one asked for stay in years written with four digits).
pub const DASHBOARD_YEARS: std::ops::RangeInclusive<i32> = 1900..=9999;

/// A month as the dashboard is asked for it: exactly `YYYY-MM`, a real month, in
/// [`DASHBOARD_YEARS`].
pub fn parse_month(text: &str) -> Result<Month, ToolsError> {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 7
        && bytes.get(4) == Some(&b'-')
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || b.is_ascii_digit());
    shaped
        .then(|| Month::parse(text))
        .flatten()
        .filter(|month| DASHBOARD_YEARS.contains(&month.first_day.year()))
        .ok_or_else(|| ToolsError::BadMonth(text.to_owned()))
}

/// The dashboard of one owner for one month, as the page reads it (`GET /api/dashboard`). Each
/// panel is the output of the read tool the agent would call for it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Dashboard {
    /// Whether the ledger has no transactions (then only `months` and `transactions`, both
    /// empty, come with it).
    pub empty: bool,
    /// The month shown, `YYYY-MM`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub month: Option<String>,
    /// Every month with a transaction, oldest first.
    pub months: Vec<String>,
    #[serde(flatten)]
    pub panels: Option<Panels>,
    /// The month's transactions, newest first, at most [`DASHBOARD_TRANSACTIONS`].
    pub transactions: Vec<DashboardTransaction>,
}

/// The panels of a month: each one read tool's answer.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Panels {
    pub spend_by_category: SpendReport,
    /// The by-month series: [`DASHBOARD_MONTHS`] months ending with the one shown.
    pub spend_by_month: SpendReport,
    pub budgets: BudgetStatus,
    pub recurring: RecurringOutput,
    pub anomalies: AnomaliesOutput,
    pub balances: BalancesOutput,
}

/// A transaction as the page lists it: the amount as one object.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DashboardTransaction {
    pub id: Uuid,
    pub date: String,
    pub description: String,
    pub category: String,
    pub amount: Amount,
}

impl From<Found> for DashboardTransaction {
    fn from(found: Found) -> Self {
        Self {
            id: found.id,
            date: found.date,
            description: found.description,
            category: found.category,
            amount: found.amount,
        }
    }
}

/// The dashboard of `month` (default: the latest month of the owner's ledger); empty when the
/// ledger has no transactions. A month without transactions has empty figures. A malformed
/// `month` is [`ToolsError::BadMonth`].
///
/// Every figure comes from one snapshot of the ledger ([`in_snapshot`]): the panels agree with
/// each other even while an import commits.
pub async fn dashboard(owner: OwnerId, pool: &PgPool, month: Option<&str>) -> Result<Dashboard, ToolsError> {
    let asked = month.map(parse_month).transpose()?;
    Box::pin(in_snapshot(owner, pool, figures(owner, pool, asked))).await
}

/// Asks one read tool for the dashboard.
async fn ask<T: TypedTool>(tool: T, input: T::Input) -> Result<T::Output, ToolsError> {
    crate::ask(tool, input).await.map_err(|e| ToolsError::Dashboard {
        tool: T::NAME,
        source: e.into(),
    })
}

async fn figures(owner: OwnerId, pool: &PgPool, asked: Option<Month>) -> Result<Dashboard, ToolsError> {
    let scope = Scope::new(owner, pool.clone());
    let (latest, months): (Option<NaiveDate>, Vec<String>) = scope
        .read(|conn| {
            Box::pin(async move {
                let latest = sqlx::query_scalar("SELECT max(date) FROM transactions WHERE owner_id = $1")
                    .bind(owner.as_uuid())
                    .fetch_one(&mut *conn)
                    .await?;
                let months = sqlx::query_scalar(
                    "SELECT DISTINCT to_char(date, 'YYYY-MM') FROM transactions WHERE owner_id = $1 ORDER BY 1",
                )
                .bind(owner.as_uuid())
                .fetch_all(&mut *conn)
                .await?;
                Ok((latest, months))
            })
        })
        .await
        .map_err(|e| ToolsError::Dashboard {
            tool: "months",
            source: e.into(),
        })?;
    let Some(latest) = latest else {
        return Ok(Dashboard {
            empty: true,
            month: None,
            months: Vec::new(),
            panels: None,
            transactions: Vec::new(),
        });
    };
    let chosen = match asked {
        Some(month) => month,
        None => Month::parse(&latest.format("%Y-%m").to_string())
            .ok_or_else(|| ToolsError::Calendar(format!("of {latest}")))?,
    };
    let month = chosen.label();
    // The by-month series starts at most five months earlier, and never before year 0: the read
    // tools take dates written YYYY-MM-DD, which a year before 0 is not (a ledger's own latest
    // month is not held to DASHBOARD_YEARS; an asked-for one is).
    let first = chosen
        .first_day
        .checked_sub_months(chrono::Months::new(DASHBOARD_MONTHS - 1))
        .filter(|day| day.year() >= 0)
        .or_else(|| NaiveDate::from_ymd_opt(0, 1, 1))
        .ok_or_else(|| ToolsError::Calendar(format!("before {month}")))?;
    let last = chosen.last_day();
    let spend = |period, group_by| SpendReportInput {
        period,
        group_by,
        include_income: false,
    };
    let panels = Panels {
        spend_by_category: ask(
            GetSpendReport(scope.clone()),
            spend(Period::Month(month.clone()), GroupBy::Category),
        )
        .await?,
        spend_by_month: ask(
            GetSpendReport(scope.clone()),
            spend(
                Period::Range {
                    from: first.to_string(),
                    to: last.to_string(),
                },
                GroupBy::Month,
            ),
        )
        .await?,
        budgets: ask(
            GetBudgetStatus(scope.clone()),
            BudgetStatusInput { month: month.clone() },
        )
        .await?,
        recurring: ask(DetectRecurring(scope.clone()), RecurringInput::default()).await?,
        anomalies: ask(
            FlagAnomalies(scope.clone()),
            AnomaliesInput { month: month.clone() },
        )
        .await?,
        balances: ask(
            GetBalances(scope.clone()),
            BalancesInput {
                months: Some(DASHBOARD_MONTHS),
            },
        )
        .await?,
    };
    let found = ask(
        SearchTransactions(scope.clone()),
        SearchInput {
            from: Some(chosen.first_day.to_string()),
            to: Some(last.to_string()),
            limit: DASHBOARD_TRANSACTIONS,
            ..SearchInput::default()
        },
    )
    .await?;
    Ok(Dashboard {
        empty: false,
        month: Some(month),
        months,
        panels: Some(panels),
        transactions: found
            .transactions
            .into_iter()
            .map(DashboardTransaction::from)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_are_exactly_yyyy_mm() {
        for good in ["2025-03", "1900-01", "9999-12"] {
            assert_eq!(parse_month(good).map(Month::label).ok().as_deref(), Some(good));
        }
        for bad in [
            "0000-01",
            "0000-06",
            "0001-01",
            "1899-12",
            "2025-3",
            "2025-13",
            "+202-03",
            "2025/03",
            "March",
            "",
            "2025-03-01",
            "２０２５-03",
        ] {
            let Err(e @ ToolsError::BadMonth(_)) = parse_month(bad) else {
                panic!("{bad:?} was taken for a month");
            };
            assert!(e.to_string().contains("YYYY-MM, from 1900-01 to 9999-12"), "{e}");
        }
    }
}
