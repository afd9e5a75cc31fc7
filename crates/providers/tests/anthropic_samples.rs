//! The Anthropic adapter against real responses other people recorded
//! (`../shared/corpus/anthropic`): SSE streams, chunk files, whole bodies, recordings and error
//! bodies. Skipped, saying so, without the corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)] // Tests may panic on what they did not expect.

use std::path::{Path, PathBuf};

use futures_util::stream;
use kakeibo_core::{Block, ModelResponse, ProviderError, StopReason};
use kakeibo_providers::anthropic::{events, wire};
use serde_json::Value;
use support::{corpus, drain, sse_lines, tool_calls};

mod support;

async fn streamed(chunks: Vec<Value>) -> Result<ModelResponse, ProviderError> {
    drain(events(stream::iter(chunks.into_iter().map(Ok)))).await.1
}

fn body_outcome(body: &Value, status: Option<u16>) -> Result<ModelResponse, ProviderError> {
    match status {
        Some(s) if s >= 400 => Err(wire::error_from(&body["error"], Some(s))),
        _ => wire::unary(body),
    }
}

/// (name, outcome, whether the sample records a failure) for every sample.
async fn all(dir: &Path) -> Vec<(String, Result<ModelResponse, ProviderError>, bool)> {
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.join("sdk-python-recordings")).unwrap())
    {
        let path = entry.unwrap().path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let name = path.strip_prefix(dir).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            match value {
                Value::Array(exchanges) => {
                    for (i, exchange) in exchanges.iter().enumerate() {
                        let (status, body) = if exchange.get("scope").is_some() {
                            (exchange["status"].as_u64(), exchange["response"].clone())
                        } else {
                            (
                                exchange["response"]["status_code"].as_u64(),
                                exchange["response"]["body"].clone(),
                            )
                        };
                        let status = status.and_then(|s| u16::try_from(s).ok());
                        if let Value::String(sse) = &body {
                            out.push((format!("{name}#{i}"), streamed(sse_lines(sse)).await, false));
                        } else if body.is_object() {
                            let failed = status.is_some_and(|s| s >= 400);
                            out.push((format!("{name}#{i}"), body_outcome(&body, status), failed));
                        }
                    }
                }
                body => {
                    let failed = body.get("type").and_then(Value::as_str) == Some("error");
                    out.push((name, wire::unary(&body), failed));
                }
            }
            continue;
        }
        out.push((name, streamed(sse_lines(&text)).await, false));
    }
    out
}

#[tokio::test]
async fn every_anthropic_sample_maps() {
    let Some(dir) = corpus("anthropic", "Anthropic") else {
        return;
    };
    let outcomes = all(&dir).await;
    let get = |name: &str| {
        outcomes
            .iter()
            .find(|(n, ..)| n == name)
            .map_or_else(|| panic!("sample {name} missing"), |(_, o, _)| o)
    };
    for (name, outcome, failed) in &outcomes {
        match outcome {
            Ok(_) => assert!(!failed, "{name}: a failure sample mapped to a reply"),
            Err(e) if *failed => assert!(!e.to_string().is_empty()),
            Err(e) if CUT.contains(&name.as_str()) => {
                assert!(matches!(e, ProviderError::Protocol(_)), "{name}: {e}");
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }

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
    let errors = outcomes.iter().filter(|(_, _, failed)| *failed).count();
    eprintln!(
        "anthropic samples: {} mapped ({errors} error bodies)",
        outcomes.len()
    );
}

/// A recorded stream spliced in the middle of a call: its arguments do not parse, and that is
/// an error, never a call with made-up arguments.
const CUT: [&str; 1] = ["vercel-ai__spliced-message-start.chunks.txt"];
