//! The Anthropic Messages wire format, both ways.

use kakeibo_core::{
    Block, Message, ModelRequest, ModelResponse, ProviderError, ProviderMeta, Role, StopReason, Usage,
};
use serde_json::{Map, Value, json};

use crate::http::Accumulate;

/// Marks a thinking block that came redacted: its meta holds the opaque data.
const REDACTED: &str = "redacted:";

/// The `/v1/messages` body, with two cache breakpoints: the system prompt and the last block.
pub fn request_body(model: &str, request: &ModelRequest, stream: bool) -> Value {
    let mut messages: Vec<Value> = request
        .messages
        .iter()
        .map(message)
        .filter(|m| !m["content"].as_array().is_some_and(Vec::is_empty))
        .collect();
    if let Some(last) = messages
        .last_mut()
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|c| c.last_mut())
    {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "stream": stream,
    });
    if !request.system.is_empty() {
        crate::http::set(
            &mut body,
            "system",
            json!([{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}]),
        );
    }
    if !request.tools.is_empty() {
        crate::http::set(&mut body, "tools", Value::Array(
            request
                .tools
                .iter()
                .map(|d| json!({"name": d.name, "description": d.description, "input_schema": d.parameters}))
                .collect(),
        ));
    }
    body
}

fn message(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let content: Vec<Value> = message.content.iter().filter_map(block).collect();
    json!({"role": role, "content": content})
}

fn block(block: &Block) -> Option<Value> {
    Some(match block {
        Block::Text { text, .. } => json!({"type": "text", "text": text}),
        Block::ToolUse { id, name, input, .. } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
            ..
        } => {
            json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error})
        }
        // A thinking block goes back only with its signature; without one it is not Anthropic's.
        Block::ThoughtSummary { text, provider_meta } => {
            let meta = provider_meta.as_ref()?;
            match meta.0.strip_prefix(REDACTED) {
                Some(data) => json!({"type": "redacted_thinking", "data": data}),
                None => json!({"type": "thinking", "thinking": text, "signature": meta.0}),
            }
        }
    })
}

/// A content block being streamed.
#[derive(Debug)]
enum Open {
    Text(String),
    ToolUse { id: String, name: String, json: String },
    Thinking { text: String, signature: String },
    Redacted(String),
}

/// Builds one reply from the events of a streamed response.
#[derive(Debug, Default)]
pub struct Accumulator {
    blocks: Vec<(usize, Open)>,
    stop_reason: Option<String>,
    usage: Usage,
    model: Option<String>,
    stopped: bool,
}

impl Accumulate for Accumulator {
    /// Takes one event; returns the text it adds.
    fn feed(&mut self, event: &Value) -> Result<Vec<String>, ProviderError> {
        let mut deltas = Vec::new();
        match event.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => {
                let message = &event["message"];
                self.model = message.get("model").and_then(Value::as_str).map(str::to_owned);
                self.usage_from(&message["usage"]);
            }
            "content_block_start" => {
                let index = index_of(event);
                let block = &event["content_block"];
                let open = match block.get("type").and_then(Value::as_str).unwrap_or_default() {
                    "text" => Open::Text(text_of(block, "text")),
                    "tool_use" | "server_tool_use" => Open::ToolUse {
                        id: text_of(block, "id"),
                        name: text_of(block, "name"),
                        json: block
                            .get("input")
                            .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                            .map(ToString::to_string)
                            .unwrap_or_default(),
                    },
                    "thinking" => Open::Thinking {
                        text: text_of(block, "thinking"),
                        signature: text_of(block, "signature"),
                    },
                    "redacted_thinking" => Open::Redacted(text_of(block, "data")),
                    _ => return Ok(deltas),
                };
                if let Open::Text(text) = &open
                    && !text.is_empty()
                {
                    deltas.push(text.clone());
                }
                self.blocks.push((index, open));
            }
            "content_block_delta" => {
                let index = index_of(event);
                let delta = &event["delta"];
                let Some((_, open)) = self.blocks.iter_mut().rev().find(|(i, _)| *i == index) else {
                    return Ok(deltas);
                };
                match (
                    delta.get("type").and_then(Value::as_str).unwrap_or_default(),
                    open,
                ) {
                    ("text_delta", Open::Text(text)) => {
                        let piece = text_of(delta, "text");
                        text.push_str(&piece);
                        deltas.push(piece);
                    }
                    ("input_json_delta", Open::ToolUse { json, .. }) => {
                        json.push_str(&text_of(delta, "partial_json"));
                    }
                    ("thinking_delta", Open::Thinking { text, .. }) => {
                        text.push_str(&text_of(delta, "thinking"));
                    }
                    ("signature_delta", Open::Thinking { signature, .. }) => {
                        signature.push_str(&text_of(delta, "signature"));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(output) = event.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.output_tokens = output;
                }
                if event.pointer("/usage/input_tokens").is_some() {
                    let output = self.usage.output_tokens;
                    self.usage_from(&event["usage"]);
                    self.usage.output_tokens = output;
                }
            }
            "message_stop" => self.stopped = true,
            "error" => return Err(error_from(&event["error"], None)),
            _ => {}
        }
        Ok(deltas)
    }

    /// The whole reply; a stream that never said why it stopped was cut off.
    fn finish(self) -> Result<ModelResponse, ProviderError> {
        let Some(reason) = self.stop_reason else {
            return Err(ProviderError::Protocol(
                "the stream ended before the model finished its reply".into(),
            ));
        };
        let mut content = Vec::new();
        for (_, open) in self.blocks {
            content.push(match open {
                Open::Text(text) => Block::Text {
                    text,
                    provider_meta: None,
                },
                Open::ToolUse { id, name, json } => {
                    let input = if json.trim().is_empty() {
                        Value::Object(Map::new())
                    } else {
                        match serde_json::from_str(&json) {
                            Ok(input) => input,
                            // Cut off by the length limit inside the call: the loop asks again
                            // with more room.
                            Err(_) if reason == "max_tokens" => Value::Object(Map::new()),
                            Err(e) => {
                                return Err(ProviderError::Protocol(format!(
                                    "the arguments of {name} are not JSON: {e}"
                                )));
                            }
                        }
                    };
                    Block::ToolUse {
                        id,
                        name,
                        input,
                        provider_meta: None,
                    }
                }
                Open::Thinking { text, signature } => Block::ThoughtSummary {
                    text,
                    provider_meta: Some(ProviderMeta(signature)).filter(|m| !m.0.is_empty()),
                },
                Open::Redacted(data) => Block::ThoughtSummary {
                    text: String::new(),
                    provider_meta: Some(ProviderMeta(format!("{REDACTED}{data}"))),
                },
            });
        }
        let has_calls = content.iter().any(|b| matches!(b, Block::ToolUse { .. }));
        let stop_reason = match reason.as_str() {
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
            "refusal" => StopReason::Blocked,
            _ if has_calls => StopReason::ToolUse,
            "end_turn" | "stop_sequence" | "pause_turn" => StopReason::End,
            _ => StopReason::Error,
        };
        Ok(ModelResponse {
            message: Message::assistant(content),
            stop_reason,
            usage: self.usage,
            model_version: self.model,
        })
    }
}

impl Accumulator {
    fn usage_from(&mut self, usage: &Value) {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        let cached = count("cache_read_input_tokens");
        self.usage = Usage {
            input_tokens: count("input_tokens") + cached + count("cache_creation_input_tokens"),
            output_tokens: count("output_tokens"),
            cached_tokens: cached,
            thought_tokens: 0,
        };
    }
}

/// The reply in one unstreamed body.
pub fn unary(body: &Value) -> Result<ModelResponse, ProviderError> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_from(&body["error"], None));
    }
    let mut accumulator = Accumulator::default();
    accumulator.feed(&json!({"type": "message_start", "message": body}))?;
    for (index, block) in body["content"].as_array().into_iter().flatten().enumerate() {
        let mut start = block.clone();
        // Complete blocks: text and tool input arrive whole.
        if start.get("type").and_then(Value::as_str) == Some("text") {
            crate::http::set(&mut start, "text", json!(""));
        }
        accumulator.feed(&json!({"type": "content_block_start", "index": index, "content_block": start}))?;
        match block["type"].as_str().unwrap_or_default() {
            "text" => {
                accumulator.feed(&json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}}))?;
            }
            "tool_use" | "server_tool_use" => {
                let json = block.get("input").map(ToString::to_string).unwrap_or_default();
                if let Some((_, Open::ToolUse { json: sofar, .. })) = accumulator.blocks.last_mut() {
                    *sofar = json;
                }
            }
            _ => {}
        }
    }
    accumulator.stop_reason = body.get("stop_reason").and_then(Value::as_str).map(str::to_owned);
    accumulator.finish()
}

fn index_of(event: &Value) -> usize {
    event
        .get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(0)
}

fn text_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A typed error from an Anthropic error object (`{"type", "message"}`), with the HTTP status
/// when known. Overload (529) and rate limits are worth retrying.
pub fn error_from(error: &Value, http_status: Option<u16>) -> ProviderError {
    let kind = error.get("type").and_then(Value::as_str).unwrap_or_default();
    let status = http_status.unwrap_or(match kind {
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        "api_error" => 500,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        _ => 400,
    });
    crate::http::status_error(status, crate::http::error_message(error))
}

#[cfg(test)]
mod tests {
    use kakeibo_core::{Declaration, ToolResult};

    use super::*;

    #[test]
    fn requests_have_two_cache_breakpoints_and_keep_thinking_signatures() {
        let request = ModelRequest {
            system: "sys".into(),
            messages: vec![
                Message::user("hi"),
                Message::assistant(vec![
                    Block::ThoughtSummary {
                        text: "think".into(),
                        provider_meta: Some(ProviderMeta("sig".into())),
                    },
                    Block::ThoughtSummary {
                        text: String::new(),
                        provider_meta: Some(ProviderMeta("redacted:abc".into())),
                    },
                    Block::ThoughtSummary {
                        text: "not ours".into(),
                        provider_meta: None,
                    },
                    Block::ToolUse {
                        id: "toolu_1".into(),
                        name: "list_accounts".into(),
                        input: json!({}),
                        provider_meta: None,
                    },
                ]),
                Message {
                    role: Role::User,
                    content: vec![
                        ToolResult {
                            tool_use_id: "toolu_1".into(),
                            name: "list_accounts".into(),
                            content: "{}".into(),
                            is_error: false,
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
        let body = request_body("claude-x", &request, true);
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        let assistant = &body["messages"][1]["content"];
        assert_eq!(
            assistant[0],
            json!({"type": "thinking", "thinking": "think", "signature": "sig"})
        );
        assert_eq!(assistant[1], json!({"type": "redacted_thinking", "data": "abc"}));
        assert_eq!(assistant[2]["type"], "tool_use");
        let last = &body["messages"][2]["content"][0];
        assert_eq!(last["cache_control"]["type"], "ephemeral");
        assert_eq!(last["tool_use_id"], "toolu_1");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    }
}
