//! The register through its routes on a visitor's real ledger: search, a person's own edits
//! (category, description, split, delete) recorded and reverted, an import undone — its rows
//! and nothing else, its transfers back in transit — and every route isolated between visitors.

use crate::support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Answer, Isolation, TestApp, state};

async fn page(app: &TestApp, cookie: &str, query: &str) -> Value {
    let answer = app.get(&format!("/api/transactions?{query}"), Some(cookie)).await;
    assert_eq!(answer.status, StatusCode::OK, "{query}: {}", answer.body);
    answer.json()
}

async fn patch(app: &TestApp, cookie: &str, id: &str, body: Value) -> Answer {
    app.request(
        Method::PATCH,
        &format!("/api/transactions/{id}"),
        Some(body),
        Some(cookie),
    )
    .await
}

/// Uploads, previews and imports `bytes` through the agent; the import's id.
async fn import(app: &TestApp, cookie: &str, file: &str, bytes: &[u8], preview: Value) -> String {
    let upload = app.upload(cookie, file, bytes).await;
    assert!(upload.status.is_success(), "{}", upload.body);
    let id = upload.json()["id"].as_str().unwrap().to_owned();
    let planned = app
        .post(&format!("/api/uploads/{id}/preview"), preview, Some(cookie))
        .await;
    assert_eq!(planned.status, StatusCode::OK, "{}", planned.body);
    let plan = planned.json()["plan_id"].as_str().unwrap().to_owned();
    let asked = app
        .chat(Some(cookie), &format!("Import {file} (plan {plan})."))
        .await;
    let request = &asked.named("confirm_request")[0];
    let done = app
        .confirm(
            Some(cookie),
            &request["suspended_turn_id"],
            &[(request["id"].clone(), true)],
        )
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    plan
}

fn ids(page: &Value) -> Vec<String> {
    page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_register_searches_and_a_persons_edits_are_recorded_and_reverted(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;

    // The whole demo ledger, newest first, fifty to a page.
    let first = page(&app, &cookie, "").await;
    assert_eq!(first["total"], 352, "{first}");
    assert_eq!(first["rows"].as_array().unwrap().len(), 50);
    let names = |key: &str| -> Vec<String> {
        first[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect()
    };
    assert!(names("accounts").contains(&"Checking".to_owned()), "{first}");
    assert!(names("categories").contains(&"Groceries".to_owned()), "{first}");
    assert!(!names("categories").contains(&"Checking".to_owned()), "{first}");
    let dates: Vec<&str> = first["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["date"].as_str().unwrap())
        .collect();
    assert!(dates.windows(2).all(|w| w[0] >= w[1]), "{dates:?}");
    let last = page(&app, &cookie, "page=8").await;
    assert_eq!(last["rows"].as_array().unwrap().len(), 2, "352 = 7 × 50 + 2");
    let past = page(&app, &cookie, "page=9").await;
    assert_eq!(
        (past["rows"].clone(), past["total"].clone()),
        (json!([]), json!(352))
    );

    // Filters narrow, and every row says why it matched.
    let groceries = page(&app, &cookie, "category=Groceries&per_page=200").await;
    let rows = groceries["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["category"] == "Groceries" && r["kind"] == "spending"),
        "{groceries}"
    );
    let march = page(&app, &cookie, "from=2025-03-01&to=2025-03-31&per_page=200").await;
    assert!(
        march["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["date"].as_str().unwrap().starts_with("2025-03"))
    );
    let big = page(&app, &cookie, "min_minor=1000000&sort=amount").await;
    let sizes: Vec<i64> = big["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["amount_minor"].as_i64().unwrap().abs())
        .collect();
    assert!(
        sizes.iter().all(|s| *s >= 1_000_000) && sizes.windows(2).all(|w| w[0] >= w[1]),
        "{sizes:?}"
    );
    let row = &first["rows"][0];
    let word = row["description"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_lowercase();
    let found = page(&app, &cookie, &format!("q={word}&per_page=200")).await;
    assert!(
        ids(&found).contains(&row["id"].as_str().unwrap().to_owned()),
        "{found}"
    );
    assert!(found["rows"].as_array().unwrap().iter().all(|r| {
        r["description"].as_str().unwrap().to_lowercase().contains(&word)
            || r["raw_description"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains(&word)
    }));
    let refused = app
        .get("/api/transactions?from=2025-03-02&to=2025-03-01", Some(&cookie))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let unknown = app.get("/api/transactions?colour=red", Some(&cookie)).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.body);

    // A new category: one edit, recorded; reverted, the row is as it was.
    let spent = &groceries["rows"][0];
    let id = spent["id"].as_str().unwrap().to_owned();
    let changed = patch(&app, &cookie, &id, json!({"category": "dining"})).await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    let edit = changed.json()["edits"][0].clone();
    assert_eq!(edit["kind"], "recategorize");
    assert!(
        edit["summary"].as_str().unwrap().ends_with("Groceries → Dining"),
        "{edit}"
    );
    let now = page(
        &app,
        &cookie,
        &format!("q={}", urlencode(spent["description"].as_str().unwrap())),
    )
    .await;
    let same = now["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap();
    assert_eq!(same["category"], "Dining");
    assert_eq!(same["amount_minor"], spent["amount_minor"], "money never moves");
    let reverted = app
        .post_empty(
            &format!("/api/edits/{}/revert", edit["id"].as_str().unwrap()),
            Some(&cookie),
        )
        .await;
    assert_eq!(reverted.status, StatusCode::OK, "{}", reverted.body);
    assert_eq!(reverted.json()["kind"], "revert");
    let again = app
        .post_empty(
            &format!("/api/edits/{}/revert", edit["id"].as_str().unwrap()),
            Some(&cookie),
        )
        .await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", again.body);
    let back = page(&app, &cookie, "category=Groceries&per_page=200").await;
    assert_eq!(
        back["rows"], groceries["rows"],
        "reverted: the register reads as before"
    );
    let no_such = patch(&app, &cookie, &id, json!({"category": "Yachts"})).await;
    assert_eq!(
        no_such.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        no_such.body
    );

    // A description, then a split whose shares must add up.
    let renamed = patch(&app, &cookie, &id, json!({"description": "Weekly shop"})).await;
    assert_eq!(renamed.status, StatusCode::OK, "{}", renamed.body);
    let size = spent["amount_minor"].as_i64().unwrap().abs();
    let wrong = app
        .post(
            &format!("/api/transactions/{id}/split"),
            json!({"shares": [{"category": "Groceries", "amount_minor": 1}]}),
            Some(&cookie),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", wrong.body);
    assert!(
        wrong.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("the shares add up to ₹0.01"),
        "{}",
        wrong.body
    );
    let split = app
        .post(
            &format!("/api/transactions/{id}/split"),
            json!({"shares": [{"category": "Groceries", "amount_minor": size - 100}, {"category": "Shopping", "amount_minor": 100}]}),
            Some(&cookie),
        )
        .await;
    assert_eq!(split.status, StatusCode::OK, "{}", split.body);
    let now = page(&app, &cookie, "q=weekly%20shop").await;
    let row = &now["rows"][0];
    assert_eq!(
        (row["category"].as_str(), row["amount_minor"].as_i64()),
        (Some("Split"), spent["amount_minor"].as_i64())
    );
    assert_eq!(
        row["parts"],
        json!([{"category": "Groceries", "amount_minor": size - 100}, {"category": "Shopping", "amount_minor": 100}])
    );
    let split_rows = page(&app, &cookie, "category=Shopping&q=weekly").await;
    assert_eq!(
        split_rows["total"], 1,
        "a split row is found under each of its categories"
    );

    // A deletion, put back by its revert.
    let deleted = app
        .delete(&format!("/api/transactions/{id}"), Some(&cookie))
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(page(&app, &cookie, "").await["total"], 351);
    let edits = app.get("/api/edits", Some(&cookie)).await.json();
    let kinds: Vec<&str> = edits["edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["delete", "split", "describe", "revert", "recategorize"]);
    let restored = app
        .post_empty(
            &format!("/api/edits/{}/revert", edits["edits"][0]["id"].as_str().unwrap()),
            Some(&cookie),
        )
        .await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.body);
    assert_eq!(
        page(&app, &cookie, "q=weekly%20shop").await["rows"][0]["parts"],
        row["parts"]
    );
    assert_eq!(page(&app, &cookie, "").await["total"], 352);
    // An edit whose rows changed since cannot be reverted over them.
    let describe = &edits["edits"][2];
    let stale = app
        .post_empty(
            &format!("/api/edits/{}/revert", describe["id"].as_str().unwrap()),
            Some(&cookie),
        )
        .await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{}", stale.body);

    // Another visitor: their own ledger, and none of these rows or edits.
    let (stranger, _) = app.visitor("hello").await;
    assert_eq!(page(&app, &stranger, "q=weekly%20shop").await["total"], 0);
    assert_eq!(
        patch(&app, &stranger, &id, json!({"category": "Dining"}))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.delete(&format!("/api/transactions/{id}"), Some(&stranger))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let split_theirs = app
        .post(
            &format!("/api/transactions/{id}/split"),
            json!({"shares": [{"category": "Dining", "amount_minor": size}]}),
            Some(&stranger),
        )
        .await;
    assert_eq!(split_theirs.status, StatusCode::NOT_FOUND);
    let edit_id = edits["edits"][1]["id"].as_str().unwrap();
    assert_eq!(
        app.post_empty(&format!("/api/edits/{edit_id}/revert"), Some(&stranger))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get("/api/edits", Some(&stranger)).await.json()["edits"],
        json!([])
    );
    // No session: nothing.
    assert_eq!(
        app.get("/api/transactions", None).await.status,
        StatusCode::UNAUTHORIZED
    );
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn undoing_an_import_removes_its_rows_and_nothing_else(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let root = kakeibo_testkit::workspace_root().join("fixtures/household");
    let usd = |account: &str, kind: &str| json!({"account": account, "kind": kind, "currency": "USD"});
    let checking = import(
        &app,
        &cookie,
        "checking.csv",
        &std::fs::read(root.join("checking.csv")).unwrap(),
        usd("US Checking", "checking"),
    )
    .await;
    let before_card = page(&app, &cookie, "per_page=200&account=US%20Checking").await;
    let in_transit = |page: &Value| {
        page["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kind"] == "transit")
            .count()
    };
    // Checking's transfers to savings wait for a savings statement that never comes here.
    let waiting_before = in_transit(&before_card);
    let card = import(
        &app,
        &cookie,
        "card.csv",
        &std::fs::read(root.join("card.csv")).unwrap(),
        usd("US Card", "card"),
    )
    .await;
    let with_card = page(&app, &cookie, &format!("per_page=200&import={card}")).await;
    let transfers = with_card["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "transfer")
        .count();
    assert!(
        transfers >= 1,
        "the card's payments pair with checking's: {with_card}"
    );
    let total_with_card = page(&app, &cookie, "").await["total"].as_i64().unwrap();

    // Undoing the card's import: its rows go, the checking side of each payment waits in transit.
    let undone = app
        .post_empty(&format!("/api/imports/{card}/undo"), Some(&cookie))
        .await;
    assert_eq!(undone.status, StatusCode::OK, "{}", undone.body);
    let summary = undone.json()["summary"].as_str().unwrap().to_owned();
    assert!(summary.starts_with("Undid the import of card.csv: "), "{summary}");
    assert!(summary.contains("back in transit"), "{summary}");
    assert_eq!(page(&app, &cookie, &format!("import={card}")).await["total"], 0);
    let after = page(&app, &cookie, "per_page=200&account=US%20Checking").await;
    assert_eq!(
        ids(&after),
        ids(&before_card),
        "checking's rows are all still there"
    );
    assert_eq!(
        after["rows"], before_card["rows"],
        "checking reads exactly as before the card: each payment waits in transit again"
    );
    assert!(in_transit(&after) >= waiting_before.max(transfers));
    let total = page(&app, &cookie, "").await["total"].as_i64().unwrap();
    let card_only = with_card["total"].as_i64().unwrap() - i64::try_from(transfers).unwrap();
    assert_eq!(
        total,
        total_with_card - card_only,
        "exactly the card's own rows went"
    );
    let twice = app
        .post_empty(&format!("/api/imports/{card}/undo"), Some(&cookie))
        .await;
    assert_eq!(twice.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", twice.body);
    let uploads = app.get("/api/uploads", Some(&cookie)).await.json();
    let card_upload = uploads["uploads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["filename"] == "card.csv")
        .unwrap();
    assert_eq!(
        card_upload["imported_at"],
        Value::Null,
        "an undone import is no longer imported: {uploads}"
    );

    // Reverting the undo brings the card's rows and its transfers back exactly.
    let edit = undone.json()["id"].as_str().unwrap().to_owned();
    let redone = app
        .post_empty(&format!("/api/edits/{edit}/revert"), Some(&cookie))
        .await;
    assert_eq!(redone.status, StatusCode::OK, "{}", redone.body);
    assert_eq!(
        page(&app, &cookie, &format!("per_page=200&import={card}")).await["rows"],
        with_card["rows"]
    );

    // Undoing the first import keeps the later statement's side of each transfer, waiting.
    let undone = app
        .post_empty(&format!("/api/imports/{checking}/undo"), Some(&cookie))
        .await;
    assert_eq!(undone.status, StatusCode::OK, "{}", undone.body);
    assert_eq!(page(&app, &cookie, "account=US%20Checking").await["total"], 0);
    let card_now = page(&app, &cookie, &format!("per_page=200&import={card}")).await;
    assert_eq!(
        card_now["total"], with_card["total"],
        "every card row is still there"
    );
    assert_eq!(in_transit(&card_now), transfers, "{card_now}");

    // Another visitor cannot undo it, nor see it.
    let (stranger, _) = app.visitor("hello").await;
    assert_eq!(
        app.post_empty(&format!("/api/imports/{card}/undo"), Some(&stranger))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(page(&app, &stranger, &format!("import={card}")).await["total"], 0);
}

/// A deleted row whose statement line was imported again since cannot be put back over it: the
/// revert is refused (`409`) and nothing is booked twice.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_deleted_row_imported_again_is_not_put_back_twice(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let statement =
        b"Date,Description,Amount\n2025-07-01,TWICE CAFE,-250.00\n2025-07-02,TWICE BOOKS,-1200.50\n";
    import(&app, &cookie, "twice.csv", statement, json!({})).await;
    let cafe = page(&app, &cookie, "q=twice%20cafe").await;
    let id = cafe["rows"][0]["id"].as_str().unwrap().to_owned();
    let deleted = app
        .delete(&format!("/api/transactions/{id}"), Some(&cookie))
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);

    // The same statement again adds back exactly the deleted line.
    let again =
        b"Date,Description,Amount\n2025-07-01,TWICE CAFE,-250.00\n2025-07-02,TWICE BOOKS,-1200.50\n\n";
    import(&app, &cookie, "twice-again.csv", again, json!({})).await;
    assert_eq!(page(&app, &cookie, "q=twice").await["total"], 2);
    let revert = app
        .post_empty(
            &format!("/api/edits/{}/revert", deleted.json()["id"].as_str().unwrap()),
            Some(&cookie),
        )
        .await;
    assert_eq!(revert.status, StatusCode::CONFLICT, "{}", revert.body);
    assert_eq!(
        page(&app, &cookie, "q=twice").await["total"],
        2,
        "nothing booked twice"
    );
}

/// The answer's JSON, after checking its status.
fn expect(answer: &Answer, status: StatusCode) -> Value {
    assert_eq!(answer.status, status, "{}", answer.body);
    answer.json()
}

fn category_named<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
}

/// The month's line of `category` on the budgets screen.
async fn budget_line(app: &TestApp, cookie: &str, month: &str, category: &str) -> Value {
    let view = expect(
        &app.get(&format!("/api/budgets?month={month}"), Some(cookie))
            .await,
        StatusCode::OK,
    );
    view["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["category"] == category)
        .cloned()
        .unwrap_or(Value::Null)
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_category_merged_away_takes_its_rows_rules_and_budgets_and_comes_back_on_revert(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;

    let chart = expect(&app.get("/api/categories", Some(&cookie)).await, StatusCode::OK);
    let groceries = category_named(&chart, "Groceries").unwrap().clone();
    assert_eq!(
        (groceries["side"].clone(), groceries["standard"].clone()),
        (json!("expense"), json!(true))
    );
    assert!(groceries["transactions"].as_i64().unwrap() > 0, "{groceries}");
    let dining = category_named(&chart, "Dining").unwrap().clone();
    assert!(
        category_named(&chart, "Checking").is_none(),
        "an account that holds money is no category"
    );

    // A category of one's own: added, its name checked, renamed; a starting one keeps its name.
    let added = expect(
        &app.post(
            "/api/categories",
            json!({"name": "Coffee", "side": "expense"}),
            Some(&cookie),
        )
        .await,
        StatusCode::CREATED,
    );
    assert_eq!(
        (added["standard"].clone(), added["transactions"].clone()),
        (json!(false), json!(0))
    );
    let cafes_id = added["id"].as_str().unwrap().to_owned();
    for name in ["groceries", "", "Food: out", &"x".repeat(41)] {
        let refused = app
            .post(
                "/api/categories",
                json!({"name": name, "side": "expense"}),
                Some(&cookie),
            )
            .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{name}: {}",
            refused.body
        );
    }
    let renamed = expect(
        &app.request(
            Method::PATCH,
            &format!("/api/categories/{cafes_id}"),
            Some(json!({"name": "Cafés"})),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(renamed["name"], "Cafés");
    let kept = app
        .request(
            Method::PATCH,
            &format!("/api/categories/{}", groceries["id"].as_str().unwrap()),
            Some(json!({"name": "Food"})),
            Some(&cookie),
        )
        .await;
    assert_eq!(kept.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", kept.body);

    // Something on it: two Dining rows, a rule, a budget in a month Dining has one too and one
    // in a month it has none.
    let dining_rows = page(&app, &cookie, "category=Dining&from=2025-03-01&to=2025-03-31").await;
    let moved: Vec<String> = ids(&dining_rows).into_iter().take(2).collect();
    assert_eq!(moved.len(), 2, "{dining_rows}");
    for id in &moved {
        expect(
            &patch(&app, &cookie, id, json!({"category": "Cafés"})).await,
            StatusCode::OK,
        );
    }
    let rule = expect(
        &app.post(
            "/api/rules",
            json!({"pattern": "espresso bar", "category": "Cafés"}),
            Some(&cookie),
        )
        .await,
        StatusCode::CREATED,
    );
    assert_eq!(
        (rule["category"].clone(), rule["priority"].clone()),
        (json!("Cafés"), json!(100))
    );
    let put = |category: &str, month: &str, amount: i64| {
        app.request(
            Method::PUT,
            "/api/budgets",
            Some(json!({"category_id": category, "month": month, "amount_minor": amount})),
            Some(&cookie),
        )
    };
    let dining_id = dining["id"].as_str().unwrap();
    expect(&put(dining_id, "2025-03", 1_000_000).await, StatusCode::OK);
    expect(&put(&cafes_id, "2025-03", 250_000).await, StatusCode::OK);
    expect(&put(&cafes_id, "2025-04", 300_000).await, StatusCode::OK);
    let march_cafes = budget_line(&app, &cookie, "2025-03", "Cafés").await;
    assert_eq!(march_cafes["transactions"], 2, "{march_cafes}");
    let march_dining_before = budget_line(&app, &cookie, "2025-03", "Dining").await;

    // Merging a starting category away, into itself, or across sides is refused.
    for (from, into) in [
        (groceries["id"].as_str().unwrap(), dining_id),
        (cafes_id.as_str(), cafes_id.as_str()),
        (
            cafes_id.as_str(),
            category_named(&chart, "Salary").unwrap()["id"].as_str().unwrap(),
        ),
    ] {
        let refused = app
            .post(
                &format!("/api/categories/{from}/merge"),
                json!({"into": into}),
                Some(&cookie),
            )
            .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.body
        );
    }

    // The merge: one recorded edit; the rows, the rule and the budgets are Dining's now.
    let merged = expect(
        &app.post(
            &format!("/api/categories/{cafes_id}/merge"),
            json!({"into": dining_id}),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(merged["kind"], "merge");
    assert!(
        merged["summary"]
            .as_str()
            .unwrap()
            .starts_with("Merged Cafés into Dining: 2 rows, 1 rule, 2 budgets"),
        "{merged}"
    );
    let after = expect(&app.get("/api/categories", Some(&cookie)).await, StatusCode::OK);
    assert!(category_named(&after, "Cafés").is_none());
    let now = page(&app, &cookie, "category=Dining&from=2025-03-01&to=2025-03-31").await;
    assert_eq!(now["total"], dining_rows["total"], "{now}");
    let rules = expect(&app.get("/api/rules", Some(&cookie)).await, StatusCode::OK);
    assert_eq!(rules["rules"][0]["category"], "Dining", "{rules}");
    let march_dining = budget_line(&app, &cookie, "2025-03", "Dining").await;
    assert_eq!(
        march_dining["budget"]["amount_minor"], 1_250_000,
        "two budgets of a month add up"
    );
    let spent = |line: &Value| line["spent"][0]["amount_minor"].as_i64().unwrap();
    assert_eq!(
        spent(&march_dining),
        spent(&march_dining_before) + spent(&march_cafes),
        "the merge moves no money"
    );
    assert_eq!(
        budget_line(&app, &cookie, "2025-04", "Dining").await["budget"]["amount_minor"],
        300_000
    );

    // Reverted: everything as it was before the merge, the category under its own id.
    let reverted = expect(
        &app.post_empty(
            &format!("/api/edits/{}/revert", merged["id"].as_str().unwrap()),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(reverted["kind"], "revert");
    let back = expect(&app.get("/api/categories", Some(&cookie)).await, StatusCode::OK);
    let cafes = category_named(&back, "Cafés").expect("the category is back");
    assert_eq!(cafes["id"], cafes_id.as_str());
    assert_eq!(
        (
            cafes["transactions"].clone(),
            cafes["rules"].clone(),
            cafes["budgets"].clone()
        ),
        (json!(2), json!(1), json!(2))
    );
    let dining_again = page(&app, &cookie, "category=Dining&from=2025-03-01&to=2025-03-31").await;
    assert_eq!(
        dining_again["total"].as_i64().unwrap(),
        dining_rows["total"].as_i64().unwrap() - 2
    );
    assert_eq!(
        expect(&app.get("/api/rules", Some(&cookie)).await, StatusCode::OK)["rules"][0]["category"],
        "Cafés"
    );
    assert_eq!(
        budget_line(&app, &cookie, "2025-03", "Dining").await["budget"]["amount_minor"],
        1_000_000
    );
    assert_eq!(
        budget_line(&app, &cookie, "2025-03", "Cafés").await["budget"]["amount_minor"],
        250_000
    );
    // A revert of the revert is refused: merge again instead.
    let twice = app
        .post_empty(
            &format!("/api/edits/{}/revert", reverted["id"].as_str().unwrap()),
            Some(&cookie),
        )
        .await;
    assert!(twice.status.is_client_error(), "{}", twice.body);

    // Another visitor reaches none of it.
    let (stranger, _) = app.visitor("hello").await;
    assert!(
        category_named(
            &expect(&app.get("/api/categories", Some(&stranger)).await, StatusCode::OK),
            "Cafés"
        )
        .is_none()
    );
    let theirs = app
        .request(
            Method::PATCH,
            &format!("/api/categories/{cafes_id}"),
            Some(json!({"name": "Mine"})),
            Some(&stranger),
        )
        .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{}", theirs.body);
    let stranger_dining = category_named(
        &expect(&app.get("/api/categories", Some(&stranger)).await, StatusCode::OK),
        "Dining",
    )
    .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for (from, into) in [
        (cafes_id.as_str(), stranger_dining.as_str()),
        (stranger_dining.as_str(), dining_id),
    ] {
        let refused = app
            .post(
                &format!("/api/categories/{from}/merge"),
                json!({"into": into}),
                Some(&stranger),
            )
            .await;
        assert!(
            matches!(
                refused.status,
                StatusCode::NOT_FOUND | StatusCode::UNPROCESSABLE_ENTITY
            ),
            "{}",
            refused.body
        );
    }
    let rule_id = rule["id"].as_str().unwrap();
    assert_eq!(
        app.delete(&format!("/api/rules/{rule_id}"), Some(&stranger))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let put_theirs = app
        .request(
            Method::PUT,
            "/api/budgets",
            Some(json!({"category_id": cafes_id, "month": "2025-05", "amount_minor": 1})),
            Some(&stranger),
        )
        .await;
    assert_eq!(put_theirs.status, StatusCode::NOT_FOUND, "{}", put_theirs.body);
    let budget_id = budget_line(&app, &cookie, "2025-03", "Cafés").await["budget"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        app.delete(&format!("/api/budgets/{budget_id}"), Some(&stranger))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        budget_line(&app, &cookie, "2025-03", "Cafés").await["budget"]["amount_minor"],
        250_000
    );
    expect(
        &app.delete(&format!("/api/budgets/{budget_id}"), Some(&cookie))
            .await,
        StatusCode::OK,
    );
    assert_eq!(
        budget_line(&app, &cookie, "2025-03", "Cafés").await["budget"],
        Value::Null
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_rule_is_previewed_on_past_rows_then_applied_as_one_edit_and_reverted(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    expect(
        &app.post(
            "/api/categories",
            json!({"name": "Market", "side": "expense"}),
            Some(&cookie),
        )
        .await,
        StatusCode::CREATED,
    );

    // A word of a grocery row: every row holding it is counted once, in one of three piles.
    let groceries = page(&app, &cookie, "category=Groceries").await;
    let word = groceries["rows"][0]["description"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_lowercase();
    let holding = page(&app, &cookie, &format!("q={}&per_page=200", urlencode(&word))).await;
    let like = expect(
        &app.post(
            "/api/rules/preview",
            json!({"pattern": word, "category": "market"}),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(like["category"], "Market");
    let (to_file, already, left_alone) = (
        like["to_file"].as_i64().unwrap(),
        like["already"].as_i64().unwrap(),
        like["left_alone"].as_i64().unwrap(),
    );
    assert!(to_file > 0, "{like}");
    assert_eq!(
        to_file + already + left_alone,
        holding["total"].as_i64().unwrap(),
        "{like}"
    );
    assert_eq!(
        i64::try_from(like["rows"].as_array().unwrap().len()).unwrap(),
        to_file.min(100)
    );
    assert!(
        like["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["category"] != "Market")
    );
    // A preview changes nothing.
    assert_eq!(page(&app, &cookie, "category=Market").await["total"], 0);

    // Bad input is refused in words.
    for (pattern, category) in [
        ("", "Market"),
        ("x", "Market"),
        (word.as_str(), "Nowhere"),
        (word.as_str(), "Checking"),
    ] {
        let refused = app
            .post(
                "/api/rules/preview",
                json!({"pattern": pattern, "category": category}),
                Some(&cookie),
            )
            .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{pattern}/{category}: {}",
            refused.body
        );
    }

    // Applied: one edit; the rows are Market's; nothing else moved.
    let applied = expect(
        &app.post(
            "/api/rules/apply",
            json!({"pattern": word, "category": "Market"}),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(applied["kind"], "apply_rule");
    assert_eq!(
        page(&app, &cookie, "category=Market").await["total"]
            .as_i64()
            .unwrap(),
        to_file
    );
    let again = expect(
        &app.post(
            "/api/rules/preview",
            json!({"pattern": word, "category": "Market"}),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(
        (
            again["to_file"].as_i64().unwrap(),
            again["already"].as_i64().unwrap()
        ),
        (0, already + to_file)
    );
    let nothing = app
        .post(
            "/api/rules/apply",
            json!({"pattern": word, "category": "Market"}),
            Some(&cookie),
        )
        .await;
    assert_eq!(
        nothing.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        nothing.body
    );

    // The rule itself: saved, listed with its rows, changed, deleted.
    let rule = expect(
        &app.post(
            "/api/rules",
            json!({"pattern": word, "category": "Market", "priority": 5}),
            Some(&cookie),
        )
        .await,
        StatusCode::CREATED,
    );
    assert_eq!(
        rule["matches"].as_i64().unwrap(),
        holding["total"].as_i64().unwrap()
    );
    let twin = app
        .post(
            "/api/rules",
            json!({"pattern": word.to_uppercase(), "category": "Market"}),
            Some(&cookie),
        )
        .await;
    assert_eq!(twin.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", twin.body);
    let rule_id = rule["id"].as_str().unwrap();
    let changed = expect(
        &app.request(
            Method::PATCH,
            &format!("/api/rules/{rule_id}"),
            Some(json!({"pattern": word, "category": "Groceries", "priority": 7})),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(
        (changed["category"].clone(), changed["priority"].clone()),
        (json!("Groceries"), json!(7))
    );
    expect(
        &app.delete(&format!("/api/rules/{rule_id}"), Some(&cookie)).await,
        StatusCode::OK,
    );
    assert_eq!(
        app.delete(&format!("/api/rules/{rule_id}"), Some(&cookie))
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    // Reverted: the rows are back in their categories.
    expect(
        &app.post_empty(
            &format!("/api/edits/{}/revert", applied["id"].as_str().unwrap()),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(page(&app, &cookie, "category=Market").await["total"], 0);
    let restored = expect(
        &app.post(
            "/api/rules/preview",
            json!({"pattern": word, "category": "Market"}),
            Some(&cookie),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(restored["to_file"].as_i64().unwrap(), to_file);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_months_budgets_show_what_was_spent_traced_to_its_rows(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;

    let view = expect(
        &app.get("/api/budgets?month=2025-03", Some(&cookie)).await,
        StatusCode::OK,
    );
    assert_eq!(
        (view["from"].clone(), view["to"].clone()),
        (json!("2025-03-01"), json!("2025-03-31"))
    );
    let lines = view["lines"].as_array().unwrap();
    assert!(
        lines.iter().all(|l| l["category"] != "Salary"),
        "income takes no budget: {view}"
    );
    // Every spent figure is the sum of the register's rows behind it.
    let mut checked = 0;
    for line in lines.iter().filter(|l| l["transactions"].as_i64().unwrap() > 0) {
        let rows = page(
            &app,
            &cookie,
            &format!(
                "category={}&from=2025-03-01&to=2025-03-31&per_page=200",
                urlencode(line["category"].as_str().unwrap())
            ),
        )
        .await;
        assert_eq!(rows["total"], line["transactions"], "{line}");
        let spent: i64 = rows["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| -r["amount_minor"].as_i64().unwrap())
            .sum();
        assert_eq!(
            line["spent"][0]["amount_minor"].as_i64().unwrap(),
            spent,
            "{line}"
        );
        checked += 1;
    }
    assert!(checked >= 3, "{view}");

    // Set, changed, refused for income and nonsense.
    let groceries = lines.iter().find(|l| l["category"] == "Groceries").unwrap()["category_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let set = |body: Value| app.request(Method::PUT, "/api/budgets", Some(body), Some(&cookie));
    let first = expect(
        &set(json!({"category_id": groceries, "month": "2025-03", "amount_minor": 900_000})).await,
        StatusCode::OK,
    );
    assert_eq!(first["currency"], view["currency"]);
    let second = expect(
        &set(
            json!({"category_id": groceries, "month": "2025-03", "amount_minor": 800_000, "currency": "eur"}),
        )
        .await,
        StatusCode::OK,
    );
    assert_eq!(
        (second["id"].clone(), second["currency"].clone()),
        (first["id"].clone(), json!("EUR"))
    );
    let line = budget_line(&app, &cookie, "2025-03", "Groceries").await;
    assert_eq!(line["budget"]["amount_minor"], 800_000);
    assert_eq!(
        expect(
            &app.get("/api/budgets?month=2025-03", Some(&cookie)).await,
            StatusCode::OK
        )["lines"][0]["category"],
        "Groceries",
        "a budgeted category comes first"
    );
    let chart = expect(&app.get("/api/categories", Some(&cookie)).await, StatusCode::OK);
    let salary = category_named(&chart, "Salary").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for body in [
        json!({"category_id": salary, "month": "2025-03", "amount_minor": 1}),
        json!({"category_id": groceries, "month": "2025-13", "amount_minor": 1}),
        json!({"category_id": groceries, "month": "2025-03", "amount_minor": -1}),
        json!({"category_id": groceries, "month": "2025-03", "amount_minor": 1, "currency": "EURO"}),
    ] {
        let refused = set(body.clone()).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            refused.body
        );
    }
    // Without a month: the month of the newest transaction.
    let newest = page(&app, &cookie, "").await["rows"][0]["date"].as_str().unwrap()[..7].to_owned();
    assert_eq!(
        expect(&app.get("/api/budgets", Some(&cookie)).await, StatusCode::OK)["month"],
        newest.as_str()
    );
    assert_eq!(
        app.get("/api/budgets?month=March", Some(&cookie)).await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        app.get("/api/budgets", None).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn books_without_a_home_currency_take_a_budget_only_in_a_named_currency(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _) = app.visitor("hello").await;
    let owner = app.visitor_of(&cookie).await["id"].as_str().unwrap().to_owned();
    sqlx::query("UPDATE users SET home_currency = NULL WHERE id = $1::uuid")
        .bind(&owner)
        .execute(state.owner_pool.get())
        .await
        .unwrap();

    let view = expect(
        &app.get("/api/budgets?month=2025-03", Some(&cookie)).await,
        StatusCode::OK,
    );
    assert_eq!(view["currency"], Value::Null, "no currency is guessed: {view}");
    let category = view["lines"][0]["category_id"].as_str().unwrap().to_owned();
    let put = |currency: Option<&str>| {
        let mut body = json!({"category_id": category, "month": "2025-03", "amount_minor": 500_000});
        if let Some(code) = currency {
            body["currency"] = json!(code);
        }
        app.request(Method::PUT, "/api/budgets", Some(body), Some(&cookie))
    };
    let refused = put(None).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert!(
        refused.json()["error"]
            .as_str()
            .unwrap()
            .contains("no home currency"),
        "{}",
        refused.body
    );
    let set = expect(&put(Some("EUR")).await, StatusCode::OK);
    assert_eq!(set["currency"], "EUR");
}
