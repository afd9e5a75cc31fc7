//! `kakeibo`: the command line of the household ledger.

/// `println!` that ends the program quietly when stdout is closed (`kakeibo report … | head`).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}
pub(crate) use outln;

mod chat_cmd;
mod export_cmd;
mod import_cmd;
mod operator_cmd;
mod providers_cmd;
mod repl;
mod report_cmd;
mod table;
mod terminal;

use std::{path::PathBuf, process::ExitCode};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use kakeibo_ledger::{DEV_OWNER, LedgerError, OwnerId, STATIC_RATES, seed, with_owner};

#[derive(Debug, Parser)]
#[command(
    name = "kakeibo",
    version,
    about = "kakeibo (家計簿): a personal-finance agent over a double-entry ledger",
    args_conflicts_with_subcommands = true,
    after_help = "One shot: kakeibo -p \"how much did I spend on dining in March?\" [--output-format text|json|stream-json] [--allow-writes]\n\
        Exit status of -p: 0 answered; 2 stopped short (iteration cap, stuck, length limit, blocked by the provider);\n\
        1 an error (no model configured included); 130 stopped by Ctrl+C. Writes are declined unless --allow-writes.\n\
        For an editor: kakeibo --acp [--owner UUID] [--hooks FILE] serves the Agent Client Protocol on stdio.\n\
        The model comes from the environment: GEMINI_API_KEY, ANTHROPIC_API_KEY, OPENAI_BASE_URL (+ OPENAI_API_KEY),\n\
        or KAKEIBO_PROVIDER=script:PATH; `kakeibo providers check` says what is selected.\n\n\
        The database: every command but `providers` and `seed --out` needs one. DATABASE_URL (or --database-url)\n\
        names it; when unset, kakeibo uses the embedded cluster of the checkout it runs in (the one\n\
        `cargo xtask db up` or `cargo xtask dev` starts), and says how to start it when it is not running."
)]
#[command(group(clap::ArgGroup::new("mode").args(["print", "acp"])))]
struct Cli {
    /// Ask one question, print the answer and exit (one-shot mode).
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    print: Option<String>,
    /// Serve the Agent Client Protocol on stdio, for an editor: each session is a conversation,
    /// each write asks the editor first.
    #[arg(long)]
    acp: bool,
    /// With -p: how to print the result.
    #[arg(long, value_enum, default_value = "text", requires = "print")]
    output_format: chat_cmd::OutputFormat,
    /// With -p: let the agent write to the ledger (declined otherwise).
    #[arg(long, requires = "print")]
    allow_writes: bool,
    /// With -p or --acp: whose ledger (default: the development owner).
    #[arg(long, value_name = "UUID", requires = "mode", default_value_t = DEV_OWNER.as_uuid())]
    owner: uuid::Uuid,
    /// With -p: continue this conversation.
    #[arg(long, visible_alias = "resume", value_name = "ID", requires = "print")]
    conversation: Option<uuid::Uuid>,
    /// With -p or --acp: hooks from this settings file (Claude Code's `hooks` format).
    #[arg(long, value_name = "FILE", requires = "mode")]
    hooks: Option<PathBuf>,
    /// With -p or --acp: what to do with a figure of an answer that no tool returned: `flag`
    /// marks it, `retry` asks the model once to correct the answer (a second, priced call).
    #[arg(long, value_name = "POLICY", env = "FIGURES", default_value = "flag", value_parser = chat_cmd::figures_policy)]
    figures: kakeibo::FiguresPolicy,
    /// With -p or --acp: the instruction files and skills.
    #[command(flatten)]
    project: chat_cmd::ProjectArgs,
    /// With -p or --acp: MCP servers and permission rules.
    #[command(flatten)]
    sources: chat_cmd::SourcesArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Talk to the agent about the ledger (a REPL; writes ask [y/N]).
    #[command(
        after_help = "Commands inside: /help, /conversations (or /sessions), /resume ID, /reset, /history, /cost,\n\
        /model [ID], /tools, /exit (or /quit). Ctrl+C stops a turn (the next run is told); again, or Ctrl+D, quits.\n\
        Piped input works as typed input: printf 'how much did I spend?\\n/cost\\n/exit\\n' | kakeibo chat"
    )]
    Chat(chat_cmd::ChatArgs),
    /// Apply the database migrations (as the owner role in DATABASE_URL).
    Migrate(DbArgs),
    /// Generate the deterministic demo ledger, as files or into the database.
    #[command(
        after_help = "Examples:\n  kakeibo seed --out seed/\n  kakeibo seed --db\n  kakeibo seed --db --reset"
    )]
    Seed(SeedArgs),
    /// Import a bank statement (CSV) into the ledger: a preview, then the commit.
    #[command(after_help = "Examples:\n  kakeibo import ~/Downloads/statement.csv\n  \
        kakeibo import card.csv --account 'Credit Card' --invert --yes\n  kakeibo import stmt.csv --dry-run --json")]
    Import(import_cmd::ImportArgs),
    /// Reports over the ledger: spend, budget, recurring, anomalies, accounts.
    #[command(after_help = "Examples:\n  kakeibo report spend --period 2025-03\n  \
        kakeibo report spend --period 2025-01-01..2025-06-30 --by month\n  kakeibo report recurring --json")]
    Report(report_cmd::ReportArgs),
    /// The whole ledger out: an hledger journal, a Ledger or Beancount file, CSV or JSON.
    #[command(
        after_help = "Examples:\n  kakeibo export --format hledger --out books.journal && hledger -f books.journal check\n  \
        kakeibo export --format beancount --period 2025 --out 2025.beancount\n  \
        kakeibo export --format json --out everything.json   (kakeibo import everything.json restores it)"
    )]
    Export(export_cmd::ExportArgs),
    /// Model providers: which one the environment selects, and whether it answers.
    Providers(providers_cmd::ProvidersArgs),
    /// The nightly housekeeping, now: stale anonymous visitors (and everything of theirs), expired
    /// confirmations, old counters and import plans; the counts are printed and recorded.
    Reap(DbArgs),
    /// Operator accounts for the admin pages (made only here, never by signing up).
    #[command(
        after_help = "Examples:\n  printf '%s\\n' \"$PASSWORD\" | kakeibo operator add ops@example.com\n  \
        kakeibo operator remove ops@example.com"
    )]
    Operator(operator_cmd::OperatorArgs),
}

#[derive(Debug, Args)]
pub(crate) struct DbArgs {
    /// PostgreSQL URL of the owner role [default: the checkout's embedded cluster when it runs].
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(true).args(["out", "db"])))]
struct SeedArgs {
    /// Write transactions.csv, labels.json and rates.json into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Load the demo ledger into the database (idempotent: rows already there are skipped).
    #[arg(long)]
    db: bool,
    /// With --db: load from this directory's transactions.csv instead of generating the rows.
    #[arg(long, value_name = "DIR", requires = "db")]
    from: Option<PathBuf>,
    /// With --db: delete the owner's ledger (accounts, transactions, rules, budgets, memories) first.
    #[arg(long, requires = "db")]
    reset: bool,
    /// With --db: whose ledger (default: the development owner).
    #[arg(long, value_name = "UUID", requires = "db", default_value_t = DEV_OWNER.as_uuid())]
    owner: uuid::Uuid,
    #[command(flatten)]
    database: DbArgs,
}

/// `kakeibo --acp`: the ACP server on stdio, over the library's database (`APP_DATABASE_URL`,
/// else the checkout's running cluster) — until the editor closes stdin.
async fn acp(
    owner: uuid::Uuid,
    hooks: Option<PathBuf>,
    figures: kakeibo::FiguresPolicy,
    project: chat_cmd::ProjectArgs,
    sources: &chat_cmd::SourcesArgs,
) -> ExitCode {
    let served = async {
        let rules = sources.rules()?;
        let mcp = sources.mcp_config()?;
        let pool = kakeibo::connect(&kakeibo::database_url()?)?;
        let setting = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let settings = kakeibo_acp::Settings {
            pool,
            owner: OwnerId::new(owner),
            hooks,
            judge: chat_cmd::judge(&setting).await,
            figures,
            instructions: !project.no_instructions,
            skills: !project.no_skills,
            rules: std::sync::Arc::new(rules),
            task_list: !sources.no_task_list,
            subagents: !project.no_subagents,
            mcp,
            mcp_timeouts: kakeibo::mcp::Timeouts::from_env(),
            max_turns: sources.max_turns,
            read_only: sources.read_only,
        };
        kakeibo_acp::serve(settings).await?;
        anyhow::Ok(())
    };
    match served.await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("kakeibo: error: {}", terminal::visible_lines(&format!("{err:#}")));
            ExitCode::FAILURE
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs on stderr (stdout is the answer or the protocol), errors unless RUST_LOG asks for more.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    if cli.acp {
        return acp(cli.owner, cli.hooks, cli.figures, cli.project, &cli.sources).await;
    }
    if let Some(prompt) = cli.print {
        let args = chat_cmd::PrintArgs {
            prompt,
            format: cli.output_format,
            allow_writes: cli.allow_writes,
            chat: chat_cmd::ChatArgs::new(
                cli.owner,
                cli.conversation,
                cli.hooks,
                cli.figures,
                cli.project,
                cli.sources,
                DbArgs {
                    database_url: std::env::var("DATABASE_URL").ok(),
                },
            ),
        };
        return ExitCode::from(chat_cmd::print(args).await);
    }
    let Some(command) = cli.command else {
        let _ = <Cli as clap::CommandFactory>::command().print_help();
        return ExitCode::from(2);
    };
    let outcome = match command {
        Command::Chat(args) => repl::repl(args).await,
        Command::Migrate(args) => migrate(&args).await,
        Command::Seed(args) => seed_command(args).await,
        Command::Import(args) => import_cmd::run(args).await,
        Command::Report(args) => report_cmd::run(args).await,
        Command::Export(args) => export_cmd::run(args).await,
        Command::Providers(args) => return providers_cmd::run(args).await,
        Command::Operator(args) => operator_cmd::run(args).await,
        Command::Reap(args) => reap(&args).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("kakeibo: error: {}", terminal::visible_lines(&format!("{err:#}")));
            ExitCode::FAILURE
        }
    }
}

/// The owner role's pool: `--database-url`/`DATABASE_URL` when given, else the embedded cluster
/// of the checkout this runs in (found from the working directory, then from the program's own
/// folder), else an error saying how to start one.
pub(crate) fn pool(args: &DbArgs) -> Result<sqlx::PgPool> {
    let url = if let Some(url) = args.database_url.as_deref().filter(|u| !u.trim().is_empty()) {
        url.to_owned()
    } else {
        let found = kakeibo_localdb::discover(&kakeibo_localdb::default_starts());
        let Some(url) = found.owner_url() else {
            bail!("{found}");
        };
        url
    };
    Ok(kakeibo_ledger::connect(&url, 2)?)
}

async fn reap(args: &DbArgs) -> Result<()> {
    let pool = kakeibo_ledger::OwnerRolePool::new(pool(args)?);
    let reaped = kakeibo_operator::housekeeping::reap(&pool, chrono::Utc::now())
        .await
        .context("reaping")?;
    outln!("{}", terminal::json(&serde_json::to_string_pretty(&reaped)?));
    Ok(())
}

async fn migrate(args: &DbArgs) -> Result<()> {
    let pool = pool(args)?;
    kakeibo_ledger::migrate(&pool)
        .await
        .context("applying migrations")?;
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&pool)
        .await
        .context("reading the migration history")?;
    eprintln!("migrations: {applied} applied, database up to date");
    Ok(())
}

async fn seed_command(args: SeedArgs) -> Result<()> {
    let data = seed::generate()?;
    if let Some(dir) = &args.out {
        seed::write_files(dir, &data, &STATIC_RATES)?;
        eprintln!(
            "seed: wrote transactions.csv ({} rows), labels.json and rates.json to {}",
            data.rows.len(),
            dir.display()
        );
    }
    if !args.db {
        return Ok(());
    }
    let (filename, rows) = if let Some(dir) = &args.from {
        let path = dir.join("transactions.csv");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let rows = seed::read_transactions_csv(&text).with_context(|| format!("in {}", path.display()))?;
        (path.display().to_string(), rows)
    } else {
        let text = seed::transactions_csv(&data)?;
        ("transactions.csv".to_owned(), seed::read_transactions_csv(&text)?)
    };
    let pool = pool(&args.database)?;
    let owner = OwnerId::new(args.owner);
    let reset = args.reset;
    let report = with_owner(owner, &pool, |conn| {
        Box::pin(async move {
            ensure_user(owner, &mut *conn).await?;
            if reset {
                seed::clear_ledger(owner, &mut *conn).await?;
            }
            seed::load(owner, conn, &filename, &rows).await
        })
    })
    .await
    .context("loading the demo ledger")?;
    eprintln!(
        "seed: owner {owner}: {} transactions added ({} of them uncategorised), {} already present",
        report.inserted, report.uncategorized, report.duplicates
    );
    Ok(())
}

/// The owner must exist as a user; the development owner always does (migration 0001).
pub(crate) async fn ensure_user(owner: OwnerId, conn: &mut sqlx::PgConnection) -> Result<(), LedgerError> {
    let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM users WHERE id = $1)")
        .bind(owner.as_uuid())
        .fetch_one(conn)
        .await?;
    if exists {
        Ok(())
    } else {
        Err(LedgerError::Seed(format!(
            "no user {owner}: --owner takes the id of an existing user (a visitor exists from their first \
             message on the site); without it the development owner's ledger is used"
        )))
    }
}
