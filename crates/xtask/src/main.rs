//! `cargo xtask`: the developer's front door.
//!
//! Runs PostgreSQL (an embedded cluster under `.pgdata/` unless `DATABASE_URL` names a server),
//! the whole test suite, and the local stack. It depends on no crate of the product: it drives
//! `cargo`, `initdb`, `pg_ctl` and `psql` as processes.

mod pg;
mod process;
mod venv;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::pg::Database;

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    about = "Developer tasks for kakeibo",
    long_about = "Developer tasks for kakeibo.\n\n\
        Without DATABASE_URL every command uses an embedded PostgreSQL cluster under .pgdata/ \
        (port 5433, or KAKEIBO_PG_PORT), started with the installed initdb/pg_ctl. With \
        DATABASE_URL set, that server is used and .pgdata/ is never touched."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Manage the database server.
    Db {
        #[command(subcommand)]
        action: DbAction,
    },
    /// Start the database, apply migrations, run the whole test suite.
    ///
    /// Arguments after `--` go to `cargo test` (for example a test name filter).
    Test {
        #[arg(last = true)]
        cargo_test_args: Vec<String>,
    },
    /// Start the database, apply migrations, load the demo ledger, and say how to use it.
    Dev,
    /// `cargo fmt --check` and `cargo clippy -D warnings` over the workspace.
    Lint,
    /// Benchmarks, each printed beside a baseline measured in the same run (BENCH_ROWS sets the
    /// statement size of the import benchmark).
    Bench,
}

#[derive(Debug, Subcommand)]
enum DbAction {
    /// Start the server (creating the cluster, roles and databases when missing).
    Up,
    /// Stop the embedded server.
    Down,
    /// Say whether the server runs, where, and as whom to connect.
    Status,
    /// Print the connection URLs as `export` lines (use with `eval "$(cargo xtask db url)"`).
    Url,
    /// Throw away every table and row, then start again empty (migrations not applied).
    Reset,
    /// Open psql as the owner role; arguments after `--` go to psql.
    Psql {
        #[arg(last = true)]
        psql_args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("xtask: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let db = Database::from_env()?;
    match cli.command {
        Command::Db { action } => db_action(&db, action),
        Command::Test { cargo_test_args } => test(&db, &cargo_test_args),
        Command::Dev => dev(&db),
        Command::Lint => lint(),
        Command::Bench => bench(&db),
    }
}

fn db_action(db: &Database, action: DbAction) -> Result<ExitCode> {
    match action {
        DbAction::Up => {
            let urls = db.up()?;
            urls.print_summary();
        }
        DbAction::Down => db.down()?,
        DbAction::Status => return db.status(),
        DbAction::Url => {
            let urls = db.urls()?;
            println!("export DATABASE_URL='{}'", urls.owner);
            println!("export APP_DATABASE_URL='{}'", urls.app);
        }
        DbAction::Reset => {
            db.reset()?;
            db.up()?.print_summary();
        }
        DbAction::Psql { psql_args } => return db.psql(&psql_args),
    }
    Ok(ExitCode::SUCCESS)
}

fn test(db: &Database, cargo_test_args: &[String]) -> Result<ExitCode> {
    let urls = db.up()?;
    process::step("applying migrations to the development database");
    kakeibo(&urls, &["migrate"])?;
    let python = venv::ensure()?;
    process::step("running the test suite");
    let mut args = vec!["test", "--workspace", "--no-fail-fast"];
    if !cargo_test_args.is_empty() {
        args.push("--");
        args.extend(cargo_test_args.iter().map(String::as_str));
    }
    let status = process::cargo(&args)
        .env("DATABASE_URL", &urls.test_master)
        .env("APP_DATABASE_URL", &urls.app)
        .env("KAKEIBO_TEST_PYTHON", &python)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .status()?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn dev(db: &Database) -> Result<ExitCode> {
    let urls = db.up()?;
    process::step("applying migrations");
    kakeibo(&urls, &["migrate"])?;
    process::step("loading the demo ledger for the development owner");
    kakeibo(&urls, &["seed", "--db"])?;
    urls.print_summary();
    println!();
    println!("The database is migrated and holds the demo ledger (352 transactions) of the");
    println!("development owner 00000000-0000-4000-8000-000000000001.");
    println!("  look around:   cargo xtask db psql");
    println!("  regenerate:    cargo run -p kakeibo-cli -- seed --out seed/");
    println!("  stop:          cargo xtask db down");
    println!("The HTTP functions and the web app are not part of the stack yet.");
    Ok(ExitCode::SUCCESS)
}

fn bench(db: &Database) -> Result<ExitCode> {
    let urls = db.up()?;
    process::step("import throughput against COPY (release build)");
    process::cargo(&["bench", "--package", "kakeibo-ledger", "--bench", "import"])
        .env("DATABASE_URL", &urls.test_master)
        .status_ok()?;
    process::step("orchestration overhead of a turn against its tools alone (release build)");
    process::cargo(&["bench", "--package", "kakeibo-ledger", "--bench", "turn"])
        .env("DATABASE_URL", &urls.test_master)
        .status_ok()?;
    Ok(ExitCode::SUCCESS)
}

/// Runs the `kakeibo` command (built on demand) as the owner role of the development database.
fn kakeibo(urls: &pg::Urls, args: &[&str]) -> Result<()> {
    let mut cargo_args = vec!["run", "--quiet", "--package", "kakeibo-cli", "--"];
    cargo_args.extend_from_slice(args);
    process::cargo(&cargo_args)
        .env("DATABASE_URL", &urls.owner)
        .status_ok()
}

fn lint() -> Result<ExitCode> {
    process::step("cargo fmt --check");
    process::cargo(&["fmt", "--all", "--check"]).status_ok()?;
    process::step("cargo clippy");
    process::cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]).status_ok()?;
    Ok(ExitCode::SUCCESS)
}
