//! The Python tools the suite drives (today `moto_server`, for Secrets Manager), installed from
//! PyPI into a virtual environment the suite owns — never the machine's own Python packages.
//!
//! The environment lives in the cargo target directory (`kakeibo-venv/`), so a warm machine
//! reuses it; it is reinstalled when `tests/python-requirements.txt` changes.

use std::path::PathBuf;

use crate::process::{self, Cmd};
use anyhow::{Context, Result};

/// Where the environment is: beside the build output.
pub fn dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| process::workspace_root().join("target"), PathBuf::from);
    target.join("kakeibo-venv")
}

/// The environment's Python, with the requirements installed.
pub fn ensure() -> Result<PathBuf> {
    let root = process::workspace_root();
    let requirements = root.join("tests/python-requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .with_context(|| format!("reading {}", requirements.display()))?;
    let dir = dir();
    let python = dir.join("bin/python");
    let stamp = dir.join(".requirements");
    let installed = std::fs::read_to_string(&stamp).unwrap_or_default();
    if python.is_file() && installed == normalised(&wanted) {
        return Ok(python);
    }
    process::step(&format!(
        "installing the suite's Python tools into {}",
        dir.display()
    ));
    let system_python = process::find_program("python3", &[]).context(
        "python3 is needed for the suite's Python tools (moto_server); install Python 3 with venv and pip",
    )?;
    if !python.is_file() {
        Cmd::new(&system_python)
            .args(["-m", "venv"])
            .arg(&dir)
            .status_ok()?;
    }
    Cmd::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements)
        .status_ok()?;
    std::fs::write(&stamp, normalised(&wanted)).with_context(|| format!("writing {}", stamp.display()))?;
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
