//! Import of a generated statement (parse, plan, duplicate check, double entry) against its
//! floor, measured in the same run: PostgreSQL `COPY` of exactly the rows the import wrote (its
//! transactions and postings) into the same tables, with the same indexes and constraints. Then
//! the same file again, which must add nothing and take no longer.
//!
//! `cargo xtask bench` runs it on a server that commits durably; by hand: `DATABASE_URL=… cargo
//! bench -p kakeibo-ledger --bench import`. `BENCH_ROWS` sets the size (default 100,000). It works
//! in a scratch database it creates and drops.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::too_many_lines
)] // A benchmark.

use std::{
    fmt::Write as _,
    time::{Duration, Instant},
};

use futures_util::StreamExt as _;
use kakeibo_bench::{Figure, Report, scratch, setting};
use kakeibo_ledger::{
    Currency, DEV_OWNER, MIGRATOR, begin_for_owner,
    import::{self, CommitReport, ParseOptions},
};
use peak_alloc::PeakAlloc;
use sqlx::{Executor, PgPool};
use uuid::Uuid;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

const MERCHANTS: [&str; 12] = [
    "SWIGGY ORDER",
    "ZOMATO ORDER",
    "BIGBASKET ORDER",
    "UBER TRIP",
    "AMAZON ORDER",
    "DMART STORE",
    "APOLLO PHARMACY",
    "PVR CINEMAS",
    "INDIAN OIL FUEL",
    "CHAI POINT",
    "NETFLIX.COM",
    "SALARY CREDIT",
];

/// A statement of `rows` rows in a common Indian bank layout (day-first dates, debit/credit).
fn statement(rows: usize) -> String {
    let mut text = String::from("Date,Narration,Chq/Ref No,Withdrawal Amt.,Deposit Amt.,Closing Balance\n");
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // A running balance that every row reconciles against, as a real export's does.
    let mut balance: i64 = 100_000_000;
    for i in 0..rows {
        let day =
            chrono::NaiveDate::from_ymd_opt(2023, 1, 1).unwrap() + chrono::Days::new((i * 730 / rows) as u64);
        let merchant = MERCHANTS[(next() % 12) as usize];
        let paise = 1_000 + next() % 500_000;
        let (debit, credit) = if merchant == "SALARY CREDIT" {
            let minor = (paise * 40).cast_signed();
            balance += minor;
            (String::new(), format!("{}.{:02}", minor / 100, minor % 100))
        } else {
            balance -= paise.cast_signed();
            (format!("{}.{:02}", paise / 100, paise % 100), String::new())
        };
        let _ = writeln!(
            text,
            "{},{merchant} {},{},{debit},{credit},{}.{:02}",
            day.format("%d/%m/%Y"),
            next() % 1_000_000,
            i,
            balance / 100,
            balance % 100
        );
    }
    text
}

/// What one import of the statement took, phase by phase.
struct Run {
    parse: Duration,
    plan: Duration,
    commit: Duration,
    report: CommitReport,
}

impl Run {
    fn total(&self) -> Duration {
        self.parse + self.plan + self.commit
    }
}

/// Parses, plans (one transaction) and commits (another) the statement, as the import function
/// does.
async fn import(pool: &PgPool, text: &str) -> Run {
    let options = ParseOptions {
        currency: Some(Currency::INR),
        ..ParseOptions::default()
    };
    let started = Instant::now();
    let parsed = import::parse(text.as_bytes(), &options).unwrap();
    let parse = started.elapsed();
    assert_eq!(parsed.errors.len(), 0);

    let started = Instant::now();
    let mut tx = begin_for_owner(DEV_OWNER, pool).await.unwrap();
    let (plan_id, _) = import::plan(DEV_OWNER, &mut tx, "bench.csv", "sha", parsed, None)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let plan = started.elapsed();

    let started = Instant::now();
    let mut tx = begin_for_owner(DEV_OWNER, pool).await.unwrap();
    let report = import::commit(DEV_OWNER, &mut tx, plan_id, &mut |_, _| {})
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let commit = started.elapsed();
    Run {
        parse,
        plan,
        commit,
        report,
    }
}

/// `COPY … TO STDOUT` of `query`, as text.
async fn copy_out(pool: &PgPool, query: &str) -> Vec<u8> {
    let mut conn = pool.acquire().await.unwrap();
    let mut stream = conn.copy_out_raw(query).await.unwrap();
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        out.extend_from_slice(&chunk.unwrap());
    }
    out
}

/// The floor: the same transactions and postings `COPY`ed into the emptied tables, in one
/// transaction, committed.
async fn copy_floor(pool: &PgPool, transactions: &[u8], postings: &[u8]) -> Duration {
    let mut conn = pool.acquire().await.unwrap();
    conn.execute("TRUNCATE postings, transactions").await.unwrap();
    let started = Instant::now();
    conn.execute("BEGIN").await.unwrap();
    for (table, rows) in [("transactions", transactions), ("postings", postings)] {
        let mut copy = conn
            .copy_in_raw(&format!("COPY {table} FROM STDIN"))
            .await
            .unwrap();
        copy.send(rows).await.unwrap();
        copy.finish().await.unwrap();
    }
    conn.execute("COMMIT").await.unwrap();
    started.elapsed()
}

/// For scale only: the rows' date, description and amount into a table with no index and no
/// constraint.
async fn copy_bare(pool: &PgPool, text: &str) -> Duration {
    let options = ParseOptions {
        currency: Some(Currency::INR),
        ..ParseOptions::default()
    };
    let mut rows = String::with_capacity(text.len());
    for row in import::parse(text.as_bytes(), &options).unwrap().rows {
        let _ = writeln!(rows, "{}\t{}\t{}", row.date, row.description, row.amount_minor);
    }
    let mut conn = pool.acquire().await.unwrap();
    conn.execute("CREATE TABLE bench_bare (date date, description text, amount_minor bigint)")
        .await
        .unwrap();
    let started = Instant::now();
    let mut copy = conn.copy_in_raw("COPY bench_bare FROM STDIN").await.unwrap();
    copy.send(rows.as_bytes()).await.unwrap();
    copy.finish().await.unwrap();
    started.elapsed()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let rows = setting("BENCH_ROWS", 100_000);
    let scratch = scratch::create("import", kakeibo_ledger::pool_options(2), &MIGRATOR).await;
    let pool = scratch.pool.clone();
    let text = statement(rows);
    let mib = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);

    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    let first = import(&pool, &text).await;
    let peak = ALLOCATOR.peak_usage().saturating_sub(before);
    assert_eq!(first.report.imported, rows);
    let batch: Uuid = first.report.import_batch_id;
    let transactions = copy_out(
        &pool,
        &format!("COPY (SELECT * FROM transactions WHERE import_batch_id = '{batch}') TO STDOUT"),
    )
    .await;
    let postings = copy_out(
        &pool,
        &format!(
            "COPY (SELECT p.* FROM postings p JOIN transactions t ON t.id = p.transaction_id
                   WHERE t.import_batch_id = '{batch}') TO STDOUT"
        ),
    )
    .await;
    let again = import(&pool, &text).await;
    assert_eq!(again.report.imported, 0, "a re-import adds nothing");
    let floor = copy_floor(&pool, &transactions, &postings).await;
    let bare = copy_bare(&pool, &text).await;
    scratch.drop_database().await;

    let per_second = |d: Duration| rows as f64 / d.as_secs_f64();
    let seconds = |d: Duration| d.as_secs_f64();
    let mut report = Report::new(
        "import",
        &format!(
            "Import of a generated {rows}-row statement ({:.1} MiB): parse, plan, duplicate check, double entry",
            mib(text.len())
        ),
        "cargo bench -p kakeibo-ledger --bench import",
    );
    report.push(
        Figure::new("import, end to end", seconds(first.total()), "s")
            .against("COPY of the same rows into the same tables", seconds(floor))
            .at_most(2.0),
    );
    report.push(Figure::new("import rate", per_second(first.total()), "rows/s"));
    report.push(Figure::new("  parse", seconds(first.parse), "s"));
    report.push(Figure::new(
        "  plan (duplicate check, categories, stored plan)",
        seconds(first.plan),
        "s",
    ));
    report.push(Figure::new(
        "  commit (2 postings a row)",
        seconds(first.commit),
        "s",
    ));
    report.push(Figure::new("COPY floor rate", per_second(floor), "rows/s"));
    report.push(
        Figure::new(
            "re-import of the same file (adds 0 rows)",
            seconds(again.total()),
            "s",
        )
        .against("the first import", seconds(first.total()))
        .at_most(1.0),
    );
    report.push(
        Figure::new("peak heap of the import", mib(peak), "MiB")
            .against("the statement's size", mib(text.len())),
    );
    report.push(
        Figure::new(
            "COPY into a bare table (no index, no constraint)",
            seconds(bare),
            "s",
        )
        .against("COPY of the same rows into the same tables", seconds(floor)),
    );
    report.note(format!(
        "the floor writes exactly the import's {rows} transactions and {} postings, with the ledger's indexes, \
         foreign keys and checks; the bare table shows what those cost PostgreSQL itself",
        2 * rows
    ));
    report.finish();
}
