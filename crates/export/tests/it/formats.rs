//! The CSV and the JSON: the CSV is RFC 4180 with one row per posting and no cell a spreadsheet
//! would run; the JSON matches its published schema (`schema/export.schema.json`).

use std::collections::BTreeMap;

use kakeibo_export::{CSV_COLUMNS, Format, Period, model::Export};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::{household, in_the_tools::write};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_csv_has_a_row_per_posting_and_no_formula(options: PgPoolOptions, connect: PgConnectOptions) {
    let owner_pool = kakeibo_testdb::owner_pool(options, connect.clone()).await;
    let owner = household::build(&owner_pool).await;
    let app = kakeibo_testdb::app_pool(&connect).await;
    let dir = tempfile::tempdir().unwrap();
    let path = write(&app, owner, Format::Csv, Period::default(), dir.path()).await;
    let bytes = std::fs::read(&path).unwrap();
    assert!(!bytes.starts_with(b"\xEF\xBB\xBF"));
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.ends_with("\r\n") && !text.replace("\r\n", "").contains("\n\n"));
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.headers().unwrap().iter().collect::<Vec<_>>(), CSV_COLUMNS);
    let postings: i64 = sqlx::query_scalar("SELECT count(*) FROM postings WHERE owner_id = $1")
        .bind(owner.as_uuid())
        .fetch_one(&owner_pool)
        .await
        .unwrap();
    let mut sums: BTreeMap<(String, String), i64> = BTreeMap::new();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.unwrap();
        rows += 1;
        *sums
            .entry((record[1].to_owned(), record[9].to_owned()))
            .or_default() += record[10].parse::<i64>().unwrap();
        for text_column in [3, 4, 5, 11, 12, 13] {
            assert!(
                !record[text_column].starts_with(['=', '+', '-', '@']),
                "{record:?}"
            );
        }
    }
    assert_eq!(rows, postings);
    assert!(sums.values().all(|s| *s == 0), "{sums:?}");
    assert!(text.contains(",'=GROCERY OUTLET #42,"), "{text}");
    // A line break inside a description stays inside its quoted cell.
    assert!(text.contains("\"(Zelle) to ANNA; dinner\nsplit\""), "{text}");
}

fn published_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Export)).unwrap()
}

/// The schema in `schema/export.schema.json` is the one the code has (write it anew with
/// `KAKEIBO_WRITE_SCHEMA=1`), and an export of a household is valid under it.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_json_matches_its_published_schema(options: PgPoolOptions, connect: PgConnectOptions) {
    let path = kakeibo_testkit::workspace_root().join("schema/export.schema.json");
    let schema = published_schema();
    let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
    if std::env::var("KAKEIBO_WRITE_SCHEMA").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} is not the schema of the export: write it anew with KAKEIBO_WRITE_SCHEMA=1 cargo test -p kakeibo-export --test it schema",
        path.display()
    );

    let owner_pool = kakeibo_testdb::owner_pool(options, connect.clone()).await;
    let owner = household::build(&owner_pool).await;
    let app = kakeibo_testdb::app_pool(&connect).await;
    let dir = tempfile::tempdir().unwrap();
    let path = write(&app, owner, Format::Json, Period::default(), dir.path()).await;
    let document: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&document).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let transactions: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions WHERE owner_id = $1")
        .bind(owner.as_uuid())
        .fetch_one(&owner_pool)
        .await
        .unwrap();
    assert_eq!(
        i64::try_from(document["transactions"].as_array().unwrap().len()).unwrap(),
        transactions
    );
}
