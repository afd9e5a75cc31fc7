//! The deterministic checks: what the agent called, what it answered, what the ledger holds.

use kakeibo_core::{MicroUsd, Tier, ToolOutcome, turn::CallRecord};
use kakeibo_ledger::{OwnerId, begin_for_owner};
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::PgPool;

use crate::{run::TaskRun, task::Check};

/// The result of one check, as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckOutcome {
    #[serde(rename = "type")]
    pub kind: String,
    pub passed: bool,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// What a judge's call cost (list price), in micro-dollars (`1_500_000` is $1.50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<MicroUsd>,
}

impl CheckOutcome {
    pub fn new(check: &Check, passed: bool, detail: impl Into<String>) -> Self {
        Self {
            kind: check.kind().to_owned(),
            passed,
            detail: detail.into(),
            score: None,
            cost_micro_usd: None,
        }
    }
}

/// A regex with the task file's flags (`i` case-insensitive, `m` multi-line, `s` dot matches
/// newlines, `x` verbose).
pub fn compile(pattern: &str, flags: &str) -> Result<Regex, String> {
    let mut builder = RegexBuilder::new(pattern);
    for flag in flags.chars() {
        match flag {
            'i' => builder.case_insensitive(true),
            'm' => builder.multi_line(true),
            's' => builder.dot_matches_new_line(true),
            'x' => builder.ignore_whitespace(true),
            'g' | 'u' => &mut builder, // JavaScript's global and unicode flags change nothing here
            other => return Err(format!("unknown regex flag {other:?}")),
        };
    }
    builder.build().map_err(|e| e.to_string())
}

/// Whether `actual` holds `subset`: objects key by key, arrays element by element (each element
/// of the subset found somewhere in the actual array), leaves compared as strings.
pub fn subset_matches(subset: &Value, actual: &Value) -> bool {
    match (subset, actual) {
        (Value::Object(want), Value::Object(have)) => want
            .iter()
            .all(|(key, value)| have.get(key).is_some_and(|a| subset_matches(value, a))),
        (Value::Array(want), Value::Array(have)) => {
            want.iter().all(|w| have.iter().any(|h| subset_matches(w, h)))
        }
        (Value::Object(_) | Value::Array(_), _) => false,
        (leaf, actual) => !actual.is_object() && !actual.is_array() && leaf_text(leaf) == leaf_text(actual),
    }
}

fn leaf_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether a call actually ran and succeeded: not refused, not failed.
pub fn executed(call: &CallRecord) -> bool {
    call.outcome == ToolOutcome::Ran
}

fn describe(call: &CallRecord) -> String {
    format!("{} {}", call.name, call.args)
}

/// Evaluates a check that needs neither the database nor a judge. `None` for those two kinds.
pub fn evaluate(check: &Check, run: &TaskRun) -> Option<CheckOutcome> {
    let calls: Vec<&CallRecord> = run.calls().collect();
    let answers = run.answers().join("\n");
    let outcome = match check {
        Check::SqlEquals { .. } | Check::Judge { .. } => return None,
        Check::ToolWasCalled {
            name,
            args_subset,
            times,
            ..
        } => {
            let matching = calls
                .iter()
                .filter(|c| c.name == *name)
                .filter(|c| args_subset.as_ref().is_none_or(|s| subset_matches(s, &c.args)))
                .count();
            let seen: Vec<String> = calls.iter().map(|c| describe(c)).collect();
            let passed = matching >= *times as usize;
            let detail = if passed {
                format!("{name} called {matching} time(s) as asked")
            } else {
                format!(
                    "{name} matching {} called {matching} time(s), {times} needed; calls: [{}]",
                    args_subset
                        .as_ref()
                        .map_or_else(|| "any arguments".into(), Value::to_string),
                    seen.join("; ")
                )
            };
            CheckOutcome::new(check, passed, detail)
        }
        Check::ToolNotCalled { name } => {
            let ran: Vec<String> = calls
                .iter()
                .filter(|c| c.name == *name && executed(c))
                .map(|c| describe(c))
                .collect();
            if ran.is_empty() {
                CheckOutcome::new(check, true, format!("{name} did not run"))
            } else {
                CheckOutcome::new(check, false, format!("{name} ran: {}", ran.join("; ")))
            }
        }
        Check::NoUnconfirmedWrites => {
            let unconfirmed: Vec<String> = calls
                .iter()
                .filter(|c| c.tier == Some(Tier::Write) && executed(c) && c.confirmed != Some(true))
                .map(|c| describe(c))
                .collect();
            if unconfirmed.is_empty() {
                CheckOutcome::new(check, true, "every write that ran was confirmed")
            } else {
                CheckOutcome::new(
                    check,
                    false,
                    format!("writes ran without a confirmation: {}", unconfirmed.join("; ")),
                )
            }
        }
        Check::ResponseContains { text, case_sensitive } => {
            let found = if *case_sensitive {
                answers.contains(text.as_str())
            } else {
                answers.to_lowercase().contains(&text.to_lowercase())
            };
            CheckOutcome::new(
                check,
                found,
                format!("{text:?} {}", if found { "found" } else { "not in the answer" }),
            )
        }
        Check::ResponseNotContains { text } => {
            let found = answers.to_lowercase().contains(&text.to_lowercase());
            CheckOutcome::new(
                check,
                !found,
                format!("{text:?} {}", if found { "is in the answer" } else { "absent" }),
            )
        }
        Check::ResponseRegex {
            pattern,
            flags,
            description,
        } => match compile(pattern, flags) {
            Err(e) => CheckOutcome::new(check, false, format!("bad pattern {pattern:?}: {e}")),
            Ok(regex) => {
                let found = regex.find(&answers).map(|m| m.as_str().to_owned());
                let what = description.as_deref().unwrap_or(pattern);
                CheckOutcome::new(
                    check,
                    found.is_some(),
                    found.map_or_else(
                        || format!("/{pattern}/{flags} ({what}) did not match the answer"),
                        |m| format!("/{pattern}/{flags} matched {m:?}"),
                    ),
                )
            }
        },
    };
    Some(outcome)
}

/// Runs a `sql_equals` query in a read-only transaction as `pool`'s role (`app_user`: row-level
/// security shows only `owner`'s rows), and returns its first column of its first row as text.
pub async fn sql_value(pool: &PgPool, owner: OwnerId, query: &str) -> Result<Option<String>, sqlx::Error> {
    let query = query.trim().trim_end_matches(';');
    let mut tx = begin_for_owner(owner, pool).await?;
    sqlx::query("SET TRANSACTION READ ONLY").execute(&mut *tx).await?;
    // A check is a small query on one small ledger: a slow one is a broken one.
    sqlx::query("SET LOCAL statement_timeout = '10s'")
        .execute(&mut *tx)
        .await?;
    // The alias list renames the first column only, whatever the query calls it; `::text` gives
    // PostgreSQL's own rendering of any type (numeric sums included).
    let wrapped = format!("SELECT first_column::text FROM ({query}) AS checked (first_column) LIMIT 1");
    let value: Option<Option<String>> = sqlx::query_scalar(sqlx::AssertSqlSafe(wrapped))
        .fetch_optional(&mut *tx)
        .await?;
    tx.rollback().await?;
    Ok(value.flatten())
}

/// Evaluates a `sql_equals` check against `owner`'s ledger.
pub async fn evaluate_sql(pool: &PgPool, owner: OwnerId, check: &Check) -> Option<CheckOutcome> {
    let Check::SqlEquals {
        query,
        expect,
        description,
    } = check
    else {
        return None;
    };
    let what = description.as_deref().unwrap_or(query);
    let want = expect.as_text();
    Some(match sql_value(pool, owner, query).await {
        Err(e) => CheckOutcome::new(check, false, format!("{what}: the query failed: {e}")),
        Ok(got) => {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "null".into());
            let passed = got == want;
            CheckOutcome::new(
                check,
                passed,
                if passed {
                    format!("{what}: {}", show(&got))
                } else {
                    format!("{what}: expected {}, got {}", show(&want), show(&got))
                },
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn subsets_match_recursively_with_leaves_as_strings() {
        let actual = json!({"category": "Groceries", "month": "2025-03", "amount_minor": 2_000_000,
                            "ids": ["a", "b", "c"], "nested": {"x": 1, "y": 2}});
        assert!(subset_matches(&json!({}), &actual));
        assert!(subset_matches(&json!({"category": "Groceries"}), &actual));
        assert!(subset_matches(&json!({"amount_minor": "2000000"}), &actual));
        assert!(subset_matches(&json!({"ids": ["c", "a"]}), &actual));
        assert!(subset_matches(&json!({"nested": {"y": 2}}), &actual));
        assert!(!subset_matches(&json!({"category": "Dining"}), &actual));
        assert!(!subset_matches(&json!({"ids": ["d"]}), &actual));
        assert!(!subset_matches(&json!({"missing": 1}), &actual));
        assert!(!subset_matches(&json!({"nested": 1}), &actual));
        assert!(!subset_matches(
            &json!({"category": {"name": "Groceries"}}),
            &actual
        ));
    }

    #[test]
    fn flags_follow_the_task_file() {
        assert!(compile("croma", "i").unwrap().is_match("CROMA STORE"));
        assert!(!compile("croma", "").unwrap().is_match("CROMA STORE"));
        assert!(compile("a.b", "s").unwrap().is_match("a\nb"));
        assert!(compile("x", "q").is_err());
    }
}
