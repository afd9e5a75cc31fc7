//! Provider signatures survive the whole path: a Gemini stand-in sends them, the turn suspends
//! and is stored as jsonb, a fresh process resumes it, and the next request carries each
//! signature on the same part, byte for byte.

use crate::common;
use kakeibo_agent::Channel;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, body::Body, extract::State, http::header, response::Response, routing::post};
use common::{app_pool, new_user, owner_pool};
use kakeibo_agent::turns::{Agent, Outcome, TurnStore};
use kakeibo_core::{ConfirmPolicy, RunStatus};
use kakeibo_ledger::OwnerId;
use kakeibo_providers::{Gemini, GeminiConfig};
use serde_json::{Value, json};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

const THOUGHT_SIGNATURE: &str = "CiQBjz1rX6YJ8ZSv+3uqAbCNwYtsiKBXrDrKL2d3Cd7f0ZzM/Fu8KZQGPPWtf4xH==";
const READ_SIGNATURE: &str = "EpEgCo4gAb4+9vvWwdN+NkNiCCwrqvFI8uf9IiD2A47Bm4Sga0kUTm4e/QuEnsZnNu";
const WRITE_SIGNATURE: &str = "AY89a18aZ+0/x1Yq9pVvR3bE8mK2Lw==";

#[derive(Clone, Default)]
struct Standin {
    bodies: Arc<Mutex<Vec<Value>>>,
}

async fn handle(State(s): State<Standin>, uri: axum::http::Uri, body: String) -> Response {
    if uri.path().ends_with(":countTokens") {
        return Response::builder()
            .body(Body::from(json!({"totalTokens": 120}).to_string()))
            .unwrap();
    }
    let body: Value = serde_json::from_str(&body).unwrap();
    let turn = s.bodies.lock().unwrap().len();
    s.bodies.lock().unwrap().push(body);
    let chunks = if turn == 0 {
        vec![
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Checking the accounts first.", "thought": true, "thoughtSignature": THOUGHT_SIGNATURE}]}}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "list_accounts", "args": {}}, "thoughtSignature": READ_SIGNATURE},
                {"functionCall": {"name": "set_budget", "args": {"category": "Dining", "month": "2025-04", "amount_minor": 800_000, "currency": "INR"}}, "thoughtSignature": WRITE_SIGNATURE}
            ]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 6000, "candidatesTokenCount": 30, "thoughtsTokenCount": 20}}),
        ]
    } else {
        vec![
            json!({"candidates": [{"content": {"parts": [{"text": "Your Dining budget for April is ₹8,000.00."}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 6400, "candidatesTokenCount": 12}}),
        ]
    };
    let sse = chunks.iter().fold(String::new(), |mut out, c| {
        use std::fmt::Write as _;
        let _ = write!(out, "data: {c}\n\n");
        out
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from(sse))
        .unwrap()
}

async fn with_gemini_agent<T>(
    pool: &PgPool,
    owner: OwnerId,
    base_url: &str,
    f: impl AsyncFnOnce(&Agent) -> T,
) -> T {
    // Everything built anew: only the database and the stand-in are shared.
    let gemini = Gemini::new(GeminiConfig {
        auth: kakeibo_providers::gemini::GeminiAuth::ApiKey(kakeibo_providers::http::Secret("k".into())),
        model: "gemini-3.6-flash".into(),
        base_url: base_url.to_owned(),
        timeout: Duration::from_secs(5),
        cache: kakeibo_providers::gemini::cache::CacheSettings::default(),
    })
    .unwrap();
    let store = TurnStore::new(pool.clone());
    let agent = crate::agent_on(
        &store,
        owner,
        std::sync::Arc::new(gemini),
        "You are kakeibo.",
        Channel::Web,
    );
    f(&agent).await
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn signatures_come_back_byte_for_byte_after_a_resume_elsewhere(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let standin = Standin::default();
    let app = Router::new()
        .route("/v1beta/models/{call}", post(handle))
        .with_state(standin.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1beta", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let owner_pool = owner_pool(options, connect.clone()).await;
    let owner = new_user(&owner_pool).await;
    let first_pool = app_pool(&connect).await;
    let conversation = TurnStore::new(first_pool.clone())
        .new_conversation(owner, None)
        .await
        .unwrap();
    let suspended = with_gemini_agent(&first_pool, owner, &base_url, async |agent| {
        agent
            .chat(
                conversation,
                "Set my dining budget for April to 8,000 rupees",
                &ConfirmPolicy::Suspend,
                &|_| {},
            )
            .await
            .unwrap()
    })
    .await;
    let Outcome::Suspended {
        suspended_id,
        pending,
        ..
    } = suspended
    else {
        panic!("{suspended:?}")
    };
    first_pool.close().await;

    let second_pool = app_pool(&connect).await;
    let finished = with_gemini_agent(&second_pool, owner, &base_url, async |agent| {
        agent
            .confirm(suspended_id, &[(pending[0].id.clone(), true)], &|_| {})
            .await
            .unwrap()
    })
    .await;
    let Outcome::Finished { status, answer, .. } = finished else {
        panic!("{finished:?}")
    };
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(answer, "Your Dining budget for April is ₹8,000.00.");

    let bodies = standin.bodies.lock().unwrap().clone();
    let replayed = &bodies[1]["contents"][1]["parts"];
    assert_eq!(replayed[0]["thoughtSignature"], THOUGHT_SIGNATURE, "{replayed:#}");
    assert_eq!(replayed[1]["functionCall"]["name"], "list_accounts");
    assert_eq!(replayed[1]["thoughtSignature"], READ_SIGNATURE);
    assert_eq!(replayed[2]["functionCall"]["name"], "set_budget");
    assert_eq!(replayed[2]["thoughtSignature"], WRITE_SIGNATURE);
    let responses = &bodies[1]["contents"][2]["parts"];
    let names: Vec<&str> = responses
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["functionResponse"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["list_accounts", "set_budget"],
        "answered by position, in call order"
    );
    let budgets: i64 = sqlx::query_scalar("SELECT count(*) FROM budgets")
        .fetch_one(&owner_pool)
        .await
        .unwrap();
    assert_eq!(budgets, 1);
}
