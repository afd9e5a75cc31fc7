//! The Anthropic adapter over HTTP against a local stand-in that speaks the Messages API's SSE
//! events: text, parallel calls with streamed arguments, thinking signatures sent back byte for
//! byte, usage with cache tokens, every stop reason, error bodies and events, a cut stream, a
//! request that times out, and a prefix that stays stable across a conversation.

use std::time::Duration;

use kakeibo_core::{
    Block, Declaration, Message, ModelRequest, ProviderError, StopReason, provider::complete,
};
use kakeibo_providers::{Anthropic, AnthropicConfig, http::Secret};
use serde_json::{Value, json};
use support::{
    standin::{Reply, Standin, named_sse},
    tool_calls,
};

use crate::support;

async fn standin(replies: Vec<Reply>, timeout: Duration) -> (Standin, Anthropic) {
    let (state, address) = Standin::start(replies).await;
    let config = AnthropicConfig {
        api_key: Secret("test-key".into()),
        model: "claude-sonnet-5".into(),
        base_url: format!("http://{address}"),
        timeout,
    };
    (state, Anthropic::new(config).unwrap())
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

fn stream_of(events: &[Value]) -> Reply {
    Reply::sse(named_sse(events))
}

/// A whole streamed message: `blocks` are (start, deltas) per index, then the stop.
fn message(blocks: &[(Value, Vec<Value>)], stop: &str) -> Reply {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-20261001",
        "content": [], "stop_reason": null,
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 300, "output_tokens": 1}}})];
    events.push(json!({"type": "ping"}));
    for (index, (start, deltas)) in blocks.iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 57}}));
    events.push(json!({"type": "message_stop"}));
    stream_of(&events)
}

fn text(pieces: &[&str]) -> (Value, Vec<Value>) {
    (
        json!({"type": "text", "text": ""}),
        pieces
            .iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect(),
    )
}

fn call(id: &str, fragments: &[&str]) -> (Value, Vec<Value>) {
    (
        json!({"type": "tool_use", "id": id, "name": "get_spend_report", "input": {}}),
        fragments
            .iter()
            .map(|f| json!({"type": "input_json_delta", "partial_json": f}))
            .collect(),
    )
}

#[tokio::test]
async fn thinking_text_and_parallel_calls_stream_and_go_back_byte_for_byte() {
    let signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/=";
    let first = message(
        &[
            (
                json!({"type": "thinking", "thinking": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": "Two months "}),
                    json!({"type": "thinking_delta", "thinking": "to compare."}),
                    json!({"type": "signature_delta", "signature": signature}),
                ],
            ),
            text(&["Let me ", "look."]),
            call("toolu_01A", &["{\"peri", "od\": \"2025-", "03\"}"]),
            call("toolu_01B", &["", "{\"period\": \"2025-04\"}"]),
        ],
        "tool_use",
    );
    let second = message(&[text(&["March ", "was higher."])], "end_turn");
    let (state, anthropic) = standin(vec![first, second], Duration::from_secs(5)).await;

    let mut deltas = Vec::new();
    let asked = request(vec![Message::user("March or April?")]);
    let reply = complete(&anthropic, &asked, &mut |d| deltas.push(d.to_owned()))
        .await
        .unwrap();
    assert_eq!(deltas, ["Let me ", "look."]);
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    assert_eq!(reply.model_version.as_deref(), Some("claude-sonnet-5-20261001"));
    assert_eq!(reply.usage.input_tokens, 12 + 4000 + 300);
    assert_eq!(reply.usage.cached_tokens, 4000);
    assert_eq!(reply.usage.output_tokens, 57);
    let calls = tool_calls(&reply);
    assert_eq!(
        calls,
        [
            (
                "toolu_01A".into(),
                "get_spend_report".into(),
                json!({"period": "2025-03"})
            ),
            (
                "toolu_01B".into(),
                "get_spend_report".into(),
                json!({"period": "2025-04"})
            ),
        ]
    );
    assert!(matches!(
        &reply.message.content[0],
        Block::ThoughtSummary { text, provider_meta: Some(m) } if text == "Two months to compare." && m.0 == signature
    ));

    // The suspended turn is stored as JSON and read back before the next request.
    let stored = serde_json::to_string(&reply.message).unwrap();
    let restored: Message = serde_json::from_str(&stored).unwrap();
    let mut history = asked.messages.clone();
    history.push(restored);
    history.push(support::answered(&reply, "{\"total\": 1}"));
    let answer = complete(&anthropic, &request(history), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(answer.message.text(), "March was higher.");
    assert_eq!(answer.stop_reason, StopReason::End);

    let received = state.received();
    assert_eq!(received.len(), 2);
    let (path, body, headers) = &received[1];
    assert_eq!(path, "/v1/messages");
    assert_eq!(headers.get("x-api-key").unwrap(), "test-key");
    assert_eq!(headers.get("anthropic-version").unwrap(), "2023-06-01");
    assert_eq!(body["stream"], true);
    let assistant = &body["messages"][1]["content"];
    assert_eq!(
        assistant[0],
        json!({"type": "thinking", "thinking": "Two months to compare.", "signature": signature}),
        "the thinking block goes back with its signature, byte for byte"
    );
    assert_eq!(assistant[2]["id"], "toolu_01A");
    assert_eq!(assistant[3]["id"], "toolu_01B");
    let results = body["messages"][2]["content"].as_array().unwrap();
    assert_eq!(results[0]["tool_use_id"], "toolu_01A");
    assert_eq!(results[1]["tool_use_id"], "toolu_01B");
    assert_eq!(
        results[1]["cache_control"]["type"], "ephemeral",
        "the second breakpoint is the last block"
    );

    // Prefix stability: system, tools and the earlier history are the same bytes in both
    // requests. The moving breakpoint marker is not part of the cached content.
    let prefix = |body: &Value| {
        let mut first = body["messages"][0].clone();
        for block in first["content"].as_array_mut().unwrap() {
            block.as_object_mut().unwrap().remove("cache_control");
        }
        json!({"system": body["system"], "tools": body["tools"], "first": first}).to_string()
    };
    assert_eq!(prefix(&received[0].1), prefix(body));
}

#[tokio::test]
async fn every_stop_reason_maps() {
    let cases = [
        ("end_turn", StopReason::End),
        ("stop_sequence", StopReason::End),
        ("pause_turn", StopReason::End),
        ("max_tokens", StopReason::MaxTokens),
        ("refusal", StopReason::Blocked),
        ("tool_use", StopReason::ToolUse),
    ];
    let replies = cases
        .iter()
        .map(|(reason, _)| {
            if *reason == "tool_use" {
                message(&[call("toolu_9", &["{}"])], reason)
            } else {
                message(&[text(&["x"])], reason)
            }
        })
        .collect();
    let (_, anthropic) = standin(replies, Duration::from_secs(5)).await;
    for (reason, expected) in cases {
        let reply = complete(&anthropic, &request(vec![Message::user("hi")]), &mut |_| {})
            .await
            .unwrap();
        assert_eq!(reply.stop_reason, expected, "{reason}");
    }
}

#[tokio::test]
async fn errors_retries_a_cut_stream_and_a_timeout() {
    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let (state, anthropic) = standin(
        vec![
            Reply::json(529, &overloaded),
            Reply::json(
                429,
                &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
            )
            .header("retry-after", "0"),
            message(&[text(&["ok"])], "end_turn"),
        ],
        Duration::from_secs(5),
    )
    .await;
    let reply = complete(&anthropic, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(reply.message.text(), "ok");
    assert_eq!(state.received().len(), 3, "529 and 429 are retried");

    let invalid = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: must be at most 64000"}});
    let (state, anthropic) = standin(vec![Reply::json(400, &invalid)], Duration::from_secs(5)).await;
    let err = complete(&anthropic, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ProviderError::Rejected {
            status: 400,
            message: "max_tokens: must be at most 64000".into()
        }
    );
    assert_eq!(state.received().len(), 1, "a refusal is not retried");

    // An error event in the middle of a 200 stream, and a stream that stops mid-reply.
    let mid_stream = stream_of(&[
        json!({"type": "message_start", "message": {"model": "m", "content": [], "usage": {"input_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "You spent"}}),
        overloaded.clone(),
    ]);
    let cut = stream_of(&[
        json!({"type": "message_start", "message": {"model": "m", "content": [], "usage": {"input_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "You spent ₹2"}}),
    ]);
    let (_, anthropic) = standin(vec![mid_stream, cut], Duration::from_secs(5)).await;
    let err = complete(&anthropic, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Transient(ref m) if m.contains("Overloaded")),
        "{err:?}"
    );
    let err = complete(&anthropic, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Protocol(ref m) if m.contains("ended before")),
        "{err:?}"
    );

    // A provider that does not answer within the request timeout: tried three times, then a
    // transient error that says it timed out.
    let slow = || message(&[text(&["late"])], "end_turn").after(Duration::from_secs(3));
    let (state, anthropic) = standin(vec![slow(), slow(), slow()], Duration::from_millis(200)).await;
    let err = complete(&anthropic, &request(vec![Message::user("hi")]), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Transient(ref m) if m.contains("timed out")),
        "{err:?}"
    );
    assert_eq!(state.received().len(), 3);
}
