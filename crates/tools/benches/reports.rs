//! Each report tool on a generated ledger of 1,000,000 postings, beside the single hand-written
//! aggregate SQL that gives the same numbers, measured in the same run; the answers are compared
//! and must agree.
//!
//! The ledger: 500,000 transactions over seven years for one owner, two postings each, through
//! the one insert path — daily purchases at merchants of every spending category, a monthly
//! rent, subscription and salary, a weekly gym, budgets for the month looked at, and in that
//! month an outlier, a refund and a charge made twice. The reports: spending by category for a
//! month, spending by month over all seven years, budget status, recurring payments, anomalies.
//!
//! `cargo xtask bench` runs it; by hand: `DATABASE_URL=… cargo bench -p kakeibo-tools --bench
//! reports`. `BENCH_TRANSACTIONS` sets the size (default 500,000), `BENCH_REPEATS` the runs of
//! each (default 5, the median is reported).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::too_many_lines
)] // A benchmark.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use chrono::{Days, NaiveDate};
use kakeibo_bench::{Figure, Report, scratch, setting};
use kakeibo_ledger::{
    Currency, DEV_OWNER, MIGRATOR, NewPosting, NewTransaction, begin_for_owner, ensure_chart,
    insert_transactions,
};
use kakeibo_tools::{Scope, registry};
use serde_json::{Value, json};
use sqlx::PgPool;

/// The month the month-scoped reports look at.
const MONTH: &str = "2025-06";
const FIRST_DAY: (i32, u32, u32) = (2019, 1, 1);
const DAYS: u64 = 7 * 365;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// One booked row: (date, description, asset amount, category).
type Row = (NaiveDate, String, i64, &'static str);

const SPENDING: [&str; 11] = [
    "Groceries",
    "Dining",
    "Transport",
    "Utilities",
    "Shopping",
    "Health",
    "Entertainment",
    "Travel",
    "Fees",
    "Subscriptions",
    "Rent",
];
const SHOPS: [&str; 3] = ["MART", "HUB", "POINT"];

/// The ledger's rows, deterministic.
fn rows(count: usize) -> Vec<Row> {
    let start = date(FIRST_DAY.0, FIRST_DAY.1, FIRST_DAY.2);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut rows: Vec<Row> = Vec::with_capacity(count);
    let mut month = start;
    while month < start + Days::new(DAYS) {
        rows.push((month, "RENT PAYMENT HOUSING".into(), -2_500_000, "Rent"));
        rows.push((
            month + Days::new(4),
            "NETFLIX SUBSCRIPTION".into(),
            -64_900,
            "Subscriptions",
        ));
        rows.push((
            month + Days::new(27),
            "SALARY CREDIT ACME".into(),
            15_000_000,
            "Salary",
        ));
        month = month.checked_add_months(chrono::Months::new(1)).unwrap();
    }
    let mut week = start + Days::new(2);
    while week < start + Days::new(DAYS) {
        rows.push((week, "GYM MEMBERSHIP FEE".into(), -150_000, "Health"));
        week = week + Days::new(7);
    }
    // The month looked at: a charge far from its category's usual, money back, a double charge.
    let (y, m) = (2025, 6);
    rows.push((
        date(y, m, 10),
        "GROCERIES MART 900001".into(),
        -9_000_000,
        "Groceries",
    ));
    rows.push((
        date(y, m, 12),
        "DINING HUB REFUND 900002".into(),
        4_000_000,
        "Dining",
    ));
    for _ in 0..2 {
        rows.push((
            date(y, m, 15),
            "SHOPPING POINT 900003".into(),
            -123_400,
            "Shopping",
        ));
    }
    let purchases = count.saturating_sub(rows.len());
    for i in 0..purchases {
        let day = start + Days::new((i as u64 * DAYS) / purchases as u64);
        let category = SPENDING[rng.below(9) as usize];
        let shop = SHOPS[rng.below(3) as usize];
        let amount = 5_000 + rng.below(495_000).cast_signed();
        rows.push((
            day,
            format!("{} {shop} {:06}", category.to_uppercase(), rng.below(1_000_000)),
            -amount,
            category,
        ));
    }
    rows
}

async fn load(pool: &PgPool, count: usize) {
    sqlx::query("INSERT INTO users (id) VALUES ($1) ON CONFLICT DO NOTHING")
        .bind(DEV_OWNER.as_uuid())
        .execute(pool)
        .await
        .unwrap();
    let mut tx = begin_for_owner(DEV_OWNER, pool).await.unwrap();
    let chart = ensure_chart(DEV_OWNER, &mut tx, Some(Currency::INR))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let id = |name: &str| chart.iter().find(|a| a.name == name).unwrap().id;
    let checking = id(kakeibo_ledger::CHECKING);
    let rows = rows(count);
    let started = Instant::now();
    for (n, chunk) in rows.chunks(10_000).enumerate() {
        let news: Vec<NewTransaction> = chunk
            .iter()
            .map(|(date, description, amount, category)| NewTransaction {
                id: None,
                date: *date,
                description: description.clone(),
                raw_description: description.clone(),
                import_batch_id: None,
                source_hash: None,
                postings: vec![
                    NewPosting {
                        account_id: checking,
                        amount_minor: *amount,
                        currency: Currency::INR,
                    },
                    NewPosting {
                        account_id: id(category),
                        amount_minor: -*amount,
                        currency: Currency::INR,
                    },
                ],
            })
            .collect();
        let mut tx = begin_for_owner(DEV_OWNER, pool).await.unwrap();
        insert_transactions(DEV_OWNER, &mut tx, &news).await.unwrap();
        tx.commit().await.unwrap();
        if n % 10 == 9 {
            println!(
                "  loaded {} of {} transactions ({:.0} s)",
                (n + 1) * 10_000,
                rows.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    for (category, budget) in [
        ("Groceries", 4_000_000),
        ("Dining", 1_500_000),
        ("Travel", 500_000),
    ] {
        sqlx::query(
            "INSERT INTO budgets (owner_id, account_id, month, amount_minor, currency) VALUES ($1, $2, $3, $4, 'INR')",
        )
        .bind(DEV_OWNER.as_uuid())
        .bind(id(category))
        .bind(MONTH)
        .bind(budget)
        .execute(pool)
        .await
        .unwrap();
    }
    sqlx::query("ANALYZE transactions, postings, accounts, budgets")
        .execute(pool)
        .await
        .unwrap();
}

/// The median of `repeats` runs of `work`, and its last answer.
async fn timed<T, F, Fut>(repeats: usize, mut work: F) -> (Duration, T)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut times = Vec::with_capacity(repeats);
    let mut last = None;
    for _ in 0..repeats {
        let started = Instant::now();
        last = Some(work().await);
        times.push(started.elapsed());
    }
    times.sort();
    (times[times.len() / 2], last.unwrap())
}

/// Per transaction of `owner`: its date, description, category (the first expense or income
/// account, Uncategorized last), the category's type, and the money (asset and liability
/// postings summed) — what the tools' transaction view gives, as one grouped scan.
const VIEW: &str = "SELECT t.id, t.date, t.created_at, t.description,
        coalesce((array_agg(a.name ORDER BY a.name = 'Uncategorized', a.name)
                  FILTER (WHERE a.type IN ('expense', 'income')))[1], 'Uncategorized') AS category,
        (array_agg(a.type::text ORDER BY a.name = 'Uncategorized', a.name)
                  FILTER (WHERE a.type IN ('expense', 'income')))[1] AS category_type,
        coalesce(sum(p.amount_minor) FILTER (WHERE a.type IN ('asset', 'liability')), 0)::bigint AS amount
    FROM transactions t
    JOIN postings p ON p.transaction_id = t.id AND p.owner_id = t.owner_id
    JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
    WHERE t.owner_id = $1 AND t.date BETWEEN $2 AND $3
    GROUP BY t.id";

/// Spending per group (category or month): (transactions, amount).
const SPEND_SQL: &str =
    "SELECT CASE WHEN $4 THEN to_char(t.date, 'YYYY-MM') ELSE a.name END, count(DISTINCT t.id),
        sum(p.amount_minor)::bigint
    FROM postings p
    JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
    JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
    WHERE p.owner_id = $1 AND t.date BETWEEN $2 AND $3 AND a.type = 'expense'
      AND NOT (a.name = 'Uncategorized' AND p.amount_minor < 0)
    GROUP BY 1";

const BUDGET_SQL: &str = "SELECT a.name, b.amount_minor, coalesce(sum(p.amount_minor), 0)::bigint
    FROM accounts a
    LEFT JOIN budgets b ON b.account_id = a.id AND b.owner_id = a.owner_id AND b.month = $4
    LEFT JOIN (postings p JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
                                              AND t.date BETWEEN $2 AND $3)
           ON p.account_id = a.id AND p.owner_id = a.owner_id
    WHERE a.owner_id = $1 AND a.type = 'expense'
    GROUP BY a.name, b.amount_minor
    HAVING b.amount_minor IS NOT NULL OR count(p.id) > 0";

fn recurring_sql() -> String {
    format!(
        "WITH v AS ({VIEW}),
         keyed AS (
             SELECT v.*, (SELECT string_agg(w, ' ' ORDER BY n) FROM (
                     SELECT w, n FROM regexp_split_to_table(
                         regexp_replace(upper(v.description), '[^[:alpha:]]', ' ', 'g'), '\\s+')
                         WITH ORDINALITY AS s(w, n)
                     WHERE length(w) > 2 ORDER BY n LIMIT 3) words) AS merchant
             FROM v),
         gaps AS (
             SELECT merchant, category, category_type, amount, date,
                    (date - lag(date) OVER (PARTITION BY merchant ORDER BY date, created_at, id))::float8 AS gap
             FROM keyed WHERE merchant <> ''),
         groups AS (
             SELECT merchant, count(*) AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY gap) AS median,
                    min(gap) AS low, max(gap) AS high, round(avg(amount))::bigint AS average,
                    bool_or(category_type = 'income') AS income,
                    mode() WITHIN GROUP (ORDER BY category) FILTER (WHERE category <> 'Uncategorized') AS category
             FROM gaps GROUP BY merchant HAVING count(*) >= $4)
         SELECT merchant, n, average, income,
                CASE WHEN median BETWEEN 5 AND 9 THEN 'weekly' WHEN median BETWEEN 12 AND 17 THEN 'fortnightly'
                     WHEN median BETWEEN 26 AND 35 THEN 'monthly' WHEN median BETWEEN 85 AND 97 THEN 'quarterly'
                     WHEN median BETWEEN 350 AND 380 THEN 'annual' END AS cadence
         FROM groups
         WHERE greatest(high - median, median - low) <= greatest(0.4 * median, 4)"
    )
}

fn anomalies_sql() -> String {
    format!(
        "WITH v AS ({VIEW}),
         judged AS (SELECT * FROM v WHERE category_type = 'expense' AND category <> 'Uncategorized'),
         normals AS (
             SELECT category, avg(-amount::float8) AS mean, stddev_pop(-amount::float8) AS sd
             FROM judged WHERE date < $4 GROUP BY category HAVING count(*) >= 5),
         scored AS (
             SELECT j.date, j.description, j.amount, (-j.amount - n.mean) / n.sd AS z
             FROM judged j JOIN normals n USING (category) WHERE j.date >= $4 AND n.sd <> 0)
         SELECT date, description, CASE WHEN z > 0 THEN 'outlier' ELSE 'refund' END FROM scored
         WHERE abs(z) > 2.5 AND (z > 0 OR amount > 0)
         UNION ALL
         SELECT date, description, 'duplicate' FROM (
             SELECT date, description, row_number() OVER (PARTITION BY date, amount, description) AS copy
             FROM v WHERE date >= $4) d
         WHERE copy > 1"
    )
}

/// `(group → (transactions, amount))` of a spend report's spending groups.
fn spend_groups(report: &Value) -> BTreeMap<String, (i64, i64)> {
    report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kind"] == "spending")
        .map(|g| {
            (
                g["group"].as_str().unwrap().to_owned(),
                (
                    g["transactions"].as_i64().unwrap(),
                    g["amount_minor"].as_i64().unwrap(),
                ),
            )
        })
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let count = setting("BENCH_TRANSACTIONS", 500_000);
    let repeats = setting("BENCH_REPEATS", 5);
    let scratch = scratch::create("reports", kakeibo_ledger::pool_options(2), &MIGRATOR).await;
    let pool = scratch.pool.clone();
    println!(
        "loading a ledger of {count} transactions ({} postings)…",
        2 * count
    );
    load(&pool, count).await;
    let postings: i64 = sqlx::query_scalar("SELECT count(*) FROM postings")
        .fetch_one(&pool)
        .await
        .unwrap();
    let tools = registry(&Scope::new(DEV_OWNER, pool.clone()));
    let call = |name: &'static str, input: Value| {
        let tools = tools.clone();
        async move { tools.call(name, input).await.unwrap() }
    };
    let owner = DEV_OWNER.as_uuid();
    let (first, last) = (date(2025, 6, 1), date(2025, 6, 30));
    let (all_from, all_to) = (date(FIRST_DAY.0, FIRST_DAY.1, FIRST_DAY.2), date(2026, 12, 31));
    let window_from = date(2024, 12, 1);

    let mut report = Report::new(
        "reports",
        &format!("The report tools on a ledger of {postings} postings, beside one hand-written SQL each"),
        "cargo bench -p kakeibo-tools --bench reports",
    );
    let mut compare = |name: &str, tool: Duration, sql: Duration| {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        report.push(
            Figure::new(name, ms(tool), "ms")
                .against("its hand-written SQL", ms(sql))
                .at_most(1.5),
        );
    };

    // Spending by category for the month, and by month over all seven years.
    let month_input = json!({"period": MONTH});
    let years_input =
        json!({"period": {"from": all_from.to_string(), "to": all_to.to_string()}, "group_by": "month"});
    for (name, input, (from, to), by_month) in [
        ("spend by category (a month)", month_input, (first, last), false),
        (
            "spend by month (seven years)",
            years_input,
            (all_from, all_to),
            true,
        ),
    ] {
        let (tool_time, answer) = timed(repeats, || call("get_spend_report", input.clone())).await;
        let (sql_time, rows) = timed(repeats, || {
            sqlx::query_as::<_, (String, i64, i64)>(SPEND_SQL)
                .bind(owner)
                .bind(from)
                .bind(to)
                .bind(by_month)
                .fetch_all(&pool)
        })
        .await;
        let expected: BTreeMap<String, (i64, i64)> =
            rows.unwrap().into_iter().map(|(g, n, a)| (g, (n, a))).collect();
        assert_eq!(spend_groups(&answer), expected, "{name}");
        compare(name, tool_time, sql_time);
    }

    // Budget status for the month.
    let (tool_time, answer) = timed(repeats, || call("get_budget_status", json!({"month": MONTH}))).await;
    let (sql_time, rows) = timed(repeats, || {
        sqlx::query_as::<_, (String, Option<i64>, i64)>(BUDGET_SQL)
            .bind(owner)
            .bind(first)
            .bind(last)
            .bind(MONTH)
            .fetch_all(&pool)
    })
    .await;
    let got: BTreeMap<String, (Option<i64>, i64)> = answer["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["category"].as_str().unwrap().to_owned(),
                (
                    c["budget"]["amount_minor"].as_i64(),
                    c["actual"]["amount_minor"].as_i64().unwrap(),
                ),
            )
        })
        .collect();
    let expected: BTreeMap<String, (Option<i64>, i64)> =
        rows.unwrap().into_iter().map(|(c, b, a)| (c, (b, a))).collect();
    assert_eq!(got, expected, "budget status");
    compare("budget status (a month)", tool_time, sql_time);

    // Recurring payments over everything.
    let (tool_time, answer) = timed(repeats, || call("detect_recurring", json!({}))).await;
    let sql = recurring_sql();
    let (sql_time, rows) = timed(repeats, || {
        sqlx::query_as::<_, (String, i64, i64, bool, Option<String>)>(sqlx::AssertSqlSafe(sql.clone()))
            .bind(owner)
            .bind(all_from)
            .bind(all_to)
            .bind(3_i64)
            .fetch_all(&pool)
    })
    .await;
    let got: BTreeMap<String, (String, i64, i64)> = answer["merchants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["merchant"].as_str().unwrap().to_owned(),
                (
                    m["cadence"].as_str().unwrap().to_owned(),
                    m["occurrences"].as_i64().unwrap(),
                    m["amount_minor"].as_i64().unwrap(),
                ),
            )
        })
        .collect();
    let expected: BTreeMap<String, (String, i64, i64)> = rows
        .unwrap()
        .into_iter()
        .filter_map(|(merchant, n, average, _, cadence)| Some((merchant, (cadence?, n, average))))
        .collect();
    assert_eq!(got, expected, "recurring payments");
    assert!(
        got.len() >= 4,
        "the generated ledger's four recurring payments are found: {got:?}"
    );
    compare("recurring payments (everything)", tool_time, sql_time);

    // Anomalies of the month, against the six months before.
    let (tool_time, answer) = timed(repeats, || call("flag_anomalies", json!({"month": MONTH}))).await;
    let sql = anomalies_sql();
    let (sql_time, rows) = timed(repeats, || {
        sqlx::query_as::<_, (NaiveDate, String, String)>(sqlx::AssertSqlSafe(sql.clone()))
            .bind(owner)
            .bind(window_from)
            .bind(last)
            .bind(first)
            .fetch_all(&pool)
    })
    .await;
    let mut got: Vec<(String, String, String)> = answer["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["date"].as_str().unwrap().to_owned(),
                a["description"].as_str().unwrap().to_owned(),
                a["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut expected: Vec<(String, String, String)> = rows
        .unwrap()
        .into_iter()
        .map(|(d, description, kind)| (d.to_string(), description, kind))
        .collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected, "anomalies");
    assert!(
        ["outlier", "refund", "duplicate"]
            .iter()
            .all(|k| got.iter().any(|g| g.2 == *k)),
        "the month's planted outlier, refund and double charge are found: {got:?}"
    );
    compare("anomalies (a month, six months of history)", tool_time, sql_time);
    scratch.drop_database().await;

    report.note(format!(
        "median of {repeats} runs each; the tools run as they do for the agent (an owner-scoped transaction, \
         the output built and serialised); each SQL is one statement through the same pool; the answers \
         were compared and agree"
    ));
    report.note(format!(
        "one owner, {DAYS} days from {}, two postings a transaction; run against a server whose planner \
         costs random reads as fast storage does (migration 0009)",
        date(FIRST_DAY.0, FIRST_DAY.1, FIRST_DAY.2)
    ));
    report.finish();
}
