//! `Script`: a model made of rules, for black-box tests and demos (`KAKEIBO_PROVIDER=script:PATH`).
//!
//! A rule matches the latest message the person typed (a regex) and lists steps; the i-th model
//! call of a turn takes step i, where i counts the assistant messages after that user message.
//! Nothing is remembered between calls, so every process gives the same reply to the same
//! conversation. No matching rule, or no step left: a plain reply that says so.

use std::path::Path;

use futures_util::stream::BoxStream;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::{
    message::{Block, Message, Role, StopReason, Usage},
    provider::{ModelRequest, ModelResponse, Provider, ProviderError, StreamEvent},
};

#[derive(Debug, Deserialize)]
struct RuleFile {
    rules: Vec<RawRule>,
}

#[derive(Debug, Deserialize)]
struct RawRule {
    #[serde(rename = "match")]
    pattern: String,
    steps: Vec<Step>,
}

/// One model reply of a rule.
#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ScriptCall>,
    /// `end` (default), `max_tokens`, `blocked` or `error`: how the reply stops.
    #[serde(default)]
    pub stop: Option<StopReason>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ScriptCall {
    pub name: String,
    #[serde(default)]
    pub args: Value,
}

#[derive(Debug)]
struct Rule {
    pattern: Regex,
    steps: Vec<Step>,
}

/// A scripted model read from a rules file.
#[derive(Debug)]
pub struct Script {
    rules: Vec<Rule>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read the script {path}: {message}")]
    Read { path: String, message: String },
    #[error("the script is not valid: {0}")]
    Invalid(String),
}

impl Script {
    /// Reads rules from JSON: `{"rules": [{"match": "regex", "steps": [{"text": …, "tool_calls": [{"name": …, "args": {…}}]}]}]}`.
    pub fn from_json(text: &str) -> Result<Self, ScriptError> {
        Self::from_rules(serde_json::from_str(text).map_err(|e| ScriptError::Invalid(e.to_string()))?)
    }

    /// The same rules written in YAML.
    pub fn from_yaml(text: &str) -> Result<Self, ScriptError> {
        Self::from_rules(serde_yaml_ng::from_str(text).map_err(|e| ScriptError::Invalid(e.to_string()))?)
    }

    fn from_rules(file: RuleFile) -> Result<Self, ScriptError> {
        let rules = file
            .rules
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let pattern = Regex::new(&r.pattern).map_err(|e| {
                    ScriptError::Invalid(format!("rule {}: bad match {:?}: {e}", i + 1, r.pattern))
                })?;
                Ok(Rule {
                    pattern,
                    steps: r.steps,
                })
            })
            .collect::<Result<_, ScriptError>>()?;
        Ok(Self { rules })
    }

    /// A rules file: YAML when it is named `.yaml` or `.yml`, JSON otherwise.
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScriptError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        match path.extension().and_then(|e| e.to_str()) {
            Some("yaml" | "yml") => Self::from_yaml(&text),
            _ => Self::from_json(&text),
        }
    }

    fn reply(&self, request: &ModelRequest) -> ModelResponse {
        let Some(latest) = request
            .messages
            .iter()
            .rposition(|m| m.role == Role::User && !m.is_tool_results())
        else {
            return plain("(script: there is no user message)");
        };
        let said = request.messages[latest].text();
        let step_index = request.messages[latest + 1..]
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        let Some((rule_index, rule)) = self
            .rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.pattern.is_match(&said))
        else {
            return plain(&format!("(script: no rule matches {said:?})"));
        };
        let Some(step) = rule.steps.get(step_index) else {
            return plain(&format!(
                "(script: rule {} has no step {})",
                rule_index + 1,
                step_index + 1
            ));
        };
        let mut content = Vec::new();
        if let Some(text) = &step.text {
            content.push(Block::text(text.clone()));
        }
        for (i, call) in step.tool_calls.iter().enumerate() {
            content.push(Block::ToolUse {
                id: format!("call_{step_index}_{i}_{}", call.name),
                name: call.name.clone(),
                input: if call.args.is_null() {
                    Value::Object(serde_json::Map::new())
                } else {
                    call.args.clone()
                },
                provider_meta: None,
            });
        }
        let stop_reason = step.stop.unwrap_or(if step.tool_calls.is_empty() {
            StopReason::End
        } else {
            StopReason::ToolUse
        });
        ModelResponse {
            message: Message::assistant(content),
            stop_reason,
            usage: estimate(request),
            model_version: None,
        }
    }
}

fn plain(text: &str) -> ModelResponse {
    ModelResponse {
        message: Message::assistant(vec![Block::text(text)]),
        stop_reason: StopReason::End,
        usage: Usage::default(),
        model_version: None,
    }
}

/// A token count for the script's replies, so runs show plausible usage: characters / 4.
fn estimate(request: &ModelRequest) -> Usage {
    let chars: usize = request.system.len()
        + request
            .messages
            .iter()
            .map(|m| serde_json::to_string(m).map_or(0, |s| s.len()))
            .sum::<usize>();
    Usage {
        input_tokens: u64::try_from(chars / 4).unwrap_or(u64::MAX),
        output_tokens: 20,
        cached_tokens: 0,
        thought_tokens: 0,
    }
}

impl Provider for Script {
    fn name(&self) -> &'static str {
        "script"
    }

    fn model(&self) -> &'static str {
        "script"
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        crate::provider::whole_reply(Ok(self.reply(request)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::ToolResult;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            system: String::new(),
            messages,
            tools: vec![],
            max_tokens: 100,
        }
    }

    #[test]
    fn steps_follow_the_conversation_not_memory() {
        let script = Script::from_json(
            &json!({"rules": [
                {"match": "(?i)groceries", "steps": [
                    {"tool_calls": [{"name": "get_spend_report", "args": {"period": "2025-03"}}]},
                    {"text": "You spent ₹23,350.00 on groceries."}
                ]},
                {"match": ".*", "steps": [{"text": "Hello."}]}
            ]})
            .to_string(),
        )
        .unwrap();
        let first = script.reply(&request(vec![Message::user("Groceries in March?")]));
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        assert_eq!(first.message.tool_uses()[0].name, "get_spend_report");

        let results = Message {
            role: Role::User,
            content: vec![Block::from(ToolResult {
                tool_use_id: "x".into(),
                name: "get_spend_report".into(),
                content: "{}".into(),
                is_error: false,
            })],
        };
        let second = script.reply(&request(vec![
            Message::user("Groceries in March?"),
            first.message.clone(),
            results.clone(),
        ]));
        assert_eq!(second.message.text(), "You spent ₹23,350.00 on groceries.");
        let third = script.reply(&request(vec![
            Message::user("Groceries in March?"),
            first.message,
            results,
            second.message,
        ]));
        assert_eq!(third.message.text(), "(script: rule 1 has no step 3)");
        assert_eq!(
            script.reply(&request(vec![Message::user("hi")])).message.text(),
            "Hello."
        );
        assert!(Script::from_json(r#"{"rules": [{"match": "(", "steps": []}]}"#).is_err());

        let yaml = Script::from_yaml(
            "rules:\n  - match: \"(?i)budget\"\n    steps:\n      - tool_calls:\n          - name: set_budget\n            args: {category: Dining, month: \"2025-04\", amount_minor: 800000}\n      - text: Done.\n",
        )
        .unwrap();
        let reply = yaml.reply(&request(vec![Message::user("set a budget")]));
        assert_eq!(reply.message.tool_uses()[0].input["amount_minor"], 800_000);

        let dir = std::env::temp_dir().join(format!("kakeibo-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("rules.yaml");
        std::fs::write(
            &file,
            "rules:\n  - match: \".\"\n    steps:\n      - text: From YAML.\n",
        )
        .unwrap();
        let from_file = Script::from_file(&file).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let said = from_file.reply(&request(vec![Message::user("hi")]));
        assert_eq!(said.message.text(), "From YAML.", "a .yaml file is read as YAML");

        let missing = Script::from_file(Path::new("/nonexistent/rules.yaml")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("cannot read the script /nonexistent/rules.yaml"),
            "{missing}"
        );
    }
}
