//! Every QIF file of the statements corpus, read and checked twice: against values established by
//! reading each file, and against quiffen — an independent parser run in the suite's Python —
//! transaction by transaction (amount and date).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use std::path::{Path, PathBuf};

use kakeibo_money::{Currency, Money};
use kakeibo_statement::{DateOrder, ParseOptions, Parsed, StatementFormat, sniff};

/// What a file reads as: its rows, their sum in minor units and the rows moving no money; or the
/// words of its refusal.
type Outcome = Result<(usize, i64, usize), &'static str>;

/// Each file's outcome, read by eye.
const EXPECTED: [(&str, Outcome); 5] = [
    ("Gnucash__gnucash__ymd-apostrophe.qif", Ok((1, 1000, 0))),
    (
        "antoinejaussoin__rust-qif-parser__amex.qif",
        Ok((7, 15094 - 2058 - 5480 - 360 - 1699 - 10269 - 1068, 0)),
    ),
    (
        "antoinejaussoin__rust-qif-parser__wikipedia.qif",
        Ok((5, 6750 + 3200 - 1000 - 2500 - 10_000, 1)),
    ),
    (
        "antoinejaussoin__rust-qif-parser__wikipedia_investments.qif",
        Err("investment account"),
    ),
    ("isaacharrisholt__quiffen__test_split.qif", Ok((1, -1000, 0))),
];

fn read(bytes: &[u8]) -> Result<Parsed, kakeibo_statement::ImportError> {
    let sniffed = sniff(bytes);
    assert_eq!(sniffed.format, StatementFormat::Qif);
    let options = ParseOptions {
        currency: Some(Currency::USD),
        ..ParseOptions::default()
    };
    kakeibo_qif::parse(bytes, &sniffed.why, &options)
}

fn independent(paths: &[(PathBuf, DateOrder)]) -> Option<Vec<serde_json::Value>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/quiffen_read.py");
    let arguments = paths.iter().map(|(path, order)| {
        format!(
            "{}={}",
            path.display(),
            if *order == DateOrder::DayFirst {
                "dmy"
            } else {
                "mdy"
            }
        )
    });
    kakeibo_testkit::corpus::python_lines("quiffen", &script, arguments).map(|lines| {
        lines
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    })
}

#[test]
fn every_qif_file_of_the_corpus_reads_as_its_bytes_say_and_as_quiffen_reads_it() {
    let Some(paths) =
        kakeibo_testkit::corpus::statement_files(&["qif"], "the QIF reader over the statements corpus")
    else {
        return;
    };
    assert_eq!(
        paths.len(),
        EXPECTED.len(),
        "a new QIF file: read it and add what it holds"
    );
    let read_all: Vec<_> = paths.iter().map(|p| read(&std::fs::read(p).unwrap())).collect();
    let orders: Vec<(PathBuf, DateOrder)> = paths
        .iter()
        .zip(&read_all)
        .map(|(p, r)| {
            (
                p.clone(),
                r.as_ref().map_or(DateOrder::MonthFirst, |p| p.format.date_order),
            )
        })
        .collect();
    let theirs = independent(&orders);
    let mut table = Vec::new();
    for (index, (path, read)) in paths.iter().zip(&read_all).enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = EXPECTED.iter().find(|e| e.0 == name).expect("expected").1;
        let ours = match (read, want) {
            (Err(refusal), Err(words)) => {
                assert!(refusal.to_string().contains(words), "{name}: {refusal}");
                format!("refused: {refusal}")
            }
            (Ok(parsed), Ok((rows, sum, skipped))) => {
                let got: i64 = parsed.rows.iter().map(|r| r.amount_minor).sum();
                assert_eq!(
                    (parsed.rows.len(), got, parsed.skipped.len()),
                    (rows, sum, skipped),
                    "{name}"
                );
                assert!(parsed.errors.is_empty(), "{name}: {:?}", parsed.errors);
                assert_eq!(
                    parsed.lines.accounted(),
                    parsed.lines.total,
                    "{name}: {:?}",
                    parsed.lines
                );
                format!(
                    "{rows} rows, {skipped} moving no money, dates {}",
                    parsed.format.date_order.name()
                )
            }
            (read, want) => panic!("{name}: read {read:?}, expected {want:?}"),
        };
        let cross = theirs.as_ref().map_or_else(
            || "not run".to_owned(),
            |all| {
                let them = &all[index];
                if let Some(refused) = them["refused"].as_str() {
                    return format!("refuses: {refused}");
                }
                let Ok(parsed) = read else {
                    return "reads what kakeibo refuses".to_owned();
                };
                let mut want: Vec<(i64, String)> = them["transactions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| {
                        let minor = Money::parse_exact(t["amount"].as_str().unwrap(), Currency::USD)
                            .unwrap()
                            .amount_minor;
                        (minor, t["date"].as_str().unwrap().to_owned())
                    })
                    .filter(|(minor, _)| *minor != 0)
                    .collect();
                let mut got: Vec<(i64, String)> = parsed
                    .rows
                    .iter()
                    .map(|r| (r.amount_minor, r.date.to_string()))
                    .collect();
                want.sort();
                got.sort();
                assert_eq!(got, want, "{name}: transactions");
                format!("agrees: {} transactions", got.len())
            },
        );
        table.push(format!("| {name} | {ours} | {cross} |"));
    }
    println!(
        "| file | kakeibo | quiffen |\n|---|---|---|\n{}",
        table.join("\n")
    );
}
