//! Sessions and accounts: forged and stale sessions are `401`; sign-up keeps the visitor's rows,
//! sign-in moves an anonymous visitor's rows onto the account; failed sign-ins slow down; deleting
//! the account deletes everything; the demo ledger is cloned once; a visit marks the visitor seen
//! at most once in five minutes.

use crate::support;

use axum::http::StatusCode;
use base64::Engine;
use chrono::{Duration, Utc};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use kakeibo_auth::{Claims, visitors};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn claims(sub: uuid::Uuid, issued: chrono::DateTime<Utc>, ttl: Duration) -> Claims {
    Claims {
        sub,
        iat: issued.timestamp(),
        exp: (issued + ttl).timestamp(),
        iss: "kakeibo".into(),
        ver: 0,
    }
}

fn sign(claims: &Claims, secret: &[u8]) -> String {
    encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret).unwrap(),
    )
    .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn forged_expired_and_orphaned_sessions_are_401(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let token = cookie.trim_start_matches("__Host-kakeibo_session=").to_owned();
    let owner = state.sessions.verify(&token).unwrap().sub;
    assert_eq!(app.runs(Some(&cookie)).await.status, StatusCode::OK);

    let now = Utc::now();
    let good = claims(owner, now, Duration::hours(1));
    let payload = b64(&serde_json::to_vec(&good).unwrap());
    let alg_none = format!("{}.{payload}.", b64(br#"{"alg":"none","typ":"JWT"}"#));
    let wrong_key = sign(&good, b"another-secret-another-secret-0123456789");
    let expired = sign(
        &claims(owner, now - Duration::hours(3), Duration::hours(1)),
        support::JWT_SECRET.as_bytes(),
    );
    let parts: Vec<&str> = token.split('.').collect();
    let other = claims(uuid::Uuid::new_v4(), now, Duration::hours(1));
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        b64(&serde_json::to_vec(&other).unwrap()),
        parts[2]
    );
    let not_a_token = "not-a-token".to_owned();

    for (attack, forged) in [
        ("alg: none", alg_none),
        ("wrong key", wrong_key),
        ("expired", expired),
        ("tampered payload", tampered),
        ("garbage", not_a_token),
    ] {
        let answer = app.runs(Some(&format!("__Host-kakeibo_session={forged}"))).await;
        assert_eq!(
            answer.status,
            StatusCode::UNAUTHORIZED,
            "{attack}: {}",
            answer.body
        );
        let clears: Vec<&str> = answer
            .headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert!(
            clears.iter().any(|c| c.starts_with("__Host-kakeibo_session=;")
                && c.contains("Max-Age=0")
                && c.contains("Secure")),
            "{attack}: {clears:?}"
        );
        // A forged session never starts a visit either.
        let chat = app
            .chat(Some(&format!("__Host-kakeibo_session={forged}")), "hi")
            .await;
        assert_eq!(chat.status, StatusCode::UNAUTHORIZED, "{attack}: chat");
    }

    // A valid token of a deleted visitor.
    let deleted = app.delete_account(Some(&cookie)).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    let after = app.runs(Some(&cookie)).await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED, "{}", after.body);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_visit_marks_the_visitor_seen_at_most_once_in_five_minutes(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let token = cookie.trim_start_matches("__Host-kakeibo_session=").to_owned();
    let owner = state.sessions.verify(&token).unwrap().sub;
    let seen = async || -> (chrono::DateTime<Utc>, String) {
        sqlx::query_as("SELECT last_seen_at, xmin::text FROM users WHERE id = $1")
            .bind(owner)
            .fetch_one(state.owner_pool.get())
            .await
            .unwrap()
    };
    // Seen a moment ago: a request reads the visitor and writes nothing.
    let before = seen().await;
    assert_eq!(app.runs(Some(&cookie)).await.status, StatusCode::OK);
    assert_eq!(seen().await, before, "the row was rewritten");
    // Seen ten minutes ago: the next request moves it to now, once.
    sqlx::query("UPDATE users SET last_seen_at = now() - interval '10 minutes' WHERE id = $1")
        .bind(owner)
        .execute(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(app.runs(Some(&cookie)).await.status, StatusCode::OK);
    let moved = seen().await;
    assert!(Utc::now() - moved.0 < Duration::minutes(1), "{moved:?}");
    assert_eq!(app.runs(Some(&cookie)).await.status, StatusCode::OK);
    assert_eq!(seen().await, moved);
}

/// Rows of `owner` across every owner-scoped table.
async fn rows_of(pool: &sqlx::PgPool, owner: uuid::Uuid) -> i64 {
    let mut total = 0;
    for table in [
        "accounts",
        "import_batches",
        "transactions",
        "postings",
        "rules",
        "budgets",
        "memories",
        "trace_runs",
        "trace_events",
        "conversations",
        "conversation_messages",
        "suspended_turns",
        "uploads",
        "owner_daily_messages",
    ] {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM {table} WHERE owner_id = $1"
        )))
        .bind(owner)
        .fetch_one(pool)
        .await
        .unwrap();
        total += n;
    }
    total
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn sign_up_keeps_and_sign_in_moves_the_visitors_rows(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let pool = state.owner_pool.get().clone();

    // X chats anonymously, then signs up: same visitor, now with an account.
    let (x, _) = app.visitor("how much did I spend").await;
    let x_id = state
        .sessions
        .verify(x.trim_start_matches("__Host-kakeibo_session="))
        .unwrap()
        .sub;
    let credentials = json!({"email": "Ana@Example.com ", "password": "a long enough password"});
    let signed_up = app
        .post("/api/session/sign-up", credentials.clone(), Some(&x))
        .await;
    assert_eq!(signed_up.status, StatusCode::OK, "{}", signed_up.body);
    assert_eq!(signed_up.json()["visitor"]["id"], x_id.to_string());
    assert_eq!(signed_up.json()["visitor"]["email"], "ana@example.com");
    assert_eq!(signed_up.json()["visitor"]["anonymous"], false);
    let x = signed_up.session_cookie().unwrap();
    let again = app
        .post("/api/session/sign-up", credentials.clone(), Some(&x))
        .await;
    assert_eq!(
        again.status,
        StatusCode::BAD_REQUEST,
        "already signed in: {}",
        again.body
    );

    // Sign-up checks.
    let (fresh, _) = app.visitor("hello").await;
    for (body, status) in [
        (
            json!({"email": "ana@example.com", "password": "another long password"}),
            StatusCode::CONFLICT,
        ),
        (
            json!({"email": "not-an-email", "password": "a long enough password"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"email": "bo@example.com", "password": "short"}),
            StatusCode::BAD_REQUEST,
        ),
        (json!({"email": "bo@example.com"}), StatusCode::BAD_REQUEST),
    ] {
        let answer = app.post("/api/session/sign-up", body.clone(), Some(&fresh)).await;
        assert_eq!(answer.status, status, "{body}: {}", answer.body);
    }

    // Y, a new anonymous visitor with a conversation, signs in as X: Y's rows move, Y is gone.
    let (y, _) = app.visitor("set a budget").await;
    let y_id = state
        .sessions
        .verify(y.trim_start_matches("__Host-kakeibo_session="))
        .unwrap()
        .sub;
    assert!(rows_of(&pool, y_id).await > 0);
    let signed_in = app
        .post("/api/session/sign-in", credentials.clone(), Some(&y))
        .await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", signed_in.body);
    assert_eq!(signed_in.json()["visitor"]["id"], x_id.to_string());
    assert_eq!(
        rows_of(&pool, y_id).await,
        0,
        "nothing is left with the anonymous visitor"
    );
    let x = signed_in.session_cookie().unwrap();
    let conversations = app.conversations(Some(&x)).await.json();
    assert_eq!(
        conversations["conversations"].as_array().unwrap().len(),
        2,
        "{conversations}"
    );
    let transactions: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions WHERE owner_id = $1")
        .bind(x_id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        transactions, 352,
        "the account keeps its own ledger; the anonymous one is not merged in"
    );
    let gone = app.runs(Some(&y)).await;
    assert_eq!(gone.status, StatusCode::UNAUTHORIZED);

    // Sign out clears the cookie; deleting the account deletes everything.
    let out = app.sign_out(Some(&x)).await;
    assert!(out.headers["set-cookie"].to_str().unwrap().contains("Max-Age=0"));
    assert!(rows_of(&pool, x_id).await > 0);
    let signed_out = app.delete_account(Some(&x)).await;
    assert_eq!(
        signed_out.status,
        StatusCode::UNAUTHORIZED,
        "the signed-out session deletes nothing"
    );
    let x = app
        .post("/api/session/sign-in", credentials, None)
        .await
        .session_cookie()
        .unwrap();
    let deleted = app.delete_account(Some(&x)).await;
    assert_eq!(deleted.status, StatusCode::OK);
    assert_eq!(rows_of(&pool, x_id).await, 0);
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE id = $1")
        .bind(x_id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(users, 0);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn an_anonymous_ledger_moves_onto_an_account_that_has_none(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let pool = state.owner_pool.get().clone();
    // An account made without ever touching its ledger.
    let account = account(&state, "cy@example.com", "a long enough password").await;
    // An anonymous visitor who set a budget.
    let (y, chat) = app.visitor("set a budget").await;
    let pending = chat
        .events()
        .into_iter()
        .find(|(e, _)| e == "confirm_request")
        .unwrap()
        .1;
    let confirm = json!({"suspended_turn_id": pending["suspended_turn_id"], "decisions": [{"id": pending["id"], "allowed": true}]});
    assert_eq!(
        app.post("/api/confirm", confirm, Some(&y)).await.status,
        StatusCode::OK
    );
    let signed_in = app
        .post(
            "/api/session/sign-in",
            json!({"email": "cy@example.com", "password": "a long enough password"}),
            Some(&y),
        )
        .await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", signed_in.body);
    let budgets: i64 = sqlx::query_scalar("SELECT count(*) FROM budgets WHERE owner_id = $1")
        .bind(account.id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(budgets, 1, "the ledger moved with its budget");
    let transactions: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions WHERE owner_id = $1")
        .bind(account.id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(transactions, 352);
    // The moved ledger is whole: every posting references an account of the same owner.
    let x = signed_in.session_cookie().unwrap();
    let dashboard = app.dashboard(Some(&x)).await;
    assert_eq!(dashboard.status, StatusCode::OK, "{}", dashboard.body);
    let again: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions WHERE owner_id = $1")
        .bind(account.id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(again, 352, "the demo ledger is not cloned a second time");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn repeated_failed_sign_ins_are_slowed(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    account(&state, "dee@example.com", "the right password").await;
    let wrong = json!({"email": "dee@example.com", "password": "the wrong password"});
    for attempt in 0..kakeibo_auth::visitors::FREE_FAILURES {
        let answer = app.post("/api/session/sign-in", wrong.clone(), None).await;
        assert_eq!(
            answer.status,
            StatusCode::UNAUTHORIZED,
            "attempt {attempt}: {}",
            answer.body
        );
    }
    let right = json!({"email": "dee@example.com", "password": "the right password"});
    let slowed = app.post("/api/session/sign-in", right.clone(), None).await;
    assert_eq!(slowed.status, StatusCode::TOO_MANY_REQUESTS, "{}", slowed.body);
    assert!(slowed.headers.contains_key("retry-after"));
    // An unknown address is slowed the same way, so a wait does not reveal which accounts exist.
    for _ in 0..kakeibo_auth::visitors::FREE_FAILURES {
        let answer = app
            .post(
                "/api/session/sign-in",
                json!({"email": "nobody@example.com", "password": "whatever it is"}),
                None,
            )
            .await;
        assert!(matches!(
            answer.status,
            StatusCode::UNAUTHORIZED | StatusCode::TOO_MANY_REQUESTS
        ));
    }
    // Once the wait has passed, the right password works again.
    sqlx::query("UPDATE sign_in_failures SET last_failed_at = last_failed_at - interval '1 hour'")
        .execute(state.owner_pool.get())
        .await
        .unwrap();
    let through = app.post("/api/session/sign-in", right, None).await;
    assert_eq!(through.status, StatusCode::OK, "{}", through.body);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_demo_ledger_is_cloned_once_under_concurrency(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let visitor = visitors::create_anonymous(&state.owner_pool).await.unwrap();
    let clones = (0..8).map(|_| {
        let (state, owner) = (state.clone(), visitor.owner());
        tokio::spawn(async move {
            kakeibo_ledger::seed::ensure_demo_ledger(owner, &state.app)
                .await
                .unwrap()
        })
    });
    let mut cloned = 0;
    for c in clones {
        cloned += usize::from(c.await.unwrap());
    }
    assert_eq!(cloned, 1);
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions WHERE owner_id = $1")
        .bind(visitor.id)
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(n, 352);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn sign_out_and_sign_up_end_copied_sessions_and_a_typo_keeps_the_visit(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);

    // Signing up moves the session epoch on: a copy of the anonymous token stops working.
    let (anonymous, _) = app.visitor("hello").await;
    let credentials = json!({"email": "eve@example.com", "password": "a long enough password"});
    let signed_up = app
        .post("/api/session/sign-up", credentials.clone(), Some(&anonymous))
        .await;
    assert_eq!(signed_up.status, StatusCode::OK);
    assert_eq!(app.runs(Some(&anonymous)).await.status, StatusCode::UNAUTHORIZED);
    let account = signed_up.session_cookie().unwrap();
    assert_eq!(app.runs(Some(&account)).await.status, StatusCode::OK);

    // Signing out ends every copy of the session.
    let copy = account.clone();
    app.sign_out(Some(&account)).await;
    let after = app.runs(Some(&copy)).await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED, "{}", after.body);

    // A wrong password is a 401 that keeps the visitor's own (anonymous) session.
    let (visit, _) = app.visitor("hello").await;
    let wrong = app
        .post(
            "/api/session/sign-in",
            json!({"email": "eve@example.com", "password": "not the password"}),
            Some(&visit),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(
        !wrong.headers.contains_key("set-cookie"),
        "the session cookie is kept"
    );
    assert_eq!(app.runs(Some(&visit)).await.status, StatusCode::OK);
    let right = app.post("/api/session/sign-in", credentials, Some(&visit)).await;
    assert_eq!(right.status, StatusCode::OK);
    let conversations = app.conversations(right.session_cookie().as_deref()).await;
    assert_eq!(
        conversations.json()["conversations"].as_array().unwrap().len(),
        2,
        "the visit moved onto the account"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn concurrent_guesses_are_counted_before_the_password_is_checked(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    account(&state, "fay@example.com", "the right password").await;
    let guesses = (0..20).map(|i| {
        let app = app.clone();
        tokio::spawn(async move {
            let body = json!({"email": "fay@example.com", "password": format!("guess number {i}")});
            app.post("/api/session/sign-in", body, None).await.status
        })
    });
    let mut checked = 0;
    let mut slowed = 0;
    for guess in guesses {
        match guess.await.unwrap() {
            StatusCode::UNAUTHORIZED => checked += 1,
            StatusCode::TOO_MANY_REQUESTS => slowed += 1,
            other => panic!("unexpected {other}"),
        }
    }
    let free = usize::try_from(kakeibo_auth::visitors::FREE_FAILURES).unwrap();
    assert_eq!((checked, slowed), (free, 20 - free));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn probing_emails_through_sign_up_is_slowed_as_sign_in_is(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    account(&state, "eve@example.com", "the right password").await;
    // Each probe says the address is taken (it cannot be hidden from whoever tries it without
    // sending email), and each counts as a failed sign-in would.
    let probe = json!({"email": "eve@example.com", "password": "some long password"});
    for attempt in 0..kakeibo_auth::visitors::FREE_FAILURES {
        let answer = app.post("/api/session/sign-up", probe.clone(), None).await;
        assert_eq!(
            answer.status,
            StatusCode::CONFLICT,
            "attempt {attempt}: {}",
            answer.body
        );
    }
    let slowed = app.post("/api/session/sign-up", probe.clone(), None).await;
    assert_eq!(slowed.status, StatusCode::TOO_MANY_REQUESTS, "{}", slowed.body);
    let wait: i64 = slowed.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(wait >= 1, "{wait}");
    // The same counter slows sign-in to that account.
    let sign_in = app
        .post(
            "/api/session/sign-in",
            json!({"email": "eve@example.com", "password": "the right password"}),
            None,
        )
        .await;
    assert_eq!(sign_in.status, StatusCode::TOO_MANY_REQUESTS, "{}", sign_in.body);
}

/// An account made out of band (its visit never touched the ledger), as a test's starting point.
async fn account(state: &kakeibo_api::State, email: &str, password: &str) -> kakeibo_auth::Visitor {
    let visit = visitors::create_anonymous(&state.owner_pool).await.unwrap();
    visitors::sign_up(
        &state.owner_pool,
        &visit,
        email,
        password,
        None,
        chrono::Utc::now(),
    )
    .await
    .unwrap()
}
