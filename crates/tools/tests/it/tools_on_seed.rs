//! The finance tools on the seeded demo ledger, run as `app_user` (row-level security on), checked
//! against figures computed here from `seed/labels.json` — the generator's ground truth — and
//! never from the code under test.

#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap
)] // Small figures.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{app_pool, load_demo_ledger, owner_pool};
use kakeibo_core::{CallError, ToolError, ToolRegistry, schema};
use kakeibo_ledger::DEV_OWNER;
use kakeibo_tools::{Scope, registry};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    line: usize,
    date: String,
    description: String,
    amount_minor: i64,
    category: String,
    uncategorized_on_import: bool,
}

impl Row {
    /// Where the ledger files the row: its category, or Uncategorized when it arrived without one.
    fn ledger_category(&self) -> &str {
        if self.uncategorized_on_import {
            "Uncategorized"
        } else {
            &self.category
        }
    }
    fn month(&self) -> &str {
        &self.date[..7]
    }
}

#[derive(Debug, Deserialize)]
struct Labels {
    transactions: Vec<Row>,
    recurring: Vec<LabelRecurring>,
    anomalies: Vec<LabelAnomaly>,
}

#[derive(Debug, Deserialize)]
struct LabelRecurring {
    merchant: String,
    cadence: String,
    occurrences: usize,
    category: String,
}

#[derive(Debug, Deserialize)]
struct LabelAnomaly {
    line: usize,
    kind: String,
}

fn labels() -> Labels {
    let path = kakeibo_testkit::workspace_root().join("seed/labels.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const INCOME: [&str; 3] = ["Salary", "Interest", "Other Income"];

async fn seeded(options: PgPoolOptions, connect: PgConnectOptions) -> (PgPool, ToolRegistry) {
    let owner = owner_pool(options, connect.clone()).await;
    load_demo_ledger(&owner).await;
    let app = app_pool(&connect).await;
    (owner, registry(&Scope::new(DEV_OWNER, app)))
}

async fn call(tools: &ToolRegistry, name: &str, input: Value) -> Value {
    tools
        .call(name, input.clone())
        .await
        .unwrap_or_else(|e| panic!("{name}({input}): {e}"))
}

fn amounts_by_group(report: &Value) -> BTreeMap<String, (i64, i64)> {
    report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["group"].as_str().unwrap().to_owned(),
                (
                    g["amount_minor"].as_i64().unwrap(),
                    g["transactions"].as_i64().unwrap(),
                ),
            )
        })
        .collect()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn spend_reports_match_the_ground_truth(options: PgPoolOptions, connect: PgConnectOptions) {
    let (_, tools) = seeded(options, connect).await;
    let labels = labels();
    for month in ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"] {
        let mut expected: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for row in labels.transactions.iter().filter(|r| r.month() == month) {
            if INCOME.contains(&row.ledger_category()) {
                continue;
            }
            let entry = expected.entry(row.ledger_category().to_owned()).or_default();
            entry.0 -= row.amount_minor;
            entry.1 += 1;
        }
        let report = call(&tools, "get_spend_report", json!({"period": month})).await;
        assert_eq!(amounts_by_group(&report), expected, "{month} by category");
        let total: i64 = expected.values().map(|(a, _)| *a).filter(|a| *a > 0).sum();
        assert_eq!(report["total"]["amount_minor"], total, "{month} total");
        let amounts: Vec<i64> = report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["amount_minor"].as_i64().unwrap())
            .collect();
        assert!(
            amounts.windows(2).all(|w| w[0] >= w[1]),
            "groups by amount, descending"
        );
    }

    let march = call(&tools, "get_spend_report", json!({"period": "2025-03"})).await;
    let groceries = march["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "Groceries")
        .unwrap();
    assert_eq!(groceries["formatted"], "₹23,350.00");

    // By month over a range, with income: income groups are negative and never in the total.
    let by_month = call(
        &tools,
        "get_spend_report",
        json!({"period": {"from": "2025-01-01", "to": "2025-06-30"}, "group_by": "month"}),
    )
    .await;
    let mut expected: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for row in labels
        .transactions
        .iter()
        .filter(|r| !INCOME.contains(&r.ledger_category()))
    {
        let entry = expected.entry(row.month().to_owned()).or_default();
        entry.0 -= row.amount_minor;
        entry.1 += 1;
    }
    assert_eq!(amounts_by_group(&by_month), expected);
    let months: Vec<&str> = by_month["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    assert_eq!(
        months,
        ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"],
        "months in calendar order, whatever they add up to"
    );

    let with_income = call(
        &tools,
        "get_spend_report",
        json!({"period": "2025-03", "include_income": true}),
    )
    .await;
    let salary: i64 = labels
        .transactions
        .iter()
        .filter(|r| r.month() == "2025-03" && r.ledger_category() == "Salary")
        .map(|r| -r.amount_minor)
        .sum();
    assert_eq!(amounts_by_group(&with_income)["Salary"].0, salary);
    assert_eq!(with_income["total"], march["total"]);

    // Every total is the sum of the groups it claims to sum: the spending groups, refunds
    // included, income never.
    for month in ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"] {
        let report = call(
            &tools,
            "get_spend_report",
            json!({"period": month, "include_income": true}),
        )
        .await;
        let groups = report["groups"].as_array().unwrap();
        let spending: i64 = groups
            .iter()
            .filter(|g| g["kind"] == "spending")
            .map(|g| g["amount_minor"].as_i64().unwrap())
            .sum();
        assert_eq!(
            report["total"]["amount_minor"].as_i64(),
            Some(spending),
            "{month}: {report}"
        );
        assert!(
            groups
                .iter()
                .filter(|g| g["kind"] == "income")
                .all(|g| g["amount_minor"].as_i64().unwrap() < 0),
            "{month}: income is money in: {report}"
        );
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn search_matches_the_ground_truth(options: PgPoolOptions, connect: PgConnectOptions) {
    let (_, tools) = seeded(options, connect).await;
    let labels = labels();
    let found = |v: &Value| -> Vec<(String, String, i64)> {
        v["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["date"].as_str().unwrap().to_owned(),
                    t["description"].as_str().unwrap().to_owned(),
                    t["amount_minor"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let expect = |keep: &dyn Fn(&Row) -> bool, limit: usize| -> Vec<(String, String, i64)> {
        let mut rows: Vec<&Row> = labels.transactions.iter().filter(|r| keep(r)).collect();
        // Newest first; rows of one day keep no particular order, so compare days as sets below.
        rows.sort_by(|a, b| b.date.cmp(&a.date).then(a.line.cmp(&b.line)));
        rows.into_iter()
            .take(limit)
            .map(|r| (r.date.clone(), r.description.clone(), r.amount_minor))
            .collect()
    };
    let same = |mut a: Vec<(String, String, i64)>, mut b: Vec<(String, String, i64)>| {
        a.sort();
        b.sort();
        assert_eq!(a, b);
    };

    let croma = call(
        &tools,
        "search_transactions",
        json!({"query": "croma", "from": "2025-05-01", "to": "2025-05-31"}),
    )
    .await;
    same(
        found(&croma),
        expect(
            &|r| r.description.to_lowercase().contains("croma") && r.month() == "2025-05",
            200,
        ),
    );
    assert_eq!(croma["count"], croma["transactions"].as_array().unwrap().len());

    let groceries = call(
        &tools,
        "search_transactions",
        json!({"account": "groceries", "limit": 200}),
    )
    .await;
    same(
        found(&groceries),
        expect(&|r| r.ledger_category() == "Groceries", 200),
    );

    let big = call(
        &tools,
        "search_transactions",
        json!({"min_minor": 1_000_000, "max_minor": 5_000_000, "limit": 200}),
    )
    .await;
    same(
        found(&big),
        expect(&|r| (1_000_000..=5_000_000).contains(&r.amount_minor.abs()), 200),
    );

    let newest = call(&tools, "search_transactions", json!({})).await;
    assert_eq!(newest["count"], 20);
    let days: Vec<&str> = newest["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["date"].as_str().unwrap())
        .collect();
    assert!(days.windows(2).all(|w| w[0] >= w[1]));
    let mut last_days: Vec<String> = labels.transactions.iter().map(|r| r.date.clone()).collect();
    last_days.sort();
    assert_eq!(days[0], last_days.last().unwrap());

    let nothing = call(&tools, "search_transactions", json!({"query": "rentmart"})).await;
    assert_eq!(nothing, json!({"count": 0, "transactions": []}));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_budget_is_set_on_a_ledger_without_its_chart_yet(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let owner_pool = owner_pool(options, connect.clone()).await;
    let owner = common::new_user(&owner_pool).await;
    let tools = registry(&Scope::new(owner, app_pool(&connect).await));
    // Nothing spent in a ledger of no currency yet: no total, rather than zero in a guessed one.
    let report = call(&tools, "get_spend_report", json!({"period": "2025-03"})).await;
    assert_eq!(report["total"], Value::Null, "{report}");
    // A new ledger has no home currency: a budget without one is refused, never given a guess.
    let unsaid = tools
        .call(
            "set_budget",
            json!({"category": "Groceries", "month": "2025-03", "amount_minor": 1_000_000}),
        )
        .await
        .unwrap_err();
    assert!(
        unsaid.to_string().contains("say which currency the budget is in"),
        "{unsaid}"
    );
    // Said, the write makes the chart first (no accounts yet).
    let set = call(
        &tools,
        "set_budget",
        json!({"category": "Groceries", "month": "2025-03", "amount_minor": 1_000_000, "currency": "INR"}),
    )
    .await;
    assert_eq!(set["formatted"], "₹10,000.00");
    let accounts: i64 = sqlx::query_scalar("SELECT count(*) FROM accounts WHERE owner_id = $1")
        .bind(owner.as_uuid())
        .fetch_one(&owner_pool)
        .await
        .unwrap();
    assert!(accounts > 10, "the chart was made: {accounts} accounts");
    // Set again, the budget is replaced in one statement, now that the account is there.
    call(
        &tools,
        "set_budget",
        json!({"category": "Groceries", "month": "2025-03", "amount_minor": 3_000_000, "currency": "INR"}),
    )
    .await;
    let budgets: Vec<(String, i64)> = sqlx::query_as(
        "SELECT a.name, b.amount_minor FROM budgets b JOIN accounts a ON a.id = b.account_id WHERE b.owner_id = $1",
    )
    .bind(owner.as_uuid())
    .fetch_all(&owner_pool)
    .await
    .unwrap();
    assert_eq!(budgets, vec![("Groceries".to_owned(), 3_000_000)]);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn budgets_are_set_and_checked(options: PgPoolOptions, connect: PgConnectOptions) {
    let (owner_pool, tools) = seeded(options, connect).await;
    let labels = labels();

    let empty = call(&tools, "get_budget_status", json!({"month": "2025-03"})).await;
    assert!(empty["note"].as_str().unwrap().contains("No budgets"));

    let set = call(
        &tools,
        "set_budget",
        json!({"category": "Groceries", "month": "2025-03", "amount_minor": 1_000_000}),
    )
    .await;
    assert_eq!(set["formatted"], "₹10,000.00");
    call(
        &tools,
        "set_budget",
        json!({"category": "Groceries", "month": "2025-03", "amount_minor": 2_000_000}),
    )
    .await;
    let budgets: i64 = sqlx::query_scalar("SELECT count(*) FROM budgets")
        .fetch_one(&owner_pool)
        .await
        .unwrap();
    assert_eq!(budgets, 1, "setting a budget again replaces it");

    let status = call(&tools, "get_budget_status", json!({"month": "2025-03"})).await;
    assert!(status.get("note").is_none());
    let actual: i64 = labels
        .transactions
        .iter()
        .filter(|r| r.month() == "2025-03" && r.ledger_category() == "Groceries")
        .map(|r| -r.amount_minor)
        .sum();
    let groceries = &status["categories"][0];
    assert_eq!(groceries["category"], "Groceries");
    assert_eq!(groceries["actual"]["amount_minor"], actual);
    assert_eq!(groceries["budget"]["amount_minor"], 2_000_000);
    assert_eq!(groceries["remaining"]["amount_minor"], 2_000_000 - actual);
    assert_eq!(groceries["over_budget"], actual > 2_000_000);
    assert_eq!(groceries["percent_used"], json!(116.8));

    let listed: BTreeSet<String> = status["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["category"].as_str().unwrap().to_owned())
        .collect();
    let spent: BTreeSet<String> = labels
        .transactions
        .iter()
        .filter(|r| r.month() == "2025-03" && !INCOME.contains(&r.ledger_category()))
        .map(|r| r.ledger_category().to_owned())
        .collect();
    assert_eq!(
        listed, spent,
        "every category with spending is listed, budgeted or not"
    );
}

/// The grouping key, written here from its definition (not the code under test).
fn key_of(description: &str) -> String {
    let letters: String = description
        .to_uppercase()
        .chars()
        .map(|c| if c.is_alphabetic() { c } else { ' ' })
        .collect();
    letters
        .split(' ')
        .filter(|w| w.chars().count() > 2)
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn recurring_finds_the_labelled_merchants(options: PgPoolOptions, connect: PgConnectOptions) {
    let (_, tools) = seeded(options, connect).await;
    let labels = labels();
    let out = call(&tools, "detect_recurring", json!({})).await;
    let found: BTreeMap<String, &Value> = out["merchants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["merchant"].as_str().unwrap().to_owned(), m))
        .collect();

    for expected in &labels.recurring {
        let key = key_of(&expected.merchant);
        let merchant = found
            .get(&key)
            .unwrap_or_else(|| panic!("{} ({key}) not found in {:?}", expected.merchant, found.keys()));
        assert_eq!(merchant["cadence"], expected.cadence.as_str(), "{key}");
        assert_eq!(merchant["occurrences"], expected.occurrences, "{key}");
        assert_eq!(merchant["category"], expected.category.as_str(), "{key}");
        let amounts: Vec<i64> = labels
            .transactions
            .iter()
            .filter(|r| key_of(&r.description) == key)
            .map(|r| r.amount_minor)
            .collect();
        let sum: i64 = amounts.iter().sum();
        let mean = (sum as f64 / amounts.len() as f64).round() as i64;
        assert_eq!(merchant["amount_minor"], mean, "{key}");
    }
    // Beyond the planted ones, exactly what the rule finds in the data: recomputed here from its
    // definition (groups of 3+, every gap within max(4, 0.4 × median) of the median, a cadence band).
    let mut groups: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for row in &labels.transactions {
        groups.entry(key_of(&row.description)).or_default().push(row);
    }
    let day = |r: &Row| chrono::NaiveDate::parse_from_str(&r.date, "%Y-%m-%d").unwrap();
    let regular: BTreeMap<String, Vec<&Row>> = groups
        .into_iter()
        .filter(|(_, rows)| rows.len() >= 3)
        .filter(|(_, rows)| {
            let mut gaps: Vec<f64> = rows
                .windows(2)
                .map(|w| (day(w[1]) - day(w[0])).num_days() as f64)
                .collect();
            gaps.sort_by(f64::total_cmp);
            let n = gaps.len();
            let median = if n % 2 == 1 {
                gaps[n / 2]
            } else {
                f64::midpoint(gaps[n / 2 - 1], gaps[n / 2])
            };
            let banded = [
                (5.0, 9.0),
                (12.0, 17.0),
                (26.0, 35.0),
                (85.0, 97.0),
                (350.0, 380.0),
            ]
            .iter()
            .any(|(lo, hi)| median >= *lo && median <= *hi);
            banded && gaps.iter().all(|g| (g - median).abs() <= (0.4 * median).max(4.0))
        })
        .collect();
    assert_eq!(
        found.keys().cloned().collect::<BTreeSet<_>>(),
        regular.keys().cloned().collect()
    );

    // What the recurring spending (not income) costs a month: all found are monthly here.
    let commitment: i64 = regular
        .values()
        .filter(|rows| !rows.iter().any(|r| INCOME.contains(&r.category.as_str())))
        .map(|rows| {
            -(rows.iter().map(|r| r.amount_minor).sum::<i64>() as f64 / rows.len() as f64).round() as i64
        })
        .filter(|spend| *spend > 0)
        .sum();
    assert_eq!(out["monthly_commitment"][0]["amount_minor"], commitment);
    assert_eq!(out["monthly_commitment"].as_array().unwrap().len(), 1);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn anomalies_match_the_labelled_ones(options: PgPoolOptions, connect: PgConnectOptions) {
    let (_, tools) = seeded(options, connect).await;
    let labels = labels();
    let by_line: BTreeMap<usize, &Row> = labels.transactions.iter().map(|r| (r.line, r)).collect();
    let mut flagged = BTreeSet::new();
    for month in ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"] {
        let out = call(&tools, "flag_anomalies", json!({"month": month})).await;
        assert_eq!(out["count"], out["anomalies"].as_array().unwrap().len());
        if out["count"] == 0 {
            assert!(out["note"].as_str().unwrap().contains("Nothing unusual"));
        }
        for a in out["anomalies"].as_array().unwrap() {
            flagged.insert((
                a["date"].as_str().unwrap().to_owned(),
                a["description"].as_str().unwrap().to_owned(),
                a["kind"].as_str().unwrap().to_owned(),
            ));
        }
    }
    let planted: BTreeSet<(String, String, String)> = labels
        .anomalies
        .iter()
        .map(|a| {
            let row = by_line[&a.line];
            (row.date.clone(), row.description.clone(), a.kind.clone())
        })
        .collect();
    assert!(
        planted.is_subset(&flagged),
        "every planted anomaly is found: {planted:?} in {flagged:?}"
    );
    assert_eq!(
        flagged,
        recompute_anomalies(&labels.transactions),
        "and exactly what the rule finds in the data"
    );
    let may = call(&tools, "flag_anomalies", json!({"month": "2025-05"})).await;
    let duplicate = may["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "duplicate")
        .unwrap();
    assert_eq!(duplicate["detail"], "2 identical charges on 2025-05-14");
}

/// The anomaly rule, recomputed here from its definition over the ground truth: per expense
/// category (not Uncategorized) the six months before the month make the normal (5+ charges, mean
/// and population deviation); |z| > 2.5 above is an outlier, below and negative a refund; and
/// every copy after the first of a same-day, same-amount, same-text charge is a duplicate.
fn recompute_anomalies(rows: &[Row]) -> BTreeSet<(String, String, String)> {
    let month_index =
        |r: &Row| r.date[..4].parse::<i32>().unwrap() * 12 + r.date[5..7].parse::<i32>().unwrap();
    let mut out = BTreeSet::new();
    for month in ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"] {
        let m = month[..4].parse::<i32>().unwrap() * 12 + month[5..7].parse::<i32>().unwrap();
        let judged =
            |r: &&Row| !INCOME.contains(&r.ledger_category()) && r.ledger_category() != "Uncategorized";
        for row in rows.iter().filter(|r| r.month() == month).filter(judged) {
            let window: Vec<f64> = rows
                .iter()
                .filter(judged)
                .filter(|r| {
                    r.ledger_category() == row.ledger_category() && (m - 6..m).contains(&month_index(r))
                })
                .map(|r| -r.amount_minor as f64)
                .collect();
            if window.len() < 5 {
                continue;
            }
            let mean = window.iter().sum::<f64>() / window.len() as f64;
            let sd = (window.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / window.len() as f64).sqrt();
            let spend = -row.amount_minor as f64;
            if sd == 0.0 || ((spend - mean) / sd).abs() <= 2.5 {
                continue;
            }
            if spend > mean {
                out.insert((row.date.clone(), row.description.clone(), "outlier".to_owned()));
            } else if spend < 0.0 {
                out.insert((row.date.clone(), row.description.clone(), "refund".to_owned()));
            }
        }
        let mut seen = BTreeSet::new();
        for row in rows.iter().filter(|r| r.month() == month) {
            if !seen.insert((row.date.clone(), row.amount_minor, row.description.clone())) {
                out.insert((row.date.clone(), row.description.clone(), "duplicate".to_owned()));
            }
        }
    }
    out
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn accounts_and_conversion_match_the_ground_truth(options: PgPoolOptions, connect: PgConnectOptions) {
    let (_, tools) = seeded(options, connect).await;
    let labels = labels();
    let out = call(&tools, "list_accounts", json!({})).await;
    let balances: BTreeMap<String, (i64, i64)> = out["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_owned(),
                (
                    // A category with no postings shows no balance: it holds no currency of its own.
                    a["amount_minor"].as_i64().unwrap_or_else(|| {
                        assert_eq!(a["postings"], 0, "{a}");
                        assert!(a.get("currency").is_none(), "{a}");
                        0
                    }),
                    a["postings"].as_i64().unwrap(),
                ),
            )
        })
        .collect();
    let checking: i64 = labels.transactions.iter().map(|r| r.amount_minor).sum();
    assert_eq!(balances["Checking"], (checking, 352));
    for (name, (balance, postings)) in &balances {
        if name == "Checking" {
            continue;
        }
        let rows: Vec<&Row> = labels
            .transactions
            .iter()
            .filter(|r| r.ledger_category() == name)
            .collect();
        assert_eq!(
            *balance,
            -rows.iter().map(|r| r.amount_minor).sum::<i64>(),
            "{name}"
        );
        assert_eq!(*postings, rows.len() as i64, "{name}");
    }
    assert_eq!(balances.len(), 19, "the whole chart is listed");

    let rates: Value = serde_json::from_str(
        &std::fs::read_to_string(kakeibo_testkit::workspace_root().join("seed/rates.json")).unwrap(),
    )
    .unwrap();
    let out = call(
        &tools,
        "convert_currency",
        json!({"amount_minor": 2_335_000, "from": "INR", "to": "USD"}),
    )
    .await;
    // 23,350 rupees × USD per rupee, to cents.
    let usd = rates["rates"]["USD"].to_string();
    let (whole, fraction) = usd.split_once('.').unwrap();
    let per_million: i64 = format!("{whole}{fraction:0<6}").parse().unwrap();
    let cents = (2_335_000_i64 * per_million + 500_000) / 1_000_000;
    assert_eq!(out["to"]["amount_minor"], cents);
    assert_eq!(out["as_of"], rates["asOf"]);
    assert_eq!(
        out["rate"],
        usd.chars()
            .chain(std::iter::repeat('0'))
            .take(8)
            .collect::<String>()
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn categorising_repoints_postings_and_moves_no_money(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (owner_pool, tools) = seeded(options, connect).await;
    let checking_before = call(&tools, "list_accounts", json!({})).await;
    let uncategorised = call(
        &tools,
        "search_transactions",
        json!({"account": "Uncategorized", "limit": 200}),
    )
    .await;
    let ids: Vec<&str> = uncategorised["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .take(3)
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(uncategorised["count"], 28);

    let out = call(
        &tools,
        "categorize_transactions",
        json!({"transaction_ids": ids, "category": "Shopping"}),
    )
    .await;
    assert_eq!(out["updated"], 3);
    assert_eq!(out["skipped"], json!([]));
    let again = call(
        &tools,
        "categorize_transactions",
        json!({"transaction_ids": [ids[0], "6f1e0c5a-0000-4000-8000-000000000000"], "category": "Shopping"}),
    )
    .await;
    assert_eq!(again["updated"], 0);
    let reasons: Vec<&str> = again["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["already in that category", "no such transaction"]);

    let left = call(
        &tools,
        "search_transactions",
        json!({"account": "Uncategorized", "limit": 200}),
    )
    .await;
    assert_eq!(left["count"], 25);
    let after = call(&tools, "list_accounts", json!({})).await;
    let checking = |v: &Value| {
        v["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "Checking")
            .unwrap()
            .clone()
    };
    assert_eq!(checking(&checking_before), checking(&after), "no money moved");
    let unbalanced: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT transaction_id FROM postings GROUP BY 1 HAVING sum(amount_minor) <> 0) t",
    )
    .fetch_one(&owner_pool)
    .await
    .unwrap();
    assert_eq!(unbalanced, 0);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn rules_and_memories_are_written_once(options: PgPoolOptions, connect: PgConnectOptions) {
    let (owner_pool, tools) = seeded(options, connect).await;
    let rule = call(
        &tools,
        "set_category_rule",
        json!({"pattern": "  SWIGGY ", "category": "Dining"}),
    )
    .await;
    assert_eq!(
        (rule["pattern"].as_str(), rule["priority"].as_i64()),
        (Some("SWIGGY"), Some(100))
    );
    assert!(rule["note"].as_str().unwrap().contains("future imports"));

    let first = call(
        &tools,
        "memory_save",
        json!({"content": "Salary arrives on the 1st", "category": "income"}),
    )
    .await;
    let second = call(
        &tools,
        "memory_save",
        json!({"content": "Salary arrives on the 1st", "category": "income"}),
    )
    .await;
    assert_eq!(first["id"], second["id"]);
    let memories: i64 = sqlx::query_scalar("SELECT count(*) FROM memories WHERE source = 'user_stated'")
        .fetch_one(&owner_pool)
        .await
        .unwrap();
    assert_eq!(memories, 1);

    let summary = tools.get("set_budget").unwrap().summarize(
        &json!({"category": "Dining", "month": "2025-04", "amount_minor": 1_500_000, "currency": "INR"}),
    );
    assert_eq!(
        summary.as_deref(),
        Some("Set the Dining budget for 2025-04 to ₹15,000.00")
    );
    // Without a currency the budget is in the home currency, which the confirmation says.
    let summary = tools
        .get("set_budget")
        .unwrap()
        .summarize(&json!({"category": "Dining", "month": "2025-04", "amount_minor": 1_500_005}));
    assert_eq!(
        summary.as_deref(),
        Some("Set the Dining budget for 2025-04 to 15000.05 in your home currency")
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn bad_arguments_are_listed_and_change_nothing(options: PgPoolOptions, connect: PgConnectOptions) {
    let (owner_pool, tools) = seeded(options, connect).await;
    let cases = [
        (
            "set_budget",
            json!({"category": "Salary", "month": "2025-13", "amount_minor": -5}),
            2,
        ),
        ("set_budget", json!({"category": "Snacks", "month": "2025-03"}), 2),
        (
            "search_transactions",
            json!({"from": "2025-03-31", "to": "2025-03-01"}),
            1,
        ),
        (
            "search_transactions",
            json!({"limit": 500, "min_minor": "ten"}),
            2,
        ),
        ("get_spend_report", json!({"period": "March"}), 1),
        (
            "categorize_transactions",
            json!({"transaction_ids": [], "category": "Dining"}),
            1,
        ),
        ("memory_save", json!({"content": "  ", "category": ""}), 1),
        (
            "convert_currency",
            json!({"amount_minor": 1, "from": "INR", "to": "BTC"}),
            1,
        ),
    ];
    for (name, input, at_least) in cases {
        let err = tools.call(name, input.clone()).await.unwrap_err();
        let CallError::Tool(ToolError::InvalidInput(problems)) = &err else {
            panic!("{name}({input}): {err:?}")
        };
        assert!(problems.len() >= at_least, "{name}({input}): {problems:?}");
    }
    for table in ["budgets", "memories", "rules"] {
        let sql = format!("SELECT count(*) FROM {table}");
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(&owner_pool)
            .await
            .unwrap();
        assert_eq!(n, 0, "{table} untouched");
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn declarations_are_restricted_and_byte_stable(pool: PgPool) {
    let a = registry(&Scope::new(DEV_OWNER, pool.clone()));
    let b = registry(&Scope::new(
        kakeibo_ledger::OwnerId::new(uuid::Uuid::from_u128(9)),
        pool,
    ));
    assert_eq!(
        a.declarations_json(),
        b.declarations_json(),
        "same bytes for every owner"
    );
    let parsed: Value = serde_json::from_str(a.declarations_json()).unwrap();
    let names: Vec<&str> = parsed
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    for declaration in parsed.as_array().unwrap() {
        assert_eq!(
            schema::forbidden_keywords(&declaration["parameters"]),
            Vec::<String>::new(),
            "{}",
            declaration["name"]
        );
        assert!(
            declaration["description"].as_str().unwrap().len() > 60,
            "{} says when to use it",
            declaration["name"]
        );
    }
    // The declarations of another build and process: the committed snapshot.
    let snapshot = kakeibo_testkit::workspace_root().join("crates/tools/tests/snapshots/declarations.json");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&snapshot, a.declarations_json()).unwrap();
    }
    let committed = std::fs::read_to_string(&snapshot).unwrap();
    assert!(
        committed == a.declarations_json(),
        "declarations changed: rerun with UPDATE_SNAPSHOTS=1 and review the diff"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn reads_in_a_snapshot_see_one_ledger(options: PgPoolOptions, connect: PgConnectOptions) {
    let (_owner_pool, tools) = seeded(options, connect.clone()).await;
    let app = app_pool(&connect).await;
    let status = |tools: &ToolRegistry| {
        let tools = tools.clone();
        async move {
            let status = call(&tools, "get_budget_status", json!({"month": "2025-04"})).await;
            status["categories"]
                .as_array()
                .map_or(0, |c| c.iter().filter(|c| !c["budget"].is_null()).count())
        }
    };
    assert_eq!(status(&tools).await, 0);
    let (before, during) = kakeibo_tools::in_snapshot(DEV_OWNER, &app, async {
        let before = status(&tools).await;
        // A write inside runs in a transaction of its own, and commits.
        call(
            &tools,
            "set_budget",
            json!({"category": "Dining", "month": "2025-04", "amount_minor": 1_500_000}),
        )
        .await;
        (before, status(&tools).await)
    })
    .await;
    assert_eq!(
        (before, during),
        (0, 0),
        "the reads inside saw the ledger as it was at the start"
    );
    assert_eq!(
        status(&tools).await,
        1,
        "a read after the snapshot sees the write"
    );
}
