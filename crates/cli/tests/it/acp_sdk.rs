//! `kakeibo --acp` driven by the official ACP client SDK (`@agentclientprotocol/sdk`, in
//! `crates/acp/tests/client/`) over real stdio, with the scripted demo model on the demo ledger in a real
//! PostgreSQL: a session opens, a prompt streams chunks and tool-call updates, a write's
//! permission request allowed writes one row, rejected writes none, allowed always lets the
//! tool's next write run unasked, and a cancelled turn ends `cancelled` with nothing written and
//! its run stored aborted; `--read-only` and `--max-turns` hold for every session.

use std::process::Command;

use kakeibo_ledger::DEV_OWNER;
use serde_json::Value;
use sqlx::PgPool;

async fn budgets(pool: &PgPool, category: &str) -> Vec<i64> {
    sqlx::query_scalar(
        "SELECT b.amount_minor FROM budgets b JOIN accounts a ON a.id = b.account_id
         WHERE b.owner_id = $1 AND a.name = $2 AND b.month = '2025-06'",
    )
    .bind(DEV_OWNER.as_uuid())
    .bind(category)
    .fetch_all(pool)
    .await
    .unwrap()
}

fn kinds(session: &Value) -> Vec<String> {
    session["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap().to_owned())
        .collect()
}

/// The updates of one kind.
fn updates<'a>(session: &'a Value, kind: &str) -> Vec<&'a Value> {
    session["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The official client over `kakeibo --acp` on the demo ledger with the scripted model `script`
/// (a file of `fixtures/scripts/`), with `env` set for it; what it printed. `None` when the
/// client is not installed.
async fn client_run(pool: &PgPool, script: &str, env: &[(&str, &str)]) -> Option<Value> {
    let client = kakeibo_testkit::acp_client()?;
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, pool)
        .await
        .unwrap();
    let root = kakeibo_testkit::workspace_root();
    let mut command = Command::new("node");
    command
        .arg(client.join("acp_client.mjs"))
        .current_dir(&root)
        .env("KAKEIBO_BIN", env!("CARGO_BIN_EXE_kakeibo"))
        .env(
            "APP_DATABASE_URL",
            kakeibo_testdb::app_url(&pool.connect_options()),
        )
        .env(
            "KAKEIBO_PROVIDER",
            format!("script:{}", root.join("fixtures/scripts").join(script).display()),
        )
        .envs(env.iter().copied())
        .env_remove("DATABASE_URL");
    // Off the runtime's thread: the pool's connections finish their work (a rollback queued
    // when a transaction was dropped) while the client runs.
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("node runs");
    assert!(
        output.status.success(),
        "the client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("the client prints JSON"))
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_official_client_prompts_streams_asks_and_cancels(pool: PgPool) {
    let Some(out) = client_run(&pool, "demo.yaml", &[]).await else {
        return;
    };
    assert_eq!(out["initialize"]["protocolVersion"], 1);
    assert_eq!(out["initialize"]["agentInfo"]["name"], "kakeibo");
    assert_eq!(out["exitCode"], 0, "the server ends when the editor closes stdin");
    let session = |name: &str| &out["seen"][out["sessions"][name].as_str().unwrap()];

    // A read streams a tool call, its completion and the answer's text; then a write, allowed.
    let allowed = session("allowed");
    assert_eq!(allowed["stops"], serde_json::json!(["end_turn", "end_turn"]));
    let calls = updates(allowed, "tool_call");
    assert_eq!(calls[0]["title"], "get_spend_report");
    assert_eq!(calls[0]["kind"], "read");
    assert_eq!(calls[1]["title"], "set_budget");
    assert_eq!(calls[1]["kind"], "edit");
    let ends = updates(allowed, "tool_call_update");
    assert_eq!(ends.len(), 2);
    assert!(ends.iter().all(|u| u["status"] == "completed"), "{ends:?}");
    let text: String = updates(allowed, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert!(text.contains("₹23,350.00"), "the ledger's own figure: {text}");
    assert!(text.contains("Groceries is budgeted at"), "{text}");
    let asked = allowed["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["toolCall"]["toolCallId"], calls[1]["toolCallId"]);
    let options: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once"]);
    assert_eq!(budgets(&pool, "Groceries").await, [2_000_000], "allowed: one row");
    // Both prompts went to one conversation.
    let conversation = out["sessions"]["allowed"].as_str().unwrap();
    let runs: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM trace_runs WHERE conversation_id = $1::uuid AND channel = 'acp'",
    )
    .bind(conversation)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(runs, 2);

    // Rejected: both writes fail, none is written.
    let rejected = session("rejected");
    assert_eq!(rejected["permissions"].as_array().unwrap().len(), 2);
    let ends = updates(rejected, "tool_call_update");
    assert!(ends.iter().all(|u| u["status"] == "failed"), "{ends:?}");
    assert_eq!(rejected["stops"], serde_json::json!(["end_turn"]));
    assert!(budgets(&pool, "Dining").await.is_empty());
    assert!(budgets(&pool, "Transport").await.is_empty());

    // Cancelled while asked: the turn ends `cancelled`, nothing written, the run stored aborted.
    let cancelled = session("cancelled");
    assert_eq!(cancelled["stops"], serde_json::json!(["cancelled"]));
    assert!(!kinds(cancelled).is_empty());
    assert!(budgets(&pool, "Dining").await.is_empty());
    let status: String =
        sqlx::query_scalar("SELECT status::text FROM trace_runs WHERE conversation_id = $1::uuid")
            .bind(out["sessions"]["cancelled"].as_str().unwrap())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(status, "aborted");

    // Allowed always: the second rule is made without asking.
    let always = session("always");
    assert_eq!(always["permissions"].as_array().unwrap().len(), 1, "{always}");
    assert_eq!(always["stops"], serde_json::json!(["end_turn", "end_turn"]));
    let rules: Vec<String> =
        sqlx::query_scalar("SELECT pattern FROM rules WHERE owner_id = $1 ORDER BY pattern")
            .bind(DEV_OWNER.as_uuid())
            .fetch_all(&pool)
            .await
            .unwrap();
    assert!(
        rules.iter().any(|r| r.eq_ignore_ascii_case("swiggy")),
        "{rules:?}"
    );
    assert!(
        rules.iter().any(|r| r.eq_ignore_ascii_case("zomato")),
        "{rules:?}"
    );

    // Refusals in the protocol's own words.
    assert_eq!(out["relativeCwd"]["code"], -32602, "{}", out["relativeCwd"]);
    assert_eq!(out["unknownSession"]["code"], -32602, "{}", out["unknownSession"]);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_official_client_sees_each_figure_checked_and_a_wrong_one_marked(pool: PgPool) {
    let prompt = [("ACP_ONE_PROMPT", "how much did I spend in June 2025?")];
    let Some(out) = client_run(&pool, "wrong-figure.yaml", &prompt).await else {
        return;
    };
    let session = &out["seen"][out["sessions"]["only"].as_str().unwrap()];
    let chunks = updates(session, "agent_message_chunk");
    let checked: Vec<&&Value> = chunks
        .iter()
        .filter(|c| c["_meta"]["kakeibo"]["figures"].is_object())
        .collect();
    assert_eq!(checked.len(), 1, "one figures update: {session}");
    let figures = &checked[0]["_meta"]["kakeibo"]["figures"];
    assert_eq!(figures["ungrounded"], 1, "{figures}");
    assert_eq!(figures["figures"][1]["text"], "₹99,999.99");
    assert_eq!(figures["figures"][0]["grounding"], "exact");
    assert_eq!(
        checked[0]["content"]["text"],
        "\n\n(₹99,999.99 was not found in your ledger's results.)"
    );
}

/// The servers an editor passes to `session/new`: the rates server and one that exits at start.
fn editor_servers(python: &std::path::Path, log: &std::path::Path) -> String {
    let script = kakeibo_testkit::workspace_root().join("fixtures/mcp/rates_server.py");
    let env = serde_json::json!([{"name": "RATES_SERVER_LOG", "value": log}]);
    serde_json::json!([
        {"name": "rates", "command": python, "args": [script], "env": env},
        {"name": "broken", "command": python, "args": [script, "--exit-at-start"], "env": []},
    ])
    .to_string()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_official_client_passes_mcp_servers_whose_writes_it_is_asked_about(pool: PgPool) {
    let Some(python) = kakeibo_testkit::python("the MCP Python SDK") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("transfers.log");
    let servers = editor_servers(&python, &log);
    let prompts = serde_json::json!([
        "What is the euro rate?",
        "Schedule a transfer of 100.00 to savings"
    ])
    .to_string();
    let env = [
        ("ACP_PROMPTS", prompts.as_str()),
        ("ACP_MCP_SERVERS", servers.as_str()),
    ];
    let Some(out) = client_run(&pool, "mcp.yaml", &env).await else {
        return;
    };
    assert_eq!(
        out["initialize"]["agentCapabilities"]["mcpCapabilities"]["http"],
        true
    );
    let session = &out["seen"][out["sessions"]["only"].as_str().unwrap()];
    assert_eq!(session["stops"], serde_json::json!(["end_turn", "end_turn"]));
    let text: String = updates(session, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert!(
        text.starts_with("(kakeibo: the MCP server `broken` is left out: it did not start")
            && text.contains("rates: no licence key configured"),
        "the server that exits at start is reported to the person: {text}"
    );
    assert!(text.contains("One US dollar buys 0.9250 euros"), "{text}");
    assert!(
        text.contains("The transfer was not scheduled: you declined it."),
        "{text}"
    );
    let calls = updates(session, "tool_call");
    assert_eq!(calls[0]["title"], "mcp__rates__exchange_rate");
    assert_eq!(calls[0]["kind"], "read");
    assert_eq!(calls[1]["title"], "mcp__rates__schedule_transfer");
    assert_eq!(calls[1]["kind"], "edit");
    let asked = session["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "only the write is asked about");
    assert_eq!(asked[0]["toolCall"]["toolCallId"], calls[1]["toolCallId"]);
    assert!(!log.exists(), "rejected: nothing reached the server");

    // Allowed by the person: it runs, once.
    let allow = [
        ("ACP_PROMPTS", r#"["Schedule a transfer of 250.00 to savings"]"#),
        ("ACP_MCP_SERVERS", servers.as_str()),
        ("ACP_ANSWER", "allow"),
    ];
    let out = client_run(&pool, "mcp.yaml", &allow).await.unwrap();
    let session = &out["seen"][out["sessions"]["only"].as_str().unwrap()];
    assert_eq!(session["permissions"].as_array().unwrap().len(), 1);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "Checking -> Savings 250.00 USD\n"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_task_list_reaches_the_editor_as_the_plan(pool: PgPool) {
    let prompt = [("ACP_ONE_PROMPT", "Review my subscriptions")];
    let Some(out) = client_run(&pool, "tasks.yaml", &prompt).await else {
        return;
    };
    let session = &out["seen"][out["sessions"]["only"].as_str().unwrap()];
    let plans = updates(session, "plan");
    assert_eq!(plans.len(), 2, "each list the tool takes: {session}");
    let statuses = |plan: &Value| -> Vec<(String, String)> {
        plan["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["content"].as_str().unwrap().to_owned(),
                    e["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        statuses(plans[0]),
        [
            ("List the regular payments".to_owned(), "in_progress".to_owned()),
            ("Price each one for a year".to_owned(), "pending".to_owned()),
            ("Say which to look at".to_owned(), "pending".to_owned()),
        ]
    );
    assert_eq!(statuses(plans[1])[2].1, "in_progress");
    assert_eq!(statuses(plans[1])[0].1, "completed");
    // The list refused (two in progress) is a failed call, never a plan.
    let calls = updates(session, "tool_call");
    let titles: Vec<&str> = calls.iter().map(|c| c["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["detect_recurring", "todo_write"]);
    let ends = updates(session, "tool_call_update");
    let refused = ends
        .iter()
        .find(|u| u["toolCallId"] == calls[1]["toolCallId"])
        .unwrap();
    assert_eq!(refused["status"], "failed");
}

/// A subagent's calls reach the editor as tool calls titled under the task; its one write is
/// asked once, through the session's own permission request, and runs when allowed.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_subagents_calls_and_its_write_reach_the_editor(pool: PgPool) {
    let env = [
        ("ACP_ONE_PROMPT", "Hand the budget to a subagent"),
        ("ACP_ANSWER", "allow"),
    ];
    let Some(out) = client_run(&pool, "subagents.yaml", &env).await else {
        return;
    };
    let session = &out["seen"][out["sessions"]["only"].as_str().unwrap()];
    let calls = updates(session, "tool_call");
    let titles: Vec<&str> = calls.iter().map(|c| c["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "task",
            "task › detect_recurring",
            "task › get_balances",
            "task › set_budget"
        ],
        "{session}"
    );
    let asked = session["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "the subagent's write is asked once: {session}");
    assert_eq!(asked[0]["toolCall"]["toolCallId"], calls[3]["toolCallId"]);
    let text: String = updates(session, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert!(
        text.contains("The subagent reports: Groceries is budgeted at ₹20,000.00 for 2025-06."),
        "{text}"
    );
    assert_eq!(budgets(&pool, "Groceries").await, [2_000_000]);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn read_only_and_max_turns_hold_for_the_editors_sessions(pool: PgPool) {
    // --read-only: the write the model would make is not offered, so nothing is asked or
    // written, even with the editor ready to allow it.
    let env = [
        ("ACP_ONE_PROMPT", "set a ₹20,000 monthly budget for groceries"),
        ("ACP_ANSWER", "allow"),
        ("ACP_ARGS", r#"["--read-only"]"#),
    ];
    let Some(out) = client_run(&pool, "demo.yaml", &env).await else {
        return;
    };
    let session = &out["seen"][out["sessions"]["only"].as_str().unwrap()];
    assert!(session["permissions"].as_array().unwrap().is_empty(), "{session}");
    let ends = updates(session, "tool_call_update");
    assert_eq!(ends.len(), 1, "{session}");
    assert_eq!(ends[0]["status"], "failed");
    let said = ends[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        said.starts_with("There is no tool named \"set_budget\""),
        "{said}"
    );
    assert!(
        budgets(&pool, "Groceries").await.is_empty(),
        "read-only wrote a row"
    );

    // --max-turns 1: a question that needs a read and then an answer stops at the limit, in the
    // protocol's own stop reason.
    let env = [
        (
            "ACP_ONE_PROMPT",
            "how much did I spend on groceries in March 2025?",
        ),
        ("ACP_ARGS", r#"["--max-turns", "1"]"#),
    ];
    let out = client_run(&pool, "demo.yaml", &env).await.unwrap();
    let session = &out["seen"][out["sessions"]["only"].as_str().unwrap()];
    assert_eq!(
        session["stops"],
        serde_json::json!(["max_turn_requests"]),
        "{session}"
    );
}
