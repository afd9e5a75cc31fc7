//! Gemini's wire format, both ways: canonical request → `generateContent` body, and response
//! chunks → canonical reply.

use kakeibo_core::{
    Block, Message, ModelRequest, ModelResponse, ProviderError, ProviderMeta, Role, StopReason, Usage,
};
use serde_json::{Map, Value, json};

use crate::http::Accumulate;

/// Whether an id was minted by us (`call_<n>_<name>`) rather than given by Gemini: minted ids
/// are never sent back.
pub fn is_minted(id: &str) -> bool {
    id.strip_prefix("call_")
        .and_then(|rest| rest.split_once('_'))
        .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
}

/// The `generateContent` body of a request. With `cached` (a `cachedContents` name) the system
/// instruction and tools are in the cache and not sent again.
pub fn request_body(request: &ModelRequest, cached: Option<&str>) -> Value {
    let contents: Vec<Value> = request
        .messages
        .iter()
        .map(content)
        .filter(|c| !c["parts"].as_array().is_some_and(Vec::is_empty))
        .collect();
    let mut body = json!({
        "contents": contents,
        "generationConfig": {"maxOutputTokens": request.max_tokens, "thinkingConfig": {"includeThoughts": true}},
    });
    if let Some(name) = cached {
        crate::http::set(&mut body, "cachedContent", json!(name));
        return body;
    }
    if !request.system.is_empty() {
        crate::http::set(
            &mut body,
            "systemInstruction",
            json!({"parts": [{"text": request.system}]}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|d| json!({"name": d.name, "description": d.description, "parameters": d.parameters}))
            .collect();
        crate::http::set(
            &mut body,
            "tools",
            json!([{"functionDeclarations": declarations}]),
        );
        crate::http::set(
            &mut body,
            "toolConfig",
            json!({"functionCallingConfig": {"mode": "AUTO"}}),
        );
    }
    body
}

fn content(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "model",
    };
    let parts: Vec<Value> = message.content.iter().map(part).collect();
    json!({"role": role, "parts": parts})
}

fn with_signature(mut part: Value, meta: Option<&ProviderMeta>) -> Value {
    if let Some(meta) = meta {
        crate::http::set(&mut part, "thoughtSignature", json!(meta.0));
    }
    part
}

fn part(block: &Block) -> Value {
    match block {
        Block::Text { text, provider_meta } => with_signature(json!({"text": text}), provider_meta.as_ref()),
        Block::ThoughtSummary { text, provider_meta } => {
            with_signature(json!({"text": text, "thought": true}), provider_meta.as_ref())
        }
        Block::ToolUse {
            id,
            name,
            input,
            provider_meta,
        } => {
            let mut call = json!({"name": name, "args": input});
            if !is_minted(id) {
                crate::http::set(&mut call, "id", json!(id));
            }
            with_signature(json!({"functionCall": call}), provider_meta.as_ref())
        }
        Block::ToolResult {
            tool_use_id,
            name,
            content,
            is_error,
        } => {
            let key = if *is_error { "error" } else { "content" };
            let mut response = json!({"name": name, "response": {key: content}});
            if !is_minted(tool_use_id) {
                crate::http::set(&mut response, "id", json!(tool_use_id));
            }
            json!({"functionResponse": response})
        }
    }
}

/// A call being streamed in pieces (Gemini 3's `partialArgs`).
#[derive(Debug)]
struct OpenCall {
    id: Option<String>,
    name: String,
    args: Value,
    signature: Option<String>,
}

/// Builds one reply from the chunks of a streamed response (or the one body of an unstreamed
/// one).
#[derive(Debug, Default)]
pub struct Accumulator {
    blocks: Vec<Block>,
    pending_signature: Option<String>,
    open: Option<OpenCall>,
    calls: usize,
    finish_reason: Option<String>,
    blocked: Option<String>,
    usage: Usage,
    model_version: Option<String>,
    candidates: usize,
}

impl Accumulate for Accumulator {
    /// Takes one chunk; returns the text it adds (for streaming to the person).
    fn feed(&mut self, chunk: &Value) -> Result<Vec<String>, ProviderError> {
        if let Some(error) = chunk.get("error") {
            return Err(error_from(error, None));
        }
        let feedback = chunk.get("promptFeedback");
        if let Some(reason) =
            feedback.and_then(|f| f.get("blockReason").or_else(|| f.get("blockReasonMessage")))
        {
            self.blocked = Some(reason.as_str().unwrap_or("blocked").to_owned());
        }
        if let Some(usage) = chunk.get("usageMetadata") {
            let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Usage {
                input_tokens: count("promptTokenCount"),
                output_tokens: count("candidatesTokenCount") + count("thoughtsTokenCount"),
                cached_tokens: count("cachedContentTokenCount"),
                thought_tokens: count("thoughtsTokenCount"),
            };
        }
        if let Some(version) = chunk.get("modelVersion").and_then(Value::as_str) {
            self.model_version = Some(version.to_owned());
        }
        let mut deltas = Vec::new();
        let Some(candidate) = chunk.pointer("/candidates/0") else {
            return Ok(deltas);
        };
        self.candidates += 1;
        for part in candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.part(part, &mut deltas);
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(deltas)
    }

    /// The whole reply, once the response is over. A stream that ended without a finish
    /// reason (and was not blocked) was cut off: that is an error, never a short answer.
    fn finish(mut self) -> Result<ModelResponse, ProviderError> {
        self.close_open_call();
        let has_calls = self.blocks.iter().any(|b| matches!(b, Block::ToolUse { .. }));
        let stop_reason = if self.blocked.is_some() {
            StopReason::Blocked
        } else {
            match self.finish_reason.as_deref() {
                None => {
                    return Err(ProviderError::Protocol(
                        "the response ended before the model finished its reply".into(),
                    ));
                }
                Some(_) if has_calls => StopReason::ToolUse,
                Some("STOP") => StopReason::End,
                Some("MAX_TOKENS") => StopReason::MaxTokens,
                Some(
                    "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY"
                    | "LANGUAGE",
                ) => StopReason::Blocked,
                Some(_) => StopReason::Error,
            }
        };
        Ok(ModelResponse {
            message: Message::assistant(self.blocks),
            stop_reason,
            usage: self.usage,
            model_version: self.model_version,
        })
    }
}

impl Accumulator {
    fn part(&mut self, part: &Value, deltas: &mut Vec<String>) {
        let signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(call) = part.get("functionCall") {
            self.function_call(call, signature);
            return;
        }
        let Some(text) = part.get("text").and_then(Value::as_str) else {
            // Executable code, citations and the like carry nothing the ledger agent uses.
            if signature.is_some() {
                self.pending_signature = signature;
            }
            return;
        };
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            match self.blocks.last_mut() {
                Some(Block::ThoughtSummary {
                    text: sofar,
                    provider_meta,
                }) if provider_meta.is_none() => {
                    sofar.push_str(text);
                    *provider_meta = signature.map(ProviderMeta);
                }
                _ => self.blocks.push(Block::ThoughtSummary {
                    text: text.to_owned(),
                    provider_meta: signature.map(ProviderMeta),
                }),
            }
            return;
        }
        if text.is_empty() {
            // A signature on an otherwise empty part belongs to the next call.
            if signature.is_some() {
                self.pending_signature = signature;
            }
            return;
        }
        deltas.push(text.to_owned());
        match self.blocks.last_mut() {
            Some(Block::Text {
                text: sofar,
                provider_meta,
            }) if provider_meta.is_none() => {
                sofar.push_str(text);
                *provider_meta = signature.map(ProviderMeta);
            }
            _ => self.blocks.push(Block::Text {
                text: text.to_owned(),
                provider_meta: signature.map(ProviderMeta),
            }),
        }
    }

    fn function_call(&mut self, call: &Value, signature: Option<String>) {
        let name = call.get("name").and_then(Value::as_str);
        let will_continue = call.get("willContinue").and_then(Value::as_bool) == Some(true);
        if let Some(partials) = call.get("partialArgs").and_then(Value::as_array) {
            if let Some(open) = self.open.as_mut() {
                for partial in partials {
                    apply_partial(&mut open.args, partial);
                }
            }
            return;
        }
        if name.is_none() && !will_continue {
            // `{}` ends a streamed call.
            self.close_open_call();
            return;
        }
        let Some(name) = name else { return };
        self.close_open_call();
        let signature = signature.or_else(|| self.pending_signature.take());
        let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
        let args = call
            .get("args")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let open = OpenCall {
            id,
            name: name.to_owned(),
            args,
            signature,
        };
        if will_continue {
            self.open = Some(open);
        } else {
            self.push_call(open);
        }
    }

    fn close_open_call(&mut self) {
        if let Some(open) = self.open.take() {
            self.push_call(open);
        }
    }

    fn push_call(&mut self, call: OpenCall) {
        let id = call
            .id
            .unwrap_or_else(|| format!("call_{}_{}", self.calls, call.name));
        self.calls += 1;
        self.blocks.push(Block::ToolUse {
            id,
            name: call.name,
            input: call.args,
            provider_meta: call.signature.map(ProviderMeta),
        });
    }

    /// The reply of a complete, unstreamed body: one without a finish reason simply ended.
    pub fn finish_complete(mut self) -> Result<ModelResponse, ProviderError> {
        if self.blocked.is_none() {
            if self.candidates == 0 {
                return Err(ProviderError::Protocol("the reply holds no candidate".into()));
            }
            if self.blocks.is_empty() && self.finish_reason.is_none() {
                return Err(ProviderError::Protocol("the reply is empty".into()));
            }
        }
        if self.finish_reason.is_none() && self.blocked.is_none() {
            self.finish_reason = Some("STOP".to_owned());
        }
        self.finish()
    }
}

/// The reply in one unstreamed `generateContent` body.
pub fn unary(body: &Value) -> Result<ModelResponse, ProviderError> {
    let mut accumulator = Accumulator::default();
    accumulator.feed(body)?;
    accumulator.finish_complete()
}

/// Sets the value a `partialArgs` entry carries at its `jsonPath` (`$.recipe.steps[4]`);
/// string pieces for the same path are joined.
fn apply_partial(args: &mut Value, partial: &Value) {
    let Some(path) = partial.get("jsonPath").and_then(Value::as_str) else {
        return;
    };
    let value = ["stringValue", "numberValue", "boolValue", "nullValue"]
        .iter()
        .find_map(|k| partial.get(*k).map(|v| (*k, v.clone())));
    let Some((kind, value)) = value else { return };
    let mut node = args;
    let Some(segments) = path_segments(path) else {
        return;
    };
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        let slot = match segment {
            Segment::Key(key) => {
                if !node.is_object() {
                    *node = Value::Object(Map::new());
                }
                node.as_object_mut()
                    .map(|o| o.entry(key.clone()).or_insert(Value::Null))
            }
            Segment::Index(index) => {
                if !node.is_array() {
                    *node = Value::Array(Vec::new());
                }
                node.as_array_mut().and_then(|a| {
                    if a.len() <= *index {
                        a.resize(*index + 1, Value::Null);
                    }
                    a.get_mut(*index)
                })
            }
        };
        let Some(slot) = slot else { return };
        if last {
            match (kind, &value, slot.as_str()) {
                ("stringValue", Value::String(piece), Some(sofar)) => {
                    *slot = Value::String(format!("{sofar}{piece}"));
                }
                ("nullValue", _, _) => *slot = Value::Null,
                _ => *slot = value.clone(),
            }
            return;
        }
        node = slot;
    }
}

enum Segment {
    Key(String),
    Index(usize),
}

/// The largest array index a `jsonPath` may name: the array is grown to it, and a provider's
/// reply must not choose how much memory that takes.
const MAX_PATH_INDEX: usize = 1_024;

/// The segments of a `jsonPath` (`$.recipe.steps[4].name`); `None` for a path that is not one
/// (an unclosed or stray bracket, an index that is no number or above [`MAX_PATH_INDEX`]).
fn path_segments(path: &str) -> Option<Vec<Segment>> {
    let mut segments = Vec::new();
    for piece in path.trim_start_matches('$').split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = piece.split_once('[').map_or((piece, ""), |(k, r)| (k, r));
        if key.contains(']') || (rest.is_empty() && key.len() < piece.len()) {
            return None;
        }
        if !key.is_empty() {
            segments.push(Segment::Key(key.to_owned()));
        }
        // `rest` follows an opening bracket: `4]`, `4][2]`.
        while !rest.is_empty() {
            let (index, after) = rest.split_once(']')?;
            let index: usize = index.parse().ok().filter(|i| *i <= MAX_PATH_INDEX)?;
            segments.push(Segment::Index(index));
            rest = match after {
                "" => "",
                more => more.strip_prefix('[')?,
            };
        }
    }
    Some(segments)
}

/// A typed error from a Gemini error object (`{"code", "message", "status", "details"}`),
/// with the HTTP status when known.
pub fn error_from(error: &Value, http_status: Option<u16>) -> ProviderError {
    let status = http_status
        .or_else(|| {
            error
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
        })
        .unwrap_or(0);
    crate::http::status_error(status, crate::http::error_message(error))
}

/// Gemini's requested wait before a retry (`RetryInfo.retryDelay`, such as `"12s"`), if any.
pub fn retry_delay(error: &Value) -> Option<std::time::Duration> {
    error.get("details")?.as_array()?.iter().find_map(|d| {
        let delay = d.get("retryDelay")?.as_str()?.strip_suffix('s')?;
        delay.parse::<f64>().ok().map(std::time::Duration::from_secs_f64)
    })
}

#[cfg(test)]
mod tests {
    use kakeibo_core::{Declaration, ToolResult};

    use super::*;

    #[test]
    fn requests_carry_signatures_and_never_minted_ids() {
        let request = ModelRequest {
            system: "sys".into(),
            messages: vec![
                Message::user("hi"),
                Message::assistant(vec![
                    Block::ToolUse {
                        id: "call_0_list_accounts".into(),
                        name: "list_accounts".into(),
                        input: json!({}),
                        provider_meta: Some(ProviderMeta("sig-a".into())),
                    },
                    Block::ToolUse {
                        id: "abc123".into(),
                        name: "search_transactions".into(),
                        input: json!({"query": "x"}),
                        provider_meta: None,
                    },
                ]),
                Message {
                    role: Role::User,
                    content: vec![
                        ToolResult {
                            tool_use_id: "call_0_list_accounts".into(),
                            name: "list_accounts".into(),
                            content: "ok".into(),
                            is_error: false,
                        }
                        .into(),
                        ToolResult {
                            tool_use_id: "abc123".into(),
                            name: "search_transactions".into(),
                            content: "bad".into(),
                            is_error: true,
                        }
                        .into(),
                    ],
                },
            ],
            tools: vec![Declaration {
                name: "list_accounts",
                description: "List.",
                parameters: json!({"type": "object"}).into(),
            }]
            .into(),
            max_tokens: 100,
        };
        let body = request_body(&request, None);
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "sys");
        assert_eq!(body["contents"][1]["role"], "model");
        assert_eq!(
            body["contents"][1]["parts"][0],
            json!({"functionCall": {"name": "list_accounts", "args": {}}, "thoughtSignature": "sig-a"})
        );
        assert_eq!(body["contents"][1]["parts"][1]["functionCall"]["id"], "abc123");
        assert_eq!(
            body["contents"][2]["parts"][0],
            json!({"functionResponse": {"name": "list_accounts", "response": {"content": "ok"}}})
        );
        assert_eq!(
            body["contents"][2]["parts"][1]["functionResponse"]["response"],
            json!({"error": "bad"})
        );
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["name"],
            "list_accounts"
        );
        let cached = request_body(&request, Some("cachedContents/abc"));
        assert!(cached.get("systemInstruction").is_none() && cached.get("tools").is_none());
        assert_eq!(cached["cachedContent"], "cachedContents/abc");
    }

    #[test]
    fn partial_arguments_assemble() {
        let mut args = json!({});
        for (path, value) in [
            ("$.recipe.steps[4]", "In a dish,"),
            ("$.recipe.steps[4]", " spread."),
            ("$.recipe.ingredients[1].name", "Beef"),
        ] {
            apply_partial(&mut args, &json!({"jsonPath": path, "stringValue": value}));
        }
        apply_partial(&mut args, &json!({"jsonPath": "$.servings", "numberValue": 4}));
        assert_eq!(args["recipe"]["steps"][4], "In a dish, spread.");
        assert_eq!(args["recipe"]["ingredients"][1]["name"], "Beef");
        assert_eq!(args["servings"], 4);
        assert!(is_minted("call_3_set_budget"));
        assert!(!is_minted("call_abc"));
    }

    #[test]
    fn a_path_that_is_no_path_changes_nothing_and_never_panics() {
        let mut args = json!({"kept": true});
        // A stray bracket (the slice once began after it ended), an index past the cap, junk.
        for path in [
            "$.a[0]]",
            "$.a]",
            "$.a[",
            "$.a[x]",
            "$.a[0]b",
            "$.a[99999999999]",
            "$.a[1025]",
            "]",
            "$[[0]]",
        ] {
            apply_partial(&mut args, &json!({"jsonPath": path, "stringValue": "x"}));
        }
        assert_eq!(args, json!({"kept": true}));
        // Nested indexes and the cap itself are paths.
        apply_partial(&mut args, &json!({"jsonPath": "$.grid[1][2]", "numberValue": 7}));
        assert_eq!(args["grid"][1][2], 7);
        apply_partial(&mut args, &json!({"jsonPath": "$.wide[1024]", "boolValue": true}));
        assert_eq!(args["wide"].as_array().map(Vec::len), Some(1_025));
    }
}
