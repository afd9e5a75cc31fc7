//! Shared by the database tests: a second pool on the per-test database as `app_user`, and
//! visitors to own rows.

#![allow(dead_code, clippy::expect_used)]

use std::str::FromStr;

use kakeibo_ledger::{DEV_OWNER, OwnerId, seed, with_owner};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use uuid::Uuid;

/// A pool on the same database as `owner_options`, logged in as `app_user` (the credentials of
/// `APP_DATABASE_URL`, which `cargo xtask test` sets).
pub async fn app_pool(owner_options: &PgConnectOptions) -> PgPool {
    let url = std::env::var("APP_DATABASE_URL")
        .expect("APP_DATABASE_URL is unset: run the suite with `cargo xtask test`");
    let database = owner_options
        .get_database()
        .expect("the test database has a name");
    let options = PgConnectOptions::from_str(&url)
        .expect("APP_DATABASE_URL parses")
        .database(database);
    PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .expect("app_user connects")
}

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
