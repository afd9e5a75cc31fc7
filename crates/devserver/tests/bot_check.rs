//! The bot check before a visitor's first message (`TURNSTILE_SECRET`), against a local stand-in
//! of Cloudflare's `siteverify` that answers as the real one does (`{success, error-codes}`), and
//! misbehaves on cue: refuses, answers 500, answers something that is not JSON, or hangs past the
//! check's timeout. Every failure refuses the message before a visitor is made or anything charged;
//! a visitor who passed is asked no more.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Json, Router, http::StatusCode, routing::post};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, serve, state};

const SECRET: &str = "stand-in-secret";

/// The tokens the stand-in was asked about, in order.
type Asked = Arc<Mutex<Vec<String>>>;

/// `siteverify`: `pass-*` tokens pass once (a second use is `timeout-or-duplicate`, as Cloudflare
/// answers), `hang` sleeps past the check's timeout, `boom` is a 500, `junk` is not JSON, anything
/// else is refused; a wrong secret is `invalid-input-secret`.
async fn stand_in() -> (String, Asked) {
    let asked: Asked = Arc::default();
    let used = Arc::new(Mutex::new(BTreeSet::<String>::new()));
    let seen = Arc::clone(&asked);
    let app = Router::new().route(
        "/siteverify",
        post(move |Json(body): Json<Value>| {
            let (seen, used) = (Arc::clone(&seen), Arc::clone(&used));
            async move {
                let token = body["response"].as_str().unwrap_or_default().to_owned();
                seen.lock().unwrap().push(token.clone());
                let refused = |code: &str| json!({"success": false, "error-codes": [code]});
                let answer = if body["secret"] != SECRET {
                    refused("invalid-input-secret")
                } else if token == "hang" {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    json!({"success": true})
                } else if token == "boom" {
                    return (StatusCode::INTERNAL_SERVER_ERROR, "upstream error".to_owned());
                } else if token == "junk" {
                    return (StatusCode::OK, "<html>not the API</html>".to_owned());
                } else if token.starts_with("pass-") {
                    if used.lock().unwrap().insert(token.clone()) {
                        json!({"success": true, "challenge_ts": "2026-12-03T07:00:00Z", "hostname": "kakeibo.example", "error-codes": []})
                    } else {
                        refused("timeout-or-duplicate")
                    }
                } else {
                    refused("invalid-input-response")
                };
                (StatusCode::OK, answer.to_string())
            }
        }),
    );
    (format!("{}/siteverify", serve(app).await), asked)
}

async fn count(state: &kakeibo_api::State, sql: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap()
}

fn chat(message: &str, token: Option<&str>) -> Value {
    match token {
        Some(token) => json!({"message": message, "turnstileToken": token}),
        None => json!({"message": message}),
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_first_message_needs_a_verified_token_and_only_once(_: PgPoolOptions, connect: PgConnectOptions) {
    let (verify_url, asked) = stand_in().await;
    let state = state(
        &connect,
        Isolation::Rls,
        &[
            ("TURNSTILE_SECRET", SECRET),
            ("TURNSTILE_SITE_KEY", "site-key-for-the-page"),
            ("TURNSTILE_VERIFY_URL", &verify_url),
        ],
    )
    .await;
    let app = TestApp::new(&state);
    let users = "SELECT count(*) FROM users WHERE is_anonymous";
    let charged = "SELECT coalesce(sum(count), 0)::bigint FROM owner_daily_messages";

    // The page learns that the check is on, and with which site key.
    let session = app.get("/api/session", None).await.json();
    assert_eq!(session["botCheck"]["siteKey"], "site-key-for-the-page");

    // Refused, each in words and with its reason, before a visitor is made or a message charged.
    let missing = app.post("/api/chat", chat("hello", None), None).await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN, "{}", missing.body);
    assert_eq!(missing.json()["reason"], "bot_check_required");
    assert!(asked.lock().unwrap().is_empty(), "no token, no call");
    for (token, status, reason) in [
        ("forged", StatusCode::FORBIDDEN, "bot_check_failed"),
        ("boom", StatusCode::SERVICE_UNAVAILABLE, "bot_check_unavailable"),
        ("junk", StatusCode::SERVICE_UNAVAILABLE, "bot_check_unavailable"),
        ("hang", StatusCode::SERVICE_UNAVAILABLE, "bot_check_unavailable"),
    ] {
        let started = std::time::Instant::now();
        let refused = app.post("/api/chat", chat("hello", Some(token)), None).await;
        assert_eq!(refused.status, status, "{token}: {}", refused.body);
        assert_eq!(refused.json()["reason"], reason, "{token}");
        assert!(!refused.json()["error"].as_str().unwrap().is_empty());
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{token}: the check gives up after its timeout"
        );
    }
    assert_eq!(count(&state, users).await, 0, "no visitor was made");
    assert_eq!(count(&state, charged).await, 0, "nothing was charged");

    // A token the endpoint accepts: the message is answered and the visitor remembered.
    let passed = app.post("/api/chat", chat("hello", Some("pass-1")), None).await;
    assert_eq!(passed.status, StatusCode::OK, "{}", passed.body);
    assert!(passed.body.contains("event: turn_end"), "{}", passed.body);
    let cookie = passed.session_cookie().unwrap();
    assert_eq!(
        count(
            &state,
            "SELECT count(*) FROM users WHERE human_checked_at IS NOT NULL"
        )
        .await,
        1
    );
    let calls = asked.lock().unwrap().len();
    let again = app
        .post("/api/chat", chat("and again", None), Some(&cookie))
        .await;
    assert_eq!(again.status, StatusCode::OK, "asked once: {}", again.body);
    assert_eq!(asked.lock().unwrap().len(), calls, "no second verification");
    let session = app.get("/api/session", Some(&cookie)).await.json();
    assert_eq!(
        session["botCheck"],
        Value::Null,
        "the page shows no widget any more"
    );

    // A token is single-use: the same one does not let a second visitor in.
    let reused = app.post("/api/chat", chat("hello", Some("pass-1")), None).await;
    assert_eq!(reused.status, StatusCode::FORBIDDEN, "{}", reused.body);
    assert_eq!(count(&state, users).await, 1);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_visit_started_without_a_message_is_checked_at_its_first_one(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (verify_url, _) = stand_in().await;
    let state = state(
        &connect,
        Isolation::Rls,
        &[
            ("TURNSTILE_SECRET", SECRET),
            ("TURNSTILE_SITE_KEY", "k"),
            ("TURNSTILE_VERIFY_URL", &verify_url),
        ],
    )
    .await;
    let app = TestApp::new(&state);
    let cookie = app
        .post_empty("/api/session", None)
        .await
        .session_cookie()
        .unwrap();
    let refused = app.post("/api/chat", chat("hello", None), Some(&cookie)).await;
    assert_eq!(refused.json()["reason"], "bot_check_required");
    let passed = app
        .post("/api/chat", chat("hello", Some("pass-2")), Some(&cookie))
        .await;
    assert_eq!(passed.status, StatusCode::OK, "{}", passed.body);
    assert_eq!(
        count(
            &state,
            "SELECT count(*) FROM users WHERE human_checked_at IS NOT NULL"
        )
        .await,
        1,
        "the same visitor, now marked"
    );
    assert_eq!(
        count(&state, "SELECT count(*) FROM users WHERE is_anonymous").await,
        1
    );

    // Signing up keeps the visitor's row, and so the mark.
    let signed_up = app
        .post(
            "/api/session/sign-up",
            json!({"email": "human@example.com", "password": "a long enough password"}),
            Some(&cookie),
        )
        .await;
    assert!(signed_up.status.is_success(), "{}", signed_up.body);
    let cookie = signed_up.session_cookie().unwrap();
    assert_eq!(
        app.get("/api/session", Some(&cookie)).await.json()["botCheck"],
        Value::Null
    );

    // An account made without the check (a visit that never sent a message) gets the mark when a
    // checked visit signs in to it.
    let credentials = json!({"email": "later@example.com", "password": "another long password"});
    let unchecked = app
        .post_empty("/api/session", None)
        .await
        .session_cookie()
        .unwrap();
    let account = app
        .post("/api/session/sign-up", credentials.clone(), Some(&unchecked))
        .await;
    assert!(account.status.is_success(), "{}", account.body);
    let account = account.session_cookie().unwrap();
    assert_eq!(
        app.get("/api/session", Some(&account)).await.json()["botCheck"]["siteKey"],
        "k"
    );
    let visit = app.post("/api/chat", chat("hello", Some("pass-3")), None).await;
    assert_eq!(visit.status, StatusCode::OK, "{}", visit.body);
    let signed_in = app
        .post(
            "/api/session/sign-in",
            credentials,
            Some(&visit.session_cookie().unwrap()),
        )
        .await;
    assert!(signed_in.status.is_success(), "{}", signed_in.body);
    assert_eq!(
        app.get("/api/session", Some(&signed_in.session_cookie().unwrap()))
            .await
            .json()["botCheck"],
        Value::Null,
        "the checked visit's mark moved onto the account"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn off_without_a_secret(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    assert_eq!(
        app.get("/api/session", None).await.json()["botCheck"],
        Value::Null
    );
    let answered = app.post("/api/chat", chat("hello", None), None).await;
    assert_eq!(answered.status, StatusCode::OK, "{}", answered.body);
}
