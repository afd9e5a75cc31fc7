//! kakeibo-testdb: what the database tests share. Each `#[sqlx::test]` gets a database of its own
//! as the owner role; these give the same database as `app_user` (row-level security applies),
//! as a pool or as a URL for a child process, the owner role's pool, new visitors, and the demo
//! ledger. A dev-dependency only: it panics on what a test did not expect.

#![allow(clippy::expect_used)]

use std::str::FromStr;

use kakeibo_ledger::{DEV_OWNER, OwnerId, seed, with_owner};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use uuid::Uuid;

/// `APP_DATABASE_URL`, which `cargo xtask test` sets: the `app_user` role's credentials.
fn app_database_url() -> String {
    std::env::var("APP_DATABASE_URL")
        .expect("APP_DATABASE_URL is unset: run the suite with `cargo xtask test`")
}

/// The `app_user` connection options for the database of `owner_options`.
pub fn app_options(owner_options: &PgConnectOptions) -> PgConnectOptions {
    let database = owner_options
        .get_database()
        .expect("the test database has a name");
    PgConnectOptions::from_str(&app_database_url())
        .expect("APP_DATABASE_URL parses")
        .database(database)
}

/// A pool on the same database as `owner_options`, logged in as `app_user`.
pub async fn app_pool(owner_options: &PgConnectOptions) -> PgPool {
    PgPoolOptions::new()
        .max_connections(2)
        .connect_with(app_options(owner_options))
        .await
        .expect("app_user connects")
}

/// The `app_user` URL of the database of `owner_options`, for a program the test starts
/// (`APP_DATABASE_URL` with the test's database in its path, its query kept).
pub fn app_url(owner_options: &PgConnectOptions) -> String {
    let url = app_database_url();
    let database = owner_options
        .get_database()
        .expect("the test database has a name");
    let (base, query) = url
        .split_once('?')
        .map_or((url.as_str(), None), |(b, q)| (b, Some(q)));
    let (server, _) = base.rsplit_once('/').expect("APP_DATABASE_URL names a database");
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

/// The owner role's pool on the test's database.
pub async fn owner_pool(options: PgPoolOptions, connect: PgConnectOptions) -> PgPool {
    options
        .max_connections(4)
        .connect_with(connect)
        .await
        .expect("owner role connects")
}

/// A new user row (as the owner role), returned as its owner id.
pub async fn new_user(pool: &PgPool) -> OwnerId {
    let id: Uuid = sqlx::query_scalar("INSERT INTO users (is_anonymous) VALUES (true) RETURNING id")
        .fetch_one(pool)
        .await
        .expect("user row");
    OwnerId::new(id)
}

/// The demo ledger (the seed generator's), loaded into the development owner's ledger as the
/// owner role.
pub async fn load_demo_ledger(owner_pool: &PgPool) {
    let data = seed::generate().expect("the seed generates");
    let rows =
        seed::read_transactions_csv(&seed::transactions_csv(&data).expect("seed CSV")).expect("seed rows");
    with_owner(DEV_OWNER, owner_pool, |conn| {
        Box::pin(async move { seed::load(DEV_OWNER, conn, "transactions.csv", &rows).await })
    })
    .await
    .expect("the demo ledger loads");
}

/// Previews and commits the statement `bytes` (named `name`, amounts in `currency` where it names
/// none) into `owner`'s `account`, in one transaction; the plan and the commit's report.
pub async fn import_statement(
    pool: &PgPool,
    owner: OwnerId,
    name: &str,
    bytes: &[u8],
    account: &str,
    currency: kakeibo_ledger::Currency,
) -> (kakeibo_ledger::import::Plan, kakeibo_ledger::import::CommitReport) {
    use kakeibo_ledger::import;
    let options = import::ParseOptions {
        currency: Some(currency),
        ..import::ParseOptions::default()
    };
    let parsed = import::parse(bytes, &options).expect("the statement reads");
    let mut tx = kakeibo_ledger::begin_for_owner(owner, pool)
        .await
        .expect("a transaction");
    let target = import::Target {
        account: Some(account.to_owned()),
        ..import::Target::default()
    };
    let (plan_id, plan) =
        import::plan_into(owner, &mut tx, name, &import::file_sha256(bytes), parsed, &target)
            .await
            .expect("the plan");
    let report = import::commit(owner, &mut tx, plan_id, &mut |_, _| {})
        .await
        .expect("the commit");
    tx.commit().await.expect("committed");
    (plan, report)
}

/// The latest row of `owner` described `description` that waits in transit, as the balances
/// report lists it: its transaction and amount.
pub async fn in_transit(pool: &PgPool, owner: OwnerId, description: &str) -> (Uuid, i64) {
    let mut conn = pool.acquire().await.expect("a connection");
    let found = kakeibo_ledger::balances(owner, &mut conn, 1)
        .await
        .expect("the balances");
    let row = found
        .in_transit
        .iter()
        .filter(|t| t.description == description)
        .max_by_key(|t| t.date)
        .unwrap_or_else(|| panic!("{description} is not in transit: {:?}", found.in_transit));
    (row.transaction_id, row.amount_minor)
}
