//! The agent, how it is built, and a prompt on its way.

use std::{
    future::{Future, IntoFuture},
    path::{Path, PathBuf},
    pin::Pin,
    sync::Arc,
    time::Instant,
};

use futures_util::future::{self, BoxFuture};
use kakeibo_agent::{
    AgentConfig, Channel, Outcome, TurnStore, closing_events,
    conversations::{ConversationSummary, Spend},
    turns::Claim,
};
use kakeibo_core::{
    Budget, ConfirmPolicy, ConversationId, Event, FiguresPolicy, Hooks, PendingWrite, PermissionRules,
    Provider, SuspendedTurnId, Tier, Tool, TurnEvent, TypedTool,
    hooks::Stack,
    prompt::SYSTEM_PROMPT,
    turn::subagent::{SubagentType, TaskTool},
    typed,
};
use kakeibo_ledger::OwnerId;
use kakeibo_mcp_client::McpServers;
use kakeibo_providers::select::{self, Models};
use kakeibo_skills::{AgentTypes, Instructions, SkillTool, Skills};
use sqlx::PgPool;

use crate::{Error, RunResult};

/// How a confirm decides the pending writes of the turn it claimed.
type Decider<'a> = dyn Fn(&[PendingWrite]) -> Vec<(String, bool)> + Send + Sync + 'a;

/// What a prompt calls with each event.
type OnEvent<'a> = dyn Fn(&Event) + Send + Sync + 'a;

/// The agent over one owner's ledger. Build it with [`Agent::builder`]; it is cheap to keep and
/// to share (`&Agent` runs prompts), and holds no connection of its own beyond the pool's.
pub struct Agent {
    inner: kakeibo_agent::Agent,
    policy: ConfirmPolicy,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("owner", &self.inner.scope().owner)
            .field("provider", &self.provider().name())
            .field("model", &self.provider().model())
            .field("tools", &self.inner.tools().names())
            .finish_non_exhaustive()
    }
}

/// How an [`Agent`] is made: a ledger (pool and owner), then a model, and what else differs from
/// the defaults (writes denied, no permission rules, kakeibo's own system prompt, the fourteen
/// finance tools). Every way of driving kakeibo builds its agent here — the web functions, the
/// CLI, ACP, the evaluations — into one [`AgentConfig`].
#[must_use]
pub struct AgentBuilder {
    pool: PgPool,
    owner: OwnerId,
    provider: Option<Arc<dyn Provider>>,
    summarizer: Option<Arc<dyn Provider>>,
    policy: ConfirmPolicy,
    rules: Arc<PermissionRules>,
    system: Arc<str>,
    tools: Vec<Arc<dyn Tool>>,
    import_root: Option<PathBuf>,
    hooks: Vec<Arc<dyn Hooks>>,
    stop_judge: Option<Arc<dyn kakeibo_core::turn::StopJudge>>,
    budget: Option<Arc<dyn Budget>>,
    channel: Channel,
    figures: FiguresPolicy,
    /// Sections after the system prompt: the person's instructions, the list of skills.
    addenda: Vec<String>,
    max_iterations: u32,
    read_only: bool,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("owner", &self.owner)
            .field("provider", &self.provider.as_ref().map(|p| p.name()))
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// The model to use: any [`Provider`] (kakeibo's own adapters, a scripted one, yours).
    pub fn provider(self, provider: impl Provider + 'static) -> Self {
        self.shared_provider(Arc::new(provider))
    }

    /// The model to use, shared with whoever else holds it (a function's models, made once).
    pub fn shared_provider(mut self, provider: Arc<dyn Provider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// The model that summarises the oldest messages of a conversation grown past the context
    /// budget (by default the agent's own model).
    pub fn summarizer(mut self, summarizer: Arc<dyn Provider>) -> Self {
        self.summarizer = Some(summarizer);
        self
    }

    /// The models the settings name: the agent's and, when one is set apart, the summarizer's.
    pub fn models(mut self, models: Models) -> Self {
        self.provider = Some(models.agent);
        self.summarizer = models.summarizer;
        self
    }

    /// The model the settings name, as the CLI reads them from the environment:
    /// `KAKEIBO_PROVIDER` (`gemini`, `anthropic`, `openai` or `script:FILE`), else the first of
    /// `GEMINI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_BASE_URL` that is set; `AGENT_MODEL`
    /// overrides the model. Fails with the list of settings when none is set.
    /// `SUMMARIZER_MODEL` names the summarizer ([`AgentBuilder::summarizer`]; Gemini's cheaper
    /// default when unset on Gemini).
    pub fn provider_from_env(self) -> Result<Self, Error> {
        Ok(self.models(select::models_from_env()?))
    }

    /// How the writes the model asks for are decided (default [`ConfirmPolicy::AutoDeny`]:
    /// none runs). [`ConfirmPolicy::Suspend`] stores the turn until [`Agent::confirm`].
    pub fn confirm_policy(mut self, policy: ConfirmPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Permission rules, decided before the policy: a `deny` rule always wins.
    pub fn rules(mut self, rules: impl Into<Arc<PermissionRules>>) -> Self {
        self.rules = rules.into();
        self
    }

    /// The system prompt instead of kakeibo's own.
    pub fn system_prompt(mut self, system: impl Into<Arc<str>>) -> Self {
        self.system = system.into();
        self
    }

    /// The person's own instructions ([`Instructions`]: `AGENTS.md`, `KAKEIBO.md`), read after
    /// the system prompt. Nothing is added when there are none.
    pub fn instructions(mut self, instructions: &Instructions) -> Self {
        self.addenda.extend(instructions.prompt_section());
        self
    }

    /// Agent Skills ([`Skills`]): each listed after the system prompt in a line, and the `Skill`
    /// tool, a read, that loads one's instructions when the model asks. Nothing is added when
    /// there are none.
    pub fn skills(mut self, skills: &Skills) -> Self {
        if let Some(section) = skills.prompt_section() {
            self.addenda.push(section);
            self.tools.push(typed(SkillTool::new(skills)));
        }
        self
    }

    /// The instructions and the skills of a session working in `cwd`, found as the CLI and ACP
    /// find them ([`Instructions::discover`], [`Skills::discover`], with the home directory);
    /// either may be left off. Also returns a sentence for each file left out (too large, not a
    /// skill), for the person to read.
    pub fn project(self, cwd: &Path, instructions: bool, skills: bool) -> (Self, Vec<String>) {
        let home = kakeibo_skills::home();
        let mut refused = Vec::new();
        let mut builder = self;
        if instructions {
            let found = Instructions::discover(cwd, home.as_deref());
            refused.extend(found.refused.iter().cloned());
            builder = builder.instructions(&found);
        }
        if skills {
            let found = Skills::discover(cwd, home.as_deref());
            refused.extend(found.refused.iter().cloned());
            builder = builder.skills(&found);
        }
        (builder, refused)
    }

    /// The model's task list: the `todo_write` tool (a read: it changes nothing of the person's),
    /// which the model rewrites whole as it works through something long; each call's input is
    /// the list ([`crate::todo::todos_of`] reads it from a `tool_call` event).
    pub fn task_list(mut self) -> Self {
        self.tools.push(typed(kakeibo_tools::TodoWrite));
        self
    }

    /// The `task` tool: the model hands a self-contained piece of work to a subagent — the same
    /// loop with a fresh context, the general-purpose type or one of `types` — and reads back only
    /// its final answer. A subagent shares the rules, the hooks, the budget and the confirm
    /// policy (its writes are asked by the same `ask`, once each); its usage and cost count to
    /// the run that started it, whose answer its figures ground, and its run is stored linked to
    /// that run (`trace_runs.parent_run_id`). Under [`ConfirmPolicy::Suspend`] a subagent is
    /// offered only the read tools. Task calls run one at a time.
    pub fn subagents(mut self, types: Vec<SubagentType>) -> Self {
        self.tools.retain(|t| t.subagents().is_none());
        self.tools.push(Arc::new(TaskTool::new(types)));
        self
    }

    /// [`AgentBuilder::subagents`] with the types of a session working in `cwd`
    /// ([`AgentTypes::discover`], with the home directory), each on the model its file names
    /// (resolved within the providers the environment configures, as the CLI's `/model` does).
    /// Also returns a sentence for each type left out (a file that does not read, a model that
    /// is not configured).
    pub fn project_subagents(self, cwd: &Path) -> (Self, Vec<String>) {
        let found = AgentTypes::discover(cwd, kakeibo_skills::home().as_deref());
        let mut refused = found.refused;
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mut types = Vec::new();
        for kind in found.list {
            let provider = match kind.model.as_deref() {
                None => None,
                Some(spec) => match select::models_named(spec, &env) {
                    Ok(models) => Some(models.agent),
                    Err(e) => {
                        refused.push(format!(
                            "{}: the model {spec:?} is not configured ({e}), so the subagent type was left out",
                            kind.path.display()
                        ));
                        continue;
                    }
                },
            };
            types.push(SubagentType {
                name: kind.name,
                description: kind.description,
                instructions: (!kind.instructions.is_empty()).then_some(kind.instructions),
                tools: kind.tools,
                provider,
            });
        }
        (self.subagents(types), refused)
    }

    /// The tools of connected MCP servers ([`McpServers::connect`]), named
    /// `mcp__SERVER__TOOL`: those a server marks `readOnlyHint` run when the model asks; every
    /// other one is a write, decided by the rules and the confirm policy like kakeibo's own
    /// (`allow mcp__SERVER__*` lets a server's tools run unasked). The servers stay up while the
    /// agent (or `servers`) is kept. A server's tool whose name a tool already has is refused by
    /// [`AgentBuilder::build`].
    pub fn mcp(mut self, servers: &McpServers) -> Self {
        self.tools.extend(servers.tools().iter().cloned());
        self
    }

    /// A tool of your own beside the finance tools. A read tool runs when the model asks; a write
    /// tool goes through the confirm policy and the rules like kakeibo's own writes (and, being
    /// yours, runs inline: under [`ConfirmPolicy::Suspend`] it is applied by the process that
    /// confirms, which must have it too).
    pub fn tool(mut self, tool: impl TypedTool) -> Self {
        self.tools.push(typed(tool));
        self
    }

    /// Hooks of your own around what the agent does ([`Hooks`]: before and after each tool call,
    /// on a write to ask about, when the model is done, on each prompt). A hook's allow never
    /// lifts a deny rule, and never skips the person under [`ConfirmPolicy::Suspend`].
    ///
    /// Called again, it adds: the hooks are asked in the order given, the first refusal ends the
    /// list and the strictest answer stands ([`kakeibo_core::hooks::Stack`]).
    pub fn hooks(self, hooks: impl Hooks + 'static) -> Self {
        self.shared_hooks(Arc::new(hooks))
    }

    /// [`AgentBuilder::hooks`] shared with whoever else holds them (a function's, loaded once).
    pub fn shared_hooks(mut self, hooks: Arc<dyn Hooks>) -> Self {
        self.hooks.push(hooks);
        self
    }

    /// Hooks from a Claude Code settings file (its `hooks` object: shell commands and HTTP
    /// endpoints, run from the current folder) — see [`kakeibo_hooks`] for what they are sent and
    /// may answer. Added after the hooks given before, as [`AgentBuilder::hooks`] adds.
    pub fn hooks_file(self, path: impl AsRef<std::path::Path>) -> Result<Self, Error> {
        let settings = kakeibo_hooks::HookSettings::load(path.as_ref())?;
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Ok(self.hooks(kakeibo_hooks::SettingsHooks::new(settings, cwd)))
    }

    /// A stop judge ([`kakeibo_judge`]): after the loop's repeat check, from a run's fourth call
    /// on, the run stops when the judge is at least 0.8 sure it makes no progress. Give it a
    /// judge that passed [`kakeibo_judge::Judge::probe`] (or use [`kakeibo_judge::from_settings`]).
    pub fn stop_judge(mut self, judge: kakeibo_judge::Judge) -> Self {
        self.stop_judge = Some(Arc::new(kakeibo_judge::stop::LlmStopJudge(judge)));
        self
    }

    /// Each model call reserves its worst case against `budget` first, and the turn stops when
    /// it is spent (the web's site-wide daily budget). Without one, calls spend without asking.
    pub fn budget(mut self, budget: Arc<dyn Budget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// What to do with an answer that states a figure no tool of its turn returned: mark it
    /// ([`FiguresPolicy::Flag`], the default), or ask the model once to correct the answer
    /// ([`FiguresPolicy::Retry`]). Either way [`crate::RunResult::figures`] says what was found.
    pub fn figures(mut self, policy: FiguresPolicy) -> Self {
        self.figures = policy;
        self
    }

    /// At most `calls` model calls a prompt (1 to 12, kakeibo's own limit): past them the model
    /// must answer without tools, and the run ends
    /// [`Stop::IterationLimit`](crate::Stop::IterationLimit).
    pub fn max_turns(mut self, calls: u32) -> Self {
        self.max_iterations = calls.clamp(1, kakeibo_core::turn::MAX_ITERATIONS);
        self
    }

    /// Offer the model only the read tools (kakeibo's and any others'): no write can be asked
    /// for, let alone run.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Which way of driving kakeibo the runs are recorded under ([`Channel::Library`] unless said).
    pub fn channel(mut self, channel: Channel) -> Self {
        self.channel = channel;
        self
    }

    /// The folder `import_statement_csv` may read statements from by path (none by default).
    pub fn import_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.import_root = Some(dir.into());
        self
    }

    /// The agent, once a model was given ([`Error::NoProvider`] otherwise) and no tool of yours
    /// takes a taken name.
    pub fn build(self) -> Result<Agent, Error> {
        let mut config = AgentConfig::new(self.provider.ok_or(Error::NoProvider)?, self.channel);
        config.summarizer = self.summarizer;
        config.system = if self.addenda.is_empty() {
            self.system
        } else {
            Arc::from(format!("{}\n\n{}", self.system, self.addenda.join("\n")))
        };
        config.rules = self.rules;
        config.tools = self.tools;
        config.import_root = self.import_root;
        config.budget = self.budget;
        config.hooks = match self.hooks.len() {
            0 => None,
            1 => self.hooks.into_iter().next(),
            _ => Some(Arc::new(Stack(self.hooks))),
        };
        config.stop_judge = self.stop_judge;
        config.figures = self.figures;
        config.max_iterations = self.max_iterations;
        config.read_only = self.read_only;
        Ok(Agent {
            inner: kakeibo_agent::Agent::new(TurnStore::new(self.pool), self.owner, config)?,
            policy: self.policy,
        })
    }
}

impl Agent {
    /// Starts building an agent over the ledger of `owner` in the database of `pool` — a pool
    /// as the `app_user` role, so row-level security holds as well as the tools' own filters.
    pub fn builder(pool: PgPool, owner: OwnerId) -> AgentBuilder {
        AgentBuilder {
            pool,
            owner,
            provider: None,
            summarizer: None,
            policy: ConfirmPolicy::AutoDeny,
            rules: Arc::new(PermissionRules::default()),
            system: Arc::from(SYSTEM_PROMPT),
            tools: Vec::new(),
            import_root: None,
            hooks: Vec::new(),
            stop_judge: None,
            budget: None,
            channel: Channel::Library,
            figures: FiguresPolicy::Flag,
            addenda: Vec::new(),
            max_iterations: kakeibo_core::turn::MAX_ITERATIONS,
            read_only: false,
        }
    }

    /// Runs `prompt` to its end in a new conversation.
    pub async fn run(&self, prompt: &str) -> Result<RunResult, Error> {
        self.prompt(prompt).await
    }

    /// A prompt to send, with its options; `.await` it to run it.
    pub fn prompt<'a>(&'a self, text: &'a str) -> Prompt<'a> {
        Prompt {
            agent: self,
            text,
            conversation: Target::New(None),
            on_event: None,
            until: None,
            policy: None,
            since: None,
        }
    }

    /// Goes on with a run that waits for a person: `decisions` names each pending write once
    /// (`(id, allowed)`), or the confirm is refused and nothing runs. Safe to retry, from any
    /// process: no write runs twice.
    pub async fn confirm(
        &self,
        suspended: SuspendedTurnId,
        decisions: &[(String, bool)],
    ) -> Result<RunResult, Error> {
        // Passed on as given: the confirm refuses a write decided twice, one left out, or one
        // that is not waiting, before anything runs.
        self.confirm_inner(suspended, &|_| decisions.to_vec(), &|_| {})
            .await
    }

    /// Goes on with a run that waits for a person, asking `allow` about each pending write as
    /// it is stored (its arguments are the stored ones, never a caller's copy) — what a process
    /// that shows the person the writes uses. `on_event` gets the continuation's events.
    pub async fn decide(
        &self,
        suspended: SuspendedTurnId,
        allow: impl Fn(&PendingWrite) -> bool + Send + Sync,
        on_event: impl Fn(&Event) + Send + Sync,
    ) -> Result<RunResult, Error> {
        let ask = |pending: &[PendingWrite]| {
            pending
                .iter()
                .map(|write| (write.id.clone(), allow(write)))
                .collect()
        };
        self.confirm_inner(suspended, &ask, &on_event).await
    }

    async fn confirm_inner(
        &self,
        suspended: SuspendedTurnId,
        decide: &Decider<'_>,
        on_event: &(dyn Fn(&Event) + Send + Sync),
    ) -> Result<RunResult, Error> {
        let started = Instant::now();
        let claim = self
            .inner
            .store()
            .claim(self.inner.scope().owner, suspended)
            .await?;
        let conversation = claim.conversation_id;
        let decisions = decide(claim.pending());
        let forward = |event: TurnEvent| {
            if let Some(event) = Event::of(event) {
                on_event(&event);
            }
        };
        let outcome = self.inner.confirm_claimed(claim, &decisions, &forward).await?;
        Ok(self.close(outcome, conversation, started, on_event))
    }

    /// The model the agent runs on.
    pub fn provider(&self) -> &dyn Provider {
        self.inner.config().provider.as_ref()
    }

    /// The tools the model is offered, with their tier, in the order it sees them.
    pub fn tools(&self) -> impl Iterator<Item = (&str, Tier)> {
        self.inner
            .tools()
            .tools()
            .iter()
            .map(|tool| (tool.name(), tool.tier()))
    }

    /// A conversation of the owner's — its title, its times and how many messages it holds —
    /// or `None` when the owner has no such one.
    pub async fn conversation(&self, id: ConversationId) -> Result<Option<ConversationSummary>, Error> {
        let scope = self.inner.scope();
        let found = kakeibo_agent::conversations::conversation(scope.owner, &scope.pool, id).await?;
        Ok(found.map(|conversation| conversation.summary))
    }

    /// The owner's conversations, most recently updated first (at most 200), each with what its
    /// runs cost.
    pub async fn conversations(&self) -> Result<Vec<(ConversationSummary, Spend)>, Error> {
        let scope = self.inner.scope();
        let list = kakeibo_agent::conversations::list_conversations(scope.owner, &scope.pool).await?;
        let spent: std::collections::HashMap<_, _> =
            kakeibo_agent::conversations::spend(scope.owner, &scope.pool, None)
                .await?
                .into_iter()
                .collect();
        Ok(list
            .into_iter()
            .map(|c| {
                let of_this = spent.get(&c.id).copied().unwrap_or_default();
                (c, of_this)
            })
            .collect())
    }

    /// What the runs of one conversation of the owner's came to (nothing when it has none).
    pub async fn spend(&self, conversation: ConversationId) -> Result<Spend, Error> {
        let scope = self.inner.scope();
        let found = kakeibo_agent::conversations::spend(scope.owner, &scope.pool, Some(conversation)).await?;
        Ok(found.into_iter().next().map(|(_, s)| s).unwrap_or_default())
    }

    /// A new, empty conversation titled `title`, for prompts sent with
    /// [`Prompt::in_conversation`] (a prompt's own new conversation is titled by its text).
    pub async fn new_conversation(&self, title: Option<&str>) -> Result<ConversationId, Error> {
        Ok(self
            .inner
            .store()
            .new_conversation(self.inner.scope().owner, title)
            .await?)
    }

    /// [`Agent::confirm`] of a turn already claimed — for a caller that answers a confirm made
    /// twice, or of a turn gone, before it starts streaming (the web's `409` and `410`).
    /// `decisions` are checked as [`Agent::confirm`] checks them. The leg's latency counts from
    /// `started`, when the caller began answering (as [`Prompt::since`] does for a prompt).
    pub async fn resume(
        &self,
        claim: Claim,
        decisions: &[(String, bool)],
        started: Instant,
        on_event: impl Fn(&Event) + Send + Sync,
    ) -> Result<RunResult, Error> {
        let conversation = claim.conversation_id;
        let forward = |event: TurnEvent| {
            if let Some(event) = Event::of(event) {
                on_event(&event);
            }
        };
        let outcome = self.inner.confirm_claimed(claim, decisions, &forward).await?;
        Ok(self.close(outcome, conversation, started, &on_event))
    }

    /// Sends the leg's closing events and makes its result.
    fn close(
        &self,
        outcome: Outcome,
        conversation: ConversationId,
        started: Instant,
        on_event: &(dyn Fn(&Event) + Send + Sync),
    ) -> RunResult {
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        for event in closing_events(&outcome, conversation, self.provider().model(), latency_ms) {
            on_event(&event);
        }
        RunResult::of(outcome, conversation, self.provider().model())
    }

    async fn send(self: &Agent, prompt: Prompt<'_>) -> Result<RunResult, Error> {
        let started = prompt.since.unwrap_or_else(Instant::now);
        let no_events = |_: &Event| {};
        let on_event: &(dyn Fn(&Event) + Send + Sync) = prompt.on_event.as_deref().unwrap_or(&no_events);
        let forward = |event: TurnEvent| {
            if let Some(event) = Event::of(event) {
                on_event(&event);
            }
        };
        let agent = &self.inner;
        let (conversation, title) = match prompt.conversation {
            Target::Existing(conversation) => (conversation, None),
            Target::New(id) => (
                id.unwrap_or_else(ConversationId::random),
                Some(kakeibo_agent::conversations::title_of(prompt.text)),
            ),
        };
        let title = title.as_deref().map(Some);
        // Without a stop, a future that never completes: the turn runs to its end.
        let mut until = prompt.until.unwrap_or_else(|| Box::pin(future::pending()));
        let outcome = agent
            .run_until(
                conversation,
                title,
                prompt.text,
                prompt.policy.as_ref().unwrap_or(&self.policy),
                &forward,
                until.as_mut(),
            )
            .await?;
        Ok(self.close(outcome, conversation, started, on_event))
    }
}

/// Where a prompt goes: a new conversation (with this id, or a random one) or an existing one.
#[derive(Debug, Clone, Copy)]
enum Target {
    New(Option<ConversationId>),
    Existing(ConversationId),
}

/// A prompt on its way to an [`Agent`]: `.await` it to run it to its end.
#[must_use = "a prompt runs only when awaited"]
pub struct Prompt<'a> {
    agent: &'a Agent,
    text: &'a str,
    conversation: Target,
    on_event: Option<Box<OnEvent<'a>>>,
    until: Option<Pin<Box<dyn Future<Output = ()> + Send + 'a>>>,
    policy: Option<ConfirmPolicy>,
    since: Option<Instant>,
}

impl std::fmt::Debug for Prompt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt")
            .field("text", &self.text)
            .field("conversation", &self.conversation)
            .finish_non_exhaustive()
    }
}

impl<'a> Prompt<'a> {
    /// Sends it to an existing conversation of the owner's (from an earlier
    /// [`RunResult::conversation`]) instead of starting a new one.
    pub fn in_conversation(mut self, conversation: ConversationId) -> Self {
        self.conversation = Target::Existing(conversation);
        self
    }

    /// Starts the new conversation `conversation` — a fresh id
    /// ([`ConversationId::random`]) you handed out before its first prompt — instead of one with
    /// a random id. The conversation is made by this prompt's turn, or not at all when the turn
    /// fails before it opens; an id already in use is refused.
    pub fn starting(mut self, conversation: ConversationId) -> Self {
        self.conversation = Target::New(Some(conversation));
        self
    }

    /// Calls `on_event` with each event of the run as it happens, the last being `turn_end`.
    pub fn on_event(mut self, on_event: impl Fn(&Event) + Send + Sync + 'a) -> Self {
        self.on_event = Some(Box::new(on_event));
        self
    }

    /// Stops the run when `stop` completes first (a `CancellationToken`'s `cancelled()`, a
    /// timer, Ctrl+C). A model call in flight is given up; tools that started finish. The run
    /// then ends with [`Status::Aborted`](crate::Status::Aborted) and
    /// [`Stop::Cancelled`](crate::Stop::Cancelled), and is stored like any other: the question,
    /// what ran before the stop, its events.
    pub fn until(mut self, stop: impl Future<Output = ()> + Send + 'a) -> Self {
        self.until = Some(Box::pin(stop));
        self
    }
}

impl Prompt<'_> {
    /// Decides this prompt's writes by `policy` instead of the agent's (one turn of a script
    /// that may write, among turns that may not).
    pub fn confirm_policy(mut self, policy: ConfirmPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Counts the run's latency (`turn_end`'s `latency_ms`) from `started` — when the request
    /// arrived — instead of from the await.
    pub fn since(mut self, started: Instant) -> Self {
        self.since = Some(started);
        self
    }
}

impl<'a> IntoFuture for Prompt<'a> {
    type Output = Result<RunResult, Error>;
    type IntoFuture = BoxFuture<'a, Result<RunResult, Error>>;

    fn into_future(self) -> Self::IntoFuture {
        let agent = self.agent;
        Box::pin(agent.send(self))
    }
}
