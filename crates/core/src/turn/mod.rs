//! The turn: a value that advances one phase at a time.
//!
//! [`step`] moves a [`Turn`] through [`Phase`]s — call the model, run the tools it asked for,
//! wait for a person, finish — and [`drive`] steps until the turn finishes or waits. Because the
//! whole state is this value, a turn waiting for confirmation can be stored, and another process
//! can load it and go on ([`Turn::resume`]).
//!
//! This file is the driver. The turn's stored form is in `state.rs`, how one batch of calls is
//! decided and run in `calls.rs`, and what the model and a person are told in `text.rs`.

mod calls;
mod state;
pub mod subagent;
#[cfg(test)]
mod tests;
mod text;

use std::{sync::Arc, time::Instant};

use futures_util::{FutureExt as _, future};

use calls::{Decision, answered, decide, execute_batch, report};
pub use calls::{execute, is_transient, repeat_check};
pub use state::{
    CONFIRM_TTL_SECONDS, CallRecord, MAX_ITERATIONS, MAX_OUTPUT_TOKENS, MAX_RETRY_OUTPUT_TOKENS,
    MAX_TOOL_OUTPUT, Phase, READ_CONCURRENCY, RunStatus, STATE_VERSION, StateError, Stop, ToolOutcome, Turn,
    TurnEvent, WriteDecision, now_unix, now_unix_ms,
};
pub use text::{
    CANCELLED, DECLINED, DENIED_BY_RULE, EXPIRED, declined_result, expired_result, hook_refused,
    plain_summary, result_summary, tool_data,
};
use text::{ITERATION_LIMIT, error_result};

use crate::{
    budget::{Budget, Hold, Refused, worst_case},
    context::estimate_tokens,
    hooks::{HookSite, MAX_STOP_HOOK_RUNS},
    message::{Block, Message, StopReason, ToolUse, Usage},
    policy::{ConfirmPolicy, PermissionRules},
    pricing::{cost, cost_at},
    provider::{ModelRequest, Provider, complete},
    registry::ToolRegistry,
    trace::{ConfirmTrace, ErrorTrace, ModelCallTrace, TraceEvent, TracePayload, Tracer},
};

/// What a turn runs with.
pub struct Deps<'a> {
    pub provider: &'a dyn Provider,
    /// Where each model call reserves its worst case first; `None` spends without asking.
    pub budget: Option<&'a dyn Budget>,
    pub tools: &'a ToolRegistry,
    pub system: &'a str,
    pub policy: &'a ConfirmPolicy,
    pub rules: &'a PermissionRules,
    pub tracer: &'a dyn Tracer,
    pub on_event: &'a (dyn Fn(TurnEvent) + Send + Sync),
    /// The operator's hooks, if any ([`crate::hooks`]).
    pub hooks: Option<HookSite<'a>>,
    /// The decision layer's stop judge, asked when the repeat check lets a run go on; `None`:
    /// the repeat check alone.
    pub stop_judge: Option<&'a dyn StopJudge>,
    /// What to do with an answer that states a figure its turn's tools did not return.
    pub figures: FiguresPolicy,
    /// The model calls a turn may make before its tools are taken away and it must answer
    /// ([`MAX_ITERATIONS`] unless a caller asks for fewer: the CLI's `--max-turns`).
    pub max_iterations: u32,
}

/// What the loop does with an answer that states a figure no tool of its turn returned
/// (`FIGURES=flag|retry`). Never a silent rewrite: the person always sees what happened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FiguresPolicy {
    /// Mark the figure as ungrounded, and leave the answer as it is.
    #[default]
    Flag,
    /// Once a turn, ask the model to correct the answer, told which figures were not found (a
    /// second model call, traced and priced); the corrected answer says it was corrected, and
    /// any figure still ungrounded is marked.
    Retry,
}

impl FiguresPolicy {
    /// `flag` or `retry`, in any case.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "flag" => Ok(Self::Flag),
            "retry" => Ok(Self::Retry),
            other => Err(format!(
                "{other:?} is not a figures policy: flag (mark, the default) or retry (ask the model once to correct)"
            )),
        }
    }
}

impl std::fmt::Debug for Deps<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deps")
            .field("provider", &self.provider.name())
            .field("policy", self.policy)
            .finish_non_exhaustive()
    }
}

/// Steps until the turn finishes or waits for a confirmation.
pub async fn drive(mut turn: Turn, deps: &Deps<'_>) -> Turn {
    while matches!(turn.phase, Phase::CallModel | Phase::RunTools { .. }) {
        turn = step(turn, deps).await;
    }
    turn
}

/// [`drive`], until `stop` completes. A model call in flight is given up (it has changed nothing
/// but the text streamed so far); tools that started run to their end and their results are kept;
/// a turn that reaches a confirmation still waits for it. A stopped turn finishes `aborted` with
/// [`Stop::Cancelled`], its history and events those of the steps that completed.
pub async fn drive_until(
    mut turn: Turn,
    deps: &Deps<'_>,
    mut stop: std::pin::Pin<&mut (dyn std::future::Future<Output = ()> + Send + '_)>,
) -> Turn {
    loop {
        match turn.phase {
            Phase::CallModel => {
                let before = turn.clone();
                match future::select(Box::pin(step(turn, deps)), stop.as_mut()).await {
                    future::Either::Left((next, _)) => turn = next,
                    future::Either::Right(((), _)) => return cancelled(before),
                }
            }
            Phase::RunTools { .. } => {
                turn = step(turn, deps).await;
                if matches!(turn.phase, Phase::CallModel) && stop.as_mut().now_or_never().is_some() {
                    return cancelled(turn);
                }
            }
            Phase::AwaitConfirm { .. } | Phase::Finished { .. } => return turn,
        }
    }
}

fn cancelled(mut turn: Turn) -> Turn {
    turn.finish(RunStatus::Aborted, Stop::Cancelled, CANCELLED);
    turn
}

/// Advances one phase.
pub async fn step(mut turn: Turn, deps: &Deps<'_>) -> Turn {
    match std::mem::replace(&mut turn.phase, Phase::CallModel) {
        Phase::CallModel => call_model(turn, deps).await,
        Phase::RunTools { calls } => run_tools(turn, calls, deps).await,
        waiting_or_done => {
            turn.phase = waiting_or_done;
            turn
        }
    }
}

async fn trace(
    turn: &mut Turn,
    deps: &Deps<'_>,
    payload: TracePayload,
    latency_ms: Option<u64>,
    usage: Option<Usage>,
) {
    let seq = turn.take_seq();
    let event = TraceEvent {
        run_id: turn.run_id,
        seq,
        payload,
        latency_ms,
        usage,
        thought_summary: None,
    };
    deps.tracer.record(event).await;
}

#[tracing::instrument(name = "model_call", skip_all, fields(iteration = turn.iteration + 1, model = deps.provider.model()))]
async fn call_model(mut turn: Turn, deps: &Deps<'_>) -> Turn {
    let tools = if turn.tools_off {
        Arc::from([])
    } else {
        deps.tools.declared()
    };
    let request = ModelRequest {
        system: deps.system.to_owned(),
        messages: turn.history.clone(),
        tools,
        max_tokens: turn.max_tokens,
    };
    let (hold, input_estimate) = match reserve(&turn, deps, &request).await {
        Ok(reserved) => reserved,
        Err(refused) => return refuse(turn, deps, refused).await,
    };
    let started = Instant::now();
    let mut on_text = |text: &str| (deps.on_event)(TurnEvent::Token(text.to_owned()));
    let result = complete(deps.provider, &request, &mut on_text).await;
    let latency = u64::try_from(started.elapsed().as_millis()).ok();
    if let (Some(budget), Some(hold)) = (deps.budget, hold) {
        // A failed call may still have been billed for its input: it is settled at the estimate.
        let usage = match &result {
            Ok(response) => response.usage,
            Err(_) => Usage {
                input_tokens: input_estimate,
                ..Usage::default()
            },
        };
        budget
            .settle(hold, cost_at(deps.provider.price(), &usage).0)
            .await;
    }
    let response = match result {
        Ok(response) => response,
        Err(e) => {
            tracing::warn!(error = %e, latency_ms = latency, "the model could not answer");
            trace(
                &mut turn,
                deps,
                TracePayload::Error(ErrorTrace::Provider { error: e.to_string() }),
                latency,
                None,
            )
            .await;
            turn.finish(
                RunStatus::Error,
                Stop::ProviderError,
                format!("The model could not answer: {e}"),
            );
            return turn;
        }
    };
    tracing::info!(
        stop = ?response.stop_reason,
        input_tokens = response.usage.input_tokens,
        output_tokens = response.usage.output_tokens,
        latency_ms = latency,
        "model answered"
    );
    turn.usage += response.usage;
    turn.cost += cost(deps.provider.model(), &response.usage).0;
    turn.iteration += 1;
    let thoughts: Vec<&str> = response
        .message
        .content
        .iter()
        .filter_map(|b| {
            if let Block::ThoughtSummary { text, .. } = b {
                Some(text.as_str())
            } else {
                None
            }
        })
        .collect();
    let seq = turn.take_seq();
    let traced = TraceEvent {
        run_id: turn.run_id,
        seq,
        payload: TracePayload::ModelCall(ModelCallTrace {
            iteration: turn.iteration,
            model: deps.provider.model().to_owned(),
            model_version: response.model_version.clone(),
            stop_reason: response.stop_reason,
            message_count: request.messages.len(),
            content: response.message.content.clone(),
            figures: None,
        }),
        latency_ms: latency,
        usage: Some(response.usage),
        thought_summary: (!thoughts.is_empty()).then(|| thoughts.join("\n")),
    };

    after_reply(turn, deps, response, traced).await
}

/// Reserves the worst case of `request` when the turn has a budget; the hold (if any) and the
/// input estimate it was made from.
async fn reserve(
    turn: &Turn,
    deps: &Deps<'_>,
    request: &ModelRequest,
) -> Result<(Option<Hold>, u64), Refused> {
    let Some(budget) = deps.budget else {
        return Ok((None, 0));
    };
    let estimate = estimate_tokens(
        &deps.provider.divisors(),
        &request.system,
        &request.messages,
        &request.tools,
    );
    let amount =
        worst_case(deps.provider.price(), estimate, request.max_tokens).ok_or_else(|| Refused::Unpriced {
            model: deps.provider.model().to_owned(),
        })?;
    let hold = budget.reserve(turn.run_id, amount).await?;
    Ok((Some(hold), estimate))
}

/// Ends a turn whose next model call the budget refused: what it read so far stays in the
/// history, nothing was sent.
async fn refuse(mut turn: Turn, deps: &Deps<'_>, refused: Refused) -> Turn {
    tracing::warn!(reason = %refused, "the budget refused a model call");
    trace(
        &mut turn,
        deps,
        TracePayload::Error(ErrorTrace::Budget {
            reason: refused.to_string(),
        }),
        None,
        None,
    )
    .await;
    let (status, stop) = match refused {
        Refused::DailyCap => (RunStatus::Aborted, Stop::DailyCap),
        Refused::Unpriced { .. } | Refused::Unavailable(_) => (RunStatus::Error, Stop::BudgetUnavailable),
    };
    let mut text = refused.to_string();
    if let Some(first) = text.get(..1) {
        text = format!("{}{}.", first.to_uppercase(), text.get(1..).unwrap_or_default());
    }
    turn.finish(status, stop, text);
    turn
}

/// Where a model reply leads: tools to run, a retry with more room, or the end of the turn.
/// `traced` is the call's trace event: recorded first, but for a reply that may be the answer,
/// whose event carries the answer's figures once they are checked.
async fn after_reply(
    mut turn: Turn,
    deps: &Deps<'_>,
    response: crate::provider::ModelResponse,
    traced: TraceEvent,
) -> Turn {
    let calls = response.message.tool_uses();
    let may_answer = matches!(response.stop_reason, StopReason::End | StopReason::ToolUse)
        && calls.is_empty()
        && !turn.tools_off;
    let mut traced = Some(traced);
    if !may_answer && let Some(event) = traced.take() {
        deps.tracer.record(event).await;
    }
    match response.stop_reason {
        StopReason::Blocked => {
            trace(
                &mut turn,
                deps,
                TracePayload::Error(ErrorTrace::Blocked),
                None,
                None,
            )
            .await;
            turn.finish(
                RunStatus::Blocked,
                Stop::Blocked,
                "I can't help with that: the model provider blocked this request.",
            );
        }
        StopReason::MaxTokens if !calls.is_empty() && !turn.cut_off_retried => {
            // Cut off inside a tool call: ask once more with twice the room.
            turn.cut_off_retried = true;
            turn.max_tokens = (turn.max_tokens * 2).min(MAX_RETRY_OUTPUT_TOKENS);
            turn.phase = Phase::CallModel;
        }
        StopReason::MaxTokens => {
            trace(
                &mut turn,
                deps,
                TracePayload::Error(ErrorTrace::MaxTokens),
                None,
                None,
            )
            .await;
            let text = response.message.text();
            turn.finish(
                RunStatus::Error,
                Stop::MaxTokens,
                format!("{text}\n\n(The answer was cut off: it reached the length limit.)")
                    .trim_start()
                    .to_owned(),
            );
        }
        StopReason::Error => {
            trace(
                &mut turn,
                deps,
                TracePayload::Error(ErrorTrace::Provider {
                    error: "the reply ended in an error".to_owned(),
                }),
                None,
                None,
            )
            .await;
            turn.finish(
                RunStatus::Error,
                Stop::ProviderError,
                "The model's reply ended in an error.",
            );
        }
        StopReason::End | StopReason::ToolUse => {
            let mut message = response.message;
            if turn.tools_off {
                // Tools were taken away: calls made anyway are dropped, so no call goes unanswered.
                message.content.retain(|b| !matches!(b, Block::ToolUse { .. }));
            }
            let text = message.text();
            turn.history.push(message);
            if turn.tools_off {
                turn.finish(RunStatus::Error, Stop::IterationLimit, text);
            } else if calls.is_empty() {
                match (stop_hook(&mut turn, deps, &text).await, traced) {
                    (Some(reason), traced) => {
                        if let Some(event) = traced {
                            deps.tracer.record(event).await;
                        }
                        turn.history
                            .push(Message::user(format!("[A Stop hook of this kakeibo: {reason}]")));
                        turn.phase = Phase::CallModel;
                    }
                    (None, Some(event)) => answer(&mut turn, deps, text, event).await,
                    (None, None) => turn.finish(RunStatus::Ok, Stop::End, text),
                }
            } else {
                turn.phase = Phase::RunTools { calls };
            }
        }
    }
    turn
}

/// Ends the turn with its answer, the answer's figures checked against the turn's tool figures
/// (told, and traced on `traced`, the answering call's event, when it states any) — or, under
/// [`FiguresPolicy::Retry`], the first time an answer states a figure no tool returned, asks the
/// model to correct it.
async fn answer(turn: &mut Turn, deps: &Deps<'_>, text: String, mut traced: TraceEvent) {
    let mut checked = crate::figures::check(&text, &turn.figures);
    if checked.figures.is_empty() {
        deps.tracer.record(traced).await;
        turn.finish(RunStatus::Ok, Stop::End, text);
        return;
    }
    if checked.ungrounded > 0 {
        // How many, never the figures themselves (a person's money).
        tracing::info!(
            figures = checked.figures.len(),
            ungrounded = checked.ungrounded,
            "answer has ungrounded figures"
        );
    }
    let missing: Vec<String> = checked
        .ungrounded_texts()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let retry = deps.figures == FiguresPolicy::Retry && !missing.is_empty() && turn.corrected.is_empty();
    if !retry {
        checked.corrected.clone_from(&turn.corrected);
    }
    if let TracePayload::ModelCall(call) = &mut traced.payload {
        call.figures = Some(checked.clone());
    }
    deps.tracer.record(traced).await;
    if retry {
        (deps.on_event)(TurnEvent::Correcting(missing.clone()));
        turn.history.push(Message::user(figure_check_note(&missing)));
        turn.corrected = missing;
        turn.phase = Phase::CallModel;
        return;
    }
    (deps.on_event)(TurnEvent::Figures(checked.clone()));
    turn.checked = Some(checked);
    turn.finish(RunStatus::Ok, Stop::End, text);
}

/// What the model is told of its answer's ungrounded figures when it is asked to correct them.
fn figure_check_note(missing: &[String]) -> String {
    format!(
        "[kakeibo's figure check: your answer states {} that no tool result of this turn holds, nor two \
         results add, subtract or divide to. Write the whole answer again, correcting them: state only \
         figures the tools returned (call a tool if you need one), or say plainly that a figure is your \
         estimate and not from the ledger. The person is told the answer was corrected.]",
        missing.join(", ")
    )
}

/// Asks the `Stop` hook whether the model should go on (at most [`MAX_STOP_HOOK_RUNS`] times a run).
async fn stop_hook(turn: &mut Turn, deps: &Deps<'_>, answer: &str) -> Option<String> {
    let site = deps.hooks?;
    if turn.stop_hook_runs >= MAX_STOP_HOOK_RUNS {
        return None;
    }
    let reason = site
        .hooks
        .stop(site.session, answer, turn.stop_hook_runs > 0)
        .await?;
    turn.stop_hook_runs += 1;
    Some(reason)
}

async fn run_tools(mut turn: Turn, calls: Vec<ToolUse>, deps: &Deps<'_>) -> Turn {
    if turn.iteration >= deps.max_iterations {
        let results = calls.iter().map(|c| error_result(c, ITERATION_LIMIT));
        turn.history.push(Message::results(results));
        let payload = TracePayload::Error(ErrorTrace::IterationLimit {
            iterations: turn.iteration,
        });
        trace(&mut turn, deps, payload, None, None).await;
        turn.tools_off = true;
        turn.phase = Phase::CallModel;
        return turn;
    }

    let mut decisions = Vec::with_capacity(calls.len());
    // A hook's ask to end the turn once this batch is answered.
    let mut hook_stop = None;
    for call in &calls {
        let tool = deps.tools.get(&call.name).cloned();
        (deps.on_event)(TurnEvent::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
            tier: tool.as_ref().map(|t| t.tier()),
        });
        decisions.push(decide(&mut turn, deps, call, tool, &mut hook_stop).await);
    }

    let mut outcomes = execute_batch(&calls, &decisions).await;
    // Tasks after the batch's other calls, one at a time, in call order.
    for ((call, decision), slot) in calls.iter().zip(&decisions).zip(outcomes.iter_mut()) {
        if let Decision::Run { tool, rewritten, .. } = decision
            && let Some(task) = tool.subagents()
        {
            let input = rewritten.as_ref().unwrap_or(&call.input);
            *slot = Some(subagent::delegate(&mut turn, deps, call, input, task).await);
        }
    }

    let mut done = Vec::new();
    let mut pending = Vec::new();
    for ((call, decision), outcome) in calls.iter().zip(decisions).zip(outcomes.drain(..)) {
        let answer = match answered(call, decision, outcome, deps) {
            Ok(answer) => answer,
            Err(write) => {
                pending.push(*write);
                continue;
            }
        };
        done.push(report(&mut turn, deps, call, answer, &mut hook_stop).await);
    }

    if !pending.is_empty() {
        for write in &pending {
            let payload = ConfirmTrace {
                suspended: Some(true),
                ..ConfirmTrace::of(write, None)
            };
            trace(&mut turn, deps, TracePayload::Confirm(payload), None, None).await;
        }
        (deps.on_event)(TurnEvent::ConfirmRequest(pending.clone()));
        turn.phase = Phase::AwaitConfirm {
            calls,
            done,
            pending,
            expires_at: now_unix() + CONFIRM_TTL_SECONDS,
        };
        return turn;
    }

    turn.history.push(Message::results(done));
    if let Some(reason) = hook_stop {
        turn = turn.stopped_by_hook(&reason);
    } else if let Some(reason) = repeat_check(&turn.calls) {
        turn.finish(RunStatus::Stuck, Stop::Stuck, format!("Stopped: {reason}."));
    } else if let Some(reason) = match deps.stop_judge {
        Some(judge) => judge.stuck(&turn.calls).await,
        None => None,
    } {
        turn.finish(RunStatus::Stuck, Stop::Stuck, format!("Stopped: {reason}."));
    } else {
        turn.phase = Phase::CallModel;
    }
    turn
}

/// A judge of whether a run is stuck, asked after each batch of tool calls that the repeat
/// check (the same call failing the same way three times) let go on — the decision layer's stop
/// judge. It can only end a run, never approve anything.
pub trait StopJudge: Send + Sync {
    /// `Some(reason)` stops the run (status `stuck`); a judge that fails answers `None`.
    fn stuck<'a>(&'a self, calls: &'a [CallRecord]) -> futures_util::future::BoxFuture<'a, Option<String>>;
}
