//! The bank-statement corpus (`../shared/corpus/bank-csv`, or `$KAKEIBO_CORPUS/bank-csv`), for
//! the importer's corpus tests.

use std::path::{Path, PathBuf};

/// The corpus folder `sub` (under `bank-csv`), or `None` after saying the test was skipped (a
/// failure where the whole suite is required).
pub fn bank_csv(sub: &str, what: &str) -> Option<PathBuf> {
    let sub = if sub.is_empty() {
        "bank-csv".to_owned()
    } else {
        format!("bank-csv/{sub}")
    };
    crate::corpus_dir(&sub, what)
}

/// The statements: every .csv, .tsv, .ssv and .txt file directly in each folder of `root`.
pub fn statements(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let entries = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .collect()
    };
    for dir in entries(root) {
        if !dir.is_dir() {
            continue;
        }
        for path in entries(&dir) {
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
