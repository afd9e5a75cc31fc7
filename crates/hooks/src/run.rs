//! Running one handler, and reading what it answered.
//!
//! A command gets the input JSON on stdin; exit 0 answers with its stdout (JSON, or plain text),
//! exit 2 blocks with its stderr as the reason, and anything else — another exit code, a crash,
//! the timeout, output that is not the answer's shape — is logged and counts as no answer. An
//! endpoint gets the input POSTed; a 2xx answers with its body (empty: nothing to say; a JSON
//! object: the answer) and anything else is logged and counts as no answer. No answer can only
//! leave the decision where the rules and policy put it.

use std::{path::Path, process::Stdio, sync::LazyLock};

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWriteExt},
    process::Command,
};

use crate::settings::{Event, Handler};

/// The most of a handler's stdout or stderr that is read.
const OUTPUT_LIMIT: u64 = 1 << 20;

/// What one handler came to.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It failed (logged) or said nothing.
    Nothing,
    /// Exit code 2: blocks, with this reason.
    Block(String),
    /// A JSON answer.
    Answer(Output),
    /// Plain text on stdout: context, for the events that take it.
    Text(String),
}

/// A handler's JSON answer: the fields Claude Code's hooks answer with that kakeibo honours.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Output {
    /// `false` stops the run.
    #[serde(rename = "continue")]
    pub keep_going: Option<bool>,
    pub stop_reason: Option<String>,
    pub decision: Option<TopDecision>,
    pub reason: Option<String>,
    pub hook_specific_output: Option<Specific>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TopDecision {
    Block,
    Approve,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Specific {
    pub hook_event_name: Option<String>,
    pub permission_decision: Option<PermissionDecision>,
    pub permission_decision_reason: Option<String>,
    pub updated_input: Option<serde_json::Map<String, Value>>,
    pub additional_context: Option<String>,
    pub decision: Option<RequestDecision>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PermissionDecision {
    Allow,
    Deny,
    Ask,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestDecision {
    pub behavior: Behavior,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Behavior {
    Allow,
    Deny,
}

impl Output {
    /// The event-specific part, when it is for `event` (one naming another event is ignored).
    pub fn specific(&self, event: Event) -> Option<&Specific> {
        self.hook_specific_output
            .as_ref()
            .filter(|s| s.hook_event_name.as_deref().is_none_or(|n| n == event.name()))
    }

    /// The reason `continue: false` gave, when it was said.
    pub fn stop(&self) -> Option<String> {
        (self.keep_going == Some(false)).then(|| {
            self.stop_reason
                .clone()
                .unwrap_or_else(|| "a hook asked to stop".to_owned())
        })
    }
}

/// Runs `handler` for `event` with `input`.
pub(crate) async fn run(
    handler: &Handler,
    event: Event,
    input: &Value,
    cwd: &Path,
    client: &reqwest::Client,
) -> Outcome {
    let body = input.to_string();
    match handler {
        Handler::Command { command, timeout } => {
            match tokio::time::timeout(*timeout, run_command(command, &body, cwd)).await {
                Ok(Ok(done)) => command_outcome(event, &done),
                Ok(Err(e)) => {
                    tracing::warn!(event = event.name(), error = %e, "a command hook could not run; ignored");
                    Outcome::Nothing
                }
                Err(_) => {
                    tracing::warn!(
                        event = event.name(),
                        timeout_s = timeout.as_secs_f64(),
                        "a command hook timed out; ignored"
                    );
                    Outcome::Nothing
                }
            }
        }
        Handler::Http {
            url,
            timeout,
            headers,
            allowed_env_vars,
        } => {
            let mut request = client
                .post(url.clone())
                .timeout(*timeout)
                .header("content-type", "application/json");
            for (name, value) in headers {
                request = request.header(name, fill_env(value, allowed_env_vars));
            }
            let host = url.host_str().unwrap_or("").to_owned();
            let response = match request.body(body).send().await {
                Ok(response) => response,
                Err(e) => {
                    let kind = if e.is_timeout() { "timed out" } else { "failed" };
                    tracing::warn!(event = event.name(), host, "an http hook {kind}; ignored");
                    return Outcome::Nothing;
                }
            };
            let status = response.status();
            if !status.is_success() {
                tracing::warn!(
                    event = event.name(),
                    host,
                    status = status.as_u16(),
                    "an http hook answered an error; ignored"
                );
                return Outcome::Nothing;
            }
            match response.bytes().await {
                Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Outcome::Nothing,
                Ok(bytes) => match serde_json::from_slice::<Output>(&bytes) {
                    Ok(output) => Outcome::Answer(output),
                    Err(e) => {
                        tracing::warn!(event = event.name(), host, error = %e, "an http hook answered what is not a hook answer; ignored");
                        Outcome::Nothing
                    }
                },
                Err(_) => {
                    tracing::warn!(
                        event = event.name(),
                        host,
                        "an http hook's answer could not be read; ignored"
                    );
                    Outcome::Nothing
                }
            }
        }
    }
}

struct Done {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

async fn run_command(command: &str, input: &str, cwd: &Path) -> std::io::Result<Done> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("KAKEIBO_PROJECT_DIR", cwd)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A hook past its timeout is dropped with this future, and the shell with it.
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let write = async {
        if let Some(stdin) = stdin.as_mut() {
            // A hook that does not read its input may close the pipe first: not a failure.
            let _ = stdin.write_all(input.as_bytes()).await;
        }
        drop(stdin);
    };
    let ((), stdout, stderr, status) =
        tokio::join!(write, read_capped(stdout), read_capped(stderr), child.wait());
    Ok(Done {
        code: status?.code(),
        stdout,
        stderr,
    })
}

async fn read_capped(stream: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(stream) = stream {
        let _ = stream.take(OUTPUT_LIMIT).read_to_end(&mut out).await;
    }
    out
}

fn command_outcome(event: Event, done: &Done) -> Outcome {
    match done.code {
        Some(0) => {
            let stdout = String::from_utf8_lossy(&done.stdout);
            let text = stdout.trim();
            if text.is_empty() {
                Outcome::Nothing
            } else if text.starts_with('{') {
                match serde_json::from_str::<Output>(text) {
                    Ok(output) => Outcome::Answer(output),
                    Err(e) => {
                        tracing::warn!(event = event.name(), error = %e, "a command hook printed what is not a hook answer; ignored");
                        Outcome::Nothing
                    }
                }
            } else {
                Outcome::Text(text.to_owned())
            }
        }
        Some(2) => {
            let stderr = String::from_utf8_lossy(&done.stderr);
            let reason = stderr.trim();
            Outcome::Block(if reason.is_empty() {
                "no reason given".to_owned()
            } else {
                reason.to_owned()
            })
        }
        code => {
            tracing::warn!(event = event.name(), code, "a command hook failed; ignored");
            Outcome::Nothing
        }
    }
}

/// `value` with `$NAME` and `${NAME}` filled from the environment for the names in `allowed`,
/// and emptied for any other.
fn fill_env(value: &str, allowed: &[String]) -> String {
    static VAR: LazyLock<Regex> = LazyLock::new(|| {
        #[allow(clippy::unwrap_used)] // a constant expression
        Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)").unwrap()
    });
    VAR.replace_all(value, |caps: &regex::Captures<'_>| {
        let name = caps.get(1).or_else(|| caps.get(2)).map_or("", |m| m.as_str());
        if allowed.iter().any(|a| a == name) {
            std::env::var(name).unwrap_or_default()
        } else {
            String::new()
        }
    })
    .into_owned()
}

/// The input every event's JSON starts with.
pub(crate) fn base_input(event: Event, session: &str, cwd: &Path) -> serde_json::Map<String, Value> {
    let mut input = serde_json::Map::new();
    input.insert("hook_event_name".into(), event.name().into());
    input.insert("session_id".into(), session.into());
    input.insert("cwd".into(), cwd.display().to_string().into());
    input.insert("permission_mode".into(), "default".into());
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_take_only_the_variables_they_are_allowed() {
        // PATH is set in any test process; HOME too.
        let path = std::env::var("PATH").unwrap_or_default();
        let allowed = vec!["PATH".to_owned()];
        assert_eq!(fill_env("a $PATH b", &allowed), format!("a {path} b"));
        assert_eq!(fill_env("${PATH}!", &allowed), format!("{path}!"));
        assert_eq!(fill_env("Bearer $HOME", &allowed), "Bearer ");
        assert_eq!(fill_env("plain", &allowed), "plain");
    }

    #[test]
    fn answers_with_the_wrong_shape_are_not_answers() {
        for garbage in [
            r#"{"hookSpecificOutput": {"permissionDecision": "maybe"}}"#,
            r#"{"hookSpecificOutput": {"updatedInput": "not an object"}}"#,
            r#"{"decision": 7}"#,
            "{not json",
        ] {
            let done = Done {
                code: Some(0),
                stdout: garbage.as_bytes().to_vec(),
                stderr: Vec::new(),
            };
            assert!(
                matches!(command_outcome(Event::PreToolUse, &done), Outcome::Nothing),
                "{garbage}"
            );
        }
    }
}
