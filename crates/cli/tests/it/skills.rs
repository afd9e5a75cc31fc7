//! The person's instruction files and skills in `kakeibo -p`: a scripted model loads the
//! monthly-review skill (`fixtures/skills/`) through the `Skill` tool and follows it; an
//! instruction file past 32 KiB is refused with a sentence; `--no-skills` leaves the tool out.

use std::{
    path::Path,
    process::{Output, Stdio},
};

use kakeibo_ledger::DEV_OWNER;
use serde_json::Value;
use sqlx::PgPool;

use crate::common;

/// A project folder: a repository with an instruction file and the shipped skills.
fn project(agents: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join("AGENTS.md"), agents).unwrap();
    let shipped = kakeibo_testkit::workspace_root().join("fixtures/skills");
    for skill in ["monthly-review", "subscription-audit"] {
        let to = dir.path().join(".agents/skills").join(skill);
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(shipped.join(skill).join("SKILL.md"), to.join("SKILL.md")).unwrap();
    }
    dir
}

fn ask(pool: &PgPool, cwd: &Path, extra: &[&str]) -> Output {
    let script = kakeibo_testkit::workspace_root().join("fixtures/scripts/skills.yaml");
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["-p", "How did 2025-06 go?", "--output-format", "stream-json"];
    args.extend(extra);
    common::kakeibo_command(pool)
        .args(&args)
        .current_dir(cwd)
        .env("HOME", home.path())
        .env("KAKEIBO_PROVIDER", format!("script:{}", script.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_skill_is_loaded_and_followed_and_the_limits_are_said(pool: PgPool) {
    kakeibo_ledger::seed::ensure_demo_ledger(DEV_OWNER, &pool)
        .await
        .unwrap();
    let dir = project("Our budget month is the calendar month.");
    let out = ask(&pool, dir.path(), &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events = common::events(&out);
    let calls: Vec<&str> = of_type(&events, "tool_call")
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        ["Skill", "get_spend_report", "get_budget_status", "flag_anomalies"],
        "the skill, then what it lists"
    );
    let skill = common::traced_calls(&pool, "Skill").await;
    assert_eq!(skill.len(), 1);
    let result = skill[0]["result"].as_str().unwrap();
    assert!(
        result.contains("A month's review") && result.contains("Call `flag_anomalies` for the month"),
        "the Skill tool returns the skill's instructions: {result}"
    );
    assert_eq!(skill[0]["error"], false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("following the monthly-review skill"), "{stdout}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("left out"));

    // An instruction file past 32 KiB is refused with a sentence; the run goes on.
    let big = project(&"Keep answers short. ".repeat(2_000));
    let out = ask(&pool, big.path(), &[]);
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("AGENTS.md was left out") && said.contains("more than the 32768 a session takes"),
        "{said}"
    );

    // --no-skills: no Skill tool; the model asking for one is told there is none.
    let out = ask(&pool, dir.path(), &["--no-skills"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let skill = common::traced_calls(&pool, "Skill").await;
    let last = skill.last().unwrap();
    assert_eq!(last["error"], true, "{last}");
    assert!(
        last["result"]
            .as_str()
            .unwrap()
            .contains("no tool named \"Skill\""),
        "{last}"
    );
}
