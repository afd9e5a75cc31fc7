//! The bank-statement corpus (`../shared/corpus/bank-csv`, or `$KAKEIBO_CORPUS/bank-csv`), for
//! the importer's corpus tests.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// The corpus folder `sub` (under `bank-csv`), or `None` after saying the test was skipped (a
/// failure where the whole suite is required).
pub fn bank_csv(sub: &str, what: &str) -> Option<PathBuf> {
    let sub = if sub.is_empty() {
        "bank-csv".to_owned()
    } else {
        format!("bank-csv/{sub}")
    };
    kakeibo_testkit::corpus_dir(&sub, what)
}

/// The statements: every .csv, .tsv, .ssv and .txt file directly in each folder of `root`.
pub fn statements(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or_default()
                .to_lowercase();
            if ["csv", "tsv", "ssv", "txt"].contains(&ext.as_str()) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
