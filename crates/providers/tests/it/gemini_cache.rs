//! Gemini's explicit cache against a local stand-in, on a clock the test moves: made once and
//! referenced (system and tools no longer sent), found again by a process that starts cold,
//! extended before its TTL runs out, made again once expired or vanished, and — for a prefix
//! below the provider's minimum — given up on and remembered, with implicit caching left to work.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)] // Tests may panic on what they did not expect.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use chrono::{DateTime, TimeDelta, Utc};
use kakeibo_core::{Declaration, Message, ModelRequest, provider::complete};
use kakeibo_providers::{
    Gemini, GeminiConfig,
    gemini::cache::{CacheSettings, Clock},
    http::Secret,
};
use serde_json::{Value, json};
use support::standin::{Reply, Standin};

use crate::support;

const T0: &str = "2026-11-29T12:00:00Z";

fn at(minutes: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(T0).unwrap().with_timezone(&Utc) + TimeDelta::minutes(minutes)
}

fn stamp(minutes: i64) -> String {
    at(minutes).to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

/// A clock the test sets, in minutes after `T0`.
fn clock() -> (Clock, Arc<Mutex<i64>>) {
    let minutes = Arc::new(Mutex::new(0));
    let read = minutes.clone();
    (Arc::new(move || at(*read.lock().unwrap())), minutes)
}

async fn gemini(replies: Vec<Reply>, settings: CacheSettings, clock: Clock) -> (Standin, Gemini) {
    let (state, address) = Standin::start(replies).await;
    let config = GeminiConfig {
        auth: kakeibo_providers::gemini::GeminiAuth::ApiKey(Secret("test-key".into())),
        model: "gemini-3.6-flash".into(),
        base_url: format!("http://{address}/v1beta"),
        timeout: Duration::from_secs(5),
        cache: settings,
    };
    (state, Gemini::new(config).unwrap().with_clock(clock))
}

/// A system prompt well above the 4096-token minimum, as kakeibo's is.
fn request(system_seed: &str) -> ModelRequest {
    ModelRequest {
        system: format!("{system_seed} {}", "Answer from the ledger only. ".repeat(800)),
        messages: vec![Message::user("How much on groceries?")],
        tools: vec![Declaration {
            name: "get_spend_report",
            description: "Spending by category.",
            parameters: json!({"type": "object"}).into(),
        }]
        .into(),
        max_tokens: 100,
    }
}

fn answer() -> Reply {
    Reply::events(&[
        json!({"candidates": [{"content": {"parts": [{"text": "₹4,200."}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 6300, "cachedContentTokenCount": 6100, "candidatesTokenCount": 5}}),
    ])
}

fn resource(name: &str, key: &str, expires: i64) -> Value {
    json!({"name": name, "model": "models/gemini-3.6-flash", "displayName": key,
           "createTime": stamp(expires - 30), "expireTime": stamp(expires),
           "usageMetadata": {"totalTokenCount": 6100}})
}

const GENERATE: &str = "POST /v1beta/models/gemini-3.6-flash:streamGenerateContent?alt=sse";

#[tokio::test]
async fn a_cache_is_made_reused_found_extended_and_made_again() {
    let asked = request("You are kakeibo.");
    // The key is the cache's display name; learn it from the first create request.
    let (clock_fn, minutes) = clock();
    let (state, provider) = gemini(
        vec![
            Reply::json(200, &json!({})),                        // list: nothing yet
            Reply::json(200, &resource("cachedContents/c1", "k", 30)), // create
            answer(),
            answer(),                                            // reuse at +10
            Reply::json(200, &resource("cachedContents/c1", "k", 59)), // extend at +29
            answer(),
            Reply::json(200, &resource("cachedContents/c2", "k", 91)), // expired at +61: make again
            answer(),
            Reply::json(403, &json!({"error": {"code": 403, "message": "CachedContent not found (or permission denied)", "status": "PERMISSION_DENIED"}})),
            Reply::json(200, &json!({"cachedContents": []})),   // vanished at +62: look, then make
            Reply::json(200, &resource("cachedContents/c3", "k", 92)),
            answer(),
        ],
        CacheSettings::default(),
        clock_fn,
    )
    .await;
    let mut replies = Vec::new();
    for minute in [0, 10, 29, 61, 62] {
        *minutes.lock().unwrap() = minute;
        replies.push(complete(&provider, &asked, &mut |_| {}).await.unwrap());
    }
    assert!(
        replies
            .iter()
            .all(|r| r.message.text() == "₹4,200." && r.usage.cached_tokens == 6100)
    );
    assert_eq!(
        state.calls(),
        [
            "GET /v1beta/cachedContents?pageSize=100",
            "POST /v1beta/cachedContents",
            GENERATE,
            GENERATE,
            "PATCH /v1beta/cachedContents/c1?updateMask=ttl",
            GENERATE,
            "POST /v1beta/cachedContents",
            GENERATE,
            GENERATE,
            "GET /v1beta/cachedContents?pageSize=100",
            "POST /v1beta/cachedContents",
            GENERATE,
        ]
    );
    let received = state.received();
    let created = &received[1].1;
    let key = created["displayName"].as_str().unwrap();
    assert!(key.starts_with("kakeibo-"), "{key}");
    assert_eq!(created["model"], "models/gemini-3.6-flash");
    assert_eq!(created["ttl"], "1800s");
    assert_eq!(created["systemInstruction"]["parts"][0]["text"], asked.system);
    assert_eq!(
        created["tools"][0]["functionDeclarations"][0]["name"],
        "get_spend_report"
    );
    assert!(created.get("contents").is_none(), "history is not cached");
    assert_eq!(received[4].1, json!({"ttl": "1800s"}));
    let referenced: Vec<&str> = received
        .iter()
        .zip(state.calls())
        .filter(|(_, call)| call == GENERATE)
        .map(|((_, body, _), _)| {
            assert!(
                body.get("systemInstruction").is_none()
                    && body.get("tools").is_none()
                    && body.get("toolConfig").is_none(),
                "with a cache the system and tools are not sent again: {body}"
            );
            assert_eq!(body["contents"][0]["parts"][0]["text"], "How much on groceries?");
            body["cachedContent"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        referenced,
        [
            "cachedContents/c1",
            "cachedContents/c1",
            "cachedContents/c1",
            "cachedContents/c2",
            "cachedContents/c2",
            "cachedContents/c3"
        ]
    );

    // A process that starts cold finds the live cache by its display name and makes none.
    let (clock_fn, minutes) = clock();
    *minutes.lock().unwrap() = 70;
    let (state, cold) = gemini(
        vec![
            Reply::json(200, &json!({"cachedContents": [resource("cachedContents/other", "kakeibo-other", 90)], "nextPageToken": "p2"})),
            Reply::json(200, &json!({"cachedContents": [resource("cachedContents/c3", key, 92)]})),
            answer(),
        ],
        CacheSettings::default(),
        clock_fn,
    )
    .await;
    complete(&cold, &asked, &mut |_| {}).await.unwrap();
    assert_eq!(
        state.calls(),
        [
            "GET /v1beta/cachedContents?pageSize=100",
            "GET /v1beta/cachedContents?pageSize=100&pageToken=p2",
            GENERATE
        ]
    );
    assert_eq!(state.received()[2].1["cachedContent"], "cachedContents/c3");
}

#[tokio::test]
async fn too_small_is_remembered_and_disabled_means_never() {
    let asked = request("A shorter prompt.");
    let too_small = json!({"error": {"code": 400, "status": "INVALID_ARGUMENT",
        "message": "Cached content is too small. total_token_count=3900, min_total_token_count=4096"}});
    let (clock_fn, _) = clock();
    let (state, provider) = gemini(
        vec![
            Reply::json(200, &json!({})),
            Reply::json(400, &too_small),
            answer(),
            answer(),
        ],
        CacheSettings::default(),
        clock_fn,
    )
    .await;
    for _ in 0..2 {
        complete(&provider, &asked, &mut |_| {}).await.unwrap();
    }
    assert_eq!(
        state.calls(),
        [
            "GET /v1beta/cachedContents?pageSize=100",
            "POST /v1beta/cachedContents",
            GENERATE,
            GENERATE
        ],
        "asked once, remembered"
    );
    for (_, body, _) in &state.received()[2..] {
        assert!(body.get("cachedContent").is_none());
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], asked.system);
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["name"],
            "get_spend_report"
        );
    }

    // A prompt far below the minimum is not even offered.
    let (clock_fn, _) = clock();
    let (state, provider) = gemini(vec![answer()], CacheSettings::default(), clock_fn).await;
    let mut tiny = request("");
    tiny.system = "You are kakeibo.".into();
    complete(&provider, &tiny, &mut |_| {}).await.unwrap();
    assert_eq!(state.calls(), [GENERATE]);

    // EXPLICIT_CACHE=0.
    let off = CacheSettings {
        enabled: false,
        ..CacheSettings::default()
    };
    let (clock_fn, _) = clock();
    let (state, provider) = gemini(vec![answer()], off, clock_fn).await;
    complete(&provider, &asked, &mut |_| {}).await.unwrap();
    assert_eq!(state.calls(), [GENERATE]);
    assert!(state.received()[0].1.get("systemInstruction").is_some());
}
