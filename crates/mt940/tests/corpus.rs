//! Every MT940/MT942 file of the statements corpus, read and checked twice: against values
//! established by reading each file, and against the mt-940 package — an independent parser run
//! in the suite's Python — transaction by transaction (signed amount and currency).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use std::path::{Path, PathBuf};

use kakeibo_money::{Currency, Money};
use kakeibo_statement::{ImportError, ParseOptions, Parsed, sniff};

/// (file, accounts, rows, sum of rows in minor units, pending, unreadable).
const EXPECTED: [(&str, usize, usize, i64, usize, usize); 6] = [
    (
        "svenstaro__mt940-rs__MT940_SE_Example.sta",
        1,
        103,
        1_052_839_560,
        0,
        0,
    ),
    ("svenstaro__mt940-rs__invalid_utf8.sta", 1, 7, -101_221_350, 0, 0),
    (
        "svenstaro__mt940-rs__sparkasse-buxtehude.sta",
        1,
        3,
        -14_104,
        0,
        0,
    ),
    (
        "wolph__mt940__betterplace-sepa_mt9401.sta",
        20,
        97,
        -926_913_590,
        0,
        0,
    ),
    ("wolph__mt940__self-provided-february_30.sta", 1, 1, -600, 0, 0),
    ("wolph__mt940__self-provided-mt942.sta", 1, 0, 0, 1, 0),
];

/// Test files whose own balances do not add up to their lines, as written (checked by hand).
const UNBALANCED: [&str; 2] = [
    "svenstaro__mt940-rs__invalid_utf8.sta",
    "svenstaro__mt940-rs__sparkasse-buxtehude.sta",
];

fn read(bytes: &[u8]) -> Result<Vec<Parsed>, ImportError> {
    let sniffed = sniff(bytes);
    let one = |statement| {
        let options = ParseOptions {
            statement,
            ..ParseOptions::default()
        };
        kakeibo_mt940::parse(bytes, sniffed.format, &sniffed.why, &options)
    };
    match one(None) {
        Ok(parsed) => Ok(vec![parsed]),
        Err(ImportError::SeveralStatements { statements }) => {
            (1..=statements.len()).map(|n| one(Some(n))).collect()
        }
        Err(other) => Err(other),
    }
}

fn independent(paths: &[PathBuf]) -> Option<Vec<serde_json::Value>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mt940_read.py");
    kakeibo_testkit::corpus::python_lines("mt-940", &script, paths).map(|lines| {
        lines
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    })
}

#[test]
fn every_mt940_file_of_the_corpus_reads_as_its_bytes_say_and_as_mt940_reads_it() {
    let Some(paths) =
        kakeibo_testkit::corpus::statement_files(&["mt940"], "the MT940 reader over the statements corpus")
    else {
        return;
    };
    assert_eq!(
        paths.len(),
        EXPECTED.len(),
        "a new MT940 file: read it and add what it holds"
    );
    let theirs = independent(&paths);
    let mut table = Vec::new();
    for (index, path) in paths.iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (_, accounts, rows, sum, pending, unreadable) =
            *EXPECTED.iter().find(|e| e.0 == name).expect("expected");
        let bytes = std::fs::read(path).unwrap();
        let statements = read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        if accounts > 0 {
            assert_eq!(statements.len(), accounts, "{name}: accounts");
        }
        let all_rows: Vec<&kakeibo_statement::ParsedRow> = statements.iter().flat_map(|p| &p.rows).collect();
        let got_sum: i64 = all_rows.iter().map(|r| r.amount_minor).sum();
        let got_pending: usize = statements
            .iter()
            .map(|p| {
                p.skipped
                    .iter()
                    .filter(|s| s.message.starts_with("pending"))
                    .count()
            })
            .sum();
        let got_unreadable: usize = statements.iter().map(|p| p.errors.len()).sum();
        assert_eq!(
            (all_rows.len(), got_sum, got_pending, got_unreadable),
            (rows, sum, pending, unreadable),
            "{name}: rows, sum, pending, unreadable: {:?}",
            statements.iter().flat_map(|p| &p.errors).collect::<Vec<_>>()
        );
        for parsed in &statements {
            assert_eq!(
                parsed.lines.accounted(),
                parsed.lines.total,
                "{name}: {:?}",
                parsed.lines
            );
            // Every message's opening balance plus its lines is its closing balance: the file's
            // own figures agree with how its lines were signed. Two test files' do not (one's lines
            // come to 24,158,423.60 from 25,170,637.10 where its closing says 25,281,687.60; the
            // other's to 13,423.09 where it says 13,523.09): that is said, not hidden.
            let notes = &parsed.format.statement.as_ref().unwrap().notes;
            let broken = notes.iter().any(|n| n.contains("not its closing balance"));
            assert_eq!(broken, UNBALANCED.contains(&name.as_str()), "{name}: {notes:?}");
        }
        let cross = theirs.as_ref().map_or_else(
            || "not run".to_owned(),
            |all| {
                let them = &all[index];
                if let Some(refused) = them["refused"].as_str() {
                    return format!("refuses: {refused}");
                }
                let mut want: Vec<(i64, String)> = them["transactions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| {
                        let currency: Currency = t["currency"].as_str().unwrap().parse().unwrap();
                        let minor = Money::parse_exact(t["amount"].as_str().unwrap(), currency)
                            .unwrap()
                            .amount_minor;
                        (minor, currency.to_string())
                    })
                    .collect();
                if pending > 0 {
                    assert_eq!(want.len(), pending, "{name}: the interim report's lines");
                    return format!("agrees: {pending} lines, pending here");
                }
                // mt-940 reads `RC` (a reversal of a credit) as a credit; SWIFT's definition, and
                // these files' own balances (checked above), make it a debit. Those lines are
                // compared turned, and counted in the table.
                let reversed_credit = |r: &kakeibo_statement::ParsedRow| {
                    r.description.starts_with("Reversal: ") && r.amount_minor < 0
                };
                let turned = all_rows.iter().filter(|r| reversed_credit(r)).count();
                let mut got: Vec<(i64, String)> = all_rows
                    .iter()
                    .map(|r| {
                        let minor = if reversed_credit(r) { -r.amount_minor } else { r.amount_minor };
                        (minor, r.currency.to_string())
                    })
                    .collect();
                want.sort();
                got.sort();
                assert_eq!(got, want, "{name}: transactions");
                if turned == 0 {
                    format!("agrees: {} transactions", got.len())
                } else {
                    format!(
                        "agrees: {} transactions, but reads the {turned} `RC` lines as credits (SWIFT, and the file's \
                         balances: debits)",
                        got.len()
                    )
                }
            },
        );
        table.push(format!(
            "| {name} | {} | {} statements, {rows} rows, {pending} pending | {cross} |",
            sniff(&bytes).format,
            statements.len()
        ));
    }
    println!(
        "| file | format | kakeibo | mt-940 |\n|---|---|---|---|\n{}",
        table.join("\n")
    );
}
