//! Arbitrary input into every route: JSON bodies into those that read one, arbitrary query
//! strings and path segments into every other. Whatever arrives, a route answers — no panic, no
//! `5xx` — and a refusal is JSON `{error}` in words, never the name of a Rust type. The bodies are
//! objects keyed by the routes' own field names (and others), with values of every JSON kind —
//! text with NUL characters and unpaired surrogates among them — plus bare values and bodies that
//! are not JSON at all. `PROPTEST_CASES` sets how many cases each route gets (default 24).

use crate::support;

use axum::{
    body::Body,
    http::{Request, StatusCode},
};
use proptest::{collection::vec, prelude::*, sample::select, strategy::ValueTree, test_runner::TestRunner};
use serde_json::{Map, Value};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, SITE, TestApp, state, the_rules};

/// Field names the routes read, and a few they do not.
const KEYS: &[&str] = &[
    "message",
    "conversation_id",
    "conversationId",
    "suspended_turn_id",
    "suspendedTurnId",
    "decisions",
    "id",
    "allowed",
    "email",
    "password",
    "account",
    "currency",
    "action",
    "owner",
    "owner_id",
    "paused",
    "name",
    "side",
    "pattern",
    "category",
    "priority",
    "into",
    "month",
    "amount_minor",
    "category_id",
    "x",
];

/// The operator's actions with a field they do not take, and one that is no action (starting an
/// evaluation is left out: it would run one).
const ACTIONS: &[&str] = &["pause_live_chat", "block_owner", "delete_everything"];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,16}",
        "[^\u{0}]{0,24}",
        "[\u{0}-\u{1f}a-z\u{fffd}\u{10ffff}]{0,12}",
        Just("hi\u{0}there".to_owned()),
        Just("00000000-0000-0000-0000-000000000000".to_owned()),
        Just("EUR".to_owned()),
        Just("a@b.example".to_owned()),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1.0e12f64..1.0e12).prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            vec((select(KEYS), inner), 0..6).prop_map(|pairs| {
                Value::Object(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

/// Mostly a boolean, sometimes anything.
fn flag() -> impl Strategy<Value = Value> {
    prop_oneof![3 => any::<bool>().prop_map(Value::Bool), 1 => json()]
}

/// A body of one route's own shape, its values arbitrary text or JSON.
fn shaped() -> impl Strategy<Value = Value> {
    prop_oneof![
        (text(), json()).prop_map(|(m, c)| serde_json::json!({"message": m, "conversation_id": c})),
        text().prop_map(|m| serde_json::json!({"message": m})),
        (text(), vec((text(), json()), 0..3)).prop_map(|(id, d)| {
            let decisions: Vec<Value> = d
                .into_iter()
                .map(|(i, a)| serde_json::json!({"id": i, "allowed": a}))
                .collect();
            serde_json::json!({"suspended_turn_id": id, "decisions": decisions})
        }),
        (text(), text()).prop_map(|(e, p)| serde_json::json!({"email": e, "password": p})),
        (json(), json()).prop_map(|(a, c)| serde_json::json!({"account": a, "currency": c})),
        vec(
            (
                json(),
                prop_oneof![Just(Value::from("amount")), Just(Value::from("balance")), json()]
            ),
            0..4
        )
        .prop_map(|f| {
            let figures: Vec<Value> = f
                .into_iter()
                .map(|(line, take)| serde_json::json!({"line": line, "take": take}))
                .collect();
            serde_json::json!({"figures": figures})
        }),
        flag().prop_map(|flag| serde_json::json!({"action": "pause_live_chat", "paused": flag})),
        (prop_oneof![text().prop_map(Value::String), json()], flag()).prop_map(|(owner, flag)| {
            serde_json::json!({"action": "block_owner", "owner_id": owner, "blocked": flag})
        }),
        (select(ACTIONS), json())
            .prop_map(|(action, extra)| serde_json::json!({"action": action, "x": extra})),
    ]
}

/// A body: an object of the routes' keys, a route's own shape, any JSON, or not JSON at all.
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => shaped().prop_map(|v| v.to_string().into_bytes()),
        6 => vec((select(KEYS), json()), 0..5).prop_map(|pairs| {
            Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<_, _>>())
                .to_string()
                .into_bytes()
        }),
        2 => json().prop_map(|v| v.to_string().into_bytes()),
        1 => vec(any::<u8>(), 0..64),
        // Escapes JSON allows and text does not hold: an unpaired surrogate, a NUL.
        1 => select(&[r#"{"message":"\ud800"}"#, r#"{"message":"a\u0000b"}"#, r#"{"email":"\udfff@x","password":"p"}"#][..])
            .prop_map(|b| b.as_bytes().to_vec()),
    ]
}

/// A body of each route's own shape that it takes, first (so every run reaches past each
/// route's parsing), then `cases` drawn from [`body`] by a deterministic runner (the same bodies
/// every run: a failure is reproduced by running the test again).
fn bodies(cases: usize) -> Vec<Vec<u8>> {
    let seeds = [
        serde_json::json!({"message": "how much did I spend"}),
        serde_json::json!({"email": "seed@example.com", "password": "a long enough password"}),
        serde_json::json!({"suspended_turn_id": "00000000-0000-0000-0000-000000000000", "decisions": []}),
        serde_json::json!({"account": "Checking", "currency": "INR"}),
        serde_json::json!({"figures": [{"line": 2, "take": "balance"}]}),
        serde_json::json!({"action": "pause_live_chat", "paused": false}),
    ];
    let mut runner = TestRunner::deterministic();
    let strategy = body();
    seeds
        .iter()
        .map(|seed| seed.to_string().into_bytes())
        .chain((0..cases).map(|_| strategy.new_tree(&mut runner).expect("a body").current()))
        .collect()
}

fn cases() -> usize {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(24)
}

/// `body` posted to `route` (with the session `cookie` when given), held to [`the_rules`]. The
/// answer's status.
async fn answered(app: &TestApp, route: &str, body: &[u8], cookie: Option<&str>) -> u16 {
    sent(app, axum::http::Method::POST, route, body, cookie).await
}

/// `method route` with `body`, held to [`the_rules`]; the answer's status.
async fn sent(
    app: &TestApp,
    method: axum::http::Method,
    route: &str,
    body: &[u8],
    cookie: Option<&str>,
) -> u16 {
    let mut request = Request::builder()
        .method(method)
        .uri(route)
        .header("origin", SITE)
        .header("content-type", "application/json");
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    let answer = app.raw(request.body(Body::from(body.to_vec())).unwrap()).await;
    the_rules(route, &String::from_utf8_lossy(body), &answer);
    answer.status.as_u16()
}

/// Text for a query value or a path segment: printable, control characters, NUL, bytes that are
/// not UTF-8, huge numbers — each byte percent-encoded, or the printable ones as they are.
fn segment() -> impl Strategy<Value = String> {
    let encoded = |bytes: Vec<u8>| {
        bytes.iter().fold(String::new(), |mut out, b| {
            use std::fmt::Write as _;
            let _ = write!(out, "%{b:02X}");
            out
        })
    };
    prop_oneof![
        "[a-zA-Z0-9._~-]{0,20}",
        vec(any::<u8>(), 0..16).prop_map(encoded),
        "[ -~\u{0}\u{7f}-\u{ff}]{0,12}".prop_map(move |s| encoded(s.into_bytes())),
        select(
            &[
                "-1",
                "0",
                "99999999999999999999",
                "2025-13",
                "2025-02",
                "1e9",
                "%00",
                "%FF%FE",
                "true"
            ][..]
        )
        .prop_map(str::to_owned),
    ]
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn no_query_string_or_path_makes_a_route_fail(_: PgPoolOptions, connect: PgConnectOptions) {
    use axum::http::Method;
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let operator = app.operator(&state, None).await;
    let mut runner = TestRunner::deterministic();
    let strategy = segment();
    let mut statuses = std::collections::BTreeMap::<(String, u16), usize>::new();
    let csv = b"Date,Description,Amount\n2025-06-02,Tea,-40\n";
    for _ in 0..cases() {
        let s = strategy.new_tree(&mut runner).expect("a segment").current();
        let requests: [(Method, &str, String, &[u8], &str); 16] = [
            (
                Method::GET,
                "runs?limit=",
                format!("/api/runs?limit={s}"),
                b"",
                &cookie,
            ),
            (Method::GET, "runs/{id}", format!("/api/runs/{s}"), b"", &cookie),
            (
                Method::GET,
                "dashboard?month=",
                format!("/api/dashboard?month={s}"),
                b"",
                &cookie,
            ),
            (
                Method::GET,
                "conversations/{id}",
                format!("/api/conversations/{s}"),
                b"",
                &cookie,
            ),
            (
                Method::GET,
                "conversations?{s}",
                format!("/api/conversations?{s}={s}"),
                b"",
                &cookie,
            ),
            (
                Method::GET,
                "admin/runs/{id}",
                format!("/api/admin/runs/{s}"),
                b"",
                &operator,
            ),
            (
                Method::DELETE,
                "uploads/{id}",
                format!("/api/uploads/{s}"),
                b"",
                &cookie,
            ),
            (
                Method::POST,
                "uploads?filename=",
                format!("/api/uploads?filename={s}"),
                csv,
                &cookie,
            ),
            (
                Method::POST,
                "uploads/{id}/preview",
                format!("/api/uploads/{s}/preview"),
                b"",
                &cookie,
            ),
            (Method::GET, "tools?x=", format!("/api/tools?x={s}"), b"", &cookie),
            (
                Method::GET,
                "budgets?month=",
                format!("/api/budgets?month={s}"),
                b"",
                &cookie,
            ),
            (
                Method::DELETE,
                "budgets/{id}",
                format!("/api/budgets/{s}"),
                b"",
                &cookie,
            ),
            (
                Method::DELETE,
                "rules/{id}",
                format!("/api/rules/{s}"),
                b"",
                &cookie,
            ),
            (
                Method::POST,
                "categories/{id}/merge",
                format!("/api/categories/{s}/merge"),
                b"{\"into\": \"00000000-0000-0000-0000-000000000000\"}",
                &cookie,
            ),
            (
                Method::GET,
                "evals/latest?{s}",
                format!("/api/evals/latest?{s}"),
                b"",
                &cookie,
            ),
            (Method::GET, "{s}", format!("/api/{s}"), b"", &cookie),
        ];
        for (method, label, route, body, session) in requests {
            let Ok(uri) = route.parse::<axum::http::Uri>() else {
                continue; // Not a request anyone can send: the server never sees it.
            };
            let status = sent(&app, method, &uri.to_string(), body, Some(session)).await;
            *statuses.entry((label.to_owned(), status)).or_default() += 1;
        }
    }
    println!("(route, status): answers — {statuses:?}");
    assert!(statuses.keys().any(|(_, status)| *status == 200), "{statuses:?}");
    assert!(statuses.keys().any(|(_, status)| *status == 400), "{statuses:?}");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn no_body_makes_a_route_fail(_: PgPoolOptions, connect: PgConnectOptions) {
    let generous = [
        ("ANON_DAILY_MESSAGE_QUOTA", "100000"),
        ("USER_DAILY_MESSAGE_QUOTA", "100000"),
        ("IP_DAILY_MESSAGE_QUOTA", "100000"),
    ];
    let state = state(&connect, Isolation::Rls, &generous).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let upload = app
        .upload(&cookie, "s.csv", b"Date,Description,Amount\n2025-06-02,Tea,-40\n")
        .await;
    let upload_id = upload.json()["id"].as_str().unwrap().to_owned();
    let routes = [
        "/api/chat".to_owned(),
        "/api/confirm".to_owned(),
        "/api/session".to_owned(),
        "/api/session/sign-up".to_owned(),
        "/api/session/sign-in".to_owned(),
        "/api/admin/action".to_owned(),
        format!("/api/uploads/{upload_id}/preview"),
        "/api/categories".to_owned(),
        "/api/rules".to_owned(),
        "/api/rules/preview".to_owned(),
        "/api/rules/apply".to_owned(),
    ];
    let bodies = bodies(cases());
    let mut statuses = std::collections::BTreeMap::<(String, u16), usize>::new();
    for body in &bodies {
        for route in &routes {
            // Signing up or in as the visitor would end the session the other routes go on with.
            let signs = route.starts_with("/api/session/sign-");
            let sessions = if signs {
                vec![None]
            } else {
                vec![None, Some(cookie.as_str())]
            };
            for session in sessions {
                let status = answered(&app, route, body, session).await;
                *statuses.entry((route.clone(), status)).or_default() += 1;
            }
        }
    }
    println!("(route, status): answers — {statuses:?}");
    // Some bodies are the route's own: a chat message gets through to the model, and the
    // visitor's session holds to the end.
    assert!(
        statuses.contains_key(&("/api/chat".to_owned(), 200)),
        "{statuses:?}"
    );
    assert_eq!(app.runs(Some(&cookie)).await.status, StatusCode::OK);

    // The operator's door reads its body only for an operator: the same bodies, as one.
    let operator = app.operator(&state, None).await;
    let mut actions = std::collections::BTreeMap::<u16, usize>::new();
    for body in &bodies {
        let status = answered(&app, "/api/admin/action", body, Some(&operator)).await;
        *actions.entry(status).or_default() += 1;
    }
    println!("admin action, status: answers — {actions:?}");
    assert!(
        !actions.contains_key(&404),
        "the operator was let in: {actions:?}"
    );
}
