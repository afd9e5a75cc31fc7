//! kakeibo-core: the provider-neutral heart of kakeibo.
//!
//! It holds the message model ([`message`]), the [`Provider`] trait and a scripted provider for
//! tests, the tool contract ([`Tool`], [`TypedTool`], [`ToolRegistry`]) and the declaration
//! schemas providers are given (made by `kakeibo-toolschema`), confirm policies and permission rules ([`policy`]), tracing
//! ([`trace`]), pricing, and the turn state machine ([`turn`]). It depends on no database, HTTP
//! client or AWS crate: the other crates implement its traits.

// A statement, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod budget;
pub mod context;
pub mod event;
pub mod hooks;
pub mod ids;
pub mod message;
pub mod policy;
pub mod pricing;
pub mod prompt;
pub mod provider;
pub mod registry;
pub mod scripted;
pub mod tool;
pub mod trace;
pub mod turn;
pub mod wire;

/// The figures tools return and answers state, and how one is checked against the other.
pub use kakeibo_figures as figures;
/// Tool input schemas, full for validation and restricted for declarations: their own crate.
pub use kakeibo_toolschema as schema;

pub use budget::{Budget, Budgeted, Hold, Refused};
pub use event::{EndStatus, Event, EventUsage, ResultLine, RunSummary, TurnEnd};
pub use hooks::Hooks;
pub use ids::{ConversationId, RunId, SuspendedTurnId};
pub use message::{Block, Message, ProviderMeta, Role, StopReason, ToolResult, ToolUse, Usage};
pub use policy::{Action, ConfirmPolicy, PendingWrite, PermissionRules, Rule};
pub use pricing::MicroUsd;
pub use provider::{ModelRequest, ModelResponse, Provider, ProviderError, StreamEvent};
pub use registry::{CallError, DuplicateTool, ToolRegistry};
pub use tool::{Declaration, Sourced, Tier, Tool, ToolError, TypedTool, typed};
pub use trace::{
    ConfirmTrace, ErrorTrace, EvictionTrace, MemoryTracer, ModelCallTrace, NoTrace, ToolCallTrace,
    TraceEvent, TraceKind, TracePayload, Tracer,
};
pub use turn::{
    Deps, FiguresPolicy, Phase, RunStatus, Stop, ToolOutcome, Turn, TurnEvent, WriteDecision, drive,
    drive_until, step,
};
