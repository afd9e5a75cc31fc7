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
    /// The task's answers that state a figure, and of those, how many state at least one that
    /// no tool of its turn returned (reports from before the check read as 0).
    #[serde(default)]
    pub answers_with_figures: usize,
    #[serde(default)]
    pub ungrounded_answers: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClassSummary {
    pub total: usize,
    pub passed: usize,
    pub pass_rate: f64,
    /// The class's answers (one per turn), and those with at least one ungrounded figure.
    #[serde(default)]
    pub answers: usize,
    #[serde(default)]
    pub ungrounded_answers: usize,
    /// `ungrounded_answers` of `answers`, in percent.
    #[serde(default)]
    pub ungrounded_rate: f64,
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
    /// Every task's answers (one per turn), and those stating at least one figure no tool of
    /// their turn returned; the share in percent.
    #[serde(default)]
    pub answers: usize,
    #[serde(default)]
    pub ungrounded_answers: usize,
    #[serde(default)]
    pub ungrounded_answer_rate: f64,
    /// What the run is and is not a measure of, shown above its figures (a local 135M model's run
    /// says it tests the harness, not kakeibo's quality).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
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
                answers: 0,
                ungrounded_answers: 0,
                ungrounded_rate: 0.0,
            });
            entry.total += 1;
            entry.passed += usize::from(result.passed);
            entry.answers += result.answers.len();
            entry.ungrounded_answers += result.ungrounded_answers;
        }
        for summary in by_class.values_mut() {
            summary.pass_rate = percent(summary.passed, summary.total);
            summary.ungrounded_rate = percent(summary.ungrounded_answers, summary.answers);
        }
        let answers: usize = results.iter().map(|r| r.answers.len()).sum();
        let ungrounded_answers: usize = results.iter().map(|r| r.ungrounded_answers).sum();
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
            answers,
            ungrounded_answers,
            ungrounded_answer_rate: percent(ungrounded_answers, answers),
            label: None,
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
        if let Some(label) = &self.label {
            let _ = writeln!(md, "> {label}\n");
        }
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
        let _ = writeln!(
            md,
            "| answers with an ungrounded figure | {}% ({} of {}) |",
            self.ungrounded_answer_rate, self.ungrounded_answers, self.answers
        );
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
        let _ = writeln!(
            md,
            "\n## By class\n\n| class | passed | rate | answers with an ungrounded figure |\n|---|---|---|---|"
        );
        for (class, s) in &self.by_class {
            let _ = writeln!(
                md,
                "| {class} | {}/{} | {}% | {}% ({} of {}) |",
                s.passed, s.total, s.pass_rate, s.ungrounded_rate, s.ungrounded_answers, s.answers
            );
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

    fn task(class: &str, answers: usize, ungrounded: usize) -> TaskResult {
        TaskResult {
            task: format!("{class}-{answers}"),
            description: String::new(),
            class: class.into(),
            passed: true,
            deterministic_passed: true,
            judge_score: None,
            checks: Vec::new(),
            answers: vec!["an answer".into(); answers],
            latency_ms: 0,
            latency_ms_wall: 0,
            cost_micro_usd: MicroUsd(0),
            judge_cost_micro_usd: MicroUsd(0),
            turns_used: 1,
            tool_call_count: 0,
            input_tokens: 0,
            output_tokens: 0,
            cached_tokens: 0,
            error: None,
            run_ids: Vec::new(),
            answers_with_figures: answers,
            ungrounded_answers: ungrounded,
        }
    }

    #[test]
    fn answers_with_an_ungrounded_figure_are_counted_per_class_and_in_all() {
        let now = Utc::now();
        let results = vec![task("spend", 2, 1), task("spend", 1, 0), task("budget", 1, 0)];
        let report = EvalReport::assemble(
            now,
            now,
            "script".into(),
            "scripted".into(),
            "none".into(),
            "cli".into(),
            None,
            results,
            Vec::new(),
            None,
        );
        assert_eq!((report.answers, report.ungrounded_answers), (4, 1));
        assert!((report.ungrounded_answer_rate - 25.0).abs() < f64::EPSILON);
        let spend = &report.by_class["spend"];
        assert_eq!((spend.answers, spend.ungrounded_answers), (3, 1));
        assert!((spend.ungrounded_rate - 33.3).abs() < f64::EPSILON);
        assert_eq!(report.by_class["budget"].ungrounded_answers, 0);
        let md = report.to_markdown();
        assert!(
            md.contains("| answers with an ungrounded figure | 25% (1 of 4) |"),
            "{md}"
        );
        assert!(md.contains("| spend | 2/2 | 100% | 33.3% (1 of 3) |"), "{md}");
        // A report stored before the check reads back with none counted.
        let mut old = serde_json::to_value(&report).unwrap();
        for key in ["answers", "ungrounded_answers", "ungrounded_answer_rate"] {
            old.as_object_mut().unwrap().remove(key);
        }
        let back: EvalReport = serde_json::from_value(old).unwrap();
        assert_eq!(back.ungrounded_answers, 0);
    }

    #[test]
    fn percent_has_one_decimal() {
        assert!((percent(1, 3) - 33.3).abs() < f64::EPSILON);
        assert!((percent(2, 3) - 66.7).abs() < f64::EPSILON);
        assert!(percent(0, 0).abs() < f64::EPSILON);
    }
}
