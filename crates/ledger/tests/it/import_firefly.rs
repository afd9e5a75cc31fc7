//! Every Firefly III Data Importer configuration of the corpus
//! (`../shared/corpus/bank-csv/firefly-import-configurations/`) is read into a mapping or refused
//! with the reason; for each one read, a statement is generated in that bank's layout — its
//! column roles, delimiter, header row and date format — and imported with the mapping, and the
//! rows must come out right.

use crate::corpus;

use std::path::PathBuf;

use kakeibo_ledger::import::{ParseOptions, parse, read_mapping};
use serde_json::Value;

fn configurations() -> Option<PathBuf> {
    corpus::bank_csv("firefly-import-configurations", "the Firefly III configurations")
}

/// The rows every generated statement holds: (year, month, day, amount in minor units, what).
const ROWS: [(i32, u32, u32, i64, &str); 4] = [
    (2024, 1, 15, -1_234, "GROCER ONE"),
    (2024, 1, 3, 250_000, "SALARY ACME"),
    (2024, 2, 28, -99, "COFFEE BAR"),
    (2024, 3, 9, -45_600, "RENT MARCH"),
];

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A date written in a PHP date format, as the bank would write it.
fn php_date(format: &str, (y, m, d): (i32, u32, u32)) -> String {
    let format = format
        .split_once(':')
        .filter(|(l, _)| l.len() == 2 && l.chars().all(|c| c.is_ascii_lowercase()))
        .map_or(format, |(_, f)| f);
    let two = |n: u32| format!("{n:02}");
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        match c {
            'd' => out.push_str(&two(d)),
            'j' => out.push_str(&d.to_string()),
            'm' => out.push_str(&two(m)),
            'n' => out.push_str(&m.to_string()),
            'Y' => out.push_str(&y.to_string()),
            'y' => out.push_str(&two(y.unsigned_abs() % 100)),
            'M' => out.push_str(MONTHS[(m - 1) as usize]),
            'H' => out.push_str("14"),
            'g' => out.push('2'),
            'i' => out.push_str("05"),
            's' => out.push_str("09"),
            'v' => out.push_str("123"),
            'a' => out.push_str("pm"),
            'P' => out.push_str("+02:00"),
            '#' => out.push('/'),
            '\\' => out.extend(chars.next()),
            other => out.push(other),
        }
    }
    out
}

/// One cell of a generated row for a column of `role`; `lone_debit` when the layout has a
/// money-out column and no money-in column (a card's: a payment is a negative figure in it).
fn cell(
    role: &str,
    row: (i32, u32, u32, i64, &str),
    date_format: &str,
    comma: bool,
    lone_debit: bool,
) -> String {
    let (y, m, d, minor, what) = row;
    let money = |minor: i64| {
        let text = format!("{}.{:02}", minor.abs() / 100, minor.abs() % 100);
        if comma { text.replace('.', ",") } else { text }
    };
    let signed = |minor: i64| format!("{}{}", if minor < 0 { "-" } else { "" }, money(minor));
    match role {
        r if r.starts_with("date") => php_date(date_format, (y, m, d)),
        "amount" => signed(minor),
        "amount_negated" => signed(-minor),
        "amount_debit" | "debit_amount" if lone_debit => signed(-minor),
        "amount_debit" | "debit_amount" if minor < 0 => money(minor),
        "amount_credit" | "credit_amount" if minor > 0 => money(minor),
        "amount_debit" | "debit_amount" | "amount_credit" | "credit_amount" => String::new(),
        "generic-debit-credit" | "rabo-debit-credit" => (if minor < 0 { "D" } else { "C" }).to_owned(),
        "ing-debit-credit" => (if minor < 0 { "Af" } else { "Bij" }).to_owned(),
        "description" | "narration" => what.to_owned(),
        "currency-code" | "currency-name" => "EUR".to_owned(),
        "category-name" => "Household".to_owned(),
        _ => "ref".to_owned(),
    }
}

/// The generated statement and the rows expected from it: (date, amount in minor units).
fn statement(config: &Value) -> (String, Vec<(String, i64)>) {
    let roles: Vec<&str> = config["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap_or("_ignore"))
        .collect();
    let delimiter = match config["delimiter"].as_str() {
        Some("semicolon") => ";",
        Some("tab") => "\t",
        _ => ",",
    };
    // Banks that separate cells with semicolons write decimal commas.
    let comma = delimiter == ";";
    let lone_debit = roles
        .iter()
        .any(|r| r.starts_with("amount_debit") || *r == "debit_amount")
        && !roles
            .iter()
            .any(|r| *r == "amount_credit" || *r == "credit_amount");
    let date_format = config["date"].as_str().unwrap_or("Y-m-d");
    let quote = |c: String| {
        if c.contains(delimiter) || c.contains('"') {
            format!("\"{}\"", c.replace('"', "\"\""))
        } else {
            c
        }
    };
    let mut lines = Vec::new();
    if config["headers"].as_bool().unwrap_or(false) {
        lines.push(
            roles
                .iter()
                .enumerate()
                .map(|(i, r)| format!("Column {} {r}", i + 1))
                .collect::<Vec<_>>()
                .join(delimiter),
        );
    }
    // Several date roles: the others hold the same day (a bank's value date).
    for row in ROWS {
        lines.push(
            roles
                .iter()
                .map(|r| quote(cell(r, row, date_format, comma, lone_debit)))
                .collect::<Vec<_>>()
                .join(delimiter),
        );
    }
    let expected = ROWS
        .iter()
        .map(|(y, m, d, minor, _)| (format!("{y}-{m:02}-{d:02}"), *minor))
        .collect();
    (lines.join("\n") + "\n", expected)
}

#[test]
fn every_firefly_configuration_is_read_and_imports_its_banks_layout() {
    let Some(dir) = configurations() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let (mut read, mut refused, mut wrong) = (0, 0, Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let file = match read_mapping(&bytes) {
            Ok(file) => file,
            Err(why) => {
                refused += 1;
                eprintln!("refused {name}: {why}");
                continue;
            }
        };
        read += 1;
        let config: Value = serde_json::from_slice(&bytes).unwrap();
        let (text, expected) = statement(&config);
        let options = ParseOptions {
            mapping: file.mapping.clone(),
            ..ParseOptions::default()
        };
        match parse(text.as_bytes(), &options) {
            Ok(parsed) => {
                let got: Vec<(String, i64)> = parsed
                    .rows
                    .iter()
                    .map(|r| (r.date.to_string(), r.amount_minor))
                    .collect();
                if got == expected && parsed.errors.is_empty() {
                    eprintln!("ok      {name}: {}", file.kind);
                } else {
                    wrong.push(format!(
                        "{name}: got {got:?}, errors {:?}\n{text}{:?}",
                        parsed
                            .errors
                            .iter()
                            .map(|e| (e.line, &e.message))
                            .collect::<Vec<_>>(),
                        file.mapping
                    ));
                }
            }
            Err(e) => wrong.push(format!(
                "{name}: refused the generated statement: {e}\n{text}{:?}",
                file.mapping
            )),
        }
    }
    eprintln!(
        "firefly: {} configurations, {read} read, {refused} refused with the reason, {} wrong",
        files.len(),
        wrong.len()
    );
    assert!(files.len() > 100, "the corpus holds 121 configurations");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
