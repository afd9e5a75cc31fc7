//! A prompt whose events go to standard output as they happen, one JSON object a line — the same
//! objects the web's stream and `kakeibo -p --output-format stream-json` carry. Ctrl+C stops the
//! run (it is recorded as aborted).
//!
//! ```sh
//! KAKEIBO_PROVIDER=script:fixtures/scripts/demo.yaml \
//!   cargo run -p kakeibo --example stream -- "Which of my payments are subscriptions?"
//! ```

use anyhow::Context;
use kakeibo::{Agent, DEV_OWNER, Event};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let question = std::env::args().nth(1).context("usage: stream QUESTION")?;
    // APP_DATABASE_URL, else the checkout's local cluster (`cargo xtask db up`).
    let url = kakeibo::database_url()?;
    let agent = Agent::builder(kakeibo::connect(&url)?, DEV_OWNER)
        .provider_from_env()?
        .build()?;

    let print = |event: &Event| println!("{}", event.to_json());
    let stop = async {
        // Without a terminal's Ctrl+C (the signal cannot be watched), run to the end.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let result = agent.prompt(&question).on_event(print).until(stop).await?;
    eprintln!("conversation {}: {:?}", result.conversation, result.status);
    Ok(())
}
