//! `kakeibo chat`: the REPL over one session — its commands, the `[y/N]` question before each
//! write, and standard input read so piped lines behave as typed ones.

use std::{io::IsTerminal, sync::Arc, time::Instant};

use anyhow::Result;
use kakeibo::{ConfirmPolicy, ConversationId, PendingWrite, Spend, Stop, Tier};
use tokio::sync::{Mutex, mpsc};

use crate::{
    chat_cmd::{ChatArgs, Session, dim, footer, human_events, put, stop_notice},
    terminal::{visible, visible_lines},
};

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

/// The REPL's commands, for `/help` (and `kakeibo chat --help`, which lists the same).
pub const HELP: &str = "commands:
  /help                       this list
  /conversations, /sessions   your conversations: id, last change, messages, cost, title
  /resume ID                  go on with a conversation (its id, or the start of it)
  /reset                      a new conversation
  /history                    how many messages this conversation holds
  /cost                       what this conversation and this session cost
  /model [ID]                 the model in use; ID switches (a model of the same provider,
                              or gemini:M, anthropic:M, openai:M, script:PATH when configured)
  /tools                      the tools offered, read or write
  /exit, /quit                leave
Ctrl+C stops the turn in flight (the next one is told); Ctrl+C again (or Ctrl+D) quits.";

/// What a command line asks of the loop.
enum Flow {
    Go,
    Quit,
}

/// `kakeibo chat`.
pub async fn repl(args: ChatArgs) -> Result<()> {
    let styled = std::io::stdout().is_terminal();
    let lines = stdin_lines();
    let mut session = Session::open(&args, inline_policy(&lines, styled)).await?;
    crate::outln!(
        "kakeibo chat · {}:{} · conversation {}\n/help for commands",
        session.agent.provider().name(),
        session.agent.provider().model(),
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
        if text.is_empty() {
            continue;
        }
        if text.starts_with('/') {
            match command(&mut session, text, &lines, styled).await {
                Ok(Flow::Go) => {}
                Ok(Flow::Quit) => break,
                Err(e) => crate::outln!("{}", visible_lines(&format!("{e:#}"))),
            }
            continue;
        }
        if !std::io::stdin().is_terminal() {
            crate::outln!("› {text}");
        }
        let started = Instant::now();
        match session.turn(text, human_events(styled, false)).await {
            Ok(result) if result.stop == Some(Stop::Cancelled) => crate::outln!("\n(aborted)"),
            Ok(result) => {
                crate::outln!();
                if let Some(notice) = stop_notice(&result) {
                    crate::outln!("{}", visible_lines(&notice));
                }
                crate::outln!("{}", dim(styled, &footer(&result, started.elapsed())));
            }
            Err(e) => eprintln!("kakeibo: {}", visible_lines(&format!("{e:#}"))),
        }
    }
    crate::outln!("bye — conversation {}", session.conversation);
    Ok(())
}

/// Runs one `/command`.
async fn command(session: &mut Session, text: &str, lines: &Lines, styled: bool) -> Result<Flow> {
    let (name, arg) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let arg = arg.trim();
    match name {
        "/exit" | "/quit" => return Ok(Flow::Quit),
        "/help" => crate::outln!("{HELP}"),
        "/reset" => {
            session.reset();
            crate::outln!("a new conversation: {}", session.conversation);
        }
        "/history" => {
            let messages = session
                .agent
                .conversation(session.conversation)
                .await?
                .map_or(0, |conversation| conversation.messages);
            crate::outln!("{messages} messages in conversation {}", session.conversation);
        }
        "/conversations" | "/sessions" => list_conversations(session).await?,
        "/resume" => {
            let id = find_conversation(session, arg).await?;
            let found = session.resume(id).await?;
            crate::outln!(
                "resumed conversation {id} · {} · {} messages",
                visible(found.title.as_deref().unwrap_or("(untitled)")),
                found.messages
            );
        }
        "/cost" => {
            let here = if session.fresh {
                Spend::default()
            } else {
                session.agent.spend(session.conversation).await?
            };
            crate::outln!("this conversation: {}", spend_line(&here));
            crate::outln!("this session:      {}", spend_line(&session.spent));
        }
        "/model" if arg.is_empty() => {
            let provider = session.agent.provider();
            crate::outln!(
                "model: {}:{} — /model ID switches (AGENT_MODEL and KAKEIBO_PROVIDER set the one to start with)",
                provider.name(),
                provider.model()
            );
        }
        "/model" => {
            session.switch_model(arg, inline_policy(lines, styled))?;
            let provider = session.agent.provider();
            crate::outln!(
                "model: {}:{} (the conversation goes on)",
                provider.name(),
                provider.model()
            );
        }
        "/tools" => {
            for (name, tier) in session.agent.tools() {
                let tier = match tier {
                    Tier::Read => "read ",
                    Tier::Write => "write",
                };
                crate::outln!("  {tier}  {}", visible(name));
            }
            if session.read_only() {
                crate::outln!("(read-only: no write tool is offered)");
            } else {
                crate::outln!("(each write asks [y/N] first, unless a permission rule decides)");
            }
        }
        _ => crate::outln!("unknown command {}; /help lists them", visible(name)),
    }
    Ok(Flow::Go)
}

/// The owner's conversations, most recent first, the session's marked `*`.
async fn list_conversations(session: &Session) -> Result<()> {
    let listed = session.agent.conversations().await?;
    if listed.is_empty() {
        crate::outln!("no conversations yet");
        return Ok(());
    }
    for (conversation, spend) in listed.iter().take(30) {
        let here = if conversation.id == session.conversation.as_uuid() {
            "*"
        } else {
            " "
        };
        crate::outln!(
            "{here} {}  {}  {:>4} messages  {:>11}  {}",
            conversation.id.to_string().chars().take(8).collect::<String>(),
            conversation.updated_at.format("%Y-%m-%d %H:%M"),
            conversation.messages,
            kakeibo::MicroUsd(spend.cost_micro_usd).format(),
            visible(conversation.title.as_deref().unwrap_or("(untitled)"))
        );
    }
    if listed.len() > 30 {
        crate::outln!("… and {} older", listed.len() - 30);
    }
    crate::outln!("/resume ID goes on with one (the first characters of its id are enough)");
    Ok(())
}

/// The conversation `text` names: a whole id, or the start of exactly one of the owner's.
async fn find_conversation(session: &Session, text: &str) -> Result<ConversationId> {
    if text.is_empty() {
        anyhow::bail!("/resume takes a conversation's id; /conversations lists them");
    }
    if let Ok(id) = text.parse::<uuid::Uuid>() {
        return Ok(ConversationId::from_uuid(id));
    }
    let wanted = text.to_ascii_lowercase();
    let matching: Vec<uuid::Uuid> = session
        .agent
        .conversations()
        .await?
        .into_iter()
        .map(|(c, _)| c.id)
        .filter(|id| id.to_string().starts_with(&wanted))
        .collect();
    match matching.as_slice() {
        [id] => Ok(ConversationId::from_uuid(*id)),
        [] => anyhow::bail!(
            "no conversation's id starts with {}; /conversations lists them",
            visible(text)
        ),
        _ => anyhow::bail!(
            "{} conversations' ids start with {}: give more of it",
            matching.len(),
            visible(text)
        ),
    }
}

/// `3 runs · in 1,234 · out 56 · $0.0012 (list price)`.
fn spend_line(spend: &Spend) -> String {
    format!(
        "{} run{} · in {} · out {} · {} (list price)",
        spend.runs,
        if spend.runs == 1 { "" } else { "s" },
        spend.input_tokens,
        spend.output_tokens,
        kakeibo::MicroUsd(spend.cost_micro_usd).format()
    )
}
