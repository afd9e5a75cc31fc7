//! kakeibo-providers: model providers over their raw HTTP APIs, each mapping kakeibo's
//! provider-neutral messages to its wire format by hand (no SDK).
//!
//! Gemini is the first adapter. This crate knows HTTP (reqwest) and the providers' formats; it
//! knows nothing of the ledger or the database.

pub mod gemini;
pub mod http;

pub use gemini::{Gemini, GeminiConfig};
