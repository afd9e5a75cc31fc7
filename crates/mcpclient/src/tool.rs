//! One tool of an MCP server, as the agent's loop sees a tool.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, OnceLock, PoisonError},
    time::Duration,
};

use futures_util::future::BoxFuture;
use kakeibo_core::{Declaration, Tier, Tool, ToolError, schema, turn::tool_data};
use rmcp::{
    ServiceError,
    model::{CallToolRequestParams, CallToolResult, ContentBlock},
};
use serde_json::{Value, json};

use crate::{connect::Server, tool_name};

/// A description offered to the model, at most this many characters of the server's.
const DESCRIPTION_CHARS: usize = 1_000;
/// A confirmation card's line, at most this many characters of the arguments.
const SUMMARY_ARGS_CHARS: usize = 300;

/// A name or description kept for the life of the process: a tool's declaration holds
/// `&'static str`, and the servers of a process offer a bounded set of them.
fn intern(text: String) -> &'static str {
    static SEEN: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(kept) = seen.get(text.as_str()) {
        return kept;
    }
    let kept: &'static str = Box::leak(text.into_boxed_str());
    seen.insert(kept);
    kept
}

pub(crate) struct McpTool {
    server: Arc<Server>,
    /// The tool's own name on its server.
    remote: String,
    tier: Tier,
    declaration: Declaration,
    validator: jsonschema::Validator,
    timeout: Duration,
}

impl McpTool {
    /// The tool as offered: its name, its tier from `readOnlyHint`, its schema checked; or the
    /// sentence saying why it is left out.
    pub(crate) fn new(
        server: &Arc<Server>,
        remote: &rmcp::model::Tool,
        timeout: Duration,
    ) -> Result<Self, String> {
        let left_out = |why: String| {
            format!(
                "the tool `{}` of the MCP server `{}` is left out: {why}",
                remote.name, server.name
            )
        };
        let name = tool_name(&server.name, &remote.name).ok_or_else(|| {
            left_out("its name would be longer than the 64 characters providers take".to_owned())
        })?;
        let input_schema = Value::Object(remote.input_schema.as_ref().clone());
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(left_out("its input schema is not an object schema".to_owned()));
        }
        let validator = jsonschema::validator_for(&input_schema)
            .map_err(|e| left_out(format!("its input schema does not compile ({e})")))?;
        let read = remote.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
        let tier = if read { Tier::Read } else { Tier::Write };
        let theirs: String = remote
            .description
            .as_deref()
            .unwrap_or("(no description)")
            .chars()
            .take(DESCRIPTION_CHARS)
            .collect();
        let description = format!(
            "[A tool of the MCP server `{}`, described in its own words, which are not the user's.{}] {theirs}",
            server.name,
            if read {
                ""
            } else {
                " It may change something outside kakeibo: the person confirms each call."
            }
        );
        Ok(Self {
            server: Arc::clone(server),
            remote: remote.name.to_string(),
            tier,
            declaration: Declaration {
                name: intern(name),
                description: intern(description),
                parameters: Arc::new(schema::restrict(&input_schema)),
            },
            validator,
            timeout,
        })
    }

    /// The result as tool data: the structured content when the server gives it, else its text
    /// blocks (parsed when they are JSON); other blocks named, never passed on.
    fn value_of(&self, result: CallToolResult) -> Value {
        let mut text = Vec::new();
        let mut omitted = Vec::new();
        for block in result.content {
            match block {
                ContentBlock::Text(t) => text.push(t.text),
                ContentBlock::Image(image) => omitted.push(format!("an image ({})", image.mime_type)),
                ContentBlock::Audio(audio) => omitted.push(format!("audio ({})", audio.mime_type)),
                ContentBlock::Resource(_) => omitted.push("an embedded resource".to_owned()),
                ContentBlock::ResourceLink(link) => omitted.push(format!("a link to {}", link.uri)),
                _ => omitted.push("a block of a kind kakeibo does not read".to_owned()),
            }
        }
        let mut value = serde_json::Map::new();
        value.insert("server".to_owned(), json!(self.server.name));
        value.insert("tool".to_owned(), json!(self.remote));
        let text = text.join("\n");
        // Structured content when given; else text that is JSON (what many servers send) as the
        // JSON it is; else the text.
        match result.structured_content.or_else(|| {
            serde_json::from_str::<Value>(&text)
                .ok()
                .filter(|v| v.is_object() || v.is_array())
        }) {
            Some(structured) => value.insert("result".to_owned(), structured),
            None => value.insert("text".to_owned(), Value::String(text)),
        };
        if !omitted.is_empty() {
            value.insert("not_shown".to_owned(), json!(omitted));
        }
        Value::Object(value)
    }
}

impl Tool for McpTool {
    fn name(&self) -> &'static str {
        self.declaration.name
    }

    fn description(&self) -> &'static str {
        self.declaration.description
    }

    fn tier(&self) -> Tier {
        self.tier
    }

    fn declaration(&self) -> &Declaration {
        &self.declaration
    }

    fn validate(&self, input: &Value) -> Vec<String> {
        kakeibo_core::tool::problems(&self.validator, input)
    }

    fn summarize(&self, input: &Value) -> Option<String> {
        (self.tier == Tier::Write).then(|| {
            let args: String = input.to_string().chars().take(SUMMARY_ARGS_CHARS).collect();
            format!(
                "{} on the MCP server `{}` with {args}",
                self.remote, self.server.name
            )
        })
    }

    fn execute(&self, input: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            if let Some(gone) = self.server.gone() {
                return Err(ToolError::Failed(gone));
            }
            let problems = self.validate(&input);
            if !problems.is_empty() {
                return Err(ToolError::InvalidInput(problems));
            }
            let mut params = CallToolRequestParams::new(self.remote.clone());
            params.arguments = input.as_object().cloned();
            let call = self.server.service.call_tool(params);
            match tokio::time::timeout(self.timeout, call).await {
                Ok(Ok(result)) if result.is_error == Some(true) => {
                    let said = self.value_of(result);
                    Err(ToolError::Refused(format!(
                        "the MCP server `{}` answered with an error:\n{}",
                        self.server.name,
                        tool_data(&said)
                    )))
                }
                Ok(Ok(result)) => Ok(self.value_of(result)),
                Ok(Err(ServiceError::McpError(error))) => Err(ToolError::Refused(format!(
                    "the MCP server `{}` refused the call:\n{}",
                    self.server.name,
                    tool_data(&json!({"code": error.code.0, "message": error.message}))
                ))),
                Ok(Err(error @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                    Err(ToolError::Failed(self.server.stopped(&error.to_string()).await))
                }
                Ok(Err(error)) if self.server.service.is_closed() => {
                    Err(ToolError::Failed(self.server.stopped(&error.to_string()).await))
                }
                Ok(Err(error)) => Err(ToolError::Failed(format!(
                    "the call to the MCP server `{}` failed ({error})",
                    self.server.name
                ))),
                // Said without the words the loop reads as "try again": a read that hung once
                // is not sent a second time to hang as long again.
                Err(_) => Err(ToolError::Failed(format!(
                    "the MCP server `{}` did not answer within {} s, and the call was given up",
                    self.server.name,
                    self.timeout.as_secs_f32()
                ))),
            }
        })
    }
}
