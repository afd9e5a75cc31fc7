//! The dashboard of one owner: spend by category and by month, budgets, recurring payments and
//! anomalies — the read tools' own figures, so the page and the agent never disagree.

use chrono::{Datelike, NaiveDate};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::{
    db::begin_for_owner,
    error::LedgerError,
    owner::OwnerId,
    tools::{Scope, registry},
};

/// How many months the by-month series covers, ending with the ledger's latest month.
pub const DASHBOARD_MONTHS: u32 = 6;

/// The dashboard for the latest month of the owner's ledger (`{"empty": true}` when the ledger
/// has no transactions).
pub async fn dashboard(owner: OwnerId, pool: &PgPool) -> Result<Value, LedgerError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let latest: Option<NaiveDate> =
        sqlx::query_scalar("SELECT max(date) FROM transactions WHERE owner_id = $1")
            .bind(owner.as_uuid())
            .fetch_one(&mut *tx)
            .await?;
    tx.commit().await?;
    let Some(latest) = latest else {
        return Ok(json!({"empty": true}));
    };
    let month = format!("{:04}-{:02}", latest.year(), latest.month());
    let first = NaiveDate::from_ymd_opt(latest.year(), latest.month(), 1)
        .and_then(|d| d.checked_sub_months(chrono::Months::new(DASHBOARD_MONTHS - 1)))
        .ok_or_else(|| LedgerError::Internal(format!("no month before {month}")))?;
    let tools = registry(&Scope::new(owner, pool.clone()));
    let call = |name: &'static str, input: Value| {
        let tools = &tools;
        async move {
            tools
                .call(name, input)
                .await
                .map_err(|e| LedgerError::Internal(format!("{name}: {e}")))
        }
    };
    let by_category = call(
        "get_spend_report",
        json!({"period": month, "group_by": "category"}),
    )
    .await?;
    let by_month = call(
        "get_spend_report",
        json!({"period": {"from": first.to_string(), "to": latest.to_string()}, "group_by": "month"}),
    )
    .await?;
    let budgets = call("get_budget_status", json!({"month": month})).await?;
    let recurring = call("detect_recurring", json!({})).await?;
    let anomalies = call("flag_anomalies", json!({"month": month})).await?;
    Ok(json!({
        "empty": false,
        "month": month,
        "spend_by_category": by_category,
        "spend_by_month": by_month,
        "budgets": budgets,
        "recurring": recurring,
        "anomalies": anomalies,
    }))
}
