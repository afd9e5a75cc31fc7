//! Settings hooks run for real: shell commands through `sh`, endpoints over HTTP on a local port.
//! Each event, each handler kind, and each way a handler can fail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

use std::{
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, extract::State, http::HeaderMap, routing::post};
use kakeibo_core::{
    PendingWrite, Tier, ToolUse,
    hooks::{Hooks, PreToolUse, Verdict},
};
use kakeibo_hooks::{HookSettings, SettingsHooks};
use serde_json::{Value, json};

const SESSION: &str = "conversation-1";

fn hooks(dir: &Path, settings: &Value) -> SettingsHooks {
    let settings = HookSettings::from_json(&settings.to_string()).expect("valid settings");
    SettingsHooks::new(settings, dir.to_path_buf())
}

fn command(event: &str, matcher: &str, commands: &[&str]) -> Value {
    let handlers: Vec<Value> = commands
        .iter()
        .map(|c| json!({"type": "command", "command": c, "timeout": 2}))
        .collect();
    json!({"hooks": {event: [{"matcher": matcher, "hooks": handlers}]}})
}

fn budget_call() -> ToolUse {
    ToolUse {
        id: "call-1".into(),
        name: "set_budget".into(),
        input: json!({"category": "Groceries", "amount_minor": 40000}),
    }
}

fn write() -> PendingWrite {
    PendingWrite {
        id: "call-1".into(),
        tool: "set_budget".into(),
        args: json!({"category": "Groceries", "amount_minor": 40000}),
        summary: "Set the Groceries budget to 400.00".into(),
    }
}

/// A guard against a hook this crate fails to time out: the test fails instead of hanging.
async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the hook call ended")
}

#[tokio::test]
async fn pre_tool_use_commands_block_rewrite_and_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let call = budget_call();

    // Exit 2 blocks, stderr the reason; the input reached stdin.
    let h = hooks(
        dir.path(),
        &command(
            "PreToolUse",
            "set_budget",
            &["cat > input.json; echo 'budgets are frozen' >&2; exit 2"],
        ),
    );
    let answer = bounded(h.pre_tool_use(SESSION, &call, Tier::Write)).await;
    assert_eq!(answer.verdict, Some(Verdict::Deny));
    assert_eq!(answer.reason.as_deref(), Some("budgets are frozen"));
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("input.json")).expect("input"))
            .expect("json input");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["session_id"], SESSION);
    assert_eq!(input["tool_name"], "set_budget");
    assert_eq!(input["tool_input"]["amount_minor"], 40000);
    assert_eq!(input["tool_use_id"], "call-1");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["cwd"], dir.path().display().to_string());

    // The matcher: a hook on set_budget does not run for a read.
    let read = ToolUse {
        name: "spend_by_category".into(),
        ..budget_call()
    };
    assert_eq!(
        bounded(h.pre_tool_use(SESSION, &read, Tier::Read)).await.verdict,
        None
    );

    // A rewrite is what the next hook sees; of allow then ask, ask stands.
    let rewrite = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"category": "Groceries", "amount_minor": 30000}}}'"#;
    let ask = r#"cat > second.json; echo '{"hookSpecificOutput": {"permissionDecision": "ask"}}'"#;
    let h = hooks(dir.path(), &command("PreToolUse", "set_.*", &[rewrite, ask]));
    let answer = bounded(h.pre_tool_use(SESSION, &call, Tier::Write)).await;
    assert_eq!(answer.verdict, Some(Verdict::Ask));
    assert_eq!(
        answer.updated_input,
        Some(json!({"category": "Groceries", "amount_minor": 30000}))
    );
    let second: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("second.json")).expect("second"))
            .expect("json");
    assert_eq!(second["tool_input"]["amount_minor"], 30000);

    // A JSON deny ends the list: the hook after it never runs.
    let deny = r#"echo '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "not on Sundays"}}'"#;
    let h = hooks(
        dir.path(),
        &command("PreToolUse", "", &[deny, "touch ran-after-deny"]),
    );
    let answer = bounded(h.pre_tool_use(SESSION, &call, Tier::Write)).await;
    assert_eq!(answer.verdict, Some(Verdict::Deny));
    assert_eq!(answer.reason.as_deref(), Some("not on Sundays"));
    assert!(!dir.path().join("ran-after-deny").exists());

    // continue: false asks the run to stop after the call.
    let stop = r#"echo '{"continue": false, "stopReason": "end of the day"}'"#;
    let h = hooks(dir.path(), &command("PreToolUse", "*", &[stop]));
    let answer = bounded(h.pre_tool_use(SESSION, &call, Tier::Write)).await;
    assert_eq!(answer.stop.as_deref(), Some("end of the day"));
    assert_eq!(answer.verdict, None);
}

#[tokio::test]
async fn a_command_that_crashes_hangs_or_prints_garbage_says_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let call = budget_call();
    for broken in [
        "exit 1",
        "kill -9 $$",
        "sleep 20",
        "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow-ish\"}}'",
        "echo '{\"decision\": 7}'",
        "echo '{oops'",
        "head -c 3000000 /dev/zero | tr '\\0' 'x'",
        "/nonexistent/hook",
    ] {
        // Each broken hook after a deny-free strict one: the decision stays where the first put it.
        let ask = r#"echo '{"hookSpecificOutput": {"permissionDecision": "ask"}}'"#;
        let settings = json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": ask},
            {"type": "command", "command": broken, "timeout": 0.5},
        ]}]}});
        let h = hooks(dir.path(), &settings);
        let answer = bounded(h.pre_tool_use(SESSION, &call, Tier::Write)).await;
        assert_eq!(answer.verdict, Some(Verdict::Ask), "{broken}");
        assert_eq!(answer.updated_input, None, "{broken}");
        // Alone it says nothing at all: no verdict a stricter one could hide.
        let h = hooks(dir.path(), &command("PreToolUse", "", &[broken]));
        let alone = bounded(h.pre_tool_use(SESSION, &call, Tier::Write)).await;
        assert_eq!(alone, PreToolUse::default(), "{broken}");

        let h = hooks(dir.path(), &command("PermissionRequest", "", &[broken]));
        assert_eq!(
            bounded(h.permission_request(SESSION, &write())).await,
            None,
            "{broken}"
        );
        let h = hooks(dir.path(), &command("Stop", "", &[broken]));
        assert_eq!(bounded(h.stop(SESSION, "done", false)).await, None, "{broken}");
    }
}

#[tokio::test]
async fn permission_requests_post_tool_use_stop_prompt_and_session_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let call = budget_call();

    let allow = r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'"#;
    let deny = r#"echo '{"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "no"}}}'"#;
    let h = hooks(dir.path(), &command("PermissionRequest", "set_budget", &[allow]));
    assert_eq!(bounded(h.permission_request(SESSION, &write())).await, Some(true));
    let h = hooks(
        dir.path(),
        &command("PermissionRequest", "set_budget", &[allow, deny]),
    );
    assert_eq!(
        bounded(h.permission_request(SESSION, &write())).await,
        Some(false)
    );
    let h = hooks(dir.path(), &command("PermissionRequest", "", &["exit 2"]));
    assert_eq!(
        bounded(h.permission_request(SESSION, &write())).await,
        Some(false)
    );

    let context = r#"cat > post.json; echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "the budget was logged"}}'"#;
    let h = hooks(
        dir.path(),
        &command(
            "PostToolUse",
            "set_budget",
            &[context, "echo 'audit: over limit' >&2; exit 2"],
        ),
    );
    let post = bounded(h.post_tool_use(SESSION, &call, "Budget set.", false)).await;
    assert_eq!(
        post.notes,
        vec!["the budget was logged".to_owned(), "audit: over limit".to_owned()]
    );
    assert_eq!(post.stop, None);
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("post.json")).expect("post"))
            .expect("json");
    assert_eq!(
        input["tool_response"],
        json!({"content": "Budget set.", "is_error": false})
    );
    let h = hooks(
        dir.path(),
        &command("PostToolUse", "", &[r#"echo '{"continue": false}'"#]),
    );
    let post = bounded(h.post_tool_use(SESSION, &call, "Budget set.", false)).await;
    assert_eq!(post.stop.as_deref(), Some("a hook asked to stop"));

    let h = hooks(
        dir.path(),
        &command(
            "Stop",
            "",
            &["cat > stop.json; echo 'also check the utilities budget' >&2; exit 2"],
        ),
    );
    assert_eq!(
        bounded(h.stop(SESSION, "Groceries is under budget.", true))
            .await
            .as_deref(),
        Some("also check the utilities budget")
    );
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("stop.json")).expect("stop"))
            .expect("json");
    assert_eq!(input["stop_hook_active"], true);
    assert_eq!(input["last_assistant_message"], "Groceries is under budget.");
    let h = hooks(
        dir.path(),
        &command(
            "Stop",
            "",
            &[r#"echo '{"decision": "block", "reason": "go on"}'"#],
        ),
    );
    assert_eq!(
        bounded(h.stop(SESSION, "x", false)).await.as_deref(),
        Some("go on")
    );

    let h = hooks(
        dir.path(),
        &command("UserPromptSubmit", "", &["echo 'Today is payday.'"]),
    );
    let submit = bounded(h.user_prompt_submit(SESSION, "how much can I spend?")).await;
    assert_eq!(submit.notes, vec!["Today is payday.".to_owned()]);
    assert_eq!(submit.block, None);
    let h = hooks(
        dir.path(),
        &command(
            "UserPromptSubmit",
            "",
            &["grep -q password && { echo 'no secrets here' >&2; exit 2; }; exit 0"],
        ),
    );
    assert_eq!(
        bounded(h.user_prompt_submit(SESSION, "my password is hunter2"))
            .await
            .block
            .as_deref(),
        Some("no secrets here")
    );
    assert_eq!(bounded(h.user_prompt_submit(SESSION, "hello")).await.block, None);
    let h = hooks(
        dir.path(),
        &command(
            "UserPromptSubmit",
            "",
            &[r#"echo '{"decision": "block", "reason": "closed today"}'"#],
        ),
    );
    assert_eq!(
        bounded(h.user_prompt_submit(SESSION, "hello"))
            .await
            .block
            .as_deref(),
        Some("closed today")
    );

    let start = r#"cat > start.json; echo '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "The household has two adults."}}'"#;
    let h = hooks(
        dir.path(),
        &command("SessionStart", "", &[start, "echo 'Currency: EUR'", "exit 2"]),
    );
    assert_eq!(
        bounded(h.session_start(SESSION)).await,
        vec![
            "The household has two adults.".to_owned(),
            "Currency: EUR".to_owned()
        ]
    );
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("start.json")).expect("start"))
            .expect("json");
    assert_eq!(input["source"], "startup");
}

/// A local endpoint that answers by path and keeps what it was sent.
/// A request the endpoint saw: its path, its JSON body and its `Authorization` header.
type Seen = (String, Value, Option<String>);

#[derive(Clone, Default)]
struct Endpoint {
    seen: Arc<Mutex<Vec<Seen>>>,
}

async fn serve(endpoint: Endpoint) -> String {
    async fn answer(
        State(endpoint): State<Endpoint>,
        uri: axum::http::Uri,
        headers: HeaderMap,
        body: String,
    ) -> (axum::http::StatusCode, String) {
        let path = uri.path().to_owned();
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let input: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        endpoint
            .seen
            .lock()
            .expect("lock")
            .push((path.clone(), input, auth));
        let ok = axum::http::StatusCode::OK;
        match path.as_str() {
            "/deny" => (
                ok,
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                        "permissionDecisionReason": "the endpoint says no"}})
                .to_string(),
            ),
            "/allow" => (
                ok,
                json!({"hookSpecificOutput": {"permissionDecision": "allow"}}).to_string(),
            ),
            "/context" => (
                ok,
                json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "from the endpoint"}})
                    .to_string(),
            ),
            "/empty" => (ok, String::new()),
            "/text" => (ok, "allow".to_owned()),
            "/slow" => {
                tokio::time::sleep(Duration::from_secs(10)).await;
                (ok, json!({"hookSpecificOutput": {"permissionDecision": "allow"}}).to_string())
            }
            _ => (
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                json!({"hookSpecificOutput": {"permissionDecision": "allow"}}).to_string(),
            ),
        }
    }
    let app = Router::new().fallback(post(answer)).with_state(endpoint);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

#[tokio::test]
async fn http_hooks_answer_like_commands_and_fail_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let endpoint = Endpoint::default();
    let base = serve(endpoint.clone()).await;
    let call = budget_call();
    let http = |path: &str| {
        json!({"type": "http", "url": format!("{base}{path}"), "timeout": 0.5,
               "headers": {"Authorization": "Bearer $PATH_TOKEN_UNLISTED"}})
    };

    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "set_budget", "hooks": [http("/allow"), http("/deny")]}]}});
    let answer = bounded(hooks(dir.path(), &settings).pre_tool_use(SESSION, &call, Tier::Write)).await;
    assert_eq!(answer.verdict, Some(Verdict::Deny));
    assert_eq!(answer.reason.as_deref(), Some("the endpoint says no"));
    {
        let seen = endpoint.seen.lock().expect("lock");
        let (path, input, auth) = seen.last().expect("a request");
        assert_eq!(path, "/deny");
        assert_eq!(input["tool_name"], "set_budget");
        assert_eq!(input["session_id"], SESSION);
        // An unlisted variable is never sent.
        assert_eq!(auth.as_deref().map(str::trim), Some("Bearer"));
    }

    // A 500, a timeout, an empty body and a body that is not JSON say nothing: the ask stands.
    for broken in ["/fail", "/slow", "/empty", "/text"] {
        let ask = json!({"type": "command", "command": r#"echo '{"hookSpecificOutput": {"permissionDecision": "ask"}}'"#});
        let settings = json!({"hooks": {"PreToolUse": [{"hooks": [ask, http(broken)]}]}});
        let answer = bounded(hooks(dir.path(), &settings).pre_tool_use(SESSION, &call, Tier::Write)).await;
        assert_eq!(answer.verdict, Some(Verdict::Ask), "{broken}");
        // Alone: nothing said (the 500 and the slow answer carry an allow that must not count).
        let settings = json!({"hooks": {"PreToolUse": [{"hooks": [http(broken)]}]}});
        let alone = bounded(hooks(dir.path(), &settings).pre_tool_use(SESSION, &call, Tier::Write)).await;
        assert_eq!(alone, PreToolUse::default(), "{broken}");
    }
    // Nobody listening: nothing said either.
    let settings = json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/h", "timeout": 1}]}]}});
    let answer = bounded(hooks(dir.path(), &settings).pre_tool_use(SESSION, &call, Tier::Write)).await;
    assert_eq!(answer.verdict, None);

    let settings = json!({"hooks": {"UserPromptSubmit": [{"hooks": [http("/context")]}]}});
    let submit = bounded(hooks(dir.path(), &settings).user_prompt_submit(SESSION, "hi")).await;
    assert_eq!(submit.notes, vec!["from the endpoint".to_owned()]);
}
