//! Input no one should send, each a defect found by probing the site: a NUL character in a chat
//! message (a `500` on a first message, a charged and unfinished turn on a later one), query
//! strings refused in plain text, JSON refusals that named Rust types.

use crate::support;

use axum::http::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_nul_in_a_message_is_refused_before_anything_is_charged(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);

    let first = app.chat(None, "hi\u{0}there").await;
    assert_eq!(first.status, StatusCode::BAD_REQUEST, "{}", first.body);
    assert!(
        first.json()["error"].as_str().unwrap().contains("NUL"),
        "{}",
        first.body
    );
    assert!(
        first.session_cookie().is_none(),
        "no visit began for a refused message"
    );

    let (cookie, _) = app.visitor("how much did I spend").await;
    let later = app.chat(Some(&cookie), "and\u{0}now").await;
    assert_eq!(later.status, StatusCode::BAD_REQUEST, "{}", later.body);
    let session = app.get("/api/session", Some(&cookie)).await.json();
    assert_eq!(
        session["messages"]["used"], 1,
        "the refused message was not counted"
    );
    let runs = app.runs(Some(&cookie)).await.json();
    let statuses: Vec<&str> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ok"], "one run, finished; none left running");

    // The same text as an escape inside a longer body, and in a field of another route.
    let escaped = app
        .raw(
            axum::http::Request::post("/api/session/sign-up")
                .header("origin", support::SITE)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(
                    r#"{"email":"a\u0000@b.example","password":"long enough pw"}"#,
                ))
                .unwrap(),
        )
        .await;
    assert_eq!(escaped.status, StatusCode::BAD_REQUEST, "{}", escaped.body);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn refusals_are_json_in_words(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;

    let query = app
        .get("/api/runs?limit=99999999999999999999", Some(&cookie))
        .await;
    assert_eq!(query.status, StatusCode::BAD_REQUEST, "{}", query.body);
    let error = query.json()["error"].as_str().unwrap().to_owned();
    assert!(
        error.starts_with("the query string is not valid: limit"),
        "{error}"
    );

    let words = app.get("/api/runs?limit=ten", Some(&cookie)).await.json();
    assert!(
        words["error"].as_str().unwrap().contains("limit: invalid digit"),
        "{words}"
    );

    let bare = app.post("/api/chat", json!("hello"), Some(&cookie)).await;
    assert_eq!(bare.status, StatusCode::BAD_REQUEST);
    let error = bare.json()["error"].as_str().unwrap().to_owned();
    assert!(error.contains("expected an object"), "{error}");
    assert!(!error.contains("ChatBody"), "{error}");

    let nul = app.get("/api/dashboard?month=2025-03%00", Some(&cookie)).await;
    assert_eq!(nul.status, StatusCode::BAD_REQUEST, "{}", nul.body);

    // A path segment that is not UTF-8: axum's own refusal, rewrapped.
    let path = app.get("/api/runs/%FF", Some(&cookie)).await;
    assert_eq!(path.status, StatusCode::BAD_REQUEST, "{}", path.body);
    assert!(path.json()["error"].as_str().is_some(), "{}", path.body);
}
