//! The turn as a value: what it has done, where it is, how it ended — the form stored while it
//! waits for a person, and read back in another process.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    figures::{FigureCheck, Headline, Source},
    ids::RunId,
    message::{Message, ToolResult, ToolUse, Usage},
    policy::PendingWrite,
    pricing::MicroUsd,
    tool::Tier,
    turn::subagent::SubRun,
};

/// The version of the stored form of a turn. Older versions stay readable: version 1 (before a
/// call record said how its call ended) is brought up to date as it is read.
pub const STATE_VERSION: u32 = 2;
/// Model calls in one turn before tools are taken away.
pub const MAX_ITERATIONS: u32 = 12;
pub const MAX_OUTPUT_TOKENS: u32 = 16_000;
/// The most room a reply cut off inside a tool call is given on its one retry.
pub const MAX_RETRY_OUTPUT_TOKENS: u32 = 64_000;
/// The most characters of one tool result the model sees.
pub const MAX_TOOL_OUTPUT: usize = 40_000;
/// Read tools of one batch running at once.
pub const READ_CONCURRENCY: usize = 4;
/// How long a write waits for a person, in seconds.
pub const CONFIRM_TTL_SECONDS: i64 = 60 * 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Error,
    Blocked,
    Aborted,
    Stuck,
}

impl RunStatus {
    /// The name stored in `trace_runs.status` and shown in reports (its serde name).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Blocked => "blocked",
            Self::Aborted => "aborted",
            Self::Stuck => "stuck",
        }
    }
}

// The loop sets it where it decides the call. One place still reads words: a confirm retried
// after a crash tells a stored declined or expired result by its fixed sentence (`decision_of`
// in kakeibo-agent). This comment stays out of the doc comment, which is the wire schema's text.
/// How one tool call ended: the one vocabulary every channel reports (the web's stream, the
/// CLI, ACP, the library, the evaluations), never read back from the words the model was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// It ran and succeeded.
    Ran,
    /// It failed: an unknown tool, arguments that do not fit, or the tool's own error.
    Failed,
    /// A person declined the write: it did not run.
    Declined,
    /// The confirmation expired before a person answered: it did not run.
    Expired,
    /// A permission rule refused it: it did not run.
    DeniedByRule,
    /// An operator's hook refused it: it did not run.
    RefusedByHook,
}

impl ToolOutcome {
    /// Whether the model is told of an error (only a failure; a refusal is not one).
    pub const fn is_error(self) -> bool {
        matches!(self, Self::Failed)
    }

    /// The outcome of a call that ran: `is_error` is the tool's own verdict.
    pub const fn of_run(is_error: bool) -> Self {
        if is_error { Self::Failed } else { Self::Ran }
    }

    /// In a few words, why a refused call did not run; `None` when it ran or failed.
    pub const fn not_run(self) -> Option<&'static str> {
        match self {
            Self::Declined => Some("declined: not run"),
            Self::Expired => Some("expired: not run"),
            Self::DeniedByRule => Some("refused by a permission rule: not run"),
            Self::RefusedByHook => Some("refused by a hook: not run"),
            Self::Ran | Self::Failed => None,
        }
    }

    /// The serde name: `ran`, `failed`, `declined`, …
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ran => "ran",
            Self::Failed => "failed",
            Self::Declined => "declined",
            Self::Expired => "expired",
            Self::DeniedByRule => "denied_by_rule",
            Self::RefusedByHook => "refused_by_hook",
        }
    }
}

impl std::fmt::Display for ToolOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tool call of the run, as reported and as judged for being stuck.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub id: String,
    pub name: String,
    pub args: Value,
    pub tier: Option<Tier>,
    pub outcome: ToolOutcome,
    /// Whether a person (or a policy) allowed it; `None` for reads.
    pub confirmed: Option<bool>,
    /// What the model was told, clipped ([`super::result_summary`]).
    pub result: String,
    /// The result's headline figure, when it states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<Headline>,
}

impl CallRecord {
    /// Whether the call failed.
    pub const fn is_error(&self) -> bool {
        self.outcome.is_error()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// Next: one provider call.
    CallModel,
    /// Next: run the calls of the last model reply.
    RunTools { calls: Vec<ToolUse> },
    /// Waiting for a person to decide `pending`; `done` holds the batch's other results.
    AwaitConfirm {
        calls: Vec<ToolUse>,
        done: Vec<ToolResult>,
        pending: Vec<PendingWrite>,
        expires_at: i64,
    },
    Finished {
        status: RunStatus,
        answer: String,
        /// Why the turn ended (older stored turns read as `End`).
        #[serde(default)]
        stop: Stop,
    },
}

/// Why a finished turn ended: the answer, or what stopped it short.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The model answered.
    #[default]
    End,
    /// The iteration cap was reached (the last call ran without tools).
    IterationLimit,
    /// The same calls kept coming back.
    Stuck,
    /// The answer reached the output length limit.
    MaxTokens,
    /// The provider blocked the request.
    Blocked,
    /// The provider failed or its reply ended in an error.
    ProviderError,
    /// The site's daily model budget had no room for the next call (nothing was sent).
    DailyCap,
    /// The daily budget could not admit the next call — it could not be read or charged, or the
    /// model has no list price — so nothing was sent.
    BudgetUnavailable,
    /// The caller stopped the run ([`drive_until`]); what ran before is kept.
    Cancelled,
    /// A hook ended the run: it refused the person's message, or asked to stop after a tool.
    Hook,
}

/// A turn of conversation, whole: everything needed to go on from here, in any process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub(super) version: u32,
    pub(super) run_id: RunId,
    /// The `seq` of the next trace event: a resumed run continues its numbering.
    pub(super) next_seq: u32,
    /// Every message so far; while waiting, the last is the model's with the pending calls.
    pub(super) history: Vec<Message>,
    pub(super) iteration: u32,
    pub(super) usage: Usage,
    pub(super) cost: MicroUsd,
    pub(super) max_tokens: u32,
    pub(super) cut_off_retried: bool,
    /// After the iteration cap: one more model call, with no tools.
    pub(super) tools_off: bool,
    /// How many times a `Stop` hook sent the model back to work.
    #[serde(default)]
    pub(super) stop_hook_runs: u32,
    pub(super) calls: Vec<CallRecord>,
    /// Every figure the turn's tools returned, for checking its answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) figures: Vec<Source>,
    /// The answer's figures, checked, once it answered with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) checked: Option<FigureCheck>,
    /// The ungrounded figures of an answer the model was asked to correct (at most once a turn).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) corrected: Vec<String>,
    /// The subagents its `task` calls ran, in order (their usage is counted in the turn's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) subruns: Vec<SubRun>,
    pub(super) phase: Phase,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("the stored turn is version {found}; this kakeibo reads versions up to {STATE_VERSION}")]
    NewerVersion { found: u32 },
    #[error("the stored turn cannot be read: {0}")]
    Unreadable(String),
    #[error("the turn is not waiting for a confirmation")]
    NotWaiting,
    #[error("no decision for the pending call {0}")]
    MissingResult(String),
}

impl Turn {
    /// A new turn: `history` (earlier turns) and the person's new message.
    pub fn start(run_id: RunId, mut history: Vec<Message>, user: Message) -> Self {
        history.push(user);
        Self {
            version: STATE_VERSION,
            run_id,
            next_seq: 0,
            history,
            iteration: 0,
            usage: Usage::default(),
            cost: MicroUsd::default(),
            max_tokens: MAX_OUTPUT_TOKENS,
            cut_off_retried: false,
            tools_off: false,
            stop_hook_runs: 0,
            calls: Vec::new(),
            figures: Vec::new(),
            checked: None,
            corrected: Vec::new(),
            subruns: Vec::new(),
            phase: Phase::CallModel,
        }
    }

    /// A turn a hook refused before any model call: it finishes at once, blocked, saying why.
    #[must_use]
    pub fn refused_by_hook(mut self, reason: &str) -> Self {
        self.finish(
            RunStatus::Blocked,
            Stop::Hook,
            format!("A hook of this kakeibo refused the message: {reason}"),
        );
        self
    }

    /// The turn ended where it stands because a hook asked (`continue: false` after a tool).
    #[must_use]
    pub fn stopped_by_hook(mut self, reason: &str) -> Self {
        self.finish(
            RunStatus::Aborted,
            Stop::Hook,
            format!("A hook of this kakeibo stopped the run: {reason}"),
        );
        self
    }

    /// The stored form.
    pub fn to_json(&self) -> Result<Value, StateError> {
        serde_json::to_value(self).map_err(|e| StateError::Unreadable(e.to_string()))
    }

    /// Reads a stored turn: any version up to [`STATE_VERSION`], never a newer one. An older
    /// form is brought up to date first.
    pub fn from_json(mut value: Value) -> Result<Self, StateError> {
        let found = value.get("version").and_then(Value::as_u64).unwrap_or(0);
        let found = u32::try_from(found).unwrap_or(u32::MAX);
        if found > STATE_VERSION {
            return Err(StateError::NewerVersion { found });
        }
        if found < 2 {
            from_version_1(&mut value);
        }
        serde_json::from_value(value).map_err(|e| StateError::Unreadable(e.to_string()))
    }

    /// Goes on after the pending writes were decided: `results` holds one result per pending
    /// call (approved and run, declined, or expired). All results of the batch return in one
    /// user message in call order, and the turn calls the model again.
    pub fn resume(mut self, results: Vec<ToolResult>) -> Result<Self, StateError> {
        let Phase::AwaitConfirm {
            calls,
            mut done,
            pending,
            ..
        } = std::mem::replace(&mut self.phase, Phase::CallModel)
        else {
            return Err(StateError::NotWaiting);
        };
        if let Some(missing) = pending
            .iter()
            .find(|p| !results.iter().any(|r| r.tool_use_id == p.id))
        {
            return Err(StateError::MissingResult(missing.id.clone()));
        }
        // A write a person allowed ran in another process: its figures are read back from the
        // result the model will read (every amount in it; no rows make a write's figures).
        for result in results.iter().filter(|r| !r.is_error) {
            if let Some(value) = super::text::data_of(&result.content) {
                let room = super::calls::MAX_TURN_FIGURES.saturating_sub(self.figures.len());
                let found = crate::figures::amounts_in(&value, room);
                self.figures.extend(found.into_iter().map(|figure| Source {
                    call_id: result.tool_use_id.clone(),
                    tool: result.name.clone(),
                    figure,
                }));
            }
        }
        done.extend(results);
        let ordered = calls
            .iter()
            .filter_map(|call| done.iter().find(|r| r.tool_use_id == call.id).cloned());
        self.history.push(Message::results(ordered));
        Ok(self)
    }

    /// The answer and status, once finished.
    pub fn finished(&self) -> Option<(RunStatus, &str)> {
        match &self.phase {
            Phase::Finished { status, answer, .. } => Some((*status, answer)),
            _ => None,
        }
    }

    /// Why the turn ended, once it has.
    pub fn stop(&self) -> Option<Stop> {
        match &self.phase {
            Phase::Finished { stop, .. } => Some(*stop),
            _ => None,
        }
    }

    pub(super) fn finish(&mut self, status: RunStatus, stop: Stop, answer: impl Into<String>) {
        self.phase = Phase::Finished {
            status,
            answer: answer.into(),
            stop,
        };
    }

    /// Where the turn is: calling the model, running tools, waiting for a person, or finished.
    /// Only the loop and [`Turn::resume`] move it on.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// Every message of the conversation so far, this turn's included.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The model calls made so far in this turn.
    pub fn iteration(&self) -> u32 {
        self.iteration
    }

    /// The tokens the turn's model calls used, summed.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// What the turn's model calls cost at list price, summed.
    pub fn cost(&self) -> MicroUsd {
        self.cost
    }

    /// Every tool call of the turn, in order, with how it ended.
    /// The subagents the turn's `task` calls ran, in order.
    pub fn subruns(&self) -> &[SubRun] {
        &self.subruns
    }

    pub fn calls(&self) -> &[CallRecord] {
        &self.calls
    }

    /// The figures the turn's tools returned, in call order.
    pub fn tool_figures(&self) -> &[Source] {
        &self.figures
    }

    /// The answer's figures checked against [`Turn::tool_figures`]; `None` until it answered,
    /// and when the answer states no figure.
    pub fn figures(&self) -> Option<&FigureCheck> {
        self.checked.as_ref()
    }

    /// The run this turn belongs to.
    pub fn run_id(&self) -> RunId {
        self.run_id
    }

    /// The version of the stored form ([`STATE_VERSION`]: an older one read is brought up to date).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Numbers trace events from `seq` on: for events recorded before the turn started (a
    /// summary eviction while fitting its history). Never goes back.
    pub fn continue_seq_from(&mut self, seq: u32) {
        self.next_seq = self.next_seq.max(seq);
    }

    /// The `seq` for the next trace event of this run, taken.
    pub fn take_seq(&mut self) -> u32 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }
}

/// What became of a write that waited for a person (the `decision` of its `tool_result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteDecision {
    /// The person allowed it and it ran (its result may still be an error).
    Allowed,
    /// The person declined it (or sent no decision for it): it did not run.
    Declined,
    /// The confirmation expired before the person answered: it did not run.
    Expired,
}

impl WriteDecision {
    /// How the call ended: a write allowed ran (`is_error` is its own verdict); one declined or
    /// expired did not.
    pub const fn outcome(self, is_error: bool) -> ToolOutcome {
        match self {
            Self::Allowed => ToolOutcome::of_run(is_error),
            Self::Declined => ToolOutcome::Declined,
            Self::Expired => ToolOutcome::Expired,
        }
    }

    /// The serde name: `allowed`, `declined`, `expired`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Declined => "declined",
            Self::Expired => "expired",
        }
    }
}

/// What a turn tells its caller as it goes (for streaming to a person).
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    Token(String),
    ToolCall {
        id: String,
        name: String,
        input: Value,
        tier: Option<Tier>,
    },
    ToolResult {
        id: String,
        name: String,
        outcome: ToolOutcome,
        /// The result, clipped to 200 characters ([`super::result_summary`]).
        summary: String,
        /// For a write that waited for a person, what they decided; `None` for every call the
        /// loop itself ran or answered (reads, and writes settled by a policy or a rule).
        decision: Option<WriteDecision>,
        /// The result's headline figure, when it states one.
        headline: Option<Headline>,
    },
    ConfirmRequest(Vec<PendingWrite>),
    /// The answer's figures, checked (only for an answer that states one).
    Figures(FigureCheck),
    /// What a subagent did, under the parent's `task` call `call_id`: its tool calls and results.
    Subagent {
        call_id: String,
        event: Box<TurnEvent>,
    },
    /// The answer so far states these figures, which no tool returned: the model is asked once
    /// to correct it, and the corrected answer follows (`FIGURES=retry`).
    Correcting(Vec<String>),
}

/// Milliseconds since 1970.
pub fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Seconds since 1970.
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A version 1 turn in the form of version 2: each call record's clipped result moves from
/// `outcome` to `result`, and `outcome` says how the call ended. Version 1 kept only whether it
/// was an error, and whether a person allowed it: a call not allowed was refused one way or
/// another (read as declined); any other call ran, failed or not.
fn from_version_1(value: &mut Value) {
    if let Some(calls) = value.get_mut("calls").and_then(Value::as_array_mut) {
        for call in calls.iter_mut().filter_map(Value::as_object_mut) {
            let failed = call.remove("is_error").and_then(|e| e.as_bool()).unwrap_or(false);
            let refused = call.get("confirmed").and_then(Value::as_bool) == Some(false);
            let outcome = if refused {
                ToolOutcome::Declined
            } else {
                ToolOutcome::of_run(failed)
            };
            let result = call
                .remove("outcome")
                .unwrap_or_else(|| Value::String(String::new()));
            call.insert("result".to_owned(), result);
            call.insert("outcome".to_owned(), Value::String(outcome.as_str().to_owned()));
        }
    }
    if let Some(version) = value.get_mut("version") {
        *version = Value::from(STATE_VERSION);
    }
}
