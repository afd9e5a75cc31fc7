//! kakeibo, the library: the agent over a ledger, in a Rust program of your own.
//!
//! The fourth way to drive kakeibo, beside the web, the CLI, the MCP server and ACP. Build an
//! [`Agent`] over a ledger (a PostgreSQL pool and an owner), with a model, a confirm policy,
//! permission rules and tools of your own beside the fourteen finance tools; then send it a prompt
//! and read the [`RunResult`], or watch its [`Event`]s as they happen.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kakeibo::Error> {
//! use kakeibo::{Agent, DEV_OWNER};
//!
//! let pool = kakeibo::connect(&kakeibo::database_url()?)?;
//! let agent = Agent::builder(pool, DEV_OWNER).provider_from_env()?.build()?;
//! let result = agent.run("What did I spend on dining in March 2025?").await?;
//! println!("{}", result.text);
//! # Ok(()) }
//! ```
//!
//! - The model comes from the same settings as the CLI's ([`AgentBuilder::provider_from_env`]:
//!   `GEMINI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_BASE_URL`, or `KAKEIBO_PROVIDER=script:FILE`
//!   for a scripted model that needs no key), or is any [`Provider`] you pass in.
//! - Writes are decided by the [`ConfirmPolicy`]: denied unless you say otherwise
//!   ([`ConfirmPolicy::AutoDeny`]), allowed, asked through a function of yours, or suspended for
//!   a person to decide later — in this process or another one, with [`Agent::confirm`]. A
//!   suspended write runs exactly once however many processes confirm it.
//! - Each prompt is a turn of a conversation: a new one by default, or one you name with
//!   [`Prompt::in_conversation`]; the history is kept in the database.
//! - Events ([`Prompt::on_event`]) are the same objects the web's stream and the CLI's
//!   `stream-json` carry: `token`, `tool_call`, `tool_result`, `confirm_request`, `figures`,
//!   `turn_end`.
//! - Every figure an answer states is checked against the figures its tools returned
//!   ([`RunResult::figures`], the `figures` event): grounded, with the tool figures and the
//!   ledger rows behind it, or ungrounded.
//! - A prompt stops when the future you give [`Prompt::until`] completes first: the run ends
//!   aborted and is stored with what ran before the stop.
//!
//! - The person's own instructions and skills ([`AgentBuilder::project`]: `AGENTS.md` and
//!   `KAKEIBO.md` from the repository root down, Agent Skills folders under `.agents/skills/`)
//!   follow the system prompt; a `Skill` tool loads a skill's instructions when the model asks.
//! - Hooks — your own Rust ([`Hooks`]) or a Claude Code settings file
//!   ([`AgentBuilder::hooks_file`]) — refuse, rewrite or annotate calls and prompts; a stop
//!   judge ([`AgentBuilder::stop_judge`]) ends a run that makes no progress.
//!
//! Runnable examples are in `crates/kakeibo/examples/` (`cargo run -p kakeibo --example ask`).

// A provider, a hook or a caller can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]
#![warn(missing_docs)]

mod agent;
mod error;
mod result;

pub use agent::{Agent, AgentBuilder, Prompt};
pub use error::Error;
pub use kakeibo_agent::{
    AgentConfig, Channel, ConfirmError,
    conversations::{ConversationSummary, Spend},
};
pub use kakeibo_core::{
    Budget, ConfirmPolicy, ConversationId, EndStatus, Event, EventUsage, FiguresPolicy, Hooks, MicroUsd,
    PendingWrite, PermissionRules, Provider, ResultLine, RunId, RunStatus, RunSummary, Stop, SuspendedTurnId,
    Tier, Tool, ToolError, ToolOutcome, ToolUse, TurnEnd, TypedTool, Usage, WriteDecision,
};
pub use kakeibo_core::{
    figures,
    hooks::{PostToolUse, PreToolUse, PromptSubmit, Stack, Verdict},
    turn::{CallRecord, plain_summary},
};
pub use kakeibo_hooks::{HookSettings, SettingsHooks};
pub use kakeibo_judge::Judge;
pub use kakeibo_ledger::{DEV_OWNER, OwnerId};
/// The model's task list (`todo_write`, [`AgentBuilder::task_list`]): its items, and the list a
/// call's input holds, for a surface to show.
pub mod todo {
    pub use kakeibo_tools::todo::{MAX_TODOS, Todo, TodoStatus, todos_of};
    /// The tool's name, as events carry it.
    pub const NAME: &str = <kakeibo_tools::TodoWrite as kakeibo_core::TypedTool>::NAME;
}
/// Other MCP servers as tool sources ([`AgentBuilder::mcp`]): Claude Code's `.mcp.json`,
/// stdio and streamable HTTP.
pub use kakeibo_mcp_client as mcp;
pub use kakeibo_mcp_client::{McpConfig, McpServers};
pub use kakeibo_providers::select::Models;
pub use kakeibo_skills::{AgentType, AgentTypes, Instructions, Skill, Skills};

/// Subagents ([`AgentBuilder::subagents`]): the `task` tool's name, its types, and the run a
/// subagent leaves in its parent's turn.
pub mod subagent {
    pub use kakeibo_core::turn::subagent::{
        GENERAL_PURPOSE, MAX_SUBAGENTS_PER_TURN, SubRun, SubagentType, TASK, TaskInput,
    };
}
pub use result::{RunResult, Status};
pub use sqlx::PgPool;

/// The database to use: `APP_DATABASE_URL`, else `DATABASE_URL`, else — in a kakeibo checkout
/// (found from the working directory, then the program's folder) — its running local cluster
/// (`cargo xtask db up`), as `app_user`. When none is found, the error says how to get one.
pub fn database_url() -> Result<String, Error> {
    let set = |name| {
        std::env::var(name)
            .ok()
            .filter(|url: &String| !url.trim().is_empty())
    };
    if let Some(url) = set("APP_DATABASE_URL").or_else(|| set("DATABASE_URL")) {
        return Ok(url);
    }
    let found = kakeibo_localdb::discover(&kakeibo_localdb::default_starts());
    found
        .app_url()
        .ok_or_else(|| Error::NoDatabase(found.to_string()))
}

/// A pool for agents over the database at `url` (at most four connections, each made when first
/// needed, so this does not touch the network). Connect as `app_user`: row-level security then
/// holds beside the tools' own filters.
pub fn connect(url: &str) -> Result<PgPool, Error> {
    Ok(kakeibo_ledger::connect(url, 4)?)
}
