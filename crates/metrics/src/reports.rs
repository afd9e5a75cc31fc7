//! Figures measured by other commands, read from what those commands left: the evaluation
//! report (`cargo xtask eval`), the last whole test run (`cargo xtask test`), and the README's
//! performance table (`cargo xtask bench`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::MetricsError;

/// Where `kakeibo-evals` leaves its latest report.
pub const EVAL_REPORT: &str = "evals/report/latest.json";
/// Where `cargo xtask eval --local-model` leaves its report (committed: the README quotes it).
pub const LOCAL_EVAL_REPORT: &str = "evals/report/local-model/latest.json";
/// Where `cargo xtask test` records a whole run's counts.
pub const TEST_RUN: &str = "metrics/last-test-run.json";

/// The fields of an evaluation report (`kakeibo-evals`' `EvalReport`) the numbers use.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct EvalFigures {
    pub finished_at: String,
    pub provider: String,
    pub model: String,
    pub filter: Option<String>,
    pub complete: bool,
    pub task_count: usize,
    pub passed: usize,
    pub pass_rate: f64,
    pub median_latency_ms: u64,
    pub p95_latency_ms: u64,
    /// In micro-dollars (`1_500_000` is $1.50).
    pub median_cost_micro_usd: i64,
    pub cache_savings_percent: f64,
    pub injection: Option<InjectionFigures>,
    /// Answers (one per turn) and those stating a figure no tool of their turn returned; a
    /// report from before the figure check has none.
    #[serde(default)]
    pub answers: usize,
    #[serde(default)]
    pub ungrounded_answers: usize,
    #[serde(default)]
    pub ungrounded_answer_rate: f64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct InjectionFigures {
    pub block_rate: f64,
    pub resist_rate: f64,
}

/// Passed, failed and skipped tests of one runner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

/// A whole `cargo xtask test` run's counts, by runner.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct TestRun {
    pub finished_at: String,
    pub commit: String,
    /// `cargo test --workspace`: the sum of every test binary's summary line.
    pub cargo: Counts,
    /// Vitest's unit tests of the web app (absent when the web suites did not run).
    pub web_unit: Option<Counts>,
    /// The journeys in headless Chromium.
    pub journeys: Option<Counts>,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, MetricsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| MetricsError::Report {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(MetricsError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }),
    }
}

/// The latest evaluation report, if this checkout has one.
pub fn eval(root: &Path) -> Result<Option<EvalFigures>, MetricsError> {
    read_json(&root.join(EVAL_REPORT))
}

/// The local model's evaluation report, if this checkout has one.
pub fn local_eval(root: &Path) -> Result<Option<EvalFigures>, MetricsError> {
    read_json(&root.join(LOCAL_EVAL_REPORT))
}

/// The last whole test run's counts, if this checkout has them.
pub fn test_run(root: &Path) -> Result<Option<TestRun>, MetricsError> {
    read_json(&root.join(TEST_RUN))
}

pub const BENCH_BEGIN: &str = "<!-- bench-table:begin";
pub const BENCH_END: &str = "<!-- bench-table:end -->";

/// A figure of the performance table that has a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BenchHeadline {
    pub figure: String,
    pub ratio: String,
    pub target: String,
}

/// The performance table's figures with a target, and when and where they were measured (its
/// "Measured by" line), or `None` when the README has no such table.
pub fn bench(readme: &str) -> Option<(String, Vec<BenchHeadline>)> {
    let start = readme.find(BENCH_BEGIN)?;
    let end = readme.get(start..)?.find(BENCH_END)? + start;
    let table = readme.get(start..end)?;
    let measured = table
        .lines()
        .find_map(|l| l.strip_prefix("Measured by `cargo xtask bench` on "))
        .and_then(|l| l.split_once(": "))
        .map_or_else(
            || "an unrecorded time".to_owned(),
            |(when, _)| when.trim().to_owned(),
        );
    let rows = table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| measured |"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            match cells.as_slice() {
                [figure, _, _, ratio, target] if !target.is_empty() && !ratio.is_empty() => {
                    Some(BenchHeadline {
                        figure: (*figure).to_owned(),
                        ratio: (*ratio).to_owned(),
                        target: (*target).to_owned(),
                    })
                }
                _ => None,
            }
        })
        .collect();
    Some((measured, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_table_gives_its_targeted_figures() {
        let readme = "x\n<!-- bench-table:begin (…) -->\n| measured | kakeibo | baseline, same run | ratio | target |\n|---|---|---|---|---|\n| import | 6.98 s | COPY: 5.25 s | 1.33× | ≤ 2× ✓ |\n| side | 1.35 ms | peer: 6.67 ms | 4.92× faster |  |\n| peak RSS | 12.7 MiB |  |  | ≤ 32 MiB ✓ |\n\nMeasured by `cargo xtask bench` on 2026-12-03 13:23 UTC at commit 01bd1a9: 2 cores.\n<!-- bench-table:end -->\n";
        let (measured, rows) = bench(readme).unwrap();
        assert_eq!(measured, "2026-12-03 13:23 UTC at commit 01bd1a9");
        assert_eq!(
            rows,
            vec![BenchHeadline {
                figure: "import".into(),
                ratio: "1.33×".into(),
                target: "≤ 2× ✓".into()
            }]
        );
        assert!(bench("no table").is_none());
    }
}
