//! The Python tools the suite drives (today `moto_server`, for Secrets Manager), installed from
//! PyPI into a virtual environment the suite owns — never the machine's own Python packages.
//!
//! The environment lives in the cargo target directory (`kakeibo-venv/`), so a warm machine
//! reuses it; it is reinstalled when `tests/python-requirements.txt` changes. The benchmarks'
//! peer (LangGraph) has an environment of its own beside it (`kakeibo-bench-venv/`), so its
//! pinned packages never meet the suite's.

use std::path::PathBuf;

use crate::process::{self, Cmd};
use anyhow::{Context, Result};

/// Where an environment called `name` is: beside the build output.
fn dir_of(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| process::workspace_root().join("target"), PathBuf::from);
    target.join(name)
}

/// Where the suite's environment is.
pub fn dir() -> PathBuf {
    dir_of("kakeibo-venv")
}

/// The suite's Python, with the requirements of `files` (paths from the repository root)
/// installed.
pub fn ensure(files: &[&str]) -> Result<PathBuf> {
    ensure_at(&dir(), files)
}

/// The benchmarks' Python, with the peer's pinned requirements installed.
pub fn ensure_bench() -> Result<PathBuf> {
    ensure_at(&dir_of("kakeibo-bench-venv"), &["bench/peer/requirements.txt"])
}

fn ensure_at(dir: &std::path::Path, files: &[&str]) -> Result<PathBuf> {
    let root = process::workspace_root();
    let mut wanted = String::new();
    for file in files {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        wanted.push_str(&normalised(&text));
        wanted.push('\n');
    }
    let python = dir.join("bin/python");
    let stamp = dir.join(".requirements");
    let installed = std::fs::read_to_string(&stamp).unwrap_or_default();
    if python.is_file()
        && wanted
            .lines()
            .all(|line| installed.lines().any(|have| have == line))
    {
        return Ok(python);
    }
    process::step(&format!("installing Python tools into {}", dir.display()));
    let system_python = process::find_program("python3", &[])
        .context("python3 is needed for the suite's Python tools; install Python 3 with venv and pip")?;
    if !python.is_file() {
        Cmd::new(&system_python)
            .args(["-m", "venv"])
            .arg(dir)
            .status_ok()?;
    }
    let mut pip = Cmd::new(&python).args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]);
    for file in files {
        pip = pip.arg("-r").arg(root.join(file));
    }
    pip.status_ok()?;
    let mut recorded: Vec<&str> = installed
        .lines()
        .chain(wanted.lines())
        .filter(|l| !l.is_empty())
        .collect();
    recorded.sort_unstable();
    recorded.dedup();
    std::fs::write(&stamp, recorded.join("\n")).with_context(|| format!("writing {}", stamp.display()))?;
    Ok(python)
}

/// The requirements without comments and blank lines: what the stamp records.
fn normalised(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}
