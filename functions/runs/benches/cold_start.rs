//! Cold start of the `runs` function binary: from process start to its first response, with its
//! database connection, under a local stand-in for the Lambda Runtime API; and its peak RSS.
//!
//! Each of N starts (`BENCH_STARTS`, default 20) spawns the release binary with the Lambda
//! environment, serves it one API Gateway v2 event (`GET /api/runs` with a valid session, so it
//! loads the visitor and lists runs as app_user, its one pool) and waits for the response it posts.
//! The baseline, measured in the same run under the same stand-in: `lambda-hello` (in
//! `kakeibo-bench`), a `lambda_http` binary that opens one database connection and answers with
//! a row it reads; built here in release if need be. Beside them, the start of a process that
//! does nothing (`true`).

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

use kakeibo_bench::{Figure, Report, scratch, setting};

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

/// What one start of a function binary took.
struct Start {
    first_poll: f64,
    first_response: f64,
    rss_kib: u64,
}

/// Starts `binary` under a fresh Runtime API stand-in that serves `event` once, and waits for
/// its answer (which must be a 200).
async fn start(binary: &str, event: &str, env: &[(&str, &str)]) -> Start {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let runtime = Arc::new(Runtime {
        event: event.to_owned(),
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
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut polled = None;
    let (at, body) = loop {
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
            Ok(Some(Seen::Poll(at))) => {
                polled.get_or_insert(at);
            }
            Ok(Some(Seen::Response(at, body))) => break (at, body),
            Ok(Some(Seen::Error(body))) => panic!("{binary} failed: {body}"),
            Ok(None) | Err(_) => panic!("no response from {binary} within 30 s"),
        }
    };
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["statusCode"], 200, "{body}");
    let start = Start {
        first_poll: ms(polled.unwrap_or(at) - started),
        first_response: ms(at - started),
        rss_kib: peak_rss_kib(child.id()).unwrap_or(0),
    };
    let _ = child.kill();
    let _ = child.wait();
    server.abort();
    start
}

/// The baseline binary, built in release (cargo does nothing when it is fresh).
fn hello_binary() -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_owned());
    let output = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--package",
            "kakeibo-bench",
            "--bin",
            "lambda-hello",
        ])
        .args(["--message-format", "json"])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(output.status.success(), "building lambda-hello failed");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|m| m["executable"].as_str().map(str::to_owned))
        .expect("cargo named no lambda-hello executable")
}

#[tokio::main]
async fn main() {
    let starts = setting("BENCH_STARTS", 20);
    let scratch = scratch::create(
        "cold_start",
        kakeibo_ledger::pool_options(2),
        &kakeibo_ledger::MIGRATOR,
    )
    .await;
    let owner_url = on_database(&std::env::var("DATABASE_URL").unwrap(), scratch.name());
    let app_url = on_database(
        &std::env::var("APP_DATABASE_URL").expect("APP_DATABASE_URL (run `cargo xtask bench`)"),
        scratch.name(),
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

    let runs = env!("CARGO_BIN_EXE_runs");
    let hello = hello_binary();
    let runs_env = [
        ("DATABASE_URL", owner_url.as_str()),
        ("APP_DATABASE_URL", app_url.as_str()),
        ("JWT_SECRET", SECRET),
        ("RATE_LIMIT_SALT", "bench"),
        ("SITE_URL", "https://kakeibo.example"),
        // As infra/template.yaml deploys it: one connection, its statements one after another.
        ("DATABASE_POOL_SIZE", "1"),
    ];
    let hello_env = [("DATABASE_URL", app_url.as_str())];
    let (mut ours, mut baseline, mut nothing) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..starts {
        let t = Instant::now();
        Command::new("true").status().unwrap();
        nothing.push(ms(t.elapsed()));
        // Alternating, so a slow moment of the machine falls on both.
        baseline.push(start(&hello, &event, &hello_env).await);
        ours.push(start(runs, &event, &runs_env).await);
    }
    scratch.drop_database().await;

    #[allow(clippy::cast_precision_loss)]
    let peak_mib = |s: &[Start]| s.iter().map(|s| s.rss_kib).max().unwrap_or(0) as f64 / 1024.0;
    let median_of = |s: &[Start], f: fn(&Start) -> f64| median(s.iter().map(f).collect());
    let mut report = Report::new(
        "cold_start",
        &format!(
            "Cold start of the `runs` function ({starts} process starts, release build, one request each)"
        ),
        "cargo bench -p kakeibo-runs --bench cold_start",
    );
    report.push(
        Figure::new(
            "runs: to its first response (median)",
            median_of(&ours, |s| s.first_response),
            "ms",
        )
        .against(
            "lambda-hello with one connection",
            median_of(&baseline, |s| s.first_response),
        )
        .at_most(2.0),
    );
    report.push(
        Figure::new(
            "runs: to its first poll (median)",
            median_of(&ours, |s| s.first_poll),
            "ms",
        )
        .against("lambda-hello", median_of(&baseline, |s| s.first_poll)),
    );
    report.push(Figure::new("runs: peak RSS", peak_mib(&ours), "MiB").at_most(32.0));
    report.push(Figure::new("lambda-hello: peak RSS", peak_mib(&baseline), "MiB"));
    report.push(Figure::new(
        "a process that does nothing (median)",
        median(nothing),
        "ms",
    ));
    report.note(
        "`runs` connects as app_user (the only role its routes use), verifies the session, loads the visitor \
         and lists their runs; lambda-hello connects once as app_user and reads one row",
    );
    report.finish();
}
