//! An account's address and password through the routes, with mail going to a local outbox the
//! tests read: the link that proves an address, a reset by mail, a change with the current
//! password; every change of password ends every other session; failed sign-ins from one address
//! never lock the owner out from another; blank and guessable passwords are refused with a reason.

use crate::support;

use std::path::PathBuf;

use axum::http::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{ADDRESS_HEADER, Isolation, TestApp, mailed_token, mails, outbox, state};

const PASSWORD: &str = "a long enough password";

async fn site(connect: &PgConnectOptions) -> (TestApp, std::sync::Arc<kakeibo_api::State>, PathBuf) {
    let outbox = outbox();
    let state = state(
        connect,
        Isolation::Rls,
        &[
            ("MAIL_OUTBOX", outbox.to_str().unwrap()),
            ("CLIENT_ADDRESS_HEADER", ADDRESS_HEADER),
        ],
    )
    .await;
    (TestApp::new(&state), state, outbox)
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn an_address_is_proven_by_its_link_once(_: PgPoolOptions, connect: PgConnectOptions) {
    let (app, _state, outbox) = site(&connect).await;
    assert_eq!(app.get("/api/session", None).await.json()["mail"], true);
    let account = app.signed_up("Ana@Example.com", PASSWORD).await;
    assert_eq!(app.visitor_of(&account).await["email_verified"], false);

    let sent = mails(&outbox);
    assert_eq!(sent.len(), 1, "one mail for one sign-up: {sent:?}");
    assert_eq!(sent[0]["to"], "ana@example.com");
    assert_eq!(sent[0]["purpose"], "verify");
    let token = mailed_token(&outbox, "ana@example.com", "verify");

    let garbage = app
        .post("/api/session/verify-email", json!({"token": "not-a-token"}), None)
        .await;
    assert_eq!(garbage.status, StatusCode::GONE, "{}", garbage.body);
    // The link works from any browser: the token is the proof.
    let verified = app
        .post("/api/session/verify-email", json!({"token": token}), None)
        .await;
    assert_eq!(verified.status, StatusCode::OK, "{}", verified.body);
    assert_eq!(app.visitor_of(&account).await["email_verified"], true);
    let again = app
        .post("/api/session/verify-email", json!({"token": token}), None)
        .await;
    assert_eq!(again.status, StatusCode::GONE, "a link is good once");

    // A proven address needs no other link.
    let resend = app
        .post_empty("/api/session/verify-email/resend", Some(&account))
        .await;
    assert_eq!(resend.status, StatusCode::ACCEPTED, "{}", resend.body);
    assert_eq!(resend.json()["sent"], false);
    assert_eq!(mails(&outbox).len(), 1);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_resent_link_replaces_the_first(_: PgPoolOptions, connect: PgConnectOptions) {
    let (app, _state, outbox) = site(&connect).await;
    let account = app.signed_up("bo@example.com", PASSWORD).await;
    let first = mailed_token(&outbox, "bo@example.com", "verify");
    let resend = app
        .post_empty("/api/session/verify-email/resend", Some(&account))
        .await;
    assert_eq!(resend.status, StatusCode::ACCEPTED, "{}", resend.body);
    assert_eq!(resend.json()["sent"], true);
    let second = mailed_token(&outbox, "bo@example.com", "verify");
    assert_ne!(first, second);
    let stale = app
        .post("/api/session/verify-email", json!({"token": first}), None)
        .await;
    assert_eq!(stale.status, StatusCode::GONE);
    let fresh = app
        .post("/api/session/verify-email", json!({"token": second}), None)
        .await;
    assert_eq!(fresh.status, StatusCode::OK, "{}", fresh.body);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_password_is_reset_by_mail_and_every_session_ends(_: PgPoolOptions, connect: PgConnectOptions) {
    let (app, state, outbox) = site(&connect).await;
    let first = app.signed_up("cy@example.com", PASSWORD).await;
    let (status, second) = app.sign_in("cy@example.com", PASSWORD).await;
    assert_eq!(status, StatusCode::OK);
    let second = second.unwrap();

    // Asked for a known and an unknown address: the same answer, one mail.
    let known = app
        .post(
            "/api/session/password-reset",
            json!({"email": " CY@example.com "}),
            None,
        )
        .await;
    let unknown = app
        .post(
            "/api/session/password-reset",
            json!({"email": "nobody@example.com"}),
            None,
        )
        .await;
    assert_eq!(
        (known.status, unknown.status),
        (StatusCode::ACCEPTED, StatusCode::ACCEPTED)
    );
    assert_eq!(known.body, unknown.body);
    let resets: Vec<Value> = mails(&outbox)
        .into_iter()
        .filter(|m| m["purpose"] == "reset")
        .collect();
    assert_eq!(resets.len(), 1, "{resets:?}");
    let token = mailed_token(&outbox, "cy@example.com", "reset");

    // A weak password is refused with its reason, and the link stays good.
    let weak = app
        .post(
            "/api/session/password-reset/confirm",
            json!({"token": token, "password": "password123"}),
            None,
        )
        .await;
    assert_eq!(weak.status, StatusCode::BAD_REQUEST, "{}", weak.body);
    assert!(
        weak.json()["error"]
            .as_str()
            .unwrap()
            .contains("too easy to guess")
    );
    let reset = app
        .post(
            "/api/session/password-reset/confirm",
            json!({"token": token, "password": "a brand new secret phrase"}),
            None,
        )
        .await;
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    assert!(reset.session_cookie().is_none(), "the person signs in afresh");

    for (name, cookie) in [("first", &first), ("second", &second)] {
        assert_eq!(
            app.visitor_of(cookie).await,
            Value::Null,
            "the {name} session is over"
        );
    }
    assert_eq!(
        app.sign_in("cy@example.com", PASSWORD).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, fresh) = app.sign_in("cy@example.com", "a brand new secret phrase").await;
    assert_eq!(status, StatusCode::OK);
    // The link reached the address: it is proven.
    assert_eq!(app.visitor_of(&fresh.unwrap()).await["email_verified"], true);
    let reused = app
        .post(
            "/api/session/password-reset/confirm",
            json!({"token": token, "password": "yet another secret phrase"}),
            None,
        )
        .await;
    assert_eq!(reused.status, StatusCode::GONE, "{}", reused.body);

    // An expired link is refused too.
    app.post(
        "/api/session/password-reset",
        json!({"email": "cy@example.com"}),
        None,
    )
    .await;
    let late = mailed_token(&outbox, "cy@example.com", "reset");
    sqlx::query("UPDATE email_tokens SET expires_at = now() - interval '1 second' WHERE purpose = 'reset'")
        .execute(state.owner_pool.get())
        .await
        .unwrap();
    let expired = app
        .post(
            "/api/session/password-reset/confirm",
            json!({"token": late, "password": "yet another secret phrase"}),
            None,
        )
        .await;
    assert_eq!(expired.status, StatusCode::GONE, "{}", expired.body);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn reset_requests_are_counted_per_address_asked_for(_: PgPoolOptions, connect: PgConnectOptions) {
    let (app, _state, outbox) = site(&connect).await;
    app.signed_up("di@example.com", PASSWORD).await;
    for _ in 0..kakeibo_auth::visitors::FREE_FAILURES {
        let answer = app
            .post(
                "/api/session/password-reset",
                json!({"email": "di@example.com"}),
                None,
            )
            .await;
        assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.body);
    }
    let slowed = app
        .post(
            "/api/session/password-reset",
            json!({"email": "di@example.com"}),
            None,
        )
        .await;
    assert_eq!(slowed.status, StatusCode::TOO_MANY_REQUESTS, "{}", slowed.body);
    let resets = mails(&outbox).iter().filter(|m| m["purpose"] == "reset").count();
    assert_eq!(
        resets,
        usize::try_from(kakeibo_auth::visitors::FREE_FAILURES).unwrap()
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_password_change_needs_the_current_one_and_ends_other_sessions(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (app, _state, _outbox) = site(&connect).await;
    let here = app.signed_up("ed@example.com", PASSWORD).await;
    let (_, elsewhere) = app.sign_in("ed@example.com", PASSWORD).await;
    let elsewhere = elsewhere.unwrap();

    let change = |current: &str, new: &str| json!({"current": current, "password": new});
    let wrong = app
        .post(
            "/api/session/password",
            change("not it at all", "a brand new secret phrase"),
            Some(&here),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{}", wrong.body);
    assert_ne!(
        app.visitor_of(&here).await,
        Value::Null,
        "a wrong guess keeps the session"
    );
    let weak = app
        .post(
            "/api/session/password",
            change(PASSWORD, "qwertyuiop"),
            Some(&here),
        )
        .await;
    assert_eq!(weak.status, StatusCode::BAD_REQUEST, "{}", weak.body);
    let anonymous = app.visitor("hi").await.0;
    let refused = app
        .post(
            "/api/session/password",
            change(PASSWORD, "a brand new secret phrase"),
            Some(&anonymous),
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);

    let changed = app
        .post(
            "/api/session/password",
            change(PASSWORD, "a brand new secret phrase"),
            Some(&here),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    let renewed = changed
        .session_cookie()
        .expect("this browser keeps a fresh session");
    assert_eq!(app.visitor_of(&renewed).await["email"], "ed@example.com");
    assert_eq!(
        app.visitor_of(&elsewhere).await,
        Value::Null,
        "every other session ended"
    );
    assert_eq!(app.visitor_of(&here).await, Value::Null, "the old cookie too");
    assert_eq!(
        app.sign_in("ed@example.com", PASSWORD).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.sign_in("ed@example.com", "a brand new secret phrase").await.0,
        StatusCode::OK
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn failures_from_one_address_never_lock_the_owner_out_from_another(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (app, _state, _outbox) = site(&connect).await;
    app.signed_up("fay@example.com", PASSWORD).await;
    let attacker = "203.0.113.7";
    let owner = "198.51.100.9";
    let guess = json!({"email": "fay@example.com", "password": "is it this one"});
    let mut slowed = false;
    for _ in 0..(kakeibo_auth::visitors::FREE_FAILURES * 2) {
        let answer = app
            .post_from(attacker, "/api/session/sign-in", guess.clone(), None)
            .await;
        slowed |= answer.status == StatusCode::TOO_MANY_REQUESTS;
    }
    assert!(slowed, "the guessing address is slowed");
    let right = json!({"email": "fay@example.com", "password": PASSWORD});
    let at_attacker = app
        .post_from(attacker, "/api/session/sign-in", right.clone(), None)
        .await;
    assert_eq!(
        at_attacker.status,
        StatusCode::TOO_MANY_REQUESTS,
        "still slowed there"
    );
    let at_owner = app.post_from(owner, "/api/session/sign-in", right, None).await;
    assert_eq!(at_owner.status, StatusCode::OK, "{}", at_owner.body);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn blank_and_guessable_passwords_are_refused_with_a_reason(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (app, _state, _outbox) = site(&connect).await;
    let (visit, _) = app.visitor("hello").await;
    for (password, says) in [
        ("            ", "only spaces"),
        ("password1234", "too easy to guess"),
        ("figueroa2024", "too easy to guess"),
    ] {
        let answer = app
            .post(
                "/api/session/sign-up",
                json!({"email": "gi.figueroa@example.com", "password": password}),
                Some(&visit),
            )
            .await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{password:?}: {}",
            answer.body
        );
        let error = answer.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(says), "{password:?}: {error}");
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn without_mail_the_links_are_off_and_said_so(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    assert_eq!(app.get("/api/session", None).await.json()["mail"], false);
    let account = app.signed_up("hal@example.com", PASSWORD).await;
    assert_eq!(app.visitor_of(&account).await["email_verified"], false);
    let reset = app
        .post(
            "/api/session/password-reset",
            json!({"email": "hal@example.com"}),
            None,
        )
        .await;
    assert_eq!(reset.status, StatusCode::SERVICE_UNAVAILABLE, "{}", reset.body);
    assert_eq!(reset.json()["reason"], "mail_off");
    let resend = app
        .post_empty("/api/session/verify-email/resend", Some(&account))
        .await;
    assert_eq!(resend.json()["reason"], "mail_off");
}
