//! `kakeibo-load`: see the crate's documentation; `cargo xtask load` starts the site it drives.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use anyhow::{Context, Result, bail};
use clap::Parser;
use kakeibo_load::{Checks, Plan, Traffic};
use serde_json::json;
use sqlx::postgres::PgPoolOptions;

/// Simulated visitors against a running kakeibo site on the scripted demo model, for a fixed
/// time: chat questions, writes confirmed or declined, statements uploaded and imported, the
/// dashboard and the lists. Then the database is checked: every admitted message has its run,
/// every allowed write exactly one result, no visitor saw another's data, no suspended turn is left
/// claimed. Prints requests/s, p50/p99 per route, errors by kind, database connections and the
/// server's peak memory; writes REPORT_DIR/load.{json,md}. Exits 1 when a check fails or any
/// request failed.
#[derive(Debug, Parser)]
#[command(name = "kakeibo-load", version)]
struct Args {
    /// The site.
    #[arg(long, default_value = "http://127.0.0.1:3000")]
    url: String,
    /// The origin the site accepts writes from (its SITE_URL); the URL when unset.
    #[arg(long)]
    origin: Option<String>,
    /// Visitors at once.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=4000))]
    visitors: u16,
    /// Seconds during which new work starts.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=3600))]
    seconds: u64,
    /// Seconds one request may take before it counts as an error.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=900))]
    timeout_seconds: u64,
    /// The site's database, as its owner role (to sample connections and run the checks).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: String,
    /// The server's process id, for its peak resident memory (/proc/PID/status).
    #[arg(long)]
    server_pid: Option<u32>,
    /// Where load.json and load.md go.
    #[arg(long, default_value = "bench/report")]
    report_dir: PathBuf,
    /// Seconds into the load at which the command after `--` runs once (a database restart:
    /// `cargo xtask load --restart-db-after` passes `pg_ctl restart -m fast`). Errors of requests
    /// that meet it are reported apart, as its doing; every other check holds as without it.
    #[arg(long, requires = "disrupt")]
    disrupt_after: Option<u64>,
    /// The disruption's command and arguments.
    #[arg(last = true)]
    disrupt: Vec<String>,
    /// Instead of the visitors: one visitor asks for four previews of a statement of almost 10
    /// MiB at once, twice, while another makes requests; prints the other's latency (goal: p99
    /// under 200 ms) and the plans left, writes REPORT_DIR/preview-storm.{json,md}, and exits 1
    /// when the goal is missed, a request of the other visitor failed, or no preview of a round
    /// was answered.
    #[arg(long, conflicts_with = "disrupt_after")]
    preview_storm: bool,
}

/// The other visitor's p99 while previews run, at most (`--preview-storm`).
const STORM_GOAL_MS: f64 = 200.0;

#[tokio::main]
async fn main() -> Result<ExitCode> {
    let args = Args::parse();
    tracing_subscriber::fmt().with_target(false).init();
    let base = args.url.trim_end_matches('/').to_owned();
    let plan = Plan {
        origin: args.origin.clone().unwrap_or_else(|| base.clone()),
        base,
        visitors: usize::from(args.visitors),
        duration: Duration::from_secs(args.seconds),
        request_timeout: Duration::from_secs(args.timeout_seconds),
        disruption: args.disrupt_after.map(|after| kakeibo_load::traffic::Disruption {
            after: Duration::from_secs(after),
            argv: args.disrupt.clone(),
        }),
    };
    preflight(&plan).await?;
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(&args.database_url)
        .await
        .context("connecting to DATABASE_URL")?;
    if args.preview_storm {
        return preview_storm(&plan, &pool, &args.report_dir).await;
    }

    let durability: (String, String) =
        sqlx::query_as("SELECT current_setting('fsync'), current_setting('synchronous_commit')")
            .fetch_one(&pool)
            .await
            .context("reading the database's settings")?;
    let durability = format!("fsync={}, synchronous_commit={}", durability.0, durability.1);
    tracing::info!(
        "{} visitors for {} s against {}",
        plan.visitors,
        args.seconds,
        plan.base
    );
    let connections = Arc::new(Peaks::default());
    let sampler = tokio::spawn(sample_connections(pool.clone(), Arc::clone(&connections)));
    let traffic = kakeibo_load::drive(&plan, &|line| tracing::info!("{line}")).await;
    sampler.abort();
    let rss = args.server_pid.and_then(peak_rss_kib);
    tracing::info!("checking the database");
    let checks = kakeibo_load::check(&pool, &traffic)
        .await
        .context("checking the database")?;

    let report = Report {
        plan: &plan,
        traffic: &traffic,
        checks: &checks,
        peaks: &connections,
        rss,
        durability: &durability,
    };
    let markdown = render(&report);
    println!("{markdown}");
    write_report(&args.report_dir, &report, &markdown)?;
    let errors: u64 = traffic.tally.errors.values().sum();
    Ok(if checks.passed() && errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn preview_storm(plan: &Plan, pool: &sqlx::PgPool, report_dir: &Path) -> Result<ExitCode> {
    let storm = kakeibo_load::storm::Storm {
        base: plan.base.clone(),
        origin: plan.origin.clone(),
        bytes: 10 * 1024 * 1024 - 1024,
        previews: 4,
        requests: 100,
    };
    tracing::info!(
        "the preview storm: {} previews of a {} byte statement at once, twice",
        storm.previews,
        storm.bytes
    );
    let report = kakeibo_load::storm::run(&storm, pool).await?;
    let markdown = kakeibo_load::storm::render(&report, STORM_GOAL_MS);
    println!("{markdown}");
    std::fs::create_dir_all(report_dir)?;
    std::fs::write(report_dir.join("preview-storm.md"), &markdown)?;
    std::fs::write(
        report_dir.join("preview-storm.json"),
        serde_json::to_string_pretty(&report)?,
    )?;
    let worst = report.first.other_p99_ms.max(report.second.other_p99_ms);
    let failed = report.first.other_failures + report.second.other_failures;
    // A round in which no preview was answered measured nothing: it does not pass.
    let previewed = [&report.first, &report.second]
        .iter()
        .all(|round| round.previews.iter().any(|(status, _)| *status == 200));
    if !previewed {
        tracing::error!("a round had no preview answered 200, so it measured nothing");
    }
    Ok(if worst < STORM_GOAL_MS && failed == 0 && previewed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Refuses a site that is down or not on the scripted demo model (the load would measure a
/// provider, and the checks need the script's known answers).
async fn preflight(plan: &Plan) -> Result<()> {
    let session: serde_json::Value = reqwest::get(format!("{}/api/session", plan.base))
        .await
        .with_context(|| {
            format!(
                "{} does not answer (is `cargo xtask dev --demo` running?)",
                plan.base
            )
        })?
        .json()
        .await
        .context("GET /api/session did not answer JSON")?;
    if session["model"]["model"] != "scripted-demo" {
        bail!(
            "the site's model is {}, not the scripted demo: run it with KAKEIBO_PROVIDER=script:fixtures/scripts/demo.yaml \
             (`cargo xtask load` does)",
            session["model"]
        );
    }
    Ok(())
}

/// The most connections to the site's database seen at once, and the most of them busy.
#[derive(Debug, Default)]
struct Peaks {
    open: AtomicI64,
    active: AtomicI64,
}

async fn sample_connections(pool: sqlx::PgPool, peaks: Arc<Peaks>) {
    let mut ticker = tokio::time::interval(Duration::from_millis(200));
    loop {
        ticker.tick().await;
        // This sampler's own connection is left out.
        let sampled: Result<(i64, i64), _> = sqlx::query_as(
            "SELECT count(*), count(*) FILTER (WHERE state = 'active')
             FROM pg_stat_activity
             WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
        )
        .fetch_one(&pool)
        .await;
        if let Ok((open, active)) = sampled {
            peaks.open.fetch_max(open, Ordering::Relaxed);
            peaks.active.fetch_max(active, Ordering::Relaxed);
        }
    }
}

#[allow(clippy::cast_precision_loss)] // Milliseconds of a load run are far below 2^52.
fn ms_to_s(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// The process's peak resident set (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

fn render(report: &Report<'_>) -> String {
    use std::fmt::Write as _;
    let Report {
        plan,
        traffic,
        checks,
        peaks,
        rss,
        durability,
    } = report;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} visitors for {:.0} s (work under way at the end finished: {:.1} s in all): {:.1} requests/s\n",
        plan.visitors,
        plan.duration.as_secs_f64(),
        traffic.elapsed.as_secs_f64(),
        traffic.requests_per_second()
    );
    let _ = writeln!(
        out,
        "| route | requests | per second | p50 | p99 | max |\n|---|---|---|---|---|---|"
    );
    for route in traffic.routes() {
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} | {:.1} ms | {:.1} ms | {:.1} ms |",
            route.route, route.requests, route.per_second, route.p50_ms, route.p99_ms, route.max_ms
        );
    }
    let _ = writeln!(out);
    if let Some(d) = &traffic.disruption {
        let _ = writeln!(
            out,
            "Disruption: `{}` from {:.1} s to {:.1} s into the load: {}. The first request sent after it was \
             answered {}.",
            d.command,
            ms_to_s(d.started_ms),
            ms_to_s(d.ended_ms),
            d.outcome,
            d.recovered_after_ms
                .map_or_else(|| "never".to_owned(), |ms| format!("{ms} ms after it ended"))
        );
        let cut: u64 = traffic.tally.disrupted.values().sum();
        let _ = writeln!(out, "\nRequests it cut ({cut}), by kind:");
        for (kind, count) in &traffic.tally.disrupted {
            let _ = writeln!(out, "- {kind}: {count}");
        }
        let _ = writeln!(out);
    }
    if traffic.tally.errors.is_empty() {
        let _ = writeln!(out, "Errors: none.");
    } else {
        let _ = writeln!(out, "Errors by kind:");
        for (kind, count) in &traffic.tally.errors {
            let _ = writeln!(out, "- {kind}: {count}");
        }
    }
    let _ = writeln!(
        out,
        "\nDatabase connections (sampled every 200 ms): at most {} open, {} busy at once. The server's \
         peak RSS: {}.",
        peaks.open.load(Ordering::Relaxed),
        peaks.active.load(Ordering::Relaxed),
        rss.map_or_else(
            || "not measured (no --server-pid)".to_owned(),
            |kib| format!(
                "{:.1} MiB",
                f64::from(u32::try_from(kib).unwrap_or(u32::MAX)) / 1024.0
            )
        )
    );
    let _ = writeln!(
        out,
        "\nChecked in the database: {} admitted messages, {} missing runs, {} still running, {} runs no answer reported; \
         writes {} allowed, {} declined, {} unanswered — {} lost, {} done twice, {} done though declined; \
         {} cross-visitor reads, {} cross-visitor writes; suspended turns {} left claimed, {} left pending.",
        checks.admitted,
        checks.runs_missing,
        checks.runs_unfinished,
        checks.runs_unseen,
        checks.writes_allowed,
        checks.writes_declined,
        checks.writes_unsettled,
        checks.writes_lost,
        checks.writes_doubled,
        checks.writes_declined_but_done,
        checks.cross_visitor_reads,
        checks.cross_visitor_writes,
        checks.suspended_claimed,
        checks.suspended_pending,
    );
    for explained in &checks.explained {
        let _ = writeln!(out, "- explained: {explained}");
    }
    if checks.passed() {
        let _ = writeln!(out, "Every check passed.");
    } else {
        let _ = writeln!(out, "Failed checks:");
        for problem in &checks.problems {
            let _ = writeln!(out, "- {problem}");
        }
    }
    let _ = writeln!(out, "\nThe database committed with {durability}.");
    out
}

/// What `load.json` is made of.
struct Report<'a> {
    plan: &'a Plan,
    traffic: &'a Traffic,
    checks: &'a Checks,
    peaks: &'a Peaks,
    rss: Option<u64>,
    durability: &'a str,
}

fn write_report(dir: &Path, report: &Report<'_>, markdown: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let (traffic, peaks) = (report.traffic, report.peaks);
    let json = json!({
        "visitors": report.plan.visitors,
        "seconds": report.plan.duration.as_secs(),
        "elapsed_seconds": traffic.elapsed.as_secs_f64(),
        "requests_per_second": traffic.requests_per_second(),
        "routes": traffic.routes(),
        "errors": traffic.tally.errors,
        "connections": {"open_peak": peaks.open.load(Ordering::Relaxed), "active_peak": peaks.active.load(Ordering::Relaxed)},
        "server_peak_rss_kib": report.rss,
        "checks": report.checks,
        "disruption": traffic.disruption,
        "disrupted": traffic.tally.disrupted,
        "database": report.durability,
        "passed": report.checks.passed() && traffic.tally.errors.is_empty(),
    });
    let json_path = dir.join("load.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("writing {}", json_path.display()))?;
    let md_path = dir.join("load.md");
    std::fs::write(&md_path, format!("# cargo xtask load\n\n{markdown}"))
        .with_context(|| format!("writing {}", md_path.display()))?;
    tracing::info!("report: {} and {}", json_path.display(), md_path.display());
    Ok(())
}
