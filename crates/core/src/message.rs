//! The provider-neutral conversation: messages of blocks, usage, stop reasons.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Data a provider needs back on a later request (a Gemini `thoughtSignature`, an Anthropic
/// thinking signature, OpenAI-style `reasoning_content`). The core never reads it. It is kept as
/// text, so a round trip through PostgreSQL `jsonb` (which reorders object keys) returns it
/// byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ProviderMeta(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_meta: Option<ProviderMeta>,
    },
    ToolUse {
        id: String,
        name: String,
        /// The call's input: a JSON object.
        #[schemars(with = "serde_json::Map<String, Value>")]
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_meta: Option<ProviderMeta>,
    },
    ToolResult {
        tool_use_id: String,
        name: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    ThoughtSummary {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_meta: Option<ProviderMeta>,
    },
}

impl Block {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            provider_meta: None,
        }
    }
}

/// A call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// The answer to one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    pub tool_use_id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
}

impl From<ToolResult> for Block {
    fn from(r: ToolResult) -> Self {
        Self::ToolResult {
            tool_use_id: r.tool_use_id,
            name: r.name,
            content: r.content,
            is_error: r.is_error,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![Block::text(text)],
        }
    }

    pub fn assistant(content: Vec<Block>) -> Self {
        Self {
            role: Role::Assistant,
            content,
        }
    }

    /// The user message that answers a batch of calls: one result each, in the order given.
    pub fn results(results: impl IntoIterator<Item = ToolResult>) -> Self {
        Self {
            role: Role::User,
            content: results.into_iter().map(Block::from).collect(),
        }
    }

    /// The tool calls in this message, in order.
    pub fn tool_uses(&self) -> Vec<ToolUse> {
        self.content
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { id, name, input, .. } => Some(ToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// The text of this message, blocks joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| {
                if let Block::Text { text, .. } = b {
                    Some(text.as_str())
                } else {
                    None
                }
            })
            .collect::<Vec<_>>()
            .join("")
    }

    /// A user message that only carries tool results (not something the person typed).
    pub fn is_tool_results(&self) -> bool {
        self.role == Role::User && self.content.iter().any(|b| matches!(b, Block::ToolResult { .. }))
    }
}

/// Why a model reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    End,
    ToolUse,
    MaxTokens,
    Blocked,
    Error,
}

/// Tokens of one call or a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub thought_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_tokens += other.cached_tokens;
        self.thought_tokens += other.thought_tokens;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn blocks_serialise_tagged_and_lean() {
        let message = Message::assistant(vec![
            Block::text("hi"),
            Block::ToolUse {
                id: "call_1".into(),
                name: "list_accounts".into(),
                input: json!({}),
                provider_meta: Some(ProviderMeta("sig==".into())),
            },
        ]);
        let value = serde_json::to_value(&message).unwrap();
        assert_eq!(
            value,
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "hi"},
                {"type": "tool_use", "id": "call_1", "name": "list_accounts", "input": {}, "provider_meta": "sig=="}
            ]})
        );
        assert_eq!(serde_json::from_value::<Message>(value).unwrap(), message);
        assert_eq!(message.tool_uses().len(), 1);
        assert_eq!(message.text(), "hi");
    }
}
