//! `kakeibo-evals`: runs the evaluation suite against the configured model and writes
//! `evals/report/latest.{json,md}` (and stores the report for `GET /api/evals/latest`).
//!
//! It reports and does not gate: failing tasks still exit 0. It exits 1 when it cannot run at
//! all (no model configured, no database, a broken task file).

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, Result};
use clap::Parser;
use kakeibo_core::prompt::SYSTEM_PROMPT;
use kakeibo_evals::{Bench, Options, Suite, launch, store, suite};
use kakeibo_ledger::EVAL_OWNER;

/// Runs kakeibo's evaluation tasks through the real agent loop and reports how they did.
///
/// Every task starts from a fresh copy of the demo ledger of the evaluation owner (never your
/// own ledger), runs its turns with writes allowed or declined as the task says, then checks the
/// ledger, the tool calls and the answers; a judge model grades the rest. The model comes from
/// the usual settings (GEMINI_API_KEY, ANTHROPIC_API_KEY, OPENAI_BASE_URL or
/// KAKEIBO_PROVIDER=script:PATH); the judge from JUDGE_MODEL.
#[derive(Debug, Parser)]
#[command(name = "kakeibo-evals", version, args_conflicts_with_subcommands = true)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// The agent's model (instead of AGENT_MODEL or the provider's default).
    #[arg(long)]
    model: Option<String>,
    /// The judge's model (instead of JUDGE_MODEL or the provider's default).
    #[arg(long)]
    judge_model: Option<String>,
    /// Only tasks of this class, with this tag (e.g. `smoke`), or whose id contains this text.
    /// The injection suite is skipped when a filter is given.
    #[arg(long)]
    filter: Option<String>,
    /// List the selected tasks and exit (no model or database needed).
    #[arg(long)]
    list: bool,
    /// Skip the injection suite.
    #[arg(long)]
    no_injection: bool,
    /// The task files' folder; the suite built into the binary when it does not exist.
    #[arg(long, default_value = "evals/tasks")]
    tasks: PathBuf,
    /// The injection scenarios' file.
    #[arg(long, default_value = "evals/injection.yaml")]
    injection: PathBuf,
    /// Where latest.json and latest.md are written.
    #[arg(long, default_value = "evals/report")]
    out: PathBuf,
    /// Do not store the report in the database.
    #[arg(long)]
    no_store: bool,
    /// A sentence shown above the report's figures: what the run measures and what it does not
    /// (`cargo xtask eval --local-model` labels a 135M model's run as a test of the harness).
    #[arg(long)]
    label: Option<String>,
    /// The database, as `app_user`: the checks' SQL must run under row-level security (the
    /// owner role is refused). `cargo xtask eval` sets it; unset, the running embedded cluster of
    /// the checkout this runs in.
    #[arg(long, env = "APP_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Measure the decision layer (the router and the stop judge) on the labelled sets in
    /// evals/decisions/: per set, downgrades and wrong downgrades, stops, wrong and missed stops.
    #[command(after_help = "Examples:\n  kakeibo-evals decisions --backend heuristic\n  \
        JUDGE_BASE_URL=http://localhost:11434/v1 DECISION_MODEL=llama3.1:8b kakeibo-evals decisions --backend llm\n\n\
        Every read of a held-out set is appended to the read log (evals/decisions/heldout-reads.log).")]
    Decisions(DecisionArgs),
}

#[derive(Debug, clap::Args)]
struct DecisionArgs {
    /// `heuristic` (offline rules) or `llm` (the judge at JUDGE_BASE_URL, asking DECISION_MODEL).
    #[arg(long, value_enum, default_value = "heuristic")]
    backend: BackendName,
    /// The folder of the labelled sets.
    #[arg(long, default_value = "evals/decisions")]
    sets: PathBuf,
    /// Where each read of a held-out set is logged.
    #[arg(long, default_value = "evals/decisions/heldout-reads.log")]
    reads_log: PathBuf,
    /// Also write the report as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum BackendName {
    Heuristic,
    Llm,
}

async fn decisions(args: DecisionArgs) -> Result<()> {
    use kakeibo_evals::decisions::{self, Backend};
    let backend = match args.backend {
        BackendName::Heuristic => Backend::Heuristic,
        BackendName::Llm => {
            let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
            let config = kakeibo_judge::JudgeConfig::from_vars(&var)?.context(
                "the llm backend needs a judge: set JUDGE_BASE_URL (an OpenAI-compatible endpoint that \
                 returns logprobs) and DECISION_MODEL",
            )?;
            Backend::Llm(kakeibo_judge::Judge::probe(config).await?)
        }
    };
    let report = decisions::run(&args.sets, &backend, &args.reads_log).await?;
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    print!("{}", report.to_markdown());
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    // Logs on stderr (stdout is the answer or the protocol), errors unless RUST_LOG asks for more.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kakeibo-evals: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn load_suite(args: &Args) -> Result<Suite> {
    let suite = if args.tasks.is_dir() {
        Suite::from_files(&args.tasks, &args.injection)?
    } else {
        eprintln!(
            "kakeibo-evals: {} does not exist; running the suite built into this binary",
            args.tasks.display()
        );
        Suite::embedded()?
    };
    Ok(match &args.filter {
        Some(filter) => suite.select(filter)?,
        None => suite,
    })
}

async fn run(mut args: Args) -> Result<()> {
    if let Some(Command::Decisions(decision_args)) = args.command.take() {
        return decisions(decision_args).await;
    }
    let suite = load_suite(&args)?;
    if args.list {
        for task in &suite.tasks {
            println!(
                "{:<44} {:<15} {:>2} turn(s) {}",
                task.id,
                task.class,
                task.turns.len(),
                task.tags.join(",")
            );
        }
        println!("{} task(s)", suite.tasks.len());
        return Ok(());
    }

    let overrides = |name: &str| match name {
        "AGENT_MODEL" => args.model.clone(),
        "JUDGE_MODEL" => args.judge_model.clone(),
        _ => None,
    };
    let var = |name: &str| overrides(name).or_else(|| std::env::var(name).ok());
    let (agent, judge) = launch::models(&var)?;

    let url = if let Some(url) = args.database_url.clone() {
        url
    } else {
        let found = kakeibo_localdb::discover(&kakeibo_localdb::default_starts());
        found
            .app_url()
            .with_context(|| format!("no database: {found} (or set APP_DATABASE_URL, the app_user role)"))?
    };
    let pool = kakeibo_ledger::connect(&url, 4)?;
    let bench = Bench::new(pool.clone(), EVAL_OWNER);

    let with_injection = !args.no_injection && args.filter.is_none();
    eprintln!(
        "kakeibo-evals: {} task(s){} with {} ({}), judged by {}",
        suite.tasks.len(),
        if with_injection {
            " and the injection suite"
        } else {
            ""
        },
        agent.agent.model(),
        agent.agent.name(),
        judge.model()
    );
    let progress = |line: &str| eprintln!("  {line}");
    let options = Options {
        agent: &agent,
        judge: judge.as_ref(),
        system: SYSTEM_PROMPT,
        trigger: "cli",
        filter: args.filter.clone(),
        with_injection,
        deadline: None,
        progress: &progress,
    };
    let mut report = suite::run(&bench, &suite, &options).await?;
    report.label = args.label.clone();

    write_report(&args.out, &report)?;
    if !args.no_store {
        store::save(&pool, &report)
            .await
            .context("storing the report (run the migrations: `kakeibo migrate`)")?;
    }
    println!(
        "{}/{} passed ({}%){} · total ${} · {}",
        report.passed,
        report.task_count,
        report.pass_rate,
        report
            .injection_block_rate
            .map_or_else(String::new, |r| format!(" · injection {r}% blocked")),
        report.total_cost_micro_usd.decimal(),
        args.out.join("latest.md").display()
    );
    Ok(())
}

/// Writes `latest.json` and `latest.md` whole (a temporary file renamed over the old one).
fn write_report(dir: &Path, report: &kakeibo_evals::EvalReport) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let json = serde_json::to_string_pretty(report)?;
    for (name, text) in [("latest.json", json), ("latest.md", report.to_markdown())] {
        let path = dir.join(name);
        let partial = dir.join(format!(".{name}.partial"));
        std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
        std::fs::rename(&partial, &path).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
