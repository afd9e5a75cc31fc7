//! The dry run's plan, stored in `import_batches`, and the commit that applies exactly it.
//!
//! This file holds the plan's types and the planning driver (`plan`, `plan_into`). Which account
//! each row goes to is decided in `accounts.rs`; each row's category, transfer side, duplicate
//! check and the balance check in `rows.rs`; the commit in `commit.rs`.

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

mod accounts;
mod commit;
mod corrections;
mod rows;
#[cfg(test)]
mod tests;

pub(crate) use self::commit::equity_account;
pub(in crate::import) use self::commit::load_plan;
pub use self::{
    accounts::account_for,
    commit::{CommitReport, answer, commit, commit_with, transit_account},
    corrections::PlannedCorrection,
};
use self::{
    accounts::{
        account_choices, accounts_by_number, base_account, check_target, empty_accounts, kind_of,
        planned_accounts, settle_unstated_currency,
    },
    rows::{
        Chunks, Found, categories_and_rules, categorised, elsewhere, looks_like_transfer,
        opening_and_balance, paired, row_key,
    },
};

use super::{Format, LineCount, Parsed, RowError};
use crate::{
    accounts::{Account, AccountKind, AccountType, UNCATEGORIZED, home_currency, list_accounts},
    error::LedgerError,
    money::{Currency, Money},
    owner::OwnerId,
    transactions::{source_hash, source_hash_of_ref},
    transfers::{self, Decision, Side},
};

/// The serialised form of a plan; older versions stay readable.
/// 2: the rows are stored in `import_plan_rows`, not in the plan (version 1 plans still commit).
pub(super) const PLAN_VERSION: u32 = 2;
/// Rows per stored chunk of a plan.
const ROWS_PER_CHUNK: usize = 2_000;
/// Duplicates and unreadable rows a stored plan keeps by name (the preview shows fewer); their
/// counts are in `lines`.
const LISTED: usize = 200;

impl Plan {
    /// How many rows the commit adds.
    #[must_use]
    pub fn rows_to_add(&self) -> usize {
        self.lines.rows.max(self.rows.len())
    }
}

/// What a commit will do, decided by the dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    pub version: u32,
    pub filename: String,
    pub source_sha256: String,
    pub format: Format,
    /// Asset accounts the rows go into (created at commit when `exists` is false).
    pub accounts: Vec<PlannedAccount>,
    /// The rows to add. Stored apart from the plan, in chunks (`import_plan_rows`); a version 1
    /// plan held them here, and is still read.
    #[serde(default, skip_serializing)]
    pub rows: Vec<PlannedRow>,
    /// What the rows to add come to, for the preview: the first and last ones, money in and out,
    /// categories, dates.
    #[serde(default)]
    pub summary: RowSummary,
    /// The first duplicates (all of them are counted in `lines`).
    pub duplicates: Vec<DuplicateRow>,
    /// The first unreadable rows (all of them are counted in `lines`).
    pub errors: Vec<RowError>,
    /// Summary lines and rows that move no money, with their lines: not errors, not booked.
    #[serde(default)]
    pub skipped: Vec<RowError>,
    /// Where every line of the file went.
    #[serde(default)]
    pub lines: LineCount,
    /// The account the statement was asked to go into (its currency may give another), and the
    /// mapping the commit saves with it.
    #[serde(default)]
    pub base_account: String,
    #[serde(default)]
    pub mapping: super::Mapping,
    /// The rows that look like money moved between the owner's own accounts, and what becomes
    /// of each: one transfer with a row already waiting in transit (or with another row of this
    /// statement), a wait in transit, or a question.
    #[serde(default)]
    pub transfers: Vec<PlannedTransfer>,
    /// The days apart the two sides of a transfer may be.
    #[serde(default = "default_window")]
    pub window_days: u32,
    /// The opening balance booked with the first statement of an account that states balances.
    #[serde(default)]
    pub opening: Option<Opening>,
    /// How the account's balance will compare with the bank's closing balance.
    #[serde(default)]
    pub balance: Option<BalanceCheck>,
    /// Rows that are already in the ledger in another of the owner's accounts (counted among the
    /// duplicates, never added twice).
    #[serde(default)]
    pub elsewhere: Option<Elsewhere>,
    /// The owner's accounts a statement can go into, for a person to choose another.
    #[serde(default)]
    pub choices: Vec<AccountChoice>,
    /// The person's answers to the plan's questions, given before the commit (the website's
    /// preview): for a row (by its line) that fits several others equally, the candidate it is.
    #[serde(default)]
    pub answers: BTreeMap<usize, usize>,
    /// Why the statement goes into its account when none was named: the account the last
    /// statement of the same layout went into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_from: Option<String>,
    /// The bank's corrections of rows of earlier statements, each with the row it takes out.
    #[serde(default)]
    pub corrections: Vec<PlannedCorrection>,
}

/// An account that holds money, as a person chooses among them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AccountChoice {
    pub name: String,
    pub kind: AccountKind,
    pub currency: Currency,
}

fn default_window() -> u32 {
    transfers::DEFAULT_WINDOW_DAYS
}

/// An account the statement goes into: created at commit when `exists` is false.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedAccount {
    pub name: String,
    pub currency: Currency,
    pub exists: bool,
    /// Its kind (an older plan's account is a checking account).
    #[serde(default = "checking")]
    pub kind: AccountKind,
    /// Why it is of that kind: asked for, the account's own, the statement's, or the default.
    #[serde(default)]
    pub kind_from: String,
    /// The account exists, holds nothing yet, and takes the statement's currency at commit.
    #[serde(default)]
    pub takes_currency: bool,
}

fn checking() -> AccountKind {
    AccountKind::Checking
}

/// A row that looks like a transfer, why, and what becomes of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedTransfer {
    pub row: Side,
    pub why: String,
    #[serde(flatten)]
    pub decision: Decision,
}

/// The opening balance of an account, booked against Opening Balances the day before its first
/// row so that the account ends at the bank's closing balance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Opening {
    pub account: String,
    pub date: NaiveDate,
    pub amount_minor: i64,
    pub currency: Currency,
}

/// The account's balance after the import against the bank's closing balance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BalanceCheck {
    pub account: String,
    pub date: NaiveDate,
    pub currency: Currency,
    /// The bank's closing balance (what is owed on a card is negative).
    pub bank_minor: i64,
    /// What the ledger will hold in the account after the commit.
    pub ledger_minor: i64,
    /// Whether the two figures are checked against each other: not when the account holds rows
    /// dated after this statement.
    pub checked: bool,
}

impl BalanceCheck {
    #[must_use]
    pub fn agrees(&self) -> bool {
        !self.checked || self.bank_minor == self.ledger_minor
    }

    /// The check in words, with both figures.
    #[must_use]
    pub fn in_words(&self) -> String {
        let bank = Money::new(self.bank_minor, self.currency).format();
        let ledger = Money::new(self.ledger_minor, self.currency).format();
        if !self.checked {
            format!(
                "{} holds rows dated after this statement's last ({}): its closing balance of {bank} is not compared",
                self.account, self.date
            )
        } else if self.agrees() {
            format!(
                "{} will stand at {ledger}, the bank's closing balance on {}",
                self.account, self.date
            )
        } else {
            format!(
                "{} will stand at {ledger}, but the bank's closing balance on {} is {bank}: a statement may be \
                 missing or a row was changed; nothing is adjusted",
                self.account, self.date
            )
        }
    }
}

/// Rows of the statement already in the ledger in another account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Elsewhere {
    pub account: String,
    pub rows: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedRow {
    pub line: usize,
    pub date: NaiveDate,
    pub description: String,
    pub amount_minor: i64,
    pub currency: Currency,
    pub account: String,
    pub category: String,
    pub source_hash: String,
    /// Why the row looks like a transfer between own accounts (its category is then transit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<String>,
    /// The statement's own category word, when it named none of the owner's categories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_category: Option<String>,
    /// The bank's own id of the row (OFX FITID, camt AcctSvcrRef, MT940 bank reference), kept
    /// on its transaction so a later statement can name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_ref: Option<String>,
    /// The parts of a split row, each to its category (`category` then names them all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub splits: Vec<PlannedSplit>,
}

/// One part of a split row: the owner's category it goes to, and its amount (signed as the row).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedSplit {
    pub category: String,
    pub amount_minor: i64,
}

/// The rows to add as the preview shows them, gathered as they are planned: a plan's rows are
/// stored in chunks and never all held at once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RowSummary {
    /// How many rows there are.
    pub rows: usize,
    /// The first rows (up to [`super::END_ROWS`]).
    pub first: Vec<PlannedRow>,
    /// The last rows that are not among the first (up to [`super::END_ROWS`]), in file order.
    pub last: Vec<PlannedRow>,
    /// Money in (positive) and out (negative) per currency.
    pub flows: BTreeMap<Currency, (i64, i64)>,
    /// Per category: its rows, and their sum per currency.
    pub by_category: BTreeMap<String, (usize, BTreeMap<Currency, i64>)>,
    pub uncategorized: usize,
    /// Rows that look like transfers between own accounts (in no category).
    #[serde(default)]
    pub transfers: usize,
    /// The first and last date.
    pub dates: Option<(NaiveDate, NaiveDate)>,
}

impl RowSummary {
    /// Counts one more row to add.
    pub fn add(&mut self, row: &PlannedRow) {
        self.rows = self.rows.saturating_add(1);
        // Saturating: amounts a file may hold must not overflow a sum (they are checked again at
        // insert, where the postings must balance).
        let flow = self.flows.entry(row.currency).or_default();
        if row.amount_minor >= 0 {
            flow.0 = flow.0.saturating_add(row.amount_minor);
        } else {
            flow.1 = flow.1.saturating_add(row.amount_minor);
        }
        if row.transfer.is_some() {
            self.transfers = self.transfers.saturating_add(1);
        } else {
            // A split row counts under each of its parts' categories, with each part's amount.
            let whole = [(row.category.as_str(), row.amount_minor)];
            let parts: Vec<(&str, i64)> = row
                .splits
                .iter()
                .map(|p| (p.category.as_str(), p.amount_minor))
                .collect();
            for (name, amount) in if parts.is_empty() { &whole[..] } else { &parts[..] } {
                let category = self.by_category.entry((*name).to_owned()).or_default();
                category.0 = category.0.saturating_add(1);
                let sum = category.1.entry(row.currency).or_default();
                *sum = sum.saturating_add(*amount);
            }
        }
        let uncategorized =
            row.category == UNCATEGORIZED || row.splits.iter().any(|p| p.category == UNCATEGORIZED);
        self.uncategorized = self.uncategorized.saturating_add(usize::from(uncategorized));
        self.dates = Some(self.dates.map_or((row.date, row.date), |(from, to)| {
            (from.min(row.date), to.max(row.date))
        }));
        if self.first.len() < super::END_ROWS {
            self.first.push(row.clone());
        } else {
            if self.last.len() == super::END_ROWS {
                self.last.remove(0);
            }
            self.last.push(row.clone());
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DuplicateRow {
    pub line: usize,
    pub date: NaiveDate,
    pub description: String,
    pub amount_minor: i64,
    pub reason: String,
}

/// How many times `key` was counted before this, counting it once more.
fn count_once_more(counts: &mut HashMap<u64, u32>, key: u64) -> u32 {
    let seen = counts.entry(key).or_insert(0);
    std::mem::replace(seen, seen.saturating_add(1))
}

/// A row's source hash. A row with the bank's own id (OFX FITID) is known by it, scoped to its
/// account and checked against its date and amount (banks that number each file's rows 1, 2, 3
/// reuse ids); a row without one by its text. Either way, the n-th equal row of a file is its own.
fn row_hash(
    account: &str,
    row: &super::ParsedRow,
    description_key: &str,
    occurrences: &mut HashMap<u64, u32>,
) -> String {
    if let Some(bank_ref) = &row.bank_ref {
        let key = row_key(account, row.date, row.amount_minor, &format!("\u{1}{bank_ref}"));
        let occurrence = count_once_more(occurrences, key);
        source_hash_of_ref(account, bank_ref, row.date, row.amount_minor, occurrence)
    } else {
        let key = row_key(account, row.date, row.amount_minor, description_key);
        let occurrence = count_once_more(occurrences, key);
        source_hash(account, row.date, row.amount_minor, &row.description, occurrence)
    }
}

/// Where a statement goes: the account (default Checking), its kind when the account is new
/// (else the statement's, else checking), and the days apart a transfer's two sides may be.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub account: Option<String>,
    pub kind: Option<AccountKind>,
    pub window_days: Option<u32>,
}

/// Plans the import of a parsed statement into `owner`'s ledger and stores the plan. Nothing in
/// the ledger changes; the returned id commits exactly this plan.
pub async fn plan(
    owner: OwnerId,
    conn: &mut PgConnection,
    filename: &str,
    source_sha256: &str,
    parsed: Parsed,
    account: Option<&str>,
) -> Result<(Uuid, Plan), LedgerError> {
    let target = Target {
        account: account.map(str::to_owned),
        ..Target::default()
    };
    plan_into(owner, conn, filename, source_sha256, parsed, &target).await
}

/// A new planned import batch, its plan written once the rows are counted.
async fn new_batch(
    owner: OwnerId,
    conn: &mut PgConnection,
    filename: &str,
    source_sha256: &str,
) -> Result<Uuid, LedgerError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO import_batches (owner_id, filename, source_sha256, status, plan, row_count)
         VALUES ($1, $2, $3, 'planned', NULL, 0) RETURNING id",
    )
    .bind(owner.as_uuid())
    .bind(filename)
    .bind(source_sha256)
    .fetch_one(conn)
    .await?)
}

/// Like [`plan`], with the account's kind and the transfer window as `target` says.
pub async fn plan_into(
    owner: OwnerId,
    conn: &mut PgConnection,
    filename: &str,
    source_sha256: &str,
    parsed: Parsed,
    target: &Target,
) -> Result<(Uuid, Plan), LedgerError> {
    let existing = list_accounts(owner, &mut *conn).await?;
    let (base, account_from) = base_account(owner, &mut *conn, target, &existing, &parsed.format).await?;
    let base = base.as_str();
    check_target(&existing, base, target.kind)?;
    let empty = empty_accounts(owner, &mut *conn).await?;
    let home = home_currency(owner, &mut *conn).await?;
    let mut parsed = parsed;
    settle_unstated_currency(base, &existing, &empty, home, &mut parsed)?;
    let (kind, kind_from) = kind_of(target, base, &parsed.format);
    let accounts = planned_accounts(base, &existing, &parsed, (kind, &kind_from), &empty)?;
    let window_days = target.window_days.unwrap_or(transfers::DEFAULT_WINDOW_DAYS);

    let (categories, rules) = categories_and_rules(owner, &mut *conn, &existing).await?;
    // The owner's other accounts that hold money: a row naming one is a transfer to it.
    let holders: Vec<&Account> = existing
        .iter()
        .filter(|a| matches!(a.account_type, AccountType::Asset | AccountType::Liability))
        .collect();
    let by_number = accounts_by_number(owner, &mut *conn).await?;
    let elsewhere = elsewhere(owner, &mut *conn, &accounts, &parsed).await?;
    let corrections = corrections::planned(owner, &mut *conn, &accounts, &parsed).await?;
    let removed: i64 = corrections.iter().map(|c| c.amount_minor).sum();

    // How often each (account, date, amount, description) came before, keyed by a digest of it:
    // a copy of every row's description as a key would take a large statement's memory twice.
    let mut occurrences: HashMap<u64, u32> = HashMap::with_capacity(parsed.rows.len());
    // The batch first, so the rows can be stored under it a chunk at a time as they are planned;
    // its plan is written once the counts are known.
    let id = new_batch(owner, &mut *conn, filename, source_sha256).await?;
    let mut chunks = Chunks::new(owner, id, &parsed, &corrections);
    let statement_sum: i128 = parsed.rows.iter().map(|r| i128::from(r.amount_minor)).sum();
    let first_date = parsed.rows.iter().map(|r| r.date).min();
    let mut pending = Vec::with_capacity(ROWS_PER_CHUNK);
    for row in parsed.rows {
        let planned_account = accounts.iter().find(|a| a.currency == row.currency);
        let account = planned_account.map_or(base.to_owned(), |a| a.name.clone());
        let row_kind = planned_account.map_or(kind, |a| a.kind);
        let description_key = row.description.to_uppercase();
        let hash = row_hash(&account, &row, &description_key, &mut occurrences);
        if let Some(place) = &elsewhere
            && place
                .keys
                .contains(&(row.date, row.amount_minor, description_key.clone()))
        {
            chunks.elsewhere(&row, &place.account);
            continue;
        }
        let transfer = looks_like_transfer(&row, (&account, row_kind), &holders, &by_number);
        let (category, bank_category, splits) = categorised(&row, transfer.is_some(), &categories, &rules);
        pending.push(PlannedRow {
            source_hash: hash,
            line: row.line,
            date: row.date,
            description: row.description,
            amount_minor: row.amount_minor,
            currency: row.currency,
            account,
            category,
            transfer,
            bank_category,
            bank_ref: row.bank_ref,
            splits,
        });
        if pending.len() == ROWS_PER_CHUNK {
            chunks.store(conn, std::mem::take(&mut pending)).await?;
        }
    }
    chunks.store(conn, pending).await?;

    let transfers = paired(owner, &mut *conn, std::mem::take(&mut chunks.sides), window_days).await?;
    let (opening, balance) = opening_and_balance(
        owner,
        &mut *conn,
        &accounts,
        &parsed.format,
        &empty,
        &existing,
        (statement_sum, first_date, &chunks.summary, removed),
    )
    .await?;
    let lines = LineCount {
        rows: chunks.summary.rows,
        duplicates: chunks.duplicate_count,
        ..parsed.lines
    };
    let plan = Plan {
        version: PLAN_VERSION,
        filename: filename.to_owned(),
        source_sha256: source_sha256.to_owned(),
        format: parsed.format,
        accounts,
        rows: Vec::new(),
        summary: chunks.summary,
        duplicates: chunks.duplicates,
        errors: parsed.errors.into_iter().take(LISTED).collect(),
        skipped: parsed.skipped.into_iter().take(LISTED).collect(),
        lines,
        base_account: base.to_owned(),
        mapping: parsed.mapping,
        transfers,
        window_days,
        opening,
        balance,
        elsewhere: elsewhere.map(Found::summary),
        choices: account_choices(&holders),
        answers: BTreeMap::new(),
        account_from,
        corrections,
    };
    // Written straight to JSON text: a tree of `Value`s would take several times its memory.
    sqlx::query("UPDATE import_batches SET plan = $3, row_count = $4 WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(id)
        .bind(sqlx::types::Json(&plan))
        .bind(i32::try_from(plan.lines.rows).unwrap_or(i32::MAX))
        .execute(&mut *conn)
        .await?;
    Ok((id, plan))
}
