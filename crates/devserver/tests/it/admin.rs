//! The operator's door: `404` for everyone who is not an operator, the overview's panels, and
//! the two actions (pause live chat, block a visitor) taking effect at the quota gate.

use crate::support;

use axum::http::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn only_operators_see_the_admin_routes(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (anonymous, _) = app.visitor("hello").await;
    let (member, _) = app.visitor("hello").await;
    let member = app
        .post(
            "/api/session/sign-up",
            json!({"email": "member@example.com", "password": "a long enough password"}),
            Some(&member),
        )
        .await
        .session_cookie()
        .unwrap();
    // Signing up with an address on ADMIN_EMAILS makes no operator: only `kakeibo operator add`
    // does, so nobody takes the door by signing up before the operator.
    let (squatter, _) = app.visitor("hello").await;
    let squatter = app
        .post(
            "/api/session/sign-up",
            json!({"email": "ops@kakeibo.example", "password": "a long enough password"}),
            Some(&squatter),
        )
        .await
        .session_cookie()
        .unwrap();
    let forged = "__Host-kakeibo_session=eyJhbGciOiJub25lIn0.e30.".to_owned();
    for (who, cookie) in [
        ("no session", None),
        ("anonymous", Some(&anonymous)),
        ("signed in, not listed", Some(&member)),
        (
            "listed email, signed up, not an operator account",
            Some(&squatter),
        ),
        ("forged", Some(&forged)),
    ] {
        let overview = app.get("/api/admin/overview", cookie.map(String::as_str)).await;
        assert_eq!(overview.status, StatusCode::NOT_FOUND, "{who}: {}", overview.body);
        let action = app
            .post(
                "/api/admin/action",
                json!({"action": "pause_live_chat", "paused": true}),
                cookie.map(String::as_str),
            )
            .await;
        assert_eq!(action.status, StatusCode::NOT_FOUND, "{who}: {}", action.body);
        let session = app.get("/api/session", cookie.map(String::as_str)).await;
        assert_ne!(
            session.json()["visitor"]["operator"],
            json!(true),
            "{who}: the nav shows no operator's room"
        );
        assert_eq!(
            overview.body,
            app.get("/api/admin/nothing", cookie.map(String::as_str))
                .await
                .body,
            "{who}: indistinguishable from no route"
        );
    }
    let paused: Option<bool> =
        sqlx::query_scalar("SELECT value FROM operator_flags WHERE key = 'live_chat_paused'")
            .fetch_optional(state.owner_pool.get())
            .await
            .unwrap();
    assert_eq!(paused, None, "no action went through");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_operator_sees_the_panels_and_pauses_and_blocks(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    // The operator account is made out of band, then signed in to from a visit with a run.
    kakeibo_auth::visitors::make_operator(
        &state.owner_pool,
        "  OPS@kakeibo.example",
        "a long enough password",
    )
    .await
    .unwrap();
    let (operator, _) = app.visitor("set a budget").await;
    let operator = app
        .post(
            "/api/session/sign-in",
            json!({"email": "ops@kakeibo.example", "password": "a long enough password"}),
            Some(&operator),
        )
        .await
        .session_cookie()
        .unwrap();
    let (visitor_cookie, _) = app.visitor("how much did I spend").await;
    let session = app.get("/api/session", Some(&operator)).await;
    assert_eq!(
        session.json()["visitor"]["operator"],
        json!(true),
        "{}",
        session.body
    );

    let overview = app.get("/api/admin/overview", Some(&operator)).await;
    assert_eq!(overview.status, StatusCode::OK, "{}", overview.body);
    let o = overview.json();
    for panel in [
        "budget",
        "traffic",
        "health",
        "safety",
        "tools",
        "recent_runs",
        "users",
        "geo",
    ] {
        assert!(!o[panel].is_null(), "panel {panel}: {o}");
    }
    assert_eq!(
        o["evaluation"],
        json!({"running": false, "latest": null}),
        "no evaluation has run on this database"
    );
    assert_eq!(o["budget"]["daily_cap_micro_usd"], 667_000);
    assert!(o["health"]["by_status"].is_object(), "{}", o["health"]);
    assert!(o["safety"]["blocked_runs"].is_array(), "{}", o["safety"]);
    assert_eq!(o["budget"]["last_30_days"].as_array().unwrap().len(), 30);
    assert_eq!(o["budget"]["state"], "ok");
    assert_eq!(
        o["budget"]["in_flight_micro_usd"], 0,
        "every model call of the two turns settled"
    );
    // Calls in flight count against the cap: the panel trips as the gate does.
    let hold = |micro_usd: i64| {
        sqlx::query("UPDATE budget_days SET reserved_micro_usd = $1")
            .bind(micro_usd)
            .execute(state.owner_pool.get())
    };
    assert_eq!(hold(667_000).await.unwrap().rows_affected(), 1);
    let held = app.get("/api/admin/overview", Some(&operator)).await.json();
    assert_eq!(held["budget"]["state"], "tripped");
    assert_eq!(held["budget"]["in_flight_micro_usd"], 667_000);
    hold(0).await.unwrap();
    assert_eq!(o["traffic"]["active_today"], 2);
    assert_eq!(o["health"]["runs"], 2);
    assert_eq!(o["safety"]["writes_proposed"], 1, "{}", o["safety"]);
    assert_eq!(o["safety"]["writes_awaiting"], 1);
    assert_eq!(o["recent_runs"].as_array().unwrap().len(), 2);
    let users = o["users"].as_array().unwrap();
    assert_eq!(
        users.len(),
        4,
        "the operator, the visitor, the development owner and the evaluation owner"
    );
    assert!(
        users
            .iter()
            .any(|u| u["email"] == "ops@kakeibo.example" && u["messages_today"] == 1)
    );
    let tools: Vec<&str> = o["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["get_spend_report"], "only completed calls count");

    // The operator reads any visitor's trace; the visitor who made it reads it at their own route,
    // and nobody else reads it at either.
    let visitors_run = o["recent_runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["email"].is_null())
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = app
        .get(&format!("/api/admin/runs/{visitors_run}"), Some(&operator))
        .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.json()["id"], visitors_run.as_str());
    assert!(
        !read.json()["events"].as_array().unwrap().is_empty(),
        "{}",
        read.body
    );
    let own = app
        .get(&format!("/api/runs/{visitors_run}"), Some(&visitor_cookie))
        .await;
    assert_eq!(own.json()["events"], read.json()["events"], "the same trace");
    let theirs = app
        .get(&format!("/api/admin/runs/{visitors_run}"), Some(&visitor_cookie))
        .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{}", theirs.body);
    let unknown = app
        .get(
            &format!("/api/admin/runs/{}", uuid::Uuid::new_v4()),
            Some(&operator),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    // Pause: every visitor's chat is refused with `paused`; unpause lets it through.
    let pause = app
        .post(
            "/api/admin/action",
            json!({"action": "pause_live_chat", "paused": true}),
            Some(&operator),
        )
        .await;
    assert_eq!(pause.status, StatusCode::OK, "{}", pause.body);
    let refused = app.chat(Some(&visitor_cookie), "hello").await;
    assert_eq!(
        (refused.status, refused.json()["reason"].clone()),
        (StatusCode::SERVICE_UNAVAILABLE, json!("paused"))
    );
    assert_eq!(
        app.get("/api/admin/overview", Some(&operator)).await.json()["budget"]["state"],
        "paused"
    );
    app.post(
        "/api/admin/action",
        json!({"action": "pause_live_chat", "paused": false}),
        Some(&operator),
    )
    .await;
    assert_eq!(
        app.chat(Some(&visitor_cookie), "hello").await.status,
        StatusCode::OK
    );

    // Block one visitor.
    let visitor_id = state
        .sessions
        .verify(visitor_cookie.trim_start_matches("__Host-kakeibo_session="))
        .unwrap()
        .sub;
    let block = app
        .post(
            "/api/admin/action",
            json!({"action": "block_owner", "owner_id": visitor_id, "blocked": true}),
            Some(&operator),
        )
        .await;
    assert_eq!(block.status, StatusCode::OK, "{}", block.body);
    let refused = app.chat(Some(&visitor_cookie), "hello").await;
    assert_eq!(
        (refused.status, refused.json()["reason"].clone()),
        (StatusCode::SERVICE_UNAVAILABLE, json!("blocked"))
    );

    // Bad actions say what is wrong.
    for bad in [
        json!({"action": "shutdown"}),
        json!({"action": "block_owner", "owner_id": uuid::Uuid::new_v4(), "blocked": true}),
        json!({"action": "pause_live_chat"}),
    ] {
        let answer = app.post("/api/admin/action", bad.clone(), Some(&operator)).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{bad}: {}", answer.body);
    }
}

/// The operator starts an evaluation run; it runs in the local server like the eval function
/// would, and its report is what `GET /api/evals/latest` then answers. Nobody else can start one.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_operator_starts_an_evaluation_and_everyone_reads_its_report(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let script = format!(
        "script:{}",
        support::repo_root().join("fixtures/scripts/eval.yaml").display()
    );
    let state = state(&connect, Isolation::Rls, &[("KAKEIBO_PROVIDER", &script)]).await;
    let app = TestApp::new(&state);
    let before = app.get("/api/evals/latest", None).await;
    assert_eq!(before.status, StatusCode::NOT_FOUND);
    assert!(
        before.body.contains("no evaluation has run yet"),
        "{}",
        before.body
    );

    let (stranger, _) = app.visitor("hello").await;
    let start = json!({"action": "run_eval"});
    let refused = app
        .post("/api/admin/action", start.clone(), Some(&stranger))
        .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND, "{}", refused.body);

    let operator = app.operator(&state, Some(&stranger)).await;
    let started = app
        .post("/api/admin/action", start.clone(), Some(&operator))
        .await;
    assert_eq!(started.status, StatusCode::ACCEPTED, "{}", started.body);
    assert_eq!(started.json()["ok"], true);
    // One run at a time: a second start while the first runs is refused with its reason (the
    // database lock once the run holds it, this process's own flag before that).
    let again = app.post("/api/admin/action", start, Some(&operator)).await;
    assert_eq!(again.status, StatusCode::SERVICE_UNAVAILABLE, "{}", again.body);
    let reason = again.json()["reason"].clone();
    assert!(
        reason == "eval_running" || reason == "eval_start_failed",
        "{reason}"
    );

    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(2);
    let report = loop {
        let latest = app.get("/api/evals/latest", None).await;
        if latest.status == StatusCode::OK {
            break latest.json();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no report after two minutes"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(report["trigger"], "admin");
    assert_eq!(report["complete"], true);
    let tasks = kakeibo_evals::Suite::embedded().unwrap().tasks.len();
    assert_eq!(report["task_count"], tasks, "every task file ran");
    assert_eq!(report["model"], "script");
    assert_eq!(report["provider"], "script");
    let first = &report["results"][0];
    let task = kakeibo_evals::task::parse_all(kakeibo_evals::embedded::TASK_FILES.iter().copied())
        .unwrap()
        .into_iter()
        .find(|t| first["task"] == t.id.as_str())
        .unwrap();
    assert!(!task.description.is_empty());
    assert_eq!(first["description"], task.description.as_str());
    assert_eq!(report["injection"]["scenarios"].as_array().unwrap().len(), 6);
    // The overview says the run is over and which one was the latest.
    let overview = app.get("/api/admin/overview", Some(&operator)).await;
    assert_eq!(overview.status, StatusCode::OK, "{}", overview.body);
    let evaluation = &overview.json()["evaluation"];
    assert_eq!(evaluation["running"], false, "{evaluation}");
    assert_eq!(
        evaluation["latest"],
        json!({
            "finished_at": report["finished_at"],
            "model": "script",
            "passed": report["passed"],
            "task_count": tasks,
            "complete": true,
        })
    );
    // The run touched nobody's ledger but the evaluation owner's.
    let touched: i64 = sqlx::query_scalar(
        "SELECT count(DISTINCT owner_id) FROM budgets WHERE owner_id <> '00000000-0000-4000-8000-0000000000e1'",
    )
    .fetch_one(state.owner_pool.get())
    .await
    .unwrap();
    assert_eq!(touched, 0);
}
