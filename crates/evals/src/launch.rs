//! A run of the built-in suite with a process's settings, stored when it ends: what the `eval`
//! function does on its schedule and what the local server does when the operator asks.

use std::time::Instant;

use kakeibo_core::{MicroUsd, Provider, prompt::SYSTEM_PROMPT};
use kakeibo_ledger::EVAL_OWNER;
use kakeibo_providers::select::{ModelRole, Models, Settings};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;

use crate::{Bench, EvalReport, Options, Suite, SuiteError, store, suite};

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// No model to evaluate, or no judge: the settings say which.
    #[error("cannot evaluate: {0}")]
    NoModel(String),
    #[error(transparent)]
    Suite(#[from] SuiteError),
    #[error("the report could not be stored: {0}")]
    Store(sqlx::Error),
}

/// Where a run was started from, as reports record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Schedule,
    Admin,
}

impl Trigger {
    pub fn name(self) -> &'static str {
        match self {
            Self::Schedule => "schedule",
            Self::Admin => "admin",
        }
    }
}

/// The event that starts the `eval` function: `{"trigger": "admin", "requested_by": …}` when the
/// admin function starts it; a schedule's input, or an EventBridge event, when the schedule does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invocation {
    pub trigger: Trigger,
    /// The operator who asked, by address (never logged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<String>,
}

impl Invocation {
    /// An operator's start.
    pub fn admin(requested_by: &str) -> Self {
        Self {
            trigger: Trigger::Admin,
            requested_by: Some(requested_by.to_owned()),
        }
    }

    /// The invocation an event is: anything that does not read as one (a schedule's input, an
    /// EventBridge event) is the schedule's.
    pub fn of(event: &serde_json::Value) -> Self {
        Self::deserialize(event).unwrap_or(Self {
            trigger: Trigger::Schedule,
            requested_by: None,
        })
    }
}

/// What one run did, in a line: the `eval` function's answer, and the line it logs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunLine {
    pub trigger: Trigger,
    pub model: String,
    pub task_count: usize,
    pub passed: usize,
    pub pass_rate: f64,
    pub complete: bool,
    /// How many tasks did not run (the deadline came first).
    pub not_run: usize,
    pub injection_block_rate: Option<f64>,
    pub total_cost_micro_usd: MicroUsd,
}

impl RunLine {
    pub fn of(trigger: Trigger, report: &EvalReport) -> Self {
        Self {
            trigger,
            model: report.model.clone(),
            task_count: report.task_count,
            passed: report.passed,
            pass_rate: report.pass_rate,
            complete: report.complete,
            not_run: report.not_run.len(),
            injection_block_rate: report.injection_block_rate,
            total_cost_micro_usd: report.total_cost_micro_usd,
        }
    }
}

/// The agent's models and the judge's.
pub type EvalModels = (Models, Box<dyn Provider>);

/// The agent's and the judge's models `var` names, or why there are none.
pub fn models(var: &(dyn Fn(&str) -> Option<String> + Sync)) -> Result<EvalModels, LaunchError> {
    let settings = Settings::new(var);
    let agent = settings
        .models()
        .map_err(|e| LaunchError::NoModel(e.to_string()))?;
    let judge = settings
        .provider(ModelRole::Judge)
        .map_err(|e| LaunchError::NoModel(format!("the judge: {e}")))?;
    Ok((agent, judge))
}

/// Runs the built-in suite (injection suite included) with the models `var` names, on `pool`
/// (`app_user`), and stores the report. Tasks not started by `deadline` are reported not run.
pub async fn run_built_in(
    pool: &PgPool,
    var: &(dyn Fn(&str) -> Option<String> + Sync),
    trigger: Trigger,
    deadline: Option<Instant>,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<EvalReport, LaunchError> {
    let (agent, judge) = models(var)?;
    let suite = Suite::embedded().map_err(SuiteError::from)?;
    let options = Options {
        agent: &agent,
        judge: judge.as_ref(),
        system: SYSTEM_PROMPT,
        trigger: trigger.name(),
        filter: None,
        with_injection: true,
        deadline,
        progress,
    };
    let report = suite::run(&Bench::new(pool.clone(), EVAL_OWNER), &suite, &options).await?;
    store::save(pool, &report).await.map_err(LaunchError::Store)?;
    Ok(report)
}
