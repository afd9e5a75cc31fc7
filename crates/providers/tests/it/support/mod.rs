//! What the sample tests of every adapter share: finding the corpus, draining an event stream,
//! splitting SSE text and listing the tool calls of a reply.

#![allow(dead_code)] // Each test binary uses its own share of these.

pub mod standin;

use std::path::{Path, PathBuf};

use futures_util::{Stream, StreamExt, stream::BoxStream};
use kakeibo_core::{Block, Message, ModelResponse, ProviderError, StreamEvent, ToolResult};
use serde_json::Value;

/// `../shared/corpus/<provider>` (or `$KAKEIBO_CORPUS/<provider>`); `None`, saying so, when absent
/// (a failure where the whole suite is required).
pub fn corpus(provider: &str, label: &str) -> Option<PathBuf> {
    kakeibo_testkit::corpus_dir(provider, &format!("{label} conformance"))
}

/// The text deltas of a reply stream and its outcome: the completed reply or the last error.
pub async fn drain(
    events: impl Stream<Item = Result<StreamEvent, ProviderError>>,
) -> (Vec<String>, Result<ModelResponse, ProviderError>) {
    let mut deltas = Vec::new();
    let mut outcome = Err(ProviderError::Protocol("no event".into()));
    let mut events = Box::pin(events);
    while let Some(event) = events.next().await {
        match event {
            Ok(StreamEvent::TextDelta(d)) => deltas.push(d),
            Ok(StreamEvent::Completed(r)) => outcome = Ok(r),
            Ok(StreamEvent::ThoughtDelta(_)) => {}
            Err(e) => outcome = Err(e),
        }
    }
    (deltas, outcome)
}

/// The JSON events of SSE text (`data:` lines) or of one-event-per-line chunk files.
pub fn sse_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("event:"))
        .filter_map(|l| serde_json::from_str(l.strip_prefix("data:").map_or(l, str::trim)).ok())
        .collect()
}

/// (id, name, input) of every tool call in a reply.
pub fn tool_calls(r: &ModelResponse) -> Vec<(String, String, Value)> {
    r.message
        .content
        .iter()
        .filter_map(|b| {
            if let Block::ToolUse { id, name, input, .. } = b {
                Some((id.clone(), name.clone(), input.clone()))
            } else {
                None
            }
        })
        .collect()
}

/// The message answering every call of `reply` with `content`, as the loop would send it.
pub fn answered(reply: &ModelResponse, content: &str) -> Message {
    Message::results(tool_calls(reply).into_iter().map(|(id, name, _)| ToolResult {
        tool_use_id: id,
        name,
        content: content.to_owned(),
        is_error: false,
    }))
}

/// What differs between adapters when their samples are read.
pub struct Adapter {
    /// The adapter's event stream over chunks.
    pub events: fn(Vec<Value>) -> BoxStream<'static, Result<StreamEvent, ProviderError>>,
    /// The outcome of one whole body, with its HTTP status when the sample records one.
    pub body: fn(&Value, Option<u16>) -> Result<ModelResponse, ProviderError>,
    /// Whether a whole body records a failure.
    pub failed: fn(&Value) -> bool,
}

/// (name, outcome, whether the sample records a failure) for every file in `dirs` (relative to
/// `root`): JSON bodies, recorded exchanges (arrays of request/response pairs), and SSE or
/// one-event-per-line chunk files.
/// One sample file (or one exchange of a recording) as the adapter maps it.
#[derive(Debug)]
pub struct Sample {
    pub name: String,
    pub outcome: Result<ModelResponse, ProviderError>,
    /// For a sample of a failure: what the provider said (its error's `message`, or "").
    pub failure: Option<String>,
}

/// What a provider said in an error object: its `message`, or "" when it has none.
pub fn said(error: &Value) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// What a failure body's provider said: its error's `message`.
fn provider_said(body: &Value) -> String {
    body.get("error").map(said).unwrap_or_default()
}

/// That a failure sample became a typed refusal or outage carrying the provider's own words —
/// not an unreadable reply, and not an empty sentence.
pub fn assert_failure_says(name: &str, error: &ProviderError, said: &str) {
    assert!(
        matches!(
            error,
            ProviderError::Rejected { .. } | ProviderError::Transient(_)
        ),
        "{name}: a provider's error was read as {error:?}"
    );
    let words: String = said.chars().take(60).collect();
    assert!(
        error.to_string().contains(words.trim()),
        "{name}: {error} does not say what the provider said: {said:?}"
    );
}

/// That every sample maps as it should: a success to a reply, a failure to the provider's own
/// words; `cut` names the streams that end early, which must be unreadable replies.
pub fn assert_each_maps(samples: &[Sample], cut: &[&str]) {
    for Sample {
        name,
        outcome,
        failure,
    } in samples
    {
        match (outcome, failure) {
            (Ok(_), failure) => assert!(failure.is_none(), "{name}: a failure sample mapped to a reply"),
            (Err(e), Some(said)) => assert_failure_says(name, e, said),
            (Err(e), None) if cut.contains(&name.as_str()) => {
                assert!(matches!(e, ProviderError::Protocol(_)), "{name}: {e}");
            }
            (Err(e), None) => panic!("{name}: {e}"),
        }
    }
}

/// The outcome of the sample `name`.
pub fn outcome<'a>(samples: &'a [Sample], name: &str) -> &'a Result<ModelResponse, ProviderError> {
    samples
        .iter()
        .find(|s| s.name == name)
        .map_or_else(|| panic!("sample {name} missing"), |s| &s.outcome)
}

pub async fn all_samples(root: &Path, dirs: &[&str], adapter: &Adapter) -> Vec<Sample> {
    let streamed = async |chunks: Vec<Value>| drain((adapter.events)(chunks)).await.1;
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let name = path.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(exchanges)) => {
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
                    let name = format!("{name}#{i}");
                    if let Value::String(sse) = &body {
                        let outcome = streamed(sse_lines(sse)).await;
                        out.push(Sample {
                            name,
                            outcome,
                            failure: None,
                        });
                    } else if body.is_object() {
                        let failure = status.is_some_and(|s| s >= 400).then(|| provider_said(&body));
                        let outcome = (adapter.body)(&body, status);
                        out.push(Sample {
                            name,
                            outcome,
                            failure,
                        });
                    }
                }
            }
            Ok(body) => out.push(Sample {
                outcome: (adapter.body)(&body, None),
                failure: (adapter.failed)(&body).then(|| provider_said(&body)),
                name,
            }),
            Err(_) => out.push(Sample {
                outcome: streamed(sse_lines(&text)).await,
                failure: None,
                name,
            }),
        }
    }
    out
}
