//! The Gemini adapter against real responses other people recorded (`../shared/corpus/gemini`):
//! streamed chunk files, SSE files, unary bodies, full HTTP recordings and error bodies. Every
//! sample is mapped; the test checks the mapped content where a sample shows something
//! particular. Skipped, saying so, without the corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)] // Tests may panic on what they did not expect.

use std::path::{Path, PathBuf};

use futures_util::stream;
use kakeibo_core::{Block, ModelResponse, ProviderError, StopReason};
use kakeibo_providers::gemini::{events, wire};
use serde_json::Value;
use support::{corpus, drain};

use crate::support;

/// One sample: the chunks of a reply, or an error body with its HTTP status.
enum Sample {
    Chunks(Vec<Value>),
    Error {
        status: Option<u16>,
        body: Value,
    },
    /// Lines that are not JSON, as a provider might send them.
    Garbage,
}

fn chunks_of(text: &str) -> Sample {
    // A whole body (a unary reply or a pretty-printed error), else one chunk per line.
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return classify(value);
    }
    let mut chunks = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let data = line.strip_prefix("data:").map_or(line, str::trim);
        match serde_json::from_str::<Value>(data) {
            Ok(value) => chunks.push(value),
            Err(_) => return Sample::Garbage,
        }
    }
    if chunks.len() == 1 {
        classify(chunks.remove(0))
    } else {
        Sample::Chunks(chunks)
    }
}

fn classify(value: Value) -> Sample {
    if value.get("error").is_some() {
        Sample::Error {
            status: None,
            body: value,
        }
    } else {
        Sample::Chunks(vec![value])
    }
}

async fn map(chunks: Vec<Value>) -> (Vec<String>, Result<ModelResponse, ProviderError>) {
    drain(events(stream::iter(chunks.into_iter().map(Ok)))).await
}

/// Every sample file with its outcome.
/// (samples with their outcome, token counts read, and for each sample that records a failure
/// what the provider said in it).
type Mapped = (
    Vec<(String, Result<ModelResponse, ProviderError>)>,
    usize,
    Vec<(String, Option<String>)>,
);

async fn all(dir: &Path) -> Mapped {
    let mut out = Vec::new();
    let mut counted = 0;
    let mut failures = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in walk(dir) {
        files.push(entry);
    }
    files.sort();
    for path in files {
        let name = path.strip_prefix(dir).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        if name.starts_with("js-genai-recordings") {
            let recording: Value = serde_json::from_str(&text).unwrap();
            for (i, interaction) in recording["interactions"].as_array().unwrap().iter().enumerate() {
                let url = interaction["request"]["url"].as_str().unwrap_or_default();
                if !url.contains("generateContent") && !url.contains("streamGenerateContent") {
                    continue; // countTokens, caches, files: not replies
                }
                let status = interaction["response"]["statusCode"]
                    .as_u64()
                    .and_then(|s| u16::try_from(s).ok());
                if interaction["response"].get("bodySegments").is_none() {
                    eprintln!("skipped {name}#{i}: the recording kept no body");
                    continue;
                }
                let segments: Vec<Value> = interaction["response"]["bodySegments"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let (outcome, failure) = if status == Some(200) {
                    (map(segments).await.1, None)
                } else {
                    let body = segments.into_iter().next().unwrap_or(Value::Null);
                    let error = body.get("error").unwrap_or(&body);
                    (Err(wire::error_from(error, status)), Some(support::said(error)))
                };
                failures.push((format!("{name}#{i}"), failure));
                out.push((format!("{name}#{i}"), outcome));
            }
            continue;
        }
        if name == "errors-from-github-issues.json" {
            let doc: Value = serde_json::from_str(&text).unwrap();
            for (i, item) in doc["items"].as_array().unwrap().iter().enumerate() {
                let status = item["http_status"].as_u64().and_then(|s| u16::try_from(s).ok());
                let body = &item["body"];
                let error = body
                    .get("error")
                    .or_else(|| body.pointer("/0/error"))
                    .unwrap_or(body);
                failures.push((format!("{name}#{i}"), Some(support::said(error))));
                out.push((format!("{name}#{i}"), Err(wire::error_from(error, status))));
            }
            continue;
        }
        let unary = !text.trim_start().starts_with("data:") && !name.ends_with(".chunks.txt");
        let mut failure = (name.contains("failure") || name.contains("429")).then(String::new);
        let outcome = match chunks_of(&text) {
            // countTokens replies, not generateContent ones.
            Sample::Chunks(chunks) if chunks.len() == 1 && chunks[0].get("totalTokens").is_some() => {
                assert!(chunks[0]["totalTokens"].as_u64().is_some(), "{name}");
                counted += 1;
                continue;
            }
            Sample::Chunks(chunks) if unary && chunks.len() == 1 => wire::unary(&chunks[0]),
            Sample::Chunks(chunks) => map(chunks).await.1,
            Sample::Error { status, body } => {
                failure = Some(support::said(&body["error"]));
                Err(wire::error_from(&body["error"], status))
            }
            Sample::Garbage => Err(ProviderError::Protocol("not JSON".into())),
        };
        failures.push((name.clone(), failure));
        out.push((name, outcome));
    }
    (out, counted, failures)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "json" || e == "txt") {
            files.push(path);
        }
    }
    files
}

/// Recorded "successes" whose stream never sends a finish reason: to this adapter a stream that
/// ends without one was cut off, and it says so rather than pass a possibly half answer on.
const NO_FINISH_REASON: [&str; 1] = ["firebase-mock-responses/vertexai/streaming-success-quotes-escaped.txt"];

fn calls(response: &ModelResponse) -> Vec<(String, Value, bool)> {
    response
        .message
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse {
                name,
                input,
                provider_meta,
                ..
            } => Some((name.clone(), input.clone(), provider_meta.is_some())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn every_gemini_sample_maps() {
    let Some(dir) = corpus("gemini", "Gemini") else {
        return;
    };
    let (outcomes, token_counts, failures) = all(&dir).await;
    let get = |name: &str| {
        outcomes
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| panic!("sample {name} missing"), |(_, o)| o)
    };

    // Successes map to a reply; failures to a typed error or a blocked/errored stop.
    let mut covered = 0;
    for (name, outcome) in &outcomes {
        let failure = failures
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, f)| f.as_deref());
        match outcome {
            Ok(response) if failure.is_some() => assert!(
                matches!(response.stop_reason, StopReason::Blocked | StopReason::Error),
                "{name}: a failure sample mapped to {:?}",
                response.stop_reason
            ),
            Ok(_) => {}
            // A stream that fails without an error object (cut off, empty) is a reply that could
            // not be read; one with an error object carries the provider's words.
            Err(e) if failure == Some("") => {
                assert!(matches!(e, ProviderError::Protocol(_)), "{name}: {e:?}");
            }
            Err(e) if let Some(said) = failure => support::assert_failure_says(name, e, said),
            Err(e) if NO_FINISH_REASON.contains(&name.as_str()) || name.contains("missing-terminal") => {
                assert!(matches!(e, ProviderError::Protocol(_)), "{name}: {e}");
            }
            Err(e) => panic!("{name}: a success sample failed: {e}"),
        }
        covered += 1;
    }

    // Gemini 3: a signature on the call itself.
    let gemini3 = get("vercel-ai__google-tool-call-gemini3.json").as_ref().unwrap();
    assert_eq!(
        calls(gemini3),
        [(
            "weather".to_owned(),
            serde_json::json!({"location": "San Francisco"}),
            true
        )]
    );
    assert_eq!(gemini3.stop_reason, StopReason::ToolUse);
    assert!(gemini3.usage.thought_tokens > 0 && gemini3.usage.output_tokens > gemini3.usage.thought_tokens);

    // Streamed partial arguments, two calls in a row, the signature on the first.
    let streamed = get("vercel-ai__google-stream-tool-call-arguments.chunks.txt")
        .as_ref()
        .unwrap();
    let streamed_calls = calls(streamed);
    assert_eq!(streamed_calls.len(), 2);
    assert_eq!(streamed_calls[0].1, serde_json::json!({"location": "Boston"}));
    assert_eq!(
        streamed_calls[1].1,
        serde_json::json!({"location": "San Francisco"})
    );
    assert!(streamed_calls[0].2 && !streamed_calls[1].2);
    let nested = get("vercel-ai__google-vertex-stream-tool-call-arguments-nested.1.chunks.txt")
        .as_ref()
        .unwrap();
    let recipe = &calls(nested)[0].1["recipe"];
    assert_eq!(recipe["ingredients"].as_array().unwrap().len(), 10);
    assert_eq!(
        recipe["ingredients"][6],
        serde_json::json!({"amount": "1", "name": "Egg"})
    );
    assert_eq!(
        recipe["steps"][4],
        "In a 9x13 baking dish, spread a thin layer of meat sauce."
    );

    // Parallel calls without arguments, with thought summaries first.
    let parallel = get("vercel-ai__google-stream-no-args-tool-call.chunks.txt")
        .as_ref()
        .unwrap();
    let names: Vec<String> = calls(parallel).into_iter().map(|c| c.0).collect();
    assert_eq!(names, ["read_theme", "read_screen", "read_screen", "read_screen"]);
    assert!(matches!(
        parallel.message.content[0],
        Block::ThoughtSummary { .. }
    ));
    let ids: Vec<&str> = parallel
        .message
        .content
        .iter()
        .filter_map(|b| {
            if let Block::ToolUse { id, .. } = b {
                Some(id.as_str())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        ids,
        [
            "call_0_read_theme",
            "call_1_read_screen",
            "call_2_read_screen",
            "call_3_read_screen"
        ]
    );

    // Blocked prompts and safety stops, an unknown finish reason, an error in the middle.
    let blocked = get("firebase-mock-responses/googleai/unary-failure-only-prompt-feedback.json")
        .as_ref()
        .unwrap();
    assert_eq!(blocked.stop_reason, StopReason::Blocked);
    let safety = get("firebase-mock-responses/vertexai/unary-failure-finish-reason-safety.json")
        .as_ref()
        .unwrap();
    assert_eq!(safety.stop_reason, StopReason::Blocked);
    let unknown = get("firebase-mock-responses/vertexai/unary-failure-unknown-enum-finish-reason.json")
        .as_ref()
        .unwrap();
    assert_eq!(unknown.stop_reason, StopReason::Error);
    assert!(get("firebase-mock-responses/vertexai/streaming-failure-error-mid-stream.txt").is_err());
    let key = get("firebase-mock-responses/googleai/unary-failure-api-key.json")
        .as_ref()
        .unwrap_err();
    assert!(
        matches!(key, ProviderError::Rejected { status: 400, .. }),
        "{key:?}"
    );
    let quota = get("firebase-mock-responses/vertexai/unary-failure-quota-exceeded.json")
        .as_ref()
        .unwrap_err();
    assert!(
        matches!(quota, ProviderError::Transient(_)),
        "a quota error is worth retrying later: {quota:?}"
    );

    // Implicit caching reports cached tokens; thought summaries keep their signature.
    let cached = get("firebase-mock-responses/vertexai/unary-success-implicit-caching.json")
        .as_ref()
        .unwrap();
    assert!(cached.usage.cached_tokens > 0);
    let thinking = get("firebase-mock-responses/googleai/unary-success-thinking-function-call-thought-summary-signature.json")
        .as_ref()
        .unwrap();
    assert!(
        calls(thinking)[0].2
            || thinking.message.content.iter().any(|b| matches!(
                b,
                Block::ThoughtSummary {
                    provider_meta: Some(_),
                    ..
                }
            ))
    );

    // Retry hints are read from the error details.
    let retry: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("vercel-ai__google-429-retry-info.json")).unwrap(),
    )
    .unwrap();
    assert!(wire::retry_delay(&retry["error"]).is_some());

    eprintln!(
        "gemini samples: {covered} replies and errors mapped, {token_counts} token counts read, from {} files",
        walk(&dir).len()
    );
}

#[test]
fn real_too_small_answers_are_recognised() {
    let Some(dir) = corpus("gemini", "Gemini") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("errors-from-github-issues.json")).unwrap();
    let items: Value = serde_json::from_str(&text).unwrap();
    let mut too_small = 0;
    for item in items["items"].as_array().unwrap() {
        let status = item["http_status"].as_u64().and_then(|s| u16::try_from(s).ok());
        let error = wire::error_from(&item["body"]["error"], status);
        let says_so = item["case"].as_str().unwrap().contains("below model minimum");
        assert_eq!(
            kakeibo_providers::gemini::cache::is_too_small(&error),
            says_so,
            "{}",
            item["case"]
        );
        too_small += usize::from(says_so);
    }
    assert_eq!(too_small, 2, "the corpus records two such answers");
}
