//! One batch of calls: each decided before anything runs (unknown, invalid, refused by a rule or
//! a hook, declined, waiting for a person, or to run), then run — reads together, writes one at a
//! time — and reported.

use std::{sync::Arc, time::Instant};

use futures_util::{StreamExt, stream};
use serde_json::Value;

use super::{
    CallRecord, DECLINED, DENIED_BY_RULE, Deps, READ_CONCURRENCY, ToolOutcome, Turn, TurnEvent, hook_refused,
    result_summary, tool_data, trace,
};
use crate::{
    figures::{Headline, Source, ToolFigure},
    hooks::{PreToolUse, Verdict, with_notes},
    message::{ToolResult, ToolUse},
    policy::{Action, ConfirmPolicy, PendingWrite},
    schema::sorted,
    tool::{Sourced, Tier, Tool, ToolError},
    trace::{ConfirmTrace, ToolCallTrace, TracePayload, clip},
};

/// How `call` was answered, from its decision and what running it came to; the write itself
/// when it waits for a person.
pub(super) fn answered(
    call: &ToolUse,
    decision: Decision,
    ran: Option<Execution>,
    deps: &Deps<'_>,
) -> Result<Answered, Box<PendingWrite>> {
    match decision {
        Decision::Pending(write) => Err(Box::new(write)),
        Decision::Answer {
            content,
            confirmed,
            outcome,
        } => {
            let tier = deps.tools.get(&call.name).map(|t| t.tier());
            Ok(Answered {
                content,
                outcome,
                confirmed,
                latency: None,
                tier,
                figures: Vec::new(),
            })
        }
        Decision::Run { tool, confirmed, .. } => {
            let Execution {
                content,
                is_error,
                latency_ms,
                figures,
            } = ran.unwrap_or_else(|| Execution::error(String::new(), 0));
            // The tool's name and how it went; never its input or result (the ledger's figures).
            tracing::info!(tool = %call.name, call_id = %call.id, is_error, latency_ms, "tool ran");
            Ok(Answered {
                content,
                outcome: ToolOutcome::of_run(is_error),
                confirmed,
                latency: Some(latency_ms),
                tier: Some(tool.tier()),
                figures,
            })
        }
    }
}

/// How one call of a batch was answered, run or not.
pub(super) struct Answered {
    content: String,
    outcome: ToolOutcome,
    /// `Some` for a write: whether the person allowed it.
    confirmed: Option<bool>,
    /// `None` when the tool did not run.
    latency: Option<u64>,
    tier: Option<Tier>,
    /// The figures of a result that ran.
    figures: Vec<ToolFigure>,
}

/// Reports how one call of a batch was answered — the `PostToolUse` hook when it ran, the trace,
/// the event, the call record — and gives the result the model will read.
pub(super) async fn report(
    turn: &mut Turn,
    deps: &Deps<'_>,
    call: &ToolUse,
    answer: Answered,
    hook_stop: &mut Option<String>,
) -> ToolResult {
    let Answered {
        mut content,
        outcome,
        confirmed,
        latency,
        tier,
        figures,
    } = answer;
    let is_error = outcome.is_error();
    if let (Some(site), Some(_)) = (deps.hooks, latency) {
        // It ran: the PostToolUse hook may add notes, or ask to stop after this batch.
        let post = site
            .hooks
            .post_tool_use(site.session, call, &content, is_error)
            .await;
        content = with_notes(&content, &post.notes);
        if hook_stop.is_none() {
            *hook_stop = post.stop;
        }
    }
    let payload = TracePayload::ToolCall(ToolCallTrace {
        name: call.name.clone(),
        tier,
        args: call.input.clone(),
        result: content.clone(),
        confirmed,
        error: is_error,
    });
    trace(turn, deps, payload, latency, None).await;
    // A task's figures are its subagent's, which its own calls showed: none is the task's headline.
    let headline = figures
        .first()
        .filter(|_| call.name != super::subagent::TASK)
        .map(Headline::of);
    (deps.on_event)(TurnEvent::ToolResult {
        id: call.id.clone(),
        name: call.name.clone(),
        outcome,
        summary: result_summary(&content),
        decision: None,
        headline: headline.clone(),
    });
    turn.calls.push(CallRecord {
        id: call.id.clone(),
        name: call.name.clone(),
        args: call.input.clone(),
        tier,
        outcome,
        confirmed,
        result: result_summary(&content),
        headline,
    });
    let room = MAX_TURN_FIGURES.saturating_sub(turn.figures.len());
    turn.figures
        .extend(figures.into_iter().take(room).map(|figure| Source {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            figure,
        }));
    ToolResult {
        tool_use_id: call.id.clone(),
        name: call.name.clone(),
        content,
        is_error,
    }
}

/// What to do with one call of a batch.
pub(super) enum Decision {
    Run {
        tool: Arc<dyn Tool>,
        confirmed: Option<bool>,
        /// A `PreToolUse` hook's rewrite of the input it runs with; `None`: the model's.
        rewritten: Option<Value>,
    },
    Answer {
        content: String,
        confirmed: Option<bool>,
        outcome: ToolOutcome,
    },
    Pending(PendingWrite),
}

/// The most tool figures one turn keeps for checking its answer. They are stored with a turn
/// that waits for a person (at most 256 KiB in all, history included): a few hundred are what an
/// answer can quote, at some 250 bytes each.
pub const MAX_TURN_FIGURES: usize = 300;

/// What running one tool came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// What the model is told.
    pub content: String,
    pub is_error: bool,
    pub latency_ms: u64,
    /// The figures the result states, headline first (none for an error).
    pub figures: Vec<ToolFigure>,
}

impl Execution {
    pub(super) fn error(content: String, latency_ms: u64) -> Self {
        Self {
            content,
            is_error: true,
            latency_ms,
            figures: Vec::new(),
        }
    }
}

pub(super) async fn execute_batch(calls: &[ToolUse], decisions: &[Decision]) -> Vec<Option<Execution>> {
    // The input a call runs with: a hook's rewrite, else the model's.
    let input_of =
        |call: &ToolUse, rewritten: &Option<Value>| rewritten.as_ref().unwrap_or(&call.input).clone();
    // Reads together (bounded), then writes one at a time, in call order.
    let reads: Vec<(usize, Arc<dyn Tool>, Value)> = decisions
        .iter()
        .zip(calls)
        .enumerate()
        .filter_map(|(i, (d, call))| match d {
            Decision::Run { tool, rewritten, .. }
                if tool.tier() == Tier::Read && tool.subagents().is_none() =>
            {
                Some((i, Arc::clone(tool), input_of(call, rewritten)))
            }
            _ => None,
        })
        .collect();
    let mut outcomes: Vec<Option<Execution>> = vec![None; decisions.len()];
    // Each job owns its tool and input: a stream of futures borrowing from here would make
    // the turn's future `Send` only for one lifetime, and the functions spawn turns.
    let jobs: Vec<futures_util::future::BoxFuture<'static, (usize, Execution)>> = reads
        .into_iter()
        .map(|(i, tool, input)| Box::pin(async move { (i, execute(tool.as_ref(), input).await) }) as _)
        .collect();
    let read_results: Vec<(usize, Execution)> = stream::iter(jobs).buffered(READ_CONCURRENCY).collect().await;
    for (i, outcome) in read_results {
        if let Some(slot) = outcomes.get_mut(i) {
            *slot = Some(outcome);
        }
    }
    for ((decision, call), slot) in decisions.iter().zip(calls).zip(outcomes.iter_mut()) {
        if let Decision::Run { tool, rewritten, .. } = decision
            && tool.tier() == Tier::Write
        {
            *slot = Some(execute(tool.as_ref(), input_of(call, rewritten)).await);
        }
    }

    outcomes
}

/// Settles one call before anything runs: unknown, invalid, refused by a rule, declined or
/// pending, or to run.
pub(super) async fn decide(
    turn: &mut Turn,
    deps: &Deps<'_>,
    call: &ToolUse,
    tool: Option<Arc<dyn Tool>>,
    hook_stop: &mut Option<String>,
) -> Decision {
    let Some(tool) = tool else {
        let content = format!(
            "There is no tool named {:?}. The available tools are: {}.",
            call.name,
            deps.tools.names().join(", ")
        );
        return Decision::Answer {
            content,
            confirmed: None,
            outcome: ToolOutcome::Failed,
        };
    };
    let tier = tool.tier();
    let pre = match deps.hooks {
        Some(site) => site.hooks.pre_tool_use(site.session, call, tier).await,
        None => PreToolUse::default(),
    };
    if hook_stop.is_none() {
        hook_stop.clone_from(&pre.stop);
    }
    // The model's input, or a hook's rewrite of it (copied only when rewritten).
    let rewritten = pre.updated_input;
    let input = rewritten.as_ref().unwrap_or(&call.input);
    let problems = tool.validate(input);
    if !problems.is_empty() {
        let content = format!(
            "Invalid arguments for {}: {}. Fix the arguments and call the tool again.",
            call.name,
            problems.join("; ")
        );
        return Decision::Answer {
            content,
            confirmed: None,
            outcome: ToolOutcome::Failed,
        };
    }
    let action = deps.rules.decide(&call.name, tier, input);
    let summary = tool.describe(input).await.unwrap_or_else(|| call.name.clone());
    let write = PendingWrite {
        id: call.id.clone(),
        tool: call.name.clone(),
        args: input.clone(),
        summary,
    };
    let refused = |content: String, outcome| Decision::Answer {
        content,
        confirmed: (tier == Tier::Write).then_some(false),
        outcome,
    };
    // A deny rule first: nothing a hook says lifts it.
    if action == Action::Deny {
        confirm_event(turn, deps, &write, Some(false)).await;
        return refused(DENIED_BY_RULE.to_owned(), ToolOutcome::DeniedByRule);
    }
    if pre.verdict == Some(Verdict::Deny) {
        if tier == Tier::Write {
            confirm_event(turn, deps, &write, Some(false)).await;
        }
        let reason = pre.reason.unwrap_or_else(|| "no reason given".to_owned());
        return refused(hook_refused(&reason), ToolOutcome::RefusedByHook);
    }
    let run = |tool, confirmed| Decision::Run {
        tool,
        confirmed,
        rewritten: rewritten.clone(),
    };
    if tier == Tier::Read {
        return run(tool, None);
    }
    if action == Action::Allow {
        return run(tool, Some(true));
    }
    // A write to ask about. Under Suspend a person decides, whatever a hook allows; a hook's
    // deny still declines it at once.
    let answer = match (deps.policy, pre.verdict) {
        (ConfirmPolicy::Suspend, _) | (_, Some(Verdict::Ask) | None) => match deps.hooks {
            Some(site) => site.hooks.permission_request(site.session, &write).await,
            None => None,
        },
        (_, Some(Verdict::Allow)) => Some(true),
        (_, Some(Verdict::Deny)) => Some(false),
    };
    let allowed = match (deps.policy, answer) {
        (_, Some(false)) | (ConfirmPolicy::AutoDeny, None) => false,
        (ConfirmPolicy::Suspend, _) => return Decision::Pending(write),
        (_, Some(true)) | (ConfirmPolicy::AutoAllow, None) => true,
        (ConfirmPolicy::Inline(ask), None) => ask(&write).await,
    };
    confirm_event(turn, deps, &write, Some(allowed)).await;
    if allowed {
        run(tool, Some(true))
    } else {
        refused(DECLINED.to_owned(), ToolOutcome::Declined)
    }
}

async fn confirm_event(turn: &mut Turn, deps: &Deps<'_>, write: &PendingWrite, allowed: Option<bool>) {
    let payload = TracePayload::Confirm(ConfirmTrace::of(write, allowed));
    trace(turn, deps, payload, None, None).await;
}

/// Runs a tool: what the model is told, whether it is an error, how long it took. A read that
/// fails with a transient error is tried once more.
pub async fn execute(tool: &dyn Tool, input: Value) -> Execution {
    let started = Instant::now();
    let mut outcome = tool.execute_sourced(input.clone()).await;
    if tool.tier() == Tier::Read && outcome.as_ref().is_err_and(is_transient) {
        outcome = tool.execute_sourced(input).await;
    }
    let latency = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match outcome {
        Ok(Sourced { value, figures }) => Execution {
            content: tool_data(&value),
            is_error: false,
            latency_ms: latency,
            figures,
        },
        Err(ToolError::InvalidInput(problems)) => Execution::error(
            format!(
                "Invalid arguments for {}: {}. Fix the arguments and call the tool again.",
                tool.name(),
                problems.join("; ")
            ),
            latency,
        ),
        Err(ToolError::Refused(message)) => Execution::error(format!("The tool refused: {message}"), latency),
        Err(e @ (ToolError::Transient(_) | ToolError::Failed(_))) => {
            Execution::error(format!("The tool failed: {e}"), latency)
        }
    }
}

/// A transient failure, by kind or by the words of its message (HTTP 429 or 5xx, connection
/// resets, timeouts), as the retry judge of the loop's design reads them.
pub fn is_transient(error: &ToolError) -> bool {
    match error {
        ToolError::Transient(_) => true,
        ToolError::Failed(message) => {
            let lower = message.to_lowercase();
            let status = lower
                .split(|c: char| !c.is_ascii_digit())
                .any(|w| w == "429" || (w.len() == 3 && w.starts_with('5')));
            status
                || [
                    "econnreset",
                    "etimedout",
                    "econnrefused",
                    "eai_again",
                    "connection reset",
                    "broken pipe",
                ]
                .iter()
                .any(|p| lower.contains(p))
                || ["timeout", "timed out", "hang up", "temporarily"]
                    .iter()
                    .any(|p| lower.contains(p))
                || lower
                    .split(|c: char| !c.is_alphanumeric())
                    .any(|w| w == "terminated")
        }
        ToolError::InvalidInput(_) | ToolError::Refused(_) => false,
    }
}

/// The loop's own stop check, no model involved: the same call (tool and sorted input) failing
/// with the same outcome at least three times among the last eight calls. `Some(reason)` stops.
pub fn repeat_check(calls: &[CallRecord]) -> Option<String> {
    let recent = calls.get(calls.len().saturating_sub(8)..).unwrap_or_default();
    for (i, call) in recent.iter().enumerate().filter(|(_, c)| c.is_error()) {
        let key = |c: &CallRecord| (c.name.clone(), sorted(&c.args).to_string(), c.result.clone());
        let repeats = recent
            .iter()
            .skip(i)
            .filter(|c| c.is_error() && key(c) == key(call))
            .count();
        if repeats >= 3 {
            return Some(format!(
                "{} failed the same way 3 times ({})",
                call.name,
                clip(&call.result, 120)
            ));
        }
    }
    None
}
