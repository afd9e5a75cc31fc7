//! `kakeibo report …`: the read tools, printed as tables or JSON.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use kakeibo_ledger::OwnerId;
use kakeibo_tools::{Scope, registry};
use serde_json::{Value, json};

use crate::{
    DbArgs, pool, table,
    terminal::{json, visible},
};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Report {
    /// Spending by category (or month) for a period.
    Spend,
    /// Budget against spending for a month.
    Budget,
    /// Subscriptions, bills and salaries found from regular gaps.
    Recurring,
    /// Outliers, refunds and duplicate charges in a month.
    Anomalies,
    /// Each account that holds money with its balance (owed negative), net worth per currency,
    /// its month-end history, and what waits in transit between your accounts.
    Accounts,
    /// Every category with its postings and their sum.
    Categories,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum By {
    Category,
    Month,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[arg(value_enum)]
    report: Report,
    /// YYYY-MM, or FROM..TO as YYYY-MM-DD..YYYY-MM-DD (default: the latest month in the ledger).
    #[arg(long)]
    period: Option<String>,
    /// Group spending by category (default) or month.
    #[arg(long, value_enum, default_value = "category")]
    by: By,
    /// Print the tool's JSON.
    #[arg(long)]
    json: bool,
    /// Whose ledger (default: the development owner).
    #[arg(long, value_name = "UUID", default_value_t = kakeibo_ledger::DEV_OWNER.as_uuid())]
    owner: uuid::Uuid,
    #[command(flatten)]
    database: DbArgs,
}

pub async fn run(args: ReportArgs) -> Result<()> {
    let pool = pool(&args.database)?;
    let owner = OwnerId::new(args.owner);
    let period = match &args.period {
        Some(p) => checked_period(p)?,
        None => latest_month(&pool, owner).await?,
    };
    let month = || -> Result<String> {
        if period.contains("..") {
            bail!("this report is for one month: --period YYYY-MM");
        }
        Ok(period.clone())
    };
    let (tool, input) = match args.report {
        Report::Spend => {
            let period = match period.split_once("..") {
                Some((from, to)) => json!({"from": from, "to": to}),
                None => json!(period),
            };
            let by = match args.by {
                By::Category => "category",
                By::Month => "month",
            };
            ("get_spend_report", json!({"period": period, "group_by": by}))
        }
        Report::Budget => ("get_budget_status", json!({"month": month()?})),
        Report::Recurring => ("detect_recurring", json!({})),
        Report::Anomalies => ("flag_anomalies", json!({"month": month()?})),
        Report::Accounts => ("get_balances", json!({})),
        Report::Categories => ("list_accounts", json!({})),
    };
    let tools = registry(&Scope::new(owner, pool));
    let out = tools
        .call(tool, input)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.json {
        crate::outln!("{}", json(&serde_json::to_string_pretty(&out)?));
        return Ok(());
    }
    print(args.report, &out);
    Ok(())
}

async fn latest_month(pool: &sqlx::PgPool, owner: OwnerId) -> Result<String> {
    let latest: Option<String> =
        sqlx::query_scalar("SELECT to_char(max(date), 'YYYY-MM') FROM transactions WHERE owner_id = $1")
            .bind(owner.as_uuid())
            .fetch_one(pool)
            .await
            .context("reading the ledger")?;
    latest.context("the ledger is empty: import a statement or run `kakeibo seed --db` first")
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "—".to_owned(),
        other => other.to_string(),
    }
}

fn print(report: Report, out: &Value) {
    let list = |key: &str| out[key].as_array().cloned().unwrap_or_default();
    match report {
        Report::Spend => {
            crate::outln!(
                "{} to {}, by {}",
                visible(&s(&out["period"]["from"])),
                visible(&s(&out["period"]["to"])),
                visible(&s(&out["group_by"]))
            );
            let rows: Vec<Vec<String>> = list("groups")
                .iter()
                .map(|g| vec![s(&g["group"]), s(&g["transactions"]), s(&g["formatted"])])
                .collect();
            table::print(&["group", ">transactions", ">amount"], &rows);
            let totals: Vec<String> = list("totals_by_currency")
                .iter()
                .map(|t| s(&t["formatted"]))
                .collect();
            crate::outln!("total spending: {}", visible(&totals.join(", ")));
        }
        Report::Budget => {
            crate::outln!("{}", visible(&s(&out["month"])));
            let rows: Vec<Vec<String>> = list("categories")
                .iter()
                .map(|c| {
                    vec![
                        s(&c["category"]),
                        s(&c["budget"]["formatted"]),
                        s(&c["actual"]["formatted"]),
                        s(&c["remaining"]["formatted"]),
                        c["percent_used"]
                            .as_f64()
                            .map_or_else(|| "—".to_owned(), |p| format!("{p:.1}%")),
                        if c["over_budget"] == true {
                            "over".to_owned()
                        } else {
                            String::new()
                        },
                    ]
                })
                .collect();
            table::print(&["category", ">budget", ">spent", ">left", ">used", ""], &rows);
            if let Some(note) = out["note"].as_str() {
                crate::outln!("{}", visible(note));
            }
        }
        Report::Recurring => {
            let rows: Vec<Vec<String>> = list("merchants")
                .iter()
                .map(|m| {
                    vec![
                        s(&m["merchant"]),
                        s(&m["category"]),
                        s(&m["cadence"]),
                        s(&m["occurrences"]),
                        s(&m["last_seen"]),
                        s(&m["formatted"]),
                    ]
                })
                .collect();
            table::print(
                &[
                    "merchant",
                    "category",
                    "cadence",
                    ">times",
                    "last seen",
                    ">average",
                ],
                &rows,
            );
            let commitment: Vec<String> = list("monthly_commitment")
                .iter()
                .map(|t| s(&t["formatted"]))
                .collect();
            crate::outln!("monthly commitment: {}", visible(&commitment.join(", ")));
        }
        Report::Anomalies => {
            crate::outln!("{}", visible(&s(&out["month"])));
            let rows: Vec<Vec<String>> = list("anomalies")
                .iter()
                .map(|a| {
                    vec![
                        s(&a["date"]),
                        s(&a["kind"]),
                        s(&a["description"]),
                        s(&a["formatted"]),
                        s(&a["detail"]),
                    ]
                })
                .collect();
            table::print(&["date", "kind", "description", ">amount", "why"], &rows);
            if let Some(note) = out["note"].as_str() {
                crate::outln!("{}", visible(note));
            }
        }
        Report::Accounts => print_accounts(&list),
        Report::Categories => {
            let rows: Vec<Vec<String>> = list("accounts")
                .iter()
                .map(|a| {
                    vec![
                        s(&a["name"]),
                        s(&a["type"]),
                        s(&a["postings"]),
                        s(&a["formatted"]),
                    ]
                })
                .collect();
            table::print(&["account", "type", ">postings", ">balance"], &rows);
        }
    }
}

/// `report accounts`: the balances, net worth, its history and what waits in transit.
fn print_accounts(list: &dyn Fn(&str) -> Vec<Value>) {
    let rows: Vec<Vec<String>> = list("accounts")
        .iter()
        .map(|a| {
            vec![
                s(&a["name"]),
                s(&a["kind"]),
                s(&a["postings"]),
                s(&a["formatted"]),
            ]
        })
        .collect();
    table::print(&["account", "kind", ">postings", ">balance"], &rows);
    let worth: Vec<String> = list("net_worth").iter().map(|m| s(&m["formatted"])).collect();
    crate::outln!();
    crate::outln!(
        "net worth (assets less liabilities): {}",
        visible(&worth.join(", "))
    );
    let history: Vec<Vec<String>> = list("history")
        .iter()
        .map(|h| vec![s(&h["month"]), s(&h["formatted"])])
        .collect();
    if !history.is_empty() {
        crate::outln!();
        table::print(&["month end", ">net worth"], &history);
    }
    let transit: Vec<Vec<String>> = list("in_transit")
        .iter()
        .map(|t| {
            vec![
                s(&t["date"]),
                s(&t["account"]),
                s(&t["description"]),
                s(&t["formatted"]),
            ]
        })
        .collect();
    if !transit.is_empty() {
        crate::outln!();
        crate::outln!("waiting in transit for the other side of a transfer (neither spending nor income):");
        table::print(&["date", "account", "description", ">amount"], &transit);
    }
}

/// `--period` as given, or an error saying what it takes: `YYYY-MM`, or `YYYY-MM-DD..YYYY-MM-DD`.
fn checked_period(period: &str) -> Result<String> {
    let period = period.trim();
    let month = |text: &str| {
        chrono::NaiveDate::parse_from_str(&format!("{text}-01"), "%Y-%m-%d").is_ok() && text.len() == 7
    };
    let day = |text: &str| chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok() && text.len() == 10;
    let valid = match period.split_once("..") {
        Some((from, to)) => day(from) && day(to) && from <= to,
        None => month(period),
    };
    if !valid {
        bail!(
            "--period {period:?}: give a month as YYYY-MM (2025-03) or days as YYYY-MM-DD..YYYY-MM-DD \
             (2025-01-01..2025-06-30, the first not after the second)"
        );
    }
    Ok(period.to_owned())
}

#[cfg(test)]
mod tests {
    use super::checked_period;

    #[test]
    fn periods_are_months_or_day_ranges() {
        for good in ["2025-03", "2025-01-01..2025-06-30", " 2025-12 "] {
            assert!(checked_period(good).is_ok(), "{good}");
        }
        for bad in [
            "2025-13",
            "junk",
            "2025-3",
            "2025-06-30..2025-01-01",
            "2025-02-30..2025-03-01",
            "2025-01..2025-02",
        ] {
            let err = checked_period(bad).unwrap_err().to_string();
            assert!(err.contains("YYYY-MM"), "{bad}: {err}");
        }
    }
}
