//! The Beancount export of a ledger of 1,000,000 postings beside `COPY … TO STDOUT` of the same
//! rows (the same join, the same order) out of PostgreSQL, measured in the same run, both written
//! to a file; and the heap the export holds at its peak, which must stay bounded (the rows stream
//! and one transaction is held at a time).
//!
//! The ledger: 500,000 transactions of the development owner over seven years, two postings each
//! — purchases in every spending category out of Checking or onto the card, and a salary now and
//! then — generated in the database (the insert path is the import benchmark's subject, not this
//! one's). `cargo xtask bench` runs it; by hand: `DATABASE_URL=… cargo bench -p kakeibo-export
//! --bench export`. `BENCH_TRANSACTIONS` sets the size (default 500,000), `BENCH_REPEATS` the
//! runs of each (default 3, the median is reported).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation
)] // A benchmark.

use std::{
    io::Write,
    time::{Duration, Instant},
};

use futures_util::StreamExt;
use kakeibo_bench::{Figure, Report, scratch, setting};
use kakeibo_export::{Format, Period, export};
use kakeibo_ledger::{Currency, DEV_OWNER, MIGRATOR, begin_for_owner, ensure_chart};
use peak_alloc::PeakAlloc;
use sqlx::PgPool;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// The rows the export reads, as one `COPY`: what PostgreSQL alone takes to hand them over.
const COPY: &str = "COPY (
    SELECT t.id, t.date, t.description, t.raw_description, t.bank_ref, b.filename,
           p.id, p.account_id, p.amount_minor, p.currency
    FROM transactions t
    JOIN postings p ON p.transaction_id = t.id AND p.owner_id = t.owner_id
    LEFT JOIN import_batches b ON b.id = t.import_batch_id AND b.owner_id = t.owner_id
    WHERE t.owner_id = '00000000-0000-4000-8000-000000000001'
    ORDER BY t.date, t.created_at, t.id, p.amount_minor DESC, p.id) TO STDOUT";

async fn load(pool: &PgPool, count: usize) {
    let count = i64::try_from(count).unwrap();
    let mut tx = begin_for_owner(DEV_OWNER, pool).await.unwrap();
    ensure_chart(DEV_OWNER, &mut tx, Some(Currency::INR))
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO transactions (id, owner_id, date, description, raw_description)
         SELECT md5('t' || g)::uuid, $1, date '2019-01-01' + (g * 2555 / $2)::int,
                CASE WHEN g % 40 = 0 THEN 'SALARY ACME' ELSE 'SHOP ' || (g % 997) END,
                CASE WHEN g % 40 = 0 THEN 'NEFT SALARY ACME ' || g ELSE 'POS SHOP ' || (g % 997) || ' REF ' || g END
         FROM generate_series(1, $2) g",
    )
    .bind(DEV_OWNER.as_uuid())
    .bind(count)
    .execute(&mut *tx)
    .await
    .unwrap();
    sqlx::query(
        "WITH chart AS (SELECT array_agg(id ORDER BY name) AS spending FROM accounts
                        WHERE owner_id = $1 AND type = 'expense'),
              named AS (SELECT (SELECT id FROM accounts WHERE owner_id = $1 AND name = 'Checking') AS checking,
                               (SELECT id FROM accounts WHERE owner_id = $1 AND name = 'Credit Card') AS card,
                               (SELECT id FROM accounts WHERE owner_id = $1 AND name = 'Salary') AS salary)
         INSERT INTO postings (owner_id, transaction_id, account_id, amount_minor, currency)
         SELECT $1, md5('t' || g)::uuid, side.account, side.amount, 'INR'
         FROM generate_series(1, $2) g, chart, named,
              LATERAL (SELECT CASE WHEN g % 40 = 0 THEN 15000000 ELSE 100 + (g * 7919) % 900000 END AS amount) a,
              LATERAL (VALUES
                  (CASE WHEN g % 40 = 0 THEN named.checking WHEN g % 3 = 0 THEN named.card ELSE named.checking END,
                   CASE WHEN g % 40 = 0 THEN a.amount ELSE -a.amount END),
                  (CASE WHEN g % 40 = 0 THEN named.salary
                        ELSE chart.spending[1 + (g % array_length(chart.spending, 1))::int] END,
                   CASE WHEN g % 40 = 0 THEN -a.amount ELSE a.amount END)) AS side(account, amount)",
    )
    .bind(DEV_OWNER.as_uuid())
    .bind(count)
    .execute(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    sqlx::query("ANALYZE").execute(pool).await.unwrap();
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn copy_out(pool: &PgPool, path: &std::path::Path) -> u64 {
    let mut conn = pool.acquire().await.unwrap();
    let mut file = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(path).unwrap());
    let mut stream = conn.copy_out_raw(COPY).await.unwrap();
    let mut bytes = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.unwrap();
        bytes += chunk.len() as u64;
        file.write_all(&chunk).unwrap();
    }
    file.flush().unwrap();
    bytes
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let count = setting("BENCH_TRANSACTIONS", 500_000);
    let repeats = setting("BENCH_REPEATS", 3).max(1);
    let scratch = scratch::create("export", kakeibo_ledger::pool_options(2), &MIGRATOR).await;
    let pool = scratch.pool.clone();
    println!(
        "loading a ledger of {count} transactions ({} postings)…",
        2 * count
    );
    load(&pool, count).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut exports, mut copies, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
    let (mut written, mut export_bytes, mut copy_bytes) = (None, 0, 0);
    for _ in 0..repeats {
        let path = dir.path().join("ledger.beancount");
        let before = ALLOCATOR.current_usage();
        ALLOCATOR.reset_peak_usage();
        let started = Instant::now();
        let mut file = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(&path).unwrap());
        written = Some(
            export(
                DEV_OWNER,
                &pool,
                Format::Beancount,
                Period::default(),
                &mut file,
                &mut |_| {},
            )
            .await
            .unwrap(),
        );
        file.flush().unwrap();
        drop(file);
        exports.push(started.elapsed());
        peaks.push(ALLOCATOR.peak_usage().saturating_sub(before));
        export_bytes = std::fs::metadata(&path).unwrap().len();

        let started = Instant::now();
        copy_bytes = copy_out(&pool, &dir.path().join("rows.copy")).await;
        copies.push(started.elapsed());
    }
    let written = written.unwrap();
    assert_eq!(written.postings, 2 * count as u64);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let peak = peaks.iter().copied().max().unwrap_or_default();
    let mut report = Report::new(
        "export",
        &format!(
            "The Beancount export of {} postings, beside COPY of the same rows",
            written.postings
        ),
        "cargo bench -p kakeibo-export --bench export",
    );
    report.push(
        Figure::new("export to Beancount", ms(median(exports)), "ms")
            .against("COPY of the same rows to a file", ms(median(copies)))
            .at_most(4.0),
    );
    report.push(Figure::new("heap at the export's peak", mib(peak as u64), "MiB").value_at_most(64.0));
    report.note(format!(
        "{} transactions; the Beancount file is {:.0} MiB, the COPY text {:.0} MiB; the median of {repeats} runs of each",
        written.transactions,
        mib(export_bytes),
        mib(copy_bytes),
    ));
    report.finish();
    scratch.drop_database().await;
}
