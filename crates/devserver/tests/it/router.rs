//! The router in the web's flow: with a cheap model set and a judge (a local stand-in serving
//! real-shaped logprobs), a new conversation's first message is routed once; the conversation
//! keeps the model it was given — later messages and a confirm go to it without asking the judge;
//! a judge that fails its probe, or none, gives every conversation the agent model.

use crate::support;

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicUsize, Ordering},
};

use axum::{Json, Router, extract::State as Extract, routing::post};
use futures_util::stream::BoxStream;
use kakeibo_api::State;
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent, pricing::Price};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state, turn_end};

/// The agent's scripted model under another name, counting its calls: the cheap model.
struct Cheap {
    inner: Arc<dyn Provider>,
    calls: Arc<AtomicUsize>,
}

impl Provider for Cheap {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn model(&self) -> &'static str {
        "scripted-cheap"
    }
    fn price(&self) -> Option<Price> {
        self.inner.price()
    }
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.stream(request)
    }
}

/// A judge endpoint: its answer is the request's model name (`sure-yes` → P(yes) ≈ 0.99, but a
/// clear no to the probe's no control, `sure-no` → ≈ 0.01, anything else → 500); it keeps what
/// it was asked.
async fn judge_standin(asked: Arc<Mutex<Vec<Value>>>) -> String {
    async fn answer(
        Extract(asked): Extract<Arc<Mutex<Vec<Value>>>>,
        Json(request): Json<Value>,
    ) -> (axum::http::StatusCode, Json<Value>) {
        asked.lock().unwrap().push(request.clone());
        let question = request["messages"][1]["content"].as_str().unwrap_or_default();
        // The probe's control whose answer is no.
        let plain_no = question.starts_with("Is 3 greater than 100?");
        let (yes, no) = match request["model"].as_str() {
            Some("sure-yes") if plain_no => (-4.8, -0.01),
            Some("sure-yes") => (-0.01, -4.8),
            Some("sure-no") => (-4.8, -0.01),
            _ => {
                return (
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    Json(json!({"error": "down"})),
                );
            }
        };
        let top = json!([{"token": "Y", "logprob": yes, "bytes": [89]}, {"token": "N", "logprob": no, "bytes": [78]}]);
        (
            axum::http::StatusCode::OK,
            Json(
                json!({"id": "c", "object": "chat.completion", "model": request["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Y"},
                             "logprobs": {"content": [{"token": "Y", "logprob": yes, "bytes": [89], "top_logprobs": top}]},
                             "finish_reason": "length"}]}),
            ),
        )
    }
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .with_state(asked);
    format!("{}/v1", support::serve(app).await)
}

/// A function state whose cheap model is the scripted agent model renamed.
async fn routed_state(
    connect: &PgConnectOptions,
    judge_url: &str,
    decision_model: &str,
) -> (Arc<State>, Arc<AtomicUsize>) {
    let vars = [
        ("JUDGE_BASE_URL", judge_url),
        ("DECISION_MODEL", decision_model),
        ("JUDGE_TIMEOUT_MS", "2000"),
    ];
    let mut state = state(connect, Isolation::Rls, &vars).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let inner = state.model.clone().unwrap();
    Arc::get_mut(&mut state).expect("not shared yet").cheap_model = Some(Arc::new(Cheap {
        inner,
        calls: Arc::clone(&calls),
    }));
    (state, calls)
}

async fn models_of(state: &State, conversation: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT model FROM trace_runs WHERE conversation_id = $1::uuid ORDER BY started_at")
        .bind(conversation)
        .fetch_all(state.owner_pool.get())
        .await
        .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_conversation_is_routed_once_and_keeps_its_model(_: PgPoolOptions, connect: PgConnectOptions) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let url = judge_standin(Arc::clone(&asked)).await;
    let (state, cheap_calls) = routed_state(&connect, &url, "sure-yes").await;
    let app = TestApp::new(&state);

    // A simple first message: the cheap model. The judge was probed, then asked once.
    let (cookie, first) = app.visitor("how much did I spend").await;
    let conversation = turn_end(&first)["conversation_id"].as_str().unwrap().to_owned();
    assert_eq!(models_of(&state, &conversation).await, ["scripted-cheap"]);
    assert_eq!(
        asked.lock().unwrap().len(),
        3,
        "the probe's two controls and the first message"
    );
    let before = cheap_calls.load(Ordering::SeqCst);
    assert!(before > 0);

    // Later in the conversation: the same model, the judge not asked; a write suspended and
    // confirmed goes on with it too.
    let answer = app
        .post(
            "/api/chat",
            json!({"message": "set a ₹20,000 monthly budget for groceries", "conversation_id": conversation}),
            Some(&cookie),
        )
        .await;
    let request = &answer.named("confirm_request")[0];
    assert_eq!(asked.lock().unwrap().len(), 3);
    let confirmed = app
        .confirm(
            Some(&cookie),
            &request["suspended_turn_id"],
            &[(request["id"].clone(), true)],
        )
        .await;
    assert_eq!(confirmed.status, axum::http::StatusCode::OK, "{}", confirmed.body);
    assert_eq!(
        models_of(&state, &conversation).await,
        ["scripted-cheap", "scripted-cheap"]
    );
    assert!(
        cheap_calls.load(Ordering::SeqCst) >= before + 2,
        "the turn and its continuation after the confirm ran on the cheap model"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_judge_that_says_no_or_fails_gives_the_agent_model(_: PgPoolOptions, connect: PgConnectOptions) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let url = judge_standin(Arc::clone(&asked)).await;

    // The probe passes only for a judge that answers its controls rightly: "sure-no" fails it,
    // and the failing endpoint too; both route to the agent model.
    for decision_model in ["sure-no", "down"] {
        let (state, cheap_calls) = routed_state(&connect, &url, decision_model).await;
        let app = TestApp::new(&state);
        let (_cookie, first) = app.visitor("how much did I spend").await;
        let conversation = turn_end(&first)["conversation_id"].as_str().unwrap().to_owned();
        let agent = state.model.as_ref().unwrap().model().to_owned();
        assert_eq!(
            models_of(&state, &conversation).await,
            [agent],
            "{decision_model}"
        );
        assert_eq!(cheap_calls.load(Ordering::SeqCst), 0, "{decision_model}");
    }
}
