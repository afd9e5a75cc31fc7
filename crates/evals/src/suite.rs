//! A whole run: the injection suite, then every task in sequence, then the report.
//!
//! One run at a time per database: a run holds a PostgreSQL advisory lock for its duration (two
//! runs would reset the same ledger under each other). Deterministic checks run first; judges
//! run only when all of them passed and no turn ended in an error or blocked.

use std::time::Instant;

use chrono::Utc;
use kakeibo::Models;
use kakeibo_core::Provider;
use kakeibo_ledger::LedgerError;
use sqlx::Connection;

use crate::{
    checks::{CheckOutcome, evaluate, evaluate_sql},
    embedded, injection,
    injection::Scenario,
    judge,
    report::{EvalReport, TaskResult},
    run::{Bench, TaskRun},
    task::{self, Check, Task, TaskError},
};

/// The advisory lock key of an evaluation run.
pub const RUN_LOCK: i64 = 0x6b61_6b65_6962_6f65;

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("another evaluation is running on this database; try again when it has finished")]
    Busy,
    #[error("no task matches the filter {0:?}")]
    NothingSelected(String),
    #[error(
        "the evaluation's database role is not under row-level security, so its SQL checks could read other owners' rows: connect as app_user (APP_DATABASE_URL)"
    )]
    NotRestricted,
    #[error(transparent)]
    Tasks(#[from] TaskError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

kakeibo_ledger::database_errors_are_ledger_errors!(SuiteError);

/// The tasks and injection scenarios of a run.
#[derive(Debug, Clone)]
pub struct Suite {
    pub tasks: Vec<Task>,
    pub scenarios: Vec<Scenario>,
}

impl Suite {
    /// The suite built into the binary (what the `eval` function runs).
    pub fn embedded() -> Result<Self, TaskError> {
        Ok(Self {
            tasks: task::parse_all(embedded::TASK_FILES.iter().copied())?,
            scenarios: injection::parse(embedded::INJECTION.0, embedded::INJECTION.1)?,
        })
    }

    /// The suite from files: every `*.yaml` in `tasks_dir`, and the injection scenarios file.
    pub fn from_files(
        tasks_dir: &std::path::Path,
        injection_file: &std::path::Path,
    ) -> Result<Self, TaskError> {
        let text = std::fs::read_to_string(injection_file).map_err(|source| TaskError::Read {
            file: injection_file.display().to_string(),
            source,
        })?;
        Ok(Self {
            tasks: task::load_dir(tasks_dir)?,
            scenarios: injection::parse(&injection_file.display().to_string(), &text)?,
        })
    }

    /// Only the tasks `filter` selects (a class, a tag or part of an id).
    pub fn select(mut self, filter: &str) -> Result<Self, SuiteError> {
        self.tasks.retain(|t| t.matches(filter));
        if self.tasks.is_empty() {
            return Err(SuiteError::NothingSelected(filter.to_owned()));
        }
        Ok(self)
    }
}

/// How a run goes.
pub struct Options<'a> {
    pub agent: &'a Models,
    pub judge: &'a dyn Provider,
    pub system: &'a str,
    /// `schedule`, `admin` or `cli`.
    pub trigger: &'a str,
    pub filter: Option<String>,
    pub with_injection: bool,
    /// Every task (and its judge) ends by this instant (a function's time limit): one still
    /// running then is stopped, and it and the tasks after it are reported not run.
    pub deadline: Option<Instant>,
    pub progress: &'a (dyn Fn(&str) + Send + Sync),
}

impl std::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("agent", &self.agent.agent.model())
            .field("judge", &self.judge.model())
            .field("trigger", &self.trigger)
            .finish_non_exhaustive()
    }
}

/// Runs `suite` on `bench` and returns the report.
pub async fn run(bench: &Bench, suite: &Suite, options: &Options<'_>) -> Result<EvalReport, SuiteError> {
    if !bench.restricted().await? {
        return Err(SuiteError::NotRestricted);
    }
    let mut lock = bench.pool.acquire().await?;
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(RUN_LOCK)
        .fetch_one(&mut *lock)
        .await?;
    if !locked {
        return Err(SuiteError::Busy);
    }
    // A detached connection closes when dropped, and the lock goes with it, whatever happens;
    // it is also released by name first (a proxy in front may keep the server's session).
    let mut lock = lock.detach();
    let report = run_locked(bench, suite, options).await;
    let _ = sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(RUN_LOCK)
        .execute(&mut lock)
        .await;
    let _ = lock.close().await;
    report
}

/// Whether an evaluation is running on this database now. Read from `pg_locks`, never by taking
/// the lock to test it: a probe holding it for a moment would turn a run starting then away as
/// "another evaluation is running".
pub async fn running(pool: &sqlx::PgPool) -> Result<bool, sqlx::Error> {
    // A bigint advisory key is held as (classid, objid) = (high, low) 32 bits, objsubid 1.
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND objsubid = 1
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND classid::bigint = ($1 >> 32) AND objid::bigint = ($1 & 4294967295))",
    )
    .bind(RUN_LOCK)
    .fetch_one(pool)
    .await
}

/// `work`, unless `deadline` comes first (then `None`: it was stopped).
pub async fn within<T>(deadline: Option<Instant>, work: impl std::future::Future<Output = T>) -> Option<T> {
    match deadline {
        None => Some(work.await),
        Some(deadline) => {
            let left = deadline.saturating_duration_since(Instant::now());
            tokio::time::timeout(left, work).await.ok()
        }
    }
}

async fn run_locked(bench: &Bench, suite: &Suite, options: &Options<'_>) -> Result<EvalReport, SuiteError> {
    let started_at = Utc::now();
    bench.forget_history().await?;
    let injection = if options.with_injection && !suite.scenarios.is_empty() {
        Some(
            injection::run(
                bench,
                &suite.scenarios,
                options.agent,
                options.system,
                options.deadline,
                options.progress,
            )
            .await,
        )
    } else {
        None
    };
    let mut results = Vec::new();
    let mut not_run = Vec::new();
    for (i, task) in suite.tasks.iter().enumerate() {
        if !not_run.is_empty() {
            not_run.push(task.id.clone());
            continue;
        }
        let Some(result) = within(options.deadline, run_task(bench, task, options)).await else {
            (options.progress)(&format!(
                "time is up: {} and the tasks after it are not run",
                task.id
            ));
            not_run.push(task.id.clone());
            continue;
        };
        (options.progress)(&format!(
            "[{}/{}] {} {} ({} ms{})",
            i + 1,
            suite.tasks.len(),
            if result.passed { "pass" } else { "FAIL" },
            task.id,
            result.latency_ms,
            result
                .judge_score
                .map_or_else(String::new, |s| format!(", judge {s:.1}"))
        ));
        results.push(result);
    }
    // Runs of a task stopped by the deadline would stay open.
    bench.close_open_runs().await?;
    Ok(EvalReport::assemble(
        started_at,
        Utc::now(),
        options.agent.agent.name().to_owned(),
        options.agent.agent.model().to_owned(),
        options.judge.model().to_owned(),
        options.trigger.to_owned(),
        options.filter.clone(),
        results,
        not_run,
        injection,
    ))
}

/// Runs one task and checks it.
pub async fn run_task(bench: &Bench, task: &Task, options: &Options<'_>) -> TaskResult {
    let run = bench.run(task, options.agent, options.system).await;
    let checks = check(bench, task, &run, options.judge).await;
    result(task, &run, checks)
}

/// Every check of `task` on `run`: the deterministic ones first, the judges after them when
/// those all passed and the turns ended well.
pub async fn check(
    bench: &Bench,
    task: &Task,
    run: &TaskRun,
    judge_model: &dyn Provider,
) -> Vec<CheckOutcome> {
    let mut outcomes = Vec::new();
    for check in &task.checks {
        if let Some(outcome) = evaluate(check, run) {
            outcomes.push(outcome);
        } else if let Some(outcome) = evaluate_sql(&bench.pool, bench.owner, check).await {
            outcomes.push(outcome);
        }
    }
    let deterministic_passed = outcomes.iter().all(|o| o.passed);
    let failed_turn = run.failed();
    let tools = bench.tools();
    for check in &task.checks {
        let Check::Judge { rubric, threshold } = check else {
            continue;
        };
        let skipped = if deterministic_passed {
            failed_turn.as_ref().map(|why| format!("skipped: {why}"))
        } else {
            Some("skipped: a deterministic check failed".to_owned())
        };
        let outcome = match skipped {
            Some(why) => CheckOutcome::new(check, false, why),
            None => match judge::grade(judge_model, run, rubric, &tools).await {
                Ok(verdict) => CheckOutcome {
                    score: Some(verdict.score),
                    cost_micro_usd: Some(verdict.cost),
                    ..CheckOutcome::new(
                        check,
                        verdict.score >= *threshold,
                        format!("{}/5 (needs {threshold}): {}", verdict.score, verdict.why),
                    )
                },
                Err(e) => CheckOutcome::new(check, false, e),
            },
        };
        outcomes.push(outcome);
    }
    outcomes
}

fn result(task: &Task, run: &TaskRun, checks: Vec<CheckOutcome>) -> TaskResult {
    let deterministic_passed = checks.iter().filter(|c| c.kind != "judge").all(|c| c.passed);
    let scores: Vec<f64> = checks.iter().filter_map(|c| c.score).map(f64::from).collect();
    #[allow(clippy::cast_precision_loss)] // a handful of judges
    let judge_score = (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
    let passed = run.error.is_none() && checks.iter().all(|c| c.passed);
    let millis = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let usage = run
        .turns
        .iter()
        .fold(kakeibo_core::Usage::default(), |mut sum, t| {
            sum += t.usage;
            sum
        });
    let cost = run.turns.iter().map(|t| t.cost).sum();
    let judge_cost = checks.iter().filter_map(|c| c.cost_micro_usd).sum();
    TaskResult {
        task: task.id.clone(),
        description: task.description.clone(),
        class: task.class.clone(),
        passed,
        deterministic_passed,
        judge_score,
        checks,
        answers: run.answers(),
        latency_ms: run.turns.iter().map(|t| millis(t.latency)).sum(),
        latency_ms_wall: millis(run.wall),
        cost_micro_usd: cost,
        judge_cost_micro_usd: judge_cost,
        turns_used: run.turns.iter().map(|t| t.iterations + 1).sum(),
        tool_call_count: run.calls().count(),
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_tokens: usage.cached_tokens,
        error: run.error.clone(),
        run_ids: run.turns.iter().map(|t| t.run_id).collect(),
        answers_with_figures: run.turns.iter().filter(|t| t.figures.is_some()).count(),
        ungrounded_answers: run
            .turns
            .iter()
            .filter(|t| t.figures.as_ref().is_some_and(|f| f.ungrounded > 0))
            .count(),
    }
}
