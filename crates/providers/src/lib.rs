//! kakeibo-providers: model providers over their raw HTTP APIs, each mapping kakeibo's
//! provider-neutral messages to its wire format by hand (no SDK).
//!
//! Gemini (the primary) and Anthropic Messages so far. This crate knows HTTP (reqwest) and the providers' formats; it
//! knows nothing of the ledger or the database.

pub mod anthropic;
pub mod gemini;
pub mod http;

pub use anthropic::{Anthropic, AnthropicConfig};
pub use gemini::{Gemini, GeminiConfig};
