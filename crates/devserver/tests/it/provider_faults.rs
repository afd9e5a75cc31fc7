//! Faults of the model provider, injected by a stand-in Gemini endpoint on a raw socket, and what
//! each does to a visitor's turn over HTTP: a request that never answers, a connection reset in
//! the middle of a stream, a 500 then a 200, a 429 with a retry hint, a stream cut in the middle
//! of a tool call, a malformed event. Each turn either completes after the retries the adapter
//! allows, or ends saying what happened with its run recorded `error`; nothing is half written
//! (no tool runs on a cut reply), and the visitor's next message to the same conversation is
//! answered. The test prints the table of fault → what the visitor saw → run status → rows.

use crate::support;

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::http::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// What the stand-in does with one request.
#[derive(Debug, Clone)]
enum Fault {
    /// Reads the request and never answers.
    Hang,
    /// Starts a 200 stream, sends half an event, and resets the connection.
    ResetMidStream,
    /// A whole response with this status, body and `Retry-After`.
    Status(u16, &'static str, Option<&'static str>),
    /// A 200 whose body is this SSE text.
    Sse(String),
}

fn sse(events: &[Value]) -> String {
    events.iter().fold(String::new(), |mut text, e| {
        text.push_str("data: ");
        text.push_str(&e.to_string());
        text.push_str("\r\n\r\n");
        text
    })
}

fn answer(text: &str) -> Fault {
    Fault::Sse(sse(&[json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 900, "candidatesTokenCount": 5}
    })]))
}

/// Serves the faults in order, one a request; past them, `answer("All good.")`.
async fn standin(faults: Vec<Fault>) -> String {
    let faults = Arc::new(Mutex::new(VecDeque::from(faults)));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let fault = faults
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| answer("All good."));
            tokio::spawn(serve(socket, fault));
        }
    });
    format!("http://{address}/v1beta")
}

async fn serve(mut socket: TcpStream, fault: Fault) {
    // The request: headers, then as many body bytes as they announce.
    let mut request = Vec::new();
    let mut buffer = [0u8; 8192];
    let body_from = loop {
        let n = socket.read(&mut buffer).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buffer[..n]);
        if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&request[..body_from]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while request.len() < body_from + length {
        let n = socket.read(&mut buffer).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buffer[..n]);
    }
    let whole = |status: u16, kind: &str, body: &str, extra: &str| {
        format!(
            "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n{body}",
            body.len()
        )
    };
    match fault {
        Fault::Hang => tokio::time::sleep(Duration::from_mins(1)).await,
        Fault::ResetMidStream => {
            let start =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            let half = r#"data: {"candidates": [{"content": {"parts": [{"text": "You sp"#;
            let chunk = format!("{:x}\r\n{half}\r\n", half.len());
            let _ = socket.write_all(start.as_bytes()).await;
            let _ = socket.write_all(chunk.as_bytes()).await;
            let _ = socket.flush().await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            // Dropped with SO_LINGER 0: the peer gets a reset, not an orderly end.
            let _ = socket.set_zero_linger();
        }
        Fault::Status(status, body, retry_after) => {
            let extra = retry_after
                .map(|s| format!("retry-after: {s}\r\n"))
                .unwrap_or_default();
            let _ = socket
                .write_all(whole(status, "application/json", body, &extra).as_bytes())
                .await;
        }
        Fault::Sse(text) => {
            let _ = socket
                .write_all(whole(200, "text/event-stream", &text, "").as_bytes())
                .await;
        }
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_provider_fault_ends_a_turn_truthfully_and_the_visitor_can_send_again(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let cut_in_a_call = sse(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me look."}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "set_budget", "args": {"category": "Groceries"}}}
        ]}}]}),
    ]);
    let cases: Vec<(&str, Vec<Fault>)> = vec![
        (
            "(a) no answer within the timeout, three times",
            vec![Fault::Hang, Fault::Hang, Fault::Hang],
        ),
        ("(b) connection reset mid-stream", vec![Fault::ResetMidStream]),
        (
            "(c) 500, then 200",
            vec![Fault::Status(
                500,
                r#"{"error": {"code": 500, "message": "internal", "status": "INTERNAL"}}"#,
                None,
            )],
        ),
        (
            "(d) 429 with Retry-After: 1, then 200",
            vec![Fault::Status(
                429,
                r#"{"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}"#,
                Some("1"),
            )],
        ),
        (
            "(e) stream cut inside a tool call",
            vec![Fault::Sse(cut_in_a_call)],
        ),
        (
            "(f) a malformed event",
            vec![Fault::Sse(
                "data: {\"candidates\": [{\"content\"\r\n\r\n".to_owned(),
            )],
        ),
    ];

    let mut table = vec!["| fault | the visitor saw | run status | rows written | next message |".to_owned()];
    table.push("|---|---|---|---|---|".to_owned());
    for (name, faults) in cases {
        let base = standin(faults).await;
        let settings = [
            ("KAKEIBO_PROVIDER", "gemini"),
            ("GEMINI_API_KEY", "test-key"),
            ("GEMINI_BASE_URL", base.as_str()),
            ("EXPLICIT_CACHE", "0"),
            ("MODEL_TIMEOUT_SECS", "1"),
            ("ANON_DAILY_MESSAGE_QUOTA", "100"),
        ];
        let state = state(&connect, Isolation::Rls, &settings).await;
        let app = TestApp::new(&state);
        let first = app.chat(None, "how much did I spend on groceries?").await;
        assert_eq!(first.status, StatusCode::OK, "{name}: {}", first.body);
        let cookie = first.session_cookie().unwrap();
        let ends = first.named("turn_end");
        let end = ends
            .first()
            .unwrap_or_else(|| panic!("{name}: no turn_end: {}", first.body));
        let conversation = end["conversation_id"].as_str().unwrap().to_owned();
        let run = end["run_id"].as_str().unwrap().to_owned();
        let tokens: String = first
            .named("token")
            .iter()
            .map(|t| t["delta"].as_str().unwrap_or_default())
            .collect();
        let saw = if end["status"] == "ok" {
            format!("the answer: \"{tokens}\"")
        } else {
            let message = end["message"].as_str().unwrap_or_default().to_owned();
            assert!(!message.is_empty(), "{name}: a failed turn says nothing: {end}");
            format!("turn_end {} / {}: \"{message}\"", end["status"], end["stop"])
        };
        let db = state.owner_pool.get();
        let (status, finished): (String, bool) = sqlx::query_as(
            "SELECT status::text, finished_at IS NOT NULL FROM trace_runs WHERE id = $1::uuid",
        )
        .bind(&run)
        .fetch_one(db)
        .await
        .unwrap();
        assert!(finished, "{name}: the run was left open");
        let count = |sql: &'static str| {
            let run = run.clone();
            async move {
                sqlx::query_scalar::<_, i64>(sql)
                    .bind(run)
                    .fetch_one(db)
                    .await
                    .unwrap()
            }
        };
        let tool_calls =
            count("SELECT count(*) FROM trace_events WHERE run_id = $1::uuid AND type = 'tool_call'").await;
        let events = count("SELECT count(*) FROM trace_events WHERE run_id = $1::uuid").await;
        let messages: i64 =
            sqlx::query_scalar("SELECT count(*) FROM conversation_messages WHERE conversation_id = $1::uuid")
                .bind(&conversation)
                .fetch_one(db)
                .await
                .unwrap();
        let suspended: i64 = sqlx::query_scalar("SELECT count(*) FROM suspended_turns")
            .fetch_one(db)
            .await
            .unwrap();
        assert_eq!(
            (tool_calls, suspended),
            (0, 0),
            "{name}: a tool ran or waits on a cut reply"
        );
        match name.split(' ').next() {
            Some("(c)" | "(d)") => assert_eq!(status, "ok", "{name}: the retry should have answered"),
            _ => assert_eq!(status, "error", "{name}"),
        }

        // The visitor sends again, to the same conversation, and is answered.
        let next = app
            .post(
                "/api/chat",
                json!({"message": "and now?", "conversation_id": conversation}),
                Some(&cookie),
            )
            .await;
        assert_eq!(next.status, StatusCode::OK, "{name}: {}", next.body);
        let next_end = &next.named("turn_end")[0];
        assert_eq!(next_end["status"], "ok", "{name}: {}", next.body);
        table.push(format!(
            "| {name} | {saw} | {status} | {messages} messages, {events} trace events, 0 tool calls | answered |"
        ));
    }
    println!("{}", table.join("\n"));
}
