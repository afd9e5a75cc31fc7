//! A write suspended in one process and confirmed in another, as the web's functions do it: the
//! first invocation asks, and the turn waits in the database for a person; the second shows the
//! stored write and decides it. Run the second twice, or from two terminals at once: the write is
//! applied exactly once.
//!
//! ```sh
//! export KAKEIBO_PROVIDER=script:fixtures/scripts/demo.yaml
//! cargo run -p kakeibo --example confirm_later -- ask "Set a ₹20,000 budget for groceries"
//! #   waiting: 0b6f…   (the id to confirm)
//! cargo run -p kakeibo --example confirm_later -- allow 0b6f…     # or: decline 0b6f…
//! ```

use anyhow::{Context, bail};
use kakeibo::{Agent, ConfirmPolicy, DEV_OWNER, Status, SuspendedTurnId};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // APP_DATABASE_URL, else the checkout's local cluster (`cargo xtask db up`).
    let url = kakeibo::database_url()?;
    // Writes wait for a person instead of running.
    let agent = Agent::builder(kakeibo::connect(&url)?, DEV_OWNER)
        .provider_from_env()?
        .confirm_policy(ConfirmPolicy::Suspend)
        .build()?;

    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["ask", prompt] => {
            let result = agent.run(prompt).await?;
            match result.status {
                Status::Waiting { suspended, pending } => {
                    for write in &pending {
                        println!("asks to: {}", write.summary);
                    }
                    println!("waiting: {suspended}");
                }
                other => println!("{} ({other:?})", result.text),
            }
        }
        [answer @ ("allow" | "decline"), id] => {
            let suspended: SuspendedTurnId = id.parse().context("the id printed after `waiting:`")?;
            let allow = *answer == "allow";
            let result = agent
                .decide(
                    suspended,
                    |write| {
                        println!(
                            "{}: {}",
                            if allow { "allowing" } else { "declining" },
                            write.summary
                        );
                        allow
                    },
                    |_| {},
                )
                .await?;
            println!("{}", result.text);
        }
        _ => bail!("usage: confirm_later ask PROMPT | confirm_later allow|decline ID"),
    }
    Ok(())
}
