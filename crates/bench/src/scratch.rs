//! A scratch database for a benchmark: created on the server of `DATABASE_URL`, migrated, and
//! dropped at the end.

use std::str::FromStr;

use sqlx::{
    Connection, Executor, PgConnection, PgPool,
    migrate::Migrator,
    postgres::{PgConnectOptions, PgPoolOptions},
};

#[derive(Debug)]
pub struct Scratch {
    admin: PgConnection,
    name: String,
    pub pool: PgPool,
}

/// A database `kakeibo_bench_<what>_<pid>`, migrated by `migrator`, with a pool built from `pool`
/// (the product's own settings: `kakeibo_ledger::pool_options`).
pub async fn create(what: &str, pool: PgPoolOptions, migrator: &Migrator) -> Scratch {
    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL (run `cargo xtask bench`)");
    let options = PgConnectOptions::from_str(&url).unwrap();
    let name = format!("kakeibo_bench_{what}_{}", std::process::id());
    let mut admin = PgConnection::connect_with(&options).await.unwrap();
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .unwrap();
    // Migrated over a connection of its own: settings a migration gives the database apply to
    // connections opened after it, which every connection of the pool then is.
    let mut migrating = PgConnection::connect_with(&options.clone().database(&name))
        .await
        .unwrap();
    migrator.run(&mut migrating).await.unwrap();
    migrating.close().await.unwrap();
    let pool = pool.connect_with(options.database(&name)).await.unwrap();
    Scratch { admin, name, pool }
}

impl Scratch {
    /// The database's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    pub async fn drop_database(mut self) {
        self.pool.close().await;
        self.admin
            .execute(sqlx::AssertSqlSafe(format!("DROP DATABASE {}", self.name)))
            .await
            .unwrap();
    }
}
