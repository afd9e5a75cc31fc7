//! Random households: 2–5 accounts of one person, transfers between them whose two sides are
//! dated 0–9 days apart (the window is 5), and noise — spending and deposits of exactly the
//! transfers' amounts. Each account's rows are cut into one to three statements, and every
//! statement is imported in a random order. Whatever the order:
//! - spending and income equal the generated truth (the noise), to the cent;
//! - every transfer row is in exactly one place: one transfer with another row, or in transit;
//! - a transfer joins two different accounts with opposite amounts dated within the window;
//! - nothing is lost or counted twice: the ledger holds every generated row once.
//!
//! The suite runs a few households (`KAKEIBO_HOUSEHOLDS`, default 12); a long run sets more, over
//! several streams at once (`KAKEIBO_HOUSEHOLD_WORKERS`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_possible_wrap)]

use crate::common;

use std::fmt::Write as _;

use chrono::{Days, NaiveDate};
use common::new_user;
use kakeibo_ledger::{
    Currency, OwnerId, begin_for_owner,
    import::{self, ParseOptions, Target},
};
use proptest::{
    prelude::*,
    strategy::ValueTree,
    test_runner::{Config, RngAlgorithm, TestRng, TestRunner},
};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

const WINDOW: u32 = 5;

#[derive(Debug, Clone)]
struct Row {
    account: usize,
    day: u64,
    amount_minor: i64,
    description: String,
}

#[derive(Debug, Clone)]
struct Generated {
    kinds: Vec<&'static str>,
    rows: Vec<Row>,
    /// Each account's statements: the day each one after the first starts on.
    cuts: Vec<Vec<u64>>,
    /// The order the statements are imported in (indices into all statements).
    order_seed: u64,
    spending: i64,
    income: i64,
    transfer_rows: usize,
}

fn household() -> impl Strategy<Value = Generated> {
    (2usize..=5)
        .prop_flat_map(|accounts| {
            (
                Just(accounts),
                prop::collection::vec(
                    prop::sample::select(vec!["checking", "savings", "card"]),
                    accounts,
                ),
                // Transfers: from, to, amount, day, delay.
                prop::collection::vec((0..accounts, 0..accounts, 1i64..4, 0u64..40, 0u64..10), 0..8),
                // Noise: account, which transfer's amount (or a fresh one), day, out or in.
                prop::collection::vec((0..accounts, 0usize..10, 0u64..50, any::<bool>()), 0..12),
                prop::collection::vec(prop::collection::vec(1u64..50, 0..3), accounts),
                any::<u64>(),
            )
        })
        .prop_map(|(_, kinds, transfers, noise, cuts, order_seed)| {
            let mut rows = Vec::new();
            let mut amounts = Vec::new();
            let mut transfer_rows = 0;
            for (i, (from, to, amount, day, delay)) in transfers.into_iter().enumerate() {
                if from == to {
                    continue;
                }
                // A few amounts only, so equal amounts meet often.
                let amount_minor = amount * 10_000;
                amounts.push(amount_minor);
                rows.push(Row {
                    account: from,
                    day,
                    amount_minor: -amount_minor,
                    description: format!("ONLINE TRANSFER OUT {i}"),
                });
                rows.push(Row {
                    account: to,
                    day: day + delay,
                    amount_minor,
                    description: format!("ONLINE TRANSFER IN {i}"),
                });
                transfer_rows += 2;
            }
            let (mut spending, mut income) = (0, 0);
            for (i, (account, which, day, out)) in noise.into_iter().enumerate() {
                let amount_minor = amounts.get(which).copied().unwrap_or(1_234 + which as i64);
                if out {
                    spending += amount_minor;
                } else {
                    income += amount_minor;
                }
                rows.push(Row {
                    account,
                    day,
                    amount_minor: if out { -amount_minor } else { amount_minor },
                    description: if out {
                        format!("STORE PURCHASE {i}")
                    } else {
                        format!("DEPOSIT {i}")
                    },
                });
            }
            Generated {
                kinds,
                rows,
                cuts,
                order_seed,
                spending,
                income,
                transfer_rows,
            }
        })
}

fn name(account: usize) -> String {
    format!("Account {}", ["A", "B", "C", "D", "E"][account])
}

/// Each account's statements as CSV text, in a shuffled order: (account, text).
fn statements(g: &Generated) -> Vec<(usize, String)> {
    let start = NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
    let mut out = Vec::new();
    for (account, cuts) in g.cuts.iter().enumerate() {
        let mut bounds: Vec<u64> = cuts.clone();
        bounds.sort_unstable();
        bounds.dedup();
        bounds.push(u64::MAX);
        let mut from = 0;
        for to in bounds {
            let mut text = String::from("Date,Description,Amount\n");
            let mut any = false;
            for row in g
                .rows
                .iter()
                .filter(|r| r.account == account && r.day >= from && r.day < to)
            {
                let date = start + Days::new(row.day);
                let sign = if row.amount_minor < 0 { "-" } else { "" };
                let abs = row.amount_minor.unsigned_abs();
                writeln!(
                    text,
                    "{date},{},{sign}{}.{:02}",
                    row.description,
                    abs / 100,
                    abs % 100
                )
                .unwrap();
                any = true;
            }
            if any {
                out.push((account, text));
            }
            from = to;
        }
    }
    // A shuffle from the seed (a small LCG: the order is part of the case, so it shrinks).
    let mut state = g.order_seed | 1;
    for i in (1..out.len()).rev() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.swap(i, usize::try_from(state >> 33).unwrap() % (i + 1));
    }
    out
}

async fn import(pool: &PgPool, owner: OwnerId, g: &Generated) {
    for (index, (account, text)) in statements(g).into_iter().enumerate() {
        let parsed = import::parse(
            text.as_bytes(),
            &ParseOptions {
                currency: Some(Currency::USD),
                ..ParseOptions::default()
            },
        )
        .unwrap();
        let target = Target {
            account: Some(name(account)),
            kind: Some(g.kinds[account].parse().unwrap()),
            window_days: Some(WINDOW),
        };
        let mut tx = begin_for_owner(owner, pool).await.unwrap();
        let (plan_id, _) = import::plan_into(
            owner,
            &mut tx,
            &format!("{index}.csv"),
            &import::file_sha256(text.as_bytes()),
            parsed,
            &target,
        )
        .await
        .unwrap();
        import::commit(owner, &mut tx, plan_id, &mut |_, _| {})
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
}

/// (spending, income, rows held, transfer rows paired, transfer rows in transit, bad pairs)
async fn measured(pool: &PgPool, owner: OwnerId) -> (i64, i64, i64, i64, i64, i64) {
    sqlx::query_as(
        "WITH p AS (
             SELECT p.transaction_id, p.amount_minor, a.type, a.kind, a.name
             FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
             WHERE p.owner_id = $1),
         t AS (
             SELECT t.id, t.date, t.paired_source_hash IS NOT NULL AS paired,
                    abs(t.date - t.paired_date) AS apart,
                    count(*) FILTER (WHERE p.kind = 'transit') AS transit,
                    count(DISTINCT p.name) FILTER (WHERE p.type IN ('asset', 'liability') AND p.kind <> 'transit') AS holders,
                    sum(p.amount_minor) FILTER (WHERE p.type IN ('asset', 'liability') AND p.kind <> 'transit') AS held
             FROM transactions t JOIN p ON p.transaction_id = t.id WHERE t.owner_id = $1 GROUP BY t.id)
         SELECT (SELECT coalesce(sum(amount_minor), 0) FROM p WHERE type = 'expense' AND amount_minor > 0)::bigint,
                (SELECT coalesce(-sum(amount_minor), 0) FROM p WHERE type = 'expense' AND amount_minor < 0)::bigint,
                (SELECT coalesce(sum(CASE WHEN paired THEN 2 ELSE 1 END), 0) FROM t)::bigint,
                (SELECT count(*) * 2 FROM t WHERE paired)::bigint,
                (SELECT count(*) FROM t WHERE transit > 0)::bigint,
                (SELECT count(*) FROM t WHERE paired AND (holders <> 2 OR held <> 0 OR transit > 0 OR apart > $2))::bigint",
    )
    .bind(owner.as_uuid())
    .bind(WINDOW as i32)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// Checks `cases` random households drawn from `seed`'s stream; a failure prints the case whole.
async fn check_households(pool: PgPool, seed: u8, cases: u32) {
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    );
    for case in 0..cases {
        let g = household().new_tree(&mut runner).unwrap().current();
        let owner = new_user(&pool).await;
        import(&pool, owner, &g).await;
        let (spending, income, held, paired, in_transit, bad) = measured(&pool, owner).await;
        let context = || format!("household {case} of stream {seed}: {g:#?}");
        assert_eq!(
            (spending, income),
            (g.spending, g.income),
            "spending and income, {}",
            context()
        );
        assert_eq!(held, g.rows.len() as i64, "every row held once, {}", context());
        assert_eq!(
            paired + in_transit,
            g.transfer_rows as i64,
            "every transfer row in one place, {}",
            context()
        );
        assert_eq!(
            bad,
            0,
            "a pair joins two accounts with opposite amounts within the window, {}",
            context()
        );
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn random_households_add_up(options: PgPoolOptions, connect: PgConnectOptions) {
    // KAKEIBO_HOUSEHOLDS households in all, over KAKEIBO_HOUSEHOLD_WORKERS streams at once (each
    // its own seeded stream and connections): a long run keeps the database busy on every core.
    let number = |name: &str, default: u32| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let cases = number("KAKEIBO_HOUSEHOLDS", 12);
    let workers = number("KAKEIBO_HOUSEHOLD_WORKERS", 1).clamp(1, 16);
    let pool = options
        .max_connections(workers.saturating_mul(2).max(4))
        .connect_with(connect)
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let mut streams = tokio::task::JoinSet::new();
    for worker in 0..workers {
        let share = cases / workers + u32::from(worker < cases % workers);
        streams.spawn(check_households(
            pool.clone(),
            u8::try_from(worker).unwrap(),
            share,
        ));
    }
    while let Some(done) = streams.join_next().await {
        if let Err(e) = done {
            std::panic::resume_unwind(e.into_panic());
        }
    }
    println!(
        "{cases} households in {:.1} s over {workers} stream(s)",
        started.elapsed().as_secs_f64()
    );
}
