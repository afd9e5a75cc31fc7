//! `kakeibo seed` and `kakeibo migrate` as a user runs them: the real binary, real files, a real
//! database.

use std::process::{Command, Output};

use sqlx::{
    ConnectOptions, PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

fn kakeibo(args: &[&str], database_url: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kakeibo"));
    command.args(args).env_remove("DATABASE_URL");
    if let Some(url) = database_url {
        command.env("DATABASE_URL", url);
    }
    command.output().expect("kakeibo runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn seed_out_writes_the_committed_seed_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested/seed");
    let output = kakeibo(&["seed", "--out", out.to_str().unwrap()], None);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("352 rows"), "{}", stderr(&output));

    // The repository's seed/ is this command's output; regenerate it when the generator changes.
    let committed = kakeibo_testkit::workspace_root().join("seed");
    for name in ["transactions.csv", "labels.json", "rates.json"] {
        let generated = std::fs::read(out.join(name)).unwrap();
        let in_repo = std::fs::read(committed.join(name)).unwrap();
        assert!(
            generated == in_repo,
            "seed/{name} is stale: run `cargo run -p kakeibo-cli -- seed --out seed/`"
        );
    }
}

#[test]
fn seed_needs_a_target_and_migrate_needs_a_database() {
    let output = kakeibo(&["seed"], None);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--out"), "{}", stderr(&output));

    // Without DATABASE_URL the command looks for the embedded cluster of the checkout it runs in,
    // and says how to start it when there is none. (The README's tested blocks cover finding a
    // running one: `cargo xtask test` runs them with nothing exported.)
    let checkout = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(checkout.path().join("crates/xtask")).unwrap();
    std::fs::write(checkout.path().join("Cargo.toml"), "[workspace]\n").unwrap();
    std::fs::write(checkout.path().join("crates/xtask/Cargo.toml"), "[package]\n").unwrap();
    let in_checkout = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kakeibo"))
            .args(args)
            .env_remove("DATABASE_URL")
            .current_dir(checkout.path())
            .output()
            .unwrap()
    };
    let output = in_checkout(&["migrate"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("has no embedded cluster yet")
            && stderr(&output).contains("`cargo xtask db up`"),
        "{}",
        stderr(&output)
    );
    std::fs::create_dir_all(checkout.path().join(".pgdata/data")).unwrap();
    std::fs::write(checkout.path().join(".pgdata/data/PG_VERSION"), "17\n").unwrap();
    let output = in_checkout(&["report", "spend"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("is not running: start it with `cargo xtask db up`"),
        "{}",
        stderr(&output)
    );
    let help = in_checkout(&["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("embedded cluster of the checkout"), "{help}");

    let output = kakeibo(&["seed", "--reset"], None);
    assert_eq!(
        output.status.code(),
        Some(2),
        "--reset without --db is a usage error"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn seed_db_loads_once_and_reset_reloads(pool: PgPool) {
    let url = pool.connect_options().to_url_lossy().to_string();
    let transactions = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM transactions")
            .fetch_one(&pool)
            .await
            .unwrap()
    };

    let first = kakeibo(&["seed", "--db"], Some(&url));
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("352 transactions added (28 of them uncategorised), 0 already present"),
        "{}",
        stderr(&first)
    );
    assert_eq!(transactions().await, 352);

    let second = kakeibo(&["seed", "--db"], Some(&url));
    assert!(
        stderr(&second).contains("0 transactions added (0 of them uncategorised), 352 already present"),
        "{}",
        stderr(&second)
    );
    assert_eq!(transactions().await, 352);

    sqlx::query("DELETE FROM transactions WHERE description LIKE 'SWIGGY%'")
        .execute(&pool)
        .await
        .unwrap();
    let reset = kakeibo(&["seed", "--db", "--reset"], Some(&url));
    assert!(
        stderr(&reset).contains("352 transactions added"),
        "{}",
        stderr(&reset)
    );
    assert_eq!(transactions().await, 352);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn seed_db_from_a_broken_file_names_the_line_and_writes_nothing(pool: PgPool) {
    let url = pool.connect_options().to_url_lossy().to_string();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("transactions.csv"),
        "date,description,amount,category\n2025-01-01,CHAI POINT 1,-10.00,Dining\n2025-01-02,CHAI POINT 2,ten,Dining\n",
    )
    .unwrap();
    let output = kakeibo(
        &["seed", "--db", "--from", dir.path().to_str().unwrap()],
        Some(&url),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("line 3"), "{}", stderr(&output));
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(count, 0);

    let unknown_owner = kakeibo(
        &["seed", "--db", "--owner", "9e0c7f52-0000-4000-8000-000000000000"],
        Some(&url),
    );
    assert_eq!(unknown_owner.status.code(), Some(1));
    assert!(
        stderr(&unknown_owner).contains("no user"),
        "{}",
        stderr(&unknown_owner)
    );
}

#[sqlx::test(migrations = false)]
async fn migrate_applies_the_schema_and_is_idempotent(_: PgPoolOptions, connect: PgConnectOptions) {
    let url = connect.to_url_lossy().to_string();
    for _ in 0..2 {
        let output = kakeibo(&["migrate"], Some(&url));
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("database up to date"),
            "{}",
            stderr(&output)
        );
    }
    let pool = PgPool::connect_with(connect).await.unwrap();
    let dev_owner: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM users WHERE id = '00000000-0000-4000-8000-000000000001')",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(dev_owner);
}
