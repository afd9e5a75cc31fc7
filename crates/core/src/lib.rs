//! kakeibo-core: the provider-neutral heart of kakeibo.
//!
//! It defines the tool contract ([`Tool`], [`TypedTool`], [`ToolRegistry`]) and the declaration
//! schemas providers are given; later the message model and the turn state machine live here too.
//! It depends on no database, HTTP client or AWS crate: the other crates implement its traits.

pub mod registry;
pub mod schema;
pub mod tool;

pub use registry::{CallError, DuplicateTool, ToolRegistry};
pub use tool::{Declaration, Tier, Tool, ToolError, TypedTool, typed};
