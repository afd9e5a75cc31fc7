//! The eval function's handler against a real PostgreSQL, with the scripted model playing agent
//! and judge: the whole built-in suite runs from a schedule's event and its report is stored;
//! without a model it fails and says what to set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    collections::HashMap,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use kakeibo_evals::{
    launch::{Invocation, LaunchError, Trigger},
    store,
    testing::{app_pool, repo_root as repo},
};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// The scheduler's event from the corpus when it is there, else the input our schedule sends.
fn schedule_event() -> Value {
    let corpus = repo().join("../shared/corpus/aws-lambda/powertools-python__eventBridgeSchedulerEvent.json");
    if let Ok(text) = std::fs::read_to_string(&corpus) {
        serde_json::from_str(&text).unwrap()
    } else {
        eprintln!(
            "skipped the corpus's scheduler event: {} is not here",
            corpus.display()
        );
        json!({"trigger": "schedule"})
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_scheduled_run_evaluates_the_whole_suite_and_stores_its_report(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = app_pool(&connect).await;
    let script = repo().join("fixtures/scripts/eval.yaml");
    let vars = HashMap::from([(
        "KAKEIBO_PROVIDER".to_owned(),
        format!("script:{}", script.display()),
    )]);
    let var = |name: &str| vars.get(name).cloned();
    // What the task files hold, not a number typed here.
    let suite = kakeibo_evals::Suite::embedded().unwrap();
    let (tasks, classes) = (
        suite.tasks.len(),
        suite
            .tasks
            .iter()
            .map(|t| t.class.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
    );
    let deadline = Instant::now() + Duration::from_hours(1);
    let summary = kakeibo_eval::handle(&pool, &var, &schedule_event(), Some(deadline))
        .await
        .unwrap();
    assert_eq!(summary.trigger, Trigger::Schedule);
    assert!(summary.complete);
    assert_eq!(summary.task_count, tasks);
    assert_eq!(summary.not_run, 0);
    assert_eq!(summary.injection_block_rate, Some(100.0));
    let passed = summary.passed as u64;
    assert!(
        passed < tasks as u64,
        "a scripted model cannot pass every task: {summary:?}"
    );

    let latest = store::latest(&pool).await.unwrap().unwrap();
    assert_eq!(latest.trigger, "schedule");
    assert_eq!(latest.task_count as u64, tasks as u64);
    assert_eq!(latest.passed as u64, passed);
    assert_eq!(latest.by_class.len(), classes);
    let groceries = latest
        .results
        .iter()
        .find(|r| r.answers.first().is_some_and(|a| a.contains("₹23,350.00")))
        .expect("a task about March groceries got the scripted answer");
    assert!(groceries.tool_call_count >= 1, "{groceries:?}");

    // Started by the admin function.
    let started = serde_json::to_value(Invocation::admin("operator@example.com")).unwrap();
    let admin = kakeibo_eval::handle(&pool, &var, &started, Some(Instant::now()))
        .await
        .unwrap();
    assert_eq!(admin.trigger, Trigger::Admin);
    assert!(!admin.complete);
    assert_eq!(admin.not_run, tasks, "a deadline already passed starts no task");
    // The incomplete run is stored, but the latest report served stays the whole one.
    let latest = store::latest(&pool).await.unwrap().unwrap();
    assert_eq!(latest.trigger, "schedule");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn without_a_model_it_fails_and_names_the_settings(_: PgPoolOptions, connect: PgConnectOptions) {
    let pool = app_pool(&connect).await;
    let error = kakeibo_eval::handle(&pool, &|_| None, &json!({}), None)
        .await
        .unwrap_err();
    assert!(matches!(error, LaunchError::NoModel(_)), "{error}");
    assert!(error.to_string().contains("GEMINI_API_KEY"), "{error}");
    assert!(store::latest(&pool).await.unwrap().is_none(), "nothing is stored");
}

#[test]
fn every_task_ends_a_minute_before_the_invocation() {
    let now = SystemTime::now();
    let now_ms = u64::try_from(now.duration_since(UNIX_EPOCH).unwrap().as_millis()).unwrap();
    let fifteen_minutes = kakeibo_eval::task_deadline(now_ms + 900_000, now);
    let left = fifteen_minutes.saturating_duration_since(Instant::now());
    assert!(
        left <= Duration::from_mins(14) && left > Duration::from_mins(14) - Duration::from_secs(10),
        "{left:?}"
    );
    let nearly_over = kakeibo_eval::task_deadline(now_ms + 30_000, now);
    assert!(nearly_over <= Instant::now());
}

#[test]
fn what_the_admin_function_sends_is_an_admin_start_and_anything_else_the_schedule() {
    let sent = serde_json::to_value(Invocation::admin("operator@example.com")).unwrap();
    assert_eq!(
        sent,
        json!({"trigger": "admin", "requested_by": "operator@example.com"})
    );
    assert_eq!(Invocation::of(&sent).trigger, Trigger::Admin);
    assert_eq!(Invocation::of(&schedule_event()).trigger, Trigger::Schedule);
    assert_eq!(
        Invocation::of(&json!({"trigger": "sideways"})).trigger,
        Trigger::Schedule
    );
    assert_eq!(Invocation::of(&json!(null)).trigger, Trigger::Schedule);
}
