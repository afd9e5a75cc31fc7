//! One question, one answer.
//!
//! ```sh
//! cargo xtask db up                      # the local database, if it is not running
//! cargo run -p kakeibo-cli -- seed --db  # the demo ledger, once
//! KAKEIBO_PROVIDER=script:fixtures/scripts/demo.yaml \
//!   cargo run -p kakeibo --example ask -- "How much did I spend on groceries in March 2025?"
//! ```
//!
//! With `GEMINI_API_KEY` (or `ANTHROPIC_API_KEY`, or `OPENAI_BASE_URL`) set instead of
//! `KAKEIBO_PROVIDER`, a real model answers.

use anyhow::Context;
use kakeibo::{Agent, DEV_OWNER};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let question = std::env::args().nth(1).context("usage: ask QUESTION")?;
    // APP_DATABASE_URL, else the checkout's local cluster (`cargo xtask db up`).
    let url = kakeibo::database_url()?;
    let pool = kakeibo::connect(&url)?;

    // The development owner's ledger; a model from the settings.
    let agent = Agent::builder(pool, DEV_OWNER).provider_from_env()?.build()?;
    let result = agent.run(&question).await?;

    println!("{}", result.text);
    eprintln!(
        "status {:?}, {} tool call(s), {} input and {} output tokens, ${}",
        result.status,
        result.calls.len(),
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.cost.decimal()
    );
    Ok(())
}
