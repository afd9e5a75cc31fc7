//! Every statement file of the corpus (OFX, QFX, QBO, camt, MT940, QIF), each statement of it
//! through the plan and the commit into a ledger of its own, then again: the second import adds
//! nothing, every row of the first is a duplicate of the second, and the rows booked are the
//! rows read. A file the readers refuse is listed with its sentence.

use crate::common;

use common::{new_user, owner_pool};
use kakeibo_ledger::{
    Currency, OwnerId,
    import::{self, ImportError, ParseOptions},
};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

/// Statement `statement` of `bytes` planned and committed into `owner`'s ledger: the rows read,
/// the rows added and the rows the plan found in the ledger already.
async fn import_once(
    pool: &PgPool,
    owner: OwnerId,
    bytes: &[u8],
    statement: Option<usize>,
) -> (usize, usize, usize) {
    let options = ParseOptions {
        currency: Some(Currency::USD),
        statement,
        ..ParseOptions::default()
    };
    let read = import::parse(bytes, &options).unwrap().rows.len();
    let (plan, report) = crate::import_ofx::import_with(pool, owner, bytes, &options, None).await;
    (read, report.imported, plan.lines.duplicates)
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_corpus_statement_imports_once_and_again_adds_nothing(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let Some(paths) = crate::corpus::statement_files(
        &["camt", "mt940", "ofx1", "ofx2", "qfx", "qif"],
        "every statement of the corpus imported twice",
    ) else {
        return;
    };
    let pool = owner_pool(options, connect).await;
    let (mut statements, mut rows) = (0usize, 0usize);
    let mut table = Vec::new();
    for path in &paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let options = ParseOptions {
            currency: Some(Currency::USD),
            ..ParseOptions::default()
        };
        let count = match import::parse(&bytes, &options) {
            Ok(_) => 1,
            Err(ImportError::SeveralStatements { statements }) => statements.len(),
            Err(refused) => {
                table.push(format!("| {name} | refused: {refused} |"));
                continue;
            }
        };
        for n in 1..=count {
            let statement = (count > 1).then_some(n);
            let owner = new_user(&pool).await;
            let (read, added, _) = import_once(&pool, owner, &bytes, statement).await;
            let (_, again, duplicates) = import_once(&pool, owner, &bytes, statement).await;
            assert_eq!(added, read, "{name} #{n}: every row read is booked once");
            assert_eq!(
                (again, duplicates),
                (0, read),
                "{name} #{n}: a second import adds nothing"
            );
            table.push(format!(
                "| {name} #{n} | {read} rows; again: 0 added, {duplicates} duplicates |"
            ));
            statements += 1;
            rows += read;
        }
    }
    println!("{}", table.join("\n"));
    println!(
        "{statements} statements of {} files, {rows} rows, each imported twice",
        paths.len()
    );
    assert!(statements >= 20, "{statements} statements");
}
