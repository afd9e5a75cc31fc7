//! `kakeibo-metrics` (`cargo xtask metrics`): the README's numbers, measured.

use std::{path::PathBuf, process::ExitCode};

use anyhow::{Context, Result};
use clap::Parser;
use kakeibo_metrics::{Inputs, Recorded, check, collect, write};

/// Measures the numbers the README opens with and writes metrics/latest.{json,md} and the
/// README's numbers table. Offline: tests written, tools, the agent loop's lines, crates and
/// their lines, the context estimator against the corpus's 30 recorded Gemini exchanges (beside
/// chars/4), the performance table's headline ratios. Recorded: the last whole `cargo xtask
/// test` run and the latest `cargo xtask eval` report, or "not measured" when there is none.
#[derive(Debug, Parser)]
#[command(name = "kakeibo-metrics")]
struct Cli {
    /// Write nothing; exit 1 when the README's computed rows differ from a fresh measurement.
    #[arg(long)]
    check: bool,
    /// The checkout (default: the workspace the working directory is in).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The shared corpus (default: KAKEIBO_CORPUS, else ../shared/corpus beside the checkout).
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            println!("kakeibo-metrics: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The nearest folder at or above `start` whose Cargo.toml declares a workspace.
fn workspace(start: &std::path::Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        manifest
            .lines()
            .any(|l| l.trim() == "[workspace]")
            .then(|| dir.to_path_buf())
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    let root = match cli.root {
        Some(root) => root,
        None => workspace(&std::env::current_dir().context("the working directory")?)
            .context("not inside a cargo workspace: run it from the checkout, or pass --root")?,
    };
    let root = root
        .canonicalize()
        .with_context(|| format!("{}", root.display()))?;
    let corpus = cli
        .corpus
        .or_else(|| std::env::var_os("KAKEIBO_CORPUS").map(PathBuf::from))
        .unwrap_or_else(|| root.join("../shared/corpus"));
    let exchanges = corpus.join("kakeibo-fixtures");
    let exchanges = exchanges.is_dir().then_some(exchanges);
    if exchanges.is_none() {
        println!(
            "no recorded exchanges at {}: the estimator rows say so (set KAKEIBO_CORPUS)",
            corpus.join("kakeibo-fixtures").display()
        );
    }
    let inputs = Inputs {
        root: root.clone(),
        exchanges,
        recorded: Recorded::Latest,
    };
    if cli.check {
        let differences = check(&inputs)?;
        if differences.is_empty() {
            println!("the README's numbers agree with a fresh measurement");
            return Ok(ExitCode::SUCCESS);
        }
        println!("the README's numbers differ from a fresh measurement (run `cargo xtask metrics`):");
        for line in differences {
            println!("  {line}");
        }
        return Ok(ExitCode::FAILURE);
    }
    let metrics = collect(&inputs)?;
    write(&root, &metrics)?;
    println!("{}", metrics.markdown());
    println!(
        "written: {0}/latest.md, {0}/latest.json and the README's numbers table",
        root.join(kakeibo_metrics::OUT_DIR).display()
    );
    Ok(ExitCode::SUCCESS)
}
