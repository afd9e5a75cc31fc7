//! Subagents (`task`) in the CLI: the REPL hands a job to a subagent, whose calls show indented
//! under the task and whose one write is asked once, in the session's own `allow? [y/N]`; the
//! parent's answer quotes only the subagent's; the subagent's run is stored linked to the
//! parent's. `-p` declines the write unless `--allow-writes`, streams the subagent's events as
//! `subagent` lines, and `--no-subagents` leaves the tool out.

use std::{
    io::Write,
    process::{Output, Stdio},
};

use kakeibo_ledger::DEV_OWNER;
use serde_json::Value;
use sqlx::PgPool;

use crate::common;

fn script() -> String {
    let path = kakeibo_testkit::workspace_root().join("fixtures/scripts/subagents.yaml");
    format!("script:{}", path.display())
}

/// `kakeibo ARGS` on the subagents script with `input` piped in.
fn kakeibo(pool: &PgPool, args: &[&str], input: &str) -> Output {
    let mut child = common::kakeibo_command(pool)
        .args(args)
        .env("KAKEIBO_PROVIDER", script())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

async fn groceries_budget(pool: &PgPool) -> Option<i64> {
    sqlx::query_scalar(
        "SELECT b.amount_minor FROM budgets b JOIN accounts a ON a.id = b.account_id
         WHERE a.name LIKE '%Groceries' AND b.month = '2025-06'",
    )
    .fetch_optional(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_subagent_works_under_the_sessions_confirm(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();

    // The REPL: the write is asked once, answered yes, and runs.
    let out = kakeibo(&pool, &["chat"], "hand the budget to a subagent\ny\n/exit\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("  ⇢ subagent general-purpose: Set the Groceries budget"),
        "{stdout}"
    );
    for line in [
        "      → detect_recurring {}",
        "      → get_balances {}",
        "      ✎ set_budget {",
    ] {
        assert!(stdout.contains(line), "indented under the task: {line}\n{stdout}");
    }
    assert_eq!(stdout.matches("allow? [y/N]").count(), 1, "asked once: {stdout}");
    assert!(
        stdout.contains("The subagent reports: Groceries is budgeted at ₹20,000.00 for 2025-06."),
        "{stdout}"
    );
    assert_eq!(groceries_budget(&pool).await, Some(2_000_000));

    // The subagent's run names the parent's; the parent's row holds both runs' tokens.
    let linked: Vec<(uuid::Uuid, i64, i64, String)> = sqlx::query_as(
        "SELECT c.parent_run_id, p.input_tokens, c.input_tokens, c.question
         FROM trace_runs c JOIN trace_runs p ON p.id = c.parent_run_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(linked.len(), 1, "{linked:?}");
    let (_, parent_input, child_input, question) = &linked[0];
    assert_eq!(*child_input, 0, "its tokens are counted in the parent's row");
    assert!(*parent_input > 0);
    assert_eq!(question, "Set the Groceries budget");
    let model_calls: Vec<(uuid::Uuid, i64, i64)> = sqlx::query_as(
        "SELECT run_id, count(*), sum(input_tokens)::bigint FROM trace_events
         WHERE type = 'model_call' GROUP BY run_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let total: i64 = model_calls.iter().map(|(_, _, input)| input).sum();
    assert_eq!(
        total, *parent_input,
        "the run's usage is the sum of both runs' calls"
    );
    assert_eq!(model_calls.len(), 2);

    // -p declines the subagent's write by default: its answer says so, nothing changes.
    sqlx::query("DELETE FROM budgets").execute(&pool).await.unwrap();
    let out = kakeibo(
        &pool,
        &[
            "-p",
            "hand the budget to a subagent",
            "--output-format",
            "stream-json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events = common::events(&out);
    let nested: Vec<&Value> = events.iter().filter(|e| e["type"] == "subagent").collect();
    assert_eq!(nested.len(), 6, "three calls and their results: {events:?}");
    assert!(
        nested.iter().all(|e| e["call_id"] == events[0]["id"]),
        "{nested:?}"
    );
    assert_eq!(nested[5]["event"]["outcome"], "declined");
    let result = events.last().unwrap();
    assert_eq!(
        result["answer"],
        "The subagent reports: The Groceries budget was not set: the person declined it."
    );
    assert_eq!(
        result["tool_calls"].as_array().unwrap().len(),
        1,
        "the parent made one call"
    );
    assert_eq!(groceries_budget(&pool).await, None);

    // --no-subagents: no task tool.
    let out = kakeibo(
        &pool,
        &["-p", "hand the budget to a subagent", "--no-subagents"],
        "",
    );
    assert!(out.status.success());
    let calls = common::traced_calls(&pool, "task").await;
    assert!(
        calls.last().unwrap()["result"]
            .as_str()
            .unwrap()
            .contains("There is no tool named \"task\""),
        "{calls:?}"
    );
}

/// A project's subagent types (`.agents/agents/*.md`): offered by name, each with only its own
/// tools; a file that does not read, or a model not configured, left out with a sentence.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_projects_subagent_type_has_its_own_tools(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let types = project.path().join(".agents/agents");
    std::fs::create_dir_all(&types).unwrap();
    let shipped = kakeibo_testkit::workspace_root().join("fixtures/agents/subscription-auditor.md");
    std::fs::copy(&shipped, types.join("subscription-auditor.md")).unwrap();
    std::fs::write(types.join("broken.md"), "no frontmatter here").unwrap();
    std::fs::write(
        types.join("elsewhere.md"),
        "---\nname: elsewhere\ndescription: On another provider.\nmodel: anthropic:claude-x\n---\nBody.\n",
    )
    .unwrap();

    let out = common::kakeibo_command(&pool)
        .args(["-p", "Ask the auditor to look at my subscriptions"])
        .current_dir(project.path())
        .env("KAKEIBO_PROVIDER", script())
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "broken.md does not open with a --- frontmatter block, so the subagent type was left out"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("elsewhere.md: the model \"anthropic:claude-x\" is not configured"),
        "{stderr}"
    );
    assert!(
        stderr.contains("⇢ subagent subscription-auditor: Audit the subscriptions"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("The auditor reports: "), "{stdout}");
    let task = common::traced_calls(&pool, "task").await;
    let result = task.last().unwrap()["result"].as_str().unwrap().to_owned();
    assert!(
        result.contains(r#""subagent": "subscription-auditor""#),
        "{result}"
    );
    // Its type offers detect_recurring but not get_balances, which the script also calls.
    let balances = common::traced_calls(&pool, "get_balances").await;
    assert!(
        balances.last().unwrap()["result"]
            .as_str()
            .unwrap()
            .contains("There is no tool named \"get_balances\". The available tools are: detect_recurring, get_spend_report, search_transactions."),
        "{balances:?}"
    );
}
