//! The dry run's plan, stored in `import_batches`, and the commit that applies exactly it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use super::{Format, LineCount, Parsed, RowError, bank_categories};
use crate::{
    accounts::{
        Account, AccountKind, AccountType, CHECKING, OPENING_BALANCES, TRANSIT, UNCATEGORIZED,
        create_account, ensure_chart, home_currency, list_accounts,
    },
    error::LedgerError,
    money::{Currency, Money},
    owner::OwnerId,
    transactions::{InsertOutcome, NewPosting, NewTransaction, insert_transactions, source_hash},
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// An account that holds money, as a person chooses among them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountChoice {
    pub name: String,
    pub kind: AccountKind,
    pub currency: Currency,
}

fn default_window() -> u32 {
    transfers::DEFAULT_WINDOW_DAYS
}

/// An account the statement goes into: created at commit when `exists` is false.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedTransfer {
    pub row: Side,
    pub why: String,
    #[serde(flatten)]
    pub decision: Decision,
}

/// The opening balance of an account, booked against Opening Balances the day before its first
/// row so that the account ends at the bank's closing balance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    pub account: String,
    pub date: NaiveDate,
    pub amount_minor: i64,
    pub currency: Currency,
}

/// The account's balance after the import against the bank's closing balance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Elsewhere {
    pub account: String,
    pub rows: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// The rows to add as the preview shows them, gathered as they are planned: a plan's rows are
/// stored in chunks and never all held at once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
            let category = self.by_category.entry(row.category.clone()).or_default();
            category.0 = category.0.saturating_add(1);
            let sum = category.1.entry(row.currency).or_default();
            *sum = sum.saturating_add(row.amount_minor);
        }
        self.uncategorized = self
            .uncategorized
            .saturating_add(usize::from(row.category == UNCATEGORIZED));
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DuplicateRow {
    pub line: usize,
    pub date: NaiveDate,
    pub description: String,
    pub amount_minor: i64,
    pub reason: String,
}

/// The account for `currency`: `base` itself when it holds that currency (or does not exist yet,
/// or holds nothing yet, and this is the statement's only currency), otherwise `base (CUR)`.
pub fn account_for(base: &str, currency: Currency, existing: &[Account], only_currency: bool) -> String {
    account_named(base, currency, existing, only_currency, &BTreeSet::new())
}

fn account_named(
    base: &str,
    currency: Currency,
    existing: &[Account],
    only_currency: bool,
    empty: &BTreeSet<Uuid>,
) -> String {
    match existing.iter().find(|a| a.name.eq_ignore_ascii_case(base)) {
        Some(account) if account.currency == Some(currency) => account.name.clone(),
        Some(account) if only_currency && empty.contains(&account.id) => account.name.clone(),
        None if only_currency => base.to_owned(),
        _ => format!("{base} ({currency})"),
    }
}

/// One account per currency of the statement, of `kind`.
fn planned_accounts(
    base: &str,
    existing: &[Account],
    parsed: &Parsed,
    (kind, kind_from): (AccountKind, &str),
    empty: &BTreeSet<Uuid>,
) -> Result<Vec<PlannedAccount>, LedgerError> {
    let mut currencies: Vec<Currency> = parsed.rows.iter().map(|r| r.currency).collect();
    currencies.sort_unstable();
    currencies.dedup();
    let mut accounts = Vec::with_capacity(currencies.len());
    for c in &currencies {
        let name = account_named(base, *c, existing, currencies.len() == 1, empty);
        let found = existing.iter().find(|a| a.name.eq_ignore_ascii_case(&name));
        if let Some(account) = found
            && account.currency != Some(*c)
            && !empty.contains(&account.id)
        {
            return Err(LedgerError::AccountHoldsAnotherCurrency {
                account: account.name.clone(),
            });
        }
        let (kind, kind_from) = match found.and_then(|a| a.kind) {
            Some(own) => (
                own,
                format!("{} is a {own} account", found.map_or("", |a| a.name.as_str())),
            ),
            None => (kind, kind_from.to_owned()),
        };
        accounts.push(PlannedAccount {
            name: found.map_or(name, |a| a.name.clone()),
            currency: *c,
            exists: found.is_some(),
            kind,
            kind_from,
            takes_currency: found.is_some_and(|a| a.currency != Some(*c)),
        });
    }
    Ok(accounts)
}

/// Rows whose currency nothing stated take the currency of the account they go into, when that
/// account is in use (it has postings); otherwise the plan is refused with what to say. An empty
/// account's currency is only the chart's default, no evidence of the statement's.
fn settle_unstated_currency(
    base: &str,
    existing: &[Account],
    empty: &BTreeSet<Uuid>,
    home: Option<Currency>,
    parsed: &mut Parsed,
) -> Result<(), LedgerError> {
    let rows_unstated = parsed.rows.iter().any(|r| r.currency_unstated);
    if !rows_unstated && !parsed.figures_mut().any(|f| f.currency_unstated) {
        return Ok(());
    }
    let target = existing.iter().find(|a| a.name.eq_ignore_ascii_case(base));
    let in_use = target.filter(|a| !empty.contains(&a.id)).and_then(|a| {
        Some((
            a.currency?,
            format!("the account {}, which holds {}", a.name, a.currency?),
        ))
    });
    let from = in_use.or_else(|| home.map(|c| (c, format!("your home currency, {c}"))));
    // The amounts were read with two decimals; a currency with others cannot take them as they are.
    let Some((currency, why)) = from.filter(|(c, _)| c.decimals() == Currency::INR.decimals()) else {
        // Only refused rows name no currency: they stay unbooked, their figures as read.
        if !rows_unstated {
            return Ok(());
        }
        return Err(LedgerError::NoCurrencyToGoBy {
            account: base.to_owned(),
        });
    };
    for row in parsed.rows.iter_mut().filter(|r| r.currency_unstated) {
        row.currency = currency;
        row.currency_unstated = false;
    }
    for figures in parsed.figures_mut().filter(|f| f.currency_unstated) {
        figures.currency = currency;
        figures.currency_unstated = false;
    }
    parsed.format.currency_from = Some(format!("{why} (the statement names none)"));
    Ok(())
}

/// How many times `key` was counted before this, counting it once more.
fn count_once_more(counts: &mut HashMap<u64, u32>, key: u64) -> u32 {
    let seen = counts.entry(key).or_insert(0);
    std::mem::replace(seen, seen.saturating_add(1))
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

/// The account the last committed statement of `format`'s layout (its delimiter, header line and
/// columns) went into, and why, when one did: where a statement of that layout goes by default.
async fn last_account_for_layout(
    owner: OwnerId,
    conn: &mut PgConnection,
    format: &Format,
) -> Result<Option<(String, String)>, LedgerError> {
    let columns = serde_json::to_value(&format.columns).unwrap_or_default();
    let found: Option<(String, String)> = sqlx::query_as(
        "SELECT plan->>'base_account', filename FROM import_batches
         WHERE owner_id = $1 AND status = 'committed' AND plan IS NOT NULL
           AND plan->'format'->'columns' = $2 AND plan->'format'->>'delimiter' = $3
           AND (plan->'format'->>'header_line')::int = $4 AND coalesce(plan->>'base_account', '') <> ''
         ORDER BY imported_at DESC NULLS LAST LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(sqlx::types::Json(columns))
    .bind(&format.delimiter)
    .bind(i32::try_from(format.header_line).unwrap_or(i32::MAX))
    .fetch_optional(conn)
    .await?;
    Ok(found.map(|(account, file)| {
        let why = format!("{file}, of the same layout, went into {account}");
        (account, why)
    }))
}

/// The account a statement goes into — the one named, else the one the last statement of its
/// layout went into (and why), else Checking.
async fn base_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    target: &Target,
    existing: &[Account],
    format: &Format,
) -> Result<(String, Option<String>), LedgerError> {
    if let Some(named) = &target.account {
        return Ok((named.trim().to_owned(), None));
    }
    Ok(last_account_for_layout(owner, conn, format)
        .await?
        .filter(|(name, _)| existing.iter().any(|a| a.name == *name))
        .map_or_else(|| (CHECKING.to_owned(), None), |(name, why)| (name, Some(why))))
}

/// The accounts of `owner` that hold no postings.
async fn empty_accounts(owner: OwnerId, conn: &mut PgConnection) -> Result<BTreeSet<Uuid>, LedgerError> {
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT a.id FROM accounts a WHERE a.owner_id = $1
           AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.owner_id = a.owner_id AND p.account_id = a.id)",
    )
    .bind(owner.as_uuid())
    .fetch_all(conn)
    .await?;
    Ok(ids.into_iter().collect())
}

/// The kind of the statement's account when it is new, and why.
fn kind_of(target: &Target, base: &str, format: &Format) -> (AccountKind, String) {
    if let Some(kind) = target.kind {
        return (kind, "asked for".to_owned());
    }
    if let Some((name, _, Some(kind))) = crate::accounts::DEFAULT_CHART
        .iter()
        .find(|(name, _, kind)| kind.is_some() && name.eq_ignore_ascii_case(base))
    {
        return (
            *kind,
            format!("{name} is one of the starting accounts, a {kind} account"),
        );
    }
    if let Some(hint) = &format.account_kind {
        return (
            hint.kind,
            format!("the statement is a {}'s: {}", hint.kind, hint.why),
        );
    }
    (AccountKind::Checking, "nothing says otherwise".to_owned())
}

/// A statement may go into `base`: an asset or liability account (or a new one), of the kind
/// asked for when one is.
fn check_target(existing: &[Account], base: &str, kind: Option<AccountKind>) -> Result<(), LedgerError> {
    let named = existing.iter().find(|a| a.name.eq_ignore_ascii_case(base));
    if let Some(named) = named
        && !matches!(named.account_type, AccountType::Asset | AccountType::Liability)
    {
        return Err(LedgerError::NotAStatementAccount {
            account: named.name.clone(),
            account_type: named.account_type,
        });
    }
    if let (Some(named), Some(asked)) = (named, kind)
        && let Some(is) = named.kind
        && is != asked
    {
        return Err(LedgerError::KindMismatch {
            account: named.name.clone(),
            is,
            asked,
        });
    }
    Ok(())
}

/// A digest of a row's identity within its file (account, date, amount, description).
fn row_key(account: &str, date: NaiveDate, amount_minor: i64, description_key: &str) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::hash::DefaultHasher::new();
    (account, date, amount_minor, description_key).hash(&mut hasher);
    hasher.finish()
}

/// The owner's categories and the starting chart's (which the commit creates when missing), by
/// lower-case name; and the owner's rules (pattern in lower case, category), in order.
async fn categories_and_rules(
    owner: OwnerId,
    conn: &mut PgConnection,
    existing: &[Account],
) -> Result<(HashMap<String, String>, Vec<(String, String)>), LedgerError> {
    let categories: HashMap<String, String> = crate::accounts::DEFAULT_CHART
        .iter()
        .filter(|(_, t, _)| t.is_category())
        .map(|(name, _, _)| (name.to_lowercase(), (*name).to_owned()))
        .chain(
            existing
                .iter()
                .filter(|a| a.account_type.is_category())
                .map(|a| (a.name.to_lowercase(), a.name.clone())),
        )
        .collect();
    let rules: Vec<(String, String)> = sqlx::query_as(
        "SELECT lower(r.pattern), a.name FROM rules r JOIN accounts a ON a.id = r.account_id AND a.owner_id = r.owner_id
         WHERE r.owner_id = $1 ORDER BY r.priority, r.created_at, r.id",
    )
    .bind(owner.as_uuid())
    .fetch_all(conn)
    .await?;
    Ok((categories, rules))
}

/// The accounts a person may choose for a statement: those that hold money, transit aside.
fn account_choices(holders: &[&Account]) -> Vec<AccountChoice> {
    holders
        .iter()
        .filter_map(|a| {
            Some(AccountChoice {
                name: a.name.clone(),
                kind: a.kind.filter(|k| *k != AccountKind::Transit)?,
                currency: a.currency?,
            })
        })
        .collect()
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
    let elsewhere = elsewhere(owner, &mut *conn, &accounts, &parsed).await?;

    // How often each (account, date, amount, description) came before, keyed by a digest of it:
    // a copy of every row's description as a key would take a large statement's memory twice.
    let mut occurrences: HashMap<u64, u32> = HashMap::with_capacity(parsed.rows.len());
    // The batch first, so the rows can be stored under it a chunk at a time as they are planned;
    // its plan is written once the counts are known.
    let id = new_batch(owner, &mut *conn, filename, source_sha256).await?;
    let mut chunks = Chunks {
        owner,
        batch: id,
        stored: 0,
        summary: RowSummary::default(),
        duplicates: Vec::new(),
        duplicate_count: 0,
        sides: Vec::new(),
    };
    let statement_sum: i128 = parsed.rows.iter().map(|r| i128::from(r.amount_minor)).sum();
    let first_date = parsed.rows.iter().map(|r| r.date).min();
    let mut pending = Vec::with_capacity(ROWS_PER_CHUNK);
    for row in parsed.rows {
        let planned_account = accounts.iter().find(|a| a.currency == row.currency);
        let account = planned_account.map_or(base.to_owned(), |a| a.name.clone());
        let row_kind = planned_account.map_or(kind, |a| a.kind);
        let description_key = row.description.to_uppercase();
        let key = row_key(&account, row.date, row.amount_minor, &description_key);
        let occurrence = count_once_more(&mut occurrences, key);
        let hash = source_hash(&account, row.date, row.amount_minor, &row.description, occurrence);
        if let Some(place) = &elsewhere
            && place
                .keys
                .contains(&(row.date, row.amount_minor, description_key.clone()))
        {
            chunks.elsewhere(&row, &place.account);
            continue;
        }
        let transfer = looks_like_transfer(&row, &account, row_kind, &holders);
        let (category, bank_category) = if transfer.is_some() {
            (TRANSIT.to_owned(), None)
        } else {
            category_of(&row, &categories, &rules)
        };
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
        (statement_sum, first_date, &chunks.summary),
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

/// Why `row`, going into `account`, looks like a transfer to another of the `holders`, if it does.
fn looks_like_transfer(
    row: &super::ParsedRow,
    account: &str,
    kind: AccountKind,
    holders: &[&Account],
) -> Option<String> {
    let others: Vec<&Account> = holders
        .iter()
        .copied()
        .filter(|a| !a.name.eq_ignore_ascii_case(account))
        .collect();
    transfers::looks_like_transfer(&row.description, kind, row.amount_minor, &others)
}

/// The category of a row that is no transfer: the statement's own category when it names one of
/// the owner's, else the first rule whose pattern is in its text (or is the bank's word), else the
/// bank's word through the table of common ones, else Uncategorized; and the bank's word, kept as
/// a hint when it named none of the owner's categories.
fn category_of(
    row: &super::ParsedRow,
    categories: &HashMap<String, String>,
    rules: &[(String, String)],
) -> (String, Option<String>) {
    let lower = row.description.to_lowercase();
    let bank_word = row.category.as_deref().map(str::trim).filter(|c| !c.is_empty());
    let bank_lower = bank_word.map(str::to_lowercase);
    let category = bank_lower
        .as_deref()
        .and_then(|c| categories.get(c).cloned())
        .or_else(|| {
            rules
                .iter()
                .find(|(pattern, _)| {
                    lower.contains(pattern.as_str()) || bank_lower.as_deref() == Some(pattern)
                })
                .map(|(_, c)| c.clone())
        })
        .or_else(|| {
            bank_word
                .and_then(bank_categories::default_category)
                .and_then(|c| categories.get(&c.to_lowercase()).cloned())
        })
        .unwrap_or_else(|| UNCATEGORIZED.to_owned());
    let bank_category = bank_word
        .filter(|w| !categories.contains_key(&w.to_lowercase()))
        .map(str::to_owned);
    (category, bank_category)
}

/// The rows that look like transfers (with why), paired with each other and with the legs
/// waiting in transit.
async fn paired(
    owner: OwnerId,
    conn: &mut PgConnection,
    sides: Vec<(String, Side)>,
    window_days: u32,
) -> Result<Vec<PlannedTransfer>, LedgerError> {
    let legs = transfers::transit_legs(owner, conn).await?;
    let (whys, sides): (Vec<String>, Vec<Side>) = sides.into_iter().unzip();
    let decisions = transfers::pair(&sides, &legs, window_days);
    Ok(sides
        .into_iter()
        .zip(whys)
        .zip(decisions)
        .map(|((row, why), decision)| PlannedTransfer { row, why, decision })
        .collect())
}

/// The rows of a statement found in another of the owner's accounts.
struct Found {
    account: String,
    keys: BTreeSet<(NaiveDate, i64, String)>,
}

impl Found {
    fn summary(self) -> Elsewhere {
        Elsewhere {
            account: self.account,
            rows: self.keys.len(),
        }
    }
}

/// Whether the statement was imported into another of the owner's accounts already: when at
/// least half of its rows (by date, amount and text) are in one other account, those rows are
/// taken as already there. Fewer are coincidences (a fee of the same bank on the same day) and
/// are booked.
async fn elsewhere(
    owner: OwnerId,
    conn: &mut PgConnection,
    accounts: &[PlannedAccount],
    parsed: &Parsed,
) -> Result<Option<Found>, LedgerError> {
    if parsed.rows.is_empty() {
        return Ok(None);
    }
    let dates: Vec<NaiveDate> = parsed.rows.iter().map(|r| r.date).collect();
    let amounts: Vec<i64> = parsed.rows.iter().map(|r| r.amount_minor).collect();
    let texts: Vec<String> = parsed.rows.iter().map(|r| r.description.to_uppercase()).collect();
    let ours: Vec<&str> = accounts.iter().map(|a| a.name.as_str()).collect();
    let found: Vec<(String, NaiveDate, i64, String)> = sqlx::query_as(
        "SELECT DISTINCT a.name, r.date, r.amount, r.text
         FROM UNNEST($2::date[], $3::bigint[], $4::text[]) AS r(date, amount, text)
         JOIN transactions t ON t.owner_id = $1 AND t.date = r.date
              AND (upper(t.raw_description) = r.text OR upper(t.paired_description) = r.text)
         JOIN postings p ON p.owner_id = t.owner_id AND p.transaction_id = t.id AND p.amount_minor = r.amount
         JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
              AND a.type IN ('asset', 'liability') AND a.kind IS DISTINCT FROM 'transit'
         WHERE NOT (a.name = ANY($5))",
    )
    .bind(owner.as_uuid())
    .bind(&dates)
    .bind(&amounts)
    .bind(&texts)
    .bind(&ours)
    .fetch_all(conn)
    .await?;
    let mut by_account: BTreeMap<String, BTreeSet<(NaiveDate, i64, String)>> = BTreeMap::new();
    for (account, date, amount, text) in found {
        by_account
            .entry(account)
            .or_default()
            .insert((date, amount, text));
    }
    Ok(by_account
        .into_iter()
        .max_by_key(|(_, keys)| keys.len())
        .filter(|(_, keys)| keys.len().saturating_mul(2) >= parsed.rows.len())
        .map(|(account, keys)| Found { account, keys }))
}

/// The opening balance to book (an account's first statement that states balances) and the
/// check of the account's balance against the bank's closing balance after the commit.
async fn opening_and_balance(
    owner: OwnerId,
    conn: &mut PgConnection,
    accounts: &[PlannedAccount],
    format: &Format,
    empty: &BTreeSet<Uuid>,
    existing: &[Account],
    (statement_sum, first_date, summary): (i128, Option<NaiveDate>, &RowSummary),
) -> Result<(Option<Opening>, Option<BalanceCheck>), LedgerError> {
    let (Some(closing), [account], Some(first)) = (
        format.reconciliation.as_ref().and_then(|r| r.closing),
        accounts,
        first_date,
    ) else {
        return Ok((None, None));
    };
    let to_add: i64 = summary.flows.values().map(|(i, o)| i.saturating_add(*o)).sum();
    let found = existing.iter().find(|a| a.name == account.name);
    let is_empty = found.is_none_or(|a| empty.contains(&a.id));
    if is_empty {
        let Some(Ok(opening)) = i128::from(closing.held_minor)
            .checked_sub(statement_sum)
            .map(i64::try_from)
        else {
            return Ok((None, None));
        };
        let balance = BalanceCheck {
            account: account.name.clone(),
            date: closing.date,
            currency: account.currency,
            bank_minor: closing.held_minor,
            ledger_minor: opening.saturating_add(to_add),
            checked: true,
        };
        let opening = (opening != 0).then(|| Opening {
            account: account.name.clone(),
            date: first.pred_opt().unwrap_or(first),
            amount_minor: opening,
            currency: account.currency,
        });
        return Ok((opening, Some(balance)));
    }
    let Some(found) = found else {
        return Ok((None, None));
    };
    let (held, last): (i64, Option<NaiveDate>) = sqlx::query_as(
        "SELECT coalesce(sum(p.amount_minor), 0)::bigint, max(t.date)
         FROM postings p JOIN transactions t ON t.owner_id = p.owner_id AND t.id = p.transaction_id
         WHERE p.owner_id = $1 AND p.account_id = $2",
    )
    .bind(owner.as_uuid())
    .bind(found.id)
    .fetch_one(conn)
    .await?;
    Ok((
        None,
        Some(BalanceCheck {
            account: account.name.clone(),
            date: closing.date,
            currency: account.currency,
            bank_minor: closing.held_minor,
            ledger_minor: held.saturating_add(to_add),
            checked: last.is_none_or(|l| l <= closing.date),
        }),
    ))
}

/// The rows of a plan being made, stored a chunk at a time: duplicates split off, the rest
/// summed up for the preview and written under the batch.
struct Chunks {
    owner: OwnerId,
    batch: Uuid,
    stored: usize,
    summary: RowSummary,
    duplicates: Vec<DuplicateRow>,
    duplicate_count: usize,
    /// The rows to add that look like transfers, with why.
    sides: Vec<(String, Side)>,
}

impl Chunks {
    /// Counts a row that is already in the ledger in another account.
    fn elsewhere(&mut self, row: &super::ParsedRow, account: &str) {
        self.duplicate_count = self.duplicate_count.saturating_add(1);
        if self.duplicates.len() < LISTED {
            self.duplicates.push(DuplicateRow {
                line: row.line,
                date: row.date,
                description: row.description.clone(),
                amount_minor: row.amount_minor,
                reason: format!("already in the ledger in {account}"),
            });
        }
    }

    async fn store(&mut self, conn: &mut PgConnection, rows: Vec<PlannedRow>) -> Result<(), LedgerError> {
        if rows.is_empty() {
            return Ok(());
        }
        let (rows, duplicates, count) = split_duplicates(self.owner, conn, rows).await?;
        self.duplicate_count = self.duplicate_count.saturating_add(count);
        let room = LISTED.saturating_sub(self.duplicates.len());
        self.duplicates.extend(duplicates.into_iter().take(room));
        if rows.is_empty() {
            return Ok(());
        }
        for row in &rows {
            self.summary.add(row);
            if let Some(why) = &row.transfer {
                self.sides.push((
                    why.clone(),
                    Side {
                        transaction: None,
                        line: Some(row.line),
                        account: row.account.clone(),
                        date: row.date,
                        amount_minor: row.amount_minor,
                        currency: row.currency,
                        description: row.description.clone(),
                    },
                ));
            }
        }
        sqlx::query("INSERT INTO import_plan_rows (owner_id, batch_id, chunk, rows) VALUES ($1, $2, $3, $4)")
            .bind(self.owner.as_uuid())
            .bind(self.batch)
            .bind(i32::try_from(self.stored).unwrap_or(i32::MAX))
            .bind(sqlx::types::Json(&rows))
            .execute(conn)
            .await?;
        self.stored = self.stored.saturating_add(1);
        Ok(())
    }
}

/// The stored rows of plan `plan_id`, chunk `chunk`; empty past the last one.
async fn plan_rows(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    chunk: usize,
) -> Result<Vec<PlannedRow>, LedgerError> {
    let text: Option<String> = sqlx::query_scalar(
        "SELECT rows::text FROM import_plan_rows WHERE owner_id = $1 AND batch_id = $2 AND chunk = $3",
    )
    .bind(owner.as_uuid())
    .bind(plan_id)
    .bind(i32::try_from(chunk).unwrap_or(i32::MAX))
    .fetch_optional(conn)
    .await?;
    text.map_or_else(
        || Ok(Vec::new()),
        |text| {
            serde_json::from_str(&text).map_err(|source| LedgerError::UnreadablePlan {
                plan: plan_id,
                source,
            })
        },
    )
}

/// The rows already in the ledger (by their source hash), apart from the rows to add: the rows
/// to add, the first duplicates, and how many duplicates there are.
async fn split_duplicates(
    owner: OwnerId,
    conn: &mut PgConnection,
    mut rows: Vec<PlannedRow>,
) -> Result<(Vec<PlannedRow>, Vec<DuplicateRow>, usize), LedgerError> {
    let hashes: Vec<&str> = rows.iter().map(|r| r.source_hash.as_str()).collect();
    // Each hash looked up in the unique index. As `source_hash = ANY($2)` the planner may instead
    // read the owner's transactions and test each against the whole array: with fresh rows it
    // has no statistics for yet, that took a re-import of 100,000 rows four minutes.
    let known: Vec<(String, NaiveDate)> = sqlx::query_as(
        "SELECT t.source_hash, t.created_at::date
         FROM unnest($2::text[]) AS h(hash)
         JOIN transactions t ON t.owner_id = $1 AND t.source_hash = h.hash
         UNION ALL
         SELECT t.paired_source_hash, t.created_at::date
         FROM unnest($2::text[]) AS h(hash)
         JOIN transactions t ON t.owner_id = $1 AND t.paired_source_hash = h.hash",
    )
    .bind(owner.as_uuid())
    .bind(&hashes)
    .fetch_all(&mut *conn)
    .await?;
    let known: HashMap<String, NaiveDate> = known.into_iter().collect();
    // Split off in place; the first few are kept by name, all are counted.
    let (mut listed, mut count) = (Vec::new(), 0usize);
    for r in rows.extract_if(.., |r| known.contains_key(&r.source_hash)) {
        count = count.saturating_add(1);
        if listed.len() < LISTED {
            listed.push(DuplicateRow {
                reason: format!(
                    "already in the ledger (imported {})",
                    known
                        .get(&r.source_hash)
                        .map_or_else(String::new, ToString::to_string)
                ),
                line: r.line,
                date: r.date,
                description: r.description,
                amount_minor: r.amount_minor,
            });
        }
    }
    Ok((rows, listed, count))
}

/// A planned row as the transaction it books: the statement's account and the category (or the
/// transit account), each one posting, summing to zero.
fn transaction_of(row: &PlannedRow, asset: &Account, category: &Account, plan_id: Uuid) -> NewTransaction {
    NewTransaction {
        id: None,
        date: row.date,
        description: row.description.clone(),
        raw_description: row.description.clone(),
        import_batch_id: Some(plan_id),
        source_hash: Some(row.source_hash.clone()),
        postings: vec![
            NewPosting {
                account_id: asset.id,
                amount_minor: row.amount_minor,
                currency: row.currency,
            },
            NewPosting {
                account_id: category.id,
                // A planned amount's magnitude is at most `i64::MAX` (it was parsed), so nothing
                // saturates; were it ever to, the postings would not balance and the insert
                // refuses the transaction.
                amount_minor: row.amount_minor.saturating_neg(),
                currency: row.currency,
            },
        ],
    }
}

/// What a commit did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitReport {
    pub import_batch_id: Uuid,
    pub imported: usize,
    pub uncategorized: usize,
    /// Rows of the plan that another import added in the meantime.
    pub skipped_duplicates: usize,
    pub date_range: Option<(NaiveDate, NaiveDate)>,
    pub parse_errors: usize,
    /// Rows made one transfer with their other side.
    pub transfers_paired: usize,
    /// Rows left waiting in transit for their other side (or for an answer).
    pub in_transit: usize,
    /// The opening balance booked, if any.
    pub opening: Option<Opening>,
    /// The account's balance after the commit against the bank's closing balance.
    pub balance: Option<BalanceCheck>,
}

impl CommitReport {
    /// Nothing done yet for `plan`.
    fn new(plan_id: Uuid, plan: &Plan) -> Self {
        Self {
            import_batch_id: plan_id,
            imported: 0,
            uncategorized: 0,
            skipped_duplicates: 0,
            date_range: None,
            parse_errors: plan.lines.unreadable.max(plan.errors.len()),
            transfers_paired: 0,
            in_transit: 0,
            opening: None,
            balance: plan.balance.clone(),
        }
    }
}

/// The equity account `base` for `currency`: `base` itself when it holds that currency (or does
/// not exist yet), else one named for the currency (`Opening Balances (EUR)`), created when missing.
pub(crate) async fn equity_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    base: &str,
    currency: Currency,
) -> Result<Account, LedgerError> {
    let existing = list_accounts(owner, &mut *conn).await?;
    let name = account_for(base, currency, &existing, true);
    sqlx::query(
        "INSERT INTO accounts (owner_id, name, type, currency) VALUES ($1, $2, 'equity', $3)
         ON CONFLICT (owner_id, name) DO NOTHING",
    )
    .bind(owner.as_uuid())
    .bind(&name)
    .bind(currency.as_str())
    .execute(&mut *conn)
    .await?;
    crate::accounts::find_account(owner, conn, &name)
        .await?
        .ok_or(LedgerError::UnknownAccountName(name))
}

/// The clearing account of transfers in `currency` (created when missing).
pub async fn transit_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    currency: Currency,
) -> Result<Account, LedgerError> {
    let existing = list_accounts(owner, &mut *conn).await?;
    if let Some(found) = existing
        .iter()
        .find(|a| a.kind == Some(AccountKind::Transit) && a.currency == Some(currency))
    {
        return Ok(found.clone());
    }
    let name = account_for(TRANSIT, currency, &existing, true);
    create_account(owner, conn, &name, AccountKind::Transit, currency).await
}

/// The plan's accounts created (or given the statement's currency while they hold nothing), the
/// chart ensured in the home currency, and the transit accounts the plan needs: the whole chart,
/// and the transit account per currency.
async fn prepare_accounts(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan: &Plan,
) -> Result<(Vec<Account>, HashMap<Currency, Account>), LedgerError> {
    // The planned accounts first: a new owner's first statement in EUR makes Checking a EUR
    // account; an account with nothing in it takes the statement's currency.
    let existing = list_accounts(owner, &mut *conn).await?;
    for planned in &plan.accounts {
        if !existing.iter().any(|a| a.name == planned.name) {
            create_account(owner, &mut *conn, &planned.name, planned.kind, planned.currency).await?;
        } else if planned.takes_currency {
            sqlx::query(
                "UPDATE accounts a SET currency = $3 WHERE a.owner_id = $1 AND a.name = $2
                   AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.owner_id = a.owner_id AND p.account_id = a.id)",
            )
            .bind(owner.as_uuid())
            .bind(&planned.name)
            .bind(planned.currency.as_str())
            .execute(&mut *conn)
            .await?;
        }
    }
    let home = plan.accounts.first().map(|a| a.currency);
    let mut chart = ensure_chart(owner, &mut *conn, home).await?;
    let mut transit: HashMap<Currency, Account> = HashMap::new();
    let currencies: BTreeSet<Currency> = plan.accounts.iter().map(|a| a.currency).collect();
    if plan.summary.transfers > 0 {
        for currency in currencies {
            transit.insert(currency, transit_account(owner, &mut *conn, currency).await?);
        }
        chart = list_accounts(owner, &mut *conn).await?;
    }
    Ok((chart, transit))
}

/// Books the opening balance of `account`; whether it was booked (not when it already was).
async fn book_opening(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    opening: &Opening,
    account: &Account,
) -> Result<bool, LedgerError> {
    let equity = equity_account(owner, &mut *conn, OPENING_BALANCES, opening.currency).await?;
    let booked = crate::transactions::insert_transaction(
        owner,
        &mut *conn,
        &NewTransaction {
            id: None,
            date: opening.date,
            description: format!("Opening balance of {}", opening.account),
            raw_description: format!("Opening balance of {}", opening.account),
            import_batch_id: Some(plan_id),
            source_hash: Some(format!("opening:{}:{}", account.id, opening.date)),
            postings: vec![
                NewPosting {
                    account_id: account.id,
                    amount_minor: opening.amount_minor,
                    currency: opening.currency,
                },
                NewPosting {
                    account_id: equity.id,
                    amount_minor: opening.amount_minor.saturating_neg(),
                    currency: opening.currency,
                },
            ],
        },
    )
    .await?;
    Ok(matches!(booked, InsertOutcome::Inserted(_)))
}

/// The statement's own category words kept on the transactions they came with, as hints.
async fn keep_bank_words(
    owner: OwnerId,
    conn: &mut PgConnection,
    hints: Vec<(Uuid, &str)>,
) -> Result<(), LedgerError> {
    if hints.is_empty() {
        return Ok(());
    }
    let (ids, words): (Vec<Uuid>, Vec<&str>) = hints.into_iter().unzip();
    sqlx::query(
        "UPDATE transactions t SET bank_category = h.word
         FROM UNNEST($2::uuid[], $3::text[]) AS h(id, word) WHERE t.owner_id = $1 AND t.id = h.id",
    )
    .bind(owner.as_uuid())
    .bind(&ids)
    .bind(&words)
    .execute(conn)
    .await?;
    Ok(())
}

/// Applies the stored plan `plan_id` of `owner`, exactly as planned: no file is read again.
/// Committing a plan twice is refused. Call it inside a transaction (`with_owner`): the import
/// is then all or nothing. `progress` hears (rows done, rows in all) as chunks go in.
pub async fn commit(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<CommitReport, LedgerError> {
    commit_with(owner, conn, plan_id, &BTreeMap::new(), progress).await
}

/// Like [`commit`], with the person's answers to the plan's questions: for a row (by its line)
/// that could be one transfer with several others, the index of the candidate it is. A row with
/// no answer waits in transit.
pub async fn commit_with(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    choices: &BTreeMap<usize, usize>,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<CommitReport, LedgerError> {
    let mut plan = load_plan(owner, &mut *conn, plan_id).await?;
    // The answers given with the plan, and over them those given now.
    let mut answers = std::mem::take(&mut plan.answers);
    answers.extend(choices.iter().map(|(line, pick)| (*line, *pick)));
    let choices = &answers;

    let (chart, transit) = prepare_accounts(owner, &mut *conn, &plan).await?;
    let by_name: HashMap<&str, &Account> = chart.iter().map(|a| (a.name.as_str(), a)).collect();
    let find = |name: &str| {
        by_name
            .get(name)
            .copied()
            .ok_or_else(|| LedgerError::UnknownAccountName(name.to_owned()))
    };

    let total = plan.lines.rows.max(plan.rows.len());
    let mut report = CommitReport::new(plan_id, &plan);
    // The transactions of the rows that look like transfers, by line; and the bank's words.
    let mut transfer_rows: HashMap<usize, Uuid> = HashMap::new();
    let mut done = 0;
    // A version 1 plan holds its rows; a newer one's are read a stored chunk at a time.
    let inline = std::mem::take(&mut plan.rows);
    let mut stored_chunk = 0;
    loop {
        let rows = if inline.is_empty() {
            let rows = plan_rows(owner, &mut *conn, plan_id, stored_chunk).await?;
            stored_chunk = stored_chunk.saturating_add(1);
            rows
        } else if done < inline.len() {
            inline.iter().skip(done).take(ROWS_PER_CHUNK).cloned().collect()
        } else {
            Vec::new()
        };
        if rows.is_empty() {
            break;
        }
        let news = rows
            .iter()
            .map(|row| {
                let other = if row.transfer.is_some() {
                    transit
                        .get(&row.currency)
                        .ok_or_else(|| LedgerError::UnknownAccountName(TRANSIT.to_owned()))?
                } else {
                    find(&row.category)?
                };
                Ok(transaction_of(row, find(&row.account)?, other, plan_id))
            })
            .collect::<Result<Vec<_>, LedgerError>>()?;
        let mut hints: Vec<(Uuid, &str)> = Vec::new();
        for (row, outcome) in rows
            .iter()
            .zip(insert_transactions(owner, &mut *conn, &news).await?)
        {
            match outcome {
                InsertOutcome::Inserted(id) => {
                    report.imported = report.imported.saturating_add(1);
                    report.uncategorized = report.uncategorized.saturating_add(usize::from(
                        row.category == UNCATEGORIZED && row.transfer.is_none(),
                    ));
                    report.date_range = Some(match report.date_range {
                        None => (row.date, row.date),
                        Some((from, to)) => (from.min(row.date), to.max(row.date)),
                    });
                    if row.transfer.is_some() {
                        transfer_rows.insert(row.line, id);
                    }
                    if let Some(word) = &row.bank_category {
                        hints.push((id, word));
                    }
                }
                InsertOutcome::Duplicate => {
                    report.skipped_duplicates = report.skipped_duplicates.saturating_add(1);
                }
            }
        }
        keep_bank_words(owner, &mut *conn, hints).await?;
        done = done.saturating_add(rows.len());
        progress(done, total);
    }
    pair_transfers(owner, &mut *conn, &plan, choices, &transfer_rows, &mut report).await?;
    if let Some(opening) = &plan.opening {
        let account = find(&opening.account)?;
        if book_opening(owner, &mut *conn, plan_id, opening, account).await? {
            report.opening = Some(opening.clone());
        }
    }
    // The rows are in the ledger: their stored copy has served.
    sqlx::query("DELETE FROM import_plan_rows WHERE owner_id = $1 AND batch_id = $2")
        .bind(owner.as_uuid())
        .bind(plan_id)
        .execute(&mut *conn)
        .await?;
    let asset_account = plan
        .accounts
        .first()
        .and_then(|p| by_name.get(p.name.as_str()))
        .map(|a| a.id);
    if !plan.base_account.is_empty() {
        super::save_mapping(
            owner,
            &mut *conn,
            &plan.base_account,
            &plan.mapping,
            &plan.filename,
        )
        .await?;
    }
    sqlx::query(
        "UPDATE import_batches SET status = 'committed', imported_at = now(), row_count = $3, account_id = $4
         WHERE owner_id = $1 AND id = $2",
    )
    .bind(owner.as_uuid())
    .bind(plan_id)
    .bind(i32::try_from(report.imported).unwrap_or(i32::MAX))
    .bind(asset_account)
    .execute(&mut *conn)
    .await?;
    Ok(report)
}

/// Makes each planned pair one transfer: the row's transit leg merges into its other side's (a
/// leg already in the ledger, or another row of this statement). A row whose question was
/// answered pairs with the chosen candidate; the rest wait in transit.
async fn pair_transfers(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan: &Plan,
    choices: &BTreeMap<usize, usize>,
    inserted: &HashMap<usize, Uuid>,
    report: &mut CommitReport,
) -> Result<(), LedgerError> {
    let mut merged: BTreeSet<Uuid> = BTreeSet::new();
    for planned in &plan.transfers {
        let Some(line) = planned.row.line else { continue };
        let Some(&mine) = inserted.get(&line) else {
            continue;
        };
        if merged.contains(&mine) {
            continue;
        }
        let with = match &planned.decision {
            Decision::Paired { with } => Some(with),
            Decision::Ask { candidates } => choices.get(&line).and_then(|i| candidates.get(*i)),
            Decision::Transit => None,
        };
        let other = with.and_then(|w| match (w.transaction, w.line) {
            (Some(leg), _) => Some(leg),
            (None, Some(other_line)) => inserted.get(&other_line).copied(),
            (None, None) => None,
        });
        match other {
            Some(other) if !merged.contains(&other) && other != mine => {
                // The side already in the ledger keeps its transaction; two rows of this
                // statement keep the first's.
                transfers::merge(owner, &mut *conn, other, mine).await?;
                merged.insert(other);
                merged.insert(mine);
                report.transfers_paired = report.transfers_paired.saturating_add(2);
            }
            _ => {}
        }
    }
    report.in_transit = inserted.values().filter(|id| !merged.contains(id)).count();
    // A leg from an earlier import counted once here: only this statement's rows are reported.
    report.transfers_paired = inserted.values().filter(|id| merged.contains(id)).count();
    Ok(())
}

/// Records the person's answers to plan `plan_id`'s questions (for a row, by its line, with
/// several equal candidates: the index of the one it is; a row left out waits in transit) and
/// returns the plan. Refused for a line that asks nothing or an index past its candidates.
pub async fn answer(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    answers: &BTreeMap<usize, usize>,
) -> Result<Plan, LedgerError> {
    let mut plan = load_plan(owner, &mut *conn, plan_id).await?;
    for (&line, &pick) in answers {
        let fits = plan.transfers.iter().any(|t| {
            t.row.line == Some(line)
                && matches!(&t.decision, Decision::Ask { candidates } if pick < candidates.len())
        });
        if !fits {
            return Err(LedgerError::NoSuchQuestion { plan: plan_id, line });
        }
    }
    plan.answers = answers.clone();
    sqlx::query("UPDATE import_batches SET plan = $3 WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(plan_id)
        .bind(sqlx::types::Json(&plan))
        .execute(conn)
        .await?;
    Ok(plan)
}

/// The stored plan, locked for this transaction, if it is still to be committed.
pub(super) async fn load_plan(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
) -> Result<Plan, LedgerError> {
    // Read as text and straight into the plan: a tree of values would take several times its memory.
    let stored: Option<(String, Option<String>)> = sqlx::query_as(
        "SELECT status::text, plan::text FROM import_batches WHERE owner_id = $1 AND id = $2 FOR UPDATE",
    )
    .bind(owner.as_uuid())
    .bind(plan_id)
    .fetch_optional(&mut *conn)
    .await?;
    let plan = match stored {
        None => {
            return Err(LedgerError::NoPlan(plan_id));
        }
        Some((status, _)) if status == "committed" => {
            return Err(LedgerError::PlanCommitted(plan_id));
        }
        Some((_, Some(text))) => {
            serde_json::from_str::<Plan>(&text).map_err(|source| LedgerError::UnreadablePlan {
                plan: plan_id,
                source,
            })?
        }
        Some((_, None)) => {
            return Err(LedgerError::EmptyPlan(plan_id));
        }
    };
    if plan.version > PLAN_VERSION {
        return Err(LedgerError::NewerPlan {
            plan: plan_id,
            version: plan.version,
        });
    }

    Ok(plan)
}

/// A cell as it may be written into a CSV file a spreadsheet will open: text starting with
/// `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, so it is never run as a
/// formula.
pub fn neutralise_formula(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised() {
        assert_eq!(neutralise_formula("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(neutralise_formula("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(neutralise_formula("-2+3"), "'-2+3");
        assert_eq!(neutralise_formula("SWIGGY"), "SWIGGY");
    }

    #[test]
    fn accounts_per_currency() {
        let existing = vec![Account {
            id: Uuid::nil(),
            name: "Checking".into(),
            account_type: AccountType::Asset,
            kind: Some(AccountKind::Checking),
            currency: Some(Currency::INR),
        }];
        assert_eq!(
            account_for("Checking", Currency::INR, &existing, true),
            "Checking"
        );
        assert_eq!(
            account_for("Checking", Currency::EUR, &existing, true),
            "Checking (EUR)"
        );
        assert_eq!(account_for("Wise", Currency::EUR, &existing, true), "Wise");
        assert_eq!(account_for("Wise", Currency::EUR, &existing, false), "Wise (EUR)");
    }
}
