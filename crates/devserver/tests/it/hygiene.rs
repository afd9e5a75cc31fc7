//! Request hygiene through the routers: cross-site writes refused, body limits, JSON errors that
//! say what is wrong, unknown routes and wrong methods.

use crate::support;

use axum::{body::Body, http::Request};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};

async fn post(app: &TestApp, path: &str, headers: &[(&str, &str)], body: Vec<u8>) -> support::Answer {
    let mut request = Request::post(path);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    app.raw(request.body(Body::from(body)).unwrap()).await
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn bad_requests_get_clear_answers(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let json = ("content-type", "application/json");
    let hello = br#"{"message":"hello"}"#.to_vec();

    // Writes from another site, or with no sign of where they come from, are refused.
    let evil = post(
        &app,
        "/api/chat",
        &[json, ("origin", "https://evil.example")],
        hello.clone(),
    )
    .await;
    assert_eq!(evil.status, 403, "{}", evil.body);
    let anonymous = post(&app, "/api/chat", &[json], hello.clone()).await;
    assert_eq!(anonymous.status, 403, "{}", anonymous.body);
    // Host names this server whoever sent the request: it proves nothing.
    let by_host = post(
        &app,
        "/api/chat",
        &[json, ("host", "kakeibo.example")],
        hello.clone(),
    )
    .await;
    assert_eq!(by_host.status, 403, "{}", by_host.body);
    // Without Origin, only the browser's own word that the request is same-origin will do.
    for (fetch_site, status) in [
        ("same-site", 403),
        ("cross-site", 403),
        ("none", 403),
        ("same-origin", 200),
    ] {
        let answer = post(
            &app,
            "/api/chat",
            &[json, ("sec-fetch-site", fetch_site)],
            hello.clone(),
        )
        .await;
        assert_eq!(answer.status, status, "{fetch_site}: {}", answer.body);
    }
    let by_host = post(
        &app,
        "/api/chat",
        &[json, ("origin", support::SITE)],
        hello.clone(),
    )
    .await;
    assert_eq!(by_host.status, 200, "{}", by_host.body);

    // JSON is read only under a JSON type: a cross-site form's text/plain is refused unread.
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let answer = post(
            &app,
            "/api/chat",
            &[("content-type", content_type), ("origin", support::SITE)],
            hello.clone(),
        )
        .await;
        assert_eq!(answer.status, 415, "{content_type}: {}", answer.body);
        assert!(
            answer.json()["error"]
                .as_str()
                .unwrap()
                .contains("application/json")
        );
    }
    let untyped = post(&app, "/api/chat", &[("origin", support::SITE)], hello.clone()).await;
    assert_eq!(untyped.status, 415, "{}", untyped.body);

    // Every answer carries the security headers: the API's policy runs nothing.
    for (name, value) in [
        ("content-security-policy", kakeibo_api::headers::API_CSP),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("strict-transport-security", "max-age=63072000; includeSubDomains"),
    ] {
        assert_eq!(by_host.headers[name], value, "{name}");
        assert_eq!(untyped.headers[name], value, "{name} on a refusal too");
    }
    // Outside /api/ kakeibo-dev serves the pages, under the pages' policy.
    let page = app.get("/chat", None).await;
    assert_eq!(
        page.headers["content-security-policy"],
        kakeibo_api::headers::SITE_CSP
    );

    let site = ("origin", support::SITE);
    // Bodies over the limits.
    let big = format!(r#"{{"message":"{}"}}"#, "x".repeat(70 * 1024)).into_bytes();
    let too_big = post(&app, "/api/chat", &[json, site], big).await;
    assert_eq!(too_big.status, 413, "{}", too_big.body);
    assert!(too_big.json()["error"].as_str().unwrap().contains("65536"));
    let cookie = by_host.session_cookie().expect("a session");
    let huge = post(
        &app,
        "/api/uploads?filename=big.csv",
        &[site, ("cookie", cookie.as_str())],
        vec![b'a'; 10 * 1024 * 1024 + 1],
    )
    .await;
    assert_eq!(huge.status, 413, "{}", huge.body);

    // Bodies that are not what the route reads.
    for (body, says) in [
        (&b"not json"[..], "expected ident"),
        (&b""[..], "needs a JSON body"),
        (&br#"{"message":"   "}"#[..], "message is required"),
        (&br#"{"message":"hi","extra":1}"#[..], "unknown field `extra`"),
        (&br#"{"message":"hi","conversation_id":"nope"}"#[..], "UUID"),
    ] {
        let answer = post(&app, "/api/chat", &[json, site], body.to_vec()).await;
        assert_eq!(answer.status, 400, "{}", answer.body);
        let error = answer.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(says), "{error} should say {says}");
    }
    let long = format!(
        r#"{{"message":"{}"}}"#,
        "x".repeat(kakeibo_chat::MAX_MESSAGE_CHARS + 1)
    )
    .into_bytes();
    assert_eq!(post(&app, "/api/chat", &[json, site], long).await.status, 400);
    let nameless = post(&app, "/api/uploads", &[site], b"a,b\n".to_vec()).await;
    assert_eq!(nameless.status, 400, "{}", nameless.body);

    // Unknown routes and wrong methods.
    let unknown = post(&app, "/api/nothing", &[json, site], hello.clone()).await;
    assert_eq!(
        (unknown.status.as_u16(), unknown.json()["error"].clone()),
        (404, "not found".into())
    );
    let wrong = app
        .raw(Request::get("/api/chat").body(Body::empty()).unwrap())
        .await;
    assert_eq!(
        (wrong.status.as_u16(), wrong.json()["error"].clone()),
        (405, "method not allowed".into())
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn without_a_model_chat_says_what_to_configure(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[("KAKEIBO_PROVIDER", "")]).await;
    let app = TestApp::new(&state);
    let answer = post(
        &app,
        "/api/chat",
        &[("content-type", "application/json"), ("origin", support::SITE)],
        br#"{"message":"hello"}"#.to_vec(),
    )
    .await;
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert_eq!(answer.json()["reason"], "no_model");
    assert!(
        answer.json()["error"]
            .as_str()
            .unwrap()
            .contains("GEMINI_API_KEY"),
        "{}",
        answer.body
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_visitor_keeps_a_bounded_number_of_statements(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let headers = [("origin", support::SITE), ("cookie", cookie.as_str())];
    let limit = usize::try_from(kakeibo_operator::uploads::MAX_UPLOADS_PER_OWNER).unwrap();
    let mut ids = Vec::new();
    for i in 0..limit {
        let answer = post(
            &app,
            &format!("/api/uploads?filename=s{i}.csv"),
            &headers,
            // Each file its own bytes: the same bytes again are the same upload.
            format!("Date,Amount\n# {i}\n").into_bytes(),
        )
        .await;
        assert_eq!(answer.status, 201, "{}", answer.body);
        ids.push(answer.json()["id"].as_str().unwrap().to_owned());
    }
    let full = post(
        &app,
        "/api/uploads?filename=one-more.csv",
        &headers,
        b"Date,Amount\n".to_vec(),
    )
    .await;
    assert_eq!(full.status, 409, "{}", full.body);
    assert!(
        full.json()["error"]
            .as_str()
            .unwrap()
            .contains("delete one first")
    );
    let deleted = app
        .request(
            axum::http::Method::DELETE,
            &format!("/api/uploads/{}", ids[0]),
            None,
            Some(&cookie),
        )
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let again = post(
        &app,
        "/api/uploads?filename=one-more.csv",
        &headers,
        b"Date,Amount\n".to_vec(),
    )
    .await;
    assert_eq!(again.status, 201, "{}", again.body);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn behind_the_cdn_only_requests_with_its_header_are_served(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(
        &connect,
        Isolation::Rls,
        &[("ORIGIN_VERIFY", "from-the-cdn-0123456789")],
    )
    .await;
    let app = TestApp::new(&state);
    let json = ("content-type", "application/json");
    let site = ("origin", support::SITE);
    let hello = br#"{"message":"hello"}"#.to_vec();
    let direct = post(&app, "/api/chat", &[json, site], hello.clone()).await;
    assert_eq!(direct.status, 403, "{}", direct.body);
    let wrong = post(
        &app,
        "/api/chat",
        &[json, site, ("x-origin-verify", "guess-0123456789-abcd")],
        hello.clone(),
    )
    .await;
    assert_eq!(wrong.status, 403);
    let through = post(
        &app,
        "/api/chat",
        &[json, site, ("x-origin-verify", "from-the-cdn-0123456789")],
        hello,
    )
    .await;
    assert_eq!(through.status, 200, "{}", through.body);
}
