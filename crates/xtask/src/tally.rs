//! The suite's own counts of the tests it ran, recorded after a whole `cargo xtask test` in
//! `metrics/last-test-run.json`, where `cargo xtask metrics` reads them.

use std::fs;

use anyhow::{Context, Result};
use serde_json::json;

use crate::{bench, process};

/// Passed, failed and skipped tests, as a runner reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

impl Counts {
    pub fn json(self) -> serde_json::Value {
        serde_json::json!({"passed": self.passed, "failed": self.failed, "ignored": self.ignored})
    }

    /// Adds a `cargo test` summary line (`test result: ok. 5 passed; 0 failed; 1 ignored; …`).
    pub fn add_libtest_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            return;
        };
        for part in rest.split(';') {
            let mut words = part.split_whitespace().rev();
            let (Some(kind), Some(n)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match kind {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
    }
}

/// Writes the record of a whole run: `cargo test`'s counts and the web suites' (when they ran).
pub fn record(cargo: Counts, unit: Option<Counts>, journeys: Option<Counts>) -> Result<()> {
    let dir = process::workspace_root().join("metrics");
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let record = json!({
        "finished_at": bench::now()?,
        "commit": bench::commit(),
        "cargo": cargo.json(),
        "web_unit": unit.map(Counts::json),
        "journeys": journeys.map(Counts::json),
    });
    let path = dir.join("last-test-run.json");
    fs::write(&path, serde_json::to_string_pretty(&record)?)
        .with_context(|| format!("writing {}", path.display()))?;
    process::step(&format!(
        "the runners' counts recorded in {} (for `cargo xtask metrics`)",
        path.display()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_summaries_add_up() {
        let mut counts = Counts::default();
        for line in [
            "test result: ok. 5 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s",
            "running 3 tests",
            "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 4 filtered out; finished in 1.20s",
            "test a ... ok",
        ] {
            counts.add_libtest_line(line);
        }
        assert_eq!(
            counts,
            Counts {
                passed: 7,
                failed: 1,
                ignored: 1
            }
        );
    }
}
