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
use kakeibo_agent::{
    Channel,
    turns::{Agent, ConfirmError, Outcome, TurnStore},
};
use kakeibo_core::{
    ConfirmPolicy, ConversationId, Hooks, PendingWrite, PermissionRules, Provider, ResultLine, RunSummary,
    Stop, Tier, Turn, TurnEvent, prompt::SYSTEM_PROMPT,
};
use kakeibo_core::{trace::one_line, turn::StopJudge};
use kakeibo_hooks::{HookSettings, SettingsHooks};
use kakeibo_judge::stop::LlmStopJudge;
use kakeibo_ledger::OwnerId;
use kakeibo_providers::select::{self, ModelRole};
use kakeibo_tools::{Scope, registry};
use serde_json::json;
use tokio::sync::{Mutex, mpsc};
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
    /// Continue this conversation instead of starting one.
    #[arg(long, value_name = "ID")]
    conversation: Option<Uuid>,
    /// Hooks from this settings file (Claude Code's `hooks` format: shell commands and HTTP
    /// endpoints at SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse
    /// and Stop).
    #[arg(long, value_name = "FILE")]
    hooks: Option<PathBuf>,
    #[command(flatten)]
    database: DbArgs,
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
    pub fn new(owner: Uuid, conversation: Option<Uuid>, hooks: Option<PathBuf>, database: DbArgs) -> Self {
        Self {
            owner,
            conversation,
            hooks,
            database,
        }
    }
}

/// The agent of one conversation.
struct Session {
    store: TurnStore,
    scope: Scope,
    provider: Box<dyn Provider>,
    rules: PermissionRules,
    hooks: Option<SettingsHooks>,
    /// The decision layer's stop judge, when `JUDGE_BASE_URL` names one that passed its probe.
    stop_judge: Option<LlmStopJudge>,
    conversation: ConversationId,
    /// The conversation is still to be made, by its first turn (which runs `SessionStart`).
    fresh: bool,
}

impl Session {
    /// The model and the hooks first (no database needed to say they are wrong), then the
    /// conversation.
    async fn open(args: &ChatArgs) -> Result<Self> {
        let provider = select::from_env(ModelRole::Agent).map_err(|e| anyhow::anyhow!("{e}"))?;
        let cwd = std::env::current_dir().unwrap_or_default();
        let hooks = match &args.hooks {
            Some(path) => Some(SettingsHooks::new(HookSettings::load(path)?, cwd.clone())),
            None => None,
        };
        let pool = pool(&args.database)?;
        let owner = OwnerId::new(args.owner);
        let store = TurnStore::new(pool.clone());
        let conversation = match args.conversation {
            Some(id) => {
                let known: Option<Uuid> =
                    sqlx::query_scalar("SELECT id FROM conversations WHERE owner_id = $1 AND id = $2")
                        .bind(owner.as_uuid())
                        .bind(id)
                        .fetch_optional(&pool)
                        .await
                        .context("reading the conversation")?;
                known
                    .map(ConversationId::from_uuid)
                    .with_context(|| format!("there is no conversation {id} in this ledger"))?
            }
            None => ConversationId::random(),
        };
        Ok(Self {
            store,
            scope: Scope::new(owner, pool).with_import_root(cwd),
            provider,
            rules: PermissionRules::default(),
            hooks,
            stop_judge: kakeibo_judge::from_settings(&env_setting).await.map(LlmStopJudge),
            conversation,
            fresh: args.conversation.is_none(),
        })
    }

    /// Whether the session's conversation is in the database.
    async fn conversation_exists(&self) -> Result<bool> {
        let found: Option<Uuid> =
            sqlx::query_scalar("SELECT id FROM conversations WHERE owner_id = $1 AND id = $2")
                .bind(self.scope.owner.as_uuid())
                .bind(self.conversation.as_uuid())
                .fetch_optional(&self.scope.pool)
                .await
                .context("reading the conversation")?;
        Ok(found.is_some())
    }

    /// Starts a new conversation: its first turn makes it.
    fn reset(&mut self) {
        self.conversation = ConversationId::random();
        self.fresh = true;
    }

    /// One turn; `None` when Ctrl+C stopped it (its run is marked aborted).
    async fn turn(
        &mut self,
        text: &str,
        policy: &ConfirmPolicy,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Option<Box<Turn>>> {
        let mut agent = Agent::new(
            &self.store,
            self.scope.clone(),
            self.provider.as_ref(),
            SYSTEM_PROMPT,
            &self.rules,
            Channel::Cli,
        );
        agent.hooks = self.hooks.as_ref().map(|h| h as &dyn Hooks);
        agent.stop_judge = self.stop_judge.as_ref().map(|j| j as &dyn StopJudge);
        let run = if self.fresh {
            agent.start(self.conversation, Some("kakeibo chat"), text, policy, on_event)
        } else {
            agent.chat(self.conversation, text, policy, on_event)
        };
        let outcome = tokio::select! {
            outcome = run => Some(outcome),
            _ = tokio::signal::ctrl_c() => None,
        };
        // A turn that answered, or failed after its opening, made the conversation; one refused
        // before it opened did not; after Ctrl+C only the database knows.
        self.fresh &= match &outcome {
            Some(Ok(_)) => false,
            Some(Err(ConfirmError::NotStarted(_))) => true,
            Some(Err(_)) | None => !self.conversation_exists().await?,
        };
        let Some(outcome) = outcome else {
            self.store
                .abort_open_runs(self.scope.owner, self.conversation)
                .await?;
            return Ok(None);
        };
        match outcome.context("the turn failed")? {
            Outcome::Finished { turn, .. } => Ok(Some(turn)),
            Outcome::Suspended { .. } => {
                anyhow::bail!("the turn waits for a confirmation, which the CLI never does")
            }
        }
    }
}

/// A setting from the environment; a blank one counts as unset.
fn env_setting(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Dim text when `styled` (a terminal), plain otherwise.
fn dim(styled: bool, text: &str) -> String {
    if styled {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// Writes and flushes. A closed pipe ends the program with 141 (as SIGPIPE would): the answer
/// was not delivered, so it is not a success.
fn put(out: &mut dyn Write, text: &str) {
    if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
        std::process::exit(141);
    }
}

/// What to say when a turn stopped short: its own message (never streamed as text) or a note.
fn stop_notice(turn: &Turn) -> Option<String> {
    let answer = turn.finished().map(|(_, a)| a.to_owned()).unwrap_or_default();
    match turn.stop()? {
        Stop::End => None,
        Stop::ProviderError
        | Stop::BudgetUnavailable
        | Stop::Blocked
        | Stop::Stuck
        | Stop::DailyCap
        | Stop::Cancelled
        | Stop::Hook => Some(answer),
        Stop::MaxTokens => Some("(cut off: the answer reached the length limit)".to_owned()),
        Stop::IterationLimit => {
            Some("(stopped: the limit of model calls for one turn was reached)".to_owned())
        }
    }
}

/// The human lines of a turn's events: streamed text, one dim line per tool call and result.
fn human_events(styled: bool, to_stderr: bool) -> impl Fn(TurnEvent) + Send + Sync {
    move |event| {
        let mut stdout = std::io::stdout();
        let mut stderr = std::io::stderr();
        let side: &mut dyn Write = if to_stderr { &mut stderr } else { &mut stdout };
        match event {
            // Each piece as it comes: a sequence split across two pieces starts with ESC, which
            // is shown as `\x1b` in the first.
            TurnEvent::Token(delta) => put(&mut std::io::stdout(), &visible_lines(&delta)),
            TurnEvent::ToolCall {
                name, input, tier, ..
            } => {
                let glyph = if tier == Some(Tier::Write) { "✎" } else { "→" };
                put(
                    side,
                    &format!(
                        "\n{}\n",
                        dim(
                            styled,
                            &format!(
                                "  {glyph} {} {}",
                                visible(&name),
                                visible(&one_line(&input.to_string(), 80))
                            )
                        )
                    ),
                );
            }
            TurnEvent::ToolResult { outcome, summary, .. } => {
                let not_run = outcome.not_run();
                let mark = if outcome.is_error() || not_run.is_some() {
                    "✗"
                } else {
                    "✓"
                };
                let summary = match not_run {
                    Some(said) => said.to_owned(),
                    None => kakeibo_core::turn::plain_summary(&summary),
                };
                put(
                    side,
                    &format!(
                        "{}\n",
                        dim(
                            styled,
                            &format!("    {mark} {}", visible(&one_line(&summary, 100)))
                        )
                    ),
                );
            }
            TurnEvent::ConfirmRequest(_) => {}
        }
    }
}

/// The footer after a turn: latency, tokens with the cached share, output, cost, iterations, run.
fn footer(turn: &Turn, latency: Duration) -> String {
    let usage = &turn.usage();
    let cached = (usage.cached_tokens * 100)
        .checked_div(usage.input_tokens)
        .unwrap_or(0);
    format!(
        "── {:.1} s · in {} ({cached}% cached) · out {} · {} (list price) · {} iteration{} · run {}",
        latency.as_secs_f64(),
        usage.input_tokens,
        usage.output_tokens,
        turn.cost().format(),
        turn.iteration(),
        if turn.iteration() == 1 { "" } else { "s" },
        turn.run_id().to_string().chars().take(8).collect::<String>()
    )
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
    let mut session = Session::open(&args.chat).await?;
    let policy = if args.allow_writes {
        ConfirmPolicy::AutoAllow
    } else {
        ConfirmPolicy::AutoDeny
    };
    let started = Instant::now();
    let styled = std::io::stderr().is_terminal();
    let streamed = |event: TurnEvent| {
        if let Some(event) = kakeibo_core::Event::of(event) {
            crate::outln!("{}", json_text(&event.to_json().to_string()));
        }
    };
    let human = human_events(styled, true);
    let on_event: &(dyn Fn(TurnEvent) + Send + Sync) = match args.format {
        OutputFormat::Text => &human,
        OutputFormat::Json => &|_| {},
        OutputFormat::StreamJson => &streamed,
    };
    let Some(turn) = session.turn(&args.prompt, &policy, on_event).await? else {
        if args.format != OutputFormat::Text {
            crate::outln!(
                "{}",
                json!({"type": "result", "status": "aborted", "conversation_id": session.conversation})
            );
        }
        eprintln!("kakeibo: aborted");
        return Ok(EXIT_ABORTED);
    };
    let latency = started.elapsed();
    let stop = turn.stop().unwrap_or(Stop::ProviderError);
    match args.format {
        OutputFormat::Text => {
            crate::outln!();
            if let Some(notice) = stop_notice(&turn) {
                eprintln!("kakeibo: {}", visible_lines(&notice));
            }
            eprintln!("{}", dim(styled, &footer(&turn, latency)));
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            let line = result_line(&turn, &session, latency)
                .context("the turn stopped without finishing or waiting")?;
            let line = serde_json::to_string(&line).context("writing the result line")?;
            crate::outln!("{}", json_text(&line));
        }
    }
    Ok(exit_code(stop))
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
fn result_line(turn: &Turn, session: &Session, latency: Duration) -> Option<ResultLine> {
    let model = session.provider.model();
    Some(ResultLine {
        run: RunSummary::of(turn, model)?,
        conversation_id: session.conversation,
        model: format!("{}:{model}", session.provider.name()),
        latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
    })
}

// endregion
// region: the REPL

/// Lines of standard input, read on their own thread and queued, so piped input behaves as typed
/// input: nothing is dropped while a turn runs, and a confirmation takes the next line.
type Lines = Arc<Mutex<LineQueue>>;

/// The lines read so far, with room to put one back (a line typed ahead while an answer was
/// streaming, which is not an answer to the `[y/N]` question).
#[derive(Debug)]
struct LineQueue {
    back: std::collections::VecDeque<String>,
    rx: mpsc::UnboundedReceiver<String>,
}

impl LineQueue {
    async fn next(&mut self) -> Option<String> {
        match self.back.pop_front() {
            Some(line) => Some(line),
            None => self.rx.recv().await,
        }
    }
}

fn stdin_lines() -> Lines {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut line = String::new();
        loop {
            line.clear();
            match stdin.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line.trim_end_matches(['\r', '\n']).to_owned()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    Arc::new(Mutex::new(LineQueue {
        back: std::collections::VecDeque::new(),
        rx,
    }))
}

/// Asks `[y/N]` on the terminal for each write; EOF or anything but y/yes declines.
fn inline_policy(lines: &Lines, styled: bool) -> ConfirmPolicy {
    let lines = Arc::clone(lines);
    ConfirmPolicy::Inline(Box::new(move |write: &PendingWrite| {
        let lines = Arc::clone(&lines);
        let question = format!("\n  ✎ {} — allow? [y/N] ", visible(&write.summary));
        Box::pin(async move {
            put(
                &mut std::io::stdout(),
                &if styled {
                    format!("\x1b[1m{question}\x1b[0m")
                } else {
                    question
                },
            );
            let mut queue = lines.lock().await;
            let answer = queue.next().await;
            let said = answer.as_deref().map(|a| a.trim().to_lowercase());
            let allowed = matches!(said.as_deref(), Some("y" | "yes"));
            // Anything but an answer declines, and goes back to be read as the next input.
            if let Some(line) =
                answer.filter(|_| !matches!(said.as_deref(), Some("y" | "yes" | "n" | "no" | "")))
            {
                queue.back.push_front(line);
            }
            drop(queue);
            if !styled {
                put(&mut std::io::stdout(), if allowed { "y\n" } else { "n\n" });
            }
            allowed
        })
    }))
}

const HELP: &str =
    "commands: /help (this), /reset (a new conversation), /history (messages so far), /exit or /quit
Ctrl+C stops the turn in flight; Ctrl+C again (or Ctrl+D) quits.";

/// `kakeibo chat`.
pub async fn repl(args: ChatArgs) -> Result<()> {
    let mut session = Session::open(&args).await?;
    let styled = std::io::stdout().is_terminal();
    let lines = stdin_lines();
    let policy = inline_policy(&lines, styled);
    crate::outln!(
        "kakeibo chat · {}:{} · conversation {}\n/help for commands",
        session.provider.name(),
        session.provider.model(),
        session.conversation
    );
    loop {
        if std::io::stdin().is_terminal() {
            put(&mut std::io::stdout(), "\n› ");
        }
        let line = tokio::select! {
            line = async { lines.lock().await.next().await } => line,
            _ = tokio::signal::ctrl_c() => None,
        };
        let Some(line) = line else { break };
        let text = line.trim();
        match text {
            "" => {}
            "/exit" | "/quit" => break,
            "/help" => {
                crate::outln!("{HELP}");
                let tools = registry(&session.scope);
                let names = |tier: Tier| {
                    tools
                        .tools()
                        .iter()
                        .filter(|t| t.tier() == tier)
                        .map(|t| t.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                crate::outln!("read tools: {}", names(Tier::Read));
                crate::outln!("write tools (asked [y/N] first): {}", names(Tier::Write));
            }
            "/reset" => {
                session.reset();
                crate::outln!("a new conversation: {}", session.conversation);
            }
            "/history" => {
                let history = session
                    .store
                    .history(session.scope.owner, session.conversation)
                    .await?;
                crate::outln!(
                    "{} messages in conversation {}",
                    history.len(),
                    session.conversation
                );
            }
            command if command.starts_with('/') => {
                crate::outln!("unknown command {command}; /help lists them");
            }
            question => {
                if !std::io::stdin().is_terminal() {
                    crate::outln!("› {question}");
                }
                let started = Instant::now();
                let on_event = human_events(styled, false);
                match session.turn(question, &policy, &on_event).await {
                    Ok(Some(turn)) => {
                        crate::outln!();
                        if let Some(notice) = stop_notice(&turn) {
                            crate::outln!("{}", visible_lines(&notice));
                        }
                        crate::outln!("{}", dim(styled, &footer(&turn, started.elapsed())));
                    }
                    Ok(None) => crate::outln!("\n(aborted)"),
                    Err(e) => eprintln!("kakeibo: {}", visible_lines(&format!("{e:#}"))),
                }
            }
        }
    }
    crate::outln!("bye — conversation {}", session.conversation);
    Ok(())
}

// endregion
