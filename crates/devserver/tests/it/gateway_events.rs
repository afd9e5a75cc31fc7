//! Every route driven the way Lambda drives it: a real API Gateway HTTP API (payload 2.0) or
//! Function URL event, converted by `lambda_http`, answered by the function's own `handle`.
//! The templates are captured events from the reference corpus (when present) and our own.

use crate::support;

use std::sync::Arc;

use axum::http::StatusCode;
use kakeibo_api::State;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, gateway_event, read, state};

/// The captured events used as templates, by name.
fn templates() -> Vec<(String, Value)> {
    let ours = support::repo_root().join("crates/devserver/tests/fixtures/apigw-v2-event.json");
    let mut files = vec![ours];
    if let Some(corpus) = support::corpus("the captured API Gateway and function URL events") {
        {
            for name in [
                "aws-lambda-go__apigw-v2-request-no-authorizer.json",
                "lambda-http__apigw_v2_proxy_request.json",
                "powertools-python__apiGatewayProxyV2Event.json",
                "aws-lambda-go__lambda-urls-request.json",
                "lambda-http__lambda_function_url_request.json",
                "powertools-python__lambdaFunctionUrlEvent.json",
            ] {
                files.push(corpus.join("aws-lambda").join(name));
            }
        }
    }
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                serde_json::from_str(&text).unwrap(),
            )
        })
        .collect()
}

type Handler = fn(Arc<State>, lambda_http::Request) -> futures::BoxFuture<'static, axum::response::Response>;

/// One visitor's way in: the state, the captured event used as template, the source address.
struct Gateway<'a> {
    state: &'a Arc<State>,
    template: &'a Value,
    ip: &'a str,
}

impl Gateway<'_> {
    async fn call(
        &self,
        handler: Handler,
        method: &str,
        path: &str,
        body: Option<Value>,
        cookie: Option<&str>,
    ) -> support::Answer {
        let request = gateway_event(self.template, method, path, body.as_ref(), cookie, self.ip);
        read(handler(Arc::clone(self.state), request).await).await
    }
}

mod futures {
    pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
}

fn chat(s: Arc<State>, r: lambda_http::Request) -> futures::BoxFuture<'static, axum::response::Response> {
    Box::pin(kakeibo_chat::handle(s, r))
}
fn confirm(s: Arc<State>, r: lambda_http::Request) -> futures::BoxFuture<'static, axum::response::Response> {
    Box::pin(kakeibo_confirm::handle(s, r))
}
fn runs(s: Arc<State>, r: lambda_http::Request) -> futures::BoxFuture<'static, axum::response::Response> {
    Box::pin(kakeibo_runs::handle(s, r))
}
fn admin(s: Arc<State>, r: lambda_http::Request) -> futures::BoxFuture<'static, axum::response::Response> {
    Box::pin(kakeibo_admin::handle(
        kakeibo_admin::Admin {
            state: s,
            evals: None,
        },
        r,
    ))
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_route_answers_real_gateway_events(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let templates = templates();
    for (index, (name, template)) in templates.iter().enumerate() {
        let ip = format!("198.51.100.{}", index + 1);
        let gw = Gateway {
            state: &state,
            template,
            ip: &ip,
        };
        let ctx = |what: &str| format!("{name}: {what}");

        // chat: a new visitor, a turn that asks to write.
        let chat_answer = gw
            .call(
                chat,
                "POST",
                "/api/chat",
                Some(json!({"message": "set a budget"})),
                None,
            )
            .await;
        assert_eq!(chat_answer.status, StatusCode::OK, "{}", ctx(&chat_answer.body));
        assert_eq!(chat_answer.headers["content-type"], "text/event-stream");
        let cookie = chat_answer.session_cookie().expect("a session cookie");
        let request = chat_answer
            .events()
            .into_iter()
            .find(|(e, _)| e == "confirm_request")
            .expect("confirm_request")
            .1;

        // confirm: allowed; the rest of the turn streams.
        let body = json!({"suspended_turn_id": request["suspended_turn_id"], "decisions": [{"id": request["id"], "allowed": true}]});
        let confirmed = gw
            .call(confirm, "POST", "/api/confirm", Some(body.clone()), Some(&cookie))
            .await;
        assert_eq!(confirmed.status, StatusCode::OK, "{}", ctx(&confirmed.body));
        let end = support::turn_end(&confirmed);
        assert_eq!(end["status"], "ok", "{}", ctx(&confirmed.body));
        let again = gw
            .call(confirm, "POST", "/api/confirm", Some(body), Some(&cookie))
            .await;
        assert_eq!(again.status, StatusCode::GONE, "{}", ctx(&again.body));

        // runs: the list, one run, conversations, one conversation, the dashboard.
        let listed = gw
            .call(runs, "GET", "/api/runs?limit=5", None, Some(&cookie))
            .await;
        assert_eq!(listed.status, StatusCode::OK, "{}", ctx(&listed.body));
        assert_eq!(
            listed.json()["runs"].as_array().unwrap().len(),
            1,
            "{}",
            ctx(&listed.body)
        );
        let run = gw
            .call(
                runs,
                "GET",
                &format!("/api/runs/{}", end["run_id"].as_str().unwrap()),
                None,
                Some(&cookie),
            )
            .await;
        assert_eq!(run.status, StatusCode::OK, "{}", ctx(&run.body));
        let conversations = gw
            .call(runs, "GET", "/api/conversations", None, Some(&cookie))
            .await;
        assert_eq!(
            conversations.json()["conversations"].as_array().unwrap().len(),
            1,
            "{}",
            ctx(&conversations.body)
        );
        let thread = gw
            .call(
                runs,
                "GET",
                &format!("/api/conversations/{}", end["conversation_id"].as_str().unwrap()),
                None,
                Some(&cookie),
            )
            .await;
        assert_eq!(thread.status, StatusCode::OK, "{}", ctx(&thread.body));
        assert!(
            thread.json()["messages"].as_array().unwrap().len() >= 3,
            "{}",
            ctx(&thread.body)
        );
        let dashboard = gw.call(runs, "GET", "/api/dashboard", None, Some(&cookie)).await;
        assert_eq!(dashboard.status, StatusCode::OK, "{}", ctx(&dashboard.body));
        assert_eq!(dashboard.json()["month"], "2025-06", "{}", ctx(&dashboard.body));
        // No evaluation has run on this database: a JSON 404 that says so, to anyone.
        let evals = gw.call(runs, "GET", "/api/evals/latest", None, None).await;
        assert_eq!(evals.status, StatusCode::NOT_FOUND, "{}", ctx(&evals.body));
        assert!(
            evals.json()["error"].as_str().unwrap().contains("no evaluation"),
            "{}",
            ctx(&evals.body)
        );

        // session routes and uploads.
        let session = gw.call(chat, "GET", "/api/session", None, Some(&cookie)).await;
        assert_eq!(
            session.json()["visitor"]["anonymous"],
            true,
            "{}",
            ctx(&session.body)
        );
        let upload = gateway_event(
            template,
            "POST",
            "/api/uploads?filename=june.csv",
            None,
            Some(&cookie),
            &ip,
        );
        let (mut parts, _) = upload.into_parts();
        parts.headers.insert("content-type", "text/csv".parse().unwrap());
        let upload = lambda_http::Request::from_parts(
            parts,
            lambda_http::Body::Text("Date,Description,Amount\n2025-06-01,Tea,-40\n".into()),
        );
        let uploaded = read(kakeibo_chat::handle(Arc::clone(&state), upload).await).await;
        assert_eq!(uploaded.status, StatusCode::CREATED, "{}", ctx(&uploaded.body));

        let listed = gw.call(chat, "GET", "/api/uploads", None, Some(&cookie)).await;
        assert_eq!(
            listed.json()["uploads"].as_array().unwrap().len(),
            1,
            "{}",
            ctx(&listed.body)
        );

        // admin: not an operator, so the routes do not exist.
        let overview = gw
            .call(admin, "GET", "/api/admin/overview", None, Some(&cookie))
            .await;
        assert_eq!(overview.status, StatusCode::NOT_FOUND, "{}", ctx(&overview.body));
        let action = json!({"action": "pause_live_chat", "paused": true});
        let acted = gw
            .call(admin, "POST", "/api/admin/action", Some(action), Some(&cookie))
            .await;
        assert_eq!(acted.status, StatusCode::NOT_FOUND, "{}", ctx(&acted.body));

        // The account routes: sign up, out, in again, and delete.
        let email = format!("visitor{index}@example.com");
        let credentials = json!({"email": email, "password": "a long enough password"});
        let signed_up = gw
            .call(
                chat,
                "POST",
                "/api/session/sign-up",
                Some(credentials.clone()),
                Some(&cookie),
            )
            .await;
        assert_eq!(signed_up.status, StatusCode::OK, "{}", ctx(&signed_up.body));
        let cookie = signed_up.session_cookie().expect("a fresh session");
        let out = gw
            .call(chat, "POST", "/api/session/sign-out", None, Some(&cookie))
            .await;
        assert_eq!(out.status, StatusCode::OK, "{}", ctx(&out.body));
        let signed_in = gw
            .call(chat, "POST", "/api/session/sign-in", Some(credentials), None)
            .await;
        assert_eq!(signed_in.status, StatusCode::OK, "{}", ctx(&signed_in.body));
        let cookie = signed_in.session_cookie().expect("a session");
        let deleted = gw.call(chat, "DELETE", "/api/account", None, Some(&cookie)).await;
        assert_eq!(deleted.status, StatusCode::OK, "{}", ctx(&deleted.body));
        let gone = gw.call(runs, "GET", "/api/runs", None, Some(&cookie)).await;
        assert_eq!(gone.status, StatusCode::UNAUTHORIZED, "{}", ctx(&gone.body));

        // hygiene: unknown route, wrong method, bad body.
        let unknown = gw
            .call(runs, "GET", "/api/nothing-here", None, Some(&cookie))
            .await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
        assert_eq!(unknown.json()["error"], "not found");
        let wrong = gw.call(runs, "DELETE", "/api/runs", None, Some(&cookie)).await;
        assert_eq!(
            wrong.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{}",
            ctx(&wrong.body)
        );
        let bad = gw
            .call(
                chat,
                "POST",
                "/api/chat",
                Some(json!({"message": 42})),
                Some(&cookie),
            )
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        assert!(
            bad.json()["error"].as_str().unwrap().contains("invalid type"),
            "{}",
            bad.body
        );
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_address_quota_counts_the_gateways_source_address(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[("IP_DAILY_MESSAGE_QUOTA", "2")]).await;
    let template: Value = serde_json::from_str(include_str!("../fixtures/apigw-v2-event.json")).unwrap();
    let message = Some(json!({"message": "hello"}));
    let mut statuses = Vec::new();
    // Three new visitors behind one address, then one behind another.
    for ip in ["192.0.2.1", "192.0.2.1", "192.0.2.1", "192.0.2.2"] {
        let gw = Gateway {
            state: &state,
            template: &template,
            ip,
        };
        let answer = gw.call(chat, "POST", "/api/chat", message.clone(), None).await;
        let reason = if answer.status == StatusCode::OK {
            Value::Null
        } else {
            answer.json()["reason"].clone()
        };
        statuses.push((answer.status.as_u16(), reason));
    }
    assert_eq!(
        statuses,
        vec![
            (200, Value::Null),
            (200, Value::Null),
            (503, json!("ip_quota")),
            (200, Value::Null)
        ]
    );
    // The refused visitor was never created: an address cannot mint visitors past its quota.
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE is_anonymous")
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(users, 3);
    // No raw address is stored: only hashed keys.
    let keys: Vec<String> = sqlx::query_scalar("SELECT key FROM rate_limits")
        .fetch_all(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(keys.len(), 4, "messages and new visitors, per address: {keys:?}");
    assert!(keys.iter().all(|k| {
        let hash = k.strip_prefix("visitors|").unwrap_or(k);
        hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit())
    }));
}

/// A REST API (payload 1.0) event for `method path` on stage `prod`, built on `template`.
fn rest_event(
    template: &Value,
    method: &str,
    path: &str,
    body: Option<&Value>,
    cookie: Option<&str>,
) -> lambda_http::Request {
    let mut event = template.clone();
    event["path"] = Value::from(path);
    event["httpMethod"] = Value::from(method);
    event["resource"] = Value::from("/{proxy+}");
    event["requestContext"]["stage"] = Value::from("prod");
    event["requestContext"]["path"] = Value::from(format!("/prod{path}"));
    event["requestContext"]["httpMethod"] = Value::from(method);
    event["multiValueHeaders"] = Value::Null;
    event["queryStringParameters"] = Value::Null;
    event["multiValueQueryStringParameters"] = Value::Null;
    let headers = event["headers"].as_object_mut().expect("headers");
    headers.retain(|k, _| !k.eq_ignore_ascii_case("content-length") && !k.eq_ignore_ascii_case("cookie"));
    headers.insert("origin".into(), Value::from(support::SITE));
    headers.insert("content-type".into(), Value::from("application/json"));
    if let Some(cookie) = cookie {
        headers.insert("cookie".into(), Value::from(cookie));
    }
    event["body"] = body.map_or(Value::Null, |b| Value::from(b.to_string()));
    event["isBase64Encoded"] = Value::from(false);
    lambda_http::request::from_str(&event.to_string()).expect("the REST event converts")
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn rest_api_events_route_without_their_stage(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let ours: Value = serde_json::from_str(include_str!("../fixtures/apigw-rest-event.json")).unwrap();
    let mut templates = vec![("apigw-rest-event.json".to_owned(), ours)];
    if let Some(corpus) = support::corpus("the captured REST API event") {
        let path = corpus.join("aws-lambda/lambda-http__apigw_proxy_request.json");
        templates.push((
            "lambda-http__apigw_proxy_request.json".into(),
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap(),
        ));
    }
    for (name, template) in &templates {
        let chat = rest_event(
            template,
            "POST",
            "/api/chat",
            Some(&json!({"message": "how much did I spend"})),
            None,
        );
        let answer = read(kakeibo_chat::handle(Arc::clone(&state), chat).await).await;
        assert_eq!(answer.status, StatusCode::OK, "{name}: {}", answer.body);
        assert_eq!(support::turn_end(&answer)["status"], "ok", "{name}");
        let cookie = answer.session_cookie().expect("a session");
        let runs = rest_event(template, "GET", "/api/runs", None, Some(&cookie));
        let listed = read(kakeibo_runs::handle(Arc::clone(&state), runs).await).await;
        assert_eq!(listed.status, StatusCode::OK, "{name}: {}", listed.body);
        assert_eq!(listed.json()["runs"].as_array().unwrap().len(), 1, "{name}");
    }
    // The address is the gateway's source (CloudFront's, behind it): one bucket for these visits.
    let keys: i64 = sqlx::query_scalar("SELECT count(*) FROM rate_limits WHERE key NOT LIKE 'visitors|%'")
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert!(keys >= 1);
}
