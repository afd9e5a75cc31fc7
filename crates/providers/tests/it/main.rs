//! The integration tests of this crate, one binary: each module was a test file of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

mod support;

mod anthropic_samples;
mod anthropic_standin;
mod cancellation;
mod gemini_cache;
mod gemini_samples;
mod gemini_standin;
mod gemini_vertex;
mod llama;
mod openai_samples;
mod openai_standin;
mod properties;
