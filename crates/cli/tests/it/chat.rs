//! `kakeibo chat` through piped stdin and `kakeibo -p` in each output format, against the demo
//! ledger in a real PostgreSQL, with the scripted model.

use std::{
    io::Write,
    process::{Command, Output, Stdio},
};

use crate::common;

use kakeibo_ledger::DEV_OWNER;
use serde_json::Value;
use sqlx::PgPool;

/// The demo script's answer to "how much did I spend", quoted from the seed's June 2025 report.
const JUNE: &str = "In June 2025 you spent ₹1,40,619.00 in all. The largest groups were Rent at ₹32,000.00, \
                    Transport at ₹22,733.00 and Groceries at ₹20,972.00.";

fn script(name: &str) -> String {
    let root = kakeibo_testkit::workspace_root();
    let path = match name {
        "demo" => root.join("fixtures/scripts/demo.yaml"),
        "wrong-figure" => root.join("fixtures/scripts/wrong-figure.yaml"),
        other => root
            .join("crates/cli/tests/fixtures")
            .join(format!("{other}.yaml")),
    };
    format!("script:{}", path.display())
}

/// `kakeibo ARGS` with the scripted model `script` (or none), `stdin` piped in.
fn kakeibo(pool: &PgPool, script_name: Option<&str>, args: &[&str], stdin: &str) -> Output {
    let mut command = common::kakeibo_command(pool);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(name) = script_name {
        command.env("KAKEIBO_PROVIDER", script(name));
    }
    let mut child = command.spawn().unwrap();
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        // A process that refuses at start (no model) may exit before it reads its input.
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

async fn budgets(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM budgets")
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_repl_streams_asks_before_writes_and_lists_tools(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();

    // Declined: nothing written.
    let out = kakeibo(
        &pool,
        Some("demo"),
        &["chat"],
        "how much did I spend\nset a budget\nn\n/help\n/tools\n/history\n/exit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(JUNE), "{stdout}");
    assert!(
        stdout.contains("✓ 4 figures found in your ledger's results"),
        "{stdout}"
    );
    assert!(stdout.contains("→ get_spend_report"), "{stdout}");
    assert!(stdout.contains("allow? [y/N] n"), "{stdout}");
    assert!(
        stdout.contains("  read   convert_currency") && stdout.contains("  write  set_budget"),
        "{stdout}"
    );
    assert!(stdout.contains("messages in conversation"), "{stdout}");
    assert!(stdout.contains("iterations · run "), "the footer: {stdout}");
    assert_eq!(budgets(&pool).await, 0);

    // Approved with y; and EOF (no /exit) ends the session cleanly.
    let out = kakeibo(&pool, Some("demo"), &["chat"], "set a budget\ny\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("allow? [y/N] y"), "{stdout}");
    assert!(stdout.contains("bye — conversation"), "{stdout}");
    assert_eq!(budgets(&pool).await, 1);

    // EOF at the question declines, and the call's line says it did not run.
    sqlx::query("DELETE FROM budgets").execute(&pool).await.unwrap();
    let out = kakeibo(&pool, Some("demo"), &["chat"], "set a budget\n");
    assert!(out.status.success());
    assert_eq!(budgets(&pool).await, 0);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(shown.contains("✗ declined: not run"), "{shown}");
    assert!(
        shown.contains("Nothing was changed: you declined the Dining budget."),
        "{shown}"
    );

    // The conversation is kept and can be continued.
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_runs WHERE channel = 'cli'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 4);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn one_shot_prints_each_format_and_exits_by_how_the_turn_ended(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();

    let text = kakeibo(&pool, Some("demo"), &["-p", "how much did I spend"], "");
    assert_eq!(
        text.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&text.stdout).trim(), JUNE);

    let json = kakeibo(
        &pool,
        Some("demo"),
        &["-p", "how much did I spend", "--output-format", "json"],
        "",
    );
    assert_eq!(json.status.code(), Some(0));
    let result: Value = serde_json::from_slice(&json.stdout).expect("one JSON object");
    assert_eq!(result["type"], "result");
    assert_eq!(result["status"], "ok");
    assert!(result.get("stop").is_none(), "answered: no stop: {result}");
    assert_eq!(result["tool_calls"][0]["outcome"], "ran");
    assert_eq!(result["tool_calls"][0]["name"], "get_spend_report");
    assert!(result["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(result["run_id"].as_str().is_some() && result["cost_usd_est"].as_str().is_some());
    // Each figure of the answer, grounded in the report's figures (and through them its rows).
    assert_eq!(result["figures"]["ungrounded"], 0, "{result}");
    let figures = result["figures"]["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 4);
    assert!(figures.iter().all(|f| f["grounding"] == "exact"), "{result}");
    assert_eq!(figures[0]["text"], "₹1,40,619.00");
    let source = usize::try_from(figures[0]["how"]["source"].as_u64().unwrap()).unwrap();
    let total = &result["figures"]["sources"][source];
    assert_eq!(total["pointer"], "/total");
    assert_eq!(total["rows"]["measure"], "spending");
    assert_eq!(result["tool_calls"][0]["headline"]["formatted"], "₹1,40,619.00");

    let stream = kakeibo(
        &pool,
        Some("demo"),
        &["-p", "how much did I spend", "--output-format", "stream-json"],
        "",
    );
    assert_eq!(stream.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8_lossy(&stream.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["tool_call", "tool_result", "token", "figures", "result"]);
    assert_eq!(lines[3]["ungrounded"], 0);

    // A wrong figure is marked, in every format: stderr's line, and the JSON's figures.
    let wrong = kakeibo(&pool, Some("wrong-figure"), &["-p", "how much did I spend"], "");
    assert_eq!(
        wrong.status.code(),
        Some(0),
        "a wrong figure is marked, not a failure"
    );
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        stderr.contains("⚠ not found in your ledger's results: ₹99,999.99"),
        "{stderr}"
    );
    let wrong = kakeibo(
        &pool,
        Some("wrong-figure"),
        &["-p", "how much did I spend", "--output-format", "json"],
        "",
    );
    let wrong: Value = serde_json::from_slice(&wrong.stdout).unwrap();
    assert_eq!(wrong["figures"]["ungrounded"], 1, "{wrong}");
    assert_eq!(wrong["figures"]["figures"][1]["text"], "₹99,999.99");
    assert_eq!(wrong["figures"]["figures"][1]["grounding"], "ungrounded");
    assert_eq!(wrong["figures"]["figures"][0]["grounding"], "exact");

    // Writes: declined unless --allow-writes.
    let denied = kakeibo(
        &pool,
        Some("demo"),
        &["-p", "set a budget", "--output-format", "json"],
        "",
    );
    let denied: Value = serde_json::from_slice(&denied.stdout).unwrap();
    assert_eq!(denied["tool_calls"][0]["confirmed"], false);
    assert_eq!(denied["tool_calls"][0]["outcome"], "declined");
    assert_eq!(budgets(&pool).await, 0);
    let allowed = kakeibo(&pool, Some("demo"), &["-p", "set a budget", "--allow-writes"], "");
    assert_eq!(allowed.status.code(), Some(0));
    assert_eq!(budgets(&pool).await, 1);

    // 2: stopped short (the answer hit the length limit).
    let short = kakeibo(
        &pool,
        Some("stops"),
        &["-p", "cut me off", "--output-format", "json"],
        "",
    );
    assert_eq!(
        short.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&short.stdout)
    );
    let short: Value = serde_json::from_slice(&short.stdout).unwrap();
    assert_eq!(short["stop"], "max_tokens");

    // 1: no model configured — and it says what to set.
    let none = kakeibo(
        &pool,
        None,
        &["-p", "how much did I spend", "--output-format", "json"],
        "",
    );
    assert_eq!(none.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&none.stderr);
    for variable in ["GEMINI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"] {
        assert!(stderr.contains(variable), "{stderr}");
    }
    let error: Value = serde_json::from_slice(&none.stdout).unwrap();
    assert_eq!(error["status"], "error");
    let repl = kakeibo(&pool, None, &["chat"], "hello\n");
    assert_eq!(repl.status.code(), Some(1), "the REPL refuses too");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn ctrl_c_stops_the_turn_in_flight_with_130_and_the_run_aborted(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    // A model server that accepts the request and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", silent.local_addr().unwrap());
    let held = std::thread::spawn(move || silent.accept().map(|(stream, _)| stream));
    let child = Command::new(env!("CARGO_BIN_EXE_kakeibo"))
        .args(["-p", "how much did I spend", "--output-format", "json"])
        .env("DATABASE_URL", common::database_url(&pool))
        .env("KAKEIBO_PROVIDER", "openai")
        .env("OPENAI_BASE_URL", &base)
        .env("AGENT_MODEL", "silent-model")
        .env_remove("REPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _connection = held.join().unwrap().expect("the request arrived");
    // The turn is in flight (its Ctrl+C handler was polled before the request could connect).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "aborted");
    let aborted: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM trace_runs WHERE status = 'aborted' AND finished_at IS NOT NULL",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(aborted, 1);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_line_typed_ahead_of_the_question_is_not_lost_and_stops_are_said(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    // "how much did I spend" arrives where the [y/N] answer is read: the write is declined and
    // the line is still asked as the next question.
    let out = kakeibo(
        &pool,
        Some("demo"),
        &["chat"],
        "set a budget\nhow much did I spend\n/exit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("allow? [y/N] n"), "{stdout}");
    assert!(
        stdout.contains(JUNE),
        "the typed-ahead question was answered: {stdout}"
    );
    assert_eq!(budgets(&pool).await, 0);

    // A turn that stops short says why, in the REPL and on stderr in -p.
    let out = kakeibo(&pool, Some("stops"), &["chat"], "cut me off\n/exit\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("(cut off: the answer reached the length limit)"),
        "{stdout}"
    );
    let short = kakeibo(&pool, Some("stops"), &["-p", "cut me off"], "");
    assert_eq!(short.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&short.stderr).contains("cut off"));
}

/// Without `--conversation` each `-p` is a conversation of its own; with it, the named one goes on.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn each_one_shot_starts_a_conversation_unless_one_is_named(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    let ask = |extra: &[&str]| {
        let mut args = vec!["-p", "how much did I spend", "--output-format", "json"];
        args.extend_from_slice(extra);
        let out = kakeibo(&pool, Some("demo"), &args, "");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        result["conversation_id"].as_str().unwrap().to_owned()
    };
    let first = ask(&[]);
    let second = ask(&[]);
    assert_ne!(
        first, second,
        "a second question without --conversation starts a new one"
    );
    let continued = ask(&["--conversation", &first]);
    assert_eq!(continued, first);
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_runs WHERE conversation_id = $1::uuid")
        .bind(&first)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 2, "both questions are in the named conversation");
}

/// `--hooks FILE`: a PreToolUse command that blocks `set_budget` blocks it even with
/// `--allow-writes` and in the REPL after a "y"; a UserPromptSubmit command refuses a prompt with
/// a secret before any model call; SessionStart's note reaches the new conversation's first message.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_hooks_file_blocks_a_budget_and_a_secret_in_both_modes(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("pre_tool_use.jsonl");
    let settings = serde_json::json!({"hooks": {
        "PreToolUse": [{"matcher": "set_budget", "hooks": [{"type": "command",
            "command": format!("cat >> '{}'; echo >> '{}'; echo 'budgets are set by the treasurer' >&2; exit 2",
                               seen.display(), seen.display())}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "if grep -q password; then echo 'no secrets in chat' >&2; exit 2; fi"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo 'The household pays rent on the 1st.'"}]}],
    }});
    let file = dir.path().join("hooks.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let file = file.to_str().unwrap();

    let out = kakeibo(
        &pool,
        Some("demo"),
        &[
            "-p",
            "set a budget",
            "--allow-writes",
            "--output-format",
            "json",
            "--hooks",
            file,
        ],
        "",
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(budgets(&pool).await, 0, "{result}");
    let call = &result["tool_calls"][0];
    assert_eq!(call["name"], "set_budget");
    assert!(
        call["result"]
            .to_string()
            .contains("budgets are set by the treasurer"),
        "{call}"
    );
    let input: Value =
        serde_json::from_str(std::fs::read_to_string(&seen).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(input["tool_name"], "set_budget");
    assert_eq!(input["session_id"], result["conversation_id"]);
    let first: String = sqlx::query_scalar(
        "SELECT message::text FROM conversation_messages WHERE conversation_id = $1::uuid ORDER BY seq LIMIT 1",
    )
    .bind(result["conversation_id"].as_str().unwrap())
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(first.contains("[The household pays rent on the 1st.]"), "{first}");

    // Refused before any model call: exit 2, no run of the model.
    let out = kakeibo(
        &pool,
        Some("demo"),
        &[
            "-p",
            "my password is hunter2",
            "--output-format",
            "json",
            "--hooks",
            file,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["stop"], "hook");
    assert!(
        result["answer"].as_str().unwrap().contains("no secrets in chat"),
        "{result}"
    );
    assert_eq!(result["iterations"], 0);

    // The REPL: the person says yes, the hook still says no.
    let out = kakeibo(
        &pool,
        Some("demo"),
        &["chat", "--hooks", file],
        "set a budget\ny\n/exit\n",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(budgets(&pool).await, 0);
    assert_eq!(
        std::fs::read_to_string(&seen)
            .unwrap()
            .lines()
            .filter(|l| !l.is_empty())
            .count(),
        2
    );

    // A settings file that cannot be used is said before anything runs.
    std::fs::write(dir.path().join("bad.json"), r#"{"hooks": {"PreTooluse": []}}"#).unwrap();
    let bad = dir.path().join("bad.json");
    let out = kakeibo(
        &pool,
        Some("demo"),
        &["-p", "hi", "--hooks", bad.to_str().unwrap()],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"PreTooluse\" is not a hook event"));
}

/// The characters of `text` a terminal would act on: ESC, BEL, an 8-bit CSI, a right-to-left
/// override.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| matches!(c, '\x1b' | '\x07' | '\u{9b}' | '\u{202e}'))
        .collect()
}

/// A model's answer, its tool calls and the `[y/N]` question about a write it asks for reach the
/// terminal with their controls shown as escapes (the answer keeps its line breaks and tabs); the
/// JSON formats escape them too, and still read back as what the model said.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn model_text_reaches_the_terminal_with_controls_escaped(pool: PgPool) {
    let out = kakeibo(
        &pool,
        Some("controls"),
        &["chat"],
        "remember this\nn\nhello\n/exit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(raw_controls(&stdout).is_empty(), "{:?}", raw_controls(&stdout));
    assert!(raw_controls(&stderr).is_empty(), "{stderr:?}");
    for shown in [
        "Saving\\x1b[1A\\x1b[2K.",
        "✎ memory_save",
        "Remember (note\\x1b]52;c;aGk=\\x07): \"pay \\u{202e}DNUFER \\x1b]8;;http://evil\\x1b\\label\\x1b]8;;\\x1b\\ now\" — allow? [y/N] n",
        "Not saved\\x1b[2K.",
        "Line one\\x1b[1A\\x1b[2K\nline\ttwo \\u{202e}DESREVER\\u{9b}31m",
    ] {
        assert!(stdout.contains(shown), "{shown}\nin\n{stdout}");
    }

    let text = kakeibo(&pool, Some("controls"), &["-p", "hello"], "");
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.status.code(), Some(0), "{stdout}");
    assert!(raw_controls(&stdout).is_empty(), "{stdout:?}");
    assert!(stdout.contains("\\u{202e}DESREVER\\u{9b}31m"), "{stdout}");

    for format in ["json", "stream-json"] {
        let out = kakeibo(
            &pool,
            Some("controls"),
            &["-p", "hello", "--output-format", format],
            "",
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        assert!(raw_controls(&stdout).is_empty(), "{format}: {stdout:?}");
        let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(
            last["answer"],
            "Line one\x1b[1A\x1b[2K\nline\ttwo \u{202e}DESREVER\u{9b}31m"
        );
    }
}
