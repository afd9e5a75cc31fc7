//! kakeibo-mcp driven by the official MCP Python SDK client over real stdio, against the demo
//! ledger in a real PostgreSQL; plus malformed lines on raw stdio (each answered with JSON-RPC's
//! own error code), and the dependency rule.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Command, Stdio},
};

use kakeibo_ledger::DEV_OWNER;
use kakeibo_testdb::app_url;
use kakeibo_tools::{Scope, registry};
use serde_json::{Value, json};
use sqlx::PgPool;

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_official_client_lists_calls_and_is_refused_writes(pool: PgPool) {
    let Some(python) = kakeibo_testkit::python("the MCP SDK") else {
        return;
    };
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    let spend = json!({"period": "2025-03", "group_by": "category"});
    let search = json!({"query": "swiggy", "limit": 5});
    let calls = json!([
        ["get_spend_report", spend],
        ["search_transactions", search],
        ["set_budget", {"category": "Dining", "month": "2025-06", "amount_minor": 500_000}],
        ["search_transactions", {"limit": "many"}],
        ["no_such_tool", {}],
        ["list_accounts", {}]
    ]);
    let connect = pool.connect_options();
    let output = Command::new(python)
        .arg(kakeibo_testkit::workspace_root().join("crates/mcp/tests/mcp_sdk_client.py"))
        .arg(calls.to_string())
        .env("KAKEIBO_MCP_BIN", env!("CARGO_BIN_EXE_kakeibo-mcp"))
        .env("APP_DATABASE_URL", app_url(&connect))
        .env_remove("DATABASE_URL")
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "the client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).expect("the client prints JSON");
    let read_only = &seen["read_only"];
    assert_eq!(read_only["server"], "kakeibo");
    assert!(
        read_only["instructions"]
            .as_str()
            .unwrap()
            .contains("minor units")
    );
    assert!(read_only["instructions"].as_str().unwrap().contains("untrusted"));

    // 8 tools read-only, 14 with writes; hints as stated.
    let tools = read_only["tools"].as_object().unwrap();
    assert_eq!(tools.len(), 8, "{tools:?}");
    assert!(tools.values().all(|t| t["readOnlyHint"] == true
        && t["idempotentHint"] == true
        && t["destructiveHint"] == false
        && t["openWorldHint"] == false));
    let writable = seen["writable"]["tools"].as_object().unwrap();
    assert_eq!(writable.len(), 14);
    assert_eq!(writable["set_budget"]["readOnlyHint"], false);
    assert_eq!(writable["set_budget"]["destructiveHint"], true);
    assert_eq!(writable["set_category_rule"]["idempotentHint"], false);

    // The same figures as the ledger's own tools.
    let ledger = registry(&Scope::new(DEV_OWNER, pool.clone()));
    let calls = read_only["calls"].as_array().unwrap();
    let parsed = |i: usize| -> Value {
        assert_eq!(calls[i]["isError"], false, "{}", calls[i]);
        serde_json::from_str(calls[i]["text"].as_str().unwrap()).unwrap()
    };
    assert_eq!(parsed(0), ledger.call("get_spend_report", spend).await.unwrap());
    assert_eq!(
        parsed(1),
        ledger.call("search_transactions", search).await.unwrap()
    );
    assert_eq!(parsed(0)["period"]["from"], "2025-03-01");

    // A write while read-only, bad arguments, an unknown tool: isError results, and the
    // session goes on (the last call answers).
    assert_eq!(calls[2]["isError"], true);
    assert!(
        calls[2]["text"].as_str().unwrap().contains("read-only"),
        "{}",
        calls[2]
    );
    assert_eq!(calls[3]["isError"], true);
    assert!(
        calls[3]["text"].as_str().unwrap().contains("invalid arguments"),
        "{}",
        calls[3]
    );
    assert_eq!(calls[4]["isError"], true);
    assert_eq!(calls[5]["isError"], false);
    let budgets: i64 = sqlx::query_scalar("SELECT count(*) FROM budgets")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(budgets, 1, "only the session with writes allowed wrote");
    assert_eq!(
        seen["writable"]["calls"][0]["isError"], false,
        "{}",
        seen["writable"]
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_malformed_line_is_survived_and_stdout_is_only_json_rpc(pool: PgPool) {
    let connect = pool.connect_options();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kakeibo-mcp"))
        .env("APP_DATABASE_URL", app_url(&connect))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "this is not JSON-RPC {",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"no/such/method"}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = std::collections::BTreeMap::new();
    for _ in 0..5 {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let answer = serde_json::from_str::<Value>(&line).expect("every stdout line is JSON-RPC");
        answers.insert(answer["id"].to_string(), answer);
    }
    drop(stdin);
    let _ = child.wait();
    assert!(answers["1"]["result"].is_object(), "{answers:?}");
    // JSON-RPC's own codes: parse error (id null), invalid params, method not found.
    assert_eq!(answers["null"]["error"]["code"], -32700, "{answers:?}");
    assert_eq!(answers["3"]["error"]["code"], -32602, "{answers:?}");
    assert_eq!(answers["4"]["error"]["code"], -32601, "{answers:?}");
    assert_eq!(
        answers["2"]["result"]["tools"].as_array().unwrap().len(),
        8,
        "the requests after the malformed line are answered"
    );
}
