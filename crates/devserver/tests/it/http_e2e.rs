//! End to end over HTTP: the real `kakeibo-dev` process on the per-test database, with the
//! scripted model (`KAKEIBO_PROVIDER=script:…`): chat → `confirm_request` → confirm allow →
//! `turn_end`; the budget exists once; `/api/runs/{id}` shows the one run with its confirm.

use crate::support;

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

use serde_json::{Value, json};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use support::{http_client, post, sse_events};

/// `url` pointing at `database` instead.
fn on_database(url: &str, database: &str) -> String {
    let (base, _) = url.split_once('?').unwrap_or((url, ""));
    let (server, _) = base.rsplit_once('/').expect("a database URL");
    format!("{server}/{database}")
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn chat_confirm_and_the_trace_over_http(_: PgPoolOptions, connect: PgConnectOptions) {
    let database = connect.get_database().unwrap().to_owned();
    let owner_url = on_database(&std::env::var("DATABASE_URL").unwrap(), &database);
    let app_url = on_database(&std::env::var("APP_DATABASE_URL").unwrap(), &database);
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let server = Server(
        Command::new(env!("CARGO_BIN_EXE_kakeibo-dev"))
            .args([
                "--addr",
                &format!("127.0.0.1:{port}"),
                "--web-dist",
                "/nonexistent",
            ])
            .env("DATABASE_URL", &owner_url)
            .env("APP_DATABASE_URL", &app_url)
            .env("KAKEIBO_PROVIDER", support::demo_script())
            .env("SITE_URL", support::SITE)
            .env_remove("GEMINI_API_KEY")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("kakeibo-dev starts"),
    );
    let client = http_client();
    let mut ready = false;
    for _ in 0..100 {
        if client.get(format!("{base}/api/session")).send().await.is_ok() {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "kakeibo-dev did not answer on {base}");

    let (status, body, cookie) = post(
        &client,
        &format!("{base}/api/chat"),
        &json!({"message": "set a dining budget"}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let cookie = cookie.expect("a session cookie");
    let events = sse_events(&body);
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        names,
        ["token", "tool_call", "confirm_request", "turn_end"],
        "{body}"
    );
    let pending = &events[2].1;
    assert_eq!(pending["tool"], "set_budget");

    let confirm = json!({"suspended_turn_id": pending["suspended_turn_id"], "decisions": [{"id": pending["id"], "allowed": true}]});
    let (status, body, _) = post(&client, &format!("{base}/api/confirm"), &confirm, Some(&cookie)).await;
    assert_eq!(status, 200, "{body}");
    let end = sse_events(&body)
        .into_iter()
        .find(|(e, _)| e == "turn_end")
        .unwrap()
        .1;
    assert_eq!(end["status"], "ok");

    let pool: PgPool = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(connect)
        .await
        .unwrap();
    let budgets: i64 = sqlx::query_scalar("SELECT count(*) FROM budgets WHERE month = '2025-06'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(budgets, 1, "the budget row exists once");

    let run_id = end["run_id"].as_str().unwrap();
    let listed: Value = client
        .get(format!("{base}/api/runs"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["runs"].as_array().unwrap().len(), 1, "{listed}");
    let run: Value = client
        .get(format!("{base}/api/runs/{run_id}"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(run["status"], "ok");
    let confirms: Vec<&Value> = run["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "confirm")
        .collect();
    assert_eq!(confirms.len(), 2, "the suspension and the decision: {run}");
    assert_eq!(confirms[0]["payload"]["allowed"], Value::Null);
    assert_eq!(confirms[1]["payload"]["allowed"], true);
    drop(server);
}
