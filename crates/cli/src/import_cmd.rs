//! `kakeibo import FILE`: preview a statement, then commit exactly that preview.

use std::{
    collections::BTreeMap,
    io::{BufRead, IsTerminal, Write},
    path::PathBuf,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kakeibo_ledger::{
    Currency, OwnerId, begin_for_owner,
    import::{self, Direction, ImportPreview, LineCount, Mapping, ParseOptions, PreviewMoney, PreviewRow},
    transfers::Decision,
};

use crate::{
    DbArgs, pool, table,
    terminal::{json, visible},
};

#[derive(Debug, Args)]
#[allow(clippy::struct_excessive_bools)] // Command-line flags.
pub struct ImportArgs {
    /// The statement: a CSV export of your bank (UTF-8, Windows-1252/Latin-1, …), OFX/QFX, QIF,
    /// camt.053 or MT940 — or kakeibo's own JSON export, restored into an empty ledger.
    file: PathBuf,
    /// The account to import into (default Checking; another currency gets "NAME (CUR)"). It is
    /// created when missing, of the kind --kind says.
    #[arg(long, value_name = "NAME")]
    account: Option<String>,
    /// The kind of a new account: checking, savings, card, cash or loan (cards and loans are
    /// liabilities). Without it the statement's own layout decides (a card's Sale, Payment and
    /// Return rows make a card), else checking; an existing account keeps its kind.
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    kind: Option<kakeibo_ledger::AccountKind>,
    /// How many days apart the two sides of a transfer between your own accounts may be dated.
    #[arg(long, value_name = "DAYS", default_value_t = kakeibo_ledger::transfers::DEFAULT_WINDOW_DAYS,
          value_parser = clap::value_parser!(u32).range(0..=60))]
    transfer_window: u32,
    /// The currency of amounts that name none. Needed when the file names no currency and the
    /// account holds nothing yet; otherwise the account's currency is used.
    #[arg(long, value_name = "CODE")]
    currency: Option<String>,
    /// Only show the preview; change nothing in the ledger.
    #[arg(long)]
    dry_run: bool,
    /// Commit without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// The statement shows spending as positive amounts (card statements): flip every sign.
    #[arg(long)]
    invert: bool,
    /// A mapping file: kakeibo's JSON mapping (date, amount or debit/credit, description,
    /// balance, currency, direction, date_order, skip_lines, header, delimiter, invert) or a
    /// Firefly III Data Importer configuration. The column flags override it.
    #[arg(long, value_name = "FILE")]
    mapping: Option<PathBuf>,
    /// The date column, by header name or 1-based number, when it is not recognised.
    #[arg(long, value_name = "COLUMN")]
    date_column: Option<String>,
    /// The amount column, by header name or number.
    #[arg(long, value_name = "COLUMN")]
    amount_column: Option<String>,
    /// The description column, by header name or number.
    #[arg(long, value_name = "COLUMN")]
    description_column: Option<String>,
    /// The money-out column of a statement with two amount columns, by header name or number.
    #[arg(long, value_name = "COLUMN", conflicts_with = "amount_column")]
    debit_column: Option<String>,
    /// The money-in column of a statement with two amount columns, by header name or number.
    #[arg(long, value_name = "COLUMN", conflicts_with = "amount_column")]
    credit_column: Option<String>,
    /// How the file writes numeric dates, when they could be read more than one way: dmy
    /// (day-first: 4/6/25 is 4 June 2025), mdy (month-first: April 6) or ymd (year-first, for
    /// two-digit years: 6 April 2004). Also spelled day-first, month-first, year-first.
    #[arg(long, value_enum, value_name = "ORDER")]
    date_order: Option<DateOrderArg>,
    /// A row the balance column refuses, taken in anyway: LINE=amount books it at the amount it
    /// states, LINE=balance at the change of the balance across it. The preview lists both
    /// figures of each such row. Repeat for several rows.
    #[arg(long, value_name = "LINE=FIGURE", value_parser = parse_take)]
    take: Vec<(usize, import::Figure)>,
    /// Which statement of a file that holds several (an OFX download of a bank account and a
    /// card), by its number as the refusal lists them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    statement: Option<u16>,
    /// Every statement of a file that holds several, one after another, each into its own
    /// account with its own preview and question.
    #[arg(long, conflicts_with_all = ["statement", "json", "account"])]
    all_statements: bool,
    /// Whose ledger (default: the development owner).
    #[arg(long, value_name = "UUID", default_value_t = kakeibo_ledger::DEV_OWNER.as_uuid())]
    owner: uuid::Uuid,
    #[command(flatten)]
    database: DbArgs,
}

/// The rows taken in at a figure their person chose, and how to take in each row the balance
/// column refused.
fn print_figures(plan: &import::Plan) {
    for taken in &plan.format.taken {
        crate::outln!("taken in on your word: {}", visible(&taken.in_words()));
    }
    for error in &plan.errors {
        let Some(figures) = error.figures else {
            continue;
        };
        let money = |minor| kakeibo_ledger::Money::new(minor, figures.currency).format();
        let line = error.line;
        crate::outln!(
            "line {line} can be taken in at its amount ({}) with --take {line}=amount, or at the balance's \
             change ({}) with --take {line}=balance",
            money(figures.amount_minor),
            money(figures.balance_minor),
        );
    }
}

/// `--take LINE=amount|balance`.
fn parse_take(text: &str) -> Result<(usize, import::Figure), String> {
    let (line, figure) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: write LINE=amount or LINE=balance, e.g. 7=balance"))?;
    let line: usize = line
        .trim()
        .parse()
        .map_err(|_| format!("{line:?} is not a line number"))?;
    let figure = match figure.trim().to_ascii_lowercase().as_str() {
        "amount" => import::Figure::Amount,
        "balance" => import::Figure::Balance,
        other => return Err(format!("{other:?}: take a row at its amount or at its balance")),
    };
    Ok((line, figure))
}

/// `--date-order`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DateOrderArg {
    #[value(alias = "day-first")]
    Dmy,
    #[value(alias = "month-first")]
    Mdy,
    #[value(alias = "year-first")]
    Ymd,
}

pub async fn run(args: ImportArgs) -> Result<()> {
    if crate::export_cmd::is_export(&args.file) {
        let owner = kakeibo_ledger::OwnerId::new(args.owner);
        return crate::export_cmd::restore(&args.file, owner, &args.database, args.dry_run, args.json).await;
    }
    let meta =
        std::fs::metadata(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    if meta.len() > import::MAX_BYTES as u64 {
        bail!(
            "{} is {} bytes; statements up to {} bytes are accepted",
            args.file.display(),
            meta.len(),
            import::MAX_BYTES
        );
    }
    let bytes = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let filename = args.file.file_name().map_or_else(
        || args.file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if !args.all_statements {
        return import_one(&args, &bytes, &filename, args.statement.map(usize::from)).await;
    }
    let statements = match import::parse(&bytes, &ParseOptions::default()) {
        Err(import::ImportError::SeveralStatements { statements }) => statements,
        _ => Vec::new(),
    };
    if statements.is_empty() {
        return import_one(&args, &bytes, &filename, None).await;
    }
    for (index, statement) in statements.iter().enumerate() {
        let number = index.saturating_add(1);
        crate::outln!();
        crate::outln!(
            "statement {number} of {}: {}",
            statements.len(),
            visible(statement)
        );
        import_one(&args, &bytes, &filename, Some(number)).await?;
    }
    Ok(())
}

/// Previews statement `statement` of `bytes` (the only one when `None`) and commits it as asked.
async fn import_one(args: &ImportArgs, bytes: &[u8], filename: &str, statement: Option<usize>) -> Result<()> {
    let filename = filename.to_owned();
    let options = ParseOptions {
        mapping: mapping(args)?,
        currency: args.currency.as_deref().map(Currency::parse).transpose()?,
        date_hint: None,
        figures: args.take.iter().copied().collect(),
        statement,
    };
    let sha256 = import::file_sha256(bytes);
    let pool = pool(&args.database)?;
    let owner = OwnerId::new(args.owner);
    let mut tx = begin_for_owner(owner, &pool).await?;
    let saved = import::saved_mapping(
        owner,
        &mut tx,
        args.account.as_deref().unwrap_or(kakeibo_ledger::CHECKING),
    )
    .await?;
    let parsed = match import::parse_with_saved(bytes, &options, saved.as_ref()) {
        Ok(parsed) => parsed,
        Err(import::ImportError::NoHeader) => bail!(
            "{filename}: no header row with a date column and an amount (or debit/credit) column was found \
             in the first lines; name them with --date-column and --amount-column (or --debit-column and \
             --credit-column), by header or 1-based number, or give a --mapping file"
        ),
        Err(err) => return Err(anyhow::Error::new(err).context(filename.clone())),
    };
    // A --take for a line the balance column does not refuse takes nothing: said, not ignored.
    let unused: Vec<String> = args
        .take
        .iter()
        .filter(|(line, _)| !parsed.format.taken.iter().any(|t| t.line == *line))
        .map(|(line, _)| line.to_string())
        .collect();
    if !unused.is_empty() {
        bail!(
            "{filename}: --take names line {}, which the balance column does not refuse with a figure to \
             take; run with --dry-run to see the rows it refuses",
            unused.join(", ")
        );
    }
    let target = import::Target {
        account: args.account.clone(),
        kind: args.kind,
        window_days: Some(args.transfer_window),
    };
    let (plan_id, plan) = import::plan_into(owner, &mut tx, &filename, &sha256, parsed, &target).await?;
    tx.commit().await?;
    let preview = import::preview(plan_id, &plan);
    if args.json {
        crate::outln!("{}", json(&serde_json::to_string_pretty(&preview)?));
    } else {
        print_preview(&preview);
        print_figures(&plan);
    }
    let nothing = plan.rows_to_add() == 0 && plan.corrections_to_apply() == 0;
    if args.dry_run || nothing {
        if !args.json && nothing {
            eprintln!("nothing to import: every row is already in the ledger or could not be read");
        } else if !args.json {
            eprintln!("dry run: nothing was added (plan {plan_id})");
        }
        return Ok(());
    }
    let what = if plan.rows_to_add() == 0 {
        format!(
            "Apply the bank's {} to",
            count(plan.corrections_to_apply() as u64, "correction", "corrections")
        )
    } else {
        format!("Import {} into", count(plan.rows_to_add() as u64, "row", "rows"))
    };
    if !args.yes && !confirm(&format!("{what} {}? [y/N] ", visible(&account_names(&preview))))? {
        eprintln!("not imported; nothing was added");
        return Ok(());
    }

    let bar = ProgressBar::with_draw_target(
        Some(plan.rows_to_add() as u64),
        if std::io::stderr().is_terminal() && !args.json {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} rows {per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let choices = if args.yes {
        BTreeMap::new()
    } else {
        ask_transfers(&plan)?
    };
    let mut tx = begin_for_owner(owner, &pool).await?;
    let report = import::commit_with(owner, &mut tx, plan_id, &choices, &mut |done, _| {
        bar.set_position(done as u64);
    })
    .await?;
    tx.commit().await?;
    bar.finish_and_clear();
    if args.json {
        crate::outln!("{}", json(&serde_json::to_string_pretty(&report)?));
    } else {
        print_report(&report);
    }
    Ok(())
}

/// What the commit did, in words.
fn print_report(report: &import::CommitReport) {
    crate::outln!(
        "imported {} ({} uncategorised){}",
        count(report.imported as u64, "row", "rows"),
        report.uncategorized,
        if report.skipped_duplicates > 0 {
            format!(", {} already present", report.skipped_duplicates)
        } else {
            String::new()
        }
    );
    if report.corrected > 0 {
        crate::outln!(
            "the bank's corrections took out {} of earlier statements",
            count(report.corrected as u64, "row", "rows")
        );
    }
    if report.transfers_paired + report.in_transit > 0 {
        crate::outln!(
            "transfers between your accounts: {} paired with their other side, {} waiting in transit",
            report.transfers_paired,
            report.in_transit
        );
    }
    if let Some(opening) = &report.opening {
        crate::outln!(
            "opening balance of {} booked on {}: {}",
            visible(&opening.account),
            opening.date,
            kakeibo_ledger::Money::new(opening.amount_minor, opening.currency).format()
        );
    }
    if let Some(balance) = &report.balance {
        crate::outln!("{}", visible(&balance.in_words()));
    }
}

fn parse_kind(text: &str) -> Result<kakeibo_ledger::AccountKind, String> {
    text.parse()
}

/// Asks which candidate each row with several equal ones is; with no terminal, or an answer
/// of 0 or nothing, the row waits in transit.
fn ask_transfers(plan: &import::Plan) -> Result<BTreeMap<usize, usize>> {
    let mut choices = BTreeMap::new();
    for transfer in &plan.transfers {
        let (Decision::Ask { candidates }, Some(line)) = (&transfer.decision, transfer.row.line) else {
            continue;
        };
        eprintln!(
            "line {line}: {} {} “{}” could be one transfer with any of:",
            transfer.row.date,
            kakeibo_ledger::Money::new(transfer.row.amount_minor, transfer.row.currency).format(),
            visible(&transfer.row.description)
        );
        for (i, c) in candidates.iter().enumerate() {
            eprintln!(
                "  {}. {} {} {} “{}”",
                i + 1,
                visible(&c.account),
                c.date,
                kakeibo_ledger::Money::new(c.amount_minor, c.currency).format(),
                visible(&c.description)
            );
        }
        if !std::io::stdin().is_terminal() {
            eprintln!("  (no terminal to answer on: it waits in transit)");
            continue;
        }
        eprint!(
            "  which one? [1-{}, or 0 to leave it in transit] ",
            candidates.len()
        );
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if let Ok(n) = answer.trim().parse::<usize>()
            && (1..=candidates.len()).contains(&n)
        {
            choices.insert(line, n - 1);
        }
    }
    Ok(choices)
}

/// The mapping file's, with the column flags on top.
fn mapping(args: &ImportArgs) -> Result<Mapping> {
    let mut mapping = match &args.mapping {
        Some(path) => {
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read the mapping {}", path.display()))?;
            let file = import::read_mapping(&bytes).with_context(|| format!("{}", path.display()))?;
            if !file.unused.is_empty() {
                eprintln!(
                    "{} is {}; kakeibo does not use {}",
                    visible(&path.display().to_string()),
                    visible(&file.kind),
                    visible(&file.unused.join(", "))
                );
            }
            file.mapping
        }
        None => Mapping::default(),
    };
    let flags = [
        (&args.date_column, &mut mapping.date),
        (&args.amount_column, &mut mapping.amount),
        (&args.description_column, &mut mapping.description),
        (&args.debit_column, &mut mapping.debit),
        (&args.credit_column, &mut mapping.credit),
    ];
    for (flag, field) in flags {
        if flag.is_some() {
            field.clone_from(flag);
        }
    }
    if args.amount_column.is_some() {
        (mapping.debit, mapping.credit) = (None, None);
    }
    if args.debit_column.is_some() || args.credit_column.is_some() {
        mapping.amount = None;
    }
    if let Some(order) = args.date_order {
        mapping.date_order = Some(match order {
            DateOrderArg::Dmy => import::DateOrder::DayFirst,
            DateOrderArg::Mdy => import::DateOrder::MonthFirst,
            DateOrderArg::Ymd => import::DateOrder::YearFirst,
        });
    }
    mapping.invert |= args.invert;
    Ok(mapping)
}

fn account_names(preview: &ImportPreview) -> String {
    preview
        .accounts
        .iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Asks on stderr and reads one line; end of input or anything but y/yes is no.
fn confirm(question: &str) -> Result<bool> {
    eprint!("{question}");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer)? == 0 {
        eprintln!();
        return Ok(false);
    }
    Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
}

/// A list of amounts as "₹1.00, €2.00".
fn formatted(amounts: &[PreviewMoney]) -> String {
    amounts
        .iter()
        .map(|m| m.formatted.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// "1 row", "3 rows".
fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The preview's counts in words, leaving out the ones that are zero (beyond the first).
fn counts_line(p: &ImportPreview) -> String {
    let mut line = match p.rows_to_add as u64 {
        0 => "nothing new to add".to_owned(),
        rows => format!("{} to add into {}", count(rows, "row", "rows"), account_names(p)),
    };
    let also = [
        (
            p.duplicates_skipped,
            "already in the ledger",
            "already in the ledger",
        ),
        (p.parse_errors, "unreadable", "unreadable"),
        (
            p.lines.skipped,
            "line skipped (not a transaction)",
            "lines skipped (not transactions)",
        ),
    ];
    for (k, one, many) in also {
        if k > 0 {
            line.push_str(", ");
            line.push_str(&count(k as u64, one, many));
        }
    }
    line
}

/// "24 lines: 1 header, 2 banner, 18 rows to add, 2 already in the ledger, 1 unreadable".
fn lines_line(lines: &LineCount) -> String {
    let parts: Vec<String> = [
        (lines.header, "header", "headers"),
        (lines.banner, "banner line", "banner lines"),
        (lines.rows, "to add", "to add"),
        (lines.duplicates, "already in the ledger", "already in the ledger"),
        (
            lines.skipped,
            "skipped (not a transaction)",
            "skipped (not transactions)",
        ),
        (lines.unreadable, "unreadable", "unreadable"),
        (lines.notes, "note", "notes"),
        (lines.blank, "blank", "blank"),
        (
            lines.continued,
            "continuing a quoted cell",
            "continuing quoted cells",
        ),
    ]
    .into_iter()
    .filter(|(n, ..)| *n > 0)
    .map(|(n, one, many)| count(n as u64, one, many))
    .collect();
    format!(
        "{}: {}",
        count(lines.total as u64, "line in the file", "lines in the file"),
        parts.join(", ")
    )
}

/// The first and last rows: line, date, description, in or out, amount.
fn print_rows(p: &ImportPreview) {
    let row = |r: &PreviewRow| {
        vec![
            r.line.to_string(),
            r.date.to_string(),
            r.description.chars().take(40).collect(),
            match r.direction {
                Direction::In => "in".to_owned(),
                Direction::Out => "out".to_owned(),
            },
            r.amount.formatted.clone(),
        ]
    };
    let (first, last) = (&p.first_rows, &p.last_rows);
    if first.is_empty() {
        return;
    }
    let mut rows: Vec<Vec<String>> = first.iter().map(row).collect();
    let shown = first.len() + last.len();
    if p.rows_to_add > shown {
        rows.push(vec![
            "…".to_owned(),
            String::new(),
            format!(
                "({})",
                count((p.rows_to_add - shown) as u64, "more row", "more rows")
            ),
            String::new(),
            String::new(),
        ]);
    }
    rows.extend(last.iter().map(row));
    table::print(&[">line", "date", "description", "in/out", ">amount"], &rows);
}

/// A titled table of lines with a problem or a reason, when there are any.
fn print_lines<T>(
    title: &str,
    items: &[T],
    total: usize,
    cells: &dyn Fn(&T) -> Vec<String>,
    header: &[&str],
) {
    if items.is_empty() {
        return;
    }
    crate::outln!();
    if total > items.len() {
        crate::outln!("{title} (the first {} of {total}):", items.len());
    } else {
        crate::outln!("{title}:");
    }
    let rows: Vec<Vec<String>> = items.iter().map(cells).collect();
    table::print(header, &rows);
}

/// The account the rows go into and its kind, the opening balance, the closing balance check,
/// and the rows that look like transfers between own accounts.
fn print_accounts_and_transfers(p: &ImportPreview) {
    crate::outln!();
    for account in &p.accounts {
        crate::outln!(
            "{}: {} {} account ({}){}",
            visible(&account.name),
            if account.exists { "an existing" } else { "a new" },
            account.kind,
            visible(&account.kind_from),
            if account.exists { "" } else { ", created on import" }
        );
    }
    if let Some(opening) = &p.opening_balance {
        crate::outln!(
            "opening balance: {} on {}, against Opening Balances",
            visible(&opening.amount.formatted),
            opening.date
        );
    }
    if let Some(closing) = &p.closing_balance {
        crate::outln!("{}", visible(&closing.in_words));
    }
    if let Some(elsewhere) = &p.elsewhere {
        crate::outln!(
            "{} of these rows are already in {}: they are not added again",
            elsewhere.rows,
            visible(&elsewhere.account)
        );
    }
    let transfers: Vec<Vec<String>> = p
        .transfers
        .iter()
        .map(|t| {
            vec![
                t.row.line.map(|l| l.to_string()).unwrap_or_default(),
                t.row.date.to_string(),
                t.row.description.clone(),
                t.row.amount.formatted.clone(),
                t.in_words.clone(),
            ]
        })
        .collect();
    if !transfers.is_empty() {
        crate::outln!();
        crate::outln!(
            "transfers between your own accounts (neither spending nor income; sides within {} days):",
            p.transfer_window_days
        );
        table::print(
            &[">line", "date", "description", ">amount", "becomes"],
            &transfers,
        );
    }
}

fn print_preview(p: &ImportPreview) {
    let f = &p.format;
    crate::outln!("{}", visible(&p.filename));
    crate::outln!("{}", visible(&p.layout));
    if let Some(check) = &p.balance_check {
        crate::outln!("{}", visible(check));
    }
    if f.date_order_assumed {
        let (read, other) = if f.date_order == import::DateOrder::MonthFirst {
            ("month-first", "dmy (day-first)")
        } else {
            ("day-first", "mdy (month-first)")
        };
        crate::outln!(
            "CHECK THE DATES: every date in the file could be read day-first or month-first, and no date in it \
             decides; they were read {read}. If that is wrong, import again with --date-order {other}."
        );
    }
    crate::outln!();
    crate::outln!("{}", visible(&counts_line(p)));
    if let Some(range) = &p.date_range {
        crate::outln!("from {} to {}", range.from, range.to);
    }
    let money: Vec<String> = [("money in", &p.money_in), ("money out", &p.money_out)]
        .into_iter()
        .filter_map(|(label, amounts)| {
            let shown = formatted(amounts);
            (!shown.is_empty()).then(|| format!("{label}: {shown}"))
        })
        .collect();
    if !money.is_empty() {
        crate::outln!("{}", visible(&money.join("   ")));
    }
    if !p.first_rows.is_empty() {
        crate::outln!();
        print_rows(p);
    }
    let rows: Vec<Vec<String>> = p
        .by_category
        .iter()
        .map(|c| vec![c.category.clone(), c.rows.to_string(), formatted(&c.amounts)])
        .collect();
    if !rows.is_empty() {
        crate::outln!();
        table::print(&["category", ">rows", ">amount"], &rows);
    }
    print_accounts_and_transfers(p);
    print_lines(
        "already in the ledger (not added)",
        &p.duplicates,
        p.duplicates_skipped,
        &|d| {
            vec![
                d.line.to_string(),
                d.date.to_string(),
                d.description.clone(),
                d.reason.clone(),
            ]
        },
        &[">line", "date", "description", "why"],
    );
    print_lines(
        "the bank's corrections of earlier rows",
        &p.corrections,
        p.corrections.len(),
        &|c| vec![c.line.to_string(), c.in_words.clone()],
        &[">line", "what it does"],
    );
    print_lines(
        "skipped: not transactions",
        &p.skipped,
        p.lines.skipped,
        &|e| vec![e.line.to_string(), e.message.clone()],
        &[">line", "why"],
    );
    print_lines(
        "could not be read (not added)",
        &p.errors,
        p.parse_errors,
        &|e| {
            vec![
                e.line.to_string(),
                e.column.clone().unwrap_or_default(),
                e.message.clone(),
            ]
        },
        &[">line", "column", "problem"],
    );
    crate::outln!();
    crate::outln!("{}", visible(&lines_line(&p.lines)));
}
