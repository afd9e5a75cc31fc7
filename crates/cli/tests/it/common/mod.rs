//! What the CLI's black-box tests share.

#![allow(dead_code, clippy::unwrap_used)]

use std::process::Command;

use sqlx::PgPool;

/// The settings that would select a live model: removed, so a test's answers come from the
/// scripted model it names and never from a key in the developer's environment.
pub const MODEL_VARIABLES: [&str; 8] = [
    "KAKEIBO_PROVIDER",
    "GEMINI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "GEMINI_AUTH",
    "REPLAY",
    "RECORD",
];

/// The JSON lines a `--output-format stream-json` run printed.
pub fn events(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The traced calls of the tool `name`, oldest first (their full results are here; a
/// `tool_result` event carries only a summary).
pub async fn traced_calls(pool: &PgPool, name: &str) -> Vec<serde_json::Value> {
    sqlx::query_scalar(
        "SELECT payload FROM trace_events WHERE type = 'tool_call' AND payload->>'name' = $1
         ORDER BY created_at, seq",
    )
    .bind(name)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// The owner-role URL of the per-test database.
pub fn database_url(pool: &PgPool) -> String {
    let url = std::env::var("DATABASE_URL").unwrap();
    let (base, _) = url.split_once('?').unwrap_or((&url, ""));
    let (server, _) = base.rsplit_once('/').unwrap();
    format!("{server}/{}", pool.connect_options().get_database().unwrap())
}

/// `kakeibo` on the per-test database, with no model configured.
pub fn kakeibo_command(pool: &PgPool) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kakeibo"));
    command.env("DATABASE_URL", database_url(pool));
    for var in MODEL_VARIABLES {
        command.env_remove(var);
    }
    command
}
