//! The reader's integration tests: one binary (see the workspace's test layout).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

mod statements;
