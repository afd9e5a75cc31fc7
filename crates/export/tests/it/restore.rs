//! The JSON export read back: into an empty ledger every report is the same, byte for byte; the
//! export of the restored ledger is the export it came from; an export whose ids are still in
//! this database, a ledger that is not empty and a transaction that does not balance are refused
//! with a sentence, and nothing is written.

use kakeibo_export::{Format, Period, RestoreError, export, model::Export, read_export, restore};
use kakeibo_ledger::{DEV_OWNER, OwnerId};
use kakeibo_tools::{
    DetectRecurring, FlagAnomalies, GetBalances, GetBudgetStatus, GetSpendReport, Scope,
    anomalies::AnomaliesInput,
    balances::BalancesInput,
    recurring::RecurringInput,
    reports::{BudgetStatusInput, GroupBy, Period as ReportPeriod, SpendReportInput},
};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

use crate::household;

/// The spend (by category and by month), budget, recurring, anomaly and balance reports, as the
/// JSON `kakeibo report … --json` prints.
async fn reports(app: &PgPool, owner: OwnerId, month: &str) -> Vec<String> {
    let scope = || Scope::new(owner, app.clone());
    let json = |v: serde_json::Result<String>| v.unwrap();
    let mut out = Vec::new();
    for group_by in [GroupBy::Category, GroupBy::Month] {
        let input = SpendReportInput {
            period: ReportPeriod::Range {
                from: "2000-01-01".into(),
                to: "2099-12-31".into(),
            },
            group_by,
            include_income: true,
        };
        out.push(json(serde_json::to_string_pretty(
            &kakeibo_tools::ask(GetSpendReport(scope()), input).await.unwrap(),
        )));
    }
    let budget = BudgetStatusInput { month: month.into() };
    out.push(json(serde_json::to_string_pretty(
        &kakeibo_tools::ask(GetBudgetStatus(scope()), budget)
            .await
            .unwrap(),
    )));
    let recurring = kakeibo_tools::ask(DetectRecurring(scope()), RecurringInput::default())
        .await
        .unwrap();
    out.push(json(serde_json::to_string_pretty(&recurring)));
    let anomalies = AnomaliesInput { month: month.into() };
    out.push(json(serde_json::to_string_pretty(
        &kakeibo_tools::ask(FlagAnomalies(scope()), anomalies)
            .await
            .unwrap(),
    )));
    let balances = kakeibo_tools::ask(GetBalances(scope()), BalancesInput { months: None })
        .await
        .unwrap();
    out.push(json(serde_json::to_string_pretty(&balances)));
    out
}

async fn json_export(app: &PgPool, owner: OwnerId) -> Vec<u8> {
    let mut bytes = Vec::new();
    export(
        owner,
        app,
        Format::Json,
        Period::default(),
        &mut bytes,
        &mut |_| {},
    )
    .await
    .unwrap();
    bytes
}

/// The export as a value, without what differs between two exports of one ledger.
fn comparable(bytes: &[u8]) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    let object = value.as_object_mut().unwrap();
    object.remove("owner");
    object.remove("exported_at");
    value
}

async fn count(pool: &PgPool, table: &str, owner: OwnerId) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {table} WHERE owner_id = $1"
    )))
    .bind(owner.as_uuid())
    .fetch_one(pool)
    .await
    .unwrap()
}

/// A conversation with two messages, the run that answered it, a memory, and a budget.
async fn more_of_a_person(pool: &PgPool, owner: OwnerId, month: &str) {
    let o = owner.as_uuid();
    let conversation: uuid::Uuid =
        sqlx::query_scalar("INSERT INTO conversations (owner_id, title) VALUES ($1, 'June') RETURNING id")
            .bind(o)
            .fetch_one(pool)
            .await
            .unwrap();
    sqlx::query(
        "INSERT INTO conversation_messages (owner_id, conversation_id, seq, message) VALUES
         ($1, $2, 0, '{\"role\": \"user\", \"parts\": [{\"text\": \"How much in June?\"}]}'),
         ($1, $2, 1, '{\"role\": \"model\", \"parts\": [{\"text\": \"₹1,40,619.00\"}]}')",
    )
    .bind(o)
    .bind(conversation)
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO trace_runs (owner_id, conversation_id, provider, model, status, channel, iterations,
                                 input_tokens, output_tokens, cost_usd_est, question)
         VALUES ($1, $2, 'script', 'demo', 'ok', 'cli', 2, 1200, 80, 0.000123, 'How much in June?')",
    )
    .bind(o)
    .bind(conversation)
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO memories (owner_id, content, category) VALUES ($1, 'Rent is paid on the 2nd', 'habits')",
    )
    .bind(o)
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO budgets (owner_id, account_id, month, amount_minor, currency)
         SELECT $1, id, $2, 2500000, coalesce((SELECT home_currency FROM users WHERE id = $1), 'INR')
         FROM accounts WHERE owner_id = $1 AND name = 'Dining'
         ON CONFLICT DO NOTHING",
    )
    .bind(o)
    .bind(month)
    .execute(pool)
    .await
    .unwrap();
}

/// Deletes everything of `owner` (as "Delete everything" does), so the export's ids are free.
async fn delete_everything(pool: &PgPool, owner: OwnerId) {
    let mut tx = kakeibo_ledger::begin_for_owner(owner, pool).await.unwrap();
    kakeibo_ledger::seed::clear_ledger(owner, &mut tx).await.unwrap();
    for table in [
        "trace_runs",
        "conversation_messages",
        "conversations",
        "ledger_edits",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM {table} WHERE owner_id = $1"
        )))
        .bind(owner.as_uuid())
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
}

async fn round_trip(owner_pool: &PgPool, app: &PgPool, owner: OwnerId, month: &str) {
    more_of_a_person(owner_pool, owner, month).await;
    let before = reports(app, owner, month).await;
    let bytes = json_export(app, owner).await;
    let export: Export = read_export(bytes.as_slice()).unwrap();
    assert!(!export.transactions.is_empty() && !export.conversations.is_empty() && !export.runs.is_empty());

    // Into another owner while the original is still here: every id would collide.
    let other = kakeibo_testdb::new_user(owner_pool).await;
    let refused = restore(other, app, &export).await.unwrap_err();
    assert!(matches!(refused, RestoreError::Collides { .. }), "{refused}");
    assert!(refused.to_string().contains("Nothing was written"), "{refused}");
    assert_eq!(count(owner_pool, "accounts", other).await, 0);

    // A transaction that does not balance is refused before anything is written.
    let mut broken = export.clone();
    broken.transactions[0].postings[0].amount_minor += 1;
    let refused = restore(other, app, &broken).await.unwrap_err();
    assert!(matches!(refused, RestoreError::Unbalanced { .. }), "{refused}");

    delete_everything(owner_pool, owner).await;
    let restored = restore(other, app, &export).await.unwrap();
    assert_eq!(restored.transactions, export.transactions.len());
    assert_eq!(reports(app, other, month).await, before);
    assert_eq!(comparable(&json_export(app, other).await), comparable(&bytes));

    // Twice: the ledger is no longer empty.
    let refused = restore(other, app, &export).await.unwrap_err();
    assert!(matches!(refused, RestoreError::NotEmpty(n) if n > 0), "{refused}");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_demo_ledger_comes_back_with_every_report_the_same(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let owner_pool = kakeibo_testdb::owner_pool(options, connect.clone()).await;
    kakeibo_testdb::load_demo_ledger(&owner_pool).await;
    let app = kakeibo_testdb::app_pool(&connect).await;
    round_trip(&owner_pool, &app, DEV_OWNER, "2025-06").await;
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_household_comes_back_with_every_report_the_same(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let owner_pool = kakeibo_testdb::owner_pool(options, connect.clone()).await;
    let owner = household::build(&owner_pool).await;
    let app = kakeibo_testdb::app_pool(&connect).await;
    round_trip(&owner_pool, &app, owner, "2025-10").await;
}

#[test]
fn what_is_not_an_export_is_refused_with_a_sentence() {
    for (bytes, says) in [
        (&b"Date,Amount\n2025-01-01,3\n"[..], "not a kakeibo JSON export"),
        (&b"{\"format\": \"other\"}"[..], "not a kakeibo JSON export"),
    ] {
        let refused = read_export(bytes).unwrap_err();
        assert!(refused.to_string().contains(says), "{refused}");
    }
}
