//! A function binary answers `--help` on stdout and exits 0, before it reads any setting (every
//! function binary calls the same `kakeibo_api::lambda::help_requested`).

#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn help_answers_without_settings() {
    let out = Command::new(env!("CARGO_BIN_EXE_chat"))
        .arg("--help")
        .env_remove("JWT_SECRET")
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("chat: the kakeibo `chat` function"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cargo xtask dev") && stdout.contains("Configuration"),
        "{stdout}"
    );
}
