//! `kakeibo export` and `kakeibo import FILE.json` as a person runs them: the demo ledger out as
//! JSON and back into an empty ledger, every report's `--json` byte for byte the same; while the
//! original still exists, the restore is refused with a sentence and writes nothing.

use std::process::{Command, Output};

use sqlx::{ConnectOptions, PgPool};

fn kakeibo(args: &[&str], url: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kakeibo"))
        .args(args)
        .env("DATABASE_URL", url)
        .output()
        .unwrap()
}

fn ok(output: Output) -> String {
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    text
}

const REPORTS: [&[&str]; 5] = [
    &[
        "report",
        "spend",
        "--period",
        "2025-01-01..2025-06-30",
        "--by",
        "month",
        "--json",
    ],
    &["report", "budget", "--period", "2025-06", "--json"],
    &["report", "recurring", "--json"],
    &["report", "anomalies", "--period", "2025-04", "--json"],
    &["report", "accounts", "--json"],
];

fn reports(url: &str, owner: &str) -> Vec<String> {
    REPORTS
        .iter()
        .map(|args| {
            let mut args = args.to_vec();
            args.extend(["--owner", owner]);
            ok(kakeibo(&args, url))
        })
        .collect()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_json_export_restores_with_every_report_the_same(pool: PgPool) {
    let url = pool.connect_options().to_url_lossy().to_string();
    let dev = kakeibo_ledger::DEV_OWNER.as_uuid().to_string();
    ok(kakeibo(&["seed", "--db"], &url));
    sqlx::query(
        "INSERT INTO budgets (owner_id, account_id, month, amount_minor, currency)
         SELECT owner_id, id, '2025-06', 2000000, 'INR' FROM accounts WHERE owner_id = $1 AND name = 'Dining'",
    )
    .bind(kakeibo_ledger::DEV_OWNER.as_uuid())
    .execute(&pool)
    .await
    .unwrap();
    let before = reports(&url, &dev);
    assert!(before[1].contains("\"amount_minor\": 2000000"), "{}", before[1]);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("everything.json");
    let file = file.to_str().unwrap();
    let exported = kakeibo(&["export", "--format", "json", "--out", file], &url);
    assert!(exported.status.success());
    assert!(
        String::from_utf8_lossy(&exported.stderr).contains("352 transactions (704 postings)"),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );

    let other: uuid::Uuid =
        sqlx::query_scalar("INSERT INTO users (is_anonymous) VALUES (false) RETURNING id")
            .fetch_one(&pool)
            .await
            .unwrap();
    let other = other.to_string();
    let refused = kakeibo(&["import", file, "--owner", &other], &url);
    assert_eq!(refused.status.code(), Some(1));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("would collide") && said.contains("Nothing was written"),
        "{said}"
    );

    // A .json that is not kakeibo's export is refused as what it is, not read as a statement.
    let other_json = dir.path().join("bank.json");
    std::fs::write(&other_json, br#"{"transactions": []}"#).unwrap();
    let refused = kakeibo(&["import", other_json.to_str().unwrap(), "--owner", &other], &url);
    assert_eq!(refused.status.code(), Some(1));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("not a kakeibo JSON export"), "{said}");

    for table in ["transactions", "import_batches", "budgets", "accounts"] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM {table} WHERE owner_id = $1"
        )))
        .bind(kakeibo_ledger::DEV_OWNER.as_uuid())
        .execute(&pool)
        .await
        .unwrap();
    }
    let restored = ok(kakeibo(&["import", file, "--owner", &other], &url));
    assert!(restored.contains("352 transactions"), "{restored}");
    assert_eq!(reports(&url, &other), before);
}
