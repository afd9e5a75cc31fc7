//! The Anthropic adapter against real responses other people recorded
//! (`../shared/corpus/anthropic`): SSE streams, chunk files, whole bodies, recordings and error
//! bodies. Skipped, saying so, without the corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)] // Tests may panic on what they did not expect.

use futures_util::stream;
use kakeibo_core::{Block, StopReason};
use kakeibo_providers::anthropic::{events, wire};
use serde_json::Value;
use support::{Adapter, all_samples, assert_each_maps, corpus, outcome, tool_calls};

use crate::support;

const ANTHROPIC: Adapter = Adapter {
    events: |chunks| Box::pin(events(stream::iter(chunks.into_iter().map(Ok)))),
    body: |body, status| match status {
        Some(s) if s >= 400 => Err(wire::error_from(&body["error"], Some(s))),
        _ => wire::unary(body),
    },
    failed: |body| body.get("type").and_then(Value::as_str) == Some("error"),
};

#[tokio::test]
async fn every_anthropic_sample_maps() {
    let Some(dir) = corpus("anthropic", "Anthropic") else {
        return;
    };
    let outcomes = all_samples(&dir, &[".", "sdk-python-recordings"], &ANTHROPIC).await;
    let get = |name: &str| outcome(&outcomes, name);
    assert_each_maps(&outcomes, &CUT);

    let text = get("vercel-ai__anthropic-text.chunks.txt").as_ref().unwrap();
    assert_eq!(text.stop_reason, StopReason::End);
    assert!(!text.message.text().is_empty());
    let tool = get("anthropic-sdk-python__tool_use_response.txt")
        .as_ref()
        .unwrap();
    let calls = tool_calls(tool);
    assert_eq!(tool.stop_reason, StopReason::ToolUse);
    assert!(
        calls[0].0.starts_with("toolu_") && calls[0].2.is_object(),
        "{calls:?}"
    );
    let no_args = get("vercel-ai__anthropic-tool-no-args.chunks.txt")
        .as_ref()
        .unwrap();
    assert_eq!(tool_calls(no_args)[0].2, serde_json::json!({}));
    let cut = get("anthropic-sdk-python__incomplete_partial_json_response.txt")
        .as_ref()
        .unwrap();
    assert_eq!(
        cut.stop_reason,
        StopReason::MaxTokens,
        "cut inside a call: asked again with more room"
    );
    assert_eq!(tool_calls(cut).len(), 1);
    let refusal = get("vercel-ai__anthropic-refusal.chunks.txt").as_ref().unwrap();
    assert_eq!(refusal.stop_reason, StopReason::Blocked);
    let thinking = get("vercel-ai__anthropic-clear-thinking.1.chunks.txt")
        .as_ref()
        .unwrap();
    assert!(
        thinking
            .message
            .content
            .iter()
            .any(|b| matches!(b, Block::ThoughtSummary { provider_meta: Some(m), .. } if !m.0.is_empty())),
        "thinking keeps its signature"
    );
    let cached = get("vercel-ai__anthropic-code-execution-20260120-prompt-cache.1.chunks.txt")
        .as_ref()
        .unwrap();
    assert!(cached.usage.cached_tokens > 0 || cached.usage.input_tokens > 0);

    assert!(
        get(CUT[0]).is_err(),
        "a spliced stream is an error, not an answer"
    );
    let duplicate = get("vercel-ai__duplicate-message-start.chunks.txt")
        .as_ref()
        .unwrap();
    assert_eq!(
        duplicate.stop_reason,
        StopReason::End,
        "a repeated message_start is tolerated"
    );
    let errors = outcomes.iter().filter(|s| s.failure.is_some()).count();
    eprintln!(
        "anthropic samples: {} mapped ({errors} error bodies)",
        outcomes.len()
    );
}

/// A recorded stream spliced in the middle of a call: its arguments do not parse, and that is
/// an error, never a call with made-up arguments.
const CUT: [&str; 1] = ["vercel-ai__spliced-message-start.chunks.txt"];
