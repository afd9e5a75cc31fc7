//! The report of a run: per task, per class, and the aggregates; as JSON and as Markdown.

use std::{collections::BTreeMap, fmt::Write as _};

use chrono::{DateTime, Utc};
use kakeibo_core::MicroUsd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{checks::CheckOutcome, injection::InjectionSummary};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskResult {
    pub task: String,
    /// The task's description from its file.
    pub description: String,
    pub class: String,
    pub passed: bool,
    pub deterministic_passed: bool,
    /// The mean of the judges' scores, when a judge ran.
    pub judge_score: Option<f64>,
    pub checks: Vec<CheckOutcome>,
    pub answers: Vec<String>,
    /// The agent's time.
    pub latency_ms: u64,
    /// Resetting the ledger included.
    pub latency_ms_wall: u64,
    /// The agent's runs, list price, in micro-dollars (`1_500_000` is $1.50).
    pub cost_micro_usd: MicroUsd,
    /// The judge's calls (not in `cost_micro_usd`, nor in the day's budget: they are not runs).
    pub judge_cost_micro_usd: MicroUsd,
    /// Model iterations, plus one per turn.
    pub turns_used: u32,
    pub tool_call_count: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub run_ids: Vec<kakeibo_core::RunId>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClassSummary {
    pub total: usize,
    pub passed: usize,
    pub pass_rate: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalReport {
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// The agent's provider (`gemini`, `anthropic`, `openai`, `script`, …).
    pub provider: String,
    pub model: String,
    pub judge_model: String,
    /// `schedule`, `admin` or `cli`.
    pub trigger: String,
    /// The filter the run was given, if any.
    pub filter: Option<String>,
    /// The tasks that ran (`notRun` are not counted).
    pub task_count: usize,
    pub passed: usize,
    pub pass_rate: f64,
    /// Every selected task and scenario ran.
    pub complete: bool,
    /// Tasks stopped or never started because the run's time ran out.
    pub not_run: Vec<String>,
    pub by_class: BTreeMap<String, ClassSummary>,
    pub median_latency_ms: u64,
    pub p95_latency_ms: u64,
    /// Costs in micro-dollars, list price: a task's median, every task's, and the judging's.
    pub median_cost_micro_usd: MicroUsd,
    pub total_cost_micro_usd: MicroUsd,
    pub judge_cost_micro_usd: MicroUsd,
    pub median_turns: u32,
    pub cache_savings_percent: f64,
    pub injection_block_rate: Option<f64>,
    pub injection: Option<InjectionSummary>,
    pub results: Vec<TaskResult>,
}

/// `part` of `whole` in percent, to one decimal (0 of nothing is 0).
pub fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    #[allow(clippy::cast_precision_loss)] // counts of tasks and tokens, far below 2^52
    let ratio = part as f64 / whole as f64;
    (ratio * 1000.0).round() / 10.0
}

/// The value at index ceil(p/100 × n) − 1 of the sorted values (the reference's rule).
pub fn percentile<T: Copy + PartialOrd>(values: &[T], p: u32) -> Option<T> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let rank = (u64::from(p) * sorted.len() as u64).div_ceil(100);
    let index = usize::try_from(rank.saturating_sub(1))
        .unwrap_or(0)
        .min(sorted.len() - 1);
    sorted.get(index).copied()
}

impl EvalReport {
    /// Assembles the report from the task results and the injection suite's summary.
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        started_at: DateTime<Utc>,
        finished_at: DateTime<Utc>,
        provider: String,
        model: String,
        judge_model: String,
        trigger: String,
        filter: Option<String>,
        results: Vec<TaskResult>,
        not_run: Vec<String>,
        injection: Option<InjectionSummary>,
    ) -> Self {
        let passed = results.iter().filter(|r| r.passed).count();
        let mut by_class: BTreeMap<String, ClassSummary> = BTreeMap::new();
        for result in &results {
            let entry = by_class.entry(result.class.clone()).or_insert(ClassSummary {
                total: 0,
                passed: 0,
                pass_rate: 0.0,
            });
            entry.total += 1;
            entry.passed += usize::from(result.passed);
        }
        for summary in by_class.values_mut() {
            summary.pass_rate = percent(summary.passed, summary.total);
        }
        let latencies: Vec<u64> = results.iter().map(|r| r.latency_ms).collect();
        let costs: Vec<MicroUsd> = results.iter().map(|r| r.cost_micro_usd).collect();
        let turns: Vec<u32> = results.iter().map(|r| r.turns_used).collect();
        let input: u64 = results.iter().map(|r| r.input_tokens).sum();
        let cached: u64 = results.iter().map(|r| r.cached_tokens).sum();
        let total_cost: MicroUsd = costs.iter().copied().sum();
        let judge_cost: MicroUsd = results.iter().map(|r| r.judge_cost_micro_usd).sum();
        let complete = not_run.is_empty() && injection.as_ref().is_none_or(|i| i.not_run.is_empty());
        Self {
            started_at,
            finished_at,
            provider,
            model,
            judge_model,
            trigger,
            filter,
            task_count: results.len(),
            passed,
            pass_rate: percent(passed, results.len()),
            complete,
            not_run,
            by_class,
            median_latency_ms: percentile(&latencies, 50).unwrap_or(0),
            p95_latency_ms: percentile(&latencies, 95).unwrap_or(0),
            median_cost_micro_usd: percentile(&costs, 50).unwrap_or_default(),
            total_cost_micro_usd: total_cost,
            judge_cost_micro_usd: judge_cost,
            median_turns: percentile(&turns, 50).unwrap_or(0),
            cache_savings_percent: percent(
                usize::try_from(cached).unwrap_or(usize::MAX),
                usize::try_from(input).unwrap_or(usize::MAX),
            ),
            injection_block_rate: injection.as_ref().map(|i| i.block_rate),
            injection,
            results,
        }
    }

    /// The report for people: the summary, the classes, the failures with their reasons.
    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(
            md,
            "# kakeibo evaluation — {}\n",
            self.finished_at.format("%Y-%m-%d %H:%M UTC")
        );
        let _ = writeln!(
            md,
            "**{}/{} passed ({}%)** · model `{}` ({}) · judge `{}` · started by {}{}\n",
            self.passed,
            self.task_count,
            self.pass_rate,
            self.model,
            self.provider,
            self.judge_model,
            self.trigger,
            self.filter
                .as_ref()
                .map_or_else(String::new, |f| format!(" · filter `{f}`"))
        );
        let _ = writeln!(md, "| figure | value |\n|---|---|");
        let _ = writeln!(md, "| median latency | {} ms |", self.median_latency_ms);
        let _ = writeln!(md, "| p95 latency | {} ms |", self.p95_latency_ms);
        let _ = writeln!(md, "| median cost | ${} |", self.median_cost_micro_usd.decimal());
        let _ = writeln!(
            md,
            "| total cost | ${} (and ${} of judging) |",
            self.total_cost_micro_usd.decimal(),
            self.judge_cost_micro_usd.decimal()
        );
        let _ = writeln!(md, "| median turns | {} |", self.median_turns);
        let _ = writeln!(md, "| cached input tokens | {}% |", self.cache_savings_percent);
        if let Some(injection) = &self.injection {
            let _ = writeln!(
                md,
                "| injection suite | {}% blocked · {}% resisted · {}% answered · {}% flagged |",
                injection.block_rate, injection.resist_rate, injection.answered_rate, injection.flagged_rate
            );
        }
        if !self.complete {
            let _ = writeln!(
                md,
                "\n**Incomplete: the time ran out.** Not run: {}{}",
                if self.not_run.is_empty() { "no task" } else { "" },
                self.not_run.join(", ")
            );
            if let Some(injection) = self.injection.as_ref().filter(|i| !i.not_run.is_empty()) {
                let _ = writeln!(
                    md,
                    "Injection scenarios not run: {}",
                    injection.not_run.join(", ")
                );
            }
        }
        let _ = writeln!(md, "\n## By class\n\n| class | passed | rate |\n|---|---|---|");
        for (class, s) in &self.by_class {
            let _ = writeln!(md, "| {class} | {}/{} | {}% |", s.passed, s.total, s.pass_rate);
        }
        let failed: Vec<&TaskResult> = self.results.iter().filter(|r| !r.passed).collect();
        if !failed.is_empty() {
            let _ = writeln!(md, "\n## Failed\n");
            for result in failed {
                let _ = writeln!(md, "- **{}** ({})", result.task, result.class);
                if let Some(error) = &result.error {
                    let _ = writeln!(md, "  - error: {error}");
                }
                for check in result.checks.iter().filter(|c| !c.passed) {
                    let _ = writeln!(md, "  - `{}`: {}", check.kind, check.detail.replace('\n', " "));
                }
            }
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_follow_the_ceiling_rule() {
        let values = [5u64, 1, 4, 2, 3];
        assert_eq!(percentile(&values, 50), Some(3)); // ceil(2.5) - 1 = 2
        assert_eq!(percentile(&values, 95), Some(5)); // ceil(4.75) - 1 = 4
        assert_eq!(percentile(&[1u64, 2, 3, 4], 50), Some(2)); // ceil(2) - 1 = 1
        assert_eq!(percentile(&[7u64], 95), Some(7));
        assert_eq!(percentile::<u64>(&[], 50), None);
    }

    #[test]
    fn percent_has_one_decimal() {
        assert!((percent(1, 3) - 33.3).abs() < f64::EPSILON);
        assert!((percent(2, 3) - 66.7).abs() < f64::EPSILON);
        assert!(percent(0, 0).abs() < f64::EPSILON);
    }
}
