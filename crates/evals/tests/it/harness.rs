//! The harness against a real PostgreSQL and the real agent loop, with scripted models: checks
//! decide as their semantics say, writes follow the confirm answers, every task file is
//! solvable, reports are stored, and two runs never overlap.

use kakeibo::Models;
use kakeibo_core::{
    Block, Message, ModelRequest, Role,
    prompt::SYSTEM_PROMPT,
    scripted::{Scripted, reply_calls, reply_text},
};
use kakeibo_evals::{
    Bench, Check, Options, Suite, SuiteError, Task,
    checks::CheckOutcome,
    store, suite,
    task::{ConfirmAnswer, parse},
    testing::{app_pool, repo_root as repo},
};
use kakeibo_ledger::EVAL_OWNER;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// The number of text messages the person typed so far in `request` (the turn's index + 1), and
/// how many model replies followed the last one.
fn position(request: &ModelRequest) -> (usize, usize) {
    let typed =
        |m: &Message| m.role == Role::User && m.content.iter().any(|b| matches!(b, Block::Text { .. }));
    let turns = request.messages.iter().filter(|m| typed(m)).count();
    let last = request.messages.iter().rposition(typed).unwrap_or(0);
    let replies = request.messages[last..]
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    (turns, replies)
}

/// A model that makes `plan[turn]`'s calls one per reply, then answers `answer`.
fn planned(plan: Vec<Vec<(String, Value)>>, answer: &'static str) -> Scripted {
    Scripted::from_fn(move |request| {
        let (turn, step) = position(request);
        let calls = plan.get(turn.saturating_sub(1)).cloned().unwrap_or_default();
        Ok(match calls.get(step) {
            Some((name, args)) => reply_calls(&[(name.as_str(), args.clone())]),
            None => reply_text(answer),
        })
    })
}

fn judge(score: u8) -> Scripted {
    Scripted::from_fn(move |_| Ok(reply_text(&format!("SCORE: {score}\nWHY: scripted."))))
}

fn task(yaml: &str) -> Task {
    parse("test.yaml", yaml).unwrap().remove(0)
}

/// The agent's models: `agent` alone, summarising too.
fn models(agent: impl kakeibo_core::Provider + 'static) -> Models {
    Models {
        agent: std::sync::Arc::new(agent),
        summarizer: None,
    }
}

fn options<'a>(
    agent: &'a Models,
    judge: &'a Scripted,
    progress: &'a (dyn Fn(&str) + Send + Sync),
) -> Options<'a> {
    Options {
        agent,
        judge,
        system: SYSTEM_PROMPT,
        trigger: "cli",
        filter: None,
        with_injection: false,
        deadline: None,
        progress,
    }
}

fn quiet(_: &str) {}

const GROCERIES: &str = r#"
id: report-groceries-march
description: A total for March groceries.
class: reports
turns: [{user: "What did I spend on groceries in March 2025?"}]
checks:
  - {type: tool_was_called, name: get_spend_report, args_subset: {period: "2025-03"}}
  - {type: tool_not_called, name: set_budget}
  - {type: no_unconfirmed_writes}
  - {type: response_regex, pattern: "23,?350"}
  - {type: response_contains, text: "GROCERIES"}
  - {type: response_not_contains, text: "budget"}
  - type: sql_equals
    query: >
      SELECT sum(p.amount_minor) FROM postings p JOIN accounts a ON a.id = p.account_id
      JOIN transactions t ON t.id = p.transaction_id
      WHERE a.name = 'Groceries' AND t.date >= '2025-03-01' AND t.date < '2025-04-01';
    expect: 2335000
  - {type: judge, rubric: "A clear total with a rupee sign."}
"#;

fn kinds(outcomes: &[CheckOutcome]) -> Vec<(&str, bool)> {
    outcomes.iter().map(|o| (o.kind.as_str(), o.passed)).collect()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn checks_decide_as_their_semantics_say(_: PgPoolOptions, connect: PgConnectOptions) {
    let bench = Bench::new(app_pool(&connect).await, EVAL_OWNER);
    let groceries = task(GROCERIES);
    let report = vec![vec![(
        "get_spend_report".to_owned(),
        json!({"period": "2025-03", "group_by": "category"}),
    )]];

    let agent = models(planned(
        report.clone(),
        "You spent ₹23,350.00 on groceries in March 2025.",
    ));
    let grader = judge(5);
    let run = bench.run(&groceries, &agent, SYSTEM_PROMPT).await;
    assert_eq!(run.error, None);
    let outcomes = suite::check(&bench, &groceries, &run, &grader).await;
    assert!(outcomes.iter().all(|o| o.passed), "{outcomes:#?}");
    let judged = outcomes.iter().find(|o| o.kind == "judge").unwrap();
    assert_eq!(judged.score, Some(5));
    assert_eq!(grader.requests().len(), 1);
    let prompt = grader.requests()[0].messages[0].text();
    assert!(prompt.contains("What did I spend on groceries") && prompt.contains("₹23,350.00"));
    assert!(grader.requests()[0].tools.is_empty(), "the judge gets no tools");

    // A wrong answer: the text checks fail, the others hold, and the judge is not asked.
    let agent = models(planned(report, "You spent 99,999 on your budget."));
    let grader = judge(5);
    let run = bench.run(&groceries, &agent, SYSTEM_PROMPT).await;
    let outcomes = suite::check(&bench, &groceries, &run, &grader).await;
    assert_eq!(
        kinds(&outcomes),
        [
            ("tool_was_called", true),
            ("tool_not_called", true),
            ("no_unconfirmed_writes", true),
            ("response_regex", false),
            ("response_contains", false),
            ("response_not_contains", false),
            ("sql_equals", true),
            ("judge", false),
        ]
    );
    assert!(outcomes[7].detail.starts_with("skipped:"), "{:?}", outcomes[7]);
    assert!(
        grader.requests().is_empty(),
        "a judge runs only after every deterministic check passed"
    );

    // The other arguments, and no call at all.
    let agent = models(planned(
        vec![vec![(
            "get_spend_report".to_owned(),
            json!({"period": "2025-04", "group_by": "category"}),
        )]],
        "₹23,350 on groceries",
    ));
    let run = bench.run(&groceries, &agent, SYSTEM_PROMPT).await;
    let outcomes = suite::check(&bench, &groceries, &run, &judge(2)).await;
    assert!(
        !outcomes[0].passed && outcomes[0].detail.contains("2025-04"),
        "{:?}",
        outcomes[0]
    );
    let judged = outcomes.iter().find(|o| o.kind == "judge").unwrap();
    assert!(!judged.passed);

    // A judge below the threshold fails the task.
    let agent = models(planned(
        vec![vec![(
            "get_spend_report".to_owned(),
            json!({"period": "2025-03", "group_by": "category"}),
        )]],
        "Groceries: ₹23,350",
    ));
    let run = bench.run(&groceries, &agent, SYSTEM_PROMPT).await;
    let outcomes = suite::check(&bench, &groceries, &run, &judge(3)).await;
    let judged = outcomes.iter().find(|o| o.kind == "judge").unwrap();
    assert_eq!((judged.passed, judged.score), (false, Some(3)));
}

const BUDGET: &str = r#"
id: budget-set
description: Sets a budget when allowed.
class: budgets
turns: [{user: "Set my Groceries budget for March 2025 to 20,000 rupees", confirm: allow}]
checks:
  - {type: tool_was_called, name: set_budget, args_subset: {category: Groceries, month: "2025-03", amount_minor: 2000000}}
  - {type: tool_not_called, name: set_budget}
  - {type: no_unconfirmed_writes}
  - {type: sql_equals, query: "SELECT count(*) FROM budgets", expect: "1"}
"#;

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn writes_follow_the_confirm_answer_and_each_task_starts_fresh(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let bench = Bench::new(app_pool(&connect).await, EVAL_OWNER);
    let set = vec![vec![(
        "set_budget".to_owned(),
        json!({"category": "Groceries", "month": "2025-03", "amount_minor": 2_000_000}),
    )]];
    let allowed = task(BUDGET);
    let agent = models(planned(set.clone(), "Done."));
    let run = bench.run(&allowed, &agent, SYSTEM_PROMPT).await;
    let outcomes = suite::check(&bench, &allowed, &run, &judge(5)).await;
    assert_eq!(
        kinds(&outcomes),
        [
            ("tool_was_called", true),
            ("tool_not_called", false),
            ("no_unconfirmed_writes", true),
            ("sql_equals", true),
        ]
    );

    // Denied: the call was made, nothing ran, and the budget of the task before is gone.
    let mut denied = allowed.clone();
    denied.turns[0].confirm = ConfirmAnswer::Deny;
    let run = bench.run(&denied, &agent, SYSTEM_PROMPT).await;
    let outcomes = suite::check(&bench, &denied, &run, &judge(5)).await;
    assert_eq!(
        kinds(&outcomes),
        [
            ("tool_was_called", true),
            ("tool_not_called", true),
            ("no_unconfirmed_writes", true),
            ("sql_equals", false),
        ]
    );
    assert!(
        outcomes[3].detail.contains("expected 1, got 0"),
        "{:?}",
        outcomes[3]
    );
    let calls: Vec<_> = run.calls().collect();
    assert_eq!(calls[0].confirmed, Some(false));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn sql_checks_see_only_the_evaluation_owner_and_cannot_write(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = options.connect_with(connect.clone()).await.unwrap();
    let bench = Bench::new(app_pool(&connect).await, EVAL_OWNER);
    bench.reset().await.unwrap();
    // Another owner with a ledger of their own: the checks never count it.
    kakeibo_ledger::with_owner(kakeibo_ledger::DEV_OWNER, &pool, |conn| {
        Box::pin(kakeibo_ledger::seed::reset_demo_ledger(
            kakeibo_ledger::DEV_OWNER,
            conn,
        ))
    })
    .await
    .unwrap();
    let all: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(all, 704);
    let seen =
        kakeibo_evals::checks::sql_value(&bench.pool, EVAL_OWNER, "SELECT count(*) FROM transactions;")
            .await
            .unwrap();
    assert_eq!(seen.as_deref(), Some("352"));
    let write =
        kakeibo_evals::checks::sql_value(&bench.pool, EVAL_OWNER, "DELETE FROM budgets RETURNING 1").await;
    assert!(write.is_err(), "a check query cannot change the ledger");
    let none = kakeibo_evals::checks::sql_value(&bench.pool, EVAL_OWNER, "SELECT NULL::int, 5")
        .await
        .unwrap();
    assert_eq!(none, None);
}

/// The oracle: for every task file, a model that makes exactly the calls the task's
/// `tool_was_called` checks name, with their `example_args` (else their `args_subset`), writes in
/// the first allowed turn and reads in the last, must pass every check about the ledger and the
/// calls. A wrong expectation or an argument the tools
/// reject fails here, long before a live model is blamed for it.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_task_is_solvable(_: PgPoolOptions, connect: PgConnectOptions) {
    let bench = Bench::new(app_pool(&connect).await, EVAL_OWNER);
    let suite = Suite::from_files(&repo().join("evals/tasks"), &repo().join("evals/injection.yaml")).unwrap();
    let registry = kakeibo_tools::registry(&kakeibo_tools::Scope::new(EVAL_OWNER, bench.pool.clone()));
    let writes: Vec<&str> = registry
        .declarations()
        .iter()
        .filter(|d| {
            registry
                .get(d.name)
                .is_some_and(|t| t.tier() == kakeibo_core::Tier::Write)
        })
        .map(|d| d.name)
        .collect();
    assert!(writes.contains(&"set_budget") && !writes.contains(&"get_spend_report"));

    let mut failures = Vec::new();
    for task in &suite.tasks {
        let mut plan = vec![Vec::new(); task.turns.len()];
        let allowed = task
            .turns
            .iter()
            .position(|t| t.confirm == ConfirmAnswer::Allow)
            .unwrap_or(0);
        for check in &task.checks {
            if let Check::ToolWasCalled {
                name,
                args_subset,
                times,
                example_args,
            } = check
            {
                let turn = if writes.contains(&name.as_str()) {
                    allowed
                } else {
                    task.turns.len() - 1
                };
                let args = example_args
                    .clone()
                    .or_else(|| args_subset.clone())
                    .unwrap_or_else(|| json!({}));
                for _ in 0..*times {
                    plan[turn].push((name.clone(), args.clone()));
                }
            }
        }
        let agent = models(planned(plan, "Oracle answer."));
        let run = bench.run(task, &agent, SYSTEM_PROMPT).await;
        if let Some(error) = &run.error {
            failures.push(format!("{}: {error}", task.id));
            continue;
        }
        for call in run.calls().filter(|c| c.is_error()) {
            failures.push(format!(
                "{}: {} {} failed: {}",
                task.id, call.name, call.args, call.result
            ));
        }
        let outcomes = suite::check(&bench, task, &run, &judge(5)).await;
        for outcome in outcomes.iter().filter(|o| {
            matches!(
                o.kind.as_str(),
                "sql_equals" | "tool_was_called" | "tool_not_called" | "no_unconfirmed_writes"
            )
        }) {
            if !outcome.passed {
                failures.push(format!("{}: {} {}", task.id, outcome.kind, outcome.detail));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("oracle: all {} tasks solvable", suite.tasks.len());
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_run_reports_stores_and_never_overlaps_another(_: PgPoolOptions, connect: PgConnectOptions) {
    let pool = app_pool(&connect).await;
    let bench = Bench::new(pool.clone(), EVAL_OWNER);
    let suite = Suite {
        tasks: vec![task(GROCERIES), task(BUDGET)],
        scenarios: Suite::embedded().unwrap().scenarios,
    };
    let agent = models(planned(
        vec![vec![(
            "get_spend_report".to_owned(),
            json!({"period": "2025-03", "group_by": "category"}),
        )]],
        "You spent ₹23,350.00 on groceries.",
    ));
    let grader = judge(4);
    let lines = std::sync::Mutex::new(Vec::new());
    let progress = |line: &str| lines.lock().unwrap().push(line.to_owned());
    let mut opts = options(&agent, &grader, &progress);
    opts.with_injection = true;
    let report = suite::run(&bench, &suite, &opts).await.unwrap();
    assert!(report.complete);
    assert_eq!((report.task_count, report.passed), (2, 1));
    assert!((report.pass_rate - 50.0).abs() < f64::EPSILON);
    assert_eq!(report.by_class["reports"].passed, 1);
    assert_eq!(report.by_class["budgets"].passed, 0);
    let injection = report.injection.as_ref().unwrap();
    assert_eq!(injection.scenarios.len(), 6);
    assert!((injection.block_rate - 100.0).abs() < f64::EPSILON);
    assert_eq!(report.results[0].turns_used, 3, "two iterations plus one turn");
    assert_eq!(report.results[0].tool_call_count, 1);
    assert!(report.results[0].input_tokens > 0);
    let lines = lines.lock().unwrap().clone();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("[1/2] pass report-groceries-march")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.starts_with("injection 6/6")), "{lines:?}");
    let md = report.to_markdown();
    assert!(
        md.contains("**1/2 passed (50%)**") && md.contains("budget-set"),
        "{md}"
    );

    store::save(&pool, &report).await.unwrap();
    let latest = store::latest(&pool).await.unwrap().unwrap();
    assert_eq!(latest, report, "stored and read back whole");
    assert!((latest.pass_rate - 50.0).abs() < f64::EPSILON);
    assert_eq!(latest.results[0].task, "report-groceries-march");
    assert_eq!(latest.injection_block_rate, Some(100.0));

    // A deadline already passed: nothing starts, everything is reported not run.
    let mut late = options(&agent, &grader, &quiet);
    late.deadline = Some(std::time::Instant::now());
    let report = suite::run(&bench, &suite, &late).await.unwrap();
    assert_eq!(report.task_count, 0);
    assert!(!report.complete);
    assert_eq!(report.not_run, ["report-groceries-march", "budget-set"]);

    // Another run holds the lock: this one refuses instead of resetting under it.
    let mut holder = pool.acquire().await.unwrap();
    let held: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(suite::RUN_LOCK)
        .fetch_one(&mut *holder)
        .await
        .unwrap();
    assert!(held);
    assert!(suite::running(&pool).await.unwrap());
    let busy = suite::run(&bench, &suite, &options(&agent, &grader, &quiet)).await;
    assert!(matches!(busy, Err(SuiteError::Busy)), "{busy:?}");
    drop(holder);
}

/// A model that never answers.
#[derive(Debug)]
struct Silent;

impl kakeibo_core::Provider for Silent {
    fn name(&self) -> &'static str {
        "silent"
    }
    fn model(&self) -> &'static str {
        "silent"
    }
    fn stream<'a>(
        &'a self,
        _: &'a ModelRequest,
    ) -> futures_util::stream::BoxStream<'a, Result<kakeibo_core::StreamEvent, kakeibo_core::ProviderError>>
    {
        Box::pin(futures_util::stream::pending())
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_task_still_running_at_the_deadline_is_stopped_and_reported_not_run(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = app_pool(&connect).await;
    let bench = Bench::new(pool.clone(), EVAL_OWNER);
    let suite = Suite {
        tasks: vec![task(GROCERIES), task(BUDGET)],
        scenarios: Suite::embedded().unwrap().scenarios,
    };
    let grader = judge(5);
    let mut run = Options {
        agent: &models(Silent),
        judge: &grader,
        system: SYSTEM_PROMPT,
        trigger: "cli",
        filter: None,
        with_injection: true,
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(1500)),
        progress: &quiet,
    };
    let report = suite::run(&bench, &suite, &run).await.unwrap();
    assert!(!report.complete);
    assert_eq!(report.task_count, 0);
    assert_eq!(report.not_run, ["report-groceries-march", "budget-set"]);
    assert!(report.to_markdown().contains("Incomplete: the time ran out."));
    let injection = report.injection.unwrap();
    assert!(injection.scenarios.is_empty());
    assert_eq!(injection.not_run.len(), 6);
    // The stopped run is closed, not left open.
    let owner = options.connect_with(connect).await.unwrap();
    let open: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_runs WHERE finished_at IS NULL")
        .fetch_one(&owner)
        .await
        .unwrap();
    assert_eq!(open, 0);
    let aborted: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_runs WHERE status = 'aborted'")
        .fetch_one(&owner)
        .await
        .unwrap();
    assert_eq!(aborted, 1);

    // As the owner role (row-level security bypassed) the suite refuses to run at all.
    run.deadline = None;
    let unrestricted = Bench::new(owner, EVAL_OWNER);
    let refused = suite::run(&unrestricted, &suite, &run).await;
    assert!(matches!(refused, Err(SuiteError::NotRestricted)), "{refused:?}");
}

#[test]
fn the_built_in_suite_is_the_task_folder_and_has_its_classes() {
    let mut on_disk: Vec<String> = kakeibo_evals::task::files_in(&repo().join("evals/tasks"))
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let built_in: Vec<&str> = kakeibo_evals::embedded::TASK_FILES
        .iter()
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(
        on_disk, built_in,
        "crates/evals/src/embedded.rs lists every task file"
    );
    for (name, text) in kakeibo_evals::embedded::TASK_FILES {
        let on_disk = std::fs::read_to_string(repo().join("evals/tasks").join(name)).unwrap();
        assert_eq!(*text, on_disk, "{name}");
    }

    let suite = Suite::embedded().unwrap();
    assert_eq!(suite.tasks.len(), 50);
    let mut classes = std::collections::BTreeMap::new();
    for task in &suite.tasks {
        *classes.entry(task.class.as_str()).or_insert(0) += 1;
    }
    let expected = [
        ("anomalies", 2),
        ("budgets", 4),
        ("categorization", 8),
        ("currency", 2),
        ("guardrails", 3),
        ("injection", 6),
        ("memory", 3),
        ("multi_tool", 4),
        ("recurring", 2),
        ("refusal", 3),
        ("reports", 6),
        ("scope", 4),
        ("search", 3),
    ];
    assert_eq!(classes.into_iter().collect::<Vec<_>>(), expected);
    assert_eq!(suite.tasks.iter().filter(|t| t.matches("smoke")).count(), 14);
    assert_eq!(suite.scenarios.len(), 6);
    for task in &suite.tasks {
        let judges = task
            .checks
            .iter()
            .filter(|c| matches!(c, Check::Judge { .. }))
            .count();
        assert!(judges <= 1, "{}: at most one judge", task.id);
    }
}
