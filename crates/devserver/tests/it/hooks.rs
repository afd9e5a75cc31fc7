//! The deployment's hooks (`HOOKS`: Claude Code's settings format, HTTP endpoints only) in the
//! web's flow, against a real endpoint on a local port: a `PreToolUse` hook that blocks
//! `set_budget` blocks it before any confirmation card; one that allows it still leaves the
//! write to the person; a write the person allows reaches `PostToolUse`, whose note the model
//! reads; and a command hook is refused at start.

use crate::support;

use std::sync::{Arc, Mutex};

use axum::{Json, Router, extract::State as Extract, routing::post};
use kakeibo_api::{Config, State};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state, turn_end};

/// A hook endpoint: what it was sent, by path, and what it answers.
#[derive(Clone, Default)]
struct Endpoint {
    seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Endpoint {
    async fn start(&self) -> String {
        async fn answer(
            Extract(endpoint): Extract<Endpoint>,
            uri: axum::http::Uri,
            Json(input): Json<Value>,
        ) -> Json<Value> {
            let path = uri.path().to_owned();
            endpoint.seen.lock().unwrap().push((path.clone(), input));
            Json(match path.as_str() {
                "/deny" => json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                    "permissionDecision": "deny", "permissionDecisionReason": "budgets are set by the treasurer"}}),
                "/allow" => {
                    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})
                }
                "/post" => json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                    "additionalContext": "the treasurer was told of this budget"}}),
                _ => json!({}),
            })
        }
        support::serve(Router::new().fallback(post(answer)).with_state(self.clone())).await
    }

    fn seen(&self, path: &str) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

fn settings(base: &str, pre: &str) -> String {
    json!({"hooks": {
        "PreToolUse": [{"matcher": "set_budget", "hooks": [{"type": "http", "url": format!("{base}{pre}"), "timeout": 5}]}],
        "PostToolUse": [{"matcher": "set_.*", "hooks": [{"type": "http", "url": format!("{base}/post"), "timeout": 5}]}],
    }})
    .to_string()
}

async fn budgets(state: &State) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM budgets")
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap()
}

const SET_BUDGET: &str = "set a ₹20,000 monthly budget for groceries";

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_deployments_hook_blocks_a_budget_before_the_card(_: PgPoolOptions, connect: PgConnectOptions) {
    let endpoint = Endpoint::default();
    let base = endpoint.start().await;
    let state = state(&connect, Isolation::Rls, &[("HOOKS", &settings(&base, "/deny"))]).await;
    let app = TestApp::new(&state);

    let (_cookie, answer) = app.visitor(SET_BUDGET).await;
    assert!(answer.named("confirm_request").is_empty(), "{}", answer.body);
    let result = &answer.named("tool_result")[0];
    assert_eq!(result["name"], "set_budget");
    assert!(
        result["summary"]
            .as_str()
            .unwrap()
            .contains("budgets are set by the treasurer"),
        "{result}"
    );
    assert_eq!(budgets(&state).await, 0);
    let asked = endpoint.seen("/deny");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["tool_name"], "set_budget");
    assert_eq!(asked[0]["hook_event_name"], "PreToolUse");
    assert_eq!(asked[0]["session_id"], turn_end(&answer)["conversation_id"]);
    assert!(endpoint.seen("/post").is_empty(), "a refused call never ran");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_hooks_allow_still_asks_the_person_and_post_tool_use_sees_the_confirmed_write(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let endpoint = Endpoint::default();
    let base = endpoint.start().await;
    let state = state(&connect, Isolation::Rls, &[("HOOKS", &settings(&base, "/allow"))]).await;
    let app = TestApp::new(&state);

    let (cookie, asked) = app.visitor(SET_BUDGET).await;
    let requests = asked.named("confirm_request");
    assert_eq!(requests.len(), 1, "the person is still asked: {}", asked.body);
    assert_eq!(budgets(&state).await, 0);
    let decisions = [(requests[0]["id"].clone(), true)];
    let confirmed = app
        .confirm(Some(&cookie), &requests[0]["suspended_turn_id"], &decisions)
        .await;
    assert_eq!(confirmed.status, axum::http::StatusCode::OK, "{}", confirmed.body);
    assert_eq!(budgets(&state).await, 1);

    let post = endpoint.seen("/post");
    assert_eq!(post.len(), 1, "the confirmed write reached PostToolUse");
    assert_eq!(post[0]["tool_name"], "set_budget");
    assert_eq!(post[0]["tool_response"]["is_error"], false);
    // The note is in the result the model read, kept with the conversation.
    let conversation = turn_end(&asked)["conversation_id"].as_str().unwrap().to_owned();
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT message::text FROM conversation_messages WHERE conversation_id = $1::uuid ORDER BY seq",
    )
    .bind(&conversation)
    .fetch_all(state.owner_pool.get())
    .await
    .unwrap();
    assert!(
        stored
            .iter()
            .any(|m| m.contains("[the treasurer was told of this budget]")),
        "{stored:?}"
    );
}

#[tokio::test]
async fn a_command_hook_is_refused_where_there_is_no_shell() {
    let vars = [
        ("DATABASE_URL", "postgres://unused"),
        ("JWT_SECRET", support::JWT_SECRET),
        ("RATE_LIMIT_SALT", "salt"),
        ("SITE_URL", support::SITE),
        (
            "HOOKS",
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let config = Config::from_vars(vars).expect("configuration");
    let pool = PgPoolOptions::new()
        .connect_lazy("postgres://unused@127.0.0.1:9/x")
        .unwrap();
    let pools = kakeibo_api::state::Pools {
        app: pool.clone(),
        owner: kakeibo_ledger::OwnerRolePool::new(pool),
    };
    let err = State::with_pools(config, pools).expect_err("refused").to_string();
    assert!(err.contains("HOOKS") && err.contains("shell command"), "{err}");
}
