//! The generated demo ledger against the reference data set in `../shared/corpus/kakeibo-seed`.
//!
//! Every non-hostile row must be byte-identical; the six hostile rows carry our own attack text
//! but the same date, amount, category and uncategorised flag. The corpus is not part of this
//! repository: CI has it beside the clone; elsewhere these tests say they skipped, and why.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
};

use kakeibo_ledger::{STATIC_RATES, seed};
use serde_json::Value;

fn corpus() -> Option<PathBuf> {
    kakeibo_testkit::corpus_dir("kakeibo-seed", "seed parity").map(|_| kakeibo_testkit::corpus_root())
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn hostile_lines(data: &seed::SeedData) -> HashSet<usize> {
    data.hostile.iter().map(|h| h.line).collect()
}

#[test]
fn transactions_csv_matches_the_reference() {
    let Some(corpus) = corpus() else { return };
    let reference = read(&corpus.join("kakeibo-seed/transactions.csv"));
    let data = seed::generate().unwrap();
    let ours = seed::transactions_csv(&data).unwrap();
    let hostile = hostile_lines(&data);

    let reference_lines: Vec<&str> = reference.split_inclusive('\n').collect();
    let our_lines: Vec<&str> = ours.split_inclusive('\n').collect();
    assert_eq!(our_lines.len(), reference_lines.len(), "line count");
    assert_eq!(our_lines[0], reference_lines[0], "header");

    let reference_rows = seed::read_transactions_csv(&reference).unwrap();
    let our_rows = seed::read_transactions_csv(&ours).unwrap();
    let mut compared_bytes = 0;
    for (i, (ours, theirs)) in our_rows.iter().zip(&reference_rows).enumerate() {
        let line = i + 1;
        if hostile.contains(&line) {
            assert_eq!(
                (ours.date, ours.amount_minor, &ours.category),
                (theirs.date, theirs.amount_minor, &theirs.category),
                "hostile row {line}: date, amount and category cell"
            );
            assert_ne!(
                ours.description, theirs.description,
                "hostile row {line} must carry our own text"
            );
        } else {
            assert_eq!(our_lines[line], reference_lines[line], "row {line} byte for byte");
            compared_bytes += our_lines[line].len();
        }
    }
    assert_eq!(hostile.len(), 6);
    eprintln!(
        "seed parity: {} rows identical ({compared_bytes} bytes), 6 hostile rows ours",
        our_rows.len() - 6
    );
}

#[test]
fn labels_json_matches_the_reference_except_hostile_text() {
    let Some(corpus) = corpus() else { return };
    let reference: Value = serde_json::from_str(&read(&corpus.join("kakeibo-seed/labels.json"))).unwrap();
    let data = seed::generate().unwrap();
    let ours: Value = serde_json::from_str(&seed::labels_json(&data).unwrap()).unwrap();
    let hostile = hostile_lines(&data);

    let strip_hostile_text = |labels: &Value| -> Value {
        let mut labels = labels.clone();
        for row in labels["transactions"].as_array_mut().unwrap() {
            let line = usize::try_from(row["line"].as_u64().unwrap()).unwrap();
            if hostile.contains(&line) {
                row.as_object_mut().unwrap().remove("description");
            }
        }
        for row in labels["hostile"].as_array_mut().unwrap() {
            row.as_object_mut().unwrap().remove("description");
        }
        labels
    };
    let (ours, reference) = (strip_hostile_text(&ours), strip_hostile_text(&reference));
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&ours), keys(&reference));
    for key in keys(&reference) {
        assert_eq!(ours[&key], reference[&key], "labels.json field {key}");
    }
}

#[test]
fn rates_match_the_reference() {
    let Some(corpus) = corpus() else { return };
    let reference: Value = serde_json::from_str(&read(&corpus.join("kakeibo-seed/rates.json"))).unwrap();
    let ours: Value = serde_json::from_str(&seed::rates_json(&STATIC_RATES).unwrap()).unwrap();
    for key in ["base", "asOf", "rates"] {
        assert_eq!(ours[key], reference[key], "rates.json field {key}");
    }
}

/// The reference's recorded model exchanges show transaction ids its seed import produced;
/// ours must be the same for every non-hostile row they mention.
#[test]
fn deterministic_ids_match_the_recorded_exchanges() {
    let Some(corpus) = corpus() else { return };
    let data = seed::generate().unwrap();
    let rows = seed::read_transactions_csv(&seed::transactions_csv(&data).unwrap()).unwrap();
    let hostile = hostile_lines(&data);

    let mut seen = Vec::new();
    for entry in std::fs::read_dir(corpus.join("kakeibo-fixtures")).unwrap() {
        let path = entry.unwrap().path();
        let fixture: Value = serde_json::from_str(&read(&path)).unwrap();
        collect_listed_transactions(&fixture, &mut seen);
    }
    let mut checked = HashSet::new();
    for (id, date, description) in &seen {
        let Some(row) = rows
            .iter()
            .find(|r| r.date.to_string() == *date && r.description == *description)
        else {
            // Only hostile rows (whose text differs from ours) may be missing.
            assert!(
                description.contains("tool_result")
                    || description.contains("note to the AI")
                    || description.contains("system>")
                    || description.contains("Assistant:")
                    || description.contains("PREVIOUS INSTRUCTIONS"),
                "{date} {description:?} is not in our seed"
            );
            continue;
        };
        if hostile.contains(&(row.csv_line - 1)) {
            continue;
        }
        assert_eq!(
            seed::transaction_id(
                kakeibo_ledger::DEV_OWNER,
                row.csv_line,
                row.date,
                &row.description
            )
            .to_string(),
            *id,
            "id of {date} {description:?}"
        );
        checked.insert(id.clone());
    }
    assert!(
        checked.len() > 50,
        "only {} ids found in the recorded exchanges",
        checked.len()
    );
    eprintln!(
        "seed ids: {} distinct transaction ids agree with the recorded exchanges",
        checked.len()
    );
}

/// Finds `{id, date, description}` objects inside the JSON that tool results carry as text.
fn collect_listed_transactions(value: &Value, out: &mut Vec<(String, String, String)>) {
    match value {
        Value::String(text) => {
            let body = text
                .trim()
                .trim_start_matches("<tool_data>")
                .trim_end_matches("</tool_data>");
            if let Ok(inner @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(body) {
                collect_listed_transactions(&inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_listed_transactions(v, out)),
        Value::Object(map) => {
            if let (Some(Value::String(id)), Some(Value::String(date)), Some(Value::String(description))) =
                (map.get("id"), map.get("date"), map.get("description"))
            {
                out.push((id.clone(), date.clone(), description.clone()));
            }
            map.values().for_each(|v| collect_listed_transactions(v, out));
        }
        _ => {}
    }
}
