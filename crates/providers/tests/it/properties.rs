//! Properties of the three adapters' stream decoding over arbitrary input: no byte stream a
//! provider (or the network between) can send panics the SSE decoder or an adapter's accumulator,
//! and a recorded stream cut anywhere into chunks decodes to the same events as whole.
//!
//! The case count is proptest's (`PROPTEST_CASES`, 256 by default): seconds in the suite; raise it
//! for a long run (`PROPTEST_CASES=1000000 cargo xtask test -- properties`).

use std::{convert::Infallible, sync::LazyLock};

use futures_util::{FutureExt, Stream, StreamExt, stream};
use kakeibo_core::{ProviderError, StreamEvent};
use kakeibo_providers::{anthropic, gemini, http::sse_json_bytes, openai};
use proptest::{collection::vec, prelude::*, sample::select};
use serde_json::{Map, Value};

/// One adapter's events over a stream of JSON chunks.
type Adapter = fn(
    stream::BoxStream<'static, Result<Value, ProviderError>>,
) -> stream::BoxStream<'static, Result<StreamEvent, ProviderError>>;

const ADAPTERS: [(&str, Adapter); 3] = [
    ("openai", |chunks| openai::events(chunks).boxed()),
    ("anthropic", |chunks| anthropic::events(chunks).boxed()),
    ("gemini", |chunks| gemini::events(chunks).boxed()),
];

/// Every event of `events`, in order, as text (the events are compared, not only counted). The
/// streams here never wait, so the future is ready at once.
fn collect(events: impl Stream<Item = Result<StreamEvent, ProviderError>>) -> Vec<String> {
    events
        .map(|event| format!("{event:?}"))
        .collect::<Vec<_>>()
        .now_or_never()
        .expect("a stream over bytes in memory never waits")
}

/// The bytes, cut into the given chunks, through the SSE decoder and one adapter.
fn decode(adapter: Adapter, chunks: Vec<Vec<u8>>) -> Vec<String> {
    let json = sse_json_bytes(stream::iter(chunks.into_iter().map(Ok::<_, Infallible>))).boxed();
    collect(adapter(json))
}

/// `bytes` cut at the given points (any order, any repeats).
fn cut(bytes: &[u8], points: &[prop::sample::Index]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = points.iter().map(|p| p.index(bytes.len() + 1)).collect();
    at.push(0);
    at.push(bytes.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| bytes[w[0]..w[1]].to_vec()).collect()
}

/// The recorded SSE streams of the corpus, per adapter (none without the corpus: the properties
/// then run on generated input alone).
static RECORDED: LazyLock<Vec<(usize, Vec<u8>)>> = LazyLock::new(|| {
    let mut out = Vec::new();
    for (i, (name, _)) in ADAPTERS.iter().enumerate() {
        let mut dirs = vec![kakeibo_testkit::corpus_root().join(name)];
        let mut files = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    files.push(path);
                }
            }
        }
        files.sort();
        for path in files {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if text.trim_start().starts_with("data:") || text.trim_start().starts_with("event:") {
                out.push((i, text.into_bytes()));
            }
        }
    }
    out
});

/// Keys the three providers use, so that generated JSON reaches the accumulators' depths.
const KEYS: &[&str] = &[
    "candidates",
    "content",
    "parts",
    "text",
    "thought",
    "thoughtSignature",
    "functionCall",
    "name",
    "args",
    "partialArgs",
    "jsonPath",
    "stringValue",
    "numberValue",
    "willContinue",
    "finishReason",
    "usageMetadata",
    "promptTokenCount",
    "candidatesTokenCount",
    "type",
    "index",
    "delta",
    "content_block",
    "message",
    "usage",
    "input_tokens",
    "output_tokens",
    "partial_json",
    "stop_reason",
    "id",
    "input",
    "choices",
    "tool_calls",
    "function",
    "arguments",
    "finish_reason",
    "error",
    "role",
];

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1.0e9f64..1.0e9).prop_map(Value::from),
        select(KEYS).prop_map(|k| Value::String(k.to_owned())),
        "[ -~]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            vec((select(KEYS), inner), 0..6).prop_map(|pairs| Value::Object(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect::<Map<_, _>>()
            )),
        ]
    })
}

#[test]
fn the_corpus_holds_recorded_streams_of_every_adapter() {
    if kakeibo_testkit::corpus_dir("gemini", "recorded streams").is_none() {
        return;
    }
    for (i, (name, _)) in ADAPTERS.iter().enumerate() {
        let streams = RECORDED.iter().filter(|(a, _)| *a == i).count();
        assert!(streams >= 2, "{name}: {streams} recorded SSE streams");
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_in_arbitrary_chunks_never_panic(
        bytes in vec(any::<u8>(), 0..512),
        points in vec(any::<prop::sample::Index>(), 0..8),
    ) {
        for (_, adapter) in ADAPTERS {
            let _ = decode(adapter, cut(&bytes, &points));
        }
    }

    #[test]
    fn arbitrary_json_chunks_never_panic_an_accumulator(chunks in vec(json(), 0..8)) {
        for (_, adapter) in ADAPTERS {
            let _ = collect(adapter(stream::iter(chunks.clone().into_iter().map(Ok)).boxed()));
        }
    }

    #[test]
    fn a_recorded_stream_cut_anywhere_decodes_as_whole(
        which in any::<prop::sample::Index>(),
        points in vec(any::<prop::sample::Index>(), 1..12),
    ) {
        if RECORDED.is_empty() {
            kakeibo_testkit::skip::<()>("no recorded SSE streams in the corpus; the cut-anywhere property not checked");
            return Ok(());
        }
        let (adapter, bytes) = &RECORDED[which.index(RECORDED.len())];
        let adapter = ADAPTERS[*adapter].1;
        let whole = decode(adapter, vec![bytes.clone()]);
        prop_assert_eq!(decode(adapter, cut(bytes, &points)), whole);
    }
}
