//! The web app in `web/`: its npm packages, its build, and its test suites (Vitest unit tests, then
//! the end-to-end journeys in Debian's Chromium against the real `kakeibo-dev`).
//!
//! Everything is installed from the registries on first use: the npm packages with `npm ci` from
//! the committed lockfile, and Chromium with `apt-get` when this runs as root.

use std::{
    fs,
    path::{Path, PathBuf},
    time::SystemTime,
};

use anyhow::{Context, Result, bail};

use crate::{
    pg,
    process::{self, Cmd},
    tally::Counts,
};

/// Where Debian puts Chromium; the journeys drive this binary.
pub const CHROMIUM: &str = "/usr/bin/chromium";

pub fn dir() -> PathBuf {
    process::workspace_root().join("web")
}

fn npm() -> Cmd {
    Cmd::new("npm").current_dir(&dir())
}

/// The newest modification time under `path` (a file, or a folder walked whole).
fn newest(path: &Path) -> Option<SystemTime> {
    let meta = fs::metadata(path).ok()?;
    if meta.is_file() {
        return meta.modified().ok();
    }
    fs::read_dir(path)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| newest(&entry.path()))
        .max()
}

/// `npm ci` when the web app's packages are missing or older than the lockfile.
pub fn ensure_packages() -> Result<()> {
    ensure_packages_in(&dir(), "the web app's")
}

/// `npm ci` in `folder` (`whose` packages, for the step line) when its packages are missing or
/// older than its lockfile.
pub fn ensure_packages_in(folder: &Path, whose: &str) -> Result<()> {
    let installed = newest(&folder.join("node_modules").join(".package-lock.json"));
    let wanted = newest(&folder.join("package-lock.json"));
    if installed.is_some() && installed >= wanted {
        return Ok(());
    }
    if process::find_program("npm", &[]).is_none() {
        bail!(
            "npm is not installed: {whose} packages need Node.js 20.19 or later with npm (https://nodejs.org)"
        );
    }
    let lockfile = folder
        .strip_prefix(process::workspace_root())
        .unwrap_or(folder)
        .join("package-lock.json");
    process::step(&format!(
        "installing {whose} npm packages (npm ci, from {})",
        lockfile.display()
    ));
    Cmd::new("npm")
        .current_dir(folder)
        .args(["ci", "--no-audit", "--no-fund"])
        .status_ok()
}

/// Builds `web/dist` when it is missing or older than the sources (or always, with `force`).
pub fn build(force: bool) -> Result<()> {
    ensure_packages()?;
    let web = dir();
    let built = newest(&web.join("dist").join("index.html"));
    let sources = [
        "src",
        "public",
        "index.html",
        "package-lock.json",
        "vite.config.ts",
        "tsconfig.json",
    ]
    .iter()
    .filter_map(|p| newest(&web.join(p)))
    .max();
    if !force && built.is_some() && built >= sources {
        return Ok(());
    }
    process::step("building the web app (web/dist: tsc, then vite build)");
    npm().args(["run", "build"]).status_ok()
}

/// The cargo target directory (`CARGO_TARGET_DIR`, or `target/` of the workspace).
pub fn target_dir() -> PathBuf {
    // cargo runs from the workspace root (`process::cargo`), so a relative one is from there.
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || process::workspace_root().join("target"),
        |dir| process::workspace_root().join(dir),
    )
}

/// Where the journeys leave what a person looks at afterwards (screenshots, the server's log,
/// the /chat figures): the checkout's own `target/`, whatever `CARGO_TARGET_DIR` says, so they are
/// found beside the code they show.
pub fn artifacts_dir() -> PathBuf {
    process::workspace_root().join("target")
}

/// What the web suites did.
#[derive(Debug)]
pub struct Outcome {
    pub passed: bool,
    /// Vitest's own counts of the unit tests and of the journeys (`None` when its report is
    /// missing, as when a suite could not start).
    pub unit: Option<Counts>,
    pub journeys: Option<Counts>,
}

/// The counts of Vitest's JSON report at `path`.
fn vitest_counts(path: &Path) -> Option<Counts> {
    let report: serde_json::Value = serde_json::from_str(&fs::read_to_string(path).ok()?).ok()?;
    let n = |key: &str| report[key].as_u64().unwrap_or(0);
    Some(Counts {
        passed: n("numPassedTests"),
        failed: n("numFailedTests"),
        ignored: n("numPendingTests") + n("numTodoTests"),
    })
}

/// Vitest's arguments for `reporter` on the terminal and a JSON report at `path` (removed first,
/// so an old one is never read).
fn with_json_report(reporter: &str, path: &Path) -> Vec<String> {
    let _ = fs::remove_file(path);
    vec![
        "--".to_owned(),
        format!("--reporter={reporter}"),
        "--reporter=json".to_owned(),
        format!("--outputFile.json={}", path.display()),
    ]
}

/// The web suites: type checks, the unit tests, the build, and the journeys in Chromium against
/// `kakeibo-dev` on a database of their own.
pub fn suite(urls: &pg::Urls) -> Result<Outcome> {
    ensure_packages()?;
    process::step("web: type checks (tsc --noEmit, app and journeys)");
    let typed = npm().args(["run", "typecheck"]).status()?.success();
    process::step("web: unit tests (vitest)");
    let unit_report = artifacts_dir().join("vitest-unit.json");
    let unit = npm()
        .arg("test")
        .args(with_json_report("default", &unit_report))
        .status()?
        .success();
    build(true)?;
    crate::debian::ensure(&[(CHROMIUM, "chromium")], "the browser tests")?;
    process::step("web: the journeys' database (kakeibo_e2e), migrated");
    let (owner, app) = pg::fresh_database(urls, "kakeibo_e2e")?;
    process::step("web: building kakeibo-dev and kakeibo for the journeys");
    process::cargo(&[
        "build",
        "--package",
        "kakeibo-devserver",
        "--package",
        "kakeibo-cli",
    ])
    .status_ok()?;
    let bin = target_dir().join("debug");
    Cmd::new(bin.join("kakeibo"))
        .arg("migrate")
        .env("DATABASE_URL", &owner)
        .output_ok()
        .context("migrating the journeys' database")?;
    process::step(&format!(
        "web: the journeys in headless Chromium ({CHROMIUM}); screenshots in {}",
        artifacts_dir().join("web-screenshots").display()
    ));
    let journeys_report = artifacts_dir().join("vitest-journeys.json");
    let journeys = npm()
        .args(["run", "e2e"])
        .args(with_json_report("verbose", &journeys_report))
        .env("KAKEIBO_E2E_DATABASE_URL", &owner)
        .env("KAKEIBO_E2E_APP_DATABASE_URL", &app)
        .env("KAKEIBO_DEV_BIN", bin.join("kakeibo-dev"))
        .env("KAKEIBO_BIN", bin.join("kakeibo"))
        .env("KAKEIBO_WEB_ARTIFACTS", artifacts_dir())
        .env("CHROMIUM_PATH", CHROMIUM)
        .status()?
        .success();
    if !journeys {
        eprintln!(
            "web: the journeys failed; the server's log is in {}",
            artifacts_dir().join("web-e2e-server.log").display()
        );
    }
    Ok(Outcome {
        passed: typed && unit && journeys,
        unit: vitest_counts(&unit_report),
        journeys: vitest_counts(&journeys_report),
    })
}
