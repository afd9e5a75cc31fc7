//! `kakeibo-evals` as a person runs it: `--list` needs nothing, a missing model is said plainly
//! (exit 1, nothing written), and a run with the scripted model writes both reports, stores the
//! report and exits 0 even though tasks fail — it reports, it does not gate.

use std::process::{Command, Output};

use kakeibo_evals::testing::{app_url, repo_root as repo};

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// The binary, with no model settings from the calling environment.
fn evals(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kakeibo-evals"));
    command.args(args).current_dir(repo());
    for name in [
        "KAKEIBO_PROVIDER",
        "GEMINI_API_KEY",
        "GEMINI_AUTH",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "AGENT_MODEL",
        "JUDGE_MODEL",
        "REPLAY",
        "RECORD",
    ] {
        command.env_remove(name);
    }
    command
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn listing_needs_no_model_and_no_database() {
    let out = evals(&["--list"])
        .env_remove("APP_DATABASE_URL")
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    let tasks = kakeibo_evals::Suite::embedded().unwrap().tasks.len();
    assert!(
        listing.contains("report-groceries-march") && listing.ends_with(&format!("{tasks} task(s)\n")),
        "{listing}"
    );

    let smoke = evals(&["--list", "--filter", "smoke"]).output().unwrap();
    assert!(String::from_utf8_lossy(&smoke.stdout).ends_with("14 task(s)\n"));
    let nothing = evals(&["--list", "--filter", "no-such-task"]).output().unwrap();
    assert_eq!(nothing.status.code(), Some(1));
    assert!(
        text(&nothing).contains("no task matches the filter \"no-such-task\""),
        "{}",
        text(&nothing)
    );
    let help = evals(&["--help"]).output().unwrap();
    assert!(text(&help).contains("--filter") && text(&help).contains("JUDGE_MODEL"));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn without_a_model_it_says_what_to_set(_: PgPoolOptions, connect: PgConnectOptions) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = evals(&["--out", out_dir.path().to_str().unwrap()])
        .env("APP_DATABASE_URL", app_url(&connect))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("GEMINI_API_KEY"), "{}", text(&out));
    assert!(!out_dir.path().join("latest.json").exists());
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_scripted_run_writes_and_stores_its_report(options: PgPoolOptions, connect: PgConnectOptions) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = evals(&["--filter", "reports", "--out", out_dir.path().to_str().unwrap()])
        .env("APP_DATABASE_URL", app_url(&connect))
        .env("KAKEIBO_PROVIDER", "script:fixtures/scripts/eval.yaml")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("[1/6]") && said.contains("[6/6]"),
        "progress per task: {said}"
    );
    assert!(
        !said.contains("injection 1/6"),
        "a filter skips the injection suite: {said}"
    );

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.path().join("latest.json")).unwrap()).unwrap();
    assert_eq!(report["task_count"], 6);
    assert_eq!(report["filter"], "reports");
    assert_eq!(report["trigger"], "cli");
    let passed = report["passed"].as_u64().unwrap();
    assert!(
        (1..6).contains(&passed),
        "the scripted model answers March groceries only: {passed}"
    );
    let markdown = std::fs::read_to_string(out_dir.path().join("latest.md")).unwrap();
    assert!(markdown.contains(&format!("**{passed}/6 passed")), "{markdown}");
    assert!(markdown.contains("## Failed"), "{markdown}");

    let pool = options.connect_with(connect).await.unwrap();
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM eval_reports WHERE trigger = 'cli' AND task_count = 6")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(stored, 1);
}
