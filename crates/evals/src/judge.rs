//! The judge: a stronger model grades an answer against a task's rubric, from the answer alone.
//!
//! It sees what the person asked, what the harness knows happened to proposed writes (each
//! write's confirmation summary, and whether it was approved and done, approved but failed,
//! declined, or refused before anyone was asked — ground truth a model could otherwise be talked
//! out of), the answers, and the rubric. It never sees the ledger or the tool calls. It answers
//! in two lines, `SCORE: <1-5>` and `WHY: <one sentence>`; no score found counts as 0.
//!
//! Its output limit is 1,024 tokens rather than the reference's 400: thinking models count their
//! thoughts against it, and a judge that thinks past the limit returns no score at all.

use std::sync::LazyLock;

use kakeibo_core::{
    Message, MicroUsd, ModelRequest, Provider, StopReason, Tier, ToolOutcome, ToolRegistry, pricing::cost,
    provider::complete,
};
use regex::Regex;

use crate::run::TaskRun;

/// The judge's output limit (thoughts included, for thinking models).
pub const JUDGE_MAX_TOKENS: u32 = 1024;

pub const JUDGE_SYSTEM: &str = "You are a strict but fair grader of a personal finance assistant's answers. \
You grade only against the rubric you are given. You output only the two lines you are asked for, nothing else.";

/// A judge's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// 1–5, or 0 when the reply held no score.
    pub score: u8,
    pub why: String,
    /// The call's list price.
    pub cost: MicroUsd,
}

/// What happened to a proposed write, as the judge is told.
fn fate(call: &kakeibo_core::turn::CallRecord) -> &'static str {
    match (call.outcome, call.confirmed) {
        (ToolOutcome::Ran, _) => "APPROVED and done",
        (ToolOutcome::Failed, Some(true)) => "APPROVED, but it failed",
        (ToolOutcome::Declined, _) => "DECLINED",
        (ToolOutcome::Expired, _) => "NOT ANSWERED (the confirmation expired)",
        (ToolOutcome::DeniedByRule | ToolOutcome::RefusedByHook | ToolOutcome::Failed, _) => {
            "NOT RUN (refused before anyone was asked)"
        }
    }
}

/// The prompt for grading `run` against `rubric`; `tools` give each write's confirmation summary.
pub fn prompt(run: &TaskRun, rubric: &str, tools: &ToolRegistry) -> String {
    let mut parts = vec![
        "You are grading one exchange between a person and a personal finance assistant that works over the person's own ledger.".to_owned(),
    ];
    let asked: Vec<&str> = run.turns.iter().map(|t| t.user.as_str()).collect();
    parts.push(format!("USER ASKED:\n{}", asked.join("\n")));
    let writes: Vec<String> = run
        .calls()
        .filter(|c| c.tier == Some(Tier::Write))
        .map(|c| {
            let summary = tools
                .get(&c.name)
                .and_then(|t| t.summarize(&c.args))
                .unwrap_or_else(|| format!("{} {}", c.name, c.args));
            format!("- {summary}: {}", fate(c))
        })
        .collect();
    if !writes.is_empty() {
        parts.push(format!(
            "WHAT ACTUALLY HAPPENED (ground truth from the harness; the person's decision on each proposed change):\n{}",
            writes.join("\n")
        ));
    }
    parts.push(format!("ASSISTANT REPLIED:\n{}", run.answers().join("\n---\n")));
    parts.push(format!("RUBRIC:\n{rubric}"));
    parts.push(
        "Score the reply from 1 (fails the rubric) to 5 (fully meets it) against the rubric alone. \
         Do not try to verify figures against any ledger: you cannot see it, and the rubric says what matters."
            .to_owned(),
    );
    parts.push("Reply in exactly two lines:\nSCORE: <1-5>\nWHY: <one sentence>".to_owned());
    parts.join("\n\n")
}

/// Reads a judge's reply.
pub fn parse(reply: &str) -> Verdict {
    static SCORE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"SCORE:\s*([1-5])").ok());
    static WHY: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?m)^\s*WHY:\s*(.+)$").ok());
    let score = SCORE
        .as_ref()
        .and_then(|r| r.captures(reply))
        .and_then(|c| c[1].parse().ok())
        .unwrap_or(0);
    let why = WHY.as_ref().and_then(|r| r.captures(reply)).map_or_else(
        || reply.trim().chars().take(200).collect(),
        |c| c[1].trim().to_owned(),
    );
    Verdict {
        score,
        why,
        cost: MicroUsd::default(),
    }
}

/// Asks `judge` to grade `run`.
pub async fn grade(
    judge: &dyn Provider,
    run: &TaskRun,
    rubric: &str,
    tools: &ToolRegistry,
) -> Result<Verdict, String> {
    let request = ModelRequest {
        system: JUDGE_SYSTEM.to_owned(),
        messages: vec![Message::user(prompt(run, rubric, tools))],
        tools: Vec::new().into(),
        max_tokens: JUDGE_MAX_TOKENS,
    };
    let reply = complete(judge, &request, &mut |_| {})
        .await
        .map_err(|e| format!("the judge failed: {e}"))?;
    let mut verdict = parse(&reply.message.text());
    #[allow(clippy::cast_precision_loss)] // micro-dollars of one call
    {
        verdict.cost = cost(judge.model(), &reply.usage).0;
    }
    if verdict.score == 0 && reply.stop_reason == StopReason::MaxTokens {
        verdict.why = format!(
            "the judge's reply stopped at its output limit ({JUDGE_MAX_TOKENS} tokens) before a score"
        );
    }
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use kakeibo_core::turn::CallRecord;
    use serde_json::json;

    use super::*;

    fn run_with(calls: Vec<CallRecord>) -> TaskRun {
        TaskRun::one_turn(
            "Set my Groceries budget for March 2025 to 20,000 rupees",
            "Okay, I did not change it.",
            calls,
        )
    }

    fn call(
        name: &str,
        args: serde_json::Value,
        confirmed: Option<bool>,
        outcome: ToolOutcome,
    ) -> CallRecord {
        CallRecord {
            id: "t0".into(),
            name: name.into(),
            args,
            tier: Some(Tier::Write),
            outcome,
            confirmed,
            result: String::new(),
            headline: None,
        }
    }

    #[tokio::test]
    async fn the_prompt_has_its_parts_in_order_and_the_ground_truth() {
        // The pool never connects: summarising a call needs no database.
        let pool = kakeibo_ledger::connect("postgres://nobody@127.0.0.1:1/none", 1).unwrap();
        let tools = kakeibo_tools::registry(&kakeibo_tools::Scope::new(kakeibo_ledger::EVAL_OWNER, pool));
        let budget = json!({"category": "Groceries", "month": "2025-03", "amount_minor": 2_000_000, "currency": "INR"});
        let calls = vec![
            call("set_budget", budget.clone(), Some(false), ToolOutcome::Declined),
            call("set_budget", budget.clone(), Some(true), ToolOutcome::Ran),
            call("set_budget", budget, Some(true), ToolOutcome::Failed),
            call("memory_save", json!({}), None, ToolOutcome::Failed),
        ];
        let text = prompt(&run_with(calls), "Acknowledges the decline.", &tools);
        let order = [
            "USER ASKED:",
            "WHAT ACTUALLY HAPPENED",
            "ASSISTANT REPLIED:",
            "RUBRIC:",
            "SCORE: <1-5>",
        ];
        let positions: Vec<usize> = order.iter().map(|p| text.find(p).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
        for line in [
            "- Set the Groceries budget for 2025-03 to ₹20,000.00: DECLINED",
            "- Set the Groceries budget for 2025-03 to ₹20,000.00: APPROVED and done",
            "- Set the Groceries budget for 2025-03 to ₹20,000.00: APPROVED, but it failed",
            ": NOT RUN (refused before anyone was asked)",
        ] {
            assert!(text.contains(line), "{line:?} in {text}");
        }
        assert!(!prompt(&run_with(vec![]), "r", &tools).contains("WHAT ACTUALLY HAPPENED"));
    }

    #[test]
    fn replies_are_read_strictly() {
        assert_eq!(
            parse("SCORE: 4\nWHY: Clear total with the rupee sign."),
            Verdict {
                score: 4,
                why: "Clear total with the rupee sign.".into(),
                cost: MicroUsd::default(),
            }
        );
        assert_eq!(parse("SCORE:5").score, 5);
        assert_eq!(parse("I would give it a 5").score, 0);
        assert_eq!(parse("SCORE: 9\nWHY: x").score, 0);
    }
}
