//! The bot check before a visit starts or grows (`TURNSTILE_SECRET`): a first message, a visit
//! started without one, a sign-up, an upload, a preview. Against a local stand-in of Cloudflare's
//! `siteverify` that answers as the real one does (`{success, error-codes}`), and misbehaves on
//! cue: refuses, answers 500, answers something that is not JSON, or hangs past the check's
//! timeout. Every failure refuses the request before a visitor is made or anything charged; a
//! visitor who passed is asked no more.

use crate::support;

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Json, Router, body::Body, http::StatusCode, routing::post};
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
        Some(token) => json!({"message": message, "turnstile_token": token}),
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
    assert_eq!(session["bot_check"]["site_key"], "site-key-for-the-page");

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
        session["bot_check"],
        Value::Null,
        "the page shows no widget any more"
    );

    // A token is single-use: the same one does not let a second visitor in.
    let reused = app.post("/api/chat", chat("hello", Some("pass-1")), None).await;
    assert_eq!(reused.status, StatusCode::FORBIDDEN, "{}", reused.body);
    assert_eq!(count(&state, users).await, 1);
}

/// A visit the check never saw (made before it was turned on, say): its session cookie.
async fn unchecked_visit(state: &kakeibo_api::State) -> (String, kakeibo_auth::Visitor) {
    let visitor = kakeibo_auth::visitors::create_anonymous(&state.owner_pool)
        .await
        .unwrap();
    let cookie = kakeibo_api::visitor::issue(state, &visitor).unwrap();
    (cookie.split(';').next().unwrap().to_owned(), visitor)
}

/// A `POST` with the check's token in its header (and the site's origin).
async fn post_with_token(
    app: &TestApp,
    path: &str,
    cookie: Option<&str>,
    token: Option<&str>,
    body: Body,
) -> support::Answer {
    let mut request = axum::http::Request::post(path)
        .header("origin", support::SITE)
        .header("content-type", "application/json");
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    if let Some(token) = token {
        request = request.header(kakeibo_api::visitor::BOT_CHECK_HEADER, token);
    }
    app.raw(request.body(body).unwrap()).await
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_route_that_makes_or_grows_a_visit_asks_for_the_check(
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
    let users = "SELECT count(*) FROM users";
    let checked = "SELECT count(*) FROM users WHERE human_checked_at IS NOT NULL";
    let required = |answer: &support::Answer| {
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.body);
        assert_eq!(answer.json()["reason"], "bot_check_required");
    };

    // Starting a visit without a message, or signing up from nothing: no visitor without a token.
    let before = count(&state, users).await;
    required(&app.post_empty("/api/session", None).await);
    required(
        &app.post(
            "/api/session/sign-up",
            json!({"email": "bot@example.com", "password": "a long enough password"}),
            None,
        )
        .await,
    );
    assert_eq!(count(&state, users).await, before, "nobody was made");
    let started = post_with_token(&app, "/api/session", None, Some("pass-2"), Body::from("{}")).await;
    assert_eq!(started.status, StatusCode::CREATED, "{}", started.body);
    assert_eq!(count(&state, checked).await, 1);
    let visit = started.session_cookie().unwrap();
    let fine = app.post("/api/chat", chat("hello", None), Some(&visit)).await;
    assert_eq!(
        fine.status,
        StatusCode::OK,
        "a checked visit is asked no more: {}",
        fine.body
    );

    // A visit the check never saw cannot upload, preview or sign up until it passes.
    let (unchecked, visitor) = unchecked_visit(&state).await;
    let csv = b"Date,Description,Amount\n2026-11-02,Rent,-1200.00\n".to_vec();
    let upload = |token: Option<&'static str>| {
        let (app, unchecked, csv) = (app.clone(), unchecked.clone(), csv.clone());
        async move {
            let mut request = axum::http::Request::post("/api/uploads?filename=s.csv")
                .header("origin", support::SITE)
                .header("cookie", &unchecked)
                .header("content-type", "text/csv");
            if let Some(token) = token {
                request = request.header(kakeibo_api::visitor::BOT_CHECK_HEADER, token);
            }
            app.raw(request.body(Body::from(csv)).unwrap()).await
        }
    };
    required(&upload(None).await);
    let stored = kakeibo_operator::uploads::save_upload(
        visitor.owner(),
        &state.app,
        "kept.csv",
        Some("text/csv"),
        &csv,
        false,
    )
    .await
    .unwrap();
    let preview = format!("/api/uploads/{}/preview", stored.upload.id);
    required(&post_with_token(&app, &preview, Some(&unchecked), None, Body::empty()).await);
    required(&post_with_token(&app, "/api/uploads/sample", Some(&unchecked), None, Body::empty()).await);
    required(
        &app.post(
            "/api/session/sign-up",
            json!({"email": "late@example.com", "password": "a long enough password"}),
            Some(&unchecked),
        )
        .await,
    );
    let previewed = post_with_token(&app, &preview, Some(&unchecked), Some("pass-3"), Body::empty()).await;
    assert_eq!(previewed.status, StatusCode::OK, "{}", previewed.body);
    assert_eq!(count(&state, checked).await, 2, "the visit passed, once");
    // The same bytes as the statement kept above: that upload again.
    assert_eq!(upload(None).await.status, StatusCode::OK);

    // Signing up keeps the visitor's row, and so the mark; a sign-up's own token is in its body.
    let (other, _) = unchecked_visit(&state).await;
    let signed_up = app
        .post(
            "/api/session/sign-up",
            json!({"email": "human@example.com", "password": "a long enough password", "turnstile_token": "pass-4"}),
            Some(&other),
        )
        .await;
    assert!(signed_up.status.is_success(), "{}", signed_up.body);
    let cookie = signed_up.session_cookie().unwrap();
    assert_eq!(
        app.get("/api/session", Some(&cookie)).await.json()["bot_check"],
        Value::Null
    );

    // An account made without the check gets the mark when a checked visit signs in to it.
    let credentials = json!({"email": "later@example.com", "password": "another long password"});
    let bare_visitor = kakeibo_auth::visitors::create_anonymous(&state.owner_pool)
        .await
        .unwrap();
    kakeibo_auth::visitors::sign_up(
        &state.owner_pool,
        &bare_visitor,
        "later@example.com",
        "another long password",
        None,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let visit = app.post("/api/chat", chat("hello", Some("pass-5")), None).await;
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
            .json()["bot_check"],
        Value::Null,
        "the checked visit's mark moved onto the account"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn off_without_a_secret(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    assert_eq!(
        app.get("/api/session", None).await.json()["bot_check"],
        Value::Null
    );
    let answered = app.post("/api/chat", chat("hello", None), None).await;
    assert_eq!(answered.status, StatusCode::OK, "{}", answered.body);
}
