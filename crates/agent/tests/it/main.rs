//! The integration tests of this crate, one binary: each module was a test file of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use kakeibo_testdb as common;
#[path = "../world/mod.rs"]
mod world;

mod adversarial;
mod channels;
mod confirm_protocol;
mod memory_and_prompt;
mod record_replay;
mod signatures_full_path;
mod turn_commits;
