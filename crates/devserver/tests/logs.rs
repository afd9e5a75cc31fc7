//! What the logs say of a chat turn through the Lambda entry point, and what they never say: the
//! turn's lines carry the request's span and the turn's run and conversation ids; no line carries
//! the session token, the password, the signing secret, the email or the client's address.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Its own process: the subscriber it sets must be the only one that sees the turn's callsites.
#[path = "it/support/mod.rs"]
mod support;

use std::{
    io,
    sync::{Arc, Mutex},
};

use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, JWT_SECRET, gateway_event, read, state};

/// Every log line, captured.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Self;
    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_turn_is_logged_with_its_ids_and_never_with_a_secret(_: PgPoolOptions, connect: PgConnectOptions) {
    let logs = Captured::default();
    // Every level, every crate's lines (sqlx's and the runtime's too).
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::TRACE)
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);

    let state = state(&connect, Isolation::Rls, &[]).await;
    let template: Value = serde_json::from_str(include_str!("fixtures/apigw-v2-event.json")).unwrap();
    let address = "203.0.113.77";
    let chat = |cookie: Option<&str>| {
        gateway_event(
            &template,
            "POST",
            "/api/chat",
            Some(&json!({"message": "how much did I spend"})),
            cookie,
            address,
        )
    };
    let first = read(kakeibo_chat::handle(Arc::clone(&state), chat(None)).await).await;
    assert_eq!(support::turn_end(&first)["status"], "ok", "{}", first.body);
    let cookie = first.session_cookie().unwrap();
    let (email, password) = ("logged.visitor@example.com", "a password nobody may read 42");
    let sign_up = gateway_event(
        &template,
        "POST",
        "/api/session/sign-up",
        Some(&json!({"email": email, "password": password})),
        Some(&cookie),
        address,
    );
    let signed_up = read(kakeibo_chat::handle(Arc::clone(&state), sign_up).await).await;
    assert!(signed_up.status.is_success(), "{}", signed_up.body);
    let signed_in = signed_up.session_cookie().unwrap();
    let second = read(kakeibo_chat::handle(Arc::clone(&state), chat(Some(&signed_in))).await).await;
    assert_eq!(support::turn_end(&second)["status"], "ok", "{}", second.body);

    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let run_id = support::turn_end(&second)["run_id"].as_str().unwrap().to_owned();
    let started = text
        .lines()
        .find(|l| l.contains("turn started") && l.contains(&run_id))
        .unwrap_or_else(|| panic!("no line for run {run_id}:\n{text}"));
    for field in [
        "request{",
        "turn{",
        "conversation_id=",
        "method=POST",
        "path=/api/chat",
    ] {
        assert!(started.contains(field), "{field} missing from: {started}");
    }
    assert!(
        text.lines()
            .any(|l| l.contains("turn finished") && l.contains(&run_id)),
        "{text}"
    );
    let token = |cookie: &str| cookie.trim_start_matches("__Host-kakeibo_session=").to_owned();
    for (what, secret) in [
        ("the first session token", token(&cookie)),
        ("the signed-in session token", token(&signed_in)),
        ("the password", password.to_owned()),
        ("the signing secret", JWT_SECRET.to_owned()),
        ("the email", email.to_owned()),
        ("the client address", address.to_owned()),
    ] {
        assert!(!text.contains(&secret), "{what} is in the log:\n{text}");
    }
}
