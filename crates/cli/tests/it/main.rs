//! The integration tests of this crate, one binary: each module was a test file of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

mod common;

mod acp_sdk;
mod chat;
mod export_restore;
mod import_report;
mod mcp;
mod providers_check;
mod real_model;
mod repl;
mod seed_command;
mod shipped_scripts;
mod skills;
mod subagents;
mod tasks;
