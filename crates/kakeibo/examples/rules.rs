//! Permission rules in front of the model's writes: decided before the confirm policy, and a
//! `deny` always wins — here no budget may be set, whatever the policy allows, while other writes
//! run without asking.
//!
//! ```sh
//! KAKEIBO_PROVIDER=script:fixtures/scripts/demo.yaml \
//!   cargo run -p kakeibo --example rules -- "Set a ₹20,000 budget for groceries"
//! ```

use anyhow::Context;
use kakeibo::{Agent, ConfirmPolicy, DEV_OWNER, PermissionRules};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let prompt = std::env::args().nth(1).context("usage: rules PROMPT")?;
    // APP_DATABASE_URL, else the checkout's local cluster (`cargo xtask db up`).
    let url = kakeibo::database_url()?;
    // One rule a line (or `;`): `allow|ask|deny TOOL` or `… TOOL(key=value, …)`.
    let rules = PermissionRules::parse("deny set_budget\nallow set_category_rule")?;
    let agent = Agent::builder(kakeibo::connect(&url)?, DEV_OWNER)
        .provider_from_env()?
        .rules(rules)
        .confirm_policy(ConfirmPolicy::AutoAllow)
        .build()?;
    let result = agent.run(&prompt).await?;
    println!("{}", result.text);
    for call in &result.calls {
        eprintln!("{}: allowed {:?}, {}", call.name, call.confirmed, call.outcome);
    }
    Ok(())
}
