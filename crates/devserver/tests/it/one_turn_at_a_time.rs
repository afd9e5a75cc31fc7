//! One turn per conversation at a time, over HTTP: a message to a conversation whose turn waits
//! for a confirmation is a `409` with its reason, charged nothing; decisions must name each
//! pending write exactly once (contradicting decisions for one write applied it, before).

use crate::support;

use axum::http::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_conversation_waiting_for_a_confirmation_takes_no_other_message(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, asked) = app.visitor("set a ₹20,000 monthly budget for groceries").await;
    let request = asked.named("confirm_request").remove(0);
    let conversation = asked.named("turn_end")[0]["conversation_id"].clone();
    let used = || async { app.get("/api/session", Some(&cookie)).await.json()["messages"]["used"].clone() };
    assert_eq!(used().await, 1);

    let again = app
        .post(
            "/api/chat",
            json!({"message": "and dining?", "conversation_id": conversation}),
            Some(&cookie),
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    assert_eq!(again.json()["reason"], "awaiting_confirm");
    assert!(
        again.json()["error"]
            .as_str()
            .unwrap()
            .contains("allow or decline")
    );
    assert_eq!(used().await, 1, "the refused message was not counted");

    // Contradicting decisions for the one write, or none for it, or one for a write that is not
    // there: each a 400, and nothing runs.
    let suspended = &request["suspended_turn_id"];
    let id = &request["id"];
    let budgets = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM budgets")
            .fetch_one(state.owner_pool.get())
            .await
            .unwrap()
    };
    for decisions in [
        vec![(id.clone(), false), (id.clone(), true)],
        vec![],
        vec![(id.clone(), true), (json!("call_9_set_budget"), true)],
    ] {
        let refused = app.confirm(Some(&cookie), suspended, &decisions).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{decisions:?}: {}",
            refused.body
        );
        assert!(refused.json()["error"].as_str().is_some());
        assert_eq!(budgets().await, 0, "{decisions:?} ran the write");
    }

    // Decided once, the write runs once; then the conversation takes messages again.
    let allowed = app.confirm(Some(&cookie), suspended, &[(id.clone(), true)]).await;
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.body);
    assert_eq!(budgets().await, 1);
    let next = app
        .post(
            "/api/chat",
            json!({"message": "and dining?", "conversation_id": conversation}),
            Some(&cookie),
        )
        .await;
    assert_eq!(next.status, StatusCode::OK, "{}", next.body);
    assert_eq!(used().await, 2);
}
