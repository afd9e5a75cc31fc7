//! Logs: one `tracing` subscriber per binary, installed first thing in `main`.
//!
//! Under Lambda (`AWS_LAMBDA_RUNTIME_API` set) the runtime's own subscriber: JSON lines for
//! CloudWatch when the function's log format is JSON (the template sets it), with the level from
//! `AWS_LAMBDA_LOG_LEVEL` or `RUST_LOG`. Anywhere else, human-readable lines on stderr (stdout is
//! an answer or a protocol channel for the CLI and the MCP server), the level from `RUST_LOG`,
//! else `default_level`. Spans carry the request id, the conversation and the run; no log line
//! carries a secret, a token, a password or a client address.

use tracing_subscriber::EnvFilter;

/// Installs the subscriber; a second call changes nothing.
pub fn init(default_level: &str) {
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        lambda_http::tracing::init_default_subscriber();
        return;
    }
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    // Another subscriber already installed (a test harness, a second call) stays.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
