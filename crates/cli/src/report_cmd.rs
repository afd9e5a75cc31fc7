//! `kakeibo report …`: the read tools, printed as tables or JSON.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use kakeibo_core::TypedTool;
use kakeibo_ledger::OwnerId;
use kakeibo_tools::{
    Amount, DetectRecurring, FlagAnomalies, GetBalances, GetBudgetStatus, GetSpendReport, ListAccounts,
    Scope,
    anomalies::{AnomaliesInput, AnomaliesOutput},
    balances::{BalancesInput, BalancesOutput},
    list_accounts::{AccountsOutput, NoInput},
    recurring::{RecurringInput, RecurringOutput},
    reports::{BudgetStatus, BudgetStatusInput, GroupBy, Period, SpendReport, SpendReportInput},
};

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
    let scope = Scope::new(owner, pool);
    let json = args.json;
    match args.report {
        Report::Spend => {
            let period = match period.split_once("..") {
                Some((from, to)) => Period::Range {
                    from: from.to_owned(),
                    to: to.to_owned(),
                },
                None => Period::Month(period.clone()),
            };
            let group_by = match args.by {
                By::Category => GroupBy::Category,
                By::Month => GroupBy::Month,
            };
            let input = SpendReportInput {
                period,
                group_by,
                include_income: false,
            };
            report(json, GetSpendReport(scope), input, print_spend).await
        }
        Report::Budget => {
            let input = BudgetStatusInput { month: month()? };
            report(json, GetBudgetStatus(scope), input, print_budget).await
        }
        Report::Recurring => {
            report(
                json,
                DetectRecurring(scope),
                RecurringInput::default(),
                print_recurring,
            )
            .await
        }
        Report::Anomalies => {
            let input = AnomaliesInput { month: month()? };
            report(json, FlagAnomalies(scope), input, print_anomalies).await
        }
        Report::Accounts => {
            report(
                json,
                GetBalances(scope),
                BalancesInput { months: None },
                print_accounts,
            )
            .await
        }
        Report::Categories => report(json, ListAccounts(scope), NoInput {}, print_categories).await,
    }
}

/// Asks one read tool, typed, and prints its answer: the tool's JSON (`--json`) or tables.
async fn report<T: TypedTool>(as_json: bool, tool: T, input: T::Input, tables: fn(&T::Output)) -> Result<()> {
    let out = kakeibo_tools::ask(tool, input)
        .await
        .map_err(|e| anyhow::anyhow!("{}: {e}", T::NAME))?;
    if as_json {
        crate::outln!("{}", json(&serde_json::to_string_pretty(&out)?));
    } else {
        tables(&out);
    }
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

/// An amount, or a dash for none.
fn amount(a: Option<&Amount>) -> String {
    a.map_or_else(|| "—".to_owned(), |a| a.formatted.clone())
}

fn amounts(list: &[Amount]) -> String {
    list.iter()
        .map(|a| a.formatted.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_spend(out: &SpendReport) {
    crate::outln!(
        "{} to {}, by {}",
        visible(&out.period.from),
        visible(&out.period.to),
        visible(out.group_by)
    );
    table::print_each(&["group", ">transactions", ">amount"], &out.groups, |g| {
        vec![
            g.group.clone(),
            g.transactions.to_string(),
            g.amount.formatted.clone(),
        ]
    });
    crate::outln!("total spending: {}", visible(&amounts(&out.totals_by_currency)));
}

fn print_budget(out: &BudgetStatus) {
    crate::outln!("{}", visible(&out.month));
    table::print_each(
        &["category", ">budget", ">spent", ">left", ">used", ""],
        &out.categories,
        |c| {
            vec![
                c.category.clone(),
                amount(c.budget.as_ref()),
                c.actual.formatted.clone(),
                amount(c.remaining.as_ref()),
                c.percent_used
                    .map_or_else(|| "—".to_owned(), |p| format!("{p:.1}%")),
                if c.over_budget { "over" } else { "" }.to_owned(),
            ]
        },
    );
    if let Some(note) = &out.note {
        crate::outln!("{}", visible(note));
    }
}

fn print_recurring(out: &RecurringOutput) {
    table::print_each(
        &[
            "merchant",
            "category",
            "cadence",
            ">times",
            "last seen",
            ">average",
        ],
        &out.merchants,
        |m| {
            vec![
                m.merchant.clone(),
                m.category.clone(),
                m.cadence.to_owned(),
                m.occurrences.to_string(),
                m.last_seen.clone(),
                m.amount.formatted.clone(),
            ]
        },
    );
    crate::outln!(
        "monthly commitment: {}",
        visible(&amounts(&out.monthly_commitment))
    );
}

fn print_anomalies(out: &AnomaliesOutput) {
    crate::outln!("{}", visible(&out.month));
    table::print_each(
        &["date", "kind", "description", ">amount", "why"],
        &out.anomalies,
        |a| {
            vec![
                a.date.clone(),
                a.kind.to_owned(),
                a.description.clone(),
                a.amount.formatted.clone(),
                a.detail.clone(),
            ]
        },
    );
    if let Some(note) = &out.note {
        crate::outln!("{}", visible(note));
    }
}

fn print_categories(out: &AccountsOutput) {
    table::print_each(
        &["account", "type", ">postings", ">balance"],
        &out.accounts,
        |a| {
            vec![
                a.name.clone(),
                a.account_type.clone(),
                a.postings.to_string(),
                amount(a.balance.as_ref()),
            ]
        },
    );
}

/// `report accounts`: the balances, net worth, its history and what waits in transit.
fn print_accounts(out: &BalancesOutput) {
    table::print_each(
        &["account", "kind", ">postings", ">balance"],
        &out.accounts,
        |a| {
            vec![
                a.name.clone(),
                a.kind.to_string(),
                a.postings.to_string(),
                a.balance.formatted.clone(),
            ]
        },
    );
    crate::outln!();
    crate::outln!(
        "net worth (assets less liabilities): {}",
        visible(&amounts(&out.net_worth))
    );
    let history: Vec<Vec<String>> = out
        .history
        .iter()
        .map(|h| vec![h.month.clone(), h.net_worth.formatted.clone()])
        .collect();
    if !history.is_empty() {
        crate::outln!();
        table::print(&["month end", ">net worth"], &history);
    }
    let transit: Vec<Vec<String>> = out
        .in_transit
        .iter()
        .map(|t| {
            vec![
                t.date.to_string(),
                t.account.clone(),
                t.description.clone(),
                t.amount.formatted.clone(),
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
