//! The integration tests of this crate, one binary: each module was a test file of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

mod figures_turn;
mod tool_contract;
mod turn_loop;
