//! What the web app relies on, through the real routes on the demo ledger: the confirm stream's
//! `tool_result` per decided write, the dashboard's months, the session's messages and starting a
//! visit without a message, the import preview without the model, the tool catalogue, new
//! conversations per message, and the scripted demo model quoting the ledger's own figures.

use crate::support;

use axum::http::StatusCode;
use kakeibo_api::State;
use kakeibo_ledger::OwnerId;
use kakeibo_tools::Scope;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Answer, Isolation, TestApp, state, turn_end};
use uuid::Uuid;

/// The owner behind a session cookie.
fn owner_of(state: &State, cookie: &str) -> Uuid {
    state
        .sessions
        .verify(cookie.trim_start_matches("__Host-kakeibo_session="))
        .unwrap()
        .sub
}

/// The text the turn streamed.
fn said(answer: &Answer) -> String {
    answer
        .events()
        .into_iter()
        .filter(|(e, _)| e == "token")
        .map(|(_, d)| d["delta"].as_str().unwrap().to_owned())
        .collect()
}

async fn chat(app: &TestApp, message: &str, cookie: &str) -> Answer {
    let answer = app.chat(Some(cookie), message).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    answer
}

/// Confirms every pending write of `chat`, the i-th allowed when `allowed[i]`.
async fn confirm(app: &TestApp, chat: &Answer, allowed: &[bool], cookie: &str) -> Answer {
    let requests = chat.named("confirm_request");
    assert_eq!(requests.len(), allowed.len(), "{}", chat.body);
    let decisions: Vec<(Value, bool)> = requests
        .iter()
        .zip(allowed)
        .map(|(r, a)| (r["id"].clone(), *a))
        .collect();
    let answer = app
        .confirm(Some(cookie), &requests[0]["suspended_turn_id"], &decisions)
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    answer
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_confirm_stream_says_what_became_of_each_write(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);

    // A read's tool_result has no decision at all.
    let (cookie, spent) = app.visitor("how much did I spend").await;
    let read_results = spent.named("tool_result");
    assert_eq!(read_results.len(), 1, "{}", spent.body);
    assert_eq!(read_results[0]["name"], "get_spend_report");
    assert!(read_results[0].get("decision").is_none(), "{}", read_results[0]);
    let owner = owner_of(&state, &cookie);

    // Allowed: the write ran; its result (with the new budget's id) comes first.
    let asked = chat(&app, "set a ₹20,000 monthly budget for groceries", &cookie).await;
    let request = &asked.named("confirm_request")[0];
    assert_eq!(request["tool"], "set_budget");
    let allowed = confirm(&app, &asked, &[true], &cookie).await;
    let events = allowed.events();
    assert_eq!(events[0].0, "tool_result", "{}", allowed.body);
    let result = &events[0].1;
    let budget: Uuid = sqlx::query_scalar("SELECT id FROM budgets WHERE owner_id = $1")
        .bind(owner)
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(result["id"], request["id"]);
    assert_eq!(result["name"], "set_budget");
    assert_eq!(result["decision"], "allowed");
    assert_eq!(result["outcome"], "ran");
    assert!(
        result["summary"].as_str().unwrap().contains(&budget.to_string()),
        "{result}"
    );
    assert_eq!(
        allowed.named("tool_result").len(),
        1,
        "one per write of the batch"
    );
    assert_eq!(
        said(&allowed),
        "Done: Groceries is budgeted at ₹20,000.00 for 2025-06."
    );
    assert_eq!(turn_end(&allowed)["status"], "ok");

    // Declined: nothing ran, and the scripted model says so instead of "Done".
    let asked = chat(&app, "set a budget", &cookie).await;
    let declined = confirm(&app, &asked, &[false], &cookie).await;
    let events = declined.events();
    assert_eq!(events[0].0, "tool_result", "{}", declined.body);
    assert_eq!(events[0].1["decision"], "declined");
    assert!(
        matches!(
            declined.typed().first(),
            Some(kakeibo_core::Event::ToolResult {
                outcome: kakeibo_core::ToolOutcome::Declined,
                decision: Some(kakeibo_core::WriteDecision::Declined),
                ..
            })
        ),
        "{}",
        declined.body
    );
    assert_eq!(
        events[0].1["summary"],
        kakeibo_core::turn::result_summary(kakeibo_core::turn::DECLINED)
    );
    assert_eq!(
        said(&declined),
        "Nothing was changed: you declined the Dining budget."
    );
    let budgets: i64 = sqlx::query_scalar("SELECT count(*) FROM budgets WHERE owner_id = $1")
        .bind(owner)
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(budgets, 1);

    // A batch of two, the first allowed and the second declined: two results, in call order,
    // before anything else; the answer quotes what became of each.
    let asked = chat(&app, "set budgets for dining and transport", &cookie).await;
    let requests = asked.named("confirm_request");
    let mixed = confirm(&app, &asked, &[true, false], &cookie).await;
    let events = mixed.events();
    assert_eq!(
        (events[0].0.as_str(), events[1].0.as_str()),
        ("tool_result", "tool_result"),
        "{}",
        mixed.body
    );
    assert_eq!(events[0].1["id"], requests[0]["id"]);
    assert_eq!(events[0].1["decision"], "allowed");
    assert!(events[0].1["summary"].as_str().unwrap().contains("Dining"));
    assert_eq!(events[1].1["id"], requests[1]["id"]);
    assert_eq!(events[1].1["decision"], "declined");
    assert_eq!(mixed.named("tool_result").len(), 2);
    assert_eq!(
        said(&mixed),
        "Here is what happened for June 2025. Dining: ₹8,000.00; Transport: declined."
    );

    // Expired: the confirmation ran out before the answer; nothing ran.
    let asked = chat(&app, "set a budget", &cookie).await;
    sqlx::query("UPDATE suspended_turns SET expires_at = now() - interval '1 minute' WHERE owner_id = $1")
        .bind(owner)
        .execute(state.owner_pool.get())
        .await
        .unwrap();
    let expired = confirm(&app, &asked, &[true], &cookie).await;
    let events = expired.events();
    assert_eq!(events[0].0, "tool_result", "{}", expired.body);
    assert_eq!(events[0].1["decision"], "expired");
    assert_eq!(events[0].1["outcome"], "expired");
    assert_eq!(
        events[0].1["summary"],
        kakeibo_core::turn::result_summary(kakeibo_core::turn::EXPIRED)
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_dashboard_goes_month_by_month(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let months = ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"];
    let group_names = |report: &Value| -> Vec<String> {
        report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["group"].as_str().unwrap().to_owned())
            .collect()
    };

    // The latest month by default; the series in calendar order; every month there is.
    let latest = app.dashboard(Some(&cookie)).await;
    assert_eq!(latest.status, StatusCode::OK, "{}", latest.body);
    let latest = latest.json();
    assert_eq!(latest["month"], "2025-06");
    assert_eq!(latest["months"], json!(months));
    assert_eq!(group_names(&latest["spend_by_month"]), months);
    let rows = latest["transactions"].as_array().unwrap();
    assert_eq!(rows.len(), 57, "every June transaction (fewer than 200)");
    assert!(
        rows.iter()
            .all(|r| r["date"].as_str().unwrap().starts_with("2025-06"))
    );
    let dates: Vec<&str> = rows.iter().map(|r| r["date"].as_str().unwrap()).collect();
    assert!(dates.windows(2).all(|w| w[0] >= w[1]), "newest first: {dates:?}");
    let first = &rows[0];
    for key in ["id", "date", "description", "category"] {
        assert!(first[key].is_string(), "{key}: {first}");
    }
    assert!(first["amount"]["amount_minor"].is_i64(), "{first}");
    assert_eq!(first["amount"]["currency"], "INR");
    assert!(first["amount"]["formatted"].as_str().unwrap().contains('₹'));

    // Another month: its figures, and the six months ending with it.
    let march = app.get("/api/dashboard?month=2025-03", Some(&cookie)).await;
    assert_eq!(march.status, StatusCode::OK, "{}", march.body);
    let march = march.json();
    assert_eq!(march["month"], "2025-03");
    assert_eq!(march["months"], json!(months));
    assert_eq!(
        march["spend_by_month"]["period"],
        json!({"from": "2024-10-01", "to": "2025-03-31"})
    );
    assert_eq!(
        group_names(&march["spend_by_month"]),
        ["2025-01", "2025-02", "2025-03"]
    );
    let groceries = march["spend_by_category"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "Groceries")
        .unwrap();
    assert_eq!(groceries["formatted"], "₹23,350.00");
    let amounts: Vec<i64> = march["spend_by_category"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["amount_minor"].as_i64().unwrap())
        .collect();
    assert!(
        amounts.windows(2).all(|w| w[0] >= w[1]),
        "categories largest first"
    );
    assert_eq!(march["budgets"]["month"], "2025-03");
    assert_eq!(march["anomalies"]["month"], "2025-03");
    let rows = march["transactions"].as_array().unwrap();
    assert_eq!(rows.len(), 59);
    assert!(
        rows.iter()
            .all(|r| r["date"].as_str().unwrap().starts_with("2025-03"))
    );

    // A month without transactions is empty figures, not an error.
    let empty = app.get("/api/dashboard?month=2024-01", Some(&cookie)).await;
    assert_eq!(empty.status, StatusCode::OK, "{}", empty.body);
    let empty = empty.json();
    assert_eq!(empty["empty"], false);
    assert_eq!(empty["month"], "2024-01");
    assert_eq!(empty["transactions"], json!([]));
    assert_eq!(empty["spend_by_category"]["groups"], json!([]));
    assert_eq!(empty["months"], json!(months));

    // A malformed month, or one outside the years taken, is a 400 that says what a month looks
    // like (year 0 was a 500: the months before it are in year -1).
    for bad in [
        "2025-13",
        "march",
        "2025-3",
        "2025-03-01",
        "",
        "0000-01",
        "1899-12",
        "10000-01",
    ] {
        let answer = app
            .get(&format!("/api/dashboard?month={bad}"), Some(&cookie))
            .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{bad}: {}", answer.body);
        assert!(
            answer.json()["error"].as_str().unwrap().contains("YYYY-MM"),
            "{}",
            answer.body
        );
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_visit_starts_without_a_message_and_the_session_counts_messages(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[("IP_DAILY_MESSAGE_QUOTA", "3")]).await;
    let app = TestApp::new(&state);

    // No visit: no visitor, no messages.
    let nobody = app.get("/api/session", None).await;
    assert_eq!(nobody.status, StatusCode::OK);
    let nobody = nobody.json();
    assert_eq!(nobody["visitor"], Value::Null);
    assert_eq!(
        nobody["model"],
        json!({"provider": "script", "model": "scripted-demo"})
    );
    assert!(nobody.get("messages").is_none(), "{nobody}");

    // POST starts one: 201, a cookie, the same body as GET.
    let started = app.post_empty("/api/session", None).await;
    assert_eq!(started.status, StatusCode::CREATED, "{}", started.body);
    let cookie = started.session_cookie().expect("a new visit gets a session");
    let body = started.json();
    assert_eq!(body["visitor"]["anonymous"], true);
    // This site allows 3 anonymous messages a day per address, fewer than a visitor's 8: the
    // network's limit binds, and the counter says so.
    assert_eq!(
        body["messages"],
        json!({"limit": 3, "used": 0, "left": 3, "binding": "network"})
    );
    assert_eq!(body["model"]["model"], "scripted-demo");
    let id = body["visitor"]["id"].clone();

    // Again with the session: 200, the same visitor.
    let again = app.post_empty("/api/session", Some(&cookie)).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.json()["visitor"]["id"], id);

    // A statement can be uploaded now, before any message.
    let uploaded = app
        .upload(
            &cookie,
            "tea.csv",
            b"Date,Description,Amount\n2025-07-01,Tea,-40\n",
        )
        .await;
    assert_eq!(uploaded.status, StatusCode::CREATED, "{}", uploaded.body);

    // A message counts.
    chat(&app, "hello", &cookie).await;
    let session = app.get("/api/session", Some(&cookie)).await;
    assert_eq!(session.status, StatusCode::OK);
    let session = session.json();
    assert_eq!(session["visitor"]["id"], id);
    assert_eq!(
        session["messages"],
        json!({"limit": 3, "used": 1, "left": 2, "binding": "network"})
    );

    // Signed in, the limit is the signed-in quota (no address limit); the day's count stays.
    let signed_up = app
        .post(
            "/api/session/sign-up",
            json!({"email": "web@example.com", "password": "a long enough password"}),
            Some(&cookie),
        )
        .await;
    assert_eq!(signed_up.status, StatusCode::OK, "{}", signed_up.body);
    let account = signed_up.session_cookie().unwrap();
    let session = app.get("/api/session", Some(&account)).await.json();
    assert_eq!(
        session["messages"],
        json!({"limit": 25, "used": 1, "left": 24, "binding": "visitor"})
    );

    // New visits are counted per address, as a first message's are (this one made 1 of 3).
    let second = app.post_empty("/api/session", None).await;
    assert_eq!(second.status, StatusCode::CREATED, "{}", second.body);
    let third = app.post_empty("/api/session", None).await;
    assert_eq!(third.status, StatusCode::CREATED, "{}", third.body);
    let fourth = app.post_empty("/api/session", None).await;
    assert_eq!(fourth.status, StatusCode::SERVICE_UNAVAILABLE, "{}", fourth.body);
    assert_eq!(fourth.json()["reason"], "ip_quota");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn an_upload_is_previewed_without_the_model(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let cookie = app
        .post_empty("/api/session", None)
        .await
        .session_cookie()
        .unwrap();
    let owner = owner_of(&state, &cookie);
    let statement = b"Date,Description,Amount\n\
        2025-07-01,WEB TEST CAFE,-250.00\n\
        2025-07-02,WEB TEST BOOKS,-1200.50\n\
        2025-07-03,WEB TEST SALARY,50000.00\n";
    let count = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM transactions WHERE owner_id = $1")
            .bind(owner)
            .fetch_one(state.owner_pool.get())
            .await
            .unwrap()
    };

    // Without a session there is nothing to preview.
    let first = app.upload(&cookie, "july.csv", statement).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let first_id = first.json()["id"].as_str().unwrap().to_owned();
    let anonymous = app
        .post_empty(&format!("/api/uploads/{first_id}/preview"), None)
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

    // The preview: the tool's dry run, a stored plan, nothing in the ledger yet.
    let previewed = app.preview(&cookie, &first_id).await;
    assert_eq!(previewed.status, StatusCode::OK, "{}", previewed.body);
    let plan = previewed.json();
    assert_eq!(plan["dry_run"], true);
    assert_eq!(plan["rows_to_add"], 3);
    assert_eq!(plan["duplicates_skipped"], 0);
    assert_eq!(plan["filename"], "july.csv");
    let plan_id = plan["plan_id"].as_str().unwrap().to_owned();
    assert_eq!(
        count().await,
        352,
        "the demo ledger, and nothing of the statement"
    );
    let stored: String =
        sqlx::query_scalar("SELECT status::text FROM import_batches WHERE owner_id = $1 AND id = $2")
            .bind(owner)
            .bind(Uuid::parse_str(&plan_id).unwrap())
            .fetch_one(state.owner_pool.get())
            .await
            .unwrap();
    assert_eq!(stored, "planned");

    // A body may name the account and the currency; a currency the importer does not know is 400.
    let with_body = app
        .post(
            &format!("/api/uploads/{first_id}/preview"),
            json!({"account": "Checking", "currency": "INR"}),
            Some(&cookie),
        )
        .await;
    assert_eq!(with_body.status, StatusCode::OK, "{}", with_body.body);
    assert_eq!(with_body.json()["rows_to_add"], 3);
    let bad_currency = app
        .post(
            &format!("/api/uploads/{first_id}/preview"),
            json!({"currency": "XYZ"}),
            Some(&cookie),
        )
        .await;
    assert_eq!(
        bad_currency.status,
        StatusCode::BAD_REQUEST,
        "{}",
        bad_currency.body
    );

    // The commit goes through the model and the confirm card.
    let asked = chat(
        &app,
        &format!("import the previewed statement, plan {plan_id}"),
        &cookie,
    )
    .await;
    let request = &asked.named("confirm_request")[0];
    assert_eq!(request["tool"], "import_statement_csv");
    assert_eq!(request["args"], json!({"dry_run": false, "plan_id": plan_id}));
    // The card says what the plan adds, from the plan: rows, days, money in and out, the account.
    assert_eq!(
        request["summary"],
        "Add 3 rows (1–3 Jul 2025; in ₹50,000.00, out ₹1,450.50) to Checking (INR)"
    );
    // The conversation is titled in words, never with the plan's id.
    let conversations = app.conversations(Some(&cookie)).await.json();
    let titles: Vec<&str> = conversations["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["title"].as_str())
        .collect();
    assert!(titles.contains(&"import the previewed statement"), "{titles:?}");
    assert!(titles.iter().all(|t| !t.contains(&plan_id)), "{titles:?}");
    let committed = confirm(&app, &asked, &[true], &cookie).await;
    assert_eq!(committed.events()[0].1["decision"], "allowed");
    assert_eq!(
        said(&committed),
        "Imported 3 transactions; 0 were already in the ledger."
    );
    assert_eq!(count().await, 355);

    // The same bytes again are the same upload (no slot used): nothing to add, every row a
    // duplicate.
    let second = app.upload(&cookie, "july-again.csv", statement).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(second.json()["id"], first_id.as_str());
    assert_eq!(second.json()["reused"], true);
    let again = app.preview(&cookie, second.json()["id"].as_str().unwrap()).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    let again = again.json();
    assert_eq!(again["rows_to_add"], 0);
    assert_eq!(again["duplicates_skipped"], 3);
    assert_eq!(count().await, 355);

    // Another visitor's upload, an unknown id, or no id at all: 404, the same answer.
    let (other, _) = app.visitor("hello").await;
    let theirs = app.preview(&other, &first_id).await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{}", theirs.body);
    let unknown = app.preview(&cookie, &Uuid::new_v4().to_string()).await;
    assert_eq!((unknown.status, &unknown.body), (theirs.status, &theirs.body));
    let not_an_id = app.preview(&cookie, "statement").await;
    assert_eq!(not_an_id.status, StatusCode::NOT_FOUND);

    // A file the importer cannot read: 422 with its sentence.
    let garbage = app
        .upload(&cookie, "garbage.csv", b"\0\0\x01\x02binary\xff\xfe")
        .await;
    assert_eq!(garbage.status, StatusCode::CREATED, "{}", garbage.body);
    let refused = app.preview(&cookie, garbage.json()["id"].as_str().unwrap()).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let why = refused.json()["error"].as_str().unwrap().to_owned();
    assert!(why.starts_with("garbage.csv: "), "{why}");
    assert!(why.contains("binary"), "{why}");
    assert_eq!(count().await, 355);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_tool_catalogue_is_the_registry(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let answer = app.get("/api/tools", None).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let tools = answer.json()["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 14);
    assert_eq!(tools.iter().filter(|t| t["tier"] == "write").count(), 6);
    assert_eq!(tools.iter().filter(|t| t["tier"] == "read").count(), 8);
    let registry = kakeibo_tools::registry(&Scope::new(OwnerId::new(Uuid::nil()), state.app.clone()));
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, registry.names(), "registry order");
    for (tool, real) in tools.iter().zip(registry.tools()) {
        assert_eq!(tool["description"], real.description());
        assert_eq!(tool.as_object().unwrap().len(), 3, "{tool}");
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_message_without_a_conversation_starts_one(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, first) = app.visitor("hello").await;
    let a = turn_end(&first)["conversation_id"].clone();
    let second = chat(&app, "hello again", &cookie).await;
    let b = turn_end(&second)["conversation_id"].clone();
    assert_ne!(a, b, "no conversation_id: a new conversation");
    let listed = app.conversations(Some(&cookie)).await.json();
    let mut titles: Vec<&str> = listed["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    titles.sort_unstable();
    assert_eq!(titles, ["hello", "hello again"]);

    // Naming the first continues it.
    let continued = app
        .post(
            "/api/chat",
            json!({"message": "and once more", "conversation_id": a}),
            Some(&cookie),
        )
        .await;
    assert_eq!(continued.status, StatusCode::OK, "{}", continued.body);
    assert_eq!(turn_end(&continued)["conversation_id"], a);
    let thread = app
        .get(
            &format!("/api/conversations/{}", a.as_str().unwrap()),
            Some(&cookie),
        )
        .await;
    // One `messages` key: the thread's messages, not a second key with their count beside it
    // (a JSON object with a key twice means whatever the reader's parser decides).
    assert_eq!(thread.body.matches("\"messages\":").count(), 1, "{}", thread.body);
    let thread = thread.json();
    assert_eq!(thread["messages"].as_array().unwrap().len(), 4, "{thread}");
    assert_eq!(thread["message_count"], 4, "{thread}");
    let listed = app.conversations(Some(&cookie)).await.json();
    assert_eq!(listed["conversations"].as_array().unwrap().len(), 2);
    let listed_a = listed["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == a)
        .unwrap();
    assert_eq!(listed_a["message_count"], 4, "{listed}");

    // Another visitor's conversation is not found, and nothing is charged for it.
    let (other, _) = app.visitor("hello").await;
    let into = app
        .post(
            "/api/chat",
            json!({"message": "let me in", "conversation_id": a}),
            Some(&other),
        )
        .await;
    assert_eq!(into.status, StatusCode::NOT_FOUND, "{}", into.body);
}

/// The scripted demo model through the real chat route on the demo ledger: every figure it says
/// is one the tools give for that ledger.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_demo_model_quotes_the_ledger(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, groceries) = app
        .visitor("How much did I spend on groceries in March 2025?")
        .await;
    let owner = OwnerId::new(owner_of(&state, &cookie));
    let tools = kakeibo_tools::registry(&Scope::new(owner, state.app.clone()));

    let march = tools
        .call(
            "get_spend_report",
            json!({"period": "2025-03", "group_by": "category"}),
        )
        .await
        .unwrap();
    let figure = march["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "Groceries")
        .unwrap()["formatted"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(figure, "₹23,350.00");
    assert_eq!(
        said(&groceries),
        format!(
            "In March 2025 you spent {figure} on Groceries, out of {} in all.",
            march["total"]["formatted"].as_str().unwrap()
        )
    );

    let recurring = tools.call("detect_recurring", json!({})).await.unwrap();
    let answer = said(&chat(&app, "what subscriptions do I have?", &cookie).await);
    let first = &recurring["merchants"][0];
    assert!(
        answer.starts_with(&format!("I found {} recurring payments", recurring["count"])),
        "{answer}"
    );
    assert!(
        answer.contains(&format!(
            "{}: {}, {}.",
            first["merchant"].as_str().unwrap(),
            first["formatted"].as_str().unwrap(),
            first["cadence"].as_str().unwrap()
        )),
        "{answer}"
    );

    let anomalies = tools
        .call("flag_anomalies", json!({"month": "2025-04"}))
        .await
        .unwrap();
    let answer = said(&chat(&app, "anything unusual?", &cookie).await);
    let first = &anomalies["anomalies"][0];
    assert!(
        answer.starts_with(&format!(
            "I flagged {} unusual transaction(s) in April 2025.",
            anomalies["count"]
        )),
        "{answer}"
    );
    assert!(
        answer.contains(first["description"].as_str().unwrap())
            && answer.contains(first["formatted"].as_str().unwrap()),
        "{answer}"
    );
    assert!(!answer.contains("(script:"), "{answer}");

    let anything = said(&chat(&app, "tell me a joke", &cookie).await);
    assert!(
        anything.starts_with("This is kakeibo's scripted demo model"),
        "{anything}"
    );

    // Runs say which script answered.
    let models: Vec<String> = sqlx::query_scalar("SELECT DISTINCT model FROM trace_runs WHERE owner_id = $1")
        .bind(owner.as_uuid())
        .fetch_all(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(models, ["scripted-demo"]);
}

/// A household through the functions, on the scripted model: three statements previewed into new
/// accounts and imported through the agent's confirmed write; the dashboard's spending and net
/// worth are the household's; "what is my net worth" is answered from get_balances; the agent's
/// attempt to call a transfer spending is refused by the tool with its reason.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_household_through_the_agent(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, worth) = app.visitor("what is my net worth").await;
    let results = worth.named("tool_result");
    assert_eq!(results.len(), 1, "{}", worth.body);
    assert_eq!(results[0]["name"], "get_balances");
    let owner = owner_of(&state, &cookie);
    // The demo ledger's worth: the sum of what its accounts hold.
    let held: i64 = sqlx::query_scalar(
        "SELECT sum(p.amount_minor)::bigint FROM postings p JOIN accounts a ON a.id = p.account_id
         WHERE p.owner_id = $1 AND a.type IN ('asset', 'liability')",
    )
    .bind(owner)
    .fetch_one(state.owner_pool.get())
    .await
    .unwrap();
    let worth_text = kakeibo_ledger::Money::new(held, kakeibo_ledger::Currency::INR).format();
    assert!(
        said(&worth).contains(&worth_text),
        "{} vs {worth_text}",
        said(&worth)
    );

    let root = kakeibo_testkit::workspace_root().join("fixtures/household");
    for (file, account, kind) in [
        ("checking.csv", "US Checking", "checking"),
        ("card.csv", "US Card", "card"),
        ("savings.csv", "US Savings", "savings"),
    ] {
        let bytes = std::fs::read(root.join(file)).unwrap();
        let upload = app.upload(&cookie, file, &bytes).await;
        assert_eq!(upload.status, StatusCode::CREATED, "{}", upload.body);
        let id = upload.json()["id"].as_str().unwrap().to_owned();
        let preview = app
            .post(
                &format!("/api/uploads/{id}/preview"),
                json!({"account": account, "kind": kind, "currency": "USD"}),
                Some(&cookie),
            )
            .await;
        assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
        let preview = preview.json();
        assert_eq!(preview["accounts"][0]["kind"], kind, "{preview}");
        if file == "card.csv" {
            let statuses: Vec<&str> = preview["transfers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["status"].as_str().unwrap())
                .collect();
            assert_eq!(statuses, ["paired", "paired"], "{preview}");
        }
        let message = format!(
            "Import the statement {file} (plan {}).",
            preview["plan_id"].as_str().unwrap()
        );
        let asked = chat(&app, &message, &cookie).await;
        let done = confirm(&app, &asked, &[true], &cookie).await;
        assert!(said(&done).starts_with("Imported "), "{}", done.body);
    }

    let dashboard = app.get("/api/dashboard?month=2025-10", Some(&cookie)).await;
    assert_eq!(dashboard.status, StatusCode::OK, "{}", dashboard.body);
    let dashboard = dashboard.json();
    assert_eq!(
        dashboard["spend_by_category"]["total"]["formatted"], "$2,191.73",
        "{dashboard:#}"
    );
    let usd: Vec<&Value> = dashboard["balances"]["net_worth"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["currency"] == "USD")
        .collect();
    assert_eq!(usd.len(), 1, "{dashboard:#}");
    assert_eq!(usd[0]["amount_minor"], 1_281_685);
    assert_eq!(dashboard["balances"]["in_transit"], json!([]));

    // A transfer is not spending: the write is confirmed, and the tool refuses it with the reason.
    let transfer: Uuid = sqlx::query_scalar(
        "SELECT id FROM transactions WHERE owner_id = $1 AND paired_source_hash IS NOT NULL ORDER BY date LIMIT 1",
    )
    .bind(owner)
    .fetch_one(state.owner_pool.get())
    .await
    .unwrap();
    let asked = chat(&app, &format!("put {transfer} under groceries"), &cookie).await;
    let done = confirm(&app, &asked, &[true], &cookie).await;
    assert!(said(&done).starts_with("Moved 0 transaction(s)"), "{}", done.body);
    let result = &done.named("tool_result")[0];
    assert_eq!(result["decision"], "allowed", "{result}");
    assert!(
        result["summary"].as_str().unwrap().contains("a transfer between"),
        "{result}"
    );
}

/// A visitor's home currency is theirs to change, and the dashboard says it; a preview's answers
/// are refused for a plan that asks nothing, and for a plan that is not the visitor's.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn home_currency_and_answers_are_the_visitors(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("what is my net worth").await;
    let changed = app
        .post(
            "/api/session/home-currency",
            json!({"currency": "USD"}),
            Some(&cookie),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_eq!(changed.json()["home_currency"], "USD");
    let refused = app
        .post(
            "/api/session/home-currency",
            json!({"currency": "XYZ"}),
            Some(&cookie),
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    let dashboard = app.get("/api/dashboard", Some(&cookie)).await.json();
    assert_eq!(dashboard["balances"]["home_currency"], "USD", "{dashboard:#}");

    let root = kakeibo_testkit::workspace_root().join("fixtures/household");
    let bytes = std::fs::read(root.join("savings.csv")).unwrap();
    let id = app.upload(&cookie, "savings.csv", &bytes).await.json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let preview = app
        .post(
            &format!("/api/uploads/{id}/preview"),
            json!({"account": "Savings"}),
            Some(&cookie),
        )
        .await
        .json();
    let plan = preview["plan_id"].as_str().unwrap().to_owned();
    let path = format!("/api/uploads/plans/{plan}/answers");
    let nothing_asked = app
        .post(
            &path,
            json!({"answers": [{"line": 2, "candidate": 0}]}),
            Some(&cookie),
        )
        .await;
    assert_eq!(
        nothing_asked.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        nothing_asked.body
    );
    assert!(
        nothing_asked.body.contains("asks nothing about line 2"),
        "{}",
        nothing_asked.body
    );
    // Another visitor cannot answer it.
    let (stranger, _) = app.visitor("what is my net worth").await;
    let theirs = app.post(&path, json!({"answers": []}), Some(&stranger)).await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{}", theirs.body);
}

/// One statement alone: its transfers wait in transit, on the dashboard; the sentence "Say what it
/// was" begins, finished by the person, becomes `settle_transit` behind the confirm card, and the
/// row is spending from then on (declined, it still waits).
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_row_in_transit_is_settled_through_the_agent(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("what is my net worth").await;
    let bytes =
        std::fs::read(kakeibo_testkit::workspace_root().join("fixtures/household/checking.csv")).unwrap();
    let id = app.upload(&cookie, "checking.csv", &bytes).await.json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let preview = app
        .post(
            &format!("/api/uploads/{id}/preview"),
            json!({"account": "US Checking", "currency": "USD"}),
            Some(&cookie),
        )
        .await
        .json();
    let asked = chat(
        &app,
        &format!(
            "Import the statement checking.csv (plan {}).",
            preview["plan_id"].as_str().unwrap()
        ),
        &cookie,
    )
    .await;
    confirm(&app, &asked, &[true], &cookie).await;
    let transit = |dashboard: &Value| dashboard["balances"]["in_transit"].as_array().unwrap().clone();
    let dashboard = app
        .get("/api/dashboard?month=2025-10", Some(&cookie))
        .await
        .json();
    let waiting = transit(&dashboard);
    assert_eq!(waiting.len(), 4, "{dashboard:#}");
    let spent = |d: &Value| d["spend_by_category"]["total"]["amount_minor"].as_i64().unwrap();
    let before = spent(&dashboard);
    let row = waiting
        .iter()
        .find(|t| t["description"] == "ONLINE TRANSFER TO SAVINGS")
        .unwrap();
    let message = format!(
        "The row in transit {} (2025-10-05, US Checking, “ONLINE TRANSFER TO SAVINGS”, -$500.00) was spending in Shopping",
        row["transaction_id"].as_str().unwrap()
    );
    let declined = confirm(&app, &chat(&app, &message, &cookie).await, &[false], &cookie).await;
    assert_eq!(said(&declined), "Nothing was changed: it still waits in transit.");
    let asked = chat(&app, &message, &cookie).await;
    let tool = &asked.named("tool_call")[0];
    assert_eq!(tool["name"], "settle_transit", "{}", asked.body);
    let done = confirm(&app, &asked, &[true], &cookie).await;
    assert!(said(&done).contains("now spending in Shopping"), "{}", done.body);
    let dashboard = app
        .get("/api/dashboard?month=2025-10", Some(&cookie))
        .await
        .json();
    assert_eq!(transit(&dashboard).len(), 3, "{dashboard:#}");
    assert_eq!(spent(&dashboard), before + 50_000, "{dashboard:#}");
}

/// Two signed-in people and three anonymous visitors behind one address send 42 messages between
/// them: the address's limit (20) stops the anonymous ones, each told it is the network's; the
/// signed-in people are never refused for it, and every counter shows the limit that binds.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn people_behind_one_address_are_counted_fairly(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let password = "a long enough password";
    // Each sign-up starts as an anonymous visit with one message: 2 of the address's 20.
    let alice = app.signed_up("alice@example.com", password).await;
    let bob = app.signed_up("bob@example.com", password).await;
    let mut anonymous = Vec::new();
    for _ in 0..3 {
        anonymous.push(app.visitor("hello").await.0);
    }
    let messages = |cookie: String| {
        let app = app.clone();
        async move { app.get("/api/session", Some(&cookie)).await.json()["messages"].clone() }
    };
    assert_eq!(
        messages(anonymous[0].clone()).await,
        json!({"limit": 8, "used": 1, "left": 7, "binding": "visitor"})
    );
    // The anonymous visitors take turns until the address's messages are spent.
    let (mut admitted, mut refused) = (5, 0);
    for round in 0..8 {
        for cookie in &anonymous {
            let answer = app.chat(Some(cookie), &format!("hello {round}")).await;
            if answer.status == StatusCode::OK {
                admitted += 1;
            } else {
                assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{}", answer.body);
                assert_eq!(answer.json()["reason"], "ip_quota", "{}", answer.body);
                refused += 1;
            }
        }
    }
    assert_eq!(
        (admitted, refused),
        (20, 9),
        "the address's 20 messages, then every anonymous one refused"
    );
    for cookie in &anonymous {
        let counter = messages(cookie.clone()).await;
        assert_eq!(counter["binding"], "network", "{counter}");
        assert_eq!(
            (counter["limit"].as_i64(), counter["left"].as_i64()),
            (Some(20), Some(0)),
            "{counter}"
        );
    }
    // The signed-in people go on: 11 more each, none refused, each counted on their own.
    for cookie in [&alice, &bob] {
        for i in 0..11 {
            let answer = app.chat(Some(cookie), &format!("hello {i}")).await;
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        }
        assert_eq!(
            messages(cookie.clone()).await,
            json!({"limit": 25, "used": 12, "left": 13, "binding": "visitor"})
        );
    }
}

/// A write waiting for the person is read back with its conversation (so a reload rebuilds the
/// card), and a run not finished says what it waits on: `waiting`, then `expired` when nobody
/// answered, and `abandoned` when no turn works on it any more — never `running` forever.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_waiting_write_survives_a_reload_and_its_run_says_what_it_waits_on(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("how much did I spend").await;
    let question = "set a ₹20,000 monthly budget for groceries";
    let asked = chat(&app, question, &cookie).await;
    let request = asked.named("confirm_request").remove(0);
    let end = turn_end(&asked);
    let conversation = end["conversation_id"].as_str().unwrap().to_owned();
    let run = end["run_id"].as_str().unwrap().to_owned();

    let read = app
        .get(&format!("/api/conversations/{conversation}"), Some(&cookie))
        .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    let read = read.json();
    let pending = read["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{read}");
    let waiting = &pending[0];
    assert_eq!(waiting["suspended_turn_id"], request["suspended_turn_id"]);
    assert_eq!(waiting["run_id"], run.as_str());
    assert_eq!(waiting["writes"].as_array().unwrap().len(), 1, "{waiting}");
    let write = &waiting["writes"][0];
    assert_eq!(write["id"], request["id"]);
    assert_eq!(write["tool"], "set_budget");
    assert_eq!(write["summary"], request["summary"]);
    assert_eq!(write["args"], request["args"]);
    let first = &waiting["messages"][0];
    assert_eq!(first["role"], "user", "{waiting}");
    assert!(
        first["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with(question),
        "{first}"
    );
    // The finished turns are the conversation's messages; the waiting one is not among them yet.
    let stored = read["messages"].as_array().unwrap();
    assert!(
        stored.iter().all(|m| !m.to_string().contains("20,000 monthly")),
        "{read}"
    );

    let status_of = |runs: Value, id: &str| {
        runs["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["status"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(status_of(app.runs(Some(&cookie)).await.json(), &run), "waiting");
    // Each trace keeps the question it answers.
    let detail = app.get(&format!("/api/runs/{run}"), Some(&cookie)).await.json();
    assert_eq!(detail["question"], question, "{detail}");

    // Another visitor reads neither the conversation nor its waiting write.
    let (stranger, _) = app.visitor("how much did I spend").await;
    let theirs = app
        .get(&format!("/api/conversations/{conversation}"), Some(&stranger))
        .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{}", theirs.body);

    // Nobody answered in time: the card is not offered again, and the run says it expired.
    let owner = owner_of(&state, &cookie);
    sqlx::query("UPDATE suspended_turns SET expires_at = now() - interval '1 minute' WHERE owner_id = $1")
        .bind(owner)
        .execute(state.owner_pool.get())
        .await
        .unwrap();
    let read = app
        .get(&format!("/api/conversations/{conversation}"), Some(&cookie))
        .await
        .json();
    assert_eq!(read["pending"], json!([]), "{read}");
    assert_eq!(status_of(app.runs(Some(&cookie)).await.json(), &run), "expired");
    let detail = app.get(&format!("/api/runs/{run}"), Some(&cookie)).await.json();
    assert_eq!(detail["status"], "expired", "{detail}");

    // A run whose function died mid-turn (no waiting turn, started long ago) is abandoned.
    sqlx::query("DELETE FROM suspended_turns WHERE owner_id = $1")
        .bind(owner)
        .execute(state.owner_pool.get())
        .await
        .unwrap();
    sqlx::query("UPDATE trace_runs SET started_at = now() - interval '20 minutes' WHERE owner_id = $1 AND id = $2::uuid")
        .bind(owner)
        .bind(&run)
        .execute(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(status_of(app.runs(Some(&cookie)).await.json(), &run), "abandoned");
}

/// A person's uploads: listed with whether each was imported, deleted one by one, the same file
/// kept once, and the shipped sample never taking one of the visitor's slots.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn uploads_are_listed_kept_once_and_the_sample_is_free(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let statement =
        b"Date,Description,Amount\n2025-07-01,LISTED CAFE,-250.00\n2025-07-02,LISTED PAY,900.00\n";
    let kept = app.upload(&cookie, "listed.csv", statement).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{}", kept.body);
    let id = kept.json()["id"].as_str().unwrap().to_owned();
    assert_eq!(kept.json()["reused"], false);
    assert_eq!(kept.json()["imported_at"], Value::Null);

    // Imported through the agent: the list says when, and how many rows.
    let plan = app.preview(&cookie, &id).await.json()["plan_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let asked = chat(
        &app,
        &format!("Import listed.csv: 2 rows into Checking (plan {plan})."),
        &cookie,
    )
    .await;
    confirm(&app, &asked, &[true], &cookie).await;
    let listed = app.get("/api/uploads", Some(&cookie)).await.json();
    let uploads = listed["uploads"].as_array().unwrap();
    assert_eq!(uploads.len(), 1, "{listed}");
    assert_eq!(uploads[0]["filename"], "listed.csv");
    assert_eq!(uploads[0]["size_bytes"], statement.len());
    assert_eq!(uploads[0]["imported_rows"], 2, "{listed}");
    assert!(uploads[0]["imported_at"].is_string(), "{listed}");

    // The sample: kept once, and free.
    let sample = app.post_empty("/api/uploads/sample", Some(&cookie)).await;
    assert_eq!(sample.status, StatusCode::CREATED, "{}", sample.body);
    assert_eq!(sample.json()["sample"], true);
    let again = app.post_empty("/api/uploads/sample", Some(&cookie)).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.json()["id"], sample.json()["id"]);

    // Full at 20 of the visitor's own; the sample was not one of them.
    for n in 1..20 {
        let file = format!("Date,Description,Amount\n2025-07-01,FILE {n},-1.00\n");
        let answer = app.upload(&cookie, &format!("f{n}.csv"), file.as_bytes()).await;
        assert_eq!(answer.status, StatusCode::CREATED, "upload {n}: {}", answer.body);
    }
    let refused = app
        .upload(
            &cookie,
            "one-too-many.csv",
            b"Date,Description,Amount\n2025-07-01,X,-1.00\n",
        )
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    assert!(
        refused.json()["error"].as_str().unwrap().contains("privacy page"),
        "{}",
        refused.body
    );
    assert_eq!(
        app.get("/api/uploads", Some(&cookie)).await.json()["uploads"]
            .as_array()
            .unwrap()
            .len(),
        21
    );

    // Deleting one makes room; another visitor can delete none of them.
    let (stranger, _) = app.visitor("hello").await;
    assert_eq!(
        app.delete(&format!("/api/uploads/{id}"), Some(&stranger))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.delete(&format!("/api/uploads/{id}"), Some(&cookie))
            .await
            .status,
        StatusCode::OK
    );
    let room = app
        .upload(
            &cookie,
            "one-too-many.csv",
            b"Date,Description,Amount\n2025-07-01,X,-1.00\n",
        )
        .await;
    assert_eq!(room.status, StatusCode::CREATED, "{}", room.body);
    assert_eq!(
        app.get("/api/uploads", Some(&stranger)).await.json()["uploads"],
        json!([])
    );
}

/// A row whose amount the statement's balance column contradicts is listed with both figures; the
/// visitor takes it in at the one they say is right, the preview and the confirm card say so, the
/// commit books exactly that figure and the import keeps the choice.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_refused_row_is_taken_in_at_the_figure_chosen(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let owner = owner_of(&state, &cookie);
    // Line 4 states −21.00; the balance fell by 12.00 across it.
    let statement = b"Date,Description,Amount,Balance\n\
        2025-07-01,FIGURE SALARY,100.00,1100.00\n\
        2025-07-02,FIGURE CAFE,-5.00,1095.00\n\
        2025-07-03,FIGURE GROCER,-21.00,1083.00\n\
        2025-07-04,FIGURE RENT,-50.00,1033.00\n";
    let id = app.upload(&cookie, "july.csv", statement).await.json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/api/uploads/{id}/preview");
    let refused = app
        .post(&path, json!({"currency": "USD"}), Some(&cookie))
        .await
        .json();
    assert_eq!(refused["rows_to_add"], 3);
    assert_eq!(refused["errors"][0]["line"], 4);
    assert_eq!(
        refused["errors"][0]["figures"],
        json!({"amount_minor": -2100, "balance_minor": -1200, "currency": "USD"})
    );

    let take = |figure: &str| json!({"currency": "USD", "figures": [{"line": 4, "take": figure}]});
    let taken = app.post(&path, take("balance"), Some(&cookie)).await;
    assert_eq!(taken.status, StatusCode::OK, "{}", taken.body);
    let taken = taken.json();
    assert_eq!(taken["rows_to_add"], 4);
    assert_eq!(taken["errors"], json!([]));
    assert_ne!(
        taken["plan_id"], refused["plan_id"],
        "another choice, another plan"
    );
    assert_eq!(
        taken["format"]["taken"],
        json!([{"line": 4, "take": "balance", "amount_minor": -2100, "balance_minor": -1200, "currency": "USD"}])
    );
    assert!(
        taken["balance_check"]
            .as_str()
            .unwrap()
            .contains("one that does not is taken in at the figure you chose"),
        "{}",
        taken["balance_check"]
    );
    // The same choice again is the same plan; the other figure is another.
    let again = app.post(&path, take("balance"), Some(&cookie)).await.json();
    assert_eq!(
        (again["plan_id"].clone(), again["reused"].clone()),
        (taken["plan_id"].clone(), json!(true))
    );
    let at_amount = app.post(&path, take("amount"), Some(&cookie)).await.json();
    assert_ne!(at_amount["plan_id"], taken["plan_id"]);

    // Bad choices are refused before anything is read.
    let unknown = app
        .post(
            &path,
            json!({"figures": [{"line": 4, "take": "guess"}]}),
            Some(&cookie),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.body);
    let many: Vec<Value> = (1..=501)
        .map(|line| json!({"line": line, "take": "amount"}))
        .collect();
    let too_many = app.post(&path, json!({"figures": many}), Some(&cookie)).await;
    assert_eq!(
        too_many.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        too_many.body
    );

    // The commit goes through the card, which names the row taken and its figure.
    let plan_id = taken["plan_id"].as_str().unwrap().to_owned();
    let asked = chat(
        &app,
        &format!("import the previewed statement, plan {plan_id}"),
        &cookie,
    )
    .await;
    let request = &asked.named("confirm_request")[0];
    let summary = request["summary"].as_str().unwrap();
    assert!(
        summary.contains("taken in on your word though the balance column disagrees: line 4 at the balance's change -$12.00"),
        "{summary}"
    );
    let committed = confirm(&app, &asked, &[true], &cookie).await;
    assert_eq!(committed.events()[0].1["decision"], "allowed");
    let booked: i64 = sqlx::query_scalar(
        "SELECT p.amount_minor FROM transactions t JOIN postings p ON p.transaction_id = t.id
         JOIN accounts a ON a.id = p.account_id
         WHERE t.owner_id = $1 AND t.description = 'FIGURE GROCER' AND a.type = 'asset'",
    )
    .bind(owner)
    .fetch_one(state.owner_pool.get())
    .await
    .unwrap();
    assert_eq!(booked, -1_200);
    let recorded: Value = sqlx::query_scalar(
        "SELECT plan -> 'format' -> 'taken' FROM import_batches WHERE owner_id = $1 AND id = $2 AND status = 'committed'",
    )
    .bind(owner)
    .bind(Uuid::parse_str(&plan_id).unwrap())
    .fetch_one(state.owner_pool.get())
    .await
    .unwrap();
    assert_eq!(recorded, taken["format"]["taken"]);
}
