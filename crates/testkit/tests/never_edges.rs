//! The workspace's one-way graph: the "never" edges ARCHITECTURE.md states, checked on the
//! resolved dependency tree (`cargo tree`), so adding one fails here with the path that brought it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use std::process::Command;

/// The crates `package` depends on (normal edges, transitively), with `cargo tree`'s listing for
/// the failure message.
fn dependencies(package: &str) -> (Vec<String>, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            package,
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(kakeibo_testkit::workspace_root())
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8_lossy(&output.stdout).into_owned();
    let crates = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != package)
        .map(str::to_owned)
        .collect();
    (crates, tree)
}

/// That none of `package`'s dependencies is named in `never` (a trailing `*` matches a prefix).
fn assert_never(package: &str, never: &[&str], why: &str) {
    let (crates, tree) = dependencies(package);
    let banned: Vec<&String> = crates
        .iter()
        .filter(|name| {
            never.iter().any(|n| match n.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => *name == n,
            })
        })
        .collect();
    assert!(
        banned.is_empty(),
        "{package} {why}, yet depends on {banned:?}:\n{tree}"
    );
}

/// AWS's SDK and Lambda runtime (not `aws-lc-rs`, the TLS library's cryptography).
const AWS: &[&str] = &[
    "aws-config",
    "aws-sdk-*",
    "aws-smithy-*",
    "aws-types",
    "aws-runtime",
    "lambda_http",
    "lambda_runtime",
];

/// Database crates.
const DATABASE: &[&str] = &["sqlx*", "tokio-postgres", "postgres*"];

/// HTTP crates.
const HTTP: &[&str] = &["reqwest", "hyper", "hyper-util", "h2", "http", "axum", "tower"];

#[test]
fn the_core_holds_no_database_http_or_aws_crate() {
    let never: Vec<&str> = DATABASE.iter().chain(HTTP).chain(AWS).copied().collect();
    assert_never("kakeibo-core", &never, "is provider-neutral and does no I/O");
}

#[test]
fn the_providers_know_nothing_of_the_ledger_or_the_database() {
    let never: Vec<&str> = ["kakeibo-ledger", "kakeibo-api", "sqlx*"]
        .into_iter()
        .chain(AWS.iter().copied())
        .collect();
    assert_never(
        "kakeibo-providers",
        &never,
        "maps messages to the providers' wire formats",
    );
}

/// What a crate that only speaks to its own endpoints must never pull in: the ledger's side, the
/// agent, a provider, the database, AWS.
fn no_ledger_side(krate: &str, why: &str) {
    let never: Vec<&str> = [
        "kakeibo-ledger",
        "kakeibo-tools",
        "kakeibo-agent",
        "kakeibo-providers",
        "kakeibo-api",
    ]
    .into_iter()
    .chain(DATABASE.iter().copied())
    .chain(AWS.iter().copied())
    .collect();
    assert_never(krate, &never, why);
}

#[test]
fn the_hooks_know_nothing_of_the_ledger_the_database_or_the_agent() {
    no_ledger_side(
        "kakeibo-hooks",
        "runs an operator's handlers around the core's loop, and holds nothing of a ledger",
    );
}

#[test]
fn the_judge_asks_its_endpoint_and_knows_nothing_of_the_ledger_or_the_agent() {
    no_ledger_side(
        "kakeibo-judge",
        "answers yes/no questions from one endpoint's logprobs",
    );
}

#[test]
fn the_identity_clients_know_nothing_of_the_ledger_sessions_or_the_agent() {
    no_ledger_side(
        "kakeibo-identity",
        "asks Google and Turnstile for evidence about a visitor, and holds no session or ledger",
    );
    assert_never(
        "kakeibo-identity",
        &["kakeibo-auth", "kakeibo-core"],
        "is evidence only: who the visitor is, `kakeibo-auth` decides",
    );
}

/// What every crate that stands on PostgreSQL alone must never pull in.
fn http_aws_and(more: &[&'static str]) -> Vec<&'static str> {
    HTTP.iter()
        .chain(AWS)
        .copied()
        .chain([
            "kakeibo-providers",
            "kakeibo-api",
            "kakeibo-auth",
            "kakeibo-identity",
        ])
        .chain(more.iter().copied())
        .collect()
}

#[test]
fn the_ledger_knows_nothing_of_the_tools_the_agent_http_providers_or_aws() {
    let never = http_aws_and(&["kakeibo-tools", "kakeibo-agent", "kakeibo-operator"]);
    assert_never("kakeibo-ledger", &never, "is the bottom of the product's graph");
}

#[test]
fn the_tools_know_nothing_of_turns_http_providers_or_aws() {
    let never = http_aws_and(&["kakeibo-agent", "kakeibo-operator"]);
    assert_never(
        "kakeibo-tools",
        &never,
        "run over the ledger, called by whoever holds them",
    );
}

#[test]
fn the_agent_takes_its_provider_as_a_trait_and_knows_nothing_of_http_or_aws() {
    let never = http_aws_and(&["kakeibo-operator"]);
    assert_never(
        "kakeibo-agent",
        &never,
        "drives the core's turn machine over a provider it is handed",
    );
}

#[test]
fn the_operators_side_knows_nothing_of_http_providers_or_aws() {
    assert_never(
        "kakeibo-operator",
        &http_aws_and(&[]),
        "stands on PostgreSQL alone",
    );
}

#[test]
fn the_evaluations_run_the_agent_and_know_nothing_of_the_functions_servers_or_aws() {
    let never: Vec<&str> = [
        "kakeibo-api",
        "kakeibo-devserver",
        "kakeibo-operator",
        "axum",
        "lambda_http",
    ]
    .into_iter()
    .chain(AWS.iter().copied())
    .collect();
    assert_never(
        "kakeibo-evals",
        &never,
        "runs its tasks through the agent over a provider and the ledger, wherever it is launched from",
    );
}

#[test]
fn the_mcp_server_depends_on_no_http_client_or_provider() {
    let (crates, tree) = dependencies("kakeibo-mcp");
    assert!(
        crates.iter().any(|c| c == "kakeibo-tools") && crates.iter().any(|c| c == "rmcp"),
        "{tree}"
    );
    let never: Vec<&str> = HTTP
        .iter()
        .chain(AWS)
        .copied()
        .chain(["kakeibo-providers", "eventsource-stream"])
        .collect();
    assert_never(
        "kakeibo-mcp",
        &never,
        "serves the tools over stdio and makes no model call",
    );
}

#[test]
fn the_developer_tools_depend_on_no_product_crate() {
    let product = [
        "kakeibo-core",
        "kakeibo-ledger",
        "kakeibo-tools",
        "kakeibo-agent",
        "kakeibo-operator",
        "kakeibo-providers",
        "kakeibo-auth",
        "kakeibo-api",
        "kakeibo-evals",
    ];
    assert_never("xtask", &product, "drives initdb, psql and cargo as processes");
    // The load generator sees the site as its visitors do: over HTTP (and the database, to check).
    assert_never("kakeibo-load", &product, "drives the site over HTTP only");
    // The embedded cluster's helper and the suites' kit are the standard library alone.
    for package in ["kakeibo-localdb", "kakeibo-testkit"] {
        let (crates, tree) = dependencies(package);
        assert!(crates.is_empty(), "{package} is standard library only:\n{tree}");
    }
}

#[test]
fn the_library_knows_nothing_of_the_functions_or_their_servers() {
    let never: Vec<&str> = ["kakeibo-api", "kakeibo-devserver", "axum", "lambda_http"]
        .into_iter()
        .chain(AWS.iter().copied())
        .collect();
    assert_never(
        "kakeibo",
        &never,
        "is what every channel builds its agent with, the functions included: they stand on it",
    );
}

#[test]
fn the_importer_the_units_of_money_and_the_seed_generator_hold_no_database_or_http_crate() {
    let never: Vec<&str> = DATABASE
        .iter()
        .chain(HTTP)
        .chain(AWS)
        .copied()
        .chain(["kakeibo-ledger", "kakeibo-core", "tokio"])
        .collect();
    assert_never(
        "kakeibo-import",
        &never,
        "reads bytes into statements and nothing else",
    );
    assert_never("kakeibo-statement", &never, "is what every reader gives, no more");
    assert_never(
        "kakeibo-ofx",
        &never,
        "reads OFX bytes into statements and nothing else",
    );
    for reader in ["kakeibo-camt", "kakeibo-mt940", "kakeibo-qif"] {
        assert_never(
            reader,
            &never,
            "reads a statement format's bytes into statements and nothing else",
        );
    }
    assert_never(
        "kakeibo-money",
        &never,
        "is the books' units, stored by the ledger alone",
    );
}
