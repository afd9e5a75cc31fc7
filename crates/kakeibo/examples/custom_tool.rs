//! A tool of your own beside the twelve finance tools: here a read tool that works out how much
//! to put aside each month to reach a goal. The model sees its name, description and input schema
//! (derived from the input type) and calls it like kakeibo's own.
//!
//! ```sh
//! KAKEIBO_PROVIDER=script:fixtures/scripts/library.yaml \
//!   cargo run -p kakeibo --example custom_tool -- "How much should I save each month for a ₹1,20,000 laptop in 6 months?"
//! ```

use anyhow::Context;
use futures_util::future::BoxFuture;
use kakeibo::{Agent, DEV_OWNER, Tier, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The tool's input: what the model must give.
#[derive(Debug, Deserialize, JsonSchema)]
struct GoalInput {
    /// The goal's amount in minor units (paise for INR: ₹1,20,000 is 12000000).
    #[schemars(range(min = 1))]
    goal_minor: i64,
    /// In how many months.
    #[schemars(range(min = 1, max = 600))]
    months: u32,
}

/// What it answers.
#[derive(Debug, Serialize)]
struct GoalPlan {
    per_month_minor: i64,
    months: u32,
}

struct SavingsGoal;

impl TypedTool for SavingsGoal {
    type Input = GoalInput;
    type Output = GoalPlan;
    const NAME: &'static str = "savings_goal";
    const DESCRIPTION: &'static str =
        "How much to put aside each month to reach a savings goal in a number of months (rounded up).";
    const TIER: Tier = Tier::Read;

    fn run(&self, input: GoalInput) -> BoxFuture<'_, Result<GoalPlan, ToolError>> {
        Box::pin(async move {
            let months = i64::from(input.months);
            Ok(GoalPlan {
                per_month_minor: (input.goal_minor + months - 1) / months,
                months: input.months,
            })
        })
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let question = std::env::args().nth(1).context("usage: custom_tool QUESTION")?;
    // APP_DATABASE_URL, else the checkout's local cluster (`cargo xtask db up`).
    let url = kakeibo::database_url()?;
    let agent = Agent::builder(kakeibo::connect(&url)?, DEV_OWNER)
        .provider_from_env()?
        .tool(SavingsGoal)
        .build()?;
    let result = agent.run(&question).await?;
    println!("{}", result.text);
    for call in &result.calls {
        eprintln!(
            "called {} with {} -> {} ({})",
            call.name,
            call.args,
            call.result,
            call.outcome.as_str()
        );
    }
    Ok(())
}
