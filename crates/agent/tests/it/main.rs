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

/// The agent of `owner` over `store` on `model`, told `system`, with nothing else configured.
fn agent_on(
    store: &kakeibo_agent::TurnStore,
    owner: kakeibo_ledger::OwnerId,
    model: std::sync::Arc<dyn kakeibo_core::Provider>,
    system: &str,
    channel: kakeibo_agent::Channel,
) -> kakeibo_agent::Agent {
    let mut config = kakeibo_agent::AgentConfig::new(model, channel);
    config.system = system.into();
    kakeibo_agent::Agent::new(store.clone(), owner, config).unwrap()
}
