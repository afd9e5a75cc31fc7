//! kakeibo-agent: the agent over a ledger — the turn store, the tracer, [`Agent`], conversations
//! and runs.
//!
//! [`Agent`] runs one chat turn: it reads the conversation's history and the owner's memory,
//! drives `kakeibo-core`'s turn machine over a provider and the tools of `kakeibo-tools`, and
//! stores what the turn said. A write the model asks for suspends the turn in
//! `suspended_turns`; [`TurnStore`] resumes it in another process under the exactly-once confirm
//! protocol (claim, apply, continue, finish). Each leg's trace events and totals commit with the
//! step that ends it, in `trace_events` and `trace_runs`; [`history`] appends each turn's new
//! messages; [`conversations`] lists an owner's threads and [`runs`] reads their traces back. It
//! stands on `kakeibo-ledger`, `kakeibo-tools` and `kakeibo-core`, takes its provider as a trait
//! object, and knows nothing of HTTP or AWS.

// A statement, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod conversations;
mod error;
pub mod events;
pub mod history;
mod record;
pub mod runs;
pub mod turns;

pub use error::AgentError;
pub use events::closing_events;
pub use record::Channel;
pub use turns::{Agent, AgentConfig, Busy, ConfirmError, Leg, Outcome, TurnStore};
