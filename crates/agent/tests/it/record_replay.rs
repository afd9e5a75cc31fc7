//! Record and replay through the real loop: a two-turn conversation with tool calls is recorded
//! against a Gemini stand-in, then replayed with no provider at all in a new conversation — the
//! same requests (by their canonical key), the same tool results, the same answers — and a
//! question that was never recorded fails loudly.

use crate::common;
use kakeibo_agent::Channel;

use std::{
    fmt::Write as _,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, body::Body, extract::State, http::header, response::Response, routing::post};
use common::{app_pool, new_user, owner_pool};
use kakeibo_agent::turns::{Outcome, TurnStore};
use kakeibo_core::{Block, ConfirmPolicy, Message, Provider, RunStatus};
use kakeibo_ledger::OwnerId;
use kakeibo_providers::{
    Gemini, GeminiConfig,
    gemini::cache::CacheSettings,
    http::Secret,
    replay::{Recorder, Replay},
};
use serde_json::{Value, json};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

/// The stand-in's replies, in order: a call, an answer; a call, an answer.
fn replies() -> Vec<Vec<Value>> {
    vec![
        vec![json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Looking at the accounts.", "thought": true, "thoughtSignature": "sig-a"},
            {"functionCall": {"name": "list_accounts", "args": {}}, "thoughtSignature": "sig-b"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 900, "candidatesTokenCount": 10}})],
        vec![
            json!({"candidates": [{"content": {"parts": [{"text": "You have no accounts yet."}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 950, "candidatesTokenCount": 6}}),
        ],
        vec![json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_spend_report", "args": {"period": "2025-03"}}, "thoughtSignature": "sig-c"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 12}})],
        vec![
            json!({"candidates": [{"content": {"parts": [{"text": "Nothing was spent in March 2025."}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1100, "candidatesTokenCount": 8}}),
        ],
    ]
}

#[derive(Clone, Default)]
struct Standin {
    served: Arc<Mutex<usize>>,
}

async fn handle(State(s): State<Standin>) -> Response {
    let n = {
        let mut served = s.served.lock().unwrap();
        *served += 1;
        *served - 1
    };
    let mut sse = String::new();
    for chunk in replies().get(n).cloned().unwrap_or_default() {
        let _ = writeln!(sse, "data: {chunk}\n");
    }
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from(sse))
        .unwrap()
}

const QUESTIONS: [&str; 2] = ["Which accounts do I have?", "And what did I spend in March 2025?"];

/// Asks `questions` in one new conversation; the answers and the conversation's messages.
async fn converse(
    pool: &PgPool,
    owner: OwnerId,
    provider: std::sync::Arc<dyn Provider>,
    questions: &[&str],
) -> (Vec<Result<String, String>>, Vec<Message>) {
    let store = TurnStore::new(pool.clone());
    let agent = crate::agent_on(&store, owner, provider, "You are kakeibo.", Channel::Cli);
    let conversation = store.new_conversation(owner, None).await.unwrap();
    let mut answers = Vec::new();
    for question in questions {
        let outcome = agent
            .chat(conversation, question, &ConfirmPolicy::AutoDeny, &|_| {})
            .await
            .unwrap();
        let Outcome::Finished { status, answer, .. } = outcome else {
            panic!("{outcome:?}")
        };
        answers.push(if status == RunStatus::Ok {
            Ok(answer)
        } else {
            Err(format!("{status:?}: {answer}"))
        });
    }
    (answers, store.history(owner, conversation).await.unwrap())
}

/// The parts of a history that replay must reproduce: text, calls with their inputs, results.
fn essence(history: &[Message]) -> Vec<Value> {
    history
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::Text { text, .. } => Some(json!({"text": text})),
            Block::ToolUse { name, input, .. } => Some(json!({"call": name, "input": input})),
            Block::ToolResult {
                name,
                content,
                is_error,
                ..
            } => Some(json!({"result": name, "content": content, "is_error": is_error})),
            Block::ThoughtSummary { .. } => None,
        })
        .collect()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_recorded_conversation_replays_through_the_loop(options: PgPoolOptions, connect: PgConnectOptions) {
    let standin = Standin::default();
    let app = Router::new()
        .route("/v1beta/models/{call}", post(handle))
        .with_state(standin.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1beta", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let owner_pool = owner_pool(options, connect.clone()).await;
    let owner = new_user(&owner_pool).await;
    let pool = app_pool(&connect).await;
    let fixtures = tempfile::tempdir().unwrap();

    let gemini = Gemini::new(GeminiConfig {
        auth: kakeibo_providers::gemini::GeminiAuth::ApiKey(Secret("k".into())),
        model: "gemini-3.6-flash".into(),
        base_url,
        timeout: Duration::from_secs(5),
        cache: CacheSettings::default(),
    })
    .unwrap();
    let recorder = std::sync::Arc::new(Recorder::new(Box::new(gemini), fixtures.path()));
    let (recorded, recorded_history) = converse(&pool, owner, recorder.clone(), &QUESTIONS).await;
    assert_eq!(
        recorded,
        [
            Ok("You have no accounts yet.".to_owned()),
            Ok("Nothing was spent in March 2025.".to_owned())
        ]
    );
    assert_eq!(*standin.served.lock().unwrap(), 4);
    let mut files: Vec<String> = std::fs::read_dir(fixtures.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "one fixture per model call: {files:?}");
    let first: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.path().join(&files[0])).unwrap()).unwrap();
    assert!(
        !first["request"].to_string().contains("sig-"),
        "signatures are not part of the key"
    );

    // Replayed: no provider, a new conversation, the same exchange.
    let replay = std::sync::Arc::new(Replay::new("gemini-3.6-flash", fixtures.path()));
    let (replayed, replayed_history) = converse(&pool, owner, replay.clone(), &QUESTIONS).await;
    assert_eq!(replayed, recorded);
    assert_eq!(essence(&replayed_history), essence(&recorded_history));
    assert!(
        essence(&recorded_history)
            .iter()
            .any(|b| b["result"] == "get_spend_report" && b["is_error"] == false),
        "the tools really ran: {:#?}",
        essence(&recorded_history)
    );
    assert_eq!(
        *standin.served.lock().unwrap(),
        4,
        "replay never calls the provider"
    );
    // Signatures come back from the fixture as they were recorded.
    let signed = replayed_history
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| {
            matches!(
                b,
                Block::ToolUse {
                    provider_meta: Some(_),
                    ..
                }
            )
        })
        .count();
    assert_eq!(signed, 2);

    // A question nobody recorded.
    let (missed, _) = converse(&pool, owner, replay.clone(), &["What is my net worth?"]).await;
    let message = missed[0].clone().unwrap_err();
    assert!(message.contains("REPLAY: no recorded reply"), "{message}");
}
