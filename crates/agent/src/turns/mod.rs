//! Turns in PostgreSQL: conversations, traces, and the exactly-once confirm protocol.
//!
//! A turn that waits for a person is stored whole in `suspended_turns`. A confirm then
//! 1. **claims** the row: a transaction locks it (`FOR UPDATE NOWAIT`), so a concurrent confirm
//!    is refused at once instead of waiting; a row whose writes already ran and whose holder
//!    stopped answering for longer than the lease is taken over with a new fence (`claimed_at`);
//! 2. **applies** the approved writes in that same transaction and stores their results, moving
//!    the row to `applied` with a fresh fence — a write and the record that it happened commit
//!    together, so no write runs twice, and a claim that dies before this commit leaves the row
//!    as it was, at once claimable again (nothing to wait out);
//! 3. **continues** the turn from the stored results (an `applied` row never runs a write again);
//! 4. **finishes** by appending the turn's new messages to the conversation, writing the leg's
//!    trace events and the run's totals, and deleting the row, in one transaction, only under
//!    its fence.
//!
//! A new turn commits twice: once before the model is first called (history, run row and
//! memories, [`TurnStore::open_turn`]) and once when it ends ([`TurnStore::close`] or
//! [`TurnStore::suspend`]). Trace events wait in a [`MemoryTracer`] and commit with the step that
//! ends their leg: a crash before it loses only an unfinished leg's events, never a finished one's.
//!
//! Only two kinds of commit wait for the log to reach the disk: a write applied (with the record
//! that it ran) and a turn finished. The opening, the suspension and the claim commit lazily
//! (migrations 0008, 0013, 0024): what they hold has not finished, and the next durable commit
//! carries them to disk with it. A read-only turn waits for one flush, a confirmed write for two.
//!
//! Each of those steps, and the finish, is one statement calling a phase function of migration
//! `0010_turn_phases.sql`, sent outside any explicit transaction: one round trip that sets the
//! tenant, does the step's work and commits. The claim and apply are a transaction of their own,
//! since the writes they run are the tools' code.

mod confirm;
mod store;

use self::store::decision_of;
pub use self::{
    confirm::{Busy, ConfirmError},
    store::{Claim, MAX_STATE_BYTES, TurnStore},
};

use std::{future::Future, path::PathBuf, pin::Pin, sync::Arc};

use futures_util::future::BoxFuture;
use kakeibo_core::{
    Budget, ConfirmPolicy, ConfirmTrace, ConversationId, Deps, DuplicateTool, FiguresPolicy, Message,
    PendingWrite, PermissionRules, Phase, Provider, RunId, RunStatus, SuspendedTurnId, Tier, Tool,
    ToolCallTrace, ToolRegistry, ToolResult, ToolUse, TraceEvent, TracePayload, Tracer, Turn, TurnEvent,
    budget::Budgeted,
    context,
    hooks::{HookSite, Hooks, with_notes},
    trace::MemoryTracer,
    turn::{StopJudge, drive, drive_until, result_summary},
};
use kakeibo_ledger::OwnerId;
use kakeibo_tools::Scope;

use crate::{
    history::Evicted,
    record::{Channel, NewRun},
};

/// The conversation a new turn opens in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Thread<'a> {
    /// One that exists.
    Existing,
    /// One the turn's opening makes, with this title.
    New { title: Option<&'a str> },
}

/// What a leg of a new turn stores with the commit that ends it, besides the turn itself.
#[derive(Debug, Default)]
pub struct Leg {
    /// The leg's trace events, in order.
    pub events: Vec<TraceEvent>,
    /// Where the turn's new messages start in its history: the messages before are stored.
    pub new_from: usize,
    /// The summary that now stands for evicted messages, when the turn's context was fitted.
    pub evicted: Option<Evicted>,
}

/// The status a turn's run ends with: an unfinished turn is an error.
fn status_of(turn: &Turn) -> RunStatus {
    turn.finished().map_or(RunStatus::Error, |(status, _)| status)
}

async fn record(tracer: &MemoryTracer, turn: &mut Turn, payload: TracePayload) {
    let seq = turn.take_seq();
    let event = TraceEvent {
        run_id: turn.run_id(),
        seq,
        payload,
        latency_ms: None,
        usage: None,
        thought_summary: None,
    };
    tracer.record(event).await;
}

/// What an agent is made of besides its owner and its store — the one configuration every
/// channel builds one from (the library's builder, the web functions, the CLI, ACP and the
/// evaluations), so a capability added here reaches them all.
#[derive(Clone)]
pub struct AgentConfig {
    /// The model the turn runs on.
    pub provider: Arc<dyn Provider>,
    /// The model that summarises evicted history (the turn's own model when `None`).
    pub summarizer: Option<Arc<dyn Provider>>,
    /// The system prompt (kakeibo's own unless said).
    pub system: Arc<str>,
    /// Permission rules, decided before the confirm policy: a `deny` rule always wins.
    pub rules: Arc<PermissionRules>,
    /// Which way of driving kakeibo the runs are recorded under.
    pub channel: Channel,
    /// Tools beside the owner's finance tools (their names must not be taken).
    pub tools: Vec<Arc<dyn Tool>>,
    /// The folder `import_statement_csv` may read statements from by path (none when `None`).
    pub import_root: Option<PathBuf>,
    /// Where each model call of the turn reserves its worst case first (the web's daily budget);
    /// `None` spends without asking.
    pub budget: Option<Arc<dyn Budget>>,
    /// The hooks around what the agent does ([`kakeibo_core::hooks`]); `None` for none.
    pub hooks: Option<Arc<dyn Hooks>>,
    /// The decision layer's stop judge; `None`: the repeat check alone.
    pub stop_judge: Option<Arc<dyn StopJudge>>,
    /// What to do with an answer's figure no tool returned: mark it (the default), or ask the
    /// model once to correct the answer.
    pub figures: FiguresPolicy,
    /// The model calls a turn may make before it must answer without tools
    /// ([`kakeibo_core::turn::MAX_ITERATIONS`] unless fewer are asked for).
    pub max_iterations: u32,
    /// Only the read tools are offered: the model cannot so much as ask for a write.
    pub read_only: bool,
}

impl AgentConfig {
    /// A configuration with kakeibo's system prompt and nothing else besides the model: no
    /// rules, no tools of its own, no import folder, no budget, no hooks, no stop judge.
    pub fn new(provider: Arc<dyn Provider>, channel: Channel) -> Self {
        Self {
            provider,
            summarizer: None,
            system: Arc::from(kakeibo_core::prompt::SYSTEM_PROMPT),
            rules: Arc::new(PermissionRules::default()),
            channel,
            tools: Vec::new(),
            import_root: None,
            budget: None,
            hooks: None,
            stop_judge: None,
            figures: FiguresPolicy::Flag,
            max_iterations: kakeibo_core::turn::MAX_ITERATIONS,
            read_only: false,
        }
    }
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("provider", &self.provider.name())
            .field("model", &self.provider.model())
            .field("summarizer", &self.summarizer.as_ref().map(|s| s.model()))
            .field("channel", &self.channel)
            .field("budget", &self.budget.is_some())
            .field("hooks", &self.hooks.is_some())
            .field("stop_judge", &self.stop_judge.is_some())
            .finish_non_exhaustive()
    }
}

/// One owner's agent, end to end: the store, the owner's tools, and its configuration.
pub struct Agent {
    store: TurnStore,
    scope: Scope,
    tools: ToolRegistry,
    config: AgentConfig,
}

impl Agent {
    /// The agent of `owner` over the store's database: the owner's finance tools and the
    /// configuration's own, or [`DuplicateTool`] when one of those takes a taken name.
    pub fn new(store: TurnStore, owner: OwnerId, config: AgentConfig) -> Result<Self, DuplicateTool> {
        let mut scope = Scope::new(owner, store.pool().clone());
        if let Some(dir) = &config.import_root {
            scope = scope.with_import_root(dir.clone());
        }
        let finance = kakeibo_tools::registry(&scope);
        // The finance tools' registry as it is, unless the configuration brings tools of its own
        // (a web request builds an agent: no second registry for nothing).
        let tools = if config.tools.is_empty() {
            finance
        } else {
            ToolRegistry::new(finance.tools().iter().chain(&config.tools).cloned().collect())?
        };
        let tools = if config.read_only {
            tools.read_only()
        } else {
            tools
        };
        Ok(Self {
            store,
            scope,
            tools,
            config,
        })
    }

    /// What the agent was made with.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The store its turns are kept in.
    pub fn store(&self) -> &TurnStore {
        &self.store
    }

    /// Whose ledger, over which pool.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The tools the model is offered.
    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    /// The agent offering `tools` instead — the same tools wrapped, say, to time each call.
    #[must_use]
    pub fn with_tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("owner", &self.scope.owner)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// How a leg of a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Finished {
        run_id: RunId,
        status: RunStatus,
        answer: String,
        turn: Box<Turn>,
    },
    /// Waiting for a person: confirm `suspended_id` with decisions on `pending`.
    Suspended {
        run_id: RunId,
        suspended_id: SuspendedTurnId,
        pending: Vec<PendingWrite>,
    },
}

impl Agent {
    fn deps<'b>(
        &'b self,
        policy: &'b ConfirmPolicy,
        tracer: &'b MemoryTracer,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
        session: &'b str,
    ) -> Deps<'b> {
        Deps {
            provider: self.config.provider.as_ref(),
            budget: self.config.budget.as_deref(),
            tools: &self.tools,
            system: &self.config.system,
            policy,
            rules: &self.config.rules,
            tracer,
            on_event,
            hooks: self
                .config
                .hooks
                .as_deref()
                .map(|hooks| HookSite { hooks, session }),
            stop_judge: self.config.stop_judge.as_deref(),
            figures: self.config.figures,
            max_iterations: self.config.max_iterations,
        }
    }

    /// Runs a new turn of `conversation` for the person's `text`.
    ///
    /// The future is boxed so it is `Send` for callers that spawn it (a function's stream).
    pub fn chat<'b>(
        &'b self,
        conversation: ConversationId,
        text: &'b str,
        policy: &'b ConfirmPolicy,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
    ) -> BoxFuture<'b, Result<Outcome, ConfirmError>> {
        Box::pin(self.chat_inner(conversation, Thread::Existing, text, policy, on_event, None))
    }

    /// Runs the first turn of a new conversation, which the turn's opening makes — `conversation`
    /// a fresh id ([`ConversationId::random`]), titled `title` — in the same round trip and commit
    /// as the rest of the opening, instead of one of its own before it
    /// ([`TurnStore::new_conversation`]). When the turn fails before it opens, there is no
    /// conversation.
    pub fn start<'b>(
        &'b self,
        conversation: ConversationId,
        title: Option<&'b str>,
        text: &'b str,
        policy: &'b ConfirmPolicy,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
    ) -> BoxFuture<'b, Result<Outcome, ConfirmError>> {
        Box::pin(self.chat_inner(conversation, Thread::New { title }, text, policy, on_event, None))
    }

    /// [`Agent::chat`] (`title` `None`) or [`Agent::start`] (`title` `Some`, the new
    /// conversation's title or none), stopped when `stop` completes first: the turn then finishes
    /// `aborted` ([`kakeibo_core::drive_until`]) and is stored like any finished turn — the
    /// question, what ran before the stop, its events and its run.
    pub fn run_until<'b>(
        &'b self,
        conversation: ConversationId,
        title: Option<Option<&'b str>>,
        text: &'b str,
        policy: &'b ConfirmPolicy,
        on_event: &'b (dyn Fn(TurnEvent) + Send + Sync),
        stop: Pin<&'b mut (dyn Future<Output = ()> + Send + 'b)>,
    ) -> BoxFuture<'b, Result<Outcome, ConfirmError>> {
        let thread = match title {
            None => Thread::Existing,
            Some(title) => Thread::New { title },
        };
        Box::pin(self.chat_inner(conversation, thread, text, policy, on_event, Some(stop)))
    }

    #[tracing::instrument(name = "turn", skip_all, fields(conversation_id = %conversation, run_id = tracing::field::Empty))]
    async fn chat_inner(
        &self,
        conversation: ConversationId,
        thread: Thread<'_>,
        text: &str,
        policy: &ConfirmPolicy,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
        stop: Option<Pin<&mut (dyn Future<Output = ()> + Send + '_)>>,
    ) -> Result<Outcome, ConfirmError> {
        let owner = self.scope.owner;
        let run_id = RunId::random();
        tracing::Span::current().record("run_id", tracing::field::display(run_id));
        tracing::info!(
            provider = self.config.provider.name(),
            model = self.config.provider.model(),
            "turn started"
        );
        let run = NewRun {
            run_id,
            provider: self.config.provider.name(),
            model: self.config.provider.model(),
            channel: self.config.channel,
        };
        let (text, refused) = self.prompt_hooks(conversation, &thread, text).await;
        let text = text.as_ref();
        // How the conversation's previous run ended, read beside the opening (not one more round
        // trip before it): one that ended early is told to the model, for this turn only.
        let earlier = async {
            match thread {
                Thread::Existing => self
                    .store
                    .last_run_status(owner, conversation)
                    .await
                    .ok()
                    .flatten(),
                Thread::New { .. } => None,
            }
        };
        let opening = self.store.open_turn(owner, conversation, thread, &run, text);
        let (earlier, opened) = futures_util::future::join(earlier, opening).await;
        let (mut history, user) =
            opened.map_err(|e| Busy::of(&e).map_or(ConfirmError::NotStarted(e), ConfirmError::Busy))?;
        let system: std::borrow::Cow<'_, str> = match earlier.as_deref().and_then(ended_early) {
            Some(note) => format!("{}\n\n{note}", self.config.system).into(),
            None => self.config.system.as_ref().into(),
        };
        let tracer = MemoryTracer::default();
        history.push(user);
        let declarations = self.tools.declared();
        let mut seq = 0;
        let provider = self.config.provider.as_ref();
        let summarizer = self.config.summarizer.as_deref().unwrap_or(provider);
        let budgeted = self.config.budget.as_deref().map(|budget| Budgeted {
            inner: summarizer,
            budget,
            run: run_id,
        });
        let (mut history, eviction) = context::fit(
            history,
            &system,
            &declarations,
            provider,
            budgeted.as_ref().map_or(summarizer, |b| b as &dyn Provider),
            context::CONTEXT_BUDGET_TOKENS,
            Some((&tracer, run_id, &mut seq)),
        )
        .await;
        let user = history.pop().unwrap_or_else(|| Message::user(text));
        let new_from = history.len();
        let mut turn = Turn::start(run_id, history, user);
        turn.continue_seq_from(seq);
        let session = conversation.to_string();
        let mut deps = self.deps(policy, &tracer, on_event, &session);
        deps.system = &system;
        let turn = match (refused, stop) {
            (Some(reason), _) => turn.refused_by_hook(&reason),
            (None, Some(stop)) => drive_until(turn, &deps, stop).await,
            (None, None) => drive(turn, &deps).await,
        };
        let leg = Leg {
            events: tracer.take(),
            new_from,
            evicted: eviction.as_ref().map(Evicted::of),
        };
        let ended = if let Phase::AwaitConfirm { pending, .. } = turn.phase() {
            let pending = pending.clone();
            self.store
                .suspend(owner, conversation, &turn, &leg)
                .await
                .map(|suspended_id| {
                    tracing::info!(suspended_turn_id = %suspended_id, "turn suspended until a person decides");
                    Some(Outcome::Suspended {
                        run_id: turn.run_id(),
                        suspended_id,
                        pending,
                    })
                })
        } else {
            self.store
                .close(owner, conversation, &turn, &leg)
                .await
                .map(|()| None)
                .map_err(ConfirmError::from)
        };
        match ended {
            Ok(Some(suspended)) => Ok(suspended),
            Ok(None) => Ok(finished(turn)),
            Err(e) => {
                // The run's row exists (the opening committed it): it must not stay `running`.
                // If the database itself is gone this fails too, and the reaper finishes it.
                self.store.fail_run(owner, &turn).await;
                Err(e)
            }
        }
    }

    /// The person's message as the turn takes it — with the notes of the `SessionStart` (a new
    /// conversation) and `UserPromptSubmit` hooks — and the reason a hook refused it, if one did.
    async fn prompt_hooks<'t>(
        &self,
        conversation: ConversationId,
        thread: &Thread<'_>,
        text: &'t str,
    ) -> (std::borrow::Cow<'t, str>, Option<String>) {
        let Some(hooks) = self.config.hooks.as_deref() else {
            return (text.into(), None);
        };
        let session = conversation.to_string();
        let mut notes = Vec::new();
        if matches!(thread, Thread::New { .. }) {
            notes.extend(hooks.session_start(&session).await);
        }
        let submit = hooks.user_prompt_submit(&session, text).await;
        notes.extend(submit.notes);
        (with_notes(text, &notes).into(), submit.block)
    }

    /// The `PostToolUse` hooks of the writes a confirm ran: their notes join the results the
    /// model reads (the stored results stay as the tools gave them, so a retry sees the same);
    /// the reason a hook asked to stop, if one did.
    async fn post_confirm_hooks(
        &self,
        claim: &Claim,
        decisions: &[(String, bool)],
        session: &str,
        results: &mut [ToolResult],
    ) -> Option<String> {
        let (Some(hooks), Phase::AwaitConfirm { pending, .. }) =
            (self.config.hooks.as_deref(), claim.turn.phase())
        else {
            return None;
        };
        let mut stop = None;
        for write in pending {
            let ran = !claim.expired && decisions.iter().any(|(id, allowed)| *id == write.id && *allowed);
            let Some(result) = results
                .iter_mut()
                .find(|r| r.tool_use_id == write.id)
                .filter(|_| ran)
            else {
                continue;
            };
            let call = ToolUse {
                id: write.id.clone(),
                name: write.tool.clone(),
                input: write.args.clone(),
            };
            let post = hooks
                .post_tool_use(session, &call, &result.content, result.is_error)
                .await;
            result.content = with_notes(&result.content, &post.notes);
            stop = stop.or(post.stop);
        }
        stop
    }

    /// Goes on with a suspended turn after the person decided: claim, apply, continue, finish.
    /// Retrying after any failure is safe; no write runs twice.
    pub async fn confirm(
        &self,
        suspended_id: SuspendedTurnId,
        decisions: &[(String, bool)],
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Outcome, ConfirmError> {
        let claim = self.store.claim(self.scope.owner, suspended_id).await?;
        self.confirm_claimed(claim, decisions, on_event).await
    }

    /// [`Agent::confirm`] after the claim, for callers that answer a lost claim before they start
    /// streaming (the HTTP confirm: `409`/`410` are statuses, not stream events).
    #[tracing::instrument(
        name = "confirm",
        skip_all,
        fields(conversation_id = %claim.conversation_id, suspended_turn_id = %claim.id)
    )]
    pub async fn confirm_claimed(
        &self,
        mut claim: Claim,
        decisions: &[(String, bool)],
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Outcome, ConfirmError> {
        if let Err(refused) = claim.check_decisions(decisions) {
            // Unlock the row now: dropped, the lock would go only when the pool next uses the
            // connection, and a corrected confirm sent at once would find it still held.
            claim.release().await;
            return Err(refused);
        }
        let owner = self.scope.owner;
        let suspended_id = claim.id;
        let (mut results, fence) = self
            .store
            .apply(&mut claim, decisions, &self.scope, &self.tools)
            .await?;
        let session = claim.conversation_id.to_string();
        let hook_stop = self
            .post_confirm_hooks(&claim, decisions, &session, &mut results)
            .await;
        let tracer = MemoryTracer::default();
        let mut turn = claim.turn.clone();
        if let Phase::AwaitConfirm { pending, .. } = claim.turn.phase() {
            for (write, result) in pending
                .iter()
                .filter_map(|w| results.iter().find(|r| r.tool_use_id == w.id).map(|r| (w, r)))
            {
                let allowed =
                    !claim.expired && decisions.iter().any(|(id, allowed)| *id == write.id && *allowed);
                let confirm = ConfirmTrace {
                    expired: Some(claim.expired),
                    ..ConfirmTrace::of(write, Some(allowed))
                };
                record(&tracer, &mut turn, TracePayload::Confirm(confirm)).await;
                if allowed {
                    let call = ToolCallTrace {
                        name: write.tool.clone(),
                        tier: Some(Tier::Write),
                        args: write.args.clone(),
                        result: result.content.clone(),
                        confirmed: Some(true),
                        error: result.is_error,
                    };
                    record(&tracer, &mut turn, TracePayload::ToolCall(call)).await;
                }
            }
            // The stream says what became of each write of the batch, in call order, before
            // anything the continued turn says.
            for (write, result) in pending
                .iter()
                .filter_map(|w| results.iter().find(|r| r.tool_use_id == w.id).map(|r| (w, r)))
            {
                let decision = decision_of(result);
                on_event(TurnEvent::ToolResult {
                    id: write.id.clone(),
                    name: write.tool.clone(),
                    outcome: decision.outcome(result.is_error),
                    summary: result_summary(&result.content),
                    decision: Some(decision),
                    headline: None,
                });
            }
        }
        let turn = turn.resume(results)?;
        let turn = match hook_stop {
            Some(reason) => turn.stopped_by_hook(&reason),
            None => {
                drive(
                    turn,
                    &self.deps(&ConfirmPolicy::Suspend, &tracer, on_event, &session),
                )
                .await
            }
        };
        if let Phase::AwaitConfirm { pending, .. } = turn.phase() {
            let pending = pending.clone();
            self.store
                .resuspend(owner, suspended_id, fence, &turn, &tracer.take())
                .await?;
            return Ok(Outcome::Suspended {
                run_id: turn.run_id(),
                suspended_id,
                pending,
            });
        }
        self.store
            .finish(
                owner,
                suspended_id,
                fence,
                claim.conversation_id,
                claim.history_base,
                &turn,
                &tracer.take(),
            )
            .await?;
        Ok(finished(turn))
    }
}

/// What the model is told when the conversation's previous run ended with `status`: `None` for
/// a run that answered (or waits, or was refused before it began).
fn ended_early(status: &str) -> Option<&'static str> {
    match status {
        "aborted" => Some(
            "## The previous request\nThe previous request in this conversation was stopped before it finished \
             (by the person, or by a limit). What it did before the stop is in the conversation above: tool \
             calls that ran are done, and nothing after them happened. If the person asks to go on, continue \
             from there; never repeat a write that already ran.",
        ),
        "error" => Some(
            "## The previous request\nThe previous request in this conversation ended in an error before it \
             finished (a provider failure, or the limit of model calls). What it did is in the conversation \
             above: tool calls that ran are done. If the person asks to go on, continue from there; never \
             repeat a write that already ran.",
        ),
        "stuck" => Some(
            "## The previous request\nThe previous request in this conversation was stopped because it made no \
             progress. Do not repeat the same calls: say what could not be found, or ask the person.",
        ),
        _ => None,
    }
}

/// The outcome of a turn whose end is stored.
fn finished(turn: Turn) -> Outcome {
    let status = status_of(&turn);
    let answer = turn.finished().map(|(_, a)| a.to_owned()).unwrap_or_default();
    tracing::info!(run_id = %turn.run_id(), status = ?status, "turn finished");
    Outcome::Finished {
        run_id: turn.run_id(),
        status,
        answer,
        turn: Box::new(turn),
    }
}
