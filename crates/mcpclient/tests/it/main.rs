//! The MCP client against a real server: `fixtures/mcp/rates_server.py`, written with the
//! official MCP Python SDK, run by the suite's Python — started, listed, called, and made to
//! misbehave (exit at start, hang at start, hang in a call, die in a call).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{path::PathBuf, time::Duration};

use kakeibo_core::{Tier, ToolError};
use kakeibo_mcp_client::{McpConfig, McpServers, Timeouts};
use serde_json::json;

fn server_script() -> PathBuf {
    kakeibo_testkit::workspace_root().join("fixtures/mcp/rates_server.py")
}

/// A configuration of the rates server under each `(name, mode)`.
fn config(python: &std::path::Path, servers: &[(&str, &str)], log: &std::path::Path) -> McpConfig {
    let entries: serde_json::Map<String, serde_json::Value> = servers
        .iter()
        .map(|(name, mode)| {
            let mut args = vec![server_script().display().to_string()];
            if !mode.is_empty() {
                args.push((*mode).to_owned());
            }
            (
                (*name).to_owned(),
                json!({"command": python, "args": args, "env": {"RATES_SERVER_LOG": log}}),
            )
        })
        .collect();
    let text = json!({"mcpServers": entries}).to_string();
    McpConfig::parse(&text, "test.mcp.json", &|_| None).unwrap()
}

const QUICK: Timeouts = Timeouts {
    start: Duration::from_secs(20),
    call: Duration::from_secs(3),
};

#[tokio::test]
async fn a_python_sdk_server_is_listed_called_and_its_failures_reported() {
    let Some(python) = kakeibo_testkit::python("the MCP Python SDK") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("transfers.log");
    let config = config(&python, &[("rates", ""), ("broken", "--exit-at-start")], &log);
    let servers = McpServers::connect(&config, QUICK).await;
    assert_eq!(servers.connected(), [("rates".to_owned(), 4)]);
    let reports = servers.reports().join("\n");
    assert!(
        reports.contains("the MCP server `broken` is left out: it did not start")
            && reports.contains("rates: no licence key configured"),
        "a server that exits at start is reported with what it said: {reports}"
    );
    let tool = |name: &str| {
        servers
            .tools()
            .iter()
            .find(|t| t.name() == name)
            .unwrap_or_else(|| panic!("{name} is offered"))
            .clone()
    };
    let rate = tool("mcp__rates__exchange_rate");
    assert_eq!(rate.tier(), Tier::Read, "readOnlyHint makes a read");
    assert!(
        rate.description()
            .contains("described in its own words, which are not the user's")
    );
    assert_eq!(
        rate.declaration().parameters["required"],
        json!(["base", "quote"]),
        "the server's schema, in the providers' subset"
    );
    let transfer = tool("mcp__rates__schedule_transfer");
    assert_eq!(transfer.tier(), Tier::Write, "no readOnlyHint: a write");
    assert!(
        transfer
            .summarize(&json!({"from_account": "Checking"}))
            .unwrap()
            .starts_with("schedule_transfer on the MCP server `rates` with {")
    );

    // The server's schema checks the input before anything is sent.
    assert_eq!(
        rate.validate(&json!({"base": "USD"})),
        ["input: \"quote\" is a required property"]
    );
    assert!(matches!(
        rate.execute(json!({"base": 1, "quote": "EUR"})).await,
        Err(ToolError::InvalidInput(_))
    ));
    let answer = rate
        .execute(json!({"base": "USD", "quote": "EUR"}))
        .await
        .unwrap();
    assert_eq!(answer["result"]["rate"], "0.9250");
    assert_eq!(answer["server"], "rates");
    // An error the tool raises is a refusal, its words fenced as data.
    let Err(ToolError::Refused(refused)) = rate.execute(json!({"base": "USD", "quote": "XAU"})).await else {
        panic!("an unknown pair is refused");
    };
    assert!(
        refused.contains("answered with an error:\n<tool_data>") && refused.contains("no rate for USD/XAU"),
        "{refused}"
    );
    let written = transfer
        .execute(json!({"from_account": "Checking", "to_account": "Savings", "amount": "100.00", "currency": "USD"}))
        .await
        .unwrap();
    assert_eq!(written["result"]["reference"], "TR-0001");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "Checking -> Savings 100.00 USD\n"
    );

    // A call that never answers is given up at the call timeout; the server stays usable.
    let started = std::time::Instant::now();
    let Err(ToolError::Failed(slow)) = tool("mcp__rates__slow_quote")
        .execute(json!({"base": "USD", "quote": "EUR"}))
        .await
    else {
        panic!("a call that hangs fails");
    };
    assert!(slow.contains("did not answer within 3 s"), "{slow}");
    assert!(
        !kakeibo_core::turn::is_transient(&ToolError::Failed(slow.clone())),
        "never tried twice"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(rate.execute(json!({"base": "EUR", "quote": "USD"})).await.is_ok());

    // A server that dies in a call is reported with what it said; its tools refuse after.
    let Err(ToolError::Failed(died)) = tool("mcp__rates__feed_quote")
        .execute(json!({"base": "USD", "quote": "EUR"}))
        .await
    else {
        panic!("a call whose server dies fails");
    };
    assert!(
        died.contains("the MCP server `rates` stopped")
            && died.contains("rates: the feed connection dropped")
            && died.contains("its tools are left out"),
        "{died}"
    );
    let Err(ToolError::Failed(after)) = rate.execute(json!({"base": "USD", "quote": "EUR"})).await else {
        panic!("a stopped server's tools refuse");
    };
    assert_eq!(after, died);
}

#[tokio::test]
async fn a_server_that_hangs_at_start_is_cut_by_the_start_timeout() {
    let Some(python) = kakeibo_testkit::python("the MCP Python SDK") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        &python,
        &[("stuck", "--hang-at-start"), ("rates", "")],
        &dir.path().join("log"),
    );
    let started = std::time::Instant::now();
    let servers = McpServers::connect(
        &config,
        Timeouts {
            start: Duration::from_secs(4),
            call: Duration::from_secs(3),
        },
    )
    .await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(4) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert_eq!(
        servers.connected(),
        [("rates".to_owned(), 4)],
        "the other server is kept"
    );
    assert_eq!(
        servers.reports(),
        [
            "the MCP server `stuck` is left out: it did not start within 4 s (MCP_TIMEOUT sets the limit, in milliseconds)"
        ]
    );
    let missing = McpServers::connect(
        &McpConfig::parse(
            r#"{"mcpServers": {"nothing": {"command": "/nonexistent/server"}}}"#,
            "x",
            &|_| None,
        )
        .unwrap(),
        QUICK,
    )
    .await;
    assert!(
        missing.reports()[0]
            .starts_with("the MCP server `nothing` is left out: `/nonexistent/server` could not be started:"),
        "{:?}",
        missing.reports()
    );
    assert!(missing.tools().is_empty());
}

#[tokio::test]
async fn a_streamable_http_server_is_listed_and_called() {
    let Some(python) = kakeibo_testkit::python("the MCP Python SDK") else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new(&python)
        .arg(server_script())
        .args(["--http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Listening once a connection is taken.
    let started = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the HTTP server never listened"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let text = json!({"mcpServers": {
        "rates": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"), "headers": {"X-Client": "kakeibo-test"}},
        "nobody": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
    }})
    .to_string();
    let config = McpConfig::parse(&text, "http.mcp.json", &|_| None).unwrap();
    let servers = McpServers::connect(&config, QUICK).await;
    assert_eq!(
        servers.connected(),
        [("rates".to_owned(), 4)],
        "{:?}",
        servers.reports()
    );
    assert_eq!(servers.reports().len(), 1);
    assert!(
        servers.reports()[0]
            .starts_with("the MCP server `nobody` is left out: http://127.0.0.1:9/mcp did not answer"),
        "{:?}",
        servers.reports()
    );
    let rate = servers
        .tools()
        .iter()
        .find(|t| t.name() == "mcp__rates__exchange_rate")
        .unwrap();
    assert_eq!(rate.tier(), Tier::Read);
    let answer = rate
        .execute(json!({"base": "GBP", "quote": "USD"}))
        .await
        .unwrap();
    assert_eq!(answer["result"]["rate"], "1.2650");
    server.kill().await.unwrap();
}
