//! The OpenAI-compatible adapter over HTTP against a local stand-in that speaks Chat Completions
//! SSE: text, parallel calls assembled by index (starting at 1, split across chunks), reasoning
//! sent back in the field it came in, a usage-only final chunk with cached tokens, every finish
//! reason, refusals, error bodies and events, a cut stream, and a stable prefix.

use std::time::Duration;

use kakeibo_core::{
    Block, Declaration, Message, ModelRequest, ProviderError, StopReason, provider::complete,
};
use kakeibo_providers::{OpenAi, OpenAiConfig, http::Secret};
use serde_json::{Value, json};
use support::{
    standin::{Reply, Standin},
    tool_calls,
};

use crate::support;

async fn standin(replies: Vec<Reply>, api_key: Option<&str>) -> (Standin, OpenAi) {
    let (state, address) = Standin::start(replies).await;
    let config = OpenAiConfig {
        api_key: api_key.map(|k| Secret(k.into())),
        model: "qwen3-coder".into(),
        base_url: format!("http://{address}/v1"),
        timeout: Duration::from_secs(5),
        max_output_tokens: None,
    };
    (state, OpenAi::new(config).unwrap())
}

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        system: "You are kakeibo.".into(),
        messages,
        tools: vec![Declaration {
            name: "get_spend_report",
            description: "Spending by category.",
            parameters: json!({"type": "object", "properties": {"period": {"type": "string"}}}).into(),
        }]
        .into(),
        max_tokens: 1000,
    }
}

fn chunk(delta: &Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "qwen3-coder-30b",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// SSE chunks ending with `[DONE]`, as the servers send them.
fn stream(chunks: &[Value]) -> Reply {
    Reply::sse(format!("{}data: [DONE]\n\n", support::standin::sse(chunks)))
}

fn answer(text: &str, finish: &str) -> Reply {
    stream(&[
        chunk(&json!({"role": "assistant", "content": text}), None),
        chunk(&json!({}), Some(finish)),
    ])
}

#[tokio::test]
async fn reasoning_text_and_parallel_calls_stream_and_go_back() {
    let first = stream(&[
        chunk(
            &json!({"role": "assistant", "reasoning_content": "Compare "}),
            None,
        ),
        chunk(&json!({"reasoning_content": "two months."}), None),
        chunk(&json!({"content": "Checking "}), None),
        chunk(&json!({"content": "both."}), None),
        chunk(
            &json!({"tool_calls": [{"index": 1, "id": "call_a", "type": "function", "function": {"name": "get_spend_report", "arguments": ""}}]}),
            None,
        ),
        chunk(
            &json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"period\": "}}]}),
            None,
        ),
        chunk(
            &json!({"tool_calls": [{"index": 2, "id": "call_b", "type": "function", "function": {"name": "get_spend_report", "arguments": "{\"period\": \"2025-04\"}"}}]}),
            None,
        ),
        chunk(
            &json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"2025-03\"}"}}]}),
            None,
        ),
        chunk(&json!({}), Some("tool_calls")),
        json!({"id": "chatcmpl-1", "model": "qwen3-coder-30b", "choices": [],
               "usage": {"prompt_tokens": 5200, "completion_tokens": 61,
                         "prompt_tokens_details": {"cached_tokens": 4864},
                         "completion_tokens_details": {"reasoning_tokens": 20}}}),
    ]);
    let (state, openai) = standin(vec![first, answer("March was higher.", "stop")], Some("sk-local")).await;

    let mut deltas = Vec::new();
    let asked = request(vec![Message::user("March or April?")]);
    let reply = complete(&openai, &asked, &mut |d| deltas.push(d.to_owned()))
        .await
        .unwrap();
    assert_eq!(deltas, ["Checking ", "both."]);
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    assert_eq!(reply.model_version.as_deref(), Some("qwen3-coder-30b"));
    assert_eq!(reply.usage.input_tokens, 5200);
    assert_eq!(reply.usage.cached_tokens, 4864);
    assert_eq!(reply.usage.output_tokens, 61);
    assert_eq!(reply.usage.thought_tokens, 20);
    let calls = tool_calls(&reply);
    assert_eq!(
        calls,
        [
            (
                "call_a".into(),
                "get_spend_report".into(),
                json!({"period": "2025-03"})
            ),
            (
                "call_b".into(),
                "get_spend_report".into(),
                json!({"period": "2025-04"})
            ),
        ],
        "calls in index order, fragments joined"
    );
    assert!(matches!(
        &reply.message.content[0],
        Block::ThoughtSummary { text, .. } if text == "Compare two months."
    ));

    let stored = serde_json::to_string(&reply.message).unwrap();
    let mut history = asked.messages.clone();
    history.push(serde_json::from_str(&stored).unwrap());
    history.push(support::answered(&reply, "{\"total\": 1}"));
    let answer = complete(&openai, &request(history), &mut |_| {}).await.unwrap();
    assert_eq!(answer.message.text(), "March was higher.");
    assert_eq!(answer.stop_reason, StopReason::End);

    let received = state.received();
    let (path, body, headers) = &received[1];
    assert_eq!(path, "/v1/chat/completions");
    assert_eq!(headers.get("authorization").unwrap(), "Bearer sk-local");
    assert_eq!(body["stream_options"]["include_usage"], true);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": "You are kakeibo."})
    );
    assert_eq!(
        messages[2]["reasoning_content"], "Compare two months.",
        "reasoning goes back where it came from"
    );
    assert_eq!(messages[2]["content"], "Checking both.");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_a");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        "{\"period\":\"2025-03\"}"
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_a", "content": "{\"total\": 1}"})
    );
    assert_eq!(messages[4]["tool_call_id"], "call_b");

    // Prefix stability: system, tools and the first user message are the same bytes.
    let prefix = |body: &Value| {
        json!({"tools": body["tools"], "head": body["messages"].as_array().unwrap()[..2]}).to_string()
    };
    assert_eq!(prefix(&received[0].1), prefix(body));
}

#[tokio::test]
async fn finish_reasons_refusals_and_no_key_for_local_servers() {
    let refusal = stream(&[
        chunk(&json!({"role": "assistant", "refusal": "I can't help "}), None),
        chunk(&json!({"refusal": "with that."}), None),
        chunk(&json!({}), Some("stop")),
    ]);
    let (state, openai) = standin(
        vec![
            answer("a", "stop"),
            answer("b", "length"),
            answer("", "content_filter"),
            refusal,
        ],
        None,
    )
    .await;
    let mut outcomes = Vec::new();
    for _ in 0..4 {
        let reply = complete(&openai, &request(vec![Message::user("hi")]), &mut |_| {})
            .await
            .unwrap();
        outcomes.push((reply.stop_reason, reply.message.text()));
    }
    assert_eq!(
        outcomes,
        [
            (StopReason::End, "a".to_owned()),
            (StopReason::MaxTokens, "b".to_owned()),
            (StopReason::Blocked, String::new()),
            (StopReason::Blocked, "I can't help with that.".to_owned()),
        ]
    );
    assert!(
        state.received()[0].2.get("authorization").is_none(),
        "no key, no authorization header"
    );
}

#[tokio::test]
async fn a_cap_of_the_settings_bounds_the_tokens_asked_for() {
    let vars = |cap: &'static str| {
        move |name: &str| match name {
            "OPENAI_BASE_URL" => Some("http://127.0.0.1:9/v1".to_owned()),
            "OPENAI_MAX_TOKENS" => Some(cap.to_owned()),
            _ => None,
        }
    };
    assert_eq!(
        OpenAiConfig::from_vars("m", &vars("512"))
            .unwrap()
            .max_output_tokens,
        Some(512)
    );
    for unusable in ["0", "-5", "many"] {
        assert_eq!(
            OpenAiConfig::from_vars("m", &vars(unusable))
                .unwrap()
                .max_output_tokens,
            None,
            "{unusable}"
        );
    }

    let (state, address) = Standin::start(vec![answer("a", "length"), answer("b", "stop")]).await;
    let capped = OpenAi::new(OpenAiConfig {
        api_key: None,
        model: "qwen3-coder".into(),
        base_url: format!("http://{address}/v1"),
        timeout: Duration::from_secs(5),
        max_output_tokens: Some(512),
    })
    .unwrap();
    let mut small = request(vec![Message::user("hi")]);
    let reply = complete(&capped, &small, &mut |_| {}).await.unwrap();
    assert_eq!(reply.stop_reason, StopReason::MaxTokens);
    small.max_tokens = 100;
    complete(&capped, &small, &mut |_| {}).await.unwrap();
    let asked: Vec<Value> = state
        .received()
        .into_iter()
        .map(|(_, body, _)| body["max_tokens"].clone())
        .collect();
    assert_eq!(
        asked,
        [json!(512), json!(100)],
        "the cap, and below it the request's own"
    );
}

#[tokio::test]
async fn errors_retries_and_a_cut_stream() {
    let (state, openai) = standin(
        vec![
            Reply::json(503, &json!({"error": {"message": "model is loading", "type": "server_error"}})),
            Reply::json(429, &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}))
                .header("retry-after", "0"),
            answer("ok", "stop"),
        ],
        None,
    )
    .await;
    let reply = complete(&openai, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(reply.message.text(), "ok");
    assert_eq!(state.received().len(), 3);

    let unknown = json!({"error": {"message": "The model `qwen9` does not exist", "type": "invalid_request_error", "code": "model_not_found"}});
    let (state, openai) = standin(vec![Reply::json(404, &unknown)], None).await;
    let err = complete(&openai, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ProviderError::Rejected {
            status: 404,
            message: "The model `qwen9` does not exist".into()
        }
    );
    assert_eq!(state.received().len(), 1);

    let mid_stream = Reply::sse(support::standin::sse(&[
        chunk(&json!({"content": "You spent"}), None),
        json!({"error": {"message": "upstream connect error", "code": 502}}),
    ]));
    let cut = Reply::sse(support::standin::sse(&[chunk(
        &json!({"content": "You spent ₹2"}),
        None,
    )]));
    let (_, openai) = standin(vec![mid_stream, cut], None).await;
    let err = complete(&openai, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Transient(ref m) if m.contains("upstream connect error")),
        "{err:?}"
    );
    let err = complete(&openai, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Protocol(ref m) if m.contains("ended before")),
        "{err:?}"
    );
}

#[tokio::test]
async fn record_through_the_settings_writes_one_fixture_per_reply() {
    let (state, address) = Standin::start(vec![answer("recorded", "stop")]).await;
    let fixtures = tempfile::tempdir().unwrap();
    let base_url = format!("http://{address}/v1");
    let dir = fixtures.path().display().to_string();
    let vars = [
        ("RECORD", "1"),
        ("OPENAI_BASE_URL", base_url.as_str()),
        ("AGENT_MODEL", "qwen3"),
        ("KAKEIBO_FIXTURES", dir.as_str()),
    ];
    let lookup = |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    };
    let provider = kakeibo_providers::select::Settings::new(&lookup)
        .provider(kakeibo_providers::select::ModelRole::Agent)
        .unwrap();
    let asked = request(vec![Message::user("hi")]);
    let reply = complete(provider.as_ref(), &asked, &mut |_| {}).await.unwrap();
    assert_eq!(reply.message.text(), "recorded");
    assert_eq!(state.received().len(), 1);
    let key = kakeibo_providers::replay::key("qwen3", &asked);
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.path().join(format!("{key}.json"))).unwrap())
            .unwrap();
    assert_eq!(fixture["provider"], "openai");
    assert_eq!(
        fixture["response"]["message"],
        serde_json::to_value(&reply.message).unwrap()
    );

    // And served back with no server at all.
    let fixtures_only = kakeibo_providers::replay::Replay::new("qwen3", fixtures.path());
    let again = complete(&fixtures_only, &asked, &mut |_| {}).await.unwrap();
    assert_eq!(again, reply);
    assert_eq!(state.received().len(), 1);
}
