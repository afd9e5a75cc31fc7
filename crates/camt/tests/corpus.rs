//! Every camt file of the statements corpus, read and checked twice: against values established
//! by reading each file, and against an independent reading by Python's own XML parser and a few
//! lines of path matching (`xpath_read.py`), entry by entry: the booked entries' signed amounts,
//! currencies, booking dates and `AcctSvcrRef`, the pending ones kept out, the closing balance.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use std::path::{Path, PathBuf};

use kakeibo_money::{Currency, Money};
use kakeibo_statement::{ImportError, ParseOptions, Parsed, StatementFormat, sniff};

/// (file, booked rows, sum in minor units, pending, closing booked balance checked).
const EXPECTED: [(&str, usize, i64, usize, Option<i64>); 7] = [
    ("genkgo__camt__camt052.v4.xml", 0, 0, 1, None),
    (
        "genkgo__camt__camt053.v2.all-balance-types.xml",
        1,
        885,
        0,
        Some(404),
    ),
    (
        "genkgo__camt__camt053.v2.five.decimals.xml",
        1,
        885,
        0,
        Some(2705),
    ),
    // Its closing balance is in SEK, the account's other balances in EUR: not checked.
    ("genkgo__camt__camt053.v8.xml", 1, 885, 0, None),
    ("genkgo__camt__camt054.v2.xml", 1, -20_000_000, 0, None),
    ("genkgo__camt__camt53.only-Dt-with-DtTm.xml", 0, 0, 0, None),
    (
        "newinnovations__camt053__example-camt053-b.xml",
        19,
        7547,
        0,
        Some(-84_361_073),
    ),
];

fn read(bytes: &[u8]) -> Result<Vec<Parsed>, ImportError> {
    let sniffed = sniff(bytes);
    assert!(
        matches!(sniffed.format, StatementFormat::Camt { .. }),
        "{sniffed:?}"
    );
    let one = |statement| {
        let options = ParseOptions {
            statement,
            ..ParseOptions::default()
        };
        kakeibo_camt::parse(bytes, sniffed.format, &sniffed.why, &options)
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
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xpath_read.py");
    kakeibo_testkit::corpus::python_lines("the camt cross-read", &script, paths).map(|lines| {
        lines
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    })
}

#[test]
fn every_camt_file_of_the_corpus_reads_as_its_bytes_say_and_as_python_reads_it() {
    let Some(paths) =
        kakeibo_testkit::corpus::statement_files(&["camt"], "the camt reader over the statements corpus")
    else {
        return;
    };
    assert_eq!(
        paths.len(),
        EXPECTED.len(),
        "a new camt file: read it and add what it holds"
    );
    let theirs = independent(&paths);
    let mut table = Vec::new();
    for (index, path) in paths.iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (_, rows, sum, pending, closing) = *EXPECTED.iter().find(|e| e.0 == name).expect("expected");
        let bytes = std::fs::read(path).unwrap();
        let statements = read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let [parsed] = statements.as_slice() else {
            panic!("{name}: {} statements", statements.len())
        };
        let got_sum: i64 = parsed.rows.iter().map(|r| r.amount_minor).sum();
        let got_pending = parsed
            .skipped
            .iter()
            .filter(|s| s.message.starts_with("pending"))
            .count();
        assert_eq!(
            (parsed.rows.len(), got_sum, got_pending),
            (rows, sum, pending),
            "{name}"
        );
        assert!(parsed.errors.is_empty(), "{name}: {:?}", parsed.errors);
        let info = parsed.format.statement.as_ref().unwrap();
        assert_eq!(
            info.closing.map(|c| c.held_minor),
            closing,
            "{name}: closing balance"
        );
        assert_eq!(
            parsed.lines.accounted(),
            parsed.lines.total,
            "{name}: {:?}",
            parsed.lines
        );
        let cross = theirs.as_ref().map_or_else(
            || "not run".to_owned(),
            |all| cross_read(&name, parsed, &all[index]),
        );
        table.push(format!(
            "| {name} | {} | {rows} booked, {pending} pending, closing {} | {cross} |",
            sniff(&bytes).format,
            closing.map_or_else(
                || "not checked".to_owned(),
                |c| Money::new(c, info.currency.unwrap_or(Currency::EUR)).format()
            )
        ));
    }
    println!(
        "| file | format | kakeibo | Python's XML parser |\n|---|---|---|---|\n{}",
        table.join("\n")
    );
}

fn cross_read(name: &str, parsed: &Parsed, theirs: &serde_json::Value) -> String {
    let statements = theirs["statements"].as_array().unwrap();
    let [statement] = statements.as_slice() else {
        panic!("{name}: {statements:?}")
    };
    let mut want: Vec<(i64, String, String, String)> = statement["booked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let currency: Currency = b["currency"].as_str().unwrap().parse().unwrap();
            let amount = Money::parse_exact(b["amount"].as_str().unwrap(), currency)
                .unwrap()
                .amount_minor;
            (
                amount,
                currency.to_string(),
                b["date"].as_str().unwrap().to_owned(),
                b["ref"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut got: Vec<(i64, String, String, String)> = parsed
        .rows
        .iter()
        .map(|r| {
            (
                r.amount_minor,
                r.currency.to_string(),
                r.date.to_string(),
                r.bank_ref.clone().unwrap_or_default(),
            )
        })
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "{name}: booked entries");
    let pending = statement["pending"].as_u64().unwrap();
    let account = statement["account"].as_str().unwrap();
    let info = parsed.format.statement.as_ref().unwrap();
    assert_eq!(
        info.account.as_ref().map(|a| a.id.as_str()),
        Some(account),
        "{name}: account"
    );
    format!("agrees: {} booked entries, {pending} pending", got.len())
}
