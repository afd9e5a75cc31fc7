//! The preview storm (`cargo xtask load --preview-storm`): one visitor asks for several previews
//! of a large statement at once while a second visitor keeps using the site. It measures what a
//! preview costs everyone else — the second visitor's latency while the parse runs — and what it
//! leaves behind: the plans and plan rows stored.
//!
//! Done twice: a first round (one preview parses, the others are refused while it runs) and a
//! second round of the same statement (the stored plan is reused: nothing is parsed again).

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use reqwest::{Client, StatusCode};
use serde::Serialize;

/// What the storm is asked for.
#[derive(Debug, Clone)]
pub struct Storm {
    pub base: String,
    pub origin: String,
    /// The statement's size in bytes.
    pub bytes: usize,
    /// Previews of it asked for at once.
    pub previews: usize,
    /// The second visitor's requests, at least (more while previews still run).
    pub requests: usize,
}

/// One round of previews, and the other visitor's requests during it.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// Each preview's status and seconds, in the order they were sent.
    pub previews: Vec<(u16, f64)>,
    pub other_requests: usize,
    pub other_p50_ms: f64,
    pub other_p99_ms: f64,
    pub other_max_ms: f64,
    /// Any request of the other visitor's that was not a 200.
    pub other_failures: usize,
}

/// What the storm measured.
#[derive(Debug, Clone, Serialize)]
pub struct StormReport {
    pub statement_bytes: usize,
    pub statement_rows: usize,
    /// The other visitor's latency on an idle site, before any preview.
    pub idle_p50_ms: f64,
    pub idle_p99_ms: f64,
    pub first: Round,
    pub second: Round,
    /// What the previewing visitor keeps afterwards.
    pub plans_left: i64,
    pub plan_rows_left: i64,
}

/// A statement of about `bytes` bytes, every row different: its text and its row count.
pub fn statement(bytes: usize) -> (String, usize) {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(bytes + 64);
    text.push_str("Date,Description,Amount\n");
    let mut rows = 0usize;
    while text.len() + 64 < bytes {
        let day = rows % 28 + 1;
        let month = rows / 28 % 12 + 1;
        let cents = rows * 37 % 100_000 + 100;
        let _ = writeln!(
            text,
            "2024-{month:02}-{day:02},STORM MERCHANT {rows} CARD PURCHASE,-{}.{:02}",
            cents / 100,
            cents % 100
        );
        rows += 1;
    }
    (text, rows)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1).min(sorted.len() - 1))
        .copied()
        .unwrap_or_default()
}

/// A visitor of its own: a client whose every request carries the session cookie of the visit
/// it started.
async fn visitor(storm: &Storm) -> Result<Client> {
    let started = Client::new()
        .post(format!("{}/api/session", storm.base))
        .header("origin", &storm.origin)
        .send()
        .await
        .context("starting a visit")?;
    if !started.status().is_success() {
        bail!("POST /api/session answered {}", started.status());
    }
    let cookie = started
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.contains("kakeibo_session="))
        .and_then(|c| c.split(';').next())
        .context("the visit's session cookie")?
        .to_owned();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::COOKIE, cookie.parse()?);
    Ok(Client::builder()
        .default_headers(headers)
        .timeout(Duration::from_mins(10))
        .build()?)
}

/// The other visitor's requests (`GET /api/conversations`) until `done` says the previews are
/// over and at least `at_least` were made: each one's milliseconds, and how many failed.
async fn keep_asking(
    client: &Client,
    storm: &Storm,
    at_least: usize,
    done: &tokio::sync::watch::Receiver<bool>,
) -> (Vec<f64>, usize) {
    let mut times = Vec::new();
    let mut failures = 0;
    while times.len() < at_least || !*done.borrow() {
        let started = Instant::now();
        let answer = client
            .get(format!("{}/api/conversations", storm.base))
            .send()
            .await;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        if !answer.is_ok_and(|a| a.status() == StatusCode::OK) {
            failures += 1;
        }
    }
    (times, failures)
}

async fn round(storm: &Storm, owner: &Client, other: &Client, upload: &str) -> Round {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let previews = (0..storm.previews).map(|_| {
        let (owner, url, origin) = (
            owner.clone(),
            format!("{}/api/uploads/{upload}/preview", storm.base),
            storm.origin.clone(),
        );
        async move {
            let started = Instant::now();
            let status = owner
                .post(url)
                .header("origin", origin)
                .send()
                .await
                .map_or(0, |a| a.status().as_u16());
            (status, started.elapsed().as_secs_f64())
        }
    });
    let all = async {
        let answers = futures_util::future::join_all(previews).await;
        let _ = tx.send(true);
        answers
    };
    let asking = keep_asking(other, storm, storm.requests, &rx);
    let (previews, (mut times, other_failures)) = tokio::join!(all, asking);
    times.sort_by(f64::total_cmp);
    Round {
        previews,
        other_requests: times.len(),
        other_p50_ms: percentile(&times, 50.0),
        other_p99_ms: percentile(&times, 99.0),
        other_max_ms: times.last().copied().unwrap_or_default(),
        other_failures,
    }
}

/// Runs the storm; `pool` (the site's database, owner role) counts what is left.
pub async fn run(storm: &Storm, pool: &sqlx::PgPool) -> Result<StormReport> {
    let (text, rows) = statement(storm.bytes);
    let owner = visitor(storm).await?;
    let other = visitor(storm).await?;
    let uploaded = owner
        .post(format!("{}/api/uploads?filename=storm.csv", storm.base))
        .header("origin", &storm.origin)
        .header("content-type", "text/csv")
        .body(text.clone())
        .send()
        .await
        .context("uploading the statement")?;
    if uploaded.status() != StatusCode::CREATED {
        bail!(
            "the upload answered {}: {}",
            uploaded.status(),
            uploaded.text().await.unwrap_or_default()
        );
    }
    let upload: serde_json::Value = uploaded.json().await?;
    let upload = upload
        .get("id")
        .and_then(serde_json::Value::as_str)
        .context("the upload's id")?
        .to_owned();
    let (_, rx) = tokio::sync::watch::channel(true);
    let (mut idle, _) = keep_asking(&other, storm, storm.requests, &rx).await;
    idle.sort_by(f64::total_cmp);
    let first = round(storm, &owner, &other, &upload).await;
    let second = round(storm, &owner, &other, &upload).await;
    let owner_id: (uuid::Uuid,) = sqlx::query_as("SELECT owner_id FROM uploads WHERE id = $1")
        .bind(uuid::Uuid::parse_str(&upload)?)
        .fetch_one(pool)
        .await?;
    let plans_left: i64 =
        sqlx::query_scalar("SELECT count(*) FROM import_batches WHERE owner_id = $1 AND status = 'planned'")
            .bind(owner_id.0)
            .fetch_one(pool)
            .await?;
    let plan_rows_left: i64 = sqlx::query_scalar("SELECT count(*) FROM import_plan_rows WHERE owner_id = $1")
        .bind(owner_id.0)
        .fetch_one(pool)
        .await?;
    Ok(StormReport {
        statement_bytes: text.len(),
        statement_rows: rows,
        idle_p50_ms: percentile(&idle, 50.0),
        idle_p99_ms: percentile(&idle, 99.0),
        first,
        second,
        plans_left,
        plan_rows_left,
    })
}

/// The report in Markdown.
pub fn render(report: &StormReport, goal_ms: f64) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Preview storm: a {:.1} MiB statement ({} rows)\n",
        mib(report.statement_bytes),
        report.statement_rows
    );
    let _ = writeln!(
        out,
        "The other visitor, idle site: p50 {:.1} ms, p99 {:.1} ms.\n",
        report.idle_p50_ms, report.idle_p99_ms
    );
    let _ = writeln!(
        out,
        "| round | previews (status, seconds) | other visitor's requests | p50 | p99 | max | failed |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for (name, round) in [
        ("first", &report.first),
        ("second (same statement)", &report.second),
    ] {
        let previews: Vec<String> = round
            .previews
            .iter()
            .map(|(status, secs)| format!("{status} in {secs:.2} s"))
            .collect();
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {:.1} ms | {:.1} ms | {:.1} ms | {} |",
            previews.join(", "),
            round.other_requests,
            round.other_p50_ms,
            round.other_p99_ms,
            round.other_max_ms,
            round.other_failures
        );
    }
    let worst = report.first.other_p99_ms.max(report.second.other_p99_ms);
    let _ = writeln!(
        out,
        "\nThe other visitor's p99 during the previews: {worst:.1} ms (goal under {goal_ms:.0} ms: {}).",
        if worst < goal_ms { "met" } else { "NOT met" }
    );
    let _ = writeln!(
        out,
        "Left afterwards: {} plan(s), {} plan rows.",
        report.plans_left, report.plan_rows_left
    );
    out
}

#[allow(clippy::cast_precision_loss)] // A statement is far below 2^52 bytes.
fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_is_about_the_size_asked_with_distinct_rows() {
        let (text, rows) = statement(100_000);
        assert!(text.len() <= 100_000 && text.len() > 99_000, "{}", text.len());
        assert_eq!(text.lines().count(), rows + 1);
        let descriptions: std::collections::BTreeSet<&str> =
            text.lines().skip(1).filter_map(|l| l.split(',').nth(1)).collect();
        assert_eq!(descriptions.len(), rows);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert!((percentile(&values, 50.0) - 50.0).abs() < f64::EPSILON);
        assert!((percentile(&values, 99.0) - 99.0).abs() < f64::EPSILON);
        assert!((percentile(&[], 99.0)).abs() < f64::EPSILON);
    }
}
