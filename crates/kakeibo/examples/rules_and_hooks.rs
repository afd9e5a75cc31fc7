//! Permission rules and hooks in front of the model's calls.
//!
//! The rules are decided first, and a `deny` always wins: here no budget may be set, whatever the
//! policy allows, while categorisation rules run without asking. A hook of the program's own then
//! refuses a categorisation rule too broad to be safe (a pattern under three letters), and a
//! Claude Code settings file, when one is given, adds its own hooks (shell commands or HTTP
//! endpoints) — a hook can refuse what the rules allow, never allow what they deny.
//!
//! ```sh
//! KAKEIBO_PROVIDER=script:fixtures/scripts/demo.yaml \
//!   cargo run -p kakeibo --example rules_and_hooks -- "Always put Swiggy under Dining" [hooks.json]
//! ```

use anyhow::Context;
use futures_util::future::BoxFuture;
use kakeibo::{Agent, ConfirmPolicy, DEV_OWNER, Hooks, PermissionRules, PreToolUse, Tier, Verdict};

/// Refuses a categorisation rule whose pattern would match almost anything.
struct NoBroadRules;

impl Hooks for NoBroadRules {
    fn pre_tool_use<'a>(
        &'a self,
        _session: &'a str,
        call: &'a kakeibo::ToolUse,
        _tier: Tier,
    ) -> BoxFuture<'a, PreToolUse> {
        let pattern = call.input["pattern"].as_str().unwrap_or_default();
        let broad = call.name == "set_category_rule" && pattern.trim().chars().count() < 3;
        Box::pin(async move {
            PreToolUse {
                verdict: broad.then_some(Verdict::Deny),
                reason: broad
                    .then(|| "a pattern under three letters would catch unrelated payments".to_owned()),
                ..PreToolUse::default()
            }
        })
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let prompt = args
        .next()
        .context("usage: rules_and_hooks PROMPT [HOOKS.json]")?;
    // APP_DATABASE_URL, else the checkout's local cluster (`cargo xtask db up`).
    let url = kakeibo::database_url()?;
    // One rule a line (or `;`): `allow|ask|deny TOOL` or `… TOOL(key=value, …)`.
    let rules = PermissionRules::parse("deny set_budget\nallow set_category_rule")?;
    let mut builder = Agent::builder(kakeibo::connect(&url)?, DEV_OWNER)
        .provider_from_env()?
        .rules(rules)
        .confirm_policy(ConfirmPolicy::AutoDeny)
        .hooks(NoBroadRules);
    if let Some(file) = args.next() {
        // Asked after the hook above; the first refusal ends the list.
        builder = builder.hooks_file(file)?;
    }
    let result = builder.build()?.run(&prompt).await?;
    println!("{}", result.text);
    for call in &result.calls {
        eprintln!(
            "{}: allowed {:?}, {}: {}",
            call.name, call.confirmed, call.outcome, call.result
        );
    }
    Ok(())
}
