//! `Script`: a model made of rules, for black-box tests and demos (`KAKEIBO_PROVIDER=script:PATH`).
//!
//! A rule matches the latest message the person typed (a regex) and lists steps; the i-th model
//! call of a turn takes step i, where i counts the assistant messages after that user message.
//! Nothing is remembered between calls, so every process gives the same reply to the same
//! conversation. No matching rule, or no step left: a plain reply that says so.
//!
//! The rules file (YAML or JSON):
//!
//! - `model` (optional): the label [`Provider::model`] reports (default `script`), so traces and
//!   the session say which script answered.
//! - `rules[].match`: the regex. Its **named captures** fill tool-call arguments: in every string
//!   of a call's `args` (nested ones too), `${name}` becomes the text the group `name` matched
//!   (empty when the group took no part). Only strings are substituted: a capture of digits is
//!   still a string.
//! - `rules[].steps[].text` may quote the previous step's tool results: `{{result.N/pointer}}` is
//!   the value at the JSON pointer `/pointer` of the N-th result (0-based, call order) of the
//!   latest tool-results message (after the matched message, or else the conversation's latest),
//!   its `<tool_data>` fence removed; a string goes in as it is,
//!   anything else as JSON text. A result that is the fixed declined or expired text (the call
//!   did not run) quotes as the word `declined` or `expired`, whatever the pointer; a value that
//!   is not there quotes as `(script: no value at result.N/pointer)`.
//! - `rules[].steps[].declined` (optional): when every result of the latest tool-results message
//!   is the declined or expired text, this text (quotes filled the same way) replaces `text`, and
//!   the step's tool calls are dropped.

use std::path::Path;

use futures_util::stream::BoxStream;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use kakeibo_core::{
    message::{Block, Message, Role, StopReason, Usage},
    provider::{ModelRequest, ModelResponse, Provider, ProviderError, StreamEvent},
    turn::{DECLINED, EXPIRED},
};

#[derive(Debug, Deserialize)]
struct RuleFile {
    /// The model label (default `script`).
    #[serde(default)]
    model: Option<String>,
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
    /// Said instead of `text` (and no tool is called) when every result of the latest tool-results
    /// message is the declined or expired text.
    #[serde(default)]
    pub declined: Option<String>,
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
    model: String,
    rules: Vec<Rule>,
}

/// The model label of a rules file that names none.
pub const DEFAULT_MODEL: &str = "script";

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
        let model = match file.model.map(|m| m.trim().to_owned()) {
            Some(m) if m.is_empty() => {
                return Err(ScriptError::Invalid("model: the label is empty".into()));
            }
            Some(m) => m,
            None => DEFAULT_MODEL.to_owned(),
        };
        Ok(Self { model, rules })
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
        let said = request
            .messages
            .get(latest)
            .map(Message::text)
            .unwrap_or_default();
        let after = request.messages.get(latest + 1..).unwrap_or_default();
        let step_index = after.iter().filter(|m| m.role == Role::Assistant).count();
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
        let results = latest_results(after);
        let all_declined = !results.is_empty() && results.iter().all(|r| not_run(r).is_some());
        // A step after a note of kakeibo's own (a figure check asking for a correction) has no
        // results since it: it quotes the conversation's latest ones.
        let results = if results.is_empty() {
            latest_results(&request.messages)
        } else {
            results
        };
        let (text, calls) = match &step.declined {
            Some(declined) if all_declined => (Some(declined), &[][..]),
            _ => (step.text.as_ref(), step.tool_calls.as_slice()),
        };
        let mut content = Vec::new();
        if let Some(text) = text {
            content.push(Block::text(quote_results(text, &results)));
        }
        let captures = rule.pattern.captures(&said);
        for (i, call) in calls.iter().enumerate() {
            let args = if call.args.is_null() {
                Value::Object(serde_json::Map::new())
            } else {
                call.args.clone()
            };
            content.push(Block::ToolUse {
                id: format!("call_{step_index}_{i}_{}", call.name),
                name: call.name.clone(),
                input: match &captures {
                    Some(caps) => substitute(args, &rule.pattern, caps),
                    None => args,
                },
                provider_meta: None,
            });
        }
        let stop_reason = step.stop.unwrap_or(if calls.is_empty() {
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

/// The contents of the results in the latest tool-results message of `after` (the messages after
/// the person's), in call order; empty when there is none.
fn latest_results(after: &[Message]) -> Vec<&str> {
    after
        .iter()
        .rev()
        .find(|m| m.is_tool_results())
        .map(|m| {
            m.content
                .iter()
                .filter_map(|b| match b {
                    Block::ToolResult { content, .. } => Some(content.as_str()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `declined` or `expired` when `content` is the fixed text of a call that did not run.
fn not_run(content: &str) -> Option<&'static str> {
    if content == DECLINED {
        Some("declined")
    } else if content == EXPIRED {
        Some("expired")
    } else {
        None
    }
}

/// `text` with every `{{result.N/pointer}}` replaced (see the module's documentation).
fn quote_results(text: &str, results: &[&str]) -> String {
    replace_spans(text, "{{result.", "}}", |inner| {
        Some(quote(&format!("result.{inner}"), results))
    })
}

/// `text` with each span from `open` to the next `close` replaced by what `with` makes of what
/// lies between (`None` keeps the span as written); an unclosed span and the rest stay as they are.
fn replace_spans(
    text: &str,
    open: &str,
    close: &str,
    mut with: impl FnMut(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = rest.split_once(open) {
        let Some((inner, tail)) = after.split_once(close) else {
            break;
        };
        out.push_str(before);
        if let Some(replaced) = with(inner) {
            out.push_str(&replaced);
        } else {
            out.push_str(open);
            out.push_str(inner);
            out.push_str(close);
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// The value one `result.N/pointer` names.
fn quote(reference: &str, results: &[&str]) -> String {
    let missing = || format!("(script: no value at {reference})");
    let spec = reference.trim_start_matches("result.");
    let (index, pointer) = spec.find('/').map_or((spec, ""), |at| spec.split_at(at));
    let Some(content) = index.trim().parse::<usize>().ok().and_then(|i| results.get(i)) else {
        return missing();
    };
    if let Some(word) = not_run(content) {
        return word.to_owned();
    }
    let data = content.trim();
    let data = data
        .strip_prefix("<tool_data>")
        .and_then(|d| d.strip_suffix("</tool_data>"))
        .unwrap_or(data);
    match serde_json::from_str::<Value>(data.trim())
        .ok()
        .as_ref()
        .and_then(|v| v.pointer(pointer))
    {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => missing(),
    }
}

/// `value` with `${name}` in every string replaced by the named capture `name` (empty when the
/// group took no part; a name the pattern does not have is left as written).
fn substitute(value: Value, pattern: &Regex, caps: &regex::Captures<'_>) -> Value {
    match value {
        Value::String(s) => Value::String(fill(&s, pattern, caps)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| substitute(v, pattern, caps)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, substitute(v, pattern, caps)))
                .collect(),
        ),
        other => other,
    }
}

/// `text` with each `${name}` replaced by that capture (empty when it took no part), a name the
/// pattern does not have left as written.
fn fill(text: &str, pattern: &Regex, caps: &regex::Captures<'_>) -> String {
    replace_spans(text, "${", "}", |name| match caps.name(name) {
        Some(found) => Some(found.as_str().to_owned()),
        None => pattern
            .capture_names()
            .flatten()
            .any(|n| n == name)
            .then(String::new),
    })
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

    fn model(&self) -> &str {
        &self.model
    }

    /// A script is no model, whatever its label: it costs nothing.
    fn price(&self) -> Option<kakeibo_core::pricing::Price> {
        Some(kakeibo_core::pricing::Price::FREE)
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        kakeibo_core::provider::whole_reply(Ok(self.reply(request)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use kakeibo_core::message::ToolResult;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            system: String::new(),
            messages,
            tools: Vec::new().into(),
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

    fn results_message(contents: &[String]) -> Message {
        Message::results(contents.iter().enumerate().map(|(i, c)| ToolResult {
            tool_use_id: format!("call_0_{i}_set_budget"),
            name: "set_budget".into(),
            content: c.clone(),
            is_error: false,
        }))
    }

    #[test]
    fn the_model_label_comes_from_the_file() {
        let labelled = Script::from_yaml("model: scripted-demo\nrules: []\n").unwrap();
        assert_eq!(labelled.model(), "scripted-demo");
        assert_eq!(labelled.name(), "script");
        let plain_file = Script::from_yaml("rules: []\n").unwrap();
        assert_eq!(plain_file.model(), "script");
        assert!(Script::from_yaml("model: ' '\nrules: []\n").is_err());
    }

    #[test]
    fn named_captures_fill_string_arguments() {
        let script = Script::from_json(
            &json!({"rules": [{"match": "(?i)import .*plan (?P<plan>[0-9a-f-]{36})(?: into (?P<account>\\w+))?", "steps": [
                {"tool_calls": [{"name": "import_statement_csv", "args": {
                    "dry_run": false, "plan_id": "${plan}", "note": ["plan ${plan}!", "${account}|${unknown}"], "n": 3
                }}]}
            ]}]})
            .to_string(),
        )
        .unwrap();
        let id = "6f1c2a9e-3b4d-4e5f-8a7b-0c1d2e3f4a5b";
        let reply = script.reply(&request(vec![Message::user(format!(
            "Import the plan {id} please"
        ))]));
        let input = &reply.message.tool_uses()[0].input;
        assert_eq!(input["plan_id"], id);
        assert_eq!(input["dry_run"], false);
        assert_eq!(input["n"], 3);
        assert_eq!(input["note"], json!([format!("plan {id}!"), "|${unknown}"]));
        let into = script.reply(&request(vec![Message::user(format!(
            "import plan {id} into Wise"
        ))]));
        assert_eq!(into.message.tool_uses()[0].input["note"][1], "Wise|${unknown}");
    }

    #[test]
    fn step_text_quotes_the_previous_results() {
        let script = Script::from_json(
            &json!({"rules": [{"match": ".", "steps": [
                {"tool_calls": [{"name": "set_budget"}, {"name": "set_budget"}]},
                {"text": "A {{result.0/formatted}}, B {{result.1/amount_minor}}, C {{result.1/groups/0}}, D {{result.0/nope}}, E {{result.7/formatted}}, F {{result.1}}"}
            ]}]})
            .to_string(),
        )
        .unwrap();
        let first = script.reply(&request(vec![Message::user("go")]));
        let results = results_message(&[
            kakeibo_core::turn::tool_data(&json!({"formatted": "₹8,000.00", "amount_minor": 800_000})),
            kakeibo_core::turn::tool_data(&json!({"amount_minor": 500_000, "groups": [{"group": "Dining"}]})),
        ]);
        let second = script.reply(&request(vec![
            Message::user("go"),
            first.message.clone(),
            results,
        ]));
        let whole = r#"{"amount_minor":500000,"groups":[{"group":"Dining"}]}"#;
        assert_eq!(
            second.message.text(),
            format!(
                "A ₹8,000.00, B 500000, C {{\"group\":\"Dining\"}}, D (script: no value at result.0/nope), \
                 E (script: no value at result.7/formatted), F {whole}"
            )
        );
        // A call that did not run quotes as what happened to it.
        let mixed = results_message(&[DECLINED.to_owned(), EXPIRED.to_owned()]);
        let third = script.reply(&request(vec![Message::user("go"), first.message.clone(), mixed]));
        assert!(
            third
                .message
                .text()
                .starts_with("A declined, B expired, C expired, D declined"),
            "{}",
            third.message.text()
        );
        // Not JSON, and no results at all: no value, never a panic.
        let garbage = results_message(&["The tool failed: boom".to_owned()]);
        let fourth = script.reply(&request(vec![Message::user("go"), first.message, garbage]));
        assert!(
            fourth
                .message
                .text()
                .starts_with("A (script: no value at result.0/formatted)")
        );
        let unclosed = Script::from_json(
            &json!({"rules": [{"match": ".", "steps": [{"text": "x {{result.0/a"}]}]}).to_string(),
        )
        .unwrap();
        assert_eq!(
            unclosed.reply(&request(vec![Message::user("go")])).message.text(),
            "x {{result.0/a"
        );
    }

    #[test]
    fn a_declined_step_speaks_when_nothing_ran() {
        let script = Script::from_yaml(
            "rules:\n  - match: \".\"\n    steps:\n      - tool_calls: [{name: set_budget}, {name: set_budget}]\n      - text: \"Set: {{result.0/formatted}}.\"\n        declined: \"Nothing was changed.\"\n        tool_calls: [{name: get_budget_status}]\n",
        )
        .unwrap();
        let first = script.reply(&request(vec![Message::user("go")]));
        let ask = |contents: &[String]| {
            script.reply(&request(vec![
                Message::user("go"),
                first.message.clone(),
                results_message(contents),
            ]))
        };
        let none_ran = ask(&[DECLINED.to_owned(), EXPIRED.to_owned()]);
        assert_eq!(none_ran.message.text(), "Nothing was changed.");
        assert!(none_ran.message.tool_uses().is_empty());
        assert_eq!(none_ran.stop_reason, StopReason::End);
        let one_ran = ask(&[
            kakeibo_core::turn::tool_data(&json!({"formatted": "₹8,000.00"})),
            DECLINED.to_owned(),
        ]);
        assert_eq!(one_ran.message.text(), "Set: ₹8,000.00.");
        assert_eq!(one_ran.message.tool_uses().len(), 1);
        // The first step has no results to look at: its calls stand.
        assert_eq!(first.message.tool_uses().len(), 2);
    }
}
