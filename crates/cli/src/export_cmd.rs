//! `kakeibo export`: the whole ledger out, as a journal, a Beancount file, CSV or JSON; and
//! `kakeibo import FILE.json` of such a JSON export: the ledger back.

use std::{
    io::{IsTerminal, Read, Write},
    path::{Path, PathBuf},
};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use kakeibo_export::{Format, Period};
use kakeibo_ledger::OwnerId;

use crate::{DbArgs, pool, terminal::visible};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// An hledger journal (`hledger -f FILE check` runs clean).
    Hledger,
    /// A Ledger file (`ledger --pedantic -f FILE bal`).
    Ledger,
    /// A Beancount 3 file (`bean-check FILE`).
    Beancount,
    /// One row per posting (RFC 4180, UTF-8).
    Csv,
    /// Everything, conversations included; `kakeibo import FILE.json` restores it.
    Json,
}

impl From<ExportFormat> for Format {
    fn from(f: ExportFormat) -> Self {
        match f {
            ExportFormat::Hledger => Self::Hledger,
            ExportFormat::Ledger => Self::Ledger,
            ExportFormat::Beancount => Self::Beancount,
            ExportFormat::Csv => Self::Csv,
            ExportFormat::Json => Self::Json,
        }
    }
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The file format.
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// Only transactions of YYYY, YYYY-MM or FROM..TO (YYYY-MM-DD..YYYY-MM-DD, either end may be
    /// left out); the journals then open with the balances brought forward to FROM.
    #[arg(long)]
    period: Option<String>,
    /// Write here instead of stdout (written beside it first and moved into place when whole).
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// Whose ledger (default: the development owner).
    #[arg(long, value_name = "UUID", default_value_t = kakeibo_ledger::DEV_OWNER.as_uuid())]
    owner: uuid::Uuid,
    #[command(flatten)]
    database: DbArgs,
}

pub async fn run(args: ExportArgs) -> Result<()> {
    let period = match &args.period {
        Some(text) => Period::parse(text)?,
        None => Period::default(),
    };
    let pool = pool(&args.database)?;
    let owner = OwnerId::new(args.owner);
    let format = Format::from(args.format);
    let show_progress = args.out.is_some() && std::io::stderr().is_terminal();
    let mut progress = |n: u64| {
        if show_progress {
            eprint!("\rexport: {n} transactions written");
        }
    };
    let written = if let Some(path) = &args.out {
        to_file(path, owner, &pool, format, period, &mut progress).await?
    } else {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout);
        match kakeibo_export::export(owner, &pool, format, period, &mut out, &mut progress).await {
            Ok(written) => written,
            // `kakeibo export … | head`: the reader has all it wanted.
            Err(e) if e.is_broken_pipe() => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    };
    if show_progress {
        eprintln!();
    }
    let place = args
        .out
        .as_ref()
        .map_or_else(|| "stdout".to_owned(), |p| p.display().to_string());
    eprintln!(
        "export: {} accounts, {} transactions ({} postings), {} closing balances asserted{} as {} to {}",
        written.accounts,
        written.transactions,
        written.postings,
        written.assertions,
        if written.unasserted > 0 {
            format!(
                " ({} noted but not asserted: the ledger disagrees with the bank)",
                written.unasserted
            )
        } else {
            String::new()
        },
        format.name(),
        visible(&place)
    );
    Ok(())
}

/// The export written beside `path` and moved into place when whole: a crash leaves no half file.
async fn to_file(
    path: &Path,
    owner: OwnerId,
    pool: &sqlx::PgPool,
    format: Format,
    period: Period,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<kakeibo_export::Written> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    let written = {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file.as_file_mut());
        let written = kakeibo_export::export(owner, pool, format, period, &mut out, progress).await?;
        out.flush()?;
        written
    };
    file.as_file().sync_all()?;
    file.persist(path)
        .with_context(|| format!("moving the export to {}", path.display()))?;
    Ok(written)
}

/// Whether `file` is to be read as kakeibo's JSON export: it starts as one does, or it is named
/// `.json` (no statement format kakeibo reads is JSON, so its refusal then says what is wrong).
pub fn is_export(file: &Path) -> bool {
    if file.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        return true;
    }
    let mut head = [0u8; 256];
    let Ok(mut opened) = std::fs::File::open(file) else {
        return false;
    };
    let n = opened.read(&mut head).unwrap_or(0);
    let head = String::from_utf8_lossy(head.get(..n).unwrap_or_default());
    let compact: String = head.chars().filter(|c| !c.is_whitespace()).collect();
    compact.starts_with(&format!("{{\"format\":\"{}\"", kakeibo_export::model::FORMAT))
}

/// Restores a JSON export into `owner`'s empty ledger (checked and counted only, with `dry_run`).
pub async fn restore(
    file: &Path,
    owner: OwnerId,
    database: &DbArgs,
    dry_run: bool,
    json: bool,
) -> Result<()> {
    let opened = std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
    let export = kakeibo_export::read_export(opened).with_context(|| format!("in {}", file.display()))?;
    let what = format!(
        "a kakeibo export made {} of {}, {}, {} and {}",
        export.exported_at.format("%Y-%m-%d %H:%M UTC"),
        count(export.accounts.len(), "account"),
        count(export.transactions.len(), "transaction"),
        count(export.import_batches.len(), "statement"),
        count(export.conversations.len(), "conversation")
    );
    if dry_run {
        crate::outln!(
            "{}: {what}; --dry-run: nothing restored",
            visible(&file.display().to_string())
        );
        return Ok(());
    }
    let pool = pool(database)?;
    let mut conn = pool.acquire().await?;
    crate::ensure_user(owner, &mut conn).await?;
    drop(conn);
    let restored = kakeibo_export::restore(owner, &pool, &export).await?;
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&restored)?);
    } else {
        crate::outln!(
            "restored {what} into owner {owner}: {} postings, {} budgets, {} rules, {} memories, {} runs, {} edits",
            restored.postings,
            restored.budgets,
            restored.rules,
            restored.memories,
            restored.runs,
            restored.edits
        );
    }
    Ok(())
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
