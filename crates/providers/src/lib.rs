//! kakeibo-providers: model providers over their raw HTTP APIs, each mapping kakeibo's
//! provider-neutral messages to its wire format by hand (no SDK).
//!
//! Gemini (the primary), Anthropic Messages and OpenAI-compatible Chat Completions. This crate knows HTTP (reqwest) and the providers' formats; it
//! knows nothing of the ledger or the database.
//!
//! Nothing a provider sends may panic the process: indexing and string slicing are refused in the
//! crate's code (tests aside), and the property tests feed every decoder arbitrary input.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod anthropic;
pub mod gemini;
pub mod http;
pub mod openai;
pub mod replay;
pub mod script;
pub mod select;

pub use anthropic::{Anthropic, AnthropicConfig};
pub use gemini::{Gemini, GeminiConfig};
pub use openai::{OpenAi, OpenAiConfig};
