//! Every OFX, QFX and QBO file of the statements corpus, read and checked twice: against values
//! established by reading each file, and against ofxtools — an independent parser run in the
//! suite's Python — statement by statement and transaction by transaction (FITID, amount, the
//! calendar date as written). ofxtools is strict where banks are not: a file it refuses as written
//! is given to it with the non-spec bytes mended (said in its line of the table), and a file it
//! still refuses is checked against the read values alone.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use std::path::Path;

use kakeibo_money::{Currency, Money};
use kakeibo_statement::{ImportError, ParseOptions, Parsed, StatementFormat, sniff};

/// What one statement of a file holds, read by eye from the file.
struct Want {
    rows: usize,
    unreadable: usize,
    sum_minor: i64,
    currency: &'static str,
    closing: Option<(&'static str, i64)>,
    first: Option<(&'static str, i64, &'static str)>,
}

const fn want(
    rows: usize,
    sum_minor: i64,
    currency: &'static str,
    closing: Option<(&'static str, i64)>,
    first: Option<(&'static str, i64, &'static str)>,
) -> Want {
    Want {
        rows,
        unreadable: 0,
        sum_minor,
        currency,
        closing,
        first,
    }
}

/// Each file's statements, or the words its refusal must hold.
fn expected(name: &str) -> Result<Vec<Want>, &'static str> {
    Ok(match name {
        "actualbudget__actual__data-multi-decimal.ofx" => vec![want(
            2,
            -3377,
            "USD",
            None,
            Some(("2019-01-23", -3000, "PATIENT FIRST TOKEN 01/22 PURCHA")),
        )],
        "jseutter__ofxparse__bank_medium.ofx" => vec![want(
            3,
            -34527,
            "CAD",
            Some(("2009-05-23", 38234)),
            Some(("2009-04-01", -660, "MCDONALD'S #112")),
        )],
        "jseutter__ofxparse__fail_nice-decimal_error.ofx" => vec![Want {
            unreadable: 1,
            ..want(0, 0, "CAD", Some(("2011-06-14", 0)), None)
        }],
        "csingley__ofxtools__invstmtrs.ofx" => vec![want(
            1,
            100_000,
            "USD",
            None,
            Some(("2005-08-25", 100_000, "Customer deposit · Your check #1034")),
        )],
        "csingley__ofxtools__stmtrs_euro.ofx" => vec![want(
            2,
            -50_000,
            "USD",
            Some(("2005-10-29", 20029)),
            Some(("2005-10-04", -20_000, "CHECK 1000")),
        )],
        "jseutter__ofxparse__suncorp.ofx" => vec![want(
            1,
            -1685,
            "AUD",
            Some(("2013-12-15", 123_412)),
            Some((
                "2013-12-15",
                -1685,
                "EFTPOS WDL HANDYWAY ALDI STORE GEELONG WEST VICAU",
            )),
        )],
        "actualbudget__actual__8859-1.qfx" => vec![want(
            1,
            -2000,
            "CAD",
            Some(("2022-10-20", 999_999)),
            Some(("2022-10-19", -2000, "Paiement facture/Carte prépayée · PWW")),
        )],
        "actualbudget__actual__html-vals.qfx" => vec![want(
            2,
            -200,
            "CAD",
            Some(("2023-11-06", 111_111)),
            Some((
                "2023-05-09",
                -100,
                "PREAUTHORIZED DEBIT;B.C. HYDRO & POWER AUTHORITY;Electronic Funds Transfer",
            )),
        )],
        "beancount__beangulp__example.qbo" => vec![
            want(
                10,
                -12048,
                "CAD",
                Some(("2013-09-28", 36862)),
                Some(("2013-06-26", 10507, "MISC PAYMENT · QBZUKU VSLINMR")),
            ),
            want(4, -43782, "CAD", Some(("2013-09-28", 246_887)), None),
            want(9, -13351, "CAD", None, None),
        ],
        "beancount__beangulp__example.qfx" => return Err("holds only securities transactions (18)"),
        other => panic!("{other} is new to the corpus: read it and add what it holds"),
    })
}

/// Every statement of a file, read one at a time.
fn statements(bytes: &[u8]) -> Result<Vec<Parsed>, ImportError> {
    let sniffed = sniff(bytes);
    let StatementFormat::Ofx { syntax } = sniffed.format else {
        panic!("not OFX: {sniffed:?}");
    };
    let read = |statement| {
        let options = ParseOptions {
            statement,
            ..ParseOptions::default()
        };
        kakeibo_ofx::parse(bytes, syntax, &sniffed.why, &options)
    };
    match read(None) {
        Ok(one) => Ok(vec![one]),
        Err(ImportError::SeveralStatements { statements }) => {
            (1..=statements.len()).map(|n| read(Some(n))).collect()
        }
        Err(other) => Err(other),
    }
}

/// ofxtools' reading of each file, by path.
fn ofxtools(paths: &[std::path::PathBuf]) -> Option<Vec<serde_json::Value>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ofxtools_read.py");
    kakeibo_testkit::corpus::python_lines("ofxtools", &script, paths).map(|lines| {
        lines
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    })
}

#[test]
fn every_ofx_file_of_the_corpus_reads_as_its_bytes_say_and_as_ofxtools_reads_it() {
    let Some(paths) = kakeibo_testkit::corpus::statement_files(
        &["ofx1", "ofx2", "qfx"],
        "the OFX reader over the statements corpus",
    ) else {
        return;
    };
    let independent = ofxtools(&paths);
    let mut table = Vec::new();
    for (index, path) in paths.iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let read = statements(&bytes);
        let format = sniff(&bytes).format;
        let ours = match (&read, expected(&name)) {
            (Err(refusal), Err(words)) => {
                assert!(refusal.to_string().contains(words), "{name}: {refusal}");
                format!("refused: {refusal}")
            }
            (Ok(read), Ok(wants)) => {
                assert_eq!(read.len(), wants.len(), "{name}: statements");
                for (parsed, want) in read.iter().zip(&wants) {
                    let sum: i64 = parsed.rows.iter().map(|r| r.amount_minor).sum();
                    assert_eq!(
                        (parsed.rows.len(), parsed.errors.len(), sum),
                        (want.rows, want.unreadable, want.sum_minor),
                        "{name}: rows, unreadable, sum"
                    );
                    assert!(
                        parsed
                            .rows
                            .iter()
                            .all(|r| r.currency.as_str() == want.currency && !r.currency_unstated)
                    );
                    let closing = parsed
                        .format
                        .closing()
                        .map(|c| (c.date.to_string(), c.held_minor));
                    if let Some((date, minor)) = want.closing {
                        assert_eq!(closing, Some((date.to_owned(), minor)), "{name}: closing balance");
                    }
                    if let Some((date, minor, description)) = want.first {
                        let first = parsed.rows.first().unwrap();
                        assert_eq!(
                            (
                                first.date.to_string().as_str(),
                                first.amount_minor,
                                first.description.as_str()
                            ),
                            (date, minor, description),
                            "{name}: first row"
                        );
                    }
                    assert_eq!(
                        parsed.lines.accounted(),
                        parsed.lines.total,
                        "{name}: {:?}",
                        parsed.lines
                    );
                }
                read.iter()
                    .map(|p| {
                        let closing = p.format.closing().map_or_else(
                            || "no balance".to_owned(),
                            |c| {
                                let currency = p
                                    .format
                                    .statement
                                    .as_ref()
                                    .and_then(|s| s.currency)
                                    .unwrap_or(Currency::USD);
                                format!("closing {}", Money::new(c.held_minor, currency).format())
                            },
                        );
                        format!("{} rows, {} unreadable, {closing}", p.rows.len(), p.errors.len())
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            }
            (read, want) => panic!("{name}: read {read:?}, expected {:?}", want.map(|w| w.len())),
        };
        let theirs = independent.as_ref().map_or_else(
            || "ofxtools not run".to_owned(),
            |all| cross_read(&name, read.as_deref().unwrap_or(&[]), &all[index]),
        );
        table.push(format!("| {name} | {format} | {ours} | {theirs} |"));
    }
    println!(
        "| file | format | kakeibo | ofxtools |\n|---|---|---|---|\n{}",
        table.join("\n")
    );
}

/// Checks our statements against ofxtools' reading of the same file; its outcome in words.
fn cross_read(name: &str, ours: &[Parsed], theirs: &serde_json::Value) -> String {
    let mends = theirs["mends"]
        .as_array()
        .map(|m| m.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let mended = if mends.is_empty() {
        String::new()
    } else {
        format!(" (mended: {mends})")
    };
    if let Some(refused) = theirs["refused"].as_str() {
        return format!("refuses{mended}: {}", refused.lines().next().unwrap_or_default());
    }
    let statements = theirs["statements"].as_array().unwrap();
    let with_cash: Vec<&serde_json::Value> = statements
        .iter()
        .filter(|s| !s["transactions"].as_array().unwrap().is_empty() || !ours.is_empty())
        .collect();
    assert_eq!(
        with_cash.len(),
        ours.len(),
        "{name}: statements, ofxtools {statements:?}"
    );
    let mut transactions = 0;
    for (parsed, statement) in ours.iter().zip(with_cash) {
        let currency: Currency = statement["currency"].as_str().unwrap().parse().unwrap();
        let info = parsed.format.statement.as_ref().unwrap();
        assert_eq!(info.currency, Some(currency), "{name}: currency");
        assert_eq!(
            info.account.as_ref().map(|a| a.id.as_str()),
            statement["account"].as_str(),
            "{name}: account"
        );
        let minor = |text: &str| Money::parse_decimal(text, currency).unwrap().amount_minor;
        let mut want: Vec<(String, i64, String)> = statement["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["fitid"].as_str().unwrap().to_owned(),
                    minor(t["amount"].as_str().unwrap()),
                    t["date"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let mut got: Vec<(String, i64, String)> = parsed
            .rows
            .iter()
            .map(|r| {
                (
                    r.bank_ref.clone().unwrap_or_default(),
                    r.amount_minor,
                    r.date.to_string(),
                )
            })
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{name}: transactions");
        transactions += got.len();
        let ledger = statement["ledger"].as_str().map(minor);
        if let Some(ledger) = ledger {
            assert_eq!(
                info.closing.map(|c| c.held_minor),
                Some(ledger),
                "{name}: LEDGERBAL"
            );
        }
    }
    format!(
        "agrees{mended}: {} statements, {transactions} transactions",
        ours.len()
    )
}
