//! The OpenAI-compatible adapter against real responses other people recorded
//! (`../shared/corpus/openai`): SSE streams, chunk files, whole bodies and error bodies, from
//! OpenAI, DeepSeek, Groq, Mistral, xAI and Azure. Skipped, saying so, without the corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)] // Tests may panic on what they did not expect.

use futures_util::stream;
use kakeibo_core::{Block, StopReason};
use kakeibo_providers::openai::{events, wire};
use support::{Adapter, all_samples, assert_each_maps, corpus, outcome, tool_calls};

use crate::support;

const OPENAI: Adapter = Adapter {
    events: |chunks| Box::pin(events(stream::iter(chunks.into_iter().map(Ok)))),
    body: |body, status| match status {
        Some(s) if s >= 400 => Err(wire::error_from(&body["error"], Some(s))),
        _ if body.get("error").is_some() => Err(wire::error_from(&body["error"], None)),
        _ => wire::unary(body),
    },
    failed: |body| body.get("error").is_some(),
};

#[tokio::test]
async fn every_openai_sample_maps() {
    let Some(dir) = corpus("openai", "OpenAI-compatible") else {
        return;
    };
    let outcomes = all_samples(&dir, &["."], &OPENAI).await;
    let get = |name: &str| outcome(&outcomes, name);
    assert_each_maps(&outcomes, &[]);

    let text = get("vercel-ai__openai-text.chunks.txt").as_ref().unwrap();
    assert_eq!(text.stop_reason, StopReason::End);
    assert!(!text.message.text().is_empty());
    let unary = get("vercel-ai__openai-text.json").as_ref().unwrap();
    assert!(unary.message.text().starts_with("**Holiday Name:**"));
    assert!(unary.usage.input_tokens > 0 && unary.usage.output_tokens > 0);
    for (name, tool) in [
        ("vercel-ai__deepseek-tool-call.chunks.txt", "deepseek"),
        ("vercel-ai__groq-tool-call.chunks.txt", "groq"),
        ("vercel-ai__mistral-tool-call.chunks.txt", "mistral"),
        (
            "vercel-ai__mistral-incremental-tool-call.chunks.txt",
            "mistral incremental",
        ),
        ("vercel-ai__xai-tool-call.chunks.txt", "xai"),
    ] {
        let reply = get(name).as_ref().unwrap();
        let calls = tool_calls(reply);
        assert!(
            !calls.is_empty() && calls.iter().all(|c| c.2.is_object()),
            "{tool}: {calls:?}"
        );
        assert_eq!(reply.stop_reason, StopReason::ToolUse, "{tool}");
    }
    let deepseek = get("vercel-ai__deepseek-tool-call.chunks.txt").as_ref().unwrap();
    assert!(
        deepseek.message.content.iter().any(|b| matches!(b, Block::ThoughtSummary { provider_meta: Some(m), .. } if m.0 == "reasoning_content")),
        "DeepSeek's reasoning_content is kept to send back"
    );
    let max = get("openai-python__parse_max_tokens_reached.sse")
        .as_ref()
        .unwrap();
    assert_eq!(max.stop_reason, StopReason::MaxTokens);
    let refusal = get("openai-python__parse_pydantic_model_refusal.sse")
        .as_ref()
        .unwrap();
    assert_eq!(refusal.stop_reason, StopReason::Blocked);
    assert!(get("vercel-ai__reasoning-model-legacy-parameter-error.json").is_err());
    let errors = outcomes.iter().filter(|s| s.failure.is_some()).count();
    eprintln!(
        "openai samples: {} mapped ({errors} error bodies)",
        outcomes.len()
    );
}
