//! A scratch database for a benchmark: created, migrated, and dropped at the end.

use std::str::FromStr;

use sqlx::{
    Connection, Executor, PgConnection, PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

pub struct Scratch {
    admin: PgConnection,
    name: String,
    pub pool: PgPool,
}

/// A migrated database `kakeibo_bench_<what>_<pid>` on the server of `DATABASE_URL`.
pub async fn create(what: &str, connections: u32) -> Scratch {
    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL (run `cargo xtask bench`)");
    let options = PgConnectOptions::from_str(&url).unwrap();
    let name = format!("kakeibo_bench_{what}_{}", std::process::id());
    let mut admin = PgConnection::connect_with(&options).await.unwrap();
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(connections)
        .connect_with(options.database(&name))
        .await
        .unwrap();
    kakeibo_ledger::migrate(&pool).await.unwrap();
    Scratch { admin, name, pool }
}

impl Scratch {
    pub async fn drop_database(mut self) {
        self.pool.close().await;
        self.admin
            .execute(sqlx::AssertSqlSafe(format!("DROP DATABASE {}", self.name)))
            .await
            .unwrap();
    }
}

/// A number from the environment, or the default.
pub fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
}
