//! The adapters against a real model server: llama.cpp's `llama-server` with
//! SmolLM2-135M-Instruct, built from PyPI and started by `cargo xtask test`
//! (`KAKEIBO_TEST_LLAMA_URL`; `cargo xtask model up` starts one by hand). The model is weak — it
//! answers and streams but never calls a tool — so these are tests of kakeibo's wire against a
//! real server's, not of answers: a plain answer streamed to its end with usage and a finish
//! reason, `max_tokens` reached, a request over the server's context refused in words, tools
//! offered and none called, a stream the client drops, and the Anthropic adapter against the
//! server's `/v1/messages`.

use std::time::Duration;

use futures_util::StreamExt as _;
use kakeibo_core::{
    Declaration, Message, ModelRequest, Provider, ProviderError, StopReason, StreamEvent, provider::complete,
};
use kakeibo_providers::{Anthropic, AnthropicConfig, OpenAi, OpenAiConfig, http::Secret};
use serde_json::json;

/// The model's name as the server is started with it (`--alias`).
const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";

fn openai(base: &str) -> OpenAi {
    OpenAi::new(OpenAiConfig {
        api_key: None,
        model: MODEL.into(),
        base_url: base.to_owned(),
        timeout: Duration::from_mins(2),
        max_output_tokens: None,
    })
    .unwrap()
}

fn request(text: &str, max_tokens: u32) -> ModelRequest {
    ModelRequest {
        system: "You are a helpful assistant. Answer in one short sentence.".into(),
        messages: vec![Message::user(text)],
        tools: Vec::new().into(),
        max_tokens,
    }
}

#[tokio::test]
async fn a_real_server_streams_an_answer_to_its_end_with_usage() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    let model = openai(&base);
    let mut streamed = String::new();
    let response = complete(&model, &request("What colour is the sky?", 48), &mut |t| {
        streamed.push_str(t);
    })
    .await
    .unwrap();
    let text = response.message.text();
    assert!(!text.trim().is_empty(), "{response:?}");
    assert_eq!(streamed, text, "the deltas are the answer");
    assert!(
        matches!(response.stop_reason, StopReason::End | StopReason::MaxTokens),
        "{response:?}"
    );
    assert!(response.usage.input_tokens > 10, "{:?}", response.usage);
    assert!(
        (1..=48).contains(&response.usage.output_tokens),
        "{:?}",
        response.usage
    );
    assert!(response.message.tool_uses().is_empty());
}

#[tokio::test]
async fn max_tokens_reached_is_a_cut_off_answer() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    let response = complete(
        &openai(&base),
        &request("Count from one to one hundred in words.", 4),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(response.stop_reason, StopReason::MaxTokens, "{response:?}");
    assert_eq!(response.usage.output_tokens, 4, "{:?}", response.usage);
}

#[tokio::test]
async fn a_request_over_the_servers_context_is_refused_in_words() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    // Some 12,000 tokens against the server's context of 8,192.
    let long = "ledger ".repeat(12_000);
    let error = complete(&openai(&base), &request(&long, 16), &mut |_| {})
        .await
        .unwrap_err();
    match &error {
        ProviderError::Rejected { status, message } => {
            assert_eq!(*status, 400, "{error}");
            assert!(message.contains("context"), "{error}");
        }
        other => panic!("a request too long is the request's fault, not worth a retry: {other:?}"),
    }
}

#[tokio::test]
async fn tools_offered_and_none_called_is_an_answer() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    let mut asked = request("How much did I spend on groceries in March 2025?", 64);
    asked.tools = vec![Declaration {
        name: "get_spend_report",
        description: "Spending by category for a month.",
        parameters:
            json!({"type": "object", "properties": {"period": {"type": "string"}}, "required": ["period"]})
                .into(),
    }]
    .into();
    let response = complete(&openai(&base), &asked, &mut |_| {}).await.unwrap();
    // This model never calls a tool: the turn must end with its words, never wait on a call.
    assert!(response.message.tool_uses().is_empty(), "{response:?}");
    assert!(!response.message.text().trim().is_empty(), "{response:?}");
    assert_ne!(response.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn a_stream_the_client_drops_leaves_the_server_answering() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    let model = openai(&base);
    let long = request("Write a long story about a household budget.", 400);
    let mut stream = model.stream(&long);
    let first = tokio::time::timeout(Duration::from_mins(1), stream.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(first, StreamEvent::TextDelta(_)), "{first:?}");
    drop(stream);
    // The server gave up the dropped one (one slot): the next request is answered at once.
    let response = tokio::time::timeout(
        Duration::from_mins(1),
        complete(&model, &request("Say yes.", 8), &mut |_| {}),
    )
    .await
    .expect("answered within a minute")
    .unwrap();
    assert!(!response.message.text().trim().is_empty());
}

#[tokio::test]
async fn the_anthropic_adapter_speaks_to_the_servers_messages_endpoint() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    let model = Anthropic::new(AnthropicConfig {
        api_key: Secret("no-key-needed".into()),
        model: MODEL.into(),
        base_url: base.trim_end_matches("/v1").to_owned(),
        timeout: Duration::from_mins(2),
    })
    .unwrap();
    let mut streamed = String::new();
    let response = complete(&model, &request("What colour is grass?", 32), &mut |t| {
        streamed.push_str(t);
    })
    .await
    .unwrap();
    assert!(!response.message.text().trim().is_empty(), "{response:?}");
    assert_eq!(streamed, response.message.text());
    assert!(
        matches!(response.stop_reason, StopReason::End | StopReason::MaxTokens),
        "{response:?}"
    );
    assert!(response.usage.output_tokens > 0, "{:?}", response.usage);
}
