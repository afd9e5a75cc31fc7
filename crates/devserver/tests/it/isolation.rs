//! Two visitors, kept apart twice: the suite runs once with `app_user` (row-level security
//! enforcing, our filters too) and once as the owner role (RLS bypassed — the only run that
//! tests our own owner filters). Neither visitor can read, confirm, list or even detect the
//! other's conversations, runs, suspended turns, uploads or ledger: another visitor's id answers
//! exactly like an id that never existed.

use crate::support;

use axum::http::StatusCode;
use kakeibo_ledger::OwnerId;
use kakeibo_tools::{Scope, registry};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};
use uuid::Uuid;

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn visitors_are_isolated_under_row_level_security(_: PgPoolOptions, connect: PgConnectOptions) {
    suite(&connect, Isolation::Rls).await;
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn visitors_are_isolated_by_our_own_filters_as_the_owner_role(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    suite(&connect, Isolation::OwnerRole).await;
}

fn ids(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn suite(connect: &PgConnectOptions, isolation: Isolation) {
    let state = state(connect, isolation, &[]).await;
    let app = TestApp::new(&state);
    let mode = format!("{isolation:?}");

    // Visitor A: a suspended write, a finished turn, an upload.
    let (a, a_chat) = app.visitor("set a budget").await;
    let pending = a_chat
        .events()
        .into_iter()
        .find(|(e, _)| e == "confirm_request")
        .expect("A's write waits")
        .1;
    let a_suspended = pending["suspended_turn_id"].as_str().unwrap().to_owned();
    let a_end = support::turn_end(&a_chat);
    let a_conversation = a_end["conversation_id"].as_str().unwrap().to_owned();
    let a_run = a_end["run_id"].as_str().unwrap().to_owned();
    let upload = app
        .upload(
            &a,
            "a-statement.csv",
            b"Date,Description,Amount\n2025-06-02,Secret shop,-999\n",
        )
        .await;
    assert_eq!(upload.status, StatusCode::CREATED, "{}", upload.body);
    let a_upload = upload.json()["id"].as_str().unwrap().to_owned();

    // Visitor B.
    let (b, _) = app.visitor("how much did I spend").await;
    let world = World {
        state,
        app,
        mode,
        a,
        b,
        a_run,
        a_conversation,
        a_suspended,
        a_upload,
        pending,
    };
    reads_and_lists(&world).await;
    confirms(&world).await;
    ledgers_and_uploads(&world).await;
    figures(&world).await;
    downloads(&world).await;
}

/// The four files of a visitor's `GET /api/export`, read out of the zip.
pub fn unzip(bytes: &[u8]) -> std::collections::BTreeMap<String, String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).unwrap();
            let mut text = String::new();
            std::io::Read::read_to_string(&mut file, &mut text).unwrap();
            (file.name().unwrap().into_owned(), text)
        })
        .collect()
}

/// "Download my data" gives each visitor their own rows only: B's zip holds nothing of A's —
/// not A's conversation, run, budget or transactions.
async fn downloads(w: &World) {
    let World {
        state,
        app,
        mode,
        a,
        b,
        a_run,
        a_conversation,
        ..
    } = w;
    let (a, b) = (a.as_str(), b.as_str());
    let mut exports = Vec::new();
    for cookie in [a, b] {
        let answer = app.get("/api/export", Some(cookie)).await;
        assert_eq!(answer.status, StatusCode::OK, "{mode}: {}", answer.body);
        assert_eq!(answer.headers["content-type"], "application/zip", "{mode}");
        let files = unzip(&answer.bytes);
        let export: kakeibo_export::model::Export = serde_json::from_str(&files["kakeibo.json"]).unwrap();
        assert_eq!(export.owner, owner_of(state, cookie).as_uuid(), "{mode}");
        exports.push(export);
    }
    let (a_export, b_export) = (&exports[0], &exports[1]);
    assert!(
        a_export
            .conversations
            .iter()
            .any(|c| c.id.to_string() == *a_conversation),
        "{mode}"
    );
    assert!(a_export.runs.iter().any(|r| r.id.to_string() == *a_run), "{mode}");
    assert!(
        a_export.budgets.iter().any(|x| x.amount_minor == 800_000),
        "{mode}"
    );
    assert!(
        !b_export
            .conversations
            .iter()
            .any(|c| c.id.to_string() == *a_conversation),
        "{mode}"
    );
    assert!(
        !b_export.runs.iter().any(|r| r.id.to_string() == *a_run),
        "{mode}"
    );
    assert!(
        !b_export.budgets.iter().any(|x| x.amount_minor == 800_000),
        "{mode}"
    );
    assert!(!b_export.transactions.is_empty(), "{mode}");
    assert!(
        b_export
            .transactions
            .iter()
            .all(|t| a_export.transactions.iter().all(|other| other.id != t.id)),
        "{mode}: B's zip holds none of A's transactions"
    );
}

/// The rows behind a figure of A's answer are A's: B asking for them by A's run is answered as
/// for a run that never existed, and B's own figure lists B's rows only.
async fn figures(w: &World) {
    let World { app, mode, a, b, .. } = w;
    let (a, b) = (a.as_str(), b.as_str());
    let asked = app.chat(Some(a), "how much did I spend").await;
    let a_run = support::turn_end(&asked)["run_id"].as_str().unwrap().to_owned();
    let path = format!("/api/runs/{a_run}/figures/0");
    let own = app.get(&path, Some(a)).await;
    assert_eq!(own.status, StatusCode::OK, "{mode}: {}", own.body);
    let rows = &own.json()["sources"][0]["found"];
    assert!(rows["count"].as_i64().unwrap() > 0, "{mode}: {rows}");
    let theirs = app.get(&path, Some(b)).await;
    let nobodys = app
        .get(&format!("/api/runs/{}/figures/0", Uuid::new_v4()), Some(b))
        .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{mode}: {}", theirs.body);
    assert_eq!(
        (theirs.status, theirs.body),
        (nobodys.status, nobodys.body),
        "{mode}"
    );
    // A's transactions are not B's, even where their figures agree.
    let b_asked = app.chat(Some(b), "how much did I spend").await;
    let b_run = support::turn_end(&b_asked)["run_id"].as_str().unwrap().to_owned();
    let b_rows = app
        .get(&format!("/api/runs/{b_run}/figures/0"), Some(b))
        .await
        .json();
    let ids = |v: &Value| -> Vec<String> {
        v["sources"][0]["found"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["transaction_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (a_ids, b_ids) = (ids(&own.json()), ids(&b_rows));
    assert!(!b_ids.is_empty(), "{mode}: {b_rows}");
    assert!(
        b_ids.iter().all(|id| !a_ids.contains(id)),
        "{mode}: B's rows are B's"
    );
}

/// Two visitors' worth of rows: A has a run, a conversation, a waiting write and an upload.
struct World {
    state: std::sync::Arc<kakeibo_api::State>,
    app: TestApp,
    mode: String,
    a: String,
    b: String,
    a_run: String,
    a_conversation: String,
    a_suspended: String,
    a_upload: String,
    pending: Value,
}

async fn reads_and_lists(w: &World) {
    let World {
        app,
        mode,
        a,
        b,
        a_run,
        a_conversation,
        ..
    } = w;
    let (a, b) = (a.as_str(), b.as_str());

    // B cannot read A's run, conversation, or tell them from ids that never existed.
    for (path, random) in [
        (
            format!("/api/runs/{a_run}"),
            format!("/api/runs/{}", Uuid::new_v4()),
        ),
        (
            format!("/api/conversations/{a_conversation}"),
            format!("/api/conversations/{}", Uuid::new_v4()),
        ),
    ] {
        let theirs = app.get(&path, Some(b)).await;
        let nobodys = app.get(&random, Some(b)).await;
        assert_eq!(
            theirs.status,
            StatusCode::NOT_FOUND,
            "{mode}: {path}: {}",
            theirs.body
        );
        assert_eq!(
            (theirs.status, theirs.body),
            (nobodys.status, nobodys.body),
            "{mode}: {path}"
        );
        let own = app.get(&path, Some(a)).await;
        assert_eq!(own.status, StatusCode::OK, "{mode}: A reads {path}");
    }

    // B's lists hold nothing of A's.
    let runs = app.runs(Some(b)).await.json();
    assert!(!ids(&runs, "runs").contains(a_run), "{mode}: runs");
    assert_eq!(ids(&runs, "runs").len(), 1, "{mode}: B has its own run only");
    let conversations = app.conversations(Some(b)).await.json();
    assert!(
        !ids(&conversations, "conversations").contains(a_conversation),
        "{mode}: conversations"
    );
    let uploads = app.get("/api/uploads", Some(b)).await.json();
    assert!(ids(&uploads, "uploads").is_empty(), "{mode}: uploads");

    // B cannot post into A's conversation.
    let into = app
        .post(
            "/api/chat",
            json!({"message": "hello", "conversation_id": a_conversation}),
            Some(b),
        )
        .await;
    assert_eq!(into.status, StatusCode::NOT_FOUND, "{mode}: {}", into.body);
    let b_id = owner_of(&w.state, b).as_uuid();
    let charged: i32 = sqlx::query_scalar("SELECT count FROM owner_daily_messages WHERE owner_id = $1")
        .bind(b_id)
        .fetch_one(w.state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(charged, 1, "{mode}: the refused message was not charged");
}

async fn confirms(w: &World) {
    let World {
        app,
        mode,
        a,
        b,
        a_suspended,
        pending,
        ..
    } = w;
    let (a, b) = (a.as_str(), b.as_str());
    // B cannot confirm A's suspended turn — nor tell it from one that never existed — and the
    // attempt takes nothing from A.
    let decisions = json!([{"id": pending["id"], "allowed": true}]);
    let theirs = app
        .post(
            "/api/confirm",
            json!({"suspended_turn_id": a_suspended, "decisions": decisions}),
            Some(b),
        )
        .await;
    let nobodys = app
        .post(
            "/api/confirm",
            json!({"suspended_turn_id": Uuid::new_v4(), "decisions": decisions}),
            Some(b),
        )
        .await;
    assert_eq!(theirs.status, StatusCode::GONE, "{mode}: {}", theirs.body);
    assert_eq!(
        (theirs.status, theirs.body),
        (nobodys.status, nobodys.body),
        "{mode}"
    );
    let own = app
        .post(
            "/api/confirm",
            json!({"suspended_turn_id": a_suspended, "decisions": decisions}),
            Some(a),
        )
        .await;
    assert_eq!(own.status, StatusCode::OK, "{mode}: {}", own.body);
    assert_eq!(support::turn_end(&own)["status"], "ok", "{mode}");
}

async fn ledgers_and_uploads(w: &World) {
    let World {
        state,
        app,
        mode,
        a,
        b,
        a_upload,
        ..
    } = w;
    let (a, b) = (a.as_str(), b.as_str());
    // The ledgers: A's new budget is A's alone.
    let budget_of = |dashboard: &Value| {
        dashboard["budgets"]["categories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["category"] == "Dining")
            .and_then(|c| c["budget"]["amount_minor"].as_i64())
    };
    let a_dash = app.dashboard(Some(a)).await.json();
    let b_dash = app.dashboard(Some(b)).await.json();
    assert_eq!(budget_of(&a_dash), Some(800_000), "{mode}: {a_dash}");
    assert_eq!(budget_of(&b_dash), None, "{mode}: {b_dash}");

    // B's import tool cannot open A's upload.
    let b_owner = owner_of(state, b);
    let tools = registry(&Scope::new(b_owner, state.app.clone()));
    let opened = tools
        .call(
            "import_statement_csv",
            json!({"upload_id": a_upload, "dry_run": true}),
        )
        .await;
    assert!(opened.is_err(), "{mode}: B opened A's upload: {opened:?}");
    // Nor delete it.
    let deleted = app.delete(&format!("/api/uploads/{a_upload}"), Some(b)).await;
    assert_eq!(deleted.status, StatusCode::NOT_FOUND, "{mode}: {}", deleted.body);
    // Nor preview it on the page: the same 404 as an upload that never existed.
    let theirs = app
        .post_empty(&format!("/api/uploads/{a_upload}/preview"), Some(b))
        .await;
    let nobodys = app
        .post_empty(&format!("/api/uploads/{}/preview", Uuid::new_v4()), Some(b))
        .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{mode}: {}", theirs.body);
    assert_eq!(
        (theirs.status, theirs.body),
        (nobodys.status, nobodys.body),
        "{mode}"
    );
    let own = app
        .post_empty(&format!("/api/uploads/{a_upload}/preview"), Some(a))
        .await;
    assert_eq!(own.status, StatusCode::OK, "{mode}: {}", own.body);
    assert_eq!(own.json()["rows_to_add"], 1, "{mode}");
    let a_owner = owner_of(state, a);
    let tools = registry(&Scope::new(a_owner, state.app.clone()));
    let preview = tools
        .call(
            "import_statement_csv",
            json!({"upload_id": a_upload, "dry_run": true}),
        )
        .await;
    assert!(preview.is_ok(), "{mode}: A previews its own upload: {preview:?}");
}

/// The visitor a session cookie names.
fn owner_of(state: &kakeibo_api::State, cookie: &str) -> OwnerId {
    let token = cookie.trim_start_matches("__Host-kakeibo_session=");
    state.sessions.verify(token).unwrap().owner()
}
