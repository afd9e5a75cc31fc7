//! Races through real HTTP: many requests at once must neither slip past a quota nor run a
//! confirmed write twice.

use crate::support;

use chrono::Utc;
use kakeibo_auth::visitors;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, http_client, post, serve, sse_events, state};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn two_hundred_messages_at_once_admit_exactly_eight(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let visitor = visitors::create_anonymous(&state.owner_pool).await.unwrap();
    let token = state
        .sessions
        .issue(visitor.owner(), visitor.session_epoch, Utc::now())
        .unwrap();
    let cookie = format!("__Host-kakeibo_session={token}");
    let base = serve(TestApp::new(&state).router()).await;
    let client = http_client();

    let attempts = (0..200).map(|i| {
        let (client, url, cookie) = (client.clone(), format!("{base}/api/chat"), cookie.clone());
        tokio::spawn(async move {
            post(
                &client,
                &url,
                &json!({"message": format!("hello {i}")}),
                Some(&cookie),
            )
            .await
        })
    });
    let mut admitted = 0;
    let mut refused = 0;
    for attempt in attempts {
        let (status, body, _) = attempt.await.unwrap();
        match status {
            200 => {
                assert!(body.contains("event: turn_end"), "{body}");
                admitted += 1;
            }
            503 => {
                let v: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(v["reason"], "owner_quota", "{body}");
                refused += 1;
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!((admitted, refused), (8, 192));
    let counted: i32 = sqlx::query_scalar("SELECT count FROM owner_daily_messages WHERE owner_id = $1")
        .bind(visitor.id)
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(counted, 8);
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_runs WHERE owner_id = $1")
        .bind(visitor.id)
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(runs, 8, "one run per admitted message");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_hundred_confirms_at_once_stream_once_and_write_once(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let base = serve(TestApp::new(&state).router()).await;
    let client = http_client();
    let (status, body, cookie) = post(
        &client,
        &format!("{base}/api/chat"),
        &json!({"message": "set a budget"}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let cookie = cookie.expect("a session");
    let pending = sse_events(&body)
        .into_iter()
        .find(|(e, _)| e == "confirm_request")
        .unwrap()
        .1;
    let confirm = json!({"suspended_turn_id": pending["suspended_turn_id"], "decisions": [{"id": pending["id"], "allowed": true}]});

    let attempts = (0..100).map(|_| {
        let (client, url, cookie, body) = (
            client.clone(),
            format!("{base}/api/confirm"),
            cookie.clone(),
            confirm.clone(),
        );
        tokio::spawn(async move { post(&client, &url, &body, Some(&cookie)).await })
    });
    let mut streams = Vec::new();
    let mut lost = std::collections::BTreeMap::<u16, usize>::new();
    for attempt in attempts {
        let (status, body, _) = attempt.await.unwrap();
        if status == 200 {
            streams.push(body);
        } else {
            assert!(status == 409 || status == 410, "unexpected {status}: {body}");
            *lost.entry(status).or_default() += 1;
        }
    }
    assert_eq!(streams.len(), 1, "exactly one stream; the others: {lost:?}");
    let end = sse_events(&streams[0])
        .into_iter()
        .find(|(e, _)| e == "turn_end")
        .unwrap()
        .1;
    assert_eq!(end["status"], "ok", "{}", streams[0]);
    assert_eq!(lost.values().sum::<usize>(), 99);

    let budgets: i64 =
        sqlx::query_scalar("SELECT count(*) FROM budgets WHERE month = '2025-06' AND amount_minor = 800000")
            .fetch_one(state.owner_pool.get())
            .await
            .unwrap();
    assert_eq!(budgets, 1);
    let applied: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM trace_events WHERE run_id = $1::uuid AND type = 'tool_call' AND (payload->>'confirmed')::boolean",
    )
    .bind(end["run_id"].as_str().unwrap())
    .fetch_one(state.owner_pool.get())
    .await
    .unwrap();
    assert_eq!(applied, 1, "the write ran once");
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM suspended_turns")
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(left, 0);
}
