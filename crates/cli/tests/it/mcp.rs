//! MCP servers as tool sources in `kakeibo -p --mcp-config`: two real servers — kakeibo-mcp over
//! a second ledger (read-only) and `fixtures/mcp/rates_server.py`, written with the official MCP
//! Python SDK — with the scripted model of `fixtures/scripts/mcp.yaml`. A read runs inline; a
//! write is declined by default, runs when a rule allows it, is refused when a rule denies it;
//! a server that exits at start is reported and the run goes on; a server that hangs at start
//! and a call that hangs are cut by their timeouts.

use std::{
    path::{Path, PathBuf},
    process::{Output, Stdio},
};

use kakeibo_ledger::{Currency, DEV_OWNER, OwnerId};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common;

/// The kakeibo-mcp binary beside this crate's `kakeibo` (`cargo test --workspace` builds both).
fn kakeibo_mcp() -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_kakeibo")).with_file_name("kakeibo-mcp");
    assert!(
        path.is_file(),
        "{} is missing: `cargo build -p kakeibo-mcp` (cargo xtask test builds it)",
        path.display()
    );
    path
}

/// A partner's ledger: three card rows in June 2025.
async fn partner_ledger(pool: &PgPool) -> OwnerId {
    let partner = kakeibo_testdb::new_user(pool).await;
    let csv = "Date,Description,Amount\n2025-06-03,CORNER GROCERY,-42.10\n2025-06-11,CITY CINEMA,-18.00\n\
               2025-06-20,BOOKSHOP,-25.40\n";
    kakeibo_testdb::import_statement(
        pool,
        partner,
        "partner.csv",
        csv.as_bytes(),
        "Partner Card",
        Currency::USD,
    )
    .await;
    partner
}

/// A `.mcp.json` with the rates server under each `(name, mode)` and the partner's ledger as
/// `household`.
fn mcp_json(dir: &Path, python: &Path, pool: &PgPool, partner: OwnerId, rates: &[(&str, &str)]) -> PathBuf {
    let script = kakeibo_testkit::workspace_root().join("fixtures/mcp/rates_server.py");
    let mut servers = serde_json::Map::new();
    for (name, mode) in rates {
        let mut args = vec![script.display().to_string()];
        if !mode.is_empty() {
            args.push((*mode).to_owned());
        }
        servers.insert(
            (*name).to_owned(),
            json!({"command": python, "args": args, "env": {"RATES_SERVER_LOG": dir.join("transfers.log")}}),
        );
    }
    servers.insert(
        "household".to_owned(),
        json!({
            "command": kakeibo_mcp(),
            "env": {
                "APP_DATABASE_URL": kakeibo_testdb::app_url(&pool.connect_options()),
                "KAKEIBO_OWNER": partner.to_string(),
            },
        }),
    );
    let path = dir.join(".mcp.json");
    std::fs::write(&path, json!({"mcpServers": servers}).to_string()).unwrap();
    path
}

fn ask(pool: &PgPool, config: &Path, prompt: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let script = kakeibo_testkit::workspace_root().join("fixtures/scripts/mcp.yaml");
    let mut args = vec!["-p", prompt, "--output-format", "stream-json", "--mcp-config"];
    args.push(config.to_str().unwrap());
    args.extend(extra);
    common::kakeibo_command(pool)
        .args(&args)
        .env("KAKEIBO_PROVIDER", format!("script:{}", script.display()))
        .env_remove("PERMISSION_RULES")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn of_type(out: &Output, kind: &str) -> Vec<Value> {
    common::events(out)
        .into_iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

fn answer(out: &Output) -> String {
    of_type(out, "result")
        .first()
        .map(|r| r["answer"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// The demo ledger, a partner's, and a `.mcp.json` of both servers in a folder of its own; `None`
/// (the test skipped) without the suite's Python.
async fn setup(pool: &PgPool, rates: &[(&str, &str)]) -> Option<(tempfile::TempDir, PathBuf)> {
    let python = kakeibo_testkit::python("the MCP Python SDK")?;
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, pool)
        .await
        .unwrap();
    let partner = partner_ledger(pool).await;
    let dir = tempfile::tempdir().unwrap();
    let config = mcp_json(dir.path(), &python, pool, partner, rates);
    Some((dir, config))
}

fn transfers(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("transfers.log")).unwrap_or_default()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn mcp_servers_serve_reads_inline_and_writes_only_when_allowed(pool: PgPool) {
    let Some((dir, config)) = setup(&pool, &[("rates", ""), ("broken", "--exit-at-start")]).await else {
        return;
    };

    // A read runs inline; the server that exits at start is reported and the run goes on.
    let out = ask(&pool, &config, "What is the euro rate?", &[], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the MCP server `broken` is left out: it did not start")
            && stderr.contains("rates: no licence key configured"),
        "{stderr}"
    );
    let calls = of_type(&out, "tool_call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["name"], "mcp__rates__exchange_rate");
    assert_eq!(calls[0]["tier"], "read");
    assert_eq!(of_type(&out, "tool_result")[0]["outcome"], "ran");
    assert_eq!(
        answer(&out),
        "One US dollar buys 0.9250 euros (the rates server's reference rate of 2025-06-30)."
    );

    // The second ledger, through kakeibo-mcp: the partner's spending, not the person's own.
    let out = ask(&pool, &config, "What did my partner spend in 2025-06?", &[], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        answer(&out),
        "Your partner's ledger shows $85.50 spent that month."
    );
    // … read-only: its write tools are not offered at all.
    let out = ask(&pool, &config, "Set my partner's budget", &[], &[]);
    assert!(out.status.success());
    let failed = common::traced_calls(&pool, "mcp__household__set_budget").await;
    assert_eq!(failed.len(), 1);
    let result = failed[0]["result"].as_str().unwrap();
    assert!(
        result.contains("There is no tool named \"mcp__household__set_budget\"")
            && result.contains("mcp__household__get_spend_report")
            && result.contains("mcp__rates__schedule_transfer"),
        "{result}"
    );

    // A write: declined by default in one-shot mode, nothing sent to the server.
    let transfer = "Schedule a transfer of 100.00 to savings";
    let out = ask(&pool, &config, transfer, &[], &[]);
    assert!(out.status.success());
    assert_eq!(of_type(&out, "tool_call")[0]["tier"], "write");
    assert_eq!(of_type(&out, "tool_result")[0]["outcome"], "declined");
    assert_eq!(answer(&out), "The transfer was not scheduled: you declined it.");
    assert_eq!(transfers(dir.path()), "");

    // Allowed by a rule naming the tool: it runs, once.
    let out = ask(
        &pool,
        &config,
        transfer,
        &["--permission-rules", "allow mcp__rates__schedule_transfer"],
        &[],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(of_type(&out, "tool_result")[0]["outcome"], "ran");
    assert_eq!(answer(&out), "The transfer is scheduled: reference TR-0001.");
    assert_eq!(transfers(dir.path()), "Checking -> Savings 100.00 USD\n");

    // A deny rule on the server wins over --allow-writes (the rules from the environment too).
    let out = ask(
        &pool,
        &config,
        transfer,
        &["--allow-writes"],
        &[("PERMISSION_RULES", "deny mcp__rates__*")],
    );
    assert!(out.status.success());
    assert_eq!(of_type(&out, "tool_result")[0]["outcome"], "denied_by_rule");
    assert_eq!(
        transfers(dir.path()),
        "Checking -> Savings 100.00 USD\n",
        "nothing more"
    );

    // A rule that does not parse is an error before anything starts.
    let out = ask(
        &pool,
        &config,
        transfer,
        &["--permission-rules", "permit everything"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--permission-rules"));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn servers_and_calls_that_hang_are_cut_by_their_timeouts(pool: PgPool) {
    let Some((_dir, config)) = setup(&pool, &[("rates", ""), ("stuck", "--hang-at-start")]).await else {
        return;
    };
    let timeouts = [("MCP_TIMEOUT", "4000"), ("MCP_TOOL_TIMEOUT", "2000")];
    let started = std::time::Instant::now();
    let out = ask(&pool, &config, "A slow quote, please", &[], &timeouts);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the MCP server `stuck` is left out: it did not start within 4 s"),
        "{stderr}"
    );
    let results = of_type(&out, "tool_result");
    assert_eq!(results[0]["name"], "mcp__rates__slow_quote");
    assert_eq!(results[0]["outcome"], "failed");
    assert_eq!(answer(&out), "The quote did not come back in time.");
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    let traced = common::traced_calls(&pool, "mcp__rates__slow_quote").await;
    assert!(
        traced[0]["result"]
            .as_str()
            .unwrap()
            .contains("did not answer within 2 s"),
        "{}",
        traced[0]
    );
}
