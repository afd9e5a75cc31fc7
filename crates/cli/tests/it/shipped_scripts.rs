//! Every scripted model shipped in `fixtures/scripts/` answers according to what happened: each
//! rule that proposes a write is played through `kakeibo -p` against the demo ledger twice, once
//! declined and once allowed, and its answers are read. A declined write is answered with the
//! rule's `declined:` text and changes nothing; an allowed one changes the ledger and is answered
//! from the tool's result. A new write rule with no prompt below fails the coverage check.

use std::{
    path::{Path, PathBuf},
    process::{Output, Stdio},
};

use crate::common;

use kakeibo_core::Tier;
use kakeibo_ledger::DEV_OWNER;
use serde_json::Value;
use sqlx::PgPool;

/// For each shipped script, a prompt per write rule (`{plan}` becomes a fresh import plan's id).
const PROMPTS: &[(&str, &str)] = &[
    ("demo.yaml", "set a ₹20,000 monthly budget for groceries"),
    ("demo.yaml", "set budgets for dining and transport"),
    ("demo.yaml", "import the statement, plan {plan}"),
    ("demo.yaml", "set a budget"),
    ("demo.yaml", "always put Swiggy under Dining"),
    ("demo.yaml", "put {uncategorized} under groceries"),
    (
        "demo.yaml",
        "The row in transit {transit} (Checking) was spending in Shopping",
    ),
    // The subagent's own rule, played as a run of its own (the handing over is in subagents.rs).
    (
        "subagents.yaml",
        "SUBTASK budget: set the Groceries budget for June 2025 to 20,000 rupees.",
    ),
    (
        "eval.yaml",
        "Set my Groceries budget for March 2025 to 20,000 rupees",
    ),
];

const STATEMENT: &str =
    "Date,Description,Amount\n2025-07-01,TEA STALL,-20.00\n2025-07-02,BOOK SHOP,-350.00\n";

fn scripts_dir() -> PathBuf {
    kakeibo_testkit::workspace_root().join("fixtures/scripts")
}

fn kakeibo(pool: &PgPool, script: &Path, args: &[&str]) -> Output {
    let mut command = common::kakeibo_command(pool);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command.env("KAKEIBO_PROVIDER", format!("script:{}", script.display()));
    command.output().unwrap()
}

/// The rules of a script file, as data.
fn rules(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let file: Value = serde_yaml_ng::from_str(&text).unwrap();
    file["rules"].as_array().cloned().unwrap_or_default()
}

/// The index of the rule that answers `prompt` (the first whose pattern matches; `{plan}` and
/// `{transit}` are read as ids).
fn rule_for(rules: &[Value], prompt: &str) -> Option<usize> {
    let prompt = prompt
        .replace("{plan}", "00000000-0000-4000-8000-00000000abcd")
        .replace("{transit}", "00000000-0000-4000-8000-00000000abce");
    let prompt = prompt.as_str();
    rules.iter().position(|rule| {
        regex::Regex::new(rule["match"].as_str().unwrap_or("$^"))
            .unwrap()
            .is_match(prompt)
    })
}

fn writes(rule: &Value, write_tools: &[&str]) -> bool {
    rule["steps"].as_array().into_iter().flatten().any(|step| {
        step["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|call| write_tools.contains(&call["name"].as_str().unwrap_or("")))
    })
}

/// The `declined:` text of the rule's step that follows its writes.
fn declined_text(rule: &Value) -> Option<String> {
    rule["steps"]
        .as_array()?
        .iter()
        .find_map(|step| step["declined"].as_str().map(str::to_owned))
}

/// What a write could change: budgets and transactions, with their amounts.
async fn fingerprint(pool: &PgPool) -> (i64, i64, i64, i64, i64, i64) {
    sqlx::query_as(
        "SELECT (SELECT count(*) FROM budgets),
                (SELECT coalesce(sum(amount_minor), 0)::bigint FROM budgets),
                (SELECT count(*) FROM transactions),
                (SELECT count(*) FROM rules),
                (SELECT count(*) FROM postings p JOIN accounts a ON a.id = p.account_id WHERE a.name = 'Uncategorized'),
                (SELECT count(*) FROM postings p JOIN accounts a ON a.id = p.account_id WHERE a.kind = 'transit')",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

/// A row of the demo ledger waiting in transit (a transfer whose other side is not imported),
/// imported when there is none.
async fn in_transit(pool: &PgPool, script: &Path, dir: &Path) -> uuid::Uuid {
    let find = || async {
        sqlx::query_scalar::<_, uuid::Uuid>(
            "SELECT p.transaction_id FROM postings p JOIN accounts a ON a.id = p.account_id
             WHERE p.owner_id = $1 AND a.kind = 'transit' ORDER BY p.transaction_id LIMIT 1",
        )
        .bind(DEV_OWNER.as_uuid())
        .fetch_optional(pool)
        .await
        .unwrap()
    };
    if let Some(id) = find().await {
        return id;
    }
    let file = dir.join("transfer.csv");
    std::fs::write(
        &file,
        "Date,Description,Amount\n2025-07-03,ONLINE TRANSFER TO BROKERAGE,-100.00\n",
    )
    .unwrap();
    let out = kakeibo(pool, script, &["import", file.to_str().unwrap(), "--yes"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    find().await.expect("the transfer waits in transit")
}

/// The prompt with a fresh import plan's id in place of `{plan}`.
async fn prepared(pool: &PgPool, script: &Path, prompt: &str, dir: &Path) -> String {
    if prompt.contains("{uncategorized}") {
        // A transaction still in Uncategorized, which the write moves.
        let id: uuid::Uuid = sqlx::query_scalar(
            "SELECT p.transaction_id FROM postings p JOIN accounts a ON a.id = p.account_id
             WHERE p.owner_id = $1 AND a.name = 'Uncategorized' AND p.amount_minor > 0
             ORDER BY p.transaction_id LIMIT 1",
        )
        .bind(DEV_OWNER.as_uuid())
        .fetch_one(pool)
        .await
        .unwrap();
        return prompt.replace("{uncategorized}", &id.to_string());
    }
    if prompt.contains("{transit}") {
        return prompt.replace("{transit}", &in_transit(pool, script, dir).await.to_string());
    }
    if !prompt.contains("{plan}") {
        return prompt.to_owned();
    }
    let file = dir.join("july.csv");
    std::fs::write(&file, STATEMENT).unwrap();
    let out = kakeibo(
        pool,
        script,
        &["import", file.to_str().unwrap(), "--dry-run", "--json"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let preview: Value = serde_json::from_slice(&out.stdout).unwrap();
    prompt.replace("{plan}", preview["plan_id"].as_str().expect("a plan id"))
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_shipped_script_answers_a_write_as_it_went(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    let write_tools: Vec<&str> = kakeibo_tools::catalogue(&pool)
        .into_iter()
        .filter(|tool| tool.tier == Tier::Write)
        .map(|tool| tool.name)
        .collect();
    assert!(write_tools.contains(&"set_budget"), "{write_tools:?}");
    let tmp = tempfile::tempdir().unwrap();

    let mut scripts: Vec<PathBuf> = std::fs::read_dir(scripts_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml" || ext == "json"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 2, "the shipped scripts: {scripts:?}");

    let mut played = 0;
    for script in &scripts {
        let name = script.file_name().unwrap().to_str().unwrap();
        let rules = rules(script);
        let prompts: Vec<&str> = PROMPTS
            .iter()
            .filter(|(s, _)| *s == name)
            .map(|(_, p)| *p)
            .collect();
        // Coverage: every write rule is reached by one of the prompts.
        for (index, rule) in rules.iter().enumerate() {
            if writes(rule, &write_tools) {
                assert!(
                    prompts.iter().any(|p| rule_for(&rules, p) == Some(index)),
                    "{name}: rule {index} (match {}) proposes a write, but no prompt in PROMPTS reaches it",
                    rule["match"]
                );
            }
        }
        for prompt in prompts {
            let index =
                rule_for(&rules, prompt).unwrap_or_else(|| panic!("{name}: no rule answers {prompt:?}"));
            let rule = &rules[index];
            assert!(
                writes(rule, &write_tools),
                "{name}: {prompt:?} reaches rule {index}, which writes nothing"
            );
            let declined = declined_text(rule).unwrap_or_else(|| {
                panic!("{name}: rule {index} proposes a write but has no `declined:` answer")
            });

            // Declined: the declined text, and nothing changed.
            sqlx::query("DELETE FROM budgets").execute(&pool).await.unwrap();
            let prompt_now = prepared(&pool, script, prompt, tmp.path()).await;
            let before = fingerprint(&pool).await;
            let out = kakeibo(&pool, script, &["-p", &prompt_now, "--output-format", "json"]);
            let result: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|_| panic!("{name}: {}", String::from_utf8_lossy(&out.stderr)));
            assert_eq!(result["status"], "ok", "{name} {prompt:?}: {result}");
            let answer = result["answer"].as_str().unwrap_or_default();
            assert!(
                answer.trim_end().ends_with(&declined),
                "{name} {prompt:?} declined: {answer:?}"
            );
            assert_eq!(
                fingerprint(&pool).await,
                before,
                "{name} {prompt:?}: a declined write changed the ledger"
            );

            // Allowed: the ledger changed, and the answer is the step's own, quoted from the result.
            let prompt_now = prepared(&pool, script, prompt, tmp.path()).await;
            let before = fingerprint(&pool).await;
            let out = kakeibo(
                &pool,
                script,
                &["-p", &prompt_now, "--output-format", "json", "--allow-writes"],
            );
            let result: Value = serde_json::from_slice(&out.stdout).unwrap();
            let answer = result["answer"].as_str().unwrap_or_default();
            assert_eq!(result["status"], "ok", "{name} {prompt:?}: {result}");
            assert!(
                !answer.trim_end().ends_with(&declined),
                "{name} {prompt:?}: allowed, but answered as declined"
            );
            for word in ["declined", "expired", "Nothing", "{{", "null"] {
                assert!(!answer.contains(word), "{name} {prompt:?} allowed: {answer:?}");
            }
            for call in result["tool_calls"].as_array().unwrap() {
                assert_eq!(call["outcome"], "ran", "{name} {prompt:?}: {call}");
            }
            assert_ne!(
                fingerprint(&pool).await,
                before,
                "{name} {prompt:?}: an allowed write changed nothing"
            );
            played += 1;
        }
    }
    assert_eq!(played, PROMPTS.len(), "every prompt names a shipped script");
}
