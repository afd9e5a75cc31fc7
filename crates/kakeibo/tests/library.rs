//! The library as a program outside the workspace's crates uses it: each example run as its own
//! process against a real database (a seeded copy of the demo ledger) and a scripted model, and
//! what the examples cannot show — cancellation, refused decisions — in process.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use kakeibo_testdb as common;

use std::{
    path::PathBuf,
    process::{Command, Output},
    time::Duration,
};

use common::{app_pool, load_demo_ledger, owner_pool};
use futures_util::stream::{self, BoxStream};
use kakeibo::{Agent, ConfirmPolicy, DEV_OWNER, Error, Provider, Status};
use kakeibo_core::{ModelRequest, ProviderError, StreamEvent};
use serde_json::Value;
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

/// The demo ledger in this test's database; the `app_user` URL of that database.
async fn seeded(options: PgPoolOptions, connect: PgConnectOptions) -> (PgPool, String) {
    let owner = owner_pool(options, connect.clone()).await;
    load_demo_ledger(&owner).await;
    let mut url = url::Url::parse(&std::env::var("APP_DATABASE_URL").unwrap()).unwrap();
    url.set_path(connect.get_database().unwrap());
    (owner, url.to_string())
}

/// An example's binary, which `cargo test` builds beside the tests.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let path = dir.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: `cargo test -p kakeibo` builds the examples (a `--test` filter alone does not)",
        path.display()
    );
    path
}

/// Runs an example with the scripted model `script` (under fixtures/scripts/) on `url`.
fn run(name: &str, script: Option<&str>, url: &str, args: &[&str]) -> Output {
    let root = kakeibo_testkit::workspace_root();
    let mut command = Command::new(example(name));
    command
        .args(args)
        .current_dir(&root)
        .env("APP_DATABASE_URL", url)
        .env_remove("KAKEIBO_PROVIDER")
        .env_remove("GEMINI_API_KEY")
        .env_remove("GEMINI_AUTH")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    if let Some(script) = script {
        let path = root.join("fixtures/scripts").join(script);
        command.env("KAKEIBO_PROVIDER", format!("script:{}", path.display()));
    }
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The runs the library recorded, with their status.
async fn library_runs(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar("SELECT status::text FROM trace_runs WHERE channel = 'library' ORDER BY started_at")
        .fetch_all(pool)
        .await
        .unwrap()
}

async fn groceries_june_budget(pool: &PgPool) -> Vec<i64> {
    sqlx::query_scalar(
        "SELECT b.amount_minor FROM budgets b JOIN accounts a ON a.id = b.account_id
         WHERE b.owner_id = $1 AND a.name = 'Groceries' AND b.month = '2025-06'",
    )
    .bind(DEV_OWNER.as_uuid())
    .fetch_all(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn ask_answers_from_the_ledger(options: PgPoolOptions, connect: PgConnectOptions) {
    let (pool, url) = seeded(options, connect).await;
    // The figure, from the ledger here (not from the tools the example goes through).
    let groceries: i64 = sqlx::query_scalar(
        "SELECT sum(p.amount_minor)::bigint FROM postings p JOIN accounts a ON a.id = p.account_id
         JOIN transactions t ON t.id = p.transaction_id
         WHERE p.owner_id = $1 AND a.name = 'Groceries' AND t.date BETWEEN '2025-03-01' AND '2025-03-31'",
    )
    .bind(DEV_OWNER.as_uuid())
    .fetch_one(&pool)
    .await
    .unwrap();
    let formatted = kakeibo_ledger::Money::new(groceries, kakeibo_ledger::Currency::INR).format();

    let out = stdout(&run(
        "ask",
        Some("demo.yaml"),
        &url,
        &["How much did I spend on groceries in March 2025?"],
    ));
    assert!(out.contains(&formatted), "{out} should name {formatted}");
    assert_eq!(library_runs(&pool).await, ["ok"]);

    // Without a model, the example says which settings would give one.
    let none = run("ask", None, &url, &["Anything?"]);
    assert!(!none.status.success());
    let said = String::from_utf8_lossy(&none.stderr);
    assert!(said.contains("no model provider is configured"), "{said}");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn stream_prints_the_shared_events(options: PgPoolOptions, connect: PgConnectOptions) {
    let (_pool, url) = seeded(options, connect).await;
    let out = stdout(&run(
        "stream",
        Some("demo.yaml"),
        &url,
        &["Which of my payments are subscriptions?"],
    ));
    let events: Vec<Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let first = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap_or(usize::MAX);
    assert!(first("tool_call") < first("tool_result"), "{kinds:?}");
    assert!(first("tool_result") < first("token"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"turn_end"), "{kinds:?}");
    let end = events.last().unwrap();
    assert_eq!(end["status"], "ok");
    assert_eq!(events[first("tool_call")]["name"], "detect_recurring");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_tool_of_the_programs_own_is_called(options: PgPoolOptions, connect: PgConnectOptions) {
    let (_pool, url) = seeded(options, connect).await;
    let output = run(
        "custom_tool",
        Some("library.yaml"),
        &url,
        &["How much should I save each month for a ₹1,20,000 laptop in 6 months?"],
    );
    let out = stdout(&output);
    assert_eq!(out.trim(), "Put aside 2000000 paise a month for 6 months.");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("called savings_goal"), "{said}");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_write_waits_in_one_process_and_is_decided_in_another(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (pool, url) = seeded(options, connect).await;
    let ask = || {
        let out = stdout(&run(
            "confirm_later",
            Some("demo.yaml"),
            &url,
            &["ask", "Set a ₹20,000 budget for groceries"],
        ));
        assert!(
            out.contains("asks to: Set the Groceries budget for 2025-06"),
            "{out}"
        );
        out.lines()
            .find_map(|line| line.strip_prefix("waiting: "))
            .unwrap()
            .to_owned()
    };

    // Declined in another process: nothing written.
    let first = ask();
    assert!(groceries_june_budget(&pool).await.is_empty());
    let declined = stdout(&run(
        "confirm_later",
        Some("demo.yaml"),
        &url,
        &["decline", &first],
    ));
    assert!(declined.contains("Nothing was changed"), "{declined}");
    assert!(groceries_june_budget(&pool).await.is_empty());

    // Allowed from two processes at once: applied once.
    let second = ask();
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| run("confirm_later", Some("demo.yaml"), &url, &["allow", &second]));
        let b = s.spawn(|| run("confirm_later", Some("demo.yaml"), &url, &["allow", &second]));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert!(
        a.status.success() || b.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    assert_eq!(groceries_june_budget(&pool).await, [2_000_000]);
    // Once finished, the confirmation is gone, and says so.
    let again = run("confirm_later", Some("demo.yaml"), &url, &["allow", &second]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("there is no such confirmation"));
    assert_eq!(groceries_june_budget(&pool).await, [2_000_000]);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn rules_and_hooks_refuse_before_anything_runs(options: PgPoolOptions, connect: PgConnectOptions) {
    let (pool, url) = seeded(options, connect).await;
    let rules_made = || async {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM rules")
            .fetch_one(&pool)
            .await
            .unwrap();
        n
    };
    let before = rules_made().await;

    // A deny rule outweighs the policy and every hook.
    let output = run(
        "rules_and_hooks",
        Some("demo.yaml"),
        &url,
        &["Set a ₹20,000 budget for groceries"],
    );
    stdout(&output);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("set_budget: allowed Some(false)"), "{said}");
    assert!(said.contains("permission rule"), "{said}");
    assert!(groceries_june_budget(&pool).await.is_empty());

    // The program's own hook refuses what the rules allow.
    let output = run(
        "rules_and_hooks",
        Some("demo.yaml"),
        &url,
        &["Always put ZZ under Dining"],
    );
    stdout(&output);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("three letters"), "{said}");
    assert_eq!(rules_made().await, before);

    // A settings file's command hook, asked after it, refuses too; without it the rule is made.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hooks.json");
    std::fs::write(
        &file,
        r#"{"hooks": {"PreToolUse": [{"matcher": "set_category_rule",
            "hooks": [{"type": "command", "command": "grep -q Swiggy && { echo 'Swiggy stays under Food' >&2; exit 2; }; exit 0"}]}]}}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let output = run(
        "rules_and_hooks",
        Some("demo.yaml"),
        &url,
        &["Always put Swiggy under Dining", file],
    );
    stdout(&output);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("Swiggy stays under Food"), "{said}");
    assert_eq!(rules_made().await, before);
    let output = run(
        "rules_and_hooks",
        Some("demo.yaml"),
        &url,
        &["Always put Zomato under Dining", file],
    );
    stdout(&output);
    assert_eq!(rules_made().await, before + 1);
}

/// A model that never answers.
struct Silent;

impl Provider for Silent {
    fn name(&self) -> &'static str {
        "openai"
    }
    fn model(&self) -> &'static str {
        "silent"
    }
    fn stream<'a>(&'a self, _: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        Box::pin(stream::pending())
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_stopped_prompt_is_stored_aborted(options: PgPoolOptions, connect: PgConnectOptions) {
    let pool = owner_pool(options, connect.clone()).await;
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .provider(Silent)
        .build()
        .unwrap();
    let stopped = agent
        .prompt("anything")
        .until(tokio::time::sleep(Duration::from_millis(300)))
        .await
        .unwrap();
    assert_eq!(
        (&stopped.status, stopped.stop),
        (&Status::Aborted, Some(kakeibo::Stop::Cancelled))
    );
    let status: String = sqlx::query_scalar("SELECT status::text FROM trace_runs WHERE id = $1")
        .bind(stopped.run_id.as_uuid())
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(status, "aborted");
    // The question is in the conversation, and the conversation is free for the next prompt.
    let next = agent
        .prompt("again")
        .in_conversation(stopped.conversation)
        .until(tokio::time::sleep(Duration::from_millis(100)))
        .await
        .unwrap();
    assert_eq!(next.status, Status::Aborted);
    let kept: i64 =
        sqlx::query_scalar("SELECT count(*) FROM conversation_messages WHERE conversation_id = $1")
            .bind(stopped.conversation.as_uuid())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(kept, 2, "both questions kept");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn decisions_must_name_each_waiting_write_once(options: PgPoolOptions, connect: PgConnectOptions) {
    let (pool, _url) = seeded(options, connect.clone()).await;
    let script = kakeibo_testkit::workspace_root().join("fixtures/scripts/demo.yaml");
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .provider(kakeibo_providers::script::Script::from_file(&script).unwrap())
        .confirm_policy(ConfirmPolicy::Suspend)
        .build()
        .unwrap();
    let asked = agent.run("Set a ₹20,000 budget for groceries").await.unwrap();
    let Status::Waiting { suspended, pending } = asked.status else {
        panic!("{asked:?}")
    };
    let id = pending[0].id.clone();
    for decisions in [
        vec![(id.clone(), false), (id.clone(), true)],
        vec![],
        vec![(id.clone(), true), ("no_such_call".to_owned(), true)],
    ] {
        let refused = agent.confirm(suspended, &decisions).await;
        assert!(
            matches!(refused, Err(Error::Turn(_))),
            "{decisions:?}: {refused:?}"
        );
        assert!(groceries_june_budget(&pool).await.is_empty());
    }
    // Refused at once, the claims are given up at once: the corrected confirm is not "in progress".
    let done = agent
        .confirm(suspended, &[(id, true)])
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(done.status, Status::Ok);
    assert_eq!(groceries_june_budget(&pool).await, [2_000_000]);
}

/// Hooks of a program's own: no budgets through the agent, no secrets in a prompt, and notes.
struct HouseRules;

impl kakeibo::Hooks for HouseRules {
    fn pre_tool_use<'a>(
        &'a self,
        _session: &'a str,
        call: &'a kakeibo_core::ToolUse,
        _tier: kakeibo::Tier,
    ) -> futures_util::future::BoxFuture<'a, kakeibo::PreToolUse> {
        let refuse = call.name == "set_budget";
        Box::pin(async move {
            kakeibo::PreToolUse {
                verdict: refuse.then_some(kakeibo::Verdict::Deny),
                reason: refuse.then(|| "budgets are set by the treasurer".to_owned()),
                updated_input: None,
                stop: None,
            }
        })
    }

    fn user_prompt_submit<'a>(
        &'a self,
        _session: &'a str,
        prompt: &'a str,
    ) -> futures_util::future::BoxFuture<'a, kakeibo::PromptSubmit> {
        let secret = prompt.contains("password");
        Box::pin(async move {
            kakeibo::PromptSubmit {
                block: secret.then(|| "no secrets in chat".to_owned()),
                notes: vec!["The person is on the family plan.".to_owned()],
            }
        })
    }

    fn session_start<'a>(&'a self, _session: &'a str) -> futures_util::future::BoxFuture<'a, Vec<String>> {
        Box::pin(async { vec!["Started by the library's test.".to_owned()] })
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn hooks_of_the_programs_own_refuse_and_note(options: PgPoolOptions, connect: PgConnectOptions) {
    let (pool, _url) = seeded(options, connect.clone()).await;
    let script = kakeibo_testkit::workspace_root().join("fixtures/scripts/demo.yaml");
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .provider(kakeibo_providers::script::Script::from_file(&script).unwrap())
        .confirm_policy(ConfirmPolicy::Suspend)
        .hooks(HouseRules)
        .build()
        .unwrap();

    // Refused before it could wait for a person: nothing waits, nothing written.
    let refused = agent.run("Set a ₹20,000 budget for groceries").await.unwrap();
    assert_eq!(refused.status, Status::Ok, "{refused:?}");
    assert!(
        refused.calls[0]
            .result
            .contains("budgets are set by the treasurer"),
        "{refused:?}"
    );
    assert_eq!(refused.calls[0].outcome, kakeibo::ToolOutcome::RefusedByHook);
    assert!(groceries_june_budget(&pool).await.is_empty());
    let first: String = sqlx::query_scalar(
        "SELECT message::text FROM conversation_messages WHERE conversation_id = $1 ORDER BY seq LIMIT 1",
    )
    .bind(refused.conversation.as_uuid())
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(first.contains("[Started by the library's test.]"), "{first}");
    assert!(first.contains("[The person is on the family plan.]"), "{first}");

    // A refused prompt calls no model, and its run says why.
    let blocked = agent.run("my password is hunter2").await.unwrap();
    assert_eq!(
        (&blocked.status, blocked.stop),
        (&Status::Blocked, Some(kakeibo::Stop::Hook))
    );
    assert!(blocked.text.contains("no secrets in chat"), "{}", blocked.text);
    assert_eq!(blocked.usage.input_tokens, 0);
}

/// A judge endpoint sure of everything: P(yes) ≈ 0.99 for any question but the probe's control
/// whose answer is no (a clear no there: the probe passes it).
async fn sure_judge() -> kakeibo::Judge {
    use axum::{Json, Router, routing::post};
    async fn answer(Json(request): Json<Value>) -> Json<Value> {
        let question = request["messages"][1]["content"].as_str().unwrap_or_default();
        let (yes, no) = if question.starts_with("Is 3 greater than 100?") {
            (-4.8, -0.01)
        } else {
            (-0.01, -4.8)
        };
        let top = serde_json::json!([{"token": "Y", "logprob": yes}, {"token": "N", "logprob": no}]);
        Json(
            serde_json::json!({"model": request["model"], "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "Y"},
            "logprobs": {"content": [{"token": "Y", "logprob": yes, "top_logprobs": top}]}}]}),
        )
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            Router::new().route("/v1/chat/completions", post(answer)),
        )
        .await
    });
    let config = kakeibo_judge::JudgeConfig {
        base_url: format!("http://{address}/v1"),
        api_key: None,
        model: "sure".into(),
        timeout: Duration::from_secs(2),
    };
    kakeibo::Judge::probe(config).await.unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_stop_judge_ends_a_run_that_keeps_rewording_the_same_search(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (_owner, _) = seeded(options, connect.clone()).await;
    // A model that keeps searching for what is not there, each time in other words: the repeat
    // check cannot see it (the calls differ and none fails); the judge, from the fourth call, can.
    let searches: Vec<_> = [
        "gym",
        "gym membership",
        "fitness",
        "Gym Fee",
        "gym monthly",
        "the gym",
    ]
    .into_iter()
    .map(|q| {
        Ok(kakeibo_core::scripted::reply_calls(&[(
            "search_transactions",
            serde_json::json!({"query": q}),
        )]))
    })
    .chain([Ok(kakeibo_core::scripted::reply_text("I could not find it."))])
    .collect();
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .provider(kakeibo_core::scripted::Scripted::new(searches.clone()))
        .stop_judge(sure_judge().await)
        .build()
        .unwrap();
    let result = agent.run("what do I pay for the gym?").await.unwrap();
    assert_eq!(result.status, Status::Stuck, "{}", result.text);
    assert_eq!(result.calls.len(), 4, "stopped at the fourth call");
    assert!(result.text.contains("stop judge"), "{}", result.text);

    // Without the judge the same model searches six times and answers.
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .provider(kakeibo_core::scripted::Scripted::new(searches))
        .build()
        .unwrap();
    let result = agent.run("what do I pay for the gym?").await.unwrap();
    assert_eq!(result.status, Status::Ok);
    assert_eq!(result.calls.len(), 6);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_summarizer_set_apart_summarises_a_long_conversation(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    use kakeibo_core::scripted::{Scripted, reply_text};
    use std::sync::Arc;

    let _ = owner_pool(options, connect.clone()).await;
    let agent_model = Arc::new(Scripted::from_fn(|_| Ok(reply_text("Noted."))));
    let summarizer = Arc::new(Scripted::from_fn(|_| {
        Ok(reply_text("They kept asking the same."))
    }));
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .shared_provider(agent_model.clone())
        .summarizer(summarizer.clone())
        .build()
        .unwrap();
    // Each question is long, so the context outgrows its budget within a few prompts.
    let question = format!("which accounts? {}", "and more detail ".repeat(4_000));
    let first = agent.prompt(&question).await.unwrap();
    let mut prompts = 1;
    while summarizer.requests().is_empty() {
        prompts += 1;
        assert!(prompts <= 12, "the context was never fitted");
        agent
            .prompt(&question)
            .in_conversation(first.conversation)
            .await
            .unwrap();
    }
    let asked = summarizer.requests();
    assert_eq!(asked.len(), 1, "one summary for one eviction");
    assert!(asked[0].tools.is_empty(), "the summarizer is offered no tools");
    assert!(
        agent_model.requests().iter().all(|r| !r.tools.is_empty()),
        "the agent's model was never asked to summarise"
    );
}

/// The person's instruction file and skills reach the model: the request it is sent carries the
/// instructions after the system prompt, a line for each skill and the `Skill` tool; the skill's
/// instructions come back as that tool's result; a skill not there is refused with the names.
/// Without them the request is kakeibo's own.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn instructions_and_skills_reach_the_model(options: PgPoolOptions, connect: PgConnectOptions) {
    use kakeibo::{Instructions, Skills};
    use kakeibo_core::scripted::{Scripted, reply_calls, reply_text};
    use serde_json::json;
    use std::sync::Arc;

    let (_owner, _url) = seeded(options, connect.clone()).await;
    let app = app_pool(&connect).await;
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".git")).unwrap();
    std::fs::write(
        project.path().join("AGENTS.md"),
        "Savings is our emergency fund: never count it as money to spend.",
    )
    .unwrap();
    let shipped = kakeibo_testkit::workspace_root().join("fixtures/skills");
    let skills = Skills::from_dirs(&[shipped]);
    assert_eq!(skills.list.len(), 2, "{:?}", skills.refused);
    let scripted = Arc::new(Scripted::new(vec![
        Ok(reply_calls(&[("Skill", json!({"name": "monthly-review"}))])),
        Ok(reply_calls(&[("Skill", json!({"name": "tax-year"}))])),
        Ok(reply_text("June was calm.")),
    ]));
    let agent = Agent::builder(app.clone(), DEV_OWNER)
        .shared_provider(scripted.clone())
        .instructions(&Instructions::discover(project.path(), None))
        .skills(&skills)
        .build()
        .unwrap();
    let result = agent.run("How did June 2025 go?").await.unwrap();
    assert_eq!(result.text, "June was calm.");
    let requests = scripted.requests();
    assert_eq!(requests.len(), 3);
    let system = &requests[0].system;
    assert!(system.starts_with(kakeibo_core::prompt::SYSTEM_PROMPT));
    assert!(system.contains("## The person's instructions"), "{system}");
    assert!(system.contains("Savings is our emergency fund: never count it as money to spend."));
    assert!(system.contains("\n- monthly-review: Review one month of the household's money"));
    assert!(system.contains("\n- subscription-audit: Go through every subscription"));
    assert!(requests[0].tools.iter().any(|d| d.name == "Skill"));
    let second = serde_json::to_string(&requests[1].messages).unwrap();
    assert!(second.contains("A month's review"), "{second}");
    let third = serde_json::to_string(&requests[2].messages).unwrap();
    assert!(
        third.contains(
            "there is no skill \\\"tax-year\\\"; the skills are: monthly-review, subscription-audit"
        ),
        "{third}"
    );

    // Without them: kakeibo's own prompt and tools.
    let plain = Arc::new(Scripted::new(vec![Ok(reply_text("ok"))]));
    let (builder, refused) = Agent::builder(app, DEV_OWNER)
        .shared_provider(plain.clone())
        .project(project.path(), false, false);
    assert!(refused.is_empty());
    builder.build().unwrap().run("Hello").await.unwrap();
    let request = &plain.requests()[0];
    assert_eq!(request.system, kakeibo_core::prompt::SYSTEM_PROMPT);
    assert!(request.tools.iter().all(|d| d.name != "Skill"));
}

/// `max_turns` ends a run past its model calls, and the next prompt of the conversation tells
/// the model the run before ended early (for that turn only); `read_only` offers no write tool;
/// `conversations` and `spend` sum a conversation's runs.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn limits_and_an_early_end_told_to_the_next_run(options: PgPoolOptions, connect: PgConnectOptions) {
    use kakeibo::{Stop, Tier};
    use kakeibo_core::scripted::{Scripted, reply_calls, reply_text};
    use serde_json::json;
    use std::sync::Arc;

    let (_owner, _url) = seeded(options, connect.clone()).await;
    let app = app_pool(&connect).await;
    let search = || reply_calls(&[("search_transactions", json!({"query": "coffee"}))]);
    let scripted = Arc::new(Scripted::new(vec![
        Ok(search()),
        Ok(search()),
        Ok(reply_text("Coffee: enough.")),
        Ok(reply_text("Going on from there.")),
        Ok(reply_text("And again.")),
    ]));
    let agent = Agent::builder(app.clone(), DEV_OWNER)
        .shared_provider(scripted.clone())
        .max_turns(2)
        .read_only()
        .build()
        .unwrap();
    assert!(agent.tools().all(|(_, tier)| tier == Tier::Read));
    assert!(agent.tools().any(|(name, _)| name == "search_transactions"));
    let first = agent.run("How much coffee did I buy?").await.unwrap();
    assert_eq!(first.stop, Some(Stop::IterationLimit), "{first:?}");
    let conversation = first.conversation;
    let second = agent
        .prompt("Go on.")
        .in_conversation(conversation)
        .await
        .unwrap();
    assert_eq!(second.text, "Going on from there.");
    let third = agent
        .prompt("Once more.")
        .in_conversation(conversation)
        .await
        .unwrap();
    assert_eq!(third.text, "And again.");
    let requests = scripted.requests();
    assert_eq!(requests.len(), 5);
    assert!(
        requests[1].tools.iter().all(|d| d.name != "set_budget"),
        "no write is offered"
    );
    let told = "The previous request in this conversation ended in an error before it finished";
    assert!(!requests[0].system.contains(told));
    assert!(
        requests[3].system.contains(told),
        "the run after the early end is told"
    );
    assert!(!requests[4].system.contains(told), "only that run");

    let spend = agent.spend(conversation).await.unwrap();
    assert_eq!(spend.runs, 3);
    let listed = agent.conversations().await.unwrap();
    let (summary, listed_spend) = listed
        .iter()
        .find(|(c, _)| c.id == conversation.as_uuid())
        .unwrap();
    assert_eq!(*listed_spend, spend);
    assert_eq!(summary.title.as_deref(), Some("How much coffee did I buy?"));
    assert!(summary.messages >= 6, "{summary:?}");
}

/// Hooks that note each call they are asked about, and each answer.
#[derive(Default)]
struct Seen {
    calls: std::sync::Mutex<Vec<String>>,
    stops: std::sync::atomic::AtomicUsize,
}

impl kakeibo::Hooks for Seen {
    fn pre_tool_use<'a>(
        &'a self,
        _session: &'a str,
        call: &'a kakeibo_core::ToolUse,
        _tier: kakeibo::Tier,
    ) -> futures_util::future::BoxFuture<'a, kakeibo_core::hooks::PreToolUse> {
        self.calls.lock().unwrap().push(call.name.clone());
        Box::pin(async { kakeibo_core::hooks::PreToolUse::default() })
    }

    fn stop<'a>(
        &'a self,
        _session: &'a str,
        _answer: &'a str,
        _active: bool,
    ) -> futures_util::future::BoxFuture<'a, Option<String>> {
        self.stops.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { None })
    }
}

/// `subagents`: a parent hands a task to a subagent, which calls two reads and one write. The
/// write is asked once, by the parent's `ask`, and runs; the parent's model reads one result,
/// the subagent's answer; the run's usage is the parent's calls and the subagent's; the
/// subagent's run is stored linked to the parent's, its events under it.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_subagent_does_a_task_under_the_parents_confirm_and_budget(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    use kakeibo::{PendingWrite, subagent};
    use kakeibo_core::scripted::{Scripted, reply_calls, reply_text};
    use serde_json::json;
    use std::sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    };

    let (owner, _url) = seeded(options, connect.clone()).await;
    let app = app_pool(&connect).await;
    let task = json!({
        "description": "Review the subscriptions",
        "prompt": "List the regular payments and the balances, then set the Groceries budget for June 2025 to 20,000 rupees.",
    });
    let scripted = Arc::new(Scripted::new(vec![
        Ok(reply_calls(&[("task", task)])),
        Ok(reply_calls(&[
            ("detect_recurring", json!({})),
            ("get_balances", json!({})),
        ])),
        Ok(reply_calls(&[(
            "set_budget",
            json!({"category": "Groceries", "month": "2025-06", "amount_minor": 2_000_000, "currency": "INR"}),
        )])),
        Ok(reply_text(
            "Found the regular payments; Groceries is budgeted at ₹20,000.00 for June 2025.",
        )),
        Ok(reply_text("The subagent reviewed them and set the budget.")),
    ]));
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&asked);
    let ask = move |write: &PendingWrite| {
        seen.lock().unwrap().push(write.tool.clone());
        Box::pin(async { true }) as futures_util::future::BoxFuture<'static, bool>
    };
    let hooks = Arc::new(Seen::default());
    let agent = Agent::builder(app.clone(), DEV_OWNER)
        .shared_provider(scripted.clone())
        .confirm_policy(ConfirmPolicy::Inline(Box::new(ask)))
        .shared_hooks(hooks.clone())
        .subagents(Vec::new())
        .build()
        .unwrap();
    assert!(agent.tools().any(|(name, _)| name == subagent::TASK));
    let nested = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&nested);
    let result = agent
        .prompt("Review my subscriptions and set the groceries budget.")
        .on_event(move |event| {
            if matches!(event, kakeibo::Event::Subagent { call_id, .. } if !call_id.is_empty()) {
                counter.fetch_add(1, Ordering::SeqCst);
            }
        })
        .await
        .unwrap();
    assert_eq!(result.text, "The subagent reviewed them and set the budget.");
    assert_eq!(
        *asked.lock().unwrap(),
        ["set_budget"],
        "the write is asked once, in the parent's queue"
    );
    assert_eq!(
        nested.load(Ordering::SeqCst),
        6,
        "three calls and three results, under the task"
    );
    // The subagent's calls pass the parent's tool hooks; the Stop hook is asked of the parent's
    // answer only.
    assert_eq!(
        *hooks.calls.lock().unwrap(),
        ["task", "detect_recurring", "get_balances", "set_budget"]
    );
    assert_eq!(hooks.stops.load(Ordering::SeqCst), 1);

    // The parent's model read one result for the task: the subagent's answer, none of its calls.
    let requests = scripted.requests();
    assert_eq!(requests.len(), 5);
    assert!(
        requests[1].tools.iter().all(|d| d.name != subagent::TASK),
        "no task in a task"
    );
    assert_eq!(
        requests[1].messages.len(),
        1,
        "the subagent starts with a fresh context"
    );
    assert!(requests[1].system.contains("You are a subagent"));
    let last = requests[4].messages.last().unwrap();
    let results: Vec<&str> = last
        .content
        .iter()
        .filter_map(|b| match b {
            kakeibo_core::Block::ToolResult { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("Groceries is budgeted at ₹20,000.00"),
        "{}",
        results[0]
    );
    for raw in ["net_worth", "monthly_commitment", "home_currency"] {
        assert!(
            !results[0].contains(raw),
            "no raw result of the subagent's reads: {raw}"
        );
    }
    let told: serde_json::Value = serde_json::from_str(
        results[0]
            .trim()
            .trim_start_matches("<tool_data>")
            .trim_end_matches("</tool_data>"),
    )
    .unwrap();
    assert_eq!(
        told["tool_calls"][2],
        json!({"name": "set_budget", "outcome": "ran"})
    );
    assert_eq!(result.calls.len(), 1, "the parent made one call");

    // Usage: five model calls of 100 in and 10 out, two the parent's and three the subagent's.
    assert_eq!((result.usage.input_tokens, result.usage.output_tokens), (500, 50));
    assert_eq!(result.subagents.len(), 1);
    let sub = &result.subagents[0];
    assert_eq!((sub.usage.input_tokens, sub.iterations), (300, 3));
    let (budget,): (i64,) = sqlx::query_as(
        "SELECT b.amount_minor FROM budgets b JOIN accounts a ON a.id = b.account_id
         WHERE a.name LIKE '%Groceries' AND b.month = '2025-06'",
    )
    .fetch_one(&owner)
    .await
    .unwrap();
    assert_eq!(budget, 2_000_000, "the subagent's write ran");

    // The traces link: the subagent's run names its parent, holds its own events, and no total
    // of its own (they are in the parent's row, so every sum counts them once).
    let (parent, input, status): (Option<uuid::Uuid>, i64, String) =
        sqlx::query_as("SELECT parent_run_id, input_tokens, status::text FROM trace_runs WHERE id = $1")
            .bind(sub.run_id.as_uuid())
            .fetch_one(&owner)
            .await
            .unwrap();
    assert_eq!(
        (parent, input, status.as_str()),
        (Some(result.run_id.as_uuid()), 0, "ok")
    );
    let (parent_input,): (i64,) = sqlx::query_as("SELECT input_tokens FROM trace_runs WHERE id = $1")
        .bind(result.run_id.as_uuid())
        .fetch_one(&owner)
        .await
        .unwrap();
    assert_eq!(parent_input, 500, "the parent's row holds the sum");
    let kinds: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT type::text, payload->>'name' FROM trace_events WHERE run_id = $1 ORDER BY seq",
    )
    .bind(sub.run_id.as_uuid())
    .fetch_all(&owner)
    .await
    .unwrap();
    let calls: Vec<&str> = kinds
        .iter()
        .filter(|(kind, _)| kind == "tool_call")
        .filter_map(|(_, name)| name.as_deref())
        .collect();
    assert_eq!(calls, ["detect_recurring", "get_balances", "set_budget"]);
    assert!(kinds.iter().any(|(kind, _)| kind == "confirm"), "{kinds:?}");
    assert_eq!(kinds.iter().filter(|(kind, _)| kind == "model_call").count(), 3);
}

/// A subagent type of the program's own: its instructions, one tool.
fn auditor() -> kakeibo::subagent::SubagentType {
    kakeibo::subagent::SubagentType {
        name: "auditor".to_owned(),
        description: "Audits.".to_owned(),
        instructions: Some("Audit only.".to_owned()),
        tools: Some(vec!["get_balances".to_owned()]),
        provider: None,
    }
}

/// Where a person decides later ([`ConfirmPolicy::Suspend`], the web), a subagent is offered
/// only the read tools: a write it asked for could not wait in another turn's queue.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_subagent_of_a_suspending_agent_only_reads(options: PgPoolOptions, connect: PgConnectOptions) {
    use kakeibo_core::scripted::{Scripted, reply_calls, reply_text};
    use serde_json::json;
    use std::sync::Arc;

    let (_owner, _url) = seeded(options, connect.clone()).await;
    let app = app_pool(&connect).await;
    let task =
        json!({"description": "Look", "prompt": "Look at the balances.", "subagent_type": "general-purpose"});
    let scripted = Arc::new(Scripted::new(vec![
        Ok(reply_calls(&[("task", task)])),
        Ok(reply_text("All fine.")),
        Ok(reply_text("It says all is fine.")),
    ]));
    let agent = Agent::builder(app, DEV_OWNER)
        .shared_provider(scripted.clone())
        .confirm_policy(ConfirmPolicy::Suspend)
        .subagents(vec![auditor()])
        .build()
        .unwrap();
    let result = agent.run("Check my balances with a subagent.").await.unwrap();
    assert_eq!(result.text, "It says all is fine.");
    let requests = scripted.requests();
    let offered = |i: usize| -> Vec<&str> { requests[i].tools.iter().map(|d| d.name).collect() };
    assert!(offered(0).contains(&"set_budget") && offered(0).contains(&"task"));
    let child = offered(1);
    assert!(child.contains(&"search_transactions"), "{child:?}");
    assert!(
        !child.contains(&"set_budget") && !child.contains(&"task"),
        "reads only, no task in a task: {child:?}"
    );
    // The declared types: general-purpose first, then the given ones, each described.
    let declared = requests[0].tools.iter().find(|d| d.name == "task").unwrap();
    let kinds = &declared.parameters["properties"]["subagent_type"];
    assert_eq!(kinds["enum"], json!(["general-purpose", "auditor"]));
    assert!(
        kinds["description"]
            .as_str()
            .unwrap()
            .contains("auditor: Audits.")
    );

    // A type's own tools and instructions.
    let task = json!({"description": "Audit", "prompt": "Audit it.", "subagent_type": "auditor"});
    let scripted = Arc::new(Scripted::new(vec![
        Ok(reply_calls(&[("task", task)])),
        Ok(reply_text("Audited.")),
        Ok(reply_text("Done.")),
    ]));
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .shared_provider(scripted.clone())
        .subagents(vec![auditor()])
        .build()
        .unwrap();
    agent.run("Audit with a subagent.").await.unwrap();
    let requests = scripted.requests();
    let child: Vec<&str> = requests[1].tools.iter().map(|d| d.name).collect();
    assert_eq!(child, ["get_balances"]);
    assert!(
        requests[1]
            .system
            .ends_with("## Your instructions (auditor)\nAudit only.")
    );
    assert!(
        requests[1].system.starts_with(&requests[0].system[..200]),
        "kakeibo's own rules first"
    );

    // A type that is not offered is refused before anything runs.
    let task = json!({"description": "x", "prompt": "y", "subagent_type": "nobody"});
    let scripted = Arc::new(Scripted::new(vec![
        Ok(reply_calls(&[("task", task)])),
        Ok(reply_text("Sorry.")),
    ]));
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .shared_provider(scripted.clone())
        .subagents(Vec::new())
        .build()
        .unwrap();
    let result = agent.run("Use nobody.").await.unwrap();
    assert_eq!(result.calls[0].outcome, kakeibo_core::ToolOutcome::Failed);
    assert!(result.subagents.is_empty());
    assert_eq!(scripted.requests().len(), 2, "no subagent ran");

    // At most four subagents a request: the fifth task of a batch is refused, nothing asked.
    let five: Vec<(&str, serde_json::Value)> = (0..5)
        .map(|i| {
            (
                "task",
                json!({"description": format!("part {i}"), "prompt": "Look."}),
            )
        })
        .collect();
    let mut replies = vec![Ok(reply_calls(&five))];
    replies.extend((0..4).map(|_| Ok(reply_text("Looked."))));
    replies.push(Ok(reply_text("Four parts looked at.")));
    let scripted = Arc::new(Scripted::new(replies));
    let agent = Agent::builder(app_pool(&connect).await, DEV_OWNER)
        .shared_provider(scripted.clone())
        .subagents(Vec::new())
        .build()
        .unwrap();
    let result = agent.run("Look at five parts.").await.unwrap();
    assert_eq!(result.text, "Four parts looked at.");
    assert_eq!(result.subagents.len(), kakeibo::subagent::MAX_SUBAGENTS_PER_TURN);
    assert_eq!(result.calls[4].outcome, kakeibo_core::ToolOutcome::Failed);
    assert!(
        result.calls[4].result.contains("already ran 4 subagents"),
        "{:?}",
        result.calls[4]
    );
    assert_eq!(scripted.requests().len(), 6);
}
