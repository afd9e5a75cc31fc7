//! Cold start of the `runs` function binary: from process start to its first response, with its
//! database connection, under a local stand-in for the Lambda Runtime API; and its peak RSS.
//!
//! Each of N starts (`BENCH_STARTS`, default 20) spawns the release binary with the Lambda
//! environment, serves it one API Gateway v2 event (`GET /api/runs` with a valid session, so it
//! loads the visitor and lists runs through both pools) and waits for the response it posts.
//! Printed beside it, measured in the same run: the start of a process that does nothing
//! (`true`), and the binary's own time to its first poll for work (runtime and state ready,
//! before any database round trip).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark may stop on what it did not expect.

use std::{
    process::{Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    Router,
    extract::{Path, State},
    http::HeaderMap,
    routing::{get, post},
};
use tokio::sync::{Mutex, mpsc};

#[path = "../../../crates/ledger/benches/support/mod.rs"]
mod support;

const SECRET: &str = "bench-only-secret-0123456789abcdef0123456789";

/// What the stand-in saw of one start.
#[derive(Debug)]
enum Seen {
    Poll(Instant),
    Response(Instant, String),
    Error(String),
}

struct Runtime {
    event: String,
    seen: mpsc::UnboundedSender<Seen>,
    served: Mutex<bool>,
}

async fn next(State(rt): State<Arc<Runtime>>) -> (HeaderMap, String) {
    let _ = rt.seen.send(Seen::Poll(Instant::now()));
    let mut served = rt.served.lock().await;
    if *served {
        drop(served);
        // One invocation per start: later polls wait until the process is killed.
        tokio::time::sleep(Duration::from_hours(1)).await;
        return (HeaderMap::new(), String::new());
    }
    *served = true;
    let mut headers = HeaderMap::new();
    headers.insert("lambda-runtime-aws-request-id", "bench-request".parse().unwrap());
    let deadline = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 60_000;
    headers.insert(
        "lambda-runtime-deadline-ms",
        deadline.to_string().parse().unwrap(),
    );
    headers.insert(
        "lambda-runtime-invoked-function-arn",
        "arn:aws:lambda:eu-west-1:123456789012:function:runs"
            .parse()
            .unwrap(),
    );
    headers.insert("content-type", "application/json".parse().unwrap());
    (headers, rt.event.clone())
}

async fn response(State(rt): State<Arc<Runtime>>, Path(_id): Path<String>, body: String) -> &'static str {
    let _ = rt.seen.send(Seen::Response(Instant::now(), body));
    "{}"
}

async fn error(State(rt): State<Arc<Runtime>>, body: String) -> &'static str {
    let _ = rt.seen.send(Seen::Error(body));
    "{}"
}

fn on_database(url: &str, database: &str) -> String {
    let (base, _) = url.split_once('?').unwrap_or((url, ""));
    let (server, _) = base.rsplit_once('/').unwrap();
    format!("{server}/{database}")
}

/// The peak resident set of a live process, in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let starts = support::setting("BENCH_STARTS", 20);
    let scratch = support::create("cold_start", 2).await;
    let database: String = sqlx::query_scalar("SELECT current_database()")
        .fetch_one(&scratch.pool)
        .await
        .unwrap();
    let owner_url = on_database(&std::env::var("DATABASE_URL").unwrap(), &database);
    let app_url = on_database(
        &std::env::var("APP_DATABASE_URL").expect("APP_DATABASE_URL (run `cargo xtask bench`)"),
        &database,
    );
    let visitor: uuid::Uuid =
        sqlx::query_scalar("INSERT INTO users (is_anonymous) VALUES (true) RETURNING id")
            .fetch_one(&scratch.pool)
            .await
            .unwrap();
    let sessions = kakeibo_auth::Sessions::new(SECRET.as_bytes(), true).unwrap();
    let token = sessions
        .issue(kakeibo_ledger::OwnerId::new(visitor), 0, chrono::Utc::now())
        .unwrap();
    let template = include_str!("../../../crates/devserver/tests/fixtures/apigw-v2-event.json");
    let mut event: serde_json::Value = serde_json::from_str(template).unwrap();
    event["rawPath"] = "/api/runs".into();
    event["requestContext"]["http"]["path"] = "/api/runs".into();
    event["cookies"] = serde_json::json!([format!("kakeibo_session={token}")]);
    let event = event.to_string();

    let binary = env!("CARGO_BIN_EXE_runs");
    let mut first_poll = Vec::new();
    let mut first_response = Vec::new();
    let mut rss = Vec::new();
    let mut nothing = Vec::new();
    for _ in 0..starts {
        // Baseline: starting a process that does nothing.
        let t = Instant::now();
        Command::new("true").status().unwrap();
        nothing.push(ms(t.elapsed()));

        let (tx, mut rx) = mpsc::unbounded_channel();
        let runtime = Arc::new(Runtime {
            event: event.clone(),
            seen: tx,
            served: Mutex::new(false),
        });
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route("/2018-06-01/runtime/invocation/{id}/response", post(response))
            .route("/2018-06-01/runtime/invocation/{id}/error", post(error))
            .route("/2018-06-01/runtime/init/error", post(error))
            .with_state(runtime);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let api = listener.local_addr().unwrap().to_string();
        let server = tokio::spawn(async move { axum::serve(listener, app).await });

        let started = Instant::now();
        let mut child = Command::new(binary)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("AWS_LAMBDA_FUNCTION_NAME", "runs")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_RUNTIME_API", &api)
            .env("DATABASE_URL", &owner_url)
            .env("APP_DATABASE_URL", &app_url)
            .env("JWT_SECRET", SECRET)
            .env("RATE_LIMIT_SALT", "bench")
            .env("SITE_URL", "https://kakeibo.example")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut polled = None;
        let answered = loop {
            match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
                Ok(Some(Seen::Poll(at))) => {
                    polled.get_or_insert(at);
                }
                Ok(Some(Seen::Response(at, body))) => break (at, body),
                Ok(Some(Seen::Error(body))) => panic!("the function failed: {body}"),
                Ok(None) | Err(_) => panic!("no response within 30 s"),
            }
        };
        let (at, body) = answered;
        let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(reply["statusCode"], 200, "{body}");
        first_response.push(ms(at - started));
        first_poll.push(ms(polled.unwrap_or(at) - started));
        rss.push(peak_rss_kib(child.id()).unwrap_or(0));
        let _ = child.kill();
        let _ = child.wait();
        server.abort();
    }
    scratch.drop_database().await;

    #[allow(clippy::cast_precision_loss)]
    let rss_mib = rss.iter().copied().max().unwrap_or(0) as f64 / 1024.0;
    let cold = median(first_response);
    let poll = median(first_poll);
    let base = median(nothing);
    println!("cold start of `runs` ({starts} process starts, release build, local PostgreSQL)");
    println!("  process that does nothing (baseline)   median {base:8.2} ms");
    println!(
        "  to its first poll for work             median {poll:8.2} ms  ({:.1}x baseline)",
        poll / base
    );
    println!(
        "  to its first response (with database)  median {cold:8.2} ms  ({:.1}x baseline)",
        cold / base
    );
    println!("  peak RSS                               {rss_mib:8.1} MiB");
}
