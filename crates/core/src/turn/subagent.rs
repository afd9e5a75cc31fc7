//! `task`: the model hands a self-contained piece of work to a subagent — the same loop, with a
//! fresh context — and reads back only its final answer.
//!
//! A subagent runs on the parent's permission rules, tool hooks (`PreToolUse`,
//! `PermissionRequest`, `PostToolUse`, as agent-app's subagents inherit them), confirm policy (its writes are asked
//! in the parent's queue, by the same `ask`), budget and tracer; its usage and cost are counted
//! to the parent's turn, and the figures its tools returned ground the parent's answer. It gets
//! the parent's tools but `task` (no subagent starts another), or the few its type names. Under
//! [`ConfirmPolicy::Suspend`] — a person decides later, in another process — a subagent gets
//! only the read tools: a write waiting for a person cannot be stored from inside another turn,
//! so the parent asks for writes itself.
//!
//! Task calls run after the batch's other calls, one at a time, in call order.

use std::{sync::Arc, time::Instant};

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Deps, FiguresPolicy, RunStatus, Turn, TurnEvent, calls::Execution, drive, tool_data};
use crate::{
    hooks::{HookSite, Hooks, PostToolUse, PreToolUse},
    ids::RunId,
    message::{Message, ToolUse, Usage},
    policy::{ConfirmPolicy, PendingWrite},
    pricing::MicroUsd,
    provider::Provider,
    registry::ToolRegistry,
    schema,
    tool::{Declaration, Tier, Tool, ToolError},
};

/// The tool's name.
pub const TASK: &str = "task";
/// The type every agent offering `task` has.
pub const GENERAL_PURPOSE: &str = "general-purpose";
/// The most subagents one turn runs: each may make as many model calls as its parent, so a
/// question's cost stays bounded (a visitor's, where the site offers subagents).
pub const MAX_SUBAGENTS_PER_TURN: usize = 4;

/// What a general-purpose subagent is told, after the parent's own system prompt.
const SUBAGENT_NOTE: &str = "## You are a subagent\nAnother kakeibo agent handed you the task in the next \
     message. Do it with your tools, then answer with everything that agent needs — the figures, the rows \
     or names they come from, what you changed and what you could not do — in one self-contained answer: \
     the agent sees nothing else of your work, and the person sees your answer only through it.";

/// A kind of subagent: its own instructions, tools and model.
#[derive(Clone)]
pub struct SubagentType {
    /// The name the model passes as `subagent_type` (`monthly-reviewer`).
    pub name: String,
    /// When to use it, for the model choosing one.
    pub description: String,
    /// Its own instructions, after the parent's system prompt and a note that it is a subagent
    /// (so kakeibo's rules hold for it too); `None`: none.
    pub instructions: Option<String>,
    /// The tools it may use, by name (the parent's others are not offered); `None`: all the
    /// parent's but `task`.
    pub tools: Option<Vec<String>>,
    /// Its model; `None`: the parent's.
    pub provider: Option<Arc<dyn Provider>>,
}

impl std::fmt::Debug for SubagentType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentType")
            .field("name", &self.name)
            .field("tools", &self.tools)
            .field("model", &self.provider.as_ref().map(|p| p.model()))
            .finish_non_exhaustive()
    }
}

impl SubagentType {
    /// The general-purpose type: the parent's prompt and model, every tool but `task`.
    pub fn general_purpose() -> Self {
        Self {
            name: GENERAL_PURPOSE.to_owned(),
            description: "Any self-contained piece of work of several steps, with all the tools.".to_owned(),
            instructions: None,
            tools: None,
            provider: None,
        }
    }
}

/// The `task` tool's input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TaskInput {
    /// A few words for the person ("Review the 2025 subscriptions").
    #[schemars(length(min = 1, max = 80))]
    pub description: String,
    /// The whole task, self-contained: the subagent sees nothing of this conversation.
    #[schemars(length(min = 1, max = 8000))]
    pub prompt: String,
    /// Which kind of subagent (default `general-purpose`).
    #[serde(default)]
    pub subagent_type: Option<String>,
}

/// A subagent's run, recorded with its parent's turn (and stored as a run of its own, linked
/// to the parent's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubRun {
    pub run_id: RunId,
    /// The parent's `task` call it answered.
    pub call_id: String,
    /// Its type.
    pub kind: String,
    /// The call's `description`.
    pub description: String,
    pub provider: String,
    pub model: String,
    pub status: RunStatus,
    pub iterations: u32,
    /// Its own model usage and cost (already counted in the parent's).
    pub usage: Usage,
    pub cost: MicroUsd,
    /// When it started, in milliseconds since 1970, and how long it took.
    pub started_at_ms: i64,
    pub latency_ms: u64,
}

/// The `task` tool: runs only inside the loop ([`Tool::subagents`]), which gives it what the
/// parent runs with.
pub struct TaskTool {
    types: Vec<SubagentType>,
    declaration: Declaration,
    validator: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for TaskTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTool")
            .field("types", &self.types)
            .finish_non_exhaustive()
    }
}

const DESCRIPTION: &str = "Hand a self-contained piece of work of several steps (\"categorise every \
     uncategorised transaction of 2025\", \"review each subscription\") to a subagent, which does it with \
     its own fresh context and tools and returns only its final answer. Write the prompt so it stands on \
     its own: the subagent sees nothing of this conversation. Its writes are asked of the person like \
     yours. Not for one or two calls: make those yourself.";

impl TaskTool {
    /// The tool offering `types` besides the general-purpose one (a type of that name replaces
    /// it; a later type of a name taken is left out).
    pub fn new(types: Vec<SubagentType>) -> Self {
        let mut all = vec![SubagentType::general_purpose()];
        let mut replaced = false;
        for kind in types {
            if kind.name == GENERAL_PURPOSE && !replaced {
                // The first given general-purpose type stands for the built-in one.
                replaced = true;
                if let Some(built_in) = all.first_mut() {
                    *built_in = kind;
                }
            } else if !all.iter().any(|k| k.name == kind.name) {
                all.push(kind);
            }
        }
        let names: Vec<&str> = all.iter().map(|k| k.name.as_str()).collect();
        let mut listed = String::from("Which kind of subagent (default general-purpose):");
        for kind in &all {
            listed.push(' ');
            listed.push_str(&kind.name);
            listed.push_str(": ");
            listed.push_str(kind.description.trim());
            if !listed.ends_with('.') {
                listed.push('.');
            }
        }
        let mut parameters = schema::declaration_schema::<TaskInput>();
        if let Some(property) = parameters.pointer_mut("/properties/subagent_type") {
            *property = json!({"type": "string", "enum": names, "description": listed});
        }
        let validator = jsonschema::validator_for(&schema::validation_schema::<TaskInput>()).ok();
        Self {
            declaration: Declaration {
                name: TASK,
                description: DESCRIPTION,
                parameters: Arc::new(parameters),
            },
            types: all,
            validator,
        }
    }

    /// The types offered, general-purpose first.
    pub fn types(&self) -> &[SubagentType] {
        &self.types
    }

    fn parse(&self, input: &Value) -> Result<(TaskInput, &SubagentType), Vec<String>> {
        if let Some(validator) = &self.validator {
            let problems = crate::tool::problems(validator, input);
            if !problems.is_empty() {
                return Err(problems);
            }
        }
        let parsed: TaskInput =
            serde_json::from_value(input.clone()).map_err(|e| vec![format!("input: {e}")])?;
        let wanted = parsed.subagent_type.as_deref().unwrap_or(GENERAL_PURPOSE);
        let Some(kind) = self.types.iter().find(|k| k.name == wanted) else {
            let names: Vec<&str> = self.types.iter().map(|k| k.name.as_str()).collect();
            return Err(vec![format!(
                "subagent_type: there is no subagent type {wanted:?}; the types are {}",
                names.join(", ")
            )]);
        };
        if parsed.prompt.trim().is_empty() {
            return Err(vec!["prompt: the task is blank".to_owned()]);
        }
        Ok((parsed, kind))
    }
}

impl Tool for TaskTool {
    fn name(&self) -> &'static str {
        TASK
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    /// A read: it changes nothing itself, and each write of the subagent is decided on its own.
    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn declaration(&self) -> &Declaration {
        &self.declaration
    }

    fn validate(&self, input: &Value) -> Vec<String> {
        self.parse(input).err().unwrap_or_default()
    }

    fn summarize(&self, _input: &Value) -> Option<String> {
        None
    }

    fn execute(&self, _input: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(std::future::ready(Err(ToolError::Failed(
            "a task runs only inside an agent's turn".to_owned(),
        ))))
    }

    fn subagents(&self) -> Option<&TaskTool> {
        Some(self)
    }
}

/// The tools a subagent of `kind` is offered: the parent's but `task`, or those the type names;
/// only the reads when a person decides later (`suspends`).
fn child_tools(deps: &Deps<'_>, kind: &SubagentType, suspends: bool) -> ToolRegistry {
    let tools: Vec<Arc<dyn Tool>> = deps
        .tools
        .tools()
        .iter()
        .filter(|t| t.subagents().is_none())
        .filter(|t| {
            kind.tools
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == t.name()))
        })
        .filter(|t| !suspends || t.tier() == Tier::Read)
        .cloned()
        .collect();
    // Names are unique in the parent's registry, so in any part of it.
    ToolRegistry::new(tools).unwrap_or_else(|_| deps.tools.read_only())
}

/// A subagent's system prompt: the parent's (kakeibo's rules first), a note that it is a
/// subagent, and its type's instructions.
fn child_system(parent: &str, kind: &SubagentType) -> String {
    match &kind.instructions {
        Some(own) => format!(
            "{parent}\n\n{SUBAGENT_NOTE}\n\n## Your instructions ({})\n{own}",
            kind.name
        ),
        None => format!("{parent}\n\n{SUBAGENT_NOTE}"),
    }
}

/// The parent's hooks as a subagent has them: `PreToolUse`, `PermissionRequest` and
/// `PostToolUse` — not `Stop`, which is about the answer a person reads (the parent's).
struct ToolHooks<'a>(&'a dyn Hooks);

impl Hooks for ToolHooks<'_> {
    fn pre_tool_use<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolUse,
        tier: Tier,
    ) -> BoxFuture<'a, PreToolUse> {
        self.0.pre_tool_use(session, call, tier)
    }

    fn permission_request<'a>(
        &'a self,
        session: &'a str,
        write: &'a PendingWrite,
    ) -> BoxFuture<'a, Option<bool>> {
        self.0.permission_request(session, write)
    }

    fn post_tool_use<'a>(
        &'a self,
        session: &'a str,
        call: &'a ToolUse,
        content: &'a str,
        is_error: bool,
    ) -> BoxFuture<'a, PostToolUse> {
        self.0.post_tool_use(session, call, content, is_error)
    }
}

/// Runs the task of `call` to its end in a subagent: counts its usage and cost to `turn`,
/// records its run, and gives the result the parent's model reads — the subagent's answer.
///
/// Boxed, and `Send` by its type: the parent's turn future holds the subagent's, which is the
/// same kind of future.
pub(super) fn delegate<'a>(
    turn: &'a mut Turn,
    deps: &'a Deps<'_>,
    call: &'a ToolUse,
    input: &'a Value,
    task: &'a TaskTool,
) -> BoxFuture<'a, Execution> {
    Box::pin(run_task(turn, deps, call, input, task))
}

async fn run_task(
    turn: &mut Turn,
    deps: &Deps<'_>,
    call: &ToolUse,
    input: &Value,
    task: &TaskTool,
) -> Execution {
    let started = Instant::now();
    if turn.subruns.len() >= MAX_SUBAGENTS_PER_TURN {
        return Execution::error(
            format!(
                "The tool refused: this request already ran {MAX_SUBAGENTS_PER_TURN} subagents, the most one \
                 request may. Do the rest of the work yourself, or answer with what you have."
            ),
            0,
        );
    }
    let (parsed, kind) = match task.parse(input) {
        Ok(found) => found,
        Err(problems) => {
            return Execution::error(
                format!(
                    "Invalid arguments for {TASK}: {}. Fix the arguments and call the tool again.",
                    problems.join("; ")
                ),
                0,
            );
        }
    };
    let suspends = matches!(deps.policy, ConfirmPolicy::Suspend);
    let registry = child_tools(deps, kind, suspends);
    let system = child_system(deps.system, kind);
    let provider: &dyn Provider = kind.provider.as_deref().unwrap_or(deps.provider);
    let policy = if suspends {
        &ConfirmPolicy::AutoDeny
    } else {
        deps.policy
    };
    // The person sees what the subagent calls, under the parent's call; its text is its answer,
    // which reaches them through the parent.
    let parent = call.id.clone();
    let forward = move |event: TurnEvent| {
        if matches!(event, TurnEvent::ToolCall { .. } | TurnEvent::ToolResult { .. }) {
            (deps.on_event)(TurnEvent::Subagent {
                call_id: parent.clone(),
                event: Box::new(event),
            });
        }
    };
    let tool_hooks = deps.hooks.map(|site| (ToolHooks(site.hooks), site.session));
    let child_deps = Deps {
        provider,
        budget: deps.budget,
        tools: &registry,
        system: &system,
        policy,
        rules: deps.rules,
        tracer: deps.tracer,
        on_event: &forward,
        hooks: tool_hooks.as_ref().map(|(hooks, session)| HookSite {
            hooks: hooks as &dyn Hooks,
            session,
        }),
        stop_judge: deps.stop_judge,
        figures: FiguresPolicy::Flag,
        max_iterations: deps.max_iterations,
    };
    let run_id = RunId::random();
    let started_at_ms = super::now_unix_ms();
    tracing::info!(subagent_run_id = %run_id, kind = %kind.name, "subagent started");
    let child = Turn::start(run_id, Vec::new(), Message::user(parsed.prompt.clone()));
    let child = drive(child, &child_deps).await;
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (status, answer) = match child.finished() {
        Some((status, answer)) => (status, answer.to_owned()),
        None => (
            RunStatus::Error,
            "The subagent stopped before it answered.".to_owned(),
        ),
    };
    tracing::info!(subagent_run_id = %run_id, status = status.as_str(), latency_ms, "subagent finished");
    turn.usage += child.usage;
    turn.cost += child.cost;
    turn.subruns.push(SubRun {
        run_id,
        call_id: call.id.clone(),
        kind: kind.name.clone(),
        description: parsed.description.clone(),
        provider: provider.name().to_owned(),
        model: provider.model().to_owned(),
        status,
        iterations: child.iteration,
        usage: child.usage,
        cost: child.cost,
        started_at_ms,
        latency_ms,
    });
    let calls: Vec<Value> = child
        .calls
        .iter()
        .map(|c| json!({"name": c.name, "outcome": c.outcome}))
        .collect();
    let value = json!({
        "subagent": kind.name,
        "status": status.as_str(),
        "answer": answer,
        "tool_calls": calls,
    });
    Execution {
        content: tool_data(&value),
        is_error: status != RunStatus::Ok,
        latency_ms,
        figures: child.figures.into_iter().map(|source| source.figure).collect(),
    }
}
