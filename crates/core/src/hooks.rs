//! Hooks: an operator's own policy and notes around what the loop does, at the events Claude
//! Code's hooks use — `SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PermissionRequest`,
//! `PostToolUse`, `Stop`.
//!
//! A [`Hooks`] answers each event it cares about; every method has a default that says nothing,
//! so an implementation overrides only its events. How the loop weighs an answer:
//!
//! - **`PreToolUse`** may refuse a call (it is answered as refused, never run), rewrite its input
//!   (validated again), or say allow or ask. A permission rule's `deny` always wins over a hook's
//!   allow; a hook's allow lets a write run without asking a person inline, but never skips the
//!   person under [`ConfirmPolicy::Suspend`](crate::ConfirmPolicy::Suspend): there the write
//!   still waits.
//! - **`PermissionRequest`** answers for a write that would be asked: deny declines it; allow runs
//!   it where the policy would ask inline or decline; under `Suspend` only its deny counts.
//! - **`PreToolUse`** may also end the turn after the batch (`stop`), as `PostToolUse` may.
//! - **`PostToolUse`** adds notes to a result the model reads, or asks the turn to stop after the
//!   batch ([`Stop::Hook`](crate::Stop::Hook); a batch with a write waiting for a person waits
//!   for it instead). It runs for calls the loop ran, not for a write a confirm applies later.
//! - **`Stop`** may send the model back to work with a reason, at most [`MAX_STOP_HOOK_RUNS`]
//!   times a run.
//! - **`UserPromptSubmit`** and **`SessionStart`** (run by the agent before a turn opens) may add
//!   notes to the person's message, and `UserPromptSubmit` may refuse it.
//!
//! A hook that fails — crashes, times out, answers what cannot be read — is the implementation's
//! to log and to answer as [`Default`]: nothing said, so it can never make a decision looser.

use futures_util::future::{self, BoxFuture};
use serde_json::Value;

use crate::{message::ToolUse, policy::PendingWrite, tool::Tier};

/// How many times a `Stop` hook may send the model back to work in one run.
pub const MAX_STOP_HOOK_RUNS: u32 = 5;

/// What a hook says about a call or a write: run it, ask a person, or refuse it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

/// A `PreToolUse` hook's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolUse {
    pub verdict: Option<Verdict>,
    /// Why, for a refusal: the model reads it.
    pub reason: Option<String>,
    /// The call's input, rewritten.
    pub updated_input: Option<Value>,
    /// Ends the turn after this batch, with this reason (`continue: false`).
    pub stop: Option<String>,
}

/// A `PostToolUse` hook's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostToolUse {
    /// Appended to the result the model reads, each as a bracketed note.
    pub notes: Vec<String>,
    /// Ends the turn after this batch, with this reason.
    pub stop: Option<String>,
}

/// A `UserPromptSubmit` hook's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptSubmit {
    /// Refuses the message, with this reason: no model is called.
    pub block: Option<String>,
    /// Added to the message as bracketed notes.
    pub notes: Vec<String>,
}

/// An operator's hooks. Every method answers "nothing to say" unless overridden; each is told
/// the session — the conversation's id — it runs for.
pub trait Hooks: Send + Sync {
    /// Before a call runs (or is asked about).
    fn pre_tool_use<'a>(
        &'a self,
        _session: &'a str,
        _call: &'a ToolUse,
        _tier: Tier,
    ) -> BoxFuture<'a, PreToolUse> {
        Box::pin(future::ready(PreToolUse::default()))
    }

    /// For a write that would be asked: `Some(true)` allow, `Some(false)` deny, `None` no answer.
    fn permission_request<'a>(
        &'a self,
        _session: &'a str,
        _write: &'a PendingWrite,
    ) -> BoxFuture<'a, Option<bool>> {
        Box::pin(future::ready(None))
    }

    /// After a call ran, with what the model will read.
    fn post_tool_use<'a>(
        &'a self,
        _session: &'a str,
        _call: &'a ToolUse,
        _content: &'a str,
        _is_error: bool,
    ) -> BoxFuture<'a, PostToolUse> {
        Box::pin(future::ready(PostToolUse::default()))
    }

    /// When the model has answered: `Some(reason)` sends it back to work with the reason.
    /// `active` is true when a `Stop` hook already did so in this run.
    fn stop<'a>(
        &'a self,
        _session: &'a str,
        _answer: &'a str,
        _active: bool,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(future::ready(None))
    }

    /// Before a person's message opens a turn.
    fn user_prompt_submit<'a>(&'a self, _session: &'a str, _prompt: &'a str) -> BoxFuture<'a, PromptSubmit> {
        Box::pin(future::ready(PromptSubmit::default()))
    }

    /// Before the first turn of a new conversation: notes for its first message.
    fn session_start<'a>(&'a self, _session: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(future::ready(Vec::new()))
    }
}

/// `text` with `notes` appended, each on its own line in brackets.
pub fn with_notes(text: &str, notes: &[String]) -> String {
    let mut out = text.to_owned();
    for note in notes.iter().filter(|n| !n.trim().is_empty()) {
        out.push_str("\n[");
        out.push_str(note.trim());
        out.push(']');
    }
    out
}

/// Hooks as a turn runs them: the operator's [`Hooks`] and the session they run for.
#[derive(Clone, Copy)]
pub struct HookSite<'a> {
    pub hooks: &'a dyn Hooks,
    /// The conversation's id, as hook input's `session_id`.
    pub session: &'a str,
}

impl std::fmt::Debug for HookSite<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookSite")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// Several [`Hooks`] as one, each asked in order as Claude Code runs a list of handlers: the
/// first deny or block ends the list, a rewritten input is what the next one sees, the strictest
/// verdict stands, notes add up, and the first stop is kept.
#[derive(Default)]
pub struct Stack(pub Vec<std::sync::Arc<dyn Hooks>>);

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stack").field("hooks", &self.0.len()).finish()
    }
}

/// The stricter of two verdicts: deny over ask over allow.
pub fn stricter(a: Option<Verdict>, b: Option<Verdict>) -> Option<Verdict> {
    let rank = |v: Option<Verdict>| match v {
        None => 0,
        Some(Verdict::Allow) => 1,
        Some(Verdict::Ask) => 2,
        Some(Verdict::Deny) => 3,
    };
    if rank(b) > rank(a) { b } else { a }
}

impl Hooks for Stack {
    fn pre_tool_use<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolUse,
        tier: Tier,
    ) -> BoxFuture<'a, PreToolUse> {
        Box::pin(async move {
            let mut answer = PreToolUse::default();
            let mut call = call.clone();
            for hooks in &self.0 {
                let one = hooks.pre_tool_use(session, &call, tier).await;
                if one.verdict == Some(Verdict::Deny) {
                    return PreToolUse {
                        verdict: one.verdict,
                        reason: one.reason,
                        stop: answer.stop.or(one.stop),
                        ..answer
                    };
                }
                answer.verdict = stricter(answer.verdict, one.verdict);
                if let Some(input) = one.updated_input {
                    call.input = input.clone();
                    answer.updated_input = Some(input);
                }
                answer.stop = answer.stop.or(one.stop);
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
            let mut allowed = None;
            for hooks in &self.0 {
                match hooks.permission_request(session, write).await {
                    Some(false) => return Some(false),
                    Some(true) => allowed = Some(true),
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
            let mut answer = PostToolUse::default();
            for hooks in &self.0 {
                let one = hooks.post_tool_use(session, call, content, is_error).await;
                answer.notes.extend(one.notes);
                answer.stop = answer.stop.or(one.stop);
            }
            answer
        })
    }

    fn stop<'a>(&'a self, session: &'a str, answer: &'a str, active: bool) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            for hooks in &self.0 {
                if let Some(reason) = hooks.stop(session, answer, active).await {
                    return Some(reason);
                }
            }
            None
        })
    }

    fn user_prompt_submit<'a>(&'a self, session: &'a str, prompt: &'a str) -> BoxFuture<'a, PromptSubmit> {
        Box::pin(async move {
            let mut answer = PromptSubmit::default();
            for hooks in &self.0 {
                let one = hooks.user_prompt_submit(session, prompt).await;
                answer.notes.extend(one.notes);
                if one.block.is_some() {
                    answer.block = one.block;
                    break;
                }
            }
            answer
        })
    }

    fn session_start<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            let mut notes = Vec::new();
            for hooks in &self.0 {
                notes.extend(hooks.session_start(session).await);
            }
            notes
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    struct Says(PreToolUse, Option<bool>, Vec<String>);

    impl Hooks for Says {
        fn pre_tool_use<'a>(&'a self, _: &'a str, call: &'a ToolUse, _: Tier) -> BoxFuture<'a, PreToolUse> {
            // Echoes the input it saw as its reason, to show what a rewrite passes on.
            let mut answer = self.0.clone();
            answer.reason = answer.reason.or_else(|| Some(call.input.to_string()));
            Box::pin(future::ready(answer))
        }
        fn permission_request<'a>(&'a self, _: &'a str, _: &'a PendingWrite) -> BoxFuture<'a, Option<bool>> {
            Box::pin(future::ready(self.1))
        }
        fn session_start<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Vec<String>> {
            Box::pin(future::ready(self.2.clone()))
        }
    }

    fn says(
        verdict: Option<Verdict>,
        input: Option<serde_json::Value>,
        allow: Option<bool>,
        note: &str,
    ) -> Arc<dyn Hooks> {
        let pre = PreToolUse {
            verdict,
            updated_input: input,
            ..PreToolUse::default()
        };
        Arc::new(Says(pre, allow, vec![note.to_owned()]))
    }

    #[tokio::test]
    async fn a_stack_keeps_the_strictest_answer_and_passes_rewrites_on() {
        let call = ToolUse {
            id: "1".into(),
            name: "set_budget".into(),
            input: json!({"amount_minor": 1}),
        };
        let write = PendingWrite {
            id: "1".into(),
            tool: "set_budget".into(),
            args: json!({}),
            summary: String::new(),
        };
        let stack = Stack(vec![
            says(
                Some(Verdict::Allow),
                Some(json!({"amount_minor": 2})),
                Some(true),
                "a",
            ),
            says(Some(Verdict::Ask), None, None, "b"),
        ]);
        let answer = stack.pre_tool_use("s", &call, Tier::Write).await;
        assert_eq!(answer.verdict, Some(Verdict::Ask));
        assert_eq!(answer.updated_input, Some(json!({"amount_minor": 2})));
        assert_eq!(stack.permission_request("s", &write).await, Some(true));
        assert_eq!(stack.session_start("s").await, ["a", "b"]);

        // A deny ends it, saying what the denying hook saw; a later allow cannot lift it.
        let stack = Stack(vec![
            says(None, Some(json!({"amount_minor": 3})), None, ""),
            says(Some(Verdict::Deny), None, Some(false), ""),
            says(Some(Verdict::Allow), None, Some(true), ""),
        ]);
        let answer = stack.pre_tool_use("s", &call, Tier::Write).await;
        assert_eq!(answer.verdict, Some(Verdict::Deny));
        assert_eq!(answer.reason.as_deref(), Some(r#"{"amount_minor":3}"#));
        assert_eq!(stack.permission_request("s", &write).await, Some(false));
    }
}
