//! Record and replay: `RECORD=1` stores each exchange with a provider as a fixture keyed by the
//! canonicalised request; `REPLAY=1` serves the fixtures instead of a provider and fails loudly
//! on a request it has no fixture for.
//!
//! Canonicalising makes the key the same in every run of one conversation: tool-use ids are
//! renumbered `t0, t1, …` by position (tool results follow their call), and thought summaries
//! and signatures — which differ on every call — are dropped. The key covers the model, the
//! system prompt, those messages, the tools with their descriptions and schemas, and the
//! output limit. Token counts are kept
//! beside, as `tokens-<key>.json`; without one, replay gives no count and the caller estimates.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use futures_util::{StreamExt, future::BoxFuture, stream::BoxStream};
use kakeibo_core::{Block, ModelRequest, ModelResponse, Provider, ProviderError, StreamEvent};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The canonical form of a request: what its key is the hash of.
pub fn canonical(model: &str, request: &ModelRequest) -> Value {
    let mut ids: HashMap<&str, String> = HashMap::new();
    let mut messages = Vec::new();
    for message in &request.messages {
        let mut blocks = Vec::new();
        for block in &message.content {
            match block {
                Block::Text { text, .. } => blocks.push(json!({"text": text})),
                Block::ToolUse { id, name, input, .. } => {
                    let n = ids.len();
                    let renumbered = ids.entry(id.as_str()).or_insert_with(|| format!("t{n}"));
                    blocks.push(json!({"tool_use": renumbered, "name": name, "input": input}));
                }
                Block::ToolResult {
                    tool_use_id,
                    name,
                    content,
                    is_error,
                } => {
                    let id = ids
                        .get(tool_use_id.as_str())
                        .map_or(tool_use_id.as_str(), String::as_str);
                    blocks.push(
                        json!({"tool_result": id, "name": name, "content": content, "is_error": is_error}),
                    );
                }
                Block::ThoughtSummary { .. } => {}
            }
        }
        if !blocks.is_empty() {
            messages.push(json!({"role": message.role, "content": blocks}));
        }
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|d| json!({"name": d.name, "description": d.description, "parameters": d.parameters}))
        .collect();
    json!({"model": model, "system": request.system, "tools": tools, "messages": messages,
           "max_tokens": request.max_tokens})
}

/// The fixture key of a request: 32 hex digits of the SHA-256 of its canonical form.
pub fn key(model: &str, request: &ModelRequest) -> String {
    let digest = Sha256::digest(canonical(model, request).to_string().as_bytes());
    hex::encode(digest.get(..16).unwrap_or_default())
}

/// Where fixtures are kept: `KAKEIBO_FIXTURES`, else `fixtures/`.
pub fn fixtures_dir(var: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    var("KAKEIBO_FIXTURES").map_or_else(|| PathBuf::from("fixtures"), PathBuf::from)
}

/// Writes `value` to `path` whole or not at all.
fn write_atomically(path: &Path, value: &Value) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, text + "\n")?;
    std::fs::rename(&partial, path)
}

/// A provider whose every completed reply is also written as a fixture.
pub struct Recorder {
    inner: Box<dyn Provider>,
    dir: PathBuf,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("provider", &self.inner.name())
            .field("dir", &self.dir)
            .finish()
    }
}

impl Recorder {
    pub fn new(inner: Box<dyn Provider>, dir: impl Into<PathBuf>) -> Self {
        Self {
            inner,
            dir: dir.into(),
        }
    }

    fn record(&self, request: &ModelRequest, response: &ModelResponse) -> Result<(), ProviderError> {
        let model = self.inner.model();
        let key = key(model, request);
        let fixture = json!({
            "key": key,
            "provider": self.inner.name(),
            "request": canonical(model, request),
            "response": response,
        });
        let path = self.dir.join(format!("{key}.json"));
        write_atomically(&path, &fixture)
            .map_err(|e| ProviderError::Protocol(format!("could not record {}: {e}", path.display())))
    }
}

impl Provider for Recorder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn price(&self) -> Option<kakeibo_core::pricing::Price> {
        self.inner.price()
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        Box::pin(self.inner.stream(request).map(move |event| {
            if let Ok(StreamEvent::Completed(response)) = &event {
                self.record(request, response)?;
            }
            event
        }))
    }

    fn count_tokens<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async move {
            let count = self.inner.count_tokens(request).await?;
            let path = self
                .dir
                .join(format!("tokens-{}.json", key(self.inner.model(), request)));
            // A count that could not be kept is still a count.
            let _ = write_atomically(&path, &json!({"totalTokens": count}));
            Some(count)
        })
    }
}

/// A provider that answers only from fixtures.
#[derive(Debug, Clone)]
pub struct Replay {
    model: String,
    dir: PathBuf,
}

impl Replay {
    pub fn new(model: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        Self {
            model: model.into(),
            dir: dir.into(),
        }
    }

    fn load(&self, request: &ModelRequest) -> Result<ModelResponse, ProviderError> {
        let key = key(&self.model, request);
        let path = self.dir.join(format!("{key}.json"));
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ProviderError::Protocol(format!(
                "REPLAY: no recorded reply for this request ({}: {e}); record it with RECORD=1 and a live provider",
                path.display()
            ))
        })?;
        let fixture: Value = serde_json::from_str(&text)
            .map_err(|e| ProviderError::Protocol(format!("REPLAY: {} is not JSON: {e}", path.display())))?;
        serde_json::from_value(fixture.get("response").cloned().unwrap_or_default())
            .map_err(|e| ProviderError::Protocol(format!("REPLAY: {} holds no reply: {e}", path.display())))
    }
}

impl Provider for Replay {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn model(&self) -> &str {
        &self.model
    }

    /// A replay sends nothing to the model: it costs nothing.
    fn price(&self) -> Option<kakeibo_core::pricing::Price> {
        Some(kakeibo_core::pricing::Price::FREE)
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        kakeibo_core::provider::whole_reply(self.load(request))
    }

    fn count_tokens<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async move {
            let path = self
                .dir
                .join(format!("tokens-{}.json", key(&self.model, request)));
            let text = std::fs::read_to_string(path).ok()?;
            serde_json::from_str::<Value>(&text)
                .ok()?
                .get("totalTokens")?
                .as_u64()
        })
    }
}

#[cfg(test)]
mod tests {
    use kakeibo_core::{Message, ProviderMeta, Role, ToolResult};

    use super::*;

    fn conversation(call_id: &str, signature: &str) -> ModelRequest {
        ModelRequest {
            system: "sys".into(),
            messages: vec![
                Message::user("groceries?"),
                Message::assistant(vec![
                    Block::ThoughtSummary {
                        text: format!("thinking {signature}"),
                        provider_meta: Some(ProviderMeta(signature.into())),
                    },
                    Block::ToolUse {
                        id: call_id.into(),
                        name: "get_spend_report".into(),
                        input: json!({"period": "2025-03"}),
                        provider_meta: Some(ProviderMeta(signature.into())),
                    },
                ]),
                Message {
                    role: Role::User,
                    content: vec![
                        ToolResult {
                            tool_use_id: call_id.into(),
                            name: "get_spend_report".into(),
                            content: "{}".into(),
                            is_error: false,
                        }
                        .into(),
                    ],
                },
            ],
            tools: Vec::new().into(),
            max_tokens: 100,
        }
    }

    #[test]
    fn ids_signatures_and_thoughts_do_not_change_the_key() {
        let a = conversation("toolu_01ABC", "sig-1");
        let b = conversation("call_0_get_spend_report", "sig-2");
        assert_eq!(key("m", &a), key("m", &b));
        let canonical = canonical("m", &a);
        assert_eq!(canonical["messages"][1]["content"][0]["tool_use"], "t0");
        assert_eq!(canonical["messages"][2]["content"][0]["tool_result"], "t0");
        assert!(!canonical.to_string().contains("sig-1"));
        assert_ne!(key("m2", &a), key("m", &a), "the model is part of the key");
        let mut c = conversation("toolu_01ABC", "sig-1");
        c.system = "other".into();
        assert_ne!(key("m", &c), key("m", &a));
    }

    /// Counts tokens as 1234 and answers "counted".
    struct Counting;

    impl Provider for Counting {
        fn name(&self) -> &'static str {
            "counting"
        }

        fn model(&self) -> &'static str {
            "m"
        }

        fn stream<'a>(
            &'a self,
            _request: &'a ModelRequest,
        ) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
            kakeibo_core::provider::whole_reply(Ok(kakeibo_core::scripted::reply_text("counted")))
        }

        fn count_tokens<'a>(&'a self, _request: &'a ModelRequest) -> BoxFuture<'a, Option<u64>> {
            Box::pin(async { Some(1234) })
        }
    }

    #[tokio::test]
    async fn token_counts_are_kept_beside_and_a_missing_one_is_no_count() {
        let dir = tempfile::tempdir().unwrap();
        let recorder = Recorder::new(Box::new(Counting), dir.path());
        let asked = conversation("toolu_1", "sig");
        assert_eq!(recorder.count_tokens(&asked).await, Some(1234));
        let reply = kakeibo_core::provider::complete(&recorder, &asked, &mut |_| {})
            .await
            .unwrap();

        let served = Replay::new("m", dir.path());
        assert_eq!(served.count_tokens(&asked).await, Some(1234));
        let again = kakeibo_core::provider::complete(&served, &asked, &mut |_| {})
            .await
            .unwrap();
        assert_eq!(again, reply);

        let mut other = asked.clone();
        other.system = "never recorded".into();
        assert_eq!(served.count_tokens(&other).await, None, "the caller estimates");
        let err = kakeibo_core::provider::complete(&served, &other, &mut |_| {})
            .await
            .unwrap_err();
        assert!(err.to_string().contains("REPLAY: no recorded reply"), "{err}");
    }
}
