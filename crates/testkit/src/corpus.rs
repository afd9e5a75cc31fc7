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

/// The files of the statement corpus's folders `dirs` (`ofx1`, `camt`, …), sorted; `None` after
/// saying the test was skipped (see [`crate::skip`]) when the corpus is absent.
#[must_use]
pub fn statement_files(dirs: &[&str], what: &str) -> Option<Vec<PathBuf>> {
    let root = crate::corpus_dir("statements", what)?;
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|dir| {
            let dir = root.join(dir);
            std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| path.is_file())
        })
        .collect();
    files.sort();
    Some(files)
}

/// A statement file of `dirs` for a property test's case: the `file`-th (modulo their number), cut
/// at `cut` (modulo its length + 1) and with each `(at, byte)` of `flips` written over it. The
/// files are read once a process, so a million cases do not read a million files. `None` when
/// the corpus is absent (the skip said once).
#[must_use]
pub fn mutated_statement(dirs: &[&str], file: usize, cut: usize, flips: &[(usize, u8)]) -> Option<Vec<u8>> {
    type Read = Option<Vec<(PathBuf, Vec<u8>)>>;
    static FILES: std::sync::OnceLock<Read> = std::sync::OnceLock::new();
    let all = FILES
        .get_or_init(|| {
            let every = ["camt", "mt940", "ofx1", "ofx2", "qfx", "qif"];
            statement_files(&every, "property tests over mutated statement files").map(|paths| {
                paths
                    .into_iter()
                    .map(|path| {
                        let bytes = std::fs::read(&path)
                            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
                        (path, bytes)
                    })
                    .collect()
            })
        })
        .as_ref()?;
    let chosen: Vec<&Vec<u8>> = all
        .iter()
        .filter(|(path, _)| {
            path.parent()
                .and_then(Path::file_name)
                .is_some_and(|dir| dirs.iter().any(|d| dir == *d))
        })
        .map(|(_, bytes)| bytes)
        .collect();
    let mut bytes = (*chosen.get(file % chosen.len().max(1))?).clone();
    bytes.truncate(cut % (bytes.len() + 1));
    for &(at, byte) in flips {
        let len = bytes.len();
        if let Some(slot) = bytes.get_mut(at % len.max(1)) {
            *slot = byte;
        }
    }
    Some(bytes)
}

/// An independent reader's view of `args` (paths and the like): the lines `script` writes, run by
/// the suite's Python (one JSON value a line, by the corpus tests' convention); `None` after the
/// skip when the suite's Python is not set (see [`crate::python`]).
///
/// # Panics
/// When the script cannot run or fails: the test fails with its error output.
#[must_use]
pub fn python_lines<I, S>(runs: &str, script: &Path, args: I) -> Option<Vec<String>>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let python = crate::python(runs)?;
    let output = std::process::Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("the suite's Python runs {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "{} failed: {}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    Some(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

/// The three properties every statement reader's suite holds (`tests/properties.rs`): `read`
/// (which must not panic, whatever it is given) over arbitrary bytes, over text made of
/// `piece`s of its format, and over the corpus files of `dirs` cut and mutated
/// ([`mutated_statement`]). `PROPTEST_CASES` sets the cases of each.
#[macro_export]
macro_rules! reader_properties {
    ($read:path, $piece:expr, [$($dir:literal),+ $(,)?]) => {
        proptest::proptest! {
            #[test]
            fn any_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)) {
                $read(&bytes);
            }

            #[test]
            fn text_shaped_like_the_format(pieces in proptest::collection::vec($piece, 0..64)) {
                $read(pieces.concat().as_bytes());
            }

            #[test]
            fn corpus_files_cut_and_mutated(
                file in proptest::prelude::any::<usize>(),
                cut in proptest::prelude::any::<usize>(),
                flips in proptest::collection::vec(
                    (proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()),
                    0..8,
                ),
            ) {
                if let Some(bytes) = $crate::corpus::mutated_statement(&[$($dir),+], file, cut, &flips) {
                    $read(&bytes);
                }
            }
        }
    };
}
