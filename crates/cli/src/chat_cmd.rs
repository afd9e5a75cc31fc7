//! `kakeibo chat` (the REPL) and `kakeibo -p PROMPT` (one shot): the agent over the ledger in
//! PostgreSQL, with the model the environment configures.
//!
//! Both keep their conversation in the database (`--conversation ID` continues one). The REPL
//! asks `[y/N]` before each write; one-shot mode denies writes unless `--allow-writes`.

use std::{
    io::{IsTerminal, Write},
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use kakeibo::{
    Agent, Channel, ConfirmError, ConfirmPolicy, ConversationId, Event, FiguresPolicy, HookSettings,
    McpConfig, McpServers, Models, OwnerId, ResultLine, RunResult, SettingsHooks, Spend, Stop, Tier,
    figures::FigureCheck, plain_summary,
};
use kakeibo_core::trace::one_line;
use kakeibo_providers::select;
use serde_json::json;
use uuid::Uuid;

use crate::{
    DbArgs, pool,
    terminal::{json as json_text, visible, visible_lines},
};

/// Exit status of a one-shot run that stopped short (iteration cap, stuck, length limit, blocked).
pub const EXIT_STOPPED_SHORT: u8 = 2;
/// Exit status of a run stopped by Ctrl+C.
pub const EXIT_ABORTED: u8 = 130;

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Whose ledger (default: the development owner).
    #[arg(long, value_name = "UUID", default_value_t = kakeibo_ledger::DEV_OWNER.as_uuid())]
    owner: Uuid,
    /// Continue this conversation instead of starting one (`/conversations` lists them).
    #[arg(long, visible_alias = "resume", value_name = "ID")]
    conversation: Option<Uuid>,
    /// Hooks from this settings file (Claude Code's `hooks` format: shell commands and HTTP
    /// endpoints at SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse
    /// and Stop).
    #[arg(long, value_name = "FILE")]
    hooks: Option<PathBuf>,
    /// What to do with a figure of an answer that no tool returned: `flag` marks it, `retry`
    /// asks the model once to correct the answer (a second, priced model call).
    #[arg(long, value_name = "POLICY", env = "FIGURES", default_value = "flag", value_parser = figures_policy)]
    figures: FiguresPolicy,
    #[command(flatten)]
    project: ProjectArgs,
    #[command(flatten)]
    sources: SourcesArgs,
    #[command(flatten)]
    database: DbArgs,
}

/// Tools from MCP servers, and the permission rules that decide calls.
#[derive(Debug, Clone, Default, Args)]
pub struct SourcesArgs {
    /// MCP servers from this file (Claude Code's .mcp.json: commands over stdio, streamable-HTTP
    /// URLs), their tools offered as mcp__SERVER__TOOL; may be given more than once. A tool its
    /// server marks readOnlyHint runs when asked, every other one is a write the person confirms.
    /// A server that fails to start (MCP_TIMEOUT, ms) is reported and left out; a call is given
    /// up after MCP_TOOL_TIMEOUT ms.
    #[arg(long = "mcp-config", value_name = "FILE")]
    pub mcp_config: Vec<PathBuf>,
    /// Permission rules, separated by `;` or newlines: `allow|ask|deny TOOL` or
    /// `… TOOL(key=value, …)`; a TOOL ending in `*` covers each tool it starts
    /// (`allow mcp__rates__*`). A deny always wins; an allow runs a write unasked.
    #[arg(long, value_name = "RULES", env = "PERMISSION_RULES")]
    pub permission_rules: Option<String>,
    /// At most N model calls a prompt (1 to 12): past them the model must answer without tools,
    /// and the run ends stopped short.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=12))]
    pub max_turns: Option<u32>,
    /// Offer the model only the read tools: nothing can be written, or so much as asked for.
    #[arg(long)]
    pub read_only: bool,
    /// Leave out the model's task list (todo_write: for long work it keeps a checklist, shown
    /// under its call).
    #[arg(long)]
    pub no_task_list: bool,
}

impl SourcesArgs {
    /// The rules given, or none.
    pub fn rules(&self) -> Result<kakeibo::PermissionRules> {
        let text = self.permission_rules.as_deref().unwrap_or_default();
        kakeibo::PermissionRules::parse(text).context("--permission-rules")
    }

    /// The servers of every `--mcp-config` file, in order (a file that cannot be read is an
    /// error; a server in it that is wrong is reported and left out).
    pub fn mcp_config(&self) -> Result<McpConfig> {
        let mut config = McpConfig::default();
        for path in &self.mcp_config {
            config.merge(McpConfig::load(path)?);
        }
        Ok(config)
    }
}

/// The person's instruction files and skills, found from the working directory.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct ProjectArgs {
    /// Leave out the instruction files (AGENTS.md, KAKEIBO.md from the repository root down to
    /// this folder, and the home directory's; 32 KiB at most).
    #[arg(long)]
    pub no_instructions: bool,
    /// Leave out the skills (folders with a SKILL.md under .agents/skills/ or .claude/skills/ of
    /// those folders), which the model loads with its Skill tool.
    #[arg(long)]
    pub no_skills: bool,
    /// Leave out subagents: the task tool, with which the model hands a self-contained piece of
    /// work to a subagent (the general-purpose type, and those in .md files under .agents/agents/
    /// or .claude/agents/ of those folders: frontmatter name, description, tools, model).
    #[arg(long)]
    pub no_subagents: bool,
}

/// `--figures`: `flag` or `retry`.
pub fn figures_policy(text: &str) -> Result<FiguresPolicy, String> {
    FiguresPolicy::parse(text)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The answer on stdout; tool lines and the footer on stderr.
    Text,
    /// One JSON result object on stdout.
    Json,
    /// One JSON event per line on stdout, then the result line.
    StreamJson,
}

/// One shot: the prompt and how to print.
#[derive(Debug)]
pub struct PrintArgs {
    pub prompt: String,
    pub format: OutputFormat,
    pub allow_writes: bool,
    pub chat: ChatArgs,
}

impl ChatArgs {
    pub fn new(
        owner: Uuid,
        conversation: Option<Uuid>,
        hooks: Option<PathBuf>,
        figures: FiguresPolicy,
        project: ProjectArgs,
        sources: SourcesArgs,
        database: DbArgs,
    ) -> Self {
        Self {
            owner,
            conversation,
            hooks,
            figures,
            project,
            sources,
            database,
        }
    }
}

/// The agent of one conversation: the library's, as any program would build it.
pub(crate) struct Session {
    pub(crate) agent: Agent,
    pub(crate) conversation: ConversationId,
    /// The conversation is still to be made, by its first turn (which runs `SessionStart`).
    pub(crate) fresh: bool,
    /// What the agent is made of besides its model, kept to make it again on another model.
    parts: Parts,
    /// This session's runs, their tokens and cost.
    pub(crate) spent: Spend,
}

/// What a session's agent is made of besides its model.
struct Parts {
    pool: sqlx::PgPool,
    owner: OwnerId,
    rules: Arc<kakeibo::PermissionRules>,
    /// The MCP servers started for the session (kept up while it lasts).
    servers: McpServers,
    hooks: Option<HookSettings>,
    cwd: PathBuf,
    project: ProjectArgs,
    figures: FiguresPolicy,
    judge: Option<kakeibo::Judge>,
    max_turns: Option<u32>,
    read_only: bool,
    task_list: bool,
}

impl Parts {
    /// The agent on `models`; the sentences about files left out said once (`say`).
    fn build(&self, models: Models, policy: ConfirmPolicy, say: bool) -> Result<Agent> {
        let mut builder = Agent::builder(self.pool.clone(), self.owner)
            .models(models)
            .channel(Channel::Cli)
            .confirm_policy(policy)
            .rules(Arc::clone(&self.rules))
            .figures(self.figures)
            .import_root(self.cwd.clone())
            .mcp(&self.servers);
        let (with_project, mut refused) =
            builder.project(&self.cwd, !self.project.no_instructions, !self.project.no_skills);
        builder = with_project;
        if !self.project.no_subagents {
            let (with_types, left_out) = builder.project_subagents(&self.cwd);
            builder = with_types;
            refused.extend(left_out);
        }
        if say {
            for sentence in refused {
                eprintln!("kakeibo: {}", visible(&sentence));
            }
        }
        if let Some(settings) = &self.hooks {
            builder = builder.hooks(SettingsHooks::new(settings.clone(), self.cwd.clone()));
        }
        if let Some(judge) = &self.judge {
            builder = builder.stop_judge(judge.clone());
        }
        if let Some(calls) = self.max_turns {
            builder = builder.max_turns(calls);
        }
        if self.read_only {
            builder = builder.read_only();
        }
        if self.task_list {
            builder = builder.task_list();
        }
        Ok(builder.build()?)
    }
}

/// The models `spec` names within the providers configured: `MODEL` (another model of the
/// provider in use), `gemini:MODEL`, `anthropic:MODEL`, `openai:MODEL` or `script:PATH`.
pub(crate) fn models_for(spec: &str) -> Result<Models> {
    select::models_named(spec, &env_setting).map_err(|e| anyhow::anyhow!("{e}"))
}

impl Session {
    /// The model and the hooks first (no database needed to say they are wrong), then the
    /// MCP servers and the conversation. `policy` decides the writes the model asks for.
    pub(crate) async fn open(args: &ChatArgs, policy: ConfirmPolicy) -> Result<Self> {
        let models = select::models_from_env().map_err(|e| anyhow::anyhow!("{e}"))?;
        let hooks = args.hooks.as_deref().map(HookSettings::load).transpose()?;
        let rules = args.sources.rules()?;
        let mcp = args.sources.mcp_config()?;
        let pool = pool(&args.database)?;
        // Without --mcp-config: nothing to start, nothing to say.
        let servers = McpServers::connect(&mcp, kakeibo::mcp::Timeouts::from_env()).await;
        for sentence in servers.reports() {
            eprintln!("kakeibo: {}", visible(sentence));
        }
        let parts = Parts {
            pool,
            owner: OwnerId::new(args.owner),
            rules: Arc::new(rules),
            servers,
            hooks,
            cwd: std::env::current_dir().unwrap_or_default(),
            project: args.project,
            figures: args.figures,
            judge: judge(&env_setting).await,
            max_turns: args.sources.max_turns,
            read_only: args.sources.read_only,
            task_list: !args.sources.no_task_list,
        };
        let agent = parts.build(models, policy, true)?;
        let mut session = Self {
            agent,
            conversation: ConversationId::random(),
            fresh: true,
            parts,
            spent: Spend::default(),
        };
        if let Some(id) = args.conversation {
            session.resume(ConversationId::from_uuid(id)).await?;
        }
        Ok(session)
    }

    /// Goes on with the owner's conversation `id` (an error when there is none).
    pub(crate) async fn resume(&mut self, id: ConversationId) -> Result<kakeibo::ConversationSummary> {
        let found = self
            .agent
            .conversation(id)
            .await
            .context("reading the conversation")?
            .with_context(|| format!("there is no conversation {id} in this ledger"))?;
        self.conversation = id;
        self.fresh = false;
        Ok(found)
    }

    /// The same session on the models `spec` names ([`models_for`]), `policy` deciding writes.
    pub(crate) fn switch_model(&mut self, spec: &str, policy: ConfirmPolicy) -> Result<()> {
        self.agent = self.parts.build(models_for(spec)?, policy, false)?;
        Ok(())
    }

    /// Whether the session offers only read tools.
    pub(crate) fn read_only(&self) -> bool {
        self.parts.read_only
    }

    /// Starts a new conversation: its first turn makes it.
    pub(crate) fn reset(&mut self) {
        self.conversation = ConversationId::random();
        self.fresh = true;
    }

    /// One turn, to its end; Ctrl+C stops it ([`Stop::Cancelled`], its run stored aborted).
    pub(crate) async fn turn(
        &mut self,
        text: &str,
        on_event: impl Fn(&Event) + Send + Sync,
    ) -> Result<RunResult> {
        // Listening from now: a Ctrl+C before the turn's first await is not lost.
        let ctrl_c = tokio::spawn(tokio::signal::ctrl_c());
        let stop = ctrl_c.abort_handle();
        let prompt = self.agent.prompt(text).on_event(on_event).until(async move {
            if matches!(ctrl_c.await, Ok(Ok(()))) {
                return;
            }
            // Without a signal to listen to, the turn runs to its end.
            std::future::pending::<()>().await;
        });
        let result = if self.fresh {
            prompt.starting(self.conversation).await
        } else {
            prompt.in_conversation(self.conversation).await
        };
        stop.abort();
        // A turn that ended, or failed after its opening, made the conversation; one refused
        // before it opened did not; otherwise only the database knows.
        self.fresh &= match &result {
            Ok(_) => false,
            Err(kakeibo::Error::Turn(ConfirmError::NotStarted(_))) => true,
            Err(_) => self.agent.conversation(self.conversation).await?.is_none(),
        };
        let result = result.context("the turn failed")?;
        self.spent.runs += 1;
        self.spent.input_tokens += i64::try_from(result.usage.input_tokens).unwrap_or(i64::MAX);
        self.spent.output_tokens += i64::try_from(result.usage.output_tokens).unwrap_or(i64::MAX);
        self.spent.cost_micro_usd += result.cost.0;
        if result.is_waiting() {
            anyhow::bail!("the turn waits for a confirmation, which the CLI never does");
        }
        Ok(result)
    }
}

/// A setting from the environment; a blank one counts as unset.
fn env_setting(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Dim text when `styled` (a terminal), plain otherwise.
pub(crate) fn dim(styled: bool, text: &str) -> String {
    if styled {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// Writes and flushes. A closed pipe ends the program with 141 (as SIGPIPE would): the answer
/// was not delivered, so it is not a success.
pub(crate) fn put(out: &mut dyn Write, text: &str) {
    if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
        std::process::exit(141);
    }
}

/// What to say when a turn stopped short: its own message (never streamed as text) or a note.
pub(crate) fn stop_notice(result: &RunResult) -> Option<String> {
    match result.stop? {
        Stop::End => None,
        Stop::ProviderError
        | Stop::BudgetUnavailable
        | Stop::Blocked
        | Stop::Stuck
        | Stop::DailyCap
        | Stop::Cancelled
        | Stop::Hook => Some(result.text.clone()),
        Stop::MaxTokens => Some("(cut off: the answer reached the length limit)".to_owned()),
        Stop::IterationLimit => {
            Some("(stopped: the limit of model calls for one turn was reached)".to_owned())
        }
    }
}

/// The human lines of a turn's events: streamed text, one dim line per tool call and result;
/// a subagent's calls indented under the `task` call that started it.
pub(crate) fn human_events(styled: bool, to_stderr: bool) -> impl Fn(&Event) + Send + Sync {
    move |event| {
        let mut stdout = std::io::stdout();
        let mut stderr = std::io::stderr();
        let side: &mut dyn Write = if to_stderr { &mut stderr } else { &mut stdout };
        show(event, styled, side, "");
    }
}

/// One event's lines, each call line after `indent` (deeper for a subagent's).
fn show(event: &Event, styled: bool, side: &mut dyn Write, indent: &str) {
    match event {
        // Each piece as it comes: a sequence split across two pieces starts with ESC, which
        // is shown as `\x1b` in the first.
        Event::Token { delta } => put(&mut std::io::stdout(), &visible_lines(delta)),
        Event::ToolCall { name, args, .. } if name == kakeibo::todo::NAME => {
            if let Some(todos) = kakeibo::todo::todos_of(args) {
                put(side, &format!("\n{}", dim(styled, &checklist(&todos, indent))));
            }
        }
        Event::ToolCall { name, args, .. } if name == kakeibo::subagent::TASK => {
            let kind = args["subagent_type"]
                .as_str()
                .unwrap_or(kakeibo::subagent::GENERAL_PURPOSE);
            let what = args["description"].as_str().unwrap_or_default();
            let line = format!(
                "{indent}  ⇢ subagent {}: {}",
                visible(kind),
                visible(&one_line(what, 80))
            );
            put(side, &format!("\n{}\n", dim(styled, &line)));
        }
        Event::ToolCall { name, args, tier, .. } => {
            let glyph = if *tier == Some(Tier::Write) { "✎" } else { "→" };
            let line = format!(
                "{indent}  {glyph} {} {}",
                visible(name),
                visible(&one_line(&args.to_string(), 80))
            );
            put(side, &format!("\n{}\n", dim(styled, &line)));
        }
        // The list was shown with its call; only a list refused says more.
        Event::ToolResult { name, outcome, .. }
            if name == kakeibo::todo::NAME && !outcome.is_error() && outcome.not_run().is_none() => {}
        Event::ToolResult {
            name,
            outcome,
            summary,
            headline,
            ..
        } => {
            let not_run = outcome.not_run();
            let mark = if outcome.is_error() || not_run.is_some() {
                "✗"
            } else {
                "✓"
            };
            let summary = match (not_run, headline) {
                (Some(said), _) => said.to_owned(),
                (None, Some(h)) => format!("{}: {}", h.label, h.formatted),
                (None, None) if name == kakeibo::subagent::TASK => "the subagent answered".to_owned(),
                (None, None) => plain_summary(summary),
            };
            let line = format!("{indent}    {mark} {}", visible(&one_line(&summary, 100)));
            put(side, &format!("{}\n", dim(styled, &line)));
        }
        Event::Subagent { event, .. } => show(event, styled, side, &format!("{indent}    ")),
        Event::Figures(checked) => put(side, &format!("\n{}\n", figures_line(styled, checked))),
        Event::Correcting { figures } => {
            let list = figures.iter().map(|f| visible(f)).collect::<Vec<_>>().join(", ");
            let line = format!(
                "  ↻ {list} not found in your ledger's results: the model is asked to correct its answer"
            );
            put(side, &format!("\n{}\n", dim(styled, &line)));
        }
        Event::ConfirmRequest { .. } | Event::TurnEnd(_) | Event::Error { .. } => {}
    }
}

/// A task list as the terminal shows it: a line an item, `☑` done, `▸` the one in progress,
/// `☐` to do.
fn checklist(todos: &[kakeibo::todo::Todo], indent: &str) -> String {
    use kakeibo::todo::TodoStatus;
    let mut lines = String::new();
    for todo in todos {
        let mark = match todo.status {
            TodoStatus::Completed => "☑",
            TodoStatus::InProgress => "▸",
            TodoStatus::Pending => "☐",
        };
        lines.push_str(indent);
        lines.push_str("    ");
        lines.push_str(mark);
        lines.push(' ');
        lines.push_str(&visible(&one_line(&todo.content, 100)));
        lines.push('\n');
    }
    lines
}

/// The line under an answer that states figures: each one not found in the turn's tool results,
/// marked; else how many were found.
fn figures_line(styled: bool, checked: &FigureCheck) -> String {
    let corrected = if checked.corrected.is_empty() {
        String::new()
    } else {
        let list = checked
            .corrected
            .iter()
            .map(|f| visible(f))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "{}\n",
            dim(
                styled,
                &format!("  ↻ corrected: the first answer stated {list}, which no tool returned")
            )
        )
    };
    format!("{corrected}{}", figures_verdict(styled, checked))
}

fn figures_verdict(styled: bool, checked: &FigureCheck) -> String {
    let missing = checked.ungrounded_texts();
    if missing.is_empty() {
        let n = checked.figures.len();
        return dim(
            styled,
            &format!(
                "  ✓ {n} figure{} found in your ledger's results",
                if n == 1 { "" } else { "s" }
            ),
        );
    }
    let list = missing.iter().map(|m| visible(m)).collect::<Vec<_>>().join(", ");
    let line = format!(
        "  ⚠ not found in your ledger's results: {list} — the model wrote {} without a tool returning {}",
        if missing.len() == 1 { "it" } else { "them" },
        if missing.len() == 1 { "it" } else { "them" },
    );
    if styled {
        format!("\x1b[33m{line}\x1b[0m")
    } else {
        line
    }
}

/// The footer after a turn: latency, tokens with the cached share, output, cost, iterations, run.
pub(crate) fn footer(result: &RunResult, latency: Duration) -> String {
    let usage = &result.usage;
    let cached = (usage.cached_tokens * 100)
        .checked_div(usage.input_tokens)
        .unwrap_or(0);
    format!(
        "── {:.1} s · in {} ({cached}% cached) · out {} · {} (list price) · {} iteration{} · run {}",
        latency.as_secs_f64(),
        usage.input_tokens,
        usage.output_tokens,
        result.cost.format(),
        result.iterations,
        if result.iterations == 1 { "" } else { "s" },
        result.run_id.to_string().chars().take(8).collect::<String>()
    )
}

/// The decision layer's judge the environment names, once it passed its probe; a judge that
/// cannot serve is said on stderr (the session goes on without it).
pub(crate) async fn judge(var: &dyn Fn(&str) -> Option<String>) -> Option<kakeibo::Judge> {
    kakeibo_judge::from_settings_or_why(var)
        .await
        .unwrap_or_else(|e| {
            eprintln!("kakeibo: {}", visible(&e.to_string()));
            None
        })
}

// region: one shot

/// `kakeibo -p PROMPT`: exit 0 finished, 2 stopped short, 1 error, 130 aborted.
pub async fn print(args: PrintArgs) -> u8 {
    let format = args.format;
    match print_inner(args).await {
        Ok(code) => code,
        Err(e) => {
            if format != OutputFormat::Text {
                let result = json!({"type": "result", "status": "error", "error": format!("{e:#}")});
                crate::outln!("{}", json_text(&result.to_string()));
            }
            eprintln!("kakeibo: error: {}", visible_lines(&format!("{e:#}")));
            1
        }
    }
}

async fn print_inner(args: PrintArgs) -> Result<u8> {
    let policy = if args.allow_writes {
        ConfirmPolicy::AutoAllow
    } else {
        ConfirmPolicy::AutoDeny
    };
    let mut session = Session::open(&args.chat, policy).await?;
    let started = Instant::now();
    let styled = std::io::stderr().is_terminal();
    let human = human_events(styled, true);
    let format = args.format;
    // The run's own `turn_end` is not streamed: the result line says it all.
    let on_event = move |event: &Event| match format {
        OutputFormat::Text => human(event),
        OutputFormat::Json => {}
        OutputFormat::StreamJson => {
            if !matches!(event, Event::TurnEnd(_)) {
                crate::outln!("{}", json_text(&event.to_json().to_string()));
            }
        }
    };
    let result = session.turn(&args.prompt, on_event).await?;
    let latency = started.elapsed();
    match args.format {
        OutputFormat::Text => {
            crate::outln!();
            if let Some(notice) = stop_notice(&result) {
                eprintln!("kakeibo: {}", visible_lines(&notice));
            }
            eprintln!("{}", dim(styled, &footer(&result, latency)));
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            let line = result_line(&result, &session, latency)
                .context("the turn stopped without finishing or waiting")?;
            let line = serde_json::to_string(&line).context("writing the result line")?;
            crate::outln!("{}", json_text(&line));
        }
    }
    Ok(exit_code(result.stop.unwrap_or(Stop::End)))
}

fn exit_code(stop: Stop) -> u8 {
    match stop {
        Stop::End => 0,
        Stop::IterationLimit
        | Stop::Stuck
        | Stop::MaxTokens
        | Stop::Blocked
        | Stop::DailyCap
        | Stop::Hook => EXIT_STOPPED_SHORT,
        Stop::ProviderError | Stop::BudgetUnavailable => 1,
        Stop::Cancelled => EXIT_ABORTED,
    }
}

/// The `result` line of a finished turn: its summary, where it belongs, the model and the time.
fn result_line(result: &RunResult, session: &Session, latency: Duration) -> Option<ResultLine> {
    let provider = session.agent.provider();
    Some(ResultLine {
        run: result.summary.clone()?,
        conversation_id: session.conversation,
        model: format!("{}:{}", provider.name(), provider.model()),
        latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
    })
}

// endregion
