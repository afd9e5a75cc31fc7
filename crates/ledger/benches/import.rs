//! Import throughput on a generated statement, against PostgreSQL `COPY` of the same rows
//! measured in the same run.
//!
//! `cargo xtask bench` runs it (it starts PostgreSQL); by hand: `DATABASE_URL=… cargo bench -p
//! kakeibo-ledger --bench import`. `BENCH_ROWS` sets the size (default 100,000). It works in a
//! scratch database it creates and drops.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::too_many_lines
)] // A benchmark.

use std::{fmt::Write as _, time::Instant};

use kakeibo_ledger::{
    DEV_OWNER, begin_for_owner,
    import::{self, ParseOptions},
};
use sqlx::Executor;

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

mod support;
use support as scratch;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let rows = scratch::setting("BENCH_ROWS", 100_000);
    let scratch = scratch::create("import", 2).await;
    let pool = scratch.pool.clone();

    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    println!(
        "machine: {} cores, {cpu}",
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    let text = statement(rows);
    println!("statement: {rows} rows, {:.1} MB", text.len() as f64 / 1e6);

    let started = Instant::now();
    let parsed = import::parse(text.as_bytes(), &ParseOptions::default()).unwrap();
    let parse = started.elapsed();
    assert_eq!((parsed.rows.len(), parsed.errors.len()), (rows, 0));

    let started = Instant::now();
    let mut tx = begin_for_owner(DEV_OWNER, &pool).await.unwrap();
    let (plan_id, _) = import::plan(DEV_OWNER, &mut tx, "bench.csv", "sha", parsed, None)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let plan = started.elapsed();

    let started = Instant::now();
    let mut tx = begin_for_owner(DEV_OWNER, &pool).await.unwrap();
    let report = import::commit(DEV_OWNER, &mut tx, plan_id, &mut |_, _| {})
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let commit = started.elapsed();
    assert_eq!(report.imported, rows);

    // Where the commit's time goes: the same commit again with the ledger's foreign keys and
    // secondary indexes dropped (the scratch database only), so the difference is their cost.
    let mut conn = pool.acquire().await.unwrap();
    conn.execute(
        "DELETE FROM transactions; DELETE FROM import_batches;
         ALTER TABLE postings DROP CONSTRAINT postings_transaction_id_owner_id_fkey,
                              DROP CONSTRAINT postings_account_id_owner_id_fkey,
                              DROP CONSTRAINT postings_owner_id_fkey;
         ALTER TABLE transactions DROP CONSTRAINT transactions_owner_id_fkey,
                                  DROP CONSTRAINT transactions_import_batch_id_owner_id_fkey;
         DROP INDEX postings_owner_transaction_idx, postings_owner_account_idx, transactions_owner_date_idx;",
    )
    .await
    .unwrap();
    drop(conn);
    let parsed = import::parse(text.as_bytes(), &ParseOptions::default()).unwrap();
    let mut tx = begin_for_owner(DEV_OWNER, &pool).await.unwrap();
    let (plan_id, _) = import::plan(DEV_OWNER, &mut tx, "bench.csv", "sha", parsed, None)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let started = Instant::now();
    let mut tx = begin_for_owner(DEV_OWNER, &pool).await.unwrap();
    import::commit(DEV_OWNER, &mut tx, plan_id, &mut |_, _| {})
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let bare_commit = started.elapsed();

    // Baseline: the same rows (date, description, amount) straight into a bare table with COPY.
    let mut copy_rows = String::with_capacity(text.len());
    for row in import::parse(text.as_bytes(), &ParseOptions::default())
        .unwrap()
        .rows
    {
        let _ = writeln!(
            copy_rows,
            "{}\t{}\t{}",
            row.date, row.description, row.amount_minor
        );
    }
    let mut conn = pool.acquire().await.unwrap();
    conn.execute("CREATE TABLE bench_copy (date date, description text, amount_minor bigint)")
        .await
        .unwrap();
    let started = Instant::now();
    let mut copy = conn.copy_in_raw("COPY bench_copy FROM STDIN").await.unwrap();
    copy.send(copy_rows.as_bytes()).await.unwrap();
    copy.finish().await.unwrap();
    let copy_time = started.elapsed();
    drop(conn);
    scratch.drop_database().await;

    let per_second = |d: std::time::Duration| rows as f64 / d.as_secs_f64();
    let total = parse + plan + commit;
    println!(
        "parse   {:>8.3} s  {:>10.0} rows/s",
        parse.as_secs_f64(),
        per_second(parse)
    );
    println!(
        "plan    {:>8.3} s  {:>10.0} rows/s  (duplicate check, categories, stored plan)",
        plan.as_secs_f64(),
        per_second(plan)
    );
    println!(
        "commit  {:>8.3} s  {:>10.0} rows/s  (balanced insert of 2 postings a row)",
        commit.as_secs_f64(),
        per_second(commit)
    );
    println!(
        "        {:>8.3} s  of the commit is foreign-key and index upkeep (commit without them: {:.3} s)",
        commit.saturating_sub(bare_commit).as_secs_f64(),
        bare_commit.as_secs_f64()
    );
    println!(
        "import  {:>8.3} s  {:>10.0} rows/s  end to end",
        total.as_secs_f64(),
        per_second(total)
    );
    println!(
        "COPY    {:>8.3} s  {:>10.0} rows/s  baseline (bare rows, no ledger)",
        copy_time.as_secs_f64(),
        per_second(copy_time)
    );
    println!(
        "ratio   import takes {:.1}× the time of COPY",
        total.as_secs_f64() / copy_time.as_secs_f64()
    );
}
