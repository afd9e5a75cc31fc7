//! The REPL's session commands through piped input: `/conversations` (`/sessions`), `/resume`,
//! `--resume`, `/cost`, `/model`, `/tools`, `--read-only`, `--max-turns`; and `kakeibo chat
//! --help` lists them.

use std::{io::Write, process::Stdio};

use kakeibo_ledger::DEV_OWNER;
use sqlx::PgPool;

use crate::common;

/// `kakeibo chat ARGS` on the demo script with `input` piped in; stdout (stderr too on failure).
fn chat(pool: &PgPool, args: &[&str], input: &str) -> String {
    let script = kakeibo_testkit::workspace_root().join("fixtures/scripts/demo.yaml");
    let mut child = common::kakeibo_command(pool)
        .arg("chat")
        .args(args)
        .env("KAKEIBO_PROVIDER", format!("script:{}", script.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The conversation a REPL's banner names.
fn conversation_of(stdout: &str) -> String {
    let banner = stdout.lines().next().unwrap();
    banner.rsplit(' ').next().unwrap().to_owned()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_repl_lists_resumes_prices_and_switches(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();

    // A first conversation: a question, then what it cost, the tools, the list, the model.
    let mcp_script = kakeibo_testkit::workspace_root().join("fixtures/scripts/mcp.yaml");
    let input = format!(
        "how much did I spend\n/cost\n/tools\n/conversations\n/model\n/model script:{}\n/model\n/frobnicate\n/exit\n",
        mcp_script.display()
    );
    let first = chat(&pool, &[], &input);
    let id = conversation_of(&first);
    assert!(first.contains("this conversation: 1 run · in "), "{first}");
    assert!(first.contains("this session:      1 run · in "), "{first}");
    assert!(
        first.contains("  read   get_spend_report") && first.contains("  write  set_budget"),
        "{first}"
    );
    assert!(
        first.contains(&format!("* {}  ", &id[..8]))
            && first.contains("messages")
            && first.contains("how much did I spend"),
        "the list marks this conversation, with its count and title: {first}"
    );
    assert!(
        first.contains("model: script:scripted-demo — /model ID switches"),
        "{first}"
    );
    assert!(
        first.contains("model: script:scripted-mcp (the conversation goes on)"),
        "{first}"
    );
    assert!(
        first.contains("model: script:scripted-mcp — /model ID switches"),
        "{first}"
    );
    assert!(
        first.contains("unknown command /frobnicate; /help lists them"),
        "{first}"
    );
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_runs WHERE conversation_id = $1::uuid")
        .bind(&id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 1);

    // A second session: /sessions lists the first, /resume by the start of its id goes on with
    // it; the next question joins it.
    let second = chat(
        &pool,
        &[],
        &format!(
            "/sessions\n/resume\n/resume zzzz\n/resume {}\n/history\nhow much did I spend\n/cost\n/exit\n",
            &id[..8]
        ),
    );
    assert!(second.contains(&format!("  {}  ", &id[..8])), "{second}");
    assert!(second.contains("/resume takes a conversation's id"), "{second}");
    assert!(
        second.contains("no conversation's id starts with zzzz"),
        "{second}"
    );
    assert!(
        second.contains(&format!("resumed conversation {id} · how much did I spend")),
        "{second}"
    );
    assert!(
        second.contains(&format!("messages in conversation {id}")),
        "{second}"
    );
    assert!(second.contains("this conversation: 2 runs · in "), "{second}");
    assert!(second.contains("this session:      1 run · in "), "{second}");
    assert!(second.contains(&format!("bye — conversation {id}")), "{second}");

    // --resume ID from the start.
    let third = chat(&pool, &["--resume", &id], "/history\n/exit\n");
    assert_eq!(conversation_of(&third), id);
    assert!(!third.contains("0 messages in conversation"), "{third}");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn read_only_and_max_turns_limit_the_session(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();

    // --read-only: no write tool offered; a write asked for is no tool at all.
    let out = chat(&pool, &["--read-only"], "/tools\nset a budget\n/exit\n");
    assert!(out.contains("  read   get_spend_report"), "{out}");
    assert!(!out.contains("  write "), "{out}");
    assert!(out.contains("(read-only: no write tool is offered)"), "{out}");
    assert!(!out.contains("allow? [y/N]"), "nothing is asked: {out}");
    let budgets: i64 = sqlx::query_scalar("SELECT count(*) FROM budgets")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(budgets, 0);

    // --max-turns 1: the report's call is the one model call; the run stops short, recorded.
    let out = chat(&pool, &["--max-turns", "1"], "how much did I spend\n/exit\n");
    assert!(
        out.contains("(stopped: the limit of model calls for one turn was reached)"),
        "{out}"
    );
    let id = conversation_of(&out);
    let status: String =
        sqlx::query_scalar("SELECT status::text FROM trace_runs WHERE conversation_id = $1::uuid")
            .bind(&id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(status, "error", "the early end is recorded");
}

#[test]
fn chat_help_lists_the_commands_and_options() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kakeibo"))
        .args(["chat", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for said in [
        "/conversations (or /sessions)",
        "/resume ID",
        "/cost",
        "/model [ID]",
        "/tools",
        "[alias: --resume]",
        "--max-turns <N>",
        "--read-only",
        "--mcp-config <FILE>",
        "--permission-rules <RULES>",
        "--no-task-list",
        "--no-subagents",
    ] {
        assert!(help.contains(said), "{said} in:\n{help}");
    }
}
