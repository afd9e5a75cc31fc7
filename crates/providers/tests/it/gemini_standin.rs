//! The Gemini adapter over HTTP against a local stand-in that speaks Gemini's wire format:
//! streamed text and calls, signatures sent back, retries that follow the provider, refusals
//! that are not retried, and a stream cut in the middle.

use std::time::Duration;

use kakeibo_core::{
    Block, ConfirmPolicy, Deps, MemoryTracer, Message, PermissionRules, ProviderError, RunStatus, StopReason,
    ToolRegistry, Turn, drive, provider::complete,
};
use kakeibo_providers::{Gemini, GeminiConfig};
use serde_json::{Value, json};
use support::standin::{Reply, Standin, sse};

use crate::support;

async fn standin(replies: Vec<Reply>) -> (Standin, Gemini) {
    let (state, address) = Standin::start(replies).await;
    let config = GeminiConfig {
        auth: kakeibo_providers::gemini::GeminiAuth::ApiKey(kakeibo_providers::http::Secret(
            "test-key".into(),
        )),
        model: "gemini-3.6-flash".into(),
        base_url: format!("http://{address}/v1beta"),
        timeout: Duration::from_secs(5),
        cache: kakeibo_providers::gemini::cache::CacheSettings::default(),
    };
    (state, Gemini::new(config).unwrap())
}

fn request(messages: Vec<Message>) -> kakeibo_core::ModelRequest {
    kakeibo_core::ModelRequest {
        system: "You are kakeibo.".into(),
        messages,
        tools: Vec::new().into(),
        max_tokens: 1000,
    }
}

#[tokio::test]
async fn text_and_calls_stream_and_signatures_go_back() {
    let first = sse(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me ", "thought": true}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "", "thoughtSignature": "sig-empty-part"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_spend_report", "args": {"period": "2025-03"}}},
            {"functionCall": {"name": "list_accounts", "args": {}}, "thoughtSignature": "sig-second"}
        ]}, "finishReason": "STOP"}],
         "usageMetadata": {"promptTokenCount": 5000, "candidatesTokenCount": 40, "thoughtsTokenCount": 12, "cachedContentTokenCount": 4096},
         "modelVersion": "gemini-3.6-flash-001"}),
    ]);
    let second = sse(&[
        json!({"candidates": [{"content": {"parts": [{"text": "You spent "}]}}]}),
        json!({"candidates": [{"content": {"parts": [{"text": "₹23,350.00."}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 5100, "candidatesTokenCount": 8}}),
    ]);
    let (state, gemini) = standin(vec![Reply::sse(first), Reply::sse(second)]).await;

    let mut deltas = Vec::new();
    let reply = complete(&gemini, &request(vec![Message::user("groceries?")]), &mut |d| {
        deltas.push(d.to_owned());
    })
    .await
    .unwrap();
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    assert_eq!(reply.usage.input_tokens, 5000);
    assert_eq!(reply.usage.output_tokens, 52);
    assert_eq!(reply.usage.cached_tokens, 4096);
    assert_eq!(reply.model_version.as_deref(), Some("gemini-3.6-flash-001"));
    let signatures: Vec<Option<String>> = reply
        .message
        .content
        .iter()
        .filter_map(|b| {
            if let Block::ToolUse { provider_meta, .. } = b {
                Some(provider_meta.clone().map(|m| m.0))
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        signatures,
        [Some("sig-empty-part".into()), Some("sig-second".into())],
        "an empty part's signature goes to the next call"
    );

    let mut history = vec![Message::user("groceries?"), reply.message.clone()];
    history.push(support::answered(&reply, "{}"));
    let answer = complete(&gemini, &request(history), &mut |d| deltas.push(d.to_owned()))
        .await
        .unwrap();
    assert_eq!(answer.message.text(), "You spent ₹23,350.00.");
    assert_eq!(deltas, ["You spent ", "₹23,350.00."]);

    let requests = state.requests.lock().unwrap();
    assert!(requests[0].0.ends_with(":streamGenerateContent?alt=sse"));
    assert_eq!(requests[0].2.get("x-goog-api-key").unwrap(), "test-key");
    let sent = &requests[1].1["contents"][1]["parts"];
    assert_eq!(
        sent[0],
        json!({"text": "Let me ", "thought": true}),
        "the thought summary goes back as it came"
    );
    let calls: Vec<&Value> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p.get("functionCall").is_some())
        .collect();
    assert_eq!(calls[0]["thoughtSignature"], "sig-empty-part");
    assert_eq!(calls[1]["thoughtSignature"], "sig-second");
    assert!(
        calls.iter().all(|c| c["functionCall"].get("id").is_none()),
        "minted ids are never sent"
    );
    // The prefix of the second request is the first request, byte for byte.
    let prefix = |r: &Value| {
        json!({"system": r["systemInstruction"], "tools": r["tools"], "first": r["contents"][0]}).to_string()
    };
    assert_eq!(prefix(&requests[0].1), prefix(&requests[1].1));
}

#[tokio::test]
async fn retries_follow_the_provider_and_refusals_are_not_retried() {
    let ok =
        sse(&[json!({"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]})]);
    let (state, gemini) = standin(vec![
        Reply::json(
            429,
            &json!({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}),
        )
        .header("retry-after", "0"),
        Reply::json(503, &json!({"error": {"code": 503, "message": "overloaded"}})),
        Reply::sse(ok),
    ])
    .await;
    let reply = complete(&gemini, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(reply.message.text(), "ok");
    assert_eq!(state.requests.lock().unwrap().len(), 3);

    let (state, gemini) = standin(vec![
        Reply::json(500, &json!({})),
        Reply::json(500, &json!({})),
        Reply::json(500, &json!({})),
        Reply::sse("never reached".into()),
    ])
    .await;
    let err = complete(&gemini, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Transient(_)), "{err:?}");
    assert_eq!(state.requests.lock().unwrap().len(), 3, "at most two retries");

    let refusal = json!([{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}]);
    let (state, gemini) = standin(vec![Reply::json(400, &refusal)]).await;
    let err = complete(&gemini, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ProviderError::Rejected {
            status: 400,
            message: "API key not valid. Please pass a valid API key.".into()
        }
    );
    assert_eq!(
        state.requests.lock().unwrap().len(),
        1,
        "a refusal is not retried"
    );
}

#[tokio::test]
async fn a_cut_stream_and_a_blocked_prompt_are_not_answers() {
    let cut = sse(&[json!({"candidates": [{"content": {"parts": [{"text": "You spent ₹2"}]}}]})]);
    let blocked = sse(&[json!({"promptFeedback": {"blockReason": "SAFETY"}})]);
    let (_, gemini) = standin(vec![Reply::sse(cut), Reply::sse(blocked)]).await;
    let err = complete(&gemini, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Protocol(ref m) if m.contains("ended before")),
        "{err:?}"
    );
    let reply = complete(&gemini, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(reply.stop_reason, StopReason::Blocked);

    // Through the loop, a blocked reply ends the turn as blocked.
    let blocked = sse(&[json!({"candidates": [{"finishReason": "SAFETY", "content": {"parts": []}}]})]);
    let (_, gemini) = standin(vec![Reply::sse(blocked)]).await;
    let tools = ToolRegistry::new(vec![]).unwrap();
    let tracer = MemoryTracer::default();
    let deps = Deps {
        provider: &gemini,
        budget: None,
        tools: &tools,
        system: "s",
        policy: &ConfirmPolicy::AutoDeny,
        rules: &PermissionRules::default(),
        tracer: &tracer,
        on_event: &|_| {},
        hooks: None,
        stop_judge: None,
        figures: kakeibo_core::FiguresPolicy::Flag,
        max_iterations: kakeibo_core::turn::MAX_ITERATIONS,
    };
    let turn = drive(
        Turn::start(kakeibo_core::RunId::random(), vec![], Message::user("hi")),
        &deps,
    )
    .await;
    assert_eq!(turn.finished().map(|f| f.0), Some(RunStatus::Blocked));
}

#[tokio::test]
async fn every_finish_reason_maps() {
    let cases = [
        ("STOP", StopReason::End),
        ("MAX_TOKENS", StopReason::MaxTokens),
        ("SAFETY", StopReason::Blocked),
        ("RECITATION", StopReason::Blocked),
        ("BLOCKLIST", StopReason::Blocked),
        ("PROHIBITED_CONTENT", StopReason::Blocked),
        ("SPII", StopReason::Blocked),
        ("IMAGE_SAFETY", StopReason::Blocked),
        ("LANGUAGE", StopReason::Blocked),
        ("MALFORMED_FUNCTION_CALL", StopReason::Error),
        ("OTHER", StopReason::Error),
    ];
    let replies = cases
        .iter()
        .map(|(reason, _)| {
            Reply::sse(sse(&[
                json!({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": reason}]}),
            ]))
        })
        .chain([Reply::sse(sse(&[json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "list_accounts", "args": {}}}]}, "finishReason": "STOP"}]})]))])
        .collect();
    let (_, gemini) = standin(replies).await;
    for (reason, expected) in cases {
        let reply = complete(&gemini, &request(vec![Message::user("hi")]), &mut |_| {})
            .await
            .unwrap();
        assert_eq!(reply.stop_reason, expected, "{reason}");
    }
    let reply = complete(&gemini, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(reply.stop_reason, StopReason::ToolUse, "any call means tool_use");
    assert_eq!(
        reply.message.tool_uses()[0].id,
        "call_0_list_accounts",
        "a minted id"
    );
}
