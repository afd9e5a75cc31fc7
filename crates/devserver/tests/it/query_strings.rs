//! Arbitrary query strings into every route that reads one — `GET /api/runs?limit=`,
//! `GET /api/dashboard?month=`, `GET /api/budgets?month=`, the register's `GET /api/transactions?…`,
//! `POST /api/uploads?filename=` and
//! `GET /api/session/google/callback?code=&state=&error=` — and into a few that read none. Each
//! query is a list of pairs: the route's own parameters (and others), repeated or not, with values
//! of every kind (numbers at and past the integer limits, months at and past the calendar's, text
//! with control characters and NUL, bytes that are not UTF-8, long text), percent-encoded, form-
//! encoded or as they are; then raw queries no encoder makes (a bare `%`, `%G1`, a cut UTF-8
//! sequence, keys without `=`, empty keys and values). Whatever arrives, the route answers — no
//! `5xx` — and a refusal is JSON `{error}` in words. The same queries go through the Lambda
//! events of API Gateway for the `runs` function. `PROPTEST_CASES` sets how many generated
//! queries each route gets (default 24), after the fixed edge cases.

use crate::support;

use axum::{
    body::Body,
    http::{Method, Request},
};
use proptest::{collection::vec, prelude::*, sample::select, strategy::ValueTree, test_runner::TestRunner};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, SITE, TestApp, gateway_event, read, state, the_rules};

/// A route that reads a query: how it is called, and the parameters it reads.
struct Route {
    method: Method,
    path: &'static str,
    params: &'static [&'static str],
    body: &'static [u8],
}

const CSV: &[u8] = b"Date,Description,Amount\n2025-06-02,Tea,-40\n";

const ROUTES: &[Route] = &[
    Route {
        method: Method::GET,
        path: "/api/runs",
        params: &["limit"],
        body: b"",
    },
    Route {
        method: Method::GET,
        path: "/api/dashboard",
        params: &["month"],
        body: b"",
    },
    Route {
        method: Method::POST,
        path: "/api/uploads",
        params: &["filename"],
        body: CSV,
    },
    Route {
        method: Method::GET,
        path: "/api/budgets",
        params: &["month"],
        body: b"",
    },
    Route {
        method: Method::GET,
        path: "/api/transactions",
        params: &[
            "q",
            "from",
            "to",
            "account",
            "category",
            "min_minor",
            "max_minor",
            "import",
            "sort",
            "ascending",
            "page",
            "per_page",
        ],
        body: b"",
    },
    Route {
        method: Method::GET,
        path: "/api/session/google/callback",
        params: &["code", "state", "error"],
        body: b"",
    },
    // Routes that read no query: every parameter above is one they do not know.
    Route {
        method: Method::GET,
        path: "/api/conversations",
        params: &[],
        body: b"",
    },
    Route {
        method: Method::GET,
        path: "/api/tools",
        params: &[],
        body: b"",
    },
];

/// Every parameter any route reads, and keys none does.
const KEYS: &[&str] = &[
    "limit",
    "month",
    "filename",
    "code",
    "state",
    "error",
    "cursor",
    "kind",
    "x",
    "",
    "month[]",
    "q",
    "from",
    "to",
    "min_minor",
    "page",
    "per_page",
    "sort",
    "ascending",
];

/// Values at the edges of what each parameter reads.
const EDGES: &[&str] = &[
    // Months: year 0 (whose months before it are in year -1), the first and last years taken,
    // the years just outside, no month, five-digit years, signs.
    "0000-01",
    "0000-05",
    "0000-12",
    "0001-01",
    "1899-12",
    "1900-01",
    "9999-12",
    "10000-01",
    "-001-01",
    "+2025-01",
    "2025-00",
    "2025-13",
    "2025-02",
    "2025-1",
    "2025-01-01",
    // Numbers: at and past the limits of an i64, signs, floats, hex, spaces.
    "-1",
    "0",
    "1",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999999999",
    "1e3",
    "1.5",
    "+1",
    " 1",
    "0x10",
    "NaN",
    // Text and names.
    "",
    ".",
    "..",
    "../../etc/passwd",
    "/etc/passwd",
    "a/b.csv",
    "C:\\x.csv",
    "statement.csv",
    "家計簿.csv",
    "\u{202e}vsc.exe",
    "\x1b[2K.csv",
    "a\u{0}b",
    "\u{7f}\u{85}",
    "true",
    "null",
    "[]",
    "{}",
    "00000000-0000-0000-0000-000000000000",
];

/// Queries no encoder writes, for a route whose first parameter is `p` (or `x`).
fn raw_edges(p: &str) -> Vec<String> {
    let long = "9".repeat(5000);
    [
        format!("{p}=%"),
        format!("{p}=%G1"),
        format!("{p}=%4"),
        format!("{p}=%%"),
        format!("{p}=%E2%82"),
        format!("{p}=%FF%FE"),
        format!("{p}=%C0%AF"),
        format!("{p}=%ED%A0%80"),
        format!("{p}=a&{p}=b"),
        format!("{p}=2025-01&{p}=0000-01"),
        format!("{p}=1&{p}=x"),
        format!("{p}=&{p}="),
        p.to_owned(),
        format!("{p}="),
        format!("{p}=="),
        format!("{p}==1"),
        format!("{p}=a=b"),
        format!("{p}=%00"),
        format!("{p}=+"),
        format!("{p}=%2B1"),
        format!("{p}=1;{p}=2"),
        format!("{p}%5B%5D=1"),
        format!("%FF={p}"),
        format!("{p}={long}"),
        "=".to_owned(),
        "=1".to_owned(),
        "&".to_owned(),
        "&&&".to_owned(),
        "%".to_owned(),
        "%26=%3D".to_owned(),
        "?".to_owned(),
        "a=1&a=2&a=3".to_owned(),
    ]
    .into()
}

/// A value's bytes: text of every kind, or bytes that are not UTF-8.
fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => select(EDGES).prop_map(|v| v.as_bytes().to_vec()),
        2 => "[0-9]{4}-[0-9]{2}".prop_map(String::into_bytes),
        1 => any::<i64>().prop_map(|n| n.to_string().into_bytes()),
        1 => any::<u64>().prop_map(|n| n.to_string().into_bytes()),
        1 => "[-+0-9.eE]{0,24}".prop_map(String::into_bytes),
        2 => "[ -~]{0,24}".prop_map(String::into_bytes),
        1 => "[^\u{0}]{0,16}".prop_map(String::into_bytes),
        1 => "[\u{0}-\u{1f}\u{7f}-\u{9f}\u{202a}-\u{202e}a-z.]{0,12}".prop_map(String::into_bytes),
        1 => vec(any::<u8>(), 0..24),
        1 => (1usize..3000).prop_map(|n| "a".repeat(n).into_bytes()),
    ]
}

/// Bytes percent-encoded one by one (`%XX`), form-encoded (`+` for a space), or as they are when
/// every byte may stand in a query as it is (form-encoded otherwise).
fn encoded(bytes: &[u8], how: u8) -> String {
    use std::fmt::Write as _;
    let plain = |b: &u8| b.is_ascii_alphanumeric() || b"-._~!$'()*,;:@/?".contains(b);
    match how % 3 {
        0 => bytes.iter().fold(String::new(), |mut out, b| {
            let _ = write!(out, "%{b:02X}");
            out
        }),
        1 if bytes.iter().all(plain) => String::from_utf8_lossy(bytes).into_owned(),
        _ => form_urlencoded::byte_serialize(bytes).collect(),
    }
}

/// A query of up to five pairs: the route's own parameters (as often as any other key), repeated
/// or not, each with or without `=`.
fn query(params: &'static [&'static str]) -> impl Strategy<Value = String> {
    let keys: Vec<&'static str> = params.iter().chain(params).chain(KEYS).copied().collect();
    let pair = (select(keys), value(), any::<u8>(), any::<u8>(), 0u8..10).prop_map(
        |(key, value, how_key, how_value, bare)| {
            let key = encoded(key.as_bytes(), how_key);
            if bare == 0 {
                key
            } else {
                format!("{key}={}", encoded(&value, how_value))
            }
        },
    );
    vec(pair, 0..5).prop_map(|pairs| pairs.join("&"))
}

/// The queries for `route`: each edge value as each of its parameters, the raw edge cases, then
/// `cases` generated by a deterministic runner (the same every run).
fn queries(route: &Route, cases: usize) -> Vec<String> {
    let first = route.params.first().copied().unwrap_or("x");
    let mut all: Vec<String> = route
        .params
        .iter()
        .flat_map(|p| {
            EDGES
                .iter()
                .map(move |v| format!("{p}={}", encoded(v.as_bytes(), 2)))
        })
        .chain(raw_edges(first))
        .collect();
    let mut runner = TestRunner::deterministic();
    let strategy = query(route.params);
    all.extend((0..cases).map(|_| strategy.new_tree(&mut runner).expect("a query").current()));
    all
}

fn cases() -> usize {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(24)
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn no_query_makes_a_route_fail(_: PgPoolOptions, connect: PgConnectOptions) {
    // Google sign-in on (its callback reads a query; with no sign-in begun it never calls out).
    let google = [
        ("GOOGLE_CLIENT_ID", "client.apps.googleusercontent.com"),
        ("GOOGLE_CLIENT_SECRET", "test-secret"),
        ("GOOGLE_ISSUER", "http://127.0.0.1:9"),
    ];
    let state = state(&connect, Isolation::Rls, &google).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let mut statuses = std::collections::BTreeMap::<(&str, u16), usize>::new();
    let mut unsendable = 0usize;
    for route in ROUTES {
        for query in queries(route, cases()) {
            let Ok(uri) = format!("{}?{query}", route.path).parse::<axum::http::Uri>() else {
                unsendable += 1; // Not a request anyone can send: the server never sees it.
                continue;
            };
            let request = Request::builder()
                .method(route.method.clone())
                .uri(uri)
                .header("origin", SITE)
                .header("cookie", &cookie)
                .body(Body::from(route.body))
                .unwrap();
            let answer = app.raw(request).await;
            the_rules(route.path, &format!("?{query}"), &answer);
            *statuses.entry((route.path, answer.status.as_u16())).or_default() += 1;
        }
    }
    println!("(route, status): answers — {statuses:?}; {unsendable} queries no URI holds");
    // The queries reach past the parsing: each route with parameters both answers and refuses.
    for route in ROUTES.iter().filter(|r| !r.params.is_empty()) {
        let of_route = |ok: fn(u16) -> bool| statuses.keys().any(|(p, s)| *p == route.path && ok(*s));
        assert!(of_route(|s| s == 400), "{}: {statuses:?}", route.path);
        assert!(
            of_route(|s| (200..400).contains(&s)),
            "{}: {statuses:?}",
            route.path
        );
    }
}

/// The same queries as API Gateway hands them to the `runs` function, in its raw query string.
/// (One that no URI holds — a space, a quote, text that is not ASCII — is left out: `lambda_http`
/// panics converting such an event, before any code of ours runs.)
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn no_query_from_api_gateway_makes_the_runs_function_fail(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let template: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            support::repo_root().join("crates/devserver/tests/fixtures/apigw-v2-event.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut statuses = std::collections::BTreeMap::<(&str, u16), usize>::new();
    let mut left_out = 0usize;
    for route in ROUTES
        .iter()
        .filter(|r| ["/api/runs", "/api/dashboard"].contains(&r.path))
    {
        for query in queries(route, cases()) {
            let path = format!("{}?{query}", route.path);
            if format!("https://kakeibo.example{path}")
                .parse::<axum::http::Uri>()
                .is_err()
            {
                left_out += 1;
                continue;
            }
            let event = gateway_event(&template, "GET", &path, None, Some(&cookie), "203.0.113.9");
            let answer = read(kakeibo_runs::handle(std::sync::Arc::clone(&state), event).await).await;
            the_rules(route.path, &format!("?{query}"), &answer);
            *statuses.entry((route.path, answer.status.as_u16())).or_default() += 1;
        }
    }
    println!("(route, status): answers — {statuses:?}; {left_out} queries no URI holds");
    assert!(statuses.keys().any(|(_, s)| *s == 200), "{statuses:?}");
    assert!(statuses.keys().any(|(_, s)| *s == 400), "{statuses:?}");
}
