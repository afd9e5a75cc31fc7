//! The dashboard of one owner: spend by category and by month, budgets, recurring payments,
//! anomalies, the accounts with net worth and what waits in transit, and the month's transactions — the read tools' own figures, so the page and the
//! agent never disagree.

use chrono::{Datelike, NaiveDate};
use serde_json::{Value, json};
use sqlx::PgPool;

use kakeibo_ledger::OwnerId;

use crate::{Month, Scope, ToolsError, in_snapshot, registry};

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

/// The dashboard of `month` (default: the latest month of the owner's ledger); `{"empty": true,
/// "months": [], "transactions": []}` when the ledger has no transactions. A month without
/// transactions has empty figures. A malformed `month` is [`ToolsError::BadMonth`].
///
/// Every figure comes from one snapshot of the ledger ([`in_snapshot`]): the panels agree with
/// each other even while an import commits.
pub async fn dashboard(owner: OwnerId, pool: &PgPool, month: Option<&str>) -> Result<Value, ToolsError> {
    let asked = month.map(parse_month).transpose()?;
    in_snapshot(owner, pool, figures(owner, pool, asked)).await
}

async fn figures(owner: OwnerId, pool: &PgPool, asked: Option<Month>) -> Result<Value, ToolsError> {
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
        return Ok(json!({"empty": true, "months": [], "transactions": []}));
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
    let tools = registry(&scope);
    let call = |name: &'static str, input: Value| {
        let tools = &tools;
        async move {
            tools
                .call(name, input)
                .await
                .map_err(|source| ToolsError::Dashboard { tool: name, source })
        }
    };
    let by_category = call(
        "get_spend_report",
        json!({"period": month, "group_by": "category"}),
    )
    .await?;
    let by_month = call(
        "get_spend_report",
        json!({"period": {"from": first.to_string(), "to": chosen.last_day().to_string()}, "group_by": "month"}),
    )
    .await?;
    let budgets = call("get_budget_status", json!({"month": month})).await?;
    let recurring = call("detect_recurring", json!({})).await?;
    let anomalies = call("flag_anomalies", json!({"month": month})).await?;
    let balances = call("get_balances", json!({"months": DASHBOARD_MONTHS})).await?;
    let found = call(
        "search_transactions",
        json!({"from": chosen.first_day.to_string(), "to": chosen.last_day().to_string(), "limit": DASHBOARD_TRANSACTIONS}),
    )
    .await?;
    let transactions: Vec<Value> = found
        .get("transactions")
        .and_then(Value::as_array)
        .map(|rows| rows.iter().map(transaction_row).collect())
        .unwrap_or_default();
    Ok(json!({
        "empty": false,
        "month": month,
        "months": months,
        "spend_by_category": by_category,
        "spend_by_month": by_month,
        "budgets": budgets,
        "recurring": recurring,
        "anomalies": anomalies,
        "balances": balances,
        "transactions": transactions,
    }))
}

/// A row of `search_transactions` as the page lists it: the amount as one object.
fn transaction_row(row: &Value) -> Value {
    json!({
        "id": row["id"],
        "date": row["date"],
        "description": row["description"],
        "category": row["category"],
        "amount": {
            "amount_minor": row["amount_minor"],
            "formatted": row["formatted"],
            "currency": row["currency"],
        },
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
