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
