//! What a statement preview may cost: the same statement with the same options reuses its plan
//! (nothing parsed twice) until the ledger changes; one of a visitor's previews runs at a time;
//! previews count against the visitor's and the address's daily quotas; a visitor keeps at most
//! a few plans. (How a preview shares the server with other visitors is measured by
//! `cargo xtask load --preview-storm`, not here.)

use crate::support;

use axum::http::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{ADDRESS_HEADER, Isolation, TestApp, state};
use uuid::Uuid;

const STATEMENT: &[u8] = b"Date,Description,Amount\n\
    2025-07-01,PREVIEW CAFE,-250.00\n\
    2025-07-02,PREVIEW BOOKS,-1200.50\n";

/// A visit with one upload: its cookie, its owner id and the upload's id.
async fn visit_with_upload(
    app: &TestApp,
    state: &kakeibo_api::State,
    bytes: &[u8],
) -> (String, Uuid, String) {
    let (cookie, _) = app.visitor("hello").await;
    let uploaded = app.upload(&cookie, "july.csv", bytes).await;
    assert_eq!(uploaded.status, StatusCode::CREATED, "{}", uploaded.body);
    let claims = state.sessions.verify(cookie.split_once('=').unwrap().1).unwrap();
    (
        cookie,
        claims.sub,
        uploaded.json()["id"].as_str().unwrap().to_owned(),
    )
}

async fn planned(state: &kakeibo_api::State, owner: Uuid) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM import_batches WHERE owner_id = $1 AND status = 'planned'")
        .bind(owner)
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_same_preview_reuses_its_plan_until_the_ledger_changes(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, owner, upload) = visit_with_upload(&app, &state, STATEMENT).await;
    let path = format!("/api/uploads/{upload}/preview");

    let first = app.preview(&cookie, &upload).await.json();
    assert_eq!(first["reused"], false);
    let again = app.preview(&cookie, &upload).await.json();
    assert_eq!(again["reused"], true);
    assert_eq!(again["plan_id"], first["plan_id"], "the same plan");
    assert_eq!(again["rows_to_add"], first["rows_to_add"]);
    assert_eq!(planned(&state, owner).await, 1);

    // Other options make another plan; the account's name matches as the ledger does.
    let in_usd = app
        .post(&path, json!({"currency": "USD"}), Some(&cookie))
        .await
        .json();
    assert_eq!(in_usd["reused"], false);
    assert_ne!(in_usd["plan_id"], first["plan_id"]);
    let checking = app
        .post(&path, json!({"account": "checking"}), Some(&cookie))
        .await
        .json();
    assert_eq!(checking["plan_id"], first["plan_id"], "Checking is checking");

    // A change to the ledger (a rule) makes the old plan stale: the next preview plans again.
    sqlx::query(
        "INSERT INTO rules (owner_id, pattern, account_id, priority)
         SELECT owner_id, 'PREVIEW CAFE', id, 1 FROM accounts WHERE owner_id = $1 AND name = 'Dining'",
    )
    .bind(owner)
    .execute(state.owner_pool.get())
    .await
    .unwrap();
    let after_rule = app.preview(&cookie, &upload).await.json();
    assert_eq!(after_rule["reused"], false);
    assert_ne!(after_rule["plan_id"], first["plan_id"]);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_visitor_keeps_a_bounded_number_of_plans(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, owner, upload) = visit_with_upload(&app, &state, STATEMENT).await;
    let path = format!("/api/uploads/{upload}/preview");
    let mut plans = Vec::new();
    for account in ["A1", "A2", "A3", "A4", "A5", "A6", "A7"] {
        let answer = app
            .post(
                &path,
                json!({"account": account, "currency": "INR"}),
                Some(&cookie),
            )
            .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        plans.push(answer.json()["plan_id"].as_str().unwrap().to_owned());
    }
    let kept = kakeibo_ledger::import::MAX_KEPT_PLANS;
    assert_eq!(planned(&state, owner).await, kept);
    let rows: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM import_plan_rows r WHERE r.owner_id = $1
         AND NOT EXISTS (SELECT 1 FROM import_batches b WHERE b.id = r.batch_id)",
    )
    .bind(owner)
    .fetch_one(state.owner_pool.get())
    .await
    .unwrap();
    assert_eq!(rows, 0, "a dropped plan's rows go with it");
    // The oldest went; the newest stay.
    for (i, plan) in plans.iter().enumerate() {
        let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM import_batches WHERE id = $1)")
            .bind(Uuid::parse_str(plan).unwrap())
            .fetch_one(state.owner_pool.get())
            .await
            .unwrap();
        let expected = i >= plans.len() - usize::try_from(kept).unwrap();
        assert_eq!(exists, expected, "plan {i}");
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn one_preview_of_a_visitors_runs_at_a_time(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, owner, upload) = visit_with_upload(&app, &state, STATEMENT).await;
    // A preview of this visitor's holds the lock (as one being read would).
    let mut holder = state.owner_pool.get().acquire().await.unwrap();
    sqlx::query("SELECT pg_advisory_lock(hashtextextended($1, 0))")
        .bind(format!("import preview|{owner}"))
        .execute(&mut *holder)
        .await
        .unwrap();
    let busy = app.preview(&cookie, &upload).await;
    assert_eq!(busy.status, StatusCode::CONFLICT, "{}", busy.body);
    assert!(
        busy.json()["error"]
            .as_str()
            .unwrap()
            .contains("being read right now")
    );
    // Another visitor is not held up by it.
    let (other, _, theirs) = visit_with_upload(&app, &state, STATEMENT).await;
    assert_eq!(app.preview(&other, &theirs).await.status, StatusCode::OK);
    sqlx::query("SELECT pg_advisory_unlock_all()")
        .execute(&mut *holder)
        .await
        .unwrap();
    let through = app.preview(&cookie, &upload).await;
    assert_eq!(through.status, StatusCode::OK, "{}", through.body);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_failed_preview_lets_the_next_one_run_at_once(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (cookie, _, good) = visit_with_upload(&app, &state, STATEMENT).await;
    let unreadable = app.upload(&cookie, "names.csv", b"name,colour\nx,y\n").await;
    let unreadable = unreadable.json()["id"].as_str().unwrap().to_owned();
    // A refused preview gives its lock back when it is refused, not when its connection is next
    // used: the next preview is never told one is running.
    for _ in 0..6 {
        let refused = app.preview(&cookie, &unreadable).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.body
        );
        let held: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
        assert_eq!(
            held, 0,
            "the refused preview's lock is given back with its answer"
        );
        let next = app.preview(&cookie, &good).await;
        assert_eq!(next.status, StatusCode::OK, "{}", next.body);
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn previews_count_against_the_visitor_and_the_address(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(
        &connect,
        Isolation::Rls,
        &[
            ("ANON_DAILY_MESSAGE_QUOTA", "2"),
            ("IP_DAILY_MESSAGE_QUOTA", "3"),
            ("CLIENT_ADDRESS_HEADER", ADDRESS_HEADER),
        ],
    )
    .await;
    let app = TestApp::new(&state);
    let per = kakeibo_operator::quota::PREVIEWS_PER_MESSAGE;
    let preview_from = |address: &'static str, cookie: String, upload: String| {
        let app = app.clone();
        async move {
            app.post_from(
                address,
                &format!("/api/uploads/{upload}/preview"),
                json!({}),
                Some(&cookie),
            )
            .await
        }
    };

    // A visitor: twice their messages times PREVIEWS_PER_MESSAGE, then 429 until midnight UTC.
    let (cookie, _, upload) = visit_with_upload(&app, &state, STATEMENT).await;
    for _ in 0..(2 * per) {
        let answer = preview_from("203.0.113.1", cookie.clone(), upload.clone()).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    }
    let refused = preview_from("203.0.113.1", cookie.clone(), upload.clone()).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{}", refused.body);
    assert!(refused.json()["error"].as_str().unwrap().contains("midnight UTC"));
    let wait: i64 = refused.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&wait), "{wait}");

    // An address: every visitor behind it together, three times its messages.
    let (second, _, theirs) = visit_with_upload(&app, &state, STATEMENT).await;
    let (third, _, others) = visit_with_upload(&app, &state, STATEMENT).await;
    let mut admitted = 0;
    for (cookie, upload) in [(&second, &theirs), (&third, &others)]
        .into_iter()
        .cycle()
        .take(usize::try_from(3 * per).unwrap() + 2)
    {
        let answer = preview_from("198.51.100.7", cookie.clone(), upload.clone()).await;
        if answer.status == StatusCode::OK {
            admitted += 1;
        } else {
            assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS, "{}", answer.body);
            assert!(answer.json()["error"].as_str().unwrap().contains("your network"));
        }
    }
    assert_eq!(admitted, 3 * per);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_file_of_several_statements_lists_them_and_reads_the_one_chosen(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let qbo = "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nCHARSET:1252\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\n\
        <BANKACCTFROM><BANKID>021000021<ACCTID>000555501234<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST>\n\
        <STMTTRN><TRNTYPE>POS<DTPOSTED>20251003<TRNAMT>-7.00<FITID>B1<NAME>LUNCH</STMTTRN>\n\
        </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1><CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>USD\n\
        <CCACCTFROM><ACCTID>4111000011112222</CCACCTFROM><BANKTRANLIST>\n\
        <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20251004<TRNAMT>-25.00<FITID>C1<NAME>BOOKS</STMTTRN>\n\
        <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20251005<TRNAMT>-12.00<FITID>C2<NAME>CINEMA</STMTTRN>\n\
        </BANKTRANLIST></CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1></OFX>\n";
    let (cookie, _, upload) = visit_with_upload(&app, &state, qbo.as_bytes()).await;
    let refused = app.preview(&cookie, &upload).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let body = refused.json();
    assert_eq!(body["reason"], "several_statements");
    assert_eq!(
        body["statements"],
        json!([
            "checking account …1234 (USD, 1 transaction)",
            "credit card …2222 (USD, 2 transactions)"
        ])
    );
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("july.csv holds 2 statements (accounts)"),
        "{body}"
    );
    let path = format!("/api/uploads/{upload}/preview");
    let card = app.post(&path, json!({"statement": 2}), Some(&cookie)).await;
    assert_eq!(card.status, StatusCode::OK, "{}", card.body);
    let card = card.json();
    assert_eq!(card["rows_to_add"], 2);
    assert_eq!(card["accounts"][0]["name"], "Credit Card …2222");
    let none = app.post(&path, json!({"statement": 3}), Some(&cookie)).await;
    assert_eq!(none.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", none.body);
    assert!(
        none.body.contains("there is no statement 3: the file holds 2"),
        "{}",
        none.body
    );
}
