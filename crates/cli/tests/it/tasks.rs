//! The model's task list (`todo_write`) in `kakeibo -p`: each list the tool takes is shown as a
//! checklist under its call, a list it refuses is a failed call, and `--no-task-list` leaves
//! the tool out.

use std::process::{Output, Stdio};

use kakeibo_ledger::DEV_OWNER;
use sqlx::PgPool;

use crate::common;

fn ask(pool: &PgPool, extra: &[&str]) -> Output {
    let script = kakeibo_testkit::workspace_root().join("fixtures/scripts/tasks.yaml");
    common::kakeibo_command(pool)
        .args(["-p", "Review my subscriptions"])
        .args(extra)
        .env("KAKEIBO_PROVIDER", format!("script:{}", script.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_task_list_is_a_checklist_under_its_call(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    let out = ask(&pool, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let first =
        "    ▸ List the regular payments\n    ☐ Price each one for a year\n    ☐ Say which to look at\n";
    let second =
        "    ☑ List the regular payments\n    ☑ Price each one for a year\n    ▸ Say which to look at\n";
    assert!(stderr.contains(first) && stderr.contains(second), "{stderr}");
    let first_at = stderr.find(first).unwrap();
    assert!(
        first_at < stderr.find("→ detect_recurring").unwrap(),
        "in order: {stderr}"
    );
    assert!(
        stderr.contains("✗") && stderr.contains("2 items are in_progress; at most one may be"),
        "the refused list is a failed call: {stderr}"
    );
    assert!(
        !stderr.contains("→ todo_write"),
        "no raw line for the list: {stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("look at the largest first"));

    let out = ask(&pool, &["--no-task-list"]);
    assert!(out.status.success());
    let calls = common::traced_calls(&pool, "todo_write").await;
    let last = calls.last().unwrap();
    assert!(
        last["result"]
            .as_str()
            .unwrap()
            .contains("There is no tool named \"todo_write\""),
        "{last}"
    );
}
