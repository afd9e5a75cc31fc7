//! The local server's other half: the built web app for every path outside `/api/`, client
//! routes falling back to `index.html`, and a plain answer when the app is not built.

use std::{collections::BTreeMap, sync::Arc};

use axum::{body::Body, http::Request};
use kakeibo_api::{Config, State, state::Pools};
use kakeibo_ledger::OwnerRolePool;
use tower::ServiceExt;

/// A state whose pools never connect (these routes touch no database).
fn state() -> Arc<State> {
    let vars: BTreeMap<String, String> = [
        ("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none"),
        ("JWT_SECRET", "test-only-secret-0123456789abcdef0123456789"),
        ("RATE_LIMIT_SALT", "salt"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let pool = kakeibo_ledger::connect("postgres://nobody@127.0.0.1:1/none", 1).unwrap();
    let pools = Pools {
        app: pool.clone(),
        owner: OwnerRolePool::new(pool),
    };
    Arc::new(State::with_pools(Config::from_vars(vars).unwrap(), pools).unwrap())
}

async fn get(app: &axum::Router, path: &str) -> (u16, String) {
    let response = app
        .clone()
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn the_built_app_is_served_and_client_routes_fall_back_to_index() {
    let dist = tempfile::tempdir().unwrap();
    std::fs::write(
        dist.path().join("index.html"),
        "<!doctype html><title>kakeibo</title>",
    )
    .unwrap();
    std::fs::create_dir(dist.path().join("assets")).unwrap();
    std::fs::write(dist.path().join("assets/app.js"), "console.log('kakeibo')").unwrap();
    let app = kakeibo_devserver::app(state(), Some(dist.path()));
    assert_eq!(
        get(&app, "/").await,
        (200, "<!doctype html><title>kakeibo</title>".into())
    );
    assert_eq!(
        get(&app, "/runs/123").await.1,
        "<!doctype html><title>kakeibo</title>"
    );
    assert_eq!(
        get(&app, "/assets/app.js").await,
        (200, "console.log('kakeibo')".into())
    );
    let (status, body) = get(&app, "/api/no-such-route").await;
    assert_eq!(
        (status, body.as_str()),
        (404, r#"{"error":"not found"}"#),
        "API paths never fall back to the app"
    );
}

#[tokio::test]
async fn without_a_built_app_the_answer_says_so() {
    let app = kakeibo_devserver::app(state(), Some(std::path::Path::new("/nonexistent")));
    let (status, body) = get(&app, "/").await;
    assert_eq!(status, 404);
    assert!(body.contains("web app is not built"), "{body}");
}
