//! Shared by the functions' end-to-end tests (this crate's `tests/` is their one home): a `State`
//! on the per-test database (with `app_user` under
//! row-level security, or the owner role for the run that tests our own owner filters), requests
//! through the routers, API Gateway events, and SSE parsing.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::{collections::BTreeMap, path::PathBuf, str::FromStr, sync::Arc};

use axum::{
    Router,
    body::Body,
    http::{Method, Request, StatusCode},
};
use kakeibo_api::{Config, State, state::Pools};
use kakeibo_core::Event;
use kakeibo_ledger::OwnerRolePool;
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tower::ServiceExt;

pub const SITE: &str = "https://kakeibo.example";
pub const JWT_SECRET: &str = "test-only-secret-0123456789abcdef0123456789";
/// The header tests give a client's address in (`CLIENT_ADDRESS_HEADER` names it).
pub const ADDRESS_HEADER: &str = "x-test-client-address";

/// A fresh outbox folder for a state's `MAIL_OUTBOX`.
pub fn outbox() -> PathBuf {
    std::env::temp_dir().join(format!("kakeibo-test-outbox-{}", uuid::Uuid::new_v4().simple()))
}

/// The mails in `outbox`, oldest first (each `{to, subject, text, link, purpose}`).
pub fn mails(outbox: &std::path::Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(outbox)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect()
}

/// The token of the newest mail to `to` with `purpose`, read from its link as the page does.
pub fn mailed_token(outbox: &std::path::Path, to: &str, purpose: &str) -> String {
    let mail = mails(outbox)
        .into_iter()
        .rev()
        .find(|m| m["to"] == to && m["purpose"] == purpose)
        .unwrap_or_else(|| panic!("no {purpose} mail to {to} in {}", outbox.display()));
    let link = mail["link"].as_str().unwrap();
    assert!(
        mail["text"].as_str().unwrap().contains(link),
        "the link is in the text"
    );
    link.split_once("#token=").unwrap().1.to_owned()
}

/// Which role owner-scoped queries run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// `app_user`: row-level security enforces, and our filters run too.
    Rls,
    /// The owner role: RLS is bypassed, so only our own owner filters keep visitors apart.
    OwnerRole,
}

pub fn repo_root() -> PathBuf {
    kakeibo_testkit::workspace_root()
}

pub fn demo_script() -> String {
    format!(
        "script:{}",
        repo_root().join("fixtures/scripts/demo.yaml").display()
    )
}

/// A function state on the test database. `extra` settings override the defaults.
pub async fn state(connect: &PgConnectOptions, isolation: Isolation, extra: &[(&str, &str)]) -> Arc<State> {
    let owner = PgPoolOptions::new()
        .max_connections(12)
        .connect_with(connect.clone())
        .await
        .expect("owner role connects");
    let app = match isolation {
        Isolation::OwnerRole => owner.clone(),
        Isolation::Rls => {
            let url = std::env::var("APP_DATABASE_URL")
                .expect("APP_DATABASE_URL is unset: run the suite with `cargo xtask test`");
            let options = PgConnectOptions::from_str(&url)
                .expect("APP_DATABASE_URL parses")
                .database(connect.get_database().expect("the test database has a name"));
            PgPoolOptions::new()
                .max_connections(12)
                .connect_with(options)
                .await
                .expect("app_user connects")
        }
    };
    let mut vars: BTreeMap<String, String> = [
        ("DATABASE_URL", "postgres://unused"),
        ("JWT_SECRET", JWT_SECRET),
        ("RATE_LIMIT_SALT", "test-salt"),
        ("SITE_URL", SITE),
        ("ADMIN_EMAILS", "ops@kakeibo.example"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    vars.insert("KAKEIBO_PROVIDER".into(), demo_script());
    for (k, v) in extra {
        vars.insert((*k).to_owned(), (*v).to_owned());
    }
    let config = Config::from_vars(vars).expect("test configuration");
    let pools = Pools {
        app,
        owner: OwnerRolePool::new(owner),
    };
    Arc::new(State::with_pools(config, pools).expect("state"))
}

/// Every route, as the local server mounts them, behind typed requests from the site's origin:
/// the one way the function tests talk to the functions.
#[derive(Clone)]
pub struct TestApp(Router);

impl TestApp {
    pub fn new(state: &Arc<State>) -> Self {
        Self(kakeibo_devserver::app(Arc::clone(state), None))
    }

    /// The router itself (to serve it on a port).
    pub fn router(&self) -> Router {
        self.0.clone()
    }

    /// A request as given, answered whole.
    pub async fn raw(&self, request: Request<Body>) -> Answer {
        read(self.0.clone().oneshot(request).await.unwrap()).await
    }

    /// `method path` with a JSON `body` and the session `cookie` when given.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        cookie: Option<&str>,
    ) -> Answer {
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header("origin", SITE)
            .header("host", "kakeibo.example");
        if let Some(cookie) = cookie {
            builder = builder.header("cookie", cookie);
        }
        let body = match body {
            Some(v) => {
                builder = builder.header("content-type", "application/json");
                Body::from(v.to_string())
            }
            None => Body::empty(),
        };
        self.raw(builder.body(body).unwrap()).await
    }

    pub async fn get(&self, path: &str, cookie: Option<&str>) -> Answer {
        self.request(Method::GET, path, None, cookie).await
    }

    pub async fn post(&self, path: &str, body: Value, cookie: Option<&str>) -> Answer {
        self.request(Method::POST, path, Some(body), cookie).await
    }

    /// A `POST` of `body` from the client address `address` (the state must name
    /// [`ADDRESS_HEADER`] in `CLIENT_ADDRESS_HEADER`).
    pub async fn post_from(&self, address: &str, path: &str, body: Value, cookie: Option<&str>) -> Answer {
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header("origin", SITE)
            .header("host", "kakeibo.example")
            .header("content-type", "application/json")
            .header(ADDRESS_HEADER, address);
        if let Some(cookie) = cookie {
            builder = builder.header("cookie", cookie);
        }
        self.raw(builder.body(Body::from(body.to_string())).unwrap())
            .await
    }

    /// A visit signed up as `email` with `password` (the visit started by a first message): the
    /// account's session cookie.
    pub async fn signed_up(&self, email: &str, password: &str) -> String {
        let (visit, _) = self.visitor("hello").await;
        let answer = self
            .post(
                "/api/session/sign-up",
                serde_json::json!({"email": email, "password": password}),
                Some(&visit),
            )
            .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        answer
            .session_cookie()
            .expect("a signed-up visitor gets a session")
    }

    /// A password sign-in without a visit: its status and session cookie.
    pub async fn sign_in(&self, email: &str, password: &str) -> (StatusCode, Option<String>) {
        let answer = self
            .post(
                "/api/session/sign-in",
                serde_json::json!({"email": email, "password": password}),
                None,
            )
            .await;
        (answer.status, answer.session_cookie())
    }

    /// The visitor a session cookie stands for now (`null` once the session is over).
    pub async fn visitor_of(&self, cookie: &str) -> Value {
        self.get("/api/session", Some(cookie)).await.json()["visitor"].clone()
    }

    /// A `POST` with no body at all.
    pub async fn post_empty(&self, path: &str, cookie: Option<&str>) -> Answer {
        self.request(Method::POST, path, None, cookie).await
    }

    pub async fn delete(&self, path: &str, cookie: Option<&str>) -> Answer {
        self.request(Method::DELETE, path, None, cookie).await
    }

    /// `POST /api/chat` with `message`.
    pub async fn chat(&self, cookie: Option<&str>, message: &str) -> Answer {
        self.post("/api/chat", serde_json::json!({"message": message}), cookie)
            .await
    }

    /// A new anonymous visitor (through a first chat message) and their session cookie.
    pub async fn visitor(&self, message: &str) -> (String, Answer) {
        let answer = self.chat(None, message).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        (
            answer.session_cookie().expect("a new visitor gets a session"),
            answer,
        )
    }

    /// `POST /api/confirm`: each pending write of the suspended turn `(call id, allowed)`.
    pub async fn confirm(
        &self,
        cookie: Option<&str>,
        suspended_turn_id: &Value,
        decisions: &[(Value, bool)],
    ) -> Answer {
        let decisions: Vec<Value> = decisions
            .iter()
            .map(|(id, allowed)| serde_json::json!({"id": id, "allowed": allowed}))
            .collect();
        let body = serde_json::json!({"suspended_turn_id": suspended_turn_id, "decisions": decisions});
        self.post("/api/confirm", body, cookie).await
    }

    pub async fn runs(&self, cookie: Option<&str>) -> Answer {
        self.get("/api/runs", cookie).await
    }

    pub async fn conversations(&self, cookie: Option<&str>) -> Answer {
        self.get("/api/conversations", cookie).await
    }

    pub async fn dashboard(&self, cookie: Option<&str>) -> Answer {
        self.get("/api/dashboard", cookie).await
    }

    pub async fn sign_out(&self, cookie: Option<&str>) -> Answer {
        self.post_empty("/api/session/sign-out", cookie).await
    }

    pub async fn delete_account(&self, cookie: Option<&str>) -> Answer {
        self.delete("/api/account", cookie).await
    }

    /// `POST /api/uploads?filename=…` with the statement's bytes as `text/csv`.
    pub async fn upload(&self, cookie: &str, filename: &str, bytes: &[u8]) -> Answer {
        let request = Request::post(format!("/api/uploads?filename={filename}"))
            .header("origin", SITE)
            .header("cookie", cookie)
            .header("content-type", "text/csv")
            .body(Body::from(bytes.to_vec()))
            .unwrap();
        self.raw(request).await
    }

    /// An operator account `ops@kakeibo.example` made out of band (as `kakeibo operator add`
    /// does), signed in to from the visit `cookie` (or a new one): the operator's session cookie.
    pub async fn operator(&self, state: &State, cookie: Option<&str>) -> String {
        kakeibo_auth::visitors::make_operator(
            &state.owner_pool,
            "ops@kakeibo.example",
            "a long enough password",
        )
        .await
        .unwrap();
        self.post(
            "/api/session/sign-in",
            serde_json::json!({"email": "ops@kakeibo.example", "password": "a long enough password"}),
            cookie,
        )
        .await
        .session_cookie()
        .expect("the operator is signed in")
    }

    /// `POST /api/uploads/{id}/preview` with no body at all.
    pub async fn preview(&self, cookie: &str, id: &str) -> Answer {
        self.post_empty(&format!("/api/uploads/{id}/preview"), Some(cookie))
            .await
    }
}

/// An answer, read whole.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: String,
    /// The body as it came (a download is not text).
    pub bytes: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The session cookie set by this answer (`name=value`), if any.
    pub fn session_cookie(&self) -> Option<String> {
        self.headers
            .get_all(http::header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter(|v| {
                v.starts_with("__Host-kakeibo_session=") && !v.starts_with("__Host-kakeibo_session=;")
            })
            .map(|v| v.split(';').next().unwrap_or_default().to_owned())
            .next_back()
    }

    /// The SSE frames as (event, data). Every frame must read as a `kakeibo_core::Event` (its
    /// name as `type`): a frame the page's generated types would not describe fails the test.
    pub fn events(&self) -> Vec<(String, Value)> {
        sse_events(&self.body)
    }

    /// The SSE frames as the typed events they are.
    pub fn typed(&self) -> Vec<Event> {
        self.events()
            .iter()
            .map(|(name, data)| typed_event(name, data))
            .collect()
    }

    /// The data of every SSE frame of the event `name`, in order.
    pub fn named(&self, name: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|(event, _)| event == name)
            .map(|(_, data)| data)
            .collect()
    }
}

pub fn sse_events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|frame| {
            let mut event = None;
            let mut data = None;
            for line in frame.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = Some(e.to_owned());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = Some(serde_json::from_str(d).expect("SSE data is JSON"));
                }
            }
            let (event, data): (String, Value) = (event?, data?);
            typed_event(&event, &data);
            Some((event, data))
        })
        .collect()
}

/// The frame `name` with `data` as the typed event; panics when it is not one.
pub fn typed_event(name: &str, data: &Value) -> Event {
    let mut whole = data.clone();
    if let Value::Object(map) = &mut whole {
        map.insert("type".to_owned(), Value::String(name.to_owned()));
    }
    serde_json::from_value(whole).unwrap_or_else(|e| panic!("the {name} frame is not an Event ({e}): {data}"))
}

pub async fn read(response: axum::response::Response) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        bytes: bytes.to_vec(),
    }
}

/// The `turn_end` data of an SSE answer.
pub fn turn_end(answer: &Answer) -> Value {
    answer
        .events()
        .into_iter()
        .find(|(e, _)| e == "turn_end")
        .map_or_else(|| panic!("no turn_end in {}", answer.body), |(_, d)| d)
}

/// The reference corpus (`KAKEIBO_CORPUS`, else `../shared/corpus` beside the repository), or the
/// test skipped saying what is not checked (a failure where the whole suite is required).
pub fn corpus(unchecked: &str) -> Option<PathBuf> {
    kakeibo_testkit::corpus_dir("aws-lambda", unchecked).map(|_| kakeibo_testkit::corpus_root())
}

/// An API Gateway HTTP API (payload 2.0) event for `method path`, built on `template` (a real
/// captured event): path, method, body, cookies and source address replaced, everything else as
/// captured.
pub fn gateway_event(
    template: &Value,
    method: &str,
    path_and_query: &str,
    body: Option<&Value>,
    cookie: Option<&str>,
    source_ip: &str,
) -> lambda_http::Request {
    let mut event = template.clone();
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    event["rawPath"] = Value::from(path);
    event["rawQueryString"] = Value::from(query);
    event["routeKey"] = Value::from("$default");
    event["requestContext"]["stage"] = Value::from("$default");
    event["requestContext"]["http"]["method"] = Value::from(method);
    event["requestContext"]["http"]["path"] = Value::from(path);
    event["requestContext"]["http"]["sourceIp"] = Value::from(source_ip);
    event["queryStringParameters"] = Value::Null;
    event["pathParameters"] = Value::Null;
    let headers = event["headers"].as_object_mut().expect("headers");
    headers.retain(|k, _| !k.eq_ignore_ascii_case("content-length") && !k.eq_ignore_ascii_case("cookie"));
    headers.insert("origin".into(), Value::from(SITE));
    headers.insert("host".into(), Value::from("kakeibo.example"));
    headers.insert("content-type".into(), Value::from("application/json"));
    event["cookies"] = cookie.map_or(Value::Null, |c| Value::from(vec![c.to_owned()]));
    event["body"] = body.map_or(Value::Null, |b| Value::from(b.to_string()));
    event["isBase64Encoded"] = Value::from(false);
    lambda_http::request::from_str(&event.to_string()).expect("the event converts")
}

/// What every answer to arbitrary input keeps to: no `5xx`; a refusal is JSON `{error}` with a
/// sentence that names no Rust type. `shown` is the input, for the failure's message.
pub fn the_rules(route: &str, shown: &str, answer: &Answer) {
    assert!(
        !answer.status.is_server_error(),
        "{route} answered {} to {shown}: {}",
        answer.status,
        answer.body
    );
    if answer.status.is_client_error() {
        let error = serde_json::from_str::<Value>(&answer.body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_owned));
        assert!(
            error.as_ref().is_some_and(|e| !e.trim().is_empty()),
            "{route}, {shown}: a refusal without a sentence: {} {}",
            answer.status,
            answer.body
        );
        let error = error.unwrap_or_default();
        let rust = [
            "struct ",
            "enum ",
            "expected u",
            "expected i",
            "expected f",
            "Failed to deserialize",
        ];
        assert!(
            !rust.iter().any(|name| error.contains(name)),
            "{route}, {shown}: the refusal speaks Rust: {error}"
        );
    }
}

/// Serves `app` on a free local port (real HTTP, as `kakeibo-dev` does); returns its base URL.
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("the bound address");
    // As kakeibo-dev serves: each streamed event sent at once.
    let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
        let _ = stream.set_nodelay(true);
    });
    tokio::spawn(async move {
        let service = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
        let _ = axum::serve(listener, service).await;
    });
    format!("http://{addr}")
}

/// A client that speaks from the site's origin.
pub fn http_client() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("origin", reqwest::header::HeaderValue::from_static(SITE));
    reqwest::Client::builder()
        .default_headers(headers)
        .pool_max_idle_per_host(0)
        .build()
        .expect("an HTTP client")
}

/// (status, body) of a POST with a JSON body and a session cookie.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
    cookie: Option<&str>,
) -> (u16, String, Option<String>) {
    let mut request = client.post(url).json(body);
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let cookie = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("__Host-kakeibo_session=") && !v.starts_with("__Host-kakeibo_session=;"))
        .map(|v| v.split(';').next().unwrap_or_default().to_owned());
    (status, response.text().await.expect("a body"), cookie)
}
