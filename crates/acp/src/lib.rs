//! kakeibo-acp: the agent over the Agent Client Protocol (ACP) on stdio — how an editor drives
//! it (`kakeibo --acp`).
//!
//! Each ACP session is one kakeibo conversation: its id is the conversation's, made by the
//! session's first prompt (so `SessionStart` hooks run then). A prompt's answer streams as
//! `agent_message_chunk` updates, each tool call as a `tool_call` update and its end as a
//! `tool_call_update` (`completed`, or `failed` for an error or a call that did not run). A write
//! goes to the client as `session/request_permission` before it runs — allow once, allow always
//! (that tool's writes run unasked for the rest of the session), or reject; it is declined when
//! the client rejects, cancels the turn, or goes away. `session/cancel` stops
//! the run: a model call in flight is given up, started tools finish, and the turn is stored
//! `aborted` with what ran — the prompt answers `cancelled`.
//!
//! Built on the library ([`kakeibo::Agent`]) over the same ledger, model settings and hooks as
//! the CLI; runs are recorded under the `acp` channel. stdout carries only the protocol.

// An editor can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod updates;

use std::{
    collections::{HashMap, HashSet},
    path::PathBuf,
    sync::{Arc, Mutex, PoisonError},
};

use agent_client_protocol::{
    Agent as AcpAgent, Client, Error as AcpError, Stdio, on_receive_notification, on_receive_request,
    v1::{
        ConnectionTo, Responder,
        schema::{
            AgentCapabilities, CancelNotification, ContentBlock, Implementation, InitializeRequest,
            InitializeResponse, McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse,
            PermissionOption, PermissionOptionKind, PromptCapabilities, PromptRequest, PromptResponse,
            RequestPermissionOutcome, RequestPermissionRequest, SessionId, SessionNotification,
            ToolCallUpdate, ToolCallUpdateFields, ToolKind,
        },
    },
};
use futures_util::future::BoxFuture;
use kakeibo::{
    Agent, Channel, ConfirmPolicy, ConversationId, McpConfig, McpServers, OwnerId, PendingWrite,
    mcp::{ServerSpec, Transport},
};
use tokio::sync::watch;

/// What the server runs over.
#[derive(Debug, Clone)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "each is a switch of its own on the command line"
)]
pub struct Settings {
    /// The `app_user` pool of the ledger's database ([`kakeibo::connect`]).
    pub pool: sqlx::PgPool,
    /// Whose ledger.
    pub owner: OwnerId,
    /// Hooks in Claude Code's settings format, if any.
    pub hooks: Option<PathBuf>,
    /// The decision layer's stop judge, probed ([`kakeibo::Judge`]), if any.
    pub judge: Option<kakeibo::Judge>,
    /// What to do with an answer's figure no tool returned (`--figures`).
    pub figures: kakeibo::FiguresPolicy,
    /// Whether a session reads the instruction files (AGENTS.md, KAKEIBO.md) found from its `cwd`.
    pub instructions: bool,
    /// Whether a session gets the skills found from its `cwd`, and the Skill tool.
    pub skills: bool,
    /// Permission rules for every session (a deny always wins; an allow runs a write unasked).
    pub rules: Arc<kakeibo::PermissionRules>,
    /// MCP servers every session starts (`--mcp-config`), before those its `session/new` names.
    pub mcp: McpConfig,
    /// How long an MCP server has to start, and a call to answer.
    pub mcp_timeouts: kakeibo::mcp::Timeouts,
    /// Whether the model keeps a task list (`todo_write`), sent as the session's plan.
    pub task_list: bool,
    /// Whether the model may hand work to subagents (`task`: the general-purpose type and the
    /// types found from the session's `cwd`); their calls are sent as tool calls of their own.
    pub subagents: bool,
    /// The most model calls one prompt may make (`--max-turns`); the loop's own limit without.
    pub max_turns: Option<u32>,
    /// Only the read tools (`--read-only`): no write is offered, so none is asked for.
    pub read_only: bool,
}

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the ACP connection failed: {0}")]
    Connection(String),
}

const ALLOW: &str = "allow";
const ALWAYS: &str = "always";
const REJECT: &str = "reject";

/// The write tools the client allowed for the rest of a session.
type Always = Arc<Mutex<HashSet<String>>>;

/// One ACP session: its agent, its conversation, whether the conversation exists yet, the flag
/// `session/cancel` raises, and what to tell the person before the first answer (MCP servers
/// left out).
struct Session {
    agent: Arc<Agent>,
    conversation: ConversationId,
    made: Mutex<bool>,
    cancel: watch::Sender<bool>,
    notices: Mutex<Vec<String>>,
}

type Sessions = Arc<Mutex<HashMap<SessionId, Arc<Session>>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves ACP on stdin/stdout until the client closes stdin.
pub async fn serve(settings: Settings) -> Result<(), ServeError> {
    let sessions: Sessions = Arc::default();
    let settings = Arc::new(settings);
    let (for_new, for_prompt, for_cancel) = (Arc::clone(&sessions), Arc::clone(&sessions), sessions);
    AcpAgent
        .v1()
        .name("kakeibo")
        .on_receive_request(
            async move |req: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond(
                    InitializeResponse::new(req.protocol_version)
                        .agent_capabilities(
                            AgentCapabilities::new()
                                .prompt_capabilities(PromptCapabilities::new())
                                .mcp_capabilities(McpCapabilities::new().http(true)),
                        )
                        .agent_info(Implementation::new("kakeibo", env!("CARGO_PKG_VERSION"))),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                if !req.cwd.is_absolute() {
                    return responder
                        .respond_with_error(AcpError::invalid_params().data("cwd must be an absolute path"));
                }
                let conversation = ConversationId::random();
                let id = SessionId::new(conversation.to_string());
                let (cancel, _) = watch::channel(false);
                let mut mcp = settings.mcp.clone();
                for server in &req.mcp_servers {
                    editor_server(&mut mcp, server);
                }
                let servers = McpServers::connect(&mcp, settings.mcp_timeouts).await;
                if !servers.reports().is_empty() {
                    tracing::warn!(
                        left_out = servers.reports().len(),
                        "MCP servers or tools left out of the session"
                    );
                }
                let built = build_agent(
                    &settings,
                    &req.cwd,
                    &cx,
                    &id,
                    &cancel,
                    &Always::default(),
                    &servers,
                );
                let agent = match built {
                    Ok(agent) => agent,
                    Err(why) => return responder.respond_with_error(AcpError::internal_error().data(why)),
                };
                let session = Session {
                    agent: Arc::new(agent),
                    conversation,
                    made: Mutex::new(false),
                    cancel,
                    notices: Mutex::new(servers.reports().to_vec()),
                };
                lock(&for_new).insert(id.clone(), Arc::new(session));
                tracing::info!(session = %id, "ACP session opened");
                responder.respond(NewSessionResponse::new(id))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest,
                        responder: Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                let Some(session) = lock(&for_prompt).get(&req.session_id).cloned() else {
                    return responder.respond_with_error(
                        AcpError::invalid_params().data(format!("there is no session {}", req.session_id)),
                    );
                };
                let conn = cx.clone();
                // The turn runs off the dispatch loop: it asks the client for permission, and a
                // `session/cancel` must reach it meanwhile.
                cx.spawn(async move {
                    let answer = prompt(&session, &conn, req).await;
                    responder.respond_with_result(answer)
                })
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |note: CancelNotification, _cx: ConnectionTo<Client>| {
                if let Some(session) = lock(&for_cancel).get(&note.session_id) {
                    session.cancel.send_replace(true);
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
        .map_err(|e| ServeError::Connection(e.to_string()))
}

/// A server an editor passed to `session/new`, added to `config` (an SSE one is reported and
/// left out: kakeibo speaks streamable HTTP, and says so in `initialize`).
fn editor_server(config: &mut McpConfig, server: &McpServer) {
    let spec = match server {
        McpServer::Stdio(stdio) => ServerSpec {
            name: stdio.name.clone(),
            transport: Transport::Stdio {
                command: stdio.command.display().to_string(),
                args: stdio.args.clone(),
                env: stdio
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
            },
        },
        McpServer::Http(http) => ServerSpec {
            name: http.name.clone(),
            transport: Transport::Http {
                url: http.url.clone(),
                headers: http
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            },
        },
        McpServer::Sse(sse) => {
            config.problems.push(format!(
                "the MCP server `{}` is left out: the old SSE transport is not supported; pass its streamable-HTTP endpoint",
                sse.name
            ));
            return;
        }
        _ => {
            config
                .problems
                .push("an MCP server of a kind kakeibo does not speak is left out".to_owned());
            return;
        }
    };
    config.add(spec);
}

/// The agent of one session: the environment's model, the ledger's owner, the instructions and
/// skills found from the session's `cwd`, the MCP servers' tools, its hooks and rules, and each
/// write asked of the client.
fn build_agent(
    settings: &Settings,
    cwd: &std::path::Path,
    cx: &ConnectionTo<Client>,
    session: &SessionId,
    cancel: &watch::Sender<bool>,
    always: &Always,
    servers: &McpServers,
) -> Result<Agent, String> {
    let (conn, session, cancel, always) = (cx.clone(), session.clone(), cancel.clone(), Arc::clone(always));
    let ask = move |write: &PendingWrite| -> BoxFuture<'static, bool> {
        let asking = Asking {
            conn: conn.clone(),
            session: session.clone(),
            cancelled: cancel.subscribe(),
            always: Arc::clone(&always),
        };
        Box::pin(asking.ask(write.clone()))
    };
    let mut builder = Agent::builder(settings.pool.clone(), settings.owner)
        .provider_from_env()
        .map_err(|e| e.to_string())?
        .channel(Channel::Acp)
        .figures(settings.figures)
        .rules(Arc::clone(&settings.rules))
        .mcp(servers)
        .confirm_policy(ConfirmPolicy::Inline(Box::new(ask)));
    if settings.task_list {
        builder = builder.task_list();
    }
    let (with_project, mut refused) = builder.project(cwd, settings.instructions, settings.skills);
    builder = with_project;
    if settings.subagents {
        let (with_types, left_out) = builder.project_subagents(cwd);
        builder = with_types;
        refused.extend(left_out);
    }
    for sentence in refused {
        tracing::warn!(%sentence, "left out of the session");
    }
    if let Some(path) = &settings.hooks {
        builder = builder.hooks_file(path).map_err(|e| e.to_string())?;
    }
    if let Some(judge) = &settings.judge {
        builder = builder.stop_judge(judge.clone());
    }
    if let Some(calls) = settings.max_turns {
        builder = builder.max_turns(calls);
    }
    if settings.read_only {
        builder = builder.read_only();
    }
    builder.build().map_err(|e| e.to_string())
}

/// What asking the client about a write needs.
struct Asking {
    conn: ConnectionTo<Client>,
    session: SessionId,
    cancelled: watch::Receiver<bool>,
    always: Always,
}

impl Asking {
    /// Whether `write` may run: only an allow (once, or always for its tool) runs it.
    async fn ask(mut self, write: PendingWrite) -> bool {
        if lock(&self.always).contains(&write.tool) {
            return true;
        }
        let call = ToolCallUpdate::new(
            write.id.clone(),
            ToolCallUpdateFields::new()
                .title(write.summary.clone())
                .kind(ToolKind::Edit)
                .raw_input(write.args.clone()),
        );
        let options = vec![
            PermissionOption::new(ALLOW, "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                ALWAYS,
                format!("Always allow {}", write.tool),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
        ];
        let asked =
            self.conn
                .send_request(RequestPermissionRequest::new(self.session.clone(), call, options));
        let outcome = tokio::select! {
            answer = asked.block_task() => answer.map(|a| a.outcome),
            // Cancelled while asking: declined (dropping the request tells the client so).
            _ = self.cancelled.wait_for(|c| *c) => return false,
        };
        match outcome {
            Ok(RequestPermissionOutcome::Selected(selected)) => match &*selected.option_id.0 {
                ALLOW => true,
                ALWAYS => {
                    lock(&self.always).insert(write.tool);
                    true
                }
                _ => false,
            },
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(error = %e, "the client did not answer a permission request; the write is declined");
                false
            }
        }
    }
}

/// Runs one prompt of `session` to its end, streaming its updates.
async fn prompt(
    session: &Session,
    conn: &ConnectionTo<Client>,
    req: PromptRequest,
) -> Result<PromptResponse, AcpError> {
    let text: String = req
        .prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if text.trim().is_empty() {
        return Err(AcpError::invalid_params().data("the prompt has no text"));
    }
    session.cancel.send_replace(false);
    let mut cancelled = session.cancel.subscribe();
    let stop = async move {
        // The session's flag outlives the prompt: a closed channel never counts as a cancel.
        if cancelled.wait_for(|c| *c).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let id = req.session_id.clone();
    let forward = |event: &kakeibo::Event| {
        if let Some(update) = updates::update_of(event)
            && let Err(e) = conn.send_notification(SessionNotification::new(id.clone(), update))
        {
            tracing::warn!(error = %e, "a session update could not be sent");
        }
    };
    let notices = std::mem::take(&mut *lock(&session.notices));
    for notice in notices {
        let update = updates::notice(&notice);
        if let Err(e) = conn.send_notification(SessionNotification::new(id.clone(), update)) {
            tracing::warn!(error = %e, "a session update could not be sent");
        }
    }
    let made = *lock(&session.made);
    let run = session.agent.prompt(&text).on_event(forward).until(stop);
    let run = if made {
        run.in_conversation(session.conversation)
    } else {
        run.starting(session.conversation)
    };
    let result = run
        .await
        .map_err(|e| AcpError::internal_error().data(e.to_string()))?;
    *lock(&session.made) = true;
    Ok(PromptResponse::new(updates::stop_reason(result.stop)))
}
