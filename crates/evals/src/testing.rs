//! For the tests of the harness and of what runs it (feature `testing`): the repository's root
//! and a connection as `app_user` to the per-test database `#[sqlx::test]` made.

#![allow(clippy::expect_used, clippy::missing_panics_doc)]

use std::{path::PathBuf, str::FromStr};

use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

/// The repository's root (task files, scripts, fixtures), found at run time.
pub fn repo_root() -> PathBuf {
    kakeibo_testkit::workspace_root()
}

/// `APP_DATABASE_URL` (which `cargo xtask test` sets) with the test's database instead of its own.
pub fn app_url(connect: &PgConnectOptions) -> String {
    let url =
        std::env::var("APP_DATABASE_URL").expect("APP_DATABASE_URL is unset: run with `cargo xtask test`");
    let (server, _) = url.rsplit_once('/').expect("APP_DATABASE_URL names a database");
    format!(
        "{server}/{}",
        connect.get_database().expect("the test database has a name")
    )
}

/// A pool on the test's database as `app_user`.
pub async fn app_pool(connect: &PgConnectOptions) -> PgPool {
    let options = PgConnectOptions::from_str(&app_url(connect)).expect("APP_DATABASE_URL parses");
    PgPoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .expect("app_user connects")
}
