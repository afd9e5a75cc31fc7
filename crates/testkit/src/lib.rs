//! What the test suites share: where the checkout and the shared corpus are, and how a test that
//! lacks what it needs says so.
//!
//! Paths are found at run time (from the `CARGO_MANIFEST_DIR` that `cargo test` sets for the
//! process), never baked in at compile time: two checkouts that share a target directory share
//! test binaries, and each must read its own files. A test that cannot run (no corpus, no suite
//! Python) is skipped with a line saying so — unless the suite must be whole: under `CI=true` or
//! `KAKEIBO_REQUIRE_CORPUS=1` the same test fails, so a missing install step or a moved corpus can
//! never pass green.

use std::path::{Path, PathBuf};

pub mod corpus;

/// Whether a test that would be skipped must fail instead (`CI=true`, `KAKEIBO_REQUIRE_CORPUS=1`).
#[must_use]
pub fn whole_suite_required() -> bool {
    let set = |name: &str, value: &str| std::env::var(name).is_ok_and(|v| v.eq_ignore_ascii_case(value));
    set("CI", "true") || set("KAKEIBO_REQUIRE_CORPUS", "1")
}

/// Skips the calling test with the reason, or fails it when the whole suite is required.
///
/// # Panics
/// When [`whole_suite_required`]: the test fails, naming what it lacked.
pub fn skip<T>(reason: &str) -> Option<T> {
    assert!(
        !whole_suite_required(),
        "{reason} — and this run requires every test (CI=true or KAKEIBO_REQUIRE_CORPUS=1), so it fails instead of skipping"
    );
    eprintln!("SKIPPED: {reason}");
    None
}

/// The checkout's root: the nearest folder at or above the test's crate (or the current directory)
/// whose `Cargo.toml` declares the workspace.
#[must_use]
pub fn workspace_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    start
        .ancestors()
        .find(|dir| is_workspace(dir))
        .map_or(start.clone(), Path::to_path_buf)
}

fn is_workspace(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|manifest| manifest.contains("[workspace]"))
}

/// The shared corpus: `$KAKEIBO_CORPUS`, else `../shared/corpus` beside the checkout (where CI
/// keeps it). Not checked for existence; see [`corpus_dir`].
#[must_use]
pub fn corpus_root() -> PathBuf {
    std::env::var_os("KAKEIBO_CORPUS")
        .map_or_else(|| workspace_root().join("../shared/corpus"), PathBuf::from)
}

/// A folder of the shared corpus (`bank-csv`, `gemini`, …), or the test skipped (see [`skip`])
/// saying what is not checked without it.
#[must_use]
pub fn corpus_dir(sub: &str, unchecked: &str) -> Option<PathBuf> {
    let dir = corpus_root().join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        skip(&format!(
            "no corpus at {} (set KAKEIBO_CORPUS to a copy of shared/corpus); {unchecked} not checked",
            dir.display()
        ))
    }
}

/// The suite's Python (`KAKEIBO_TEST_PYTHON`, which `cargo xtask test` installs and sets), or the
/// test skipped saying what it would have run.
#[must_use]
pub fn python(runs: &str) -> Option<PathBuf> {
    match std::env::var_os("KAKEIBO_TEST_PYTHON") {
        Some(python) => Some(PathBuf::from(python)),
        None => skip(&format!(
            "KAKEIBO_TEST_PYTHON is unset; `cargo xtask test` installs {runs} and sets it"
        )),
    }
}

/// The base URL of the real local model server `cargo xtask test` starts (llama.cpp's
/// `llama-server` with SmolLM2-135M-Instruct, `KAKEIBO_TEST_LLAMA_URL`), or the test skipped
/// saying how to get one.
#[must_use]
pub fn llama_url() -> Option<String> {
    match std::env::var("KAKEIBO_TEST_LLAMA_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim_end_matches('/').to_owned()),
        _ => skip(
            "KAKEIBO_TEST_LLAMA_URL is unset; `cargo xtask test` builds and starts llama-server and sets it \
             (`cargo xtask model up` prints one for a run by hand)",
        ),
    }
}

/// A program the suite runs (Debian's `hledger`, `ledger`), found on `PATH`, or the test skipped
/// saying what installs it.
#[must_use]
pub fn program(name: &str, installed_by: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    });
    match found {
        Some(path) => Some(path),
        None => skip(&format!("`{name}` is not on PATH; {installed_by}")),
    }
}

/// The folder of the ACP client test's npm packages (`KAKEIBO_TEST_ACP_CLIENT`, which
/// `cargo xtask test` installs with `npm ci` and sets), or the test skipped.
#[must_use]
pub fn acp_client() -> Option<PathBuf> {
    match std::env::var_os("KAKEIBO_TEST_ACP_CLIENT") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => skip(
            "KAKEIBO_TEST_ACP_CLIENT is unset; `cargo xtask test` installs the ACP client SDK and sets it",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_this_checkout() {
        let root = workspace_root();
        assert!(
            root.join("crates/testkit/Cargo.toml").is_file(),
            "{}",
            root.display()
        );
    }

    #[test]
    fn a_skip_fails_only_when_the_suite_must_be_whole() {
        let outcome = std::panic::catch_unwind(|| skip::<()>("nothing here"));
        match outcome {
            Ok(None) => assert!(!whole_suite_required()),
            Err(panic) => {
                assert!(whole_suite_required());
                let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
                assert!(
                    message.contains("nothing here") && message.contains("fails instead"),
                    "{message}"
                );
            }
            Ok(Some(())) => unreachable!("a skip never gives a value"),
        }
    }
}
