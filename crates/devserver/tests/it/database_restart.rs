//! The database going away under a running function, as a restart does to it: every open
//! connection is ended by the server. Requests that meet a cut connection answer `503
//! {reason: database_unavailable}` with `Retry-After` (never `500`), and the same process — the
//! same `State`, no restart — answers again within seconds, chats included.

use crate::support;

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use sqlx::{
    Connection, PgConnection,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use support::{Isolation, TestApp, state};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn cut_connections_are_503_and_the_same_process_answers_again(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    // Both pools as the owner role, which may end its own role's connections (ending app_user's
    // would take a superuser the suite does not hold); a restart ends every role's alike.
    let state = state(&connect, Isolation::OwnerRole, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("how much did I spend").await;
    for _ in 0..3 {
        assert_eq!(app.runs(Some(&cookie)).await.status, StatusCode::OK);
    }

    // What a restart does to the function's open connections, again and again while requests
    // run: the server ends each one, idle or in the middle of a query.
    let killer = tokio::spawn(async move {
        let mut admin = PgConnection::connect_with(&connect).await.unwrap();
        let mut ended = 0usize;
        let until = Instant::now() + Duration::from_millis(1500);
        while Instant::now() < until {
            let killed: Vec<bool> = sqlx::query_scalar(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid() AND usename = current_user",
            )
            .fetch_all(&mut admin)
            .await
            .unwrap();
            ended += killed.len();
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        ended
    });
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    while !killer.is_finished() {
        for answer in [
            app.runs(Some(&cookie)).await,
            app.dashboard(Some(&cookie)).await,
            app.chat(Some(&cookie), "how much did I spend").await,
        ] {
            match answer.status {
                StatusCode::OK => {}
                StatusCode::SERVICE_UNAVAILABLE => {
                    assert_eq!(answer.json()["reason"], "database_unavailable", "{}", answer.body);
                    assert!(answer.headers.contains_key("retry-after"));
                }
                other => panic!("a cut connection answered {other}: {}", answer.body),
            }
            *statuses.entry(answer.status.as_u16()).or_default() += 1;
        }
    }
    let ended = killer.await.unwrap();

    // The database is back: the same process answers, without a restart.
    let started = Instant::now();
    let mut answered_in_a_row = 0;
    while answered_in_a_row < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "not answering again after 10 s"
        );
        let answer = app.runs(Some(&cookie)).await;
        answered_in_a_row = if answer.status == StatusCode::OK {
            answered_in_a_row + 1
        } else {
            0
        };
    }
    println!(
        "{ended} connections ended under load; answers by status {statuses:?}; answering again after {:?}",
        started.elapsed()
    );
    assert!(ended > 0, "no connection was ended");
    assert!(
        statuses.contains_key(&503),
        "no request met a cut connection: {statuses:?}"
    );
    let chat = app.chat(Some(&cookie), "how much did I spend").await;
    assert_eq!(chat.status, StatusCode::OK, "{}", chat.body);
    assert!(chat.body.contains("turn_end"), "{}", chat.body);
}
