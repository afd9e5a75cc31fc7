//! The OpenAI-compatible Chat Completions wire format (Ollama, vLLM, llama.cpp, DeepSeek, …).

use std::collections::BTreeMap;

use kakeibo_core::{
    Block, Message, ModelRequest, ModelResponse, ProviderError, ProviderMeta, Role, StopReason, Usage,
};
use serde_json::{Map, Value, json};

use crate::http::Accumulate;

/// The field a server put its reasoning in (`reasoning_content` or `reasoning`), kept as the
/// thought block's metadata so it goes back the same way.
const REASONING_FIELDS: [&str; 2] = ["reasoning_content", "reasoning"];

/// The `/chat/completions` body.
pub fn request_body(model: &str, request: &ModelRequest, stream: bool) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        messages.extend(wire_messages(message));
    }
    let mut body =
        json!({"model": model, "messages": messages, "max_tokens": request.max_tokens, "stream": stream});
    if stream {
        crate::http::set(&mut body, "stream_options", json!({"include_usage": true}));
    }
    if !request.tools.is_empty() {
        crate::http::set(&mut body, "tools", Value::Array(
            request
                .tools
                .iter()
                .map(|d| json!({"type": "function", "function": {"name": d.name, "description": d.description, "parameters": d.parameters}}))
                .collect(),
        ));
    }
    body
}

/// One canonical message as one or more chat messages (each tool result is its own message).
fn wire_messages(message: &Message) -> Vec<Value> {
    match message.role {
        Role::User => {
            let mut out = Vec::new();
            let text: String = message.text();
            for block in &message.content {
                if let Block::ToolResult {
                    tool_use_id, content, ..
                } = block
                {
                    out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
                }
            }
            if !text.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
            out
        }
        Role::Assistant => {
            let text = message.text();
            let mut wire = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            let calls: Vec<Value> = message
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, name, input, .. } => {
                        Some(json!({"id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}}))
                    }
                    _ => None,
                })
                .collect();
            if !calls.is_empty() {
                crate::http::set(&mut wire, "tool_calls", Value::Array(calls));
            }
            for block in &message.content {
                if let Block::ThoughtSummary {
                    text,
                    provider_meta: Some(field),
                } = block
                    && REASONING_FIELDS.contains(&field.0.as_str())
                {
                    crate::http::set(&mut wire, field.0.as_str(), json!(text));
                }
            }
            vec![wire]
        }
    }
}

#[derive(Debug, Default)]
struct CallParts {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Builds one reply from streamed chunks (or one unstreamed body).
#[derive(Debug, Default)]
pub struct Accumulator {
    text: String,
    /// A structured-output refusal (`refusal` deltas).
    refusal: String,
    reasoning: Option<(String, String)>,
    /// By the server's index, which may start at 1.
    calls: BTreeMap<u64, CallParts>,
    finish_reason: Option<String>,
    usage: Usage,
    model: Option<String>,
}

impl Accumulate for Accumulator {
    /// Takes one chunk; returns the text it adds.
    fn feed(&mut self, chunk: &Value) -> Result<Vec<String>, ProviderError> {
        if let Some(error) = chunk.get("error") {
            return Err(error_from(error, None));
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str) {
            self.model = Some(model.to_owned());
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |path: &str| usage.pointer(path).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Usage {
                input_tokens: count("/prompt_tokens"),
                output_tokens: count("/completion_tokens"),
                cached_tokens: count("/prompt_tokens_details/cached_tokens")
                    .max(count("/prompt_cache_hit_tokens")),
                thought_tokens: count("/completion_tokens_details/reasoning_tokens"),
            };
        }
        let mut deltas = Vec::new();
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(deltas);
        };
        // Streamed chunks carry `delta`; whole bodies carry `message`.
        let delta = choice
            .get("delta")
            .or_else(|| choice.get("message"))
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(text) = delta
            .get("content")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            self.text.push_str(text);
            deltas.push(text.to_owned());
        }
        if let Some(piece) = delta.get("refusal").and_then(Value::as_str) {
            self.refusal.push_str(piece);
        }
        for field in REASONING_FIELDS {
            if let Some(piece) = delta.get(field).and_then(Value::as_str) {
                let (_, sofar) = self
                    .reasoning
                    .get_or_insert_with(|| (field.to_owned(), String::new()));
                sofar.push_str(piece);
            }
        }
        for (position, call) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(position as u64);
            let parts = self.calls.entry(index).or_default();
            if let Some(id) = call.get("id").and_then(Value::as_str).filter(|i| !i.is_empty()) {
                parts.id = Some(id.to_owned());
            }
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                parts.name.push_str(name);
            }
            match call.pointer("/function/arguments") {
                Some(Value::String(piece)) => parts.arguments.push_str(piece),
                Some(object @ Value::Object(_)) => parts.arguments = object.to_string(),
                _ => {}
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(deltas)
    }

    /// The whole reply; a stream with no finish reason was cut off.
    fn finish(self) -> Result<ModelResponse, ProviderError> {
        let Some(reason) = self.finish_reason else {
            return Err(ProviderError::Protocol(
                "the stream ended before the model finished its reply".into(),
            ));
        };
        let mut content = Vec::new();
        if let Some((field, text)) = self.reasoning {
            content.push(Block::ThoughtSummary {
                text,
                provider_meta: Some(ProviderMeta(field)),
            });
        }
        let refused = !self.refusal.is_empty();
        if refused {
            content.push(Block::text(self.refusal));
        } else if !self.text.is_empty() {
            content.push(Block::text(self.text));
        }
        for (n, parts) in self.calls.into_values().enumerate() {
            let input = if parts.arguments.trim().is_empty() {
                Value::Object(Map::new())
            } else {
                match serde_json::from_str(&parts.arguments) {
                    Ok(input) => input,
                    Err(_) if reason == "length" => Value::Object(Map::new()),
                    Err(e) => {
                        return Err(ProviderError::Protocol(format!(
                            "the arguments of {} are not JSON: {e}",
                            parts.name
                        )));
                    }
                }
            };
            let id = parts.id.unwrap_or_else(|| format!("call_{n}_{}", parts.name));
            content.push(Block::ToolUse {
                id,
                name: parts.name,
                input,
                provider_meta: None,
            });
        }
        let has_calls = content.iter().any(|b| matches!(b, Block::ToolUse { .. }));
        let stop_reason = match reason.as_str() {
            _ if refused => StopReason::Blocked,
            "length" => StopReason::MaxTokens,
            "content_filter" => StopReason::Blocked,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            _ if has_calls => StopReason::ToolUse,
            "stop" | "eos" | "end_turn" => StopReason::End,
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

impl Accumulator {}

/// The reply in one unstreamed body.
pub fn unary(body: &Value) -> Result<ModelResponse, ProviderError> {
    let mut accumulator = Accumulator::default();
    accumulator.feed(body)?;
    accumulator.finish()
}

/// A typed error from an OpenAI-style error object (`{"message", "type", "code"}`).
pub fn error_from(error: &Value, http_status: Option<u16>) -> ProviderError {
    let status = http_status
        .or_else(|| {
            error
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
        })
        .unwrap_or(400);
    crate::http::status_error(status, crate::http::error_message(error))
}

#[cfg(test)]
mod tests {
    use kakeibo_core::ToolResult;

    use super::*;

    #[test]
    fn calls_assemble_by_index_and_reasoning_goes_back() {
        let mut acc = Accumulator::default();
        for chunk in [
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "Let me "}}]}),
            json!({"choices": [{"index": 0, "delta": {"reasoning_content": "think."}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_a", "type": "function", "function": {"name": "set_budget", "arguments": "{\"categ"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"arguments": "ory\": \"Dining\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 64}}}),
        ] {
            acc.feed(&chunk).unwrap();
        }
        let reply = acc.finish().unwrap();
        assert_eq!(reply.stop_reason, StopReason::ToolUse);
        assert_eq!(reply.usage.cached_tokens, 64);
        assert_eq!(reply.message.tool_uses()[0].input, json!({"category": "Dining"}));

        let request = ModelRequest {
            system: "s".into(),
            messages: vec![
                Message::user("budget"),
                reply.message,
                Message {
                    role: Role::User,
                    content: vec![
                        ToolResult {
                            tool_use_id: "call_a".into(),
                            name: "set_budget".into(),
                            content: "ok".into(),
                            is_error: false,
                        }
                        .into(),
                    ],
                },
            ],
            tools: Vec::new().into(),
            max_tokens: 10,
        };
        let body = request_body("m", &request, true);
        assert_eq!(body["messages"][2]["reasoning_content"], "Let me think.");
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"category\":\"Dining\"}"
        );
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "tool_call_id": "call_a", "content": "ok"})
        );
        assert_eq!(body["stream_options"]["include_usage"], true);
    }
}
