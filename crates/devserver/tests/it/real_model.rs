//! The chat function on a real model server: llama.cpp's `llama-server` with
//! SmolLM2-135M-Instruct, which `cargo xtask test` builds and starts (`KAKEIBO_TEST_LLAMA_URL`).
//! A visitor's turn goes through the whole function — the quota, the router with the same server
//! named as its judge (which the probe refuses), the loop, the stream — and ends honestly: the
//! streamed answer is the stored one (or the length cap cut it off, and the turn says so), a figure no tool returned is marked on the stream, the run
//! keeps the real server's token counts and the agent model, nothing waits for a confirm, and
//! the cheap model the judge would have picked is never asked.

use crate::support;

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use axum::http::StatusCode;
use futures_util::stream::BoxStream;
use kakeibo_core::{ModelRequest, Provider, ProviderError, StreamEvent, pricing::Price};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state, turn_end};

/// The model's name as the server is started with it (`--alias`).
const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";

/// A cheap model that counts its calls: it must get none, the judge being refused.
struct Cheap(Arc<AtomicUsize>);

impl Provider for Cheap {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn model(&self) -> &'static str {
        "never-asked"
    }
    fn price(&self) -> Option<Price> {
        None
    }
    fn stream<'a>(&'a self, _: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(futures_util::stream::empty())
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_visitors_turn_on_a_real_small_model_ends_honestly(_: PgPoolOptions, connect: PgConnectOptions) {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    let settings = [
        ("KAKEIBO_PROVIDER", "openai"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("AGENT_MODEL", MODEL),
        ("OPENAI_MAX_TOKENS", "512"),
        // What `cargo xtask dev --local-model` sets: unpriced, the daily budget refuses the model.
        ("MODEL_PRICE", "0,0"),
        ("MODEL_TIMEOUT_SECS", "600"),
        ("JUDGE_BASE_URL", base.as_str()),
        ("DECISION_MODEL", MODEL),
        ("JUDGE_TIMEOUT_MS", "60000"),
    ];
    let mut state = state(&connect, Isolation::Rls, &settings).await;
    let cheap_calls = Arc::new(AtomicUsize::new(0));
    Arc::get_mut(&mut state).expect("not shared yet").cheap_model =
        Some(Arc::new(Cheap(Arc::clone(&cheap_calls))));
    let app = TestApp::new(&state);

    let (cookie, chat) = app
        .visitor("How much did I spend on groceries in March 2025? Give the amount in rupees.")
        .await;
    assert_eq!(chat.status, StatusCode::OK, "{}", chat.body);
    let end = turn_end(&chat);
    // Either an answer, or one the length cap cut off and that says so: nothing else is honest.
    let stored_status = match end["stop"].as_str() {
        None => {
            assert_eq!(end["status"], "ok", "{}", chat.body);
            "ok"
        }
        Some("max_tokens") => {
            // The stream says it by its stop; the stored answer says it in words (below).
            assert_eq!(end["status"], "error", "{}", chat.body);
            "error"
        }
        Some(other) => panic!("the turn stopped for another reason ({other}): {}", chat.body),
    };
    assert_eq!(
        cheap_calls.load(Ordering::SeqCst),
        0,
        "the refused judge routed nothing"
    );
    let streamed: String = chat
        .named("token")
        .iter()
        .filter_map(|t| t["delta"].as_str())
        .collect();
    assert!(!streamed.trim().is_empty(), "{}", chat.body);

    // No tool ran, so every figure the model wrote is marked as found in no result.
    let tool_results = chat.named("tool_result");
    if tool_results.is_empty()
        && let Some(figures) = chat.named("figures").first()
    {
        let stated = figures["figures"].as_array().unwrap().len();
        assert_eq!(
            figures["ungrounded"].as_u64().unwrap(),
            stated as u64,
            "a figure no tool returned passed as grounded: {figures}"
        );
    }

    // The stored run: the agent model, the real server's counts, finished; the stored answer is
    // the one streamed; nothing waits for a confirm.
    let run = end["run_id"].as_str().unwrap().to_owned();
    let detail = app.get(&format!("/api/runs/{run}"), Some(&cookie)).await.json();
    let summary = &detail;
    assert_eq!(summary["model"], MODEL, "{detail}");
    assert_eq!(summary["status"], stored_status, "{detail}");
    assert!(summary["input_tokens"].as_i64().unwrap() > 2_000, "{summary}");
    assert!(summary["output_tokens"].as_i64().unwrap() > 0, "{summary}");
    let conversation = end["conversation_id"].as_str().unwrap();
    let last: serde_json::Value = sqlx::query_scalar(
        "SELECT message FROM conversation_messages WHERE conversation_id = $1::uuid ORDER BY seq DESC LIMIT 1",
    )
    .bind(conversation)
    .fetch_one(state.owner_pool.get())
    .await
    .unwrap();
    let mut texts = Vec::new();
    strings(&last, &mut texts);
    if stored_status == "ok" {
        assert!(
            texts.iter().any(|t| t.trim() == streamed.trim()),
            "the stored answer is not the streamed one: {last}"
        );
    } else {
        // A cut-off answer is not kept as the conversation's; its run's trace says why it ended.
        assert_eq!(last["role"], "user", "{last}");
        let cut = detail["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "error" && e["payload"]["kind"] == "max_tokens");
        assert!(cut, "the trace does not say the answer was cut off: {detail}");
    }
    let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM suspended_turns")
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(waiting, 0);
}

/// Every string in `value`, depth first.
fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}
