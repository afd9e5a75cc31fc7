//! A run of the built-in suite with a process's settings, stored when it ends: what the `eval`
//! function does on its schedule and what the local server does when the operator asks.

use std::time::Instant;

use kakeibo_core::{Provider, prompt::SYSTEM_PROMPT};
use kakeibo_ledger::EVAL_OWNER;
use kakeibo_providers::select::{ModelRole, Models, Settings};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Schedule,
    Admin,
}

impl Trigger {
    /// The trigger an invocation's event names: `{"trigger": "admin"}` from the admin function,
    /// anything else (the schedule's input, an EventBridge event) is the schedule.
    pub fn of(event: &serde_json::Value) -> Self {
        if event.get("trigger").and_then(serde_json::Value::as_str) == Some("admin") {
            Self::Admin
        } else {
            Self::Schedule
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Schedule => "schedule",
            Self::Admin => "admin",
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
