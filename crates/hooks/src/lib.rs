//! kakeibo-hooks: hooks in Claude Code's settings format, run around kakeibo's loop.
//!
//! [`HookSettings`] reads the `hooks` object of a settings file; [`SettingsHooks`] runs its
//! handlers — shell commands and HTTP endpoints — at the events of [`kakeibo_core::hooks`],
//! with the input JSON Claude Code's hooks get and the answers they give:
//!
//! - **input**: `hook_event_name`, `session_id` (the conversation), `cwd`, `permission_mode`
//!   (`"default"`), and per event `tool_name`, `tool_input`, `tool_use_id`, `tool_response`
//!   (`{content, is_error}`), `prompt`, `source` (`"startup"`), `stop_hook_active`, and for
//!   `Stop` the answer as `last_assistant_message`;
//! - **answers**: exit code 2 blocks with stderr as the reason; JSON on stdout (or an endpoint's
//!   2xx body) may say `continue: false` with a `stopReason`, `decision: "block"` with a
//!   `reason`, and `hookSpecificOutput` with `permissionDecision` (allow, deny, ask),
//!   `permissionDecisionReason`, `updatedInput`, `additionalContext`, or for a permission request
//!   `decision: {behavior, message}`; plain stdout is context for `SessionStart` and
//!   `UserPromptSubmit`.
//!
//! Handlers run one at a time; the first block or deny ends the list; a rewritten input is what
//! later handlers see; of several verdicts the strictest stands. A handler that fails in any way
//! is logged and counts as no answer — so a broken hook can make a decision stricter only by
//! what it said before breaking, never looser.

// A hook's output can say anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod run;
pub mod settings;

use std::path::PathBuf;

use futures_util::future::BoxFuture;
use kakeibo_core::{
    PendingWrite, Tier, ToolUse,
    hooks::{Hooks, PostToolUse, PreToolUse, PromptSubmit, Verdict, stricter},
};
use serde_json::{Value, json};

use crate::run::{Behavior, Outcome, PermissionDecision, TopDecision, base_input, run};
pub use crate::settings::{DEFAULT_TIMEOUT, Event, Handler, HookSettings, SettingsError};

/// Hooks from a settings file, run as [`kakeibo_core::Hooks`].
#[derive(Debug, Clone)]
pub struct SettingsHooks {
    settings: HookSettings,
    cwd: PathBuf,
    client: reqwest::Client,
}

impl SettingsHooks {
    /// Runs `settings`' handlers with `cwd` as their working directory (and `cwd` in their input).
    pub fn new(settings: HookSettings, cwd: PathBuf) -> Self {
        Self {
            settings,
            cwd,
            client: reqwest::Client::new(),
        }
    }

    /// The settings these hooks run.
    pub fn settings(&self) -> &HookSettings {
        &self.settings
    }

    /// The input every handler of `event` gets, to add the event's own fields to.
    fn input(&self, event: Event, session: &str) -> serde_json::Map<String, Value> {
        base_input(event, session, &self.cwd)
    }

    async fn run(&self, handler: &Handler, event: Event, input: serde_json::Map<String, Value>) -> Outcome {
        run(handler, event, &Value::Object(input), &self.cwd, &self.client).await
    }
}

/// The call a tool event is about, as Claude Code's input names it.
fn with_call(input: &mut serde_json::Map<String, Value>, tool: &str, args: &Value, id: &str) {
    input.insert("tool_name".into(), tool.into());
    input.insert("tool_input".into(), args.clone());
    input.insert("tool_use_id".into(), id.into());
}

impl Hooks for SettingsHooks {
    fn pre_tool_use<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolUse,
        _tier: Tier,
    ) -> BoxFuture<'a, PreToolUse> {
        Box::pin(async move {
            let event = Event::PreToolUse;
            let mut answer = PreToolUse::default();
            let mut tool_input = call.input.clone();
            for handler in self.settings.handlers(event, Some(&call.name)) {
                let mut input = self.input(event, session);
                with_call(&mut input, &call.name, &tool_input, &call.id);
                let output = match self.run(handler, event, input).await {
                    Outcome::Block(reason) => {
                        answer.verdict = Some(Verdict::Deny);
                        answer.reason = Some(reason);
                        break;
                    }
                    Outcome::Answer(output) => output,
                    Outcome::Text(_) | Outcome::Nothing => continue,
                };
                if output.decision == Some(TopDecision::Block) {
                    answer.verdict = Some(Verdict::Deny);
                    answer.reason.clone_from(&output.reason);
                    break;
                }
                if output.decision == Some(TopDecision::Approve) {
                    answer.verdict = stricter(answer.verdict, Some(Verdict::Allow));
                }
                if let Some(specific) = output.specific(event) {
                    match specific.permission_decision {
                        Some(PermissionDecision::Deny) => {
                            answer.verdict = Some(Verdict::Deny);
                            answer.reason.clone_from(&specific.permission_decision_reason);
                            break;
                        }
                        Some(PermissionDecision::Ask) => {
                            answer.verdict = stricter(answer.verdict, Some(Verdict::Ask));
                        }
                        Some(PermissionDecision::Allow) => {
                            answer.verdict = stricter(answer.verdict, Some(Verdict::Allow));
                        }
                        None => {}
                    }
                    if let Some(updated) = &specific.updated_input {
                        tool_input = Value::Object(updated.clone());
                        answer.updated_input = Some(tool_input.clone());
                    }
                }
                if let Some(stop) = output.stop() {
                    answer.stop = Some(stop);
                    break;
                }
            }
            answer
        })
    }

    fn permission_request<'a>(
        &'a self,
        session: &'a str,
        write: &'a PendingWrite,
    ) -> BoxFuture<'a, Option<bool>> {
        Box::pin(async move {
            let event = Event::PermissionRequest;
            let mut allowed = None;
            for handler in self.settings.handlers(event, Some(&write.tool)) {
                let mut input = self.input(event, session);
                with_call(&mut input, &write.tool, &write.args, &write.id);
                input.insert("summary".into(), write.summary.clone().into());
                let behavior = match self.run(handler, event, input).await {
                    Outcome::Block(_) => Some(Behavior::Deny),
                    Outcome::Answer(output) if output.decision == Some(TopDecision::Block) => {
                        Some(Behavior::Deny)
                    }
                    Outcome::Answer(output) => output
                        .specific(event)
                        .and_then(|s| s.decision.as_ref())
                        .map(|d| d.behavior)
                        .or((output.decision == Some(TopDecision::Approve)).then_some(Behavior::Allow)),
                    Outcome::Text(_) | Outcome::Nothing => None,
                };
                match behavior {
                    Some(Behavior::Deny) => return Some(false),
                    Some(Behavior::Allow) => allowed = Some(true),
                    None => {}
                }
            }
            allowed
        })
    }

    fn post_tool_use<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolUse,
        content: &'a str,
        is_error: bool,
    ) -> BoxFuture<'a, PostToolUse> {
        Box::pin(async move {
            let event = Event::PostToolUse;
            let mut answer = PostToolUse::default();
            for handler in self.settings.handlers(event, Some(&call.name)) {
                let mut input = self.input(event, session);
                with_call(&mut input, &call.name, &call.input, &call.id);
                input.insert(
                    "tool_response".into(),
                    json!({"content": content, "is_error": is_error}),
                );
                let output = match self.run(handler, event, input).await {
                    Outcome::Block(reason) => {
                        answer.notes.push(reason);
                        break;
                    }
                    Outcome::Answer(output) => output,
                    Outcome::Text(_) | Outcome::Nothing => continue,
                };
                answer
                    .notes
                    .extend(output.specific(event).and_then(|s| s.additional_context.clone()));
                let blocked = output.decision == Some(TopDecision::Block);
                if blocked {
                    let reason = output.reason.clone();
                    answer
                        .notes
                        .push(reason.unwrap_or_else(|| "a hook objected to this result".to_owned()));
                }
                answer.stop = output.stop();
                if blocked || answer.stop.is_some() {
                    break;
                }
            }
            answer
        })
    }

    fn stop<'a>(&'a self, session: &'a str, answer: &'a str, active: bool) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let event = Event::Stop;
            for handler in self.settings.handlers(event, None) {
                let mut input = self.input(event, session);
                input.insert("stop_hook_active".into(), active.into());
                input.insert("last_assistant_message".into(), answer.into());
                match self.run(handler, event, input).await {
                    Outcome::Block(reason) => return Some(reason),
                    // `continue: false` asks for the stop the run is making: nothing to add.
                    Outcome::Answer(output) if output.stop().is_some() => return None,
                    Outcome::Answer(output) if output.decision == Some(TopDecision::Block) => {
                        return Some(
                            output
                                .reason
                                .unwrap_or_else(|| "a hook asked you to go on".to_owned()),
                        );
                    }
                    Outcome::Answer(_) | Outcome::Text(_) | Outcome::Nothing => {}
                }
            }
            None
        })
    }

    fn user_prompt_submit<'a>(&'a self, session: &'a str, prompt: &'a str) -> BoxFuture<'a, PromptSubmit> {
        Box::pin(async move {
            let event = Event::UserPromptSubmit;
            let mut answer = PromptSubmit::default();
            for handler in self.settings.handlers(event, None) {
                let mut input = self.input(event, session);
                input.insert("prompt".into(), prompt.into());
                let output = match self.run(handler, event, input).await {
                    Outcome::Block(reason) => {
                        answer.block = Some(reason);
                        break;
                    }
                    Outcome::Text(text) => {
                        answer.notes.push(text);
                        continue;
                    }
                    Outcome::Nothing => continue,
                    Outcome::Answer(output) => output,
                };
                answer
                    .notes
                    .extend(output.specific(event).and_then(|s| s.additional_context.clone()));
                if output.decision == Some(TopDecision::Block) {
                    answer.block = Some(
                        output
                            .reason
                            .clone()
                            .unwrap_or_else(|| "no reason given".to_owned()),
                    );
                    break;
                }
                if let Some(stop) = output.stop() {
                    answer.block = Some(stop);
                    break;
                }
            }
            answer
        })
    }

    fn session_start<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            let event = Event::SessionStart;
            let mut notes = Vec::new();
            for handler in self.settings.handlers(event, None) {
                let mut input = self.input(event, session);
                input.insert("source".into(), "startup".into());
                match self.run(handler, event, input).await {
                    Outcome::Answer(output) => {
                        notes.extend(output.specific(event).and_then(|s| s.additional_context.clone()));
                    }
                    Outcome::Text(text) => notes.push(text),
                    // Claude Code shows a SessionStart's exit 2 to the person only: nothing to block.
                    Outcome::Block(_) | Outcome::Nothing => {}
                }
            }
            notes
        })
    }
}
