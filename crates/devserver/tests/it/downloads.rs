//! "Download my data" (`GET /api/export`): a zip of the journal, the Beancount file, the CSV and
//! the JSON of the visitor's ledger; a session is needed; the daily export quota refuses the
//! download past it with `429`, the sentence and when it renews.

use crate::{isolation::unzip, support};

use axum::http::StatusCode;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_visitor_downloads_their_data_up_to_the_daily_quota(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[("DAILY_EXPORT_QUOTA", "2")]).await;
    let app = TestApp::new(&state);
    let nobody = app.get("/api/export", None).await;
    assert_eq!(nobody.status, StatusCode::UNAUTHORIZED, "{}", nobody.body);

    let (cookie, _) = app.visitor("how much did I spend").await;
    let answer = app.get("/api/export", Some(&cookie)).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let disposition = answer.headers["content-disposition"].to_str().unwrap();
    assert!(
        disposition.starts_with("attachment; filename=\"kakeibo-") && disposition.ends_with(".zip\""),
        "{disposition}"
    );
    assert_eq!(answer.headers["cache-control"], "no-store");
    let files = unzip(&answer.bytes);
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        [
            "kakeibo.beancount",
            "kakeibo.csv",
            "kakeibo.journal",
            "kakeibo.json"
        ]
    );
    // The demo ledger the pages show, in each file.
    assert_eq!(
        files["kakeibo.journal"].matches("\n    ; kakeibo-id: ").count(),
        352
    );
    assert_eq!(
        files["kakeibo.beancount"].matches("\n  kakeibo-id: ").count(),
        352
    );
    assert!(files["kakeibo.csv"].starts_with("date,transaction_id,posting_id,"));
    assert_eq!(files["kakeibo.csv"].lines().count(), 1 + 704);
    let export: kakeibo_export::model::Export = serde_json::from_str(&files["kakeibo.json"]).unwrap();
    assert_eq!(export.transactions.len(), 352);
    assert!(!export.conversations.is_empty() && !export.runs.is_empty());

    let second = app.get("/api/export", Some(&cookie)).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    let third = app.get("/api/export", Some(&cookie)).await;
    assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS, "{}", third.body);
    assert!(
        third.json()["error"]
            .as_str()
            .unwrap()
            .contains("downloaded your data 2 times today"),
        "{}",
        third.body
    );
    let retry: i64 = third.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&retry), "{retry}");
    // Another visitor has their own quota.
    let (other, _) = app.visitor("how much did I spend").await;
    assert_eq!(app.get("/api/export", Some(&other)).await.status, StatusCode::OK);
}
