//! What every adapter does over HTTP: send with retries that respect the provider, and read a
//! server-sent event stream.

use std::time::Duration;

use std::{collections::VecDeque, future::Future, pin::Pin};

use futures_util::{
    Stream, StreamExt,
    stream::{self, BoxStream},
};
use kakeibo_core::{ModelResponse, ProviderError, StreamEvent};
use serde_json::Value;

/// A credential: usable, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// How long one model request may take, reply included: `MODEL_TIMEOUT_SECS` (1 to 900) as
/// `var` reads it, else two minutes. A request that times out is retried like any transient
/// failure, so a turn waits at most about three times this for one call.
pub fn timeout_setting(var: &dyn Fn(&str) -> Option<String>) -> Duration {
    var("MODEL_TIMEOUT_SECS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|secs| (1..=900).contains(secs))
        .map_or(Duration::from_mins(2), Duration::from_secs)
}

/// The HTTP client of an adapter: connecting within 10 s, the whole request within `timeout`.
pub fn client(timeout: Duration) -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(timeout)
        .build()
        .map_err(|e| ProviderError::Protocol(format!("cannot build the HTTP client: {e}")))
}

/// The events of one streamed reply: opening the request, then the SSE chunks through the
/// adapter's `accumulator`. A refusal to open is the stream's only item.
pub fn reply_stream<'a, A: Accumulate + 'a>(
    opening: impl Future<Output = Result<reqwest::Response, ProviderError>> + Send + 'a,
    accumulator: A,
) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
    let mut accumulator = Some(accumulator);
    Box::pin(stream::once(opening).flat_map(
        move |opened| -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
            match (opened, accumulator.take()) {
                (Ok(response), Some(accumulator)) => Box::pin(events(sse_json(response), accumulator)),
                (Err(e), _) => Box::pin(stream::iter([Err(e)])),
                (Ok(_), None) => Box::pin(stream::iter([Err(ProviderError::Protocol(
                    "a reply was opened twice".into(),
                ))])),
            }
        },
    ))
}

/// How a provider's error body says to wait, if it does.
pub type RetryHint = fn(&Value) -> Option<Duration>;

/// For providers that ask for waits only in the `Retry-After` header.
pub fn no_retry_hint(_error: &Value) -> Option<Duration> {
    None
}

/// What a provider's answer with `status` means: 429 and 5xx are worth trying again; any other
/// status is a refusal, reported with the provider's own message.
pub fn status_error(status: u16, message: String) -> ProviderError {
    if status == 429 || status >= 500 {
        ProviderError::Transient(format!("{status}: {message}"))
    } else {
        ProviderError::Rejected { status, message }
    }
}

/// The `message` of a provider's error object.
pub fn error_message(error: &Value) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_owned()
}

/// Retries after the first attempt, for 429, 5xx, connection resets and timeouts.
pub const MAX_RETRIES: u32 = 2;

/// Sends `request` (rebuilt for each attempt), retrying transient failures at most
/// [`MAX_RETRIES`] times: a 429 waits as long as the provider asks (`Retry-After`, or its own
/// hint in the error body), others back off (0.5 s, 1 s). Any other 4xx is returned at once
/// with the provider's message.
pub async fn send(
    build: impl Fn() -> reqwest::RequestBuilder,
    error_from: fn(&Value, Option<u16>) -> ProviderError,
    hint: RetryHint,
) -> Result<reqwest::Response, ProviderError> {
    let mut attempt = 0;
    loop {
        let (error, wait) = match build().send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let body = response.text().await.unwrap_or_default();
                let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                // Some providers wrap the error in a one-element array.
                let error_object = parsed
                    .get("error")
                    .or_else(|| parsed.pointer("/0/error"))
                    .cloned();
                let error = match &error_object {
                    Some(object) => error_from(object, Some(status)),
                    None => error_from(
                        &serde_json::json!({"message": body.chars().take(300).collect::<String>()}),
                        Some(status),
                    ),
                };
                let wait = retry_after.or_else(|| error_object.as_ref().and_then(hint));
                (error, wait)
            }
            Err(e) => (ProviderError::Transient(transport_error(&e)), None),
        };
        if !matches!(error, ProviderError::Transient(_)) || attempt >= MAX_RETRIES {
            return Err(error);
        }
        let backoff = Duration::from_millis(500 * 2u64.pow(attempt));
        tokio::time::sleep(wait.unwrap_or(backoff).min(Duration::from_mins(1))).await;
        attempt += 1;
    }
}

fn transport_error(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        format!("timed out: {error}")
    } else if error.is_connect() {
        format!("could not connect: {error}")
    } else {
        error.to_string()
    }
}

/// Sets `key` on a JSON object this crate built; a value that is not an object is left as it is
/// (`value[key] = …` would panic on one).
pub(crate) fn set(object: &mut Value, key: &str, value: Value) {
    if let Some(map) = object.as_object_mut() {
        map.insert(key.to_owned(), value);
    }
}

/// The `data:` payloads of a server-sent event stream, as JSON. A stream that breaks is an
/// error item; a payload that is not JSON is a protocol error; `[DONE]` ends the stream.
pub fn sse_json(response: reqwest::Response) -> impl Stream<Item = Result<Value, ProviderError>> {
    sse_json_bytes(response.bytes_stream())
}

/// [`sse_json`] over any stream of byte chunks, cut anywhere (the network decides where).
pub fn sse_json_bytes<S, B, E>(bytes: S) -> impl Stream<Item = Result<Value, ProviderError>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    use eventsource_stream::Eventsource;
    bytes.eventsource().filter_map(|event| async move {
        match event {
            Ok(event) if event.data.trim() == "[DONE]" || event.data.trim().is_empty() => None,
            Ok(event) => Some(
                serde_json::from_str::<Value>(&event.data)
                    .map_err(|e| ProviderError::Protocol(format!("an event that is not JSON: {e}"))),
            ),
            Err(e) => Some(Err(ProviderError::Transient(format!("the stream broke: {e}")))),
        }
    })
}

/// What an adapter's reply builder does with the chunks of a response.
pub trait Accumulate: Send {
    /// Takes one chunk; returns the text it adds.
    fn feed(&mut self, chunk: &Value) -> Result<Vec<String>, ProviderError>;
    /// The whole reply, once the chunks are over.
    fn finish(self) -> Result<ModelResponse, ProviderError>;
}

/// Turns response chunks into stream events: text deltas as they come, then the whole reply.
/// The first error ends the stream.
pub fn events<S, A>(chunks: S, accumulator: A) -> impl Stream<Item = Result<StreamEvent, ProviderError>>
where
    S: Stream<Item = Result<Value, ProviderError>> + Send,
    A: Accumulate,
{
    struct State<S, A> {
        chunks: Pin<Box<S>>,
        accumulator: Option<A>,
        ready: VecDeque<Result<StreamEvent, ProviderError>>,
    }
    let state = State {
        chunks: Box::pin(chunks),
        accumulator: Some(accumulator),
        ready: VecDeque::new(),
    };
    stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.ready.pop_front() {
                return Some((event, state));
            }
            let accumulator = state.accumulator.as_mut()?;
            match state.chunks.next().await {
                Some(Ok(chunk)) => match accumulator.feed(&chunk) {
                    Ok(deltas) => state
                        .ready
                        .extend(deltas.into_iter().map(|d| Ok(StreamEvent::TextDelta(d)))),
                    Err(e) => {
                        state.accumulator = None;
                        state.ready.push_back(Err(e));
                    }
                },
                Some(Err(e)) => {
                    state.accumulator = None;
                    state.ready.push_back(Err(e));
                }
                None => {
                    let finished = state.accumulator.take()?.finish();
                    state.ready.push_back(finished.map(StreamEvent::Completed));
                }
            }
        }
    })
}
