//! The dry run's plan, stored in `import_batches`, and the commit that applies exactly it.

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use super::{Format, LineCount, Parsed, RowError};
use crate::{
    accounts::{Account, AccountType, CHECKING, UNCATEGORIZED, ensure_chart, list_accounts},
    error::LedgerError,
    money::Currency,
    owner::OwnerId,
    transactions::{InsertOutcome, NewPosting, NewTransaction, insert_transactions, source_hash},
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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedAccount {
    pub name: String,
    pub currency: Currency,
    pub exists: bool,
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
        let category = self.by_category.entry(row.category.clone()).or_default();
        category.0 = category.0.saturating_add(1);
        let sum = category.1.entry(row.currency).or_default();
        *sum = sum.saturating_add(row.amount_minor);
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

/// The asset account for `currency`: `base` itself when it holds that currency (or does not
/// exist yet and this is the statement's only currency), otherwise `base (CUR)`.
pub fn account_for(base: &str, currency: Currency, existing: &[Account], only_currency: bool) -> String {
    match existing.iter().find(|a| a.name.eq_ignore_ascii_case(base)) {
        Some(account) if account.currency == currency => account.name.clone(),
        None if only_currency => base.to_owned(),
        _ => format!("{base} ({currency})"),
    }
}

/// One asset account per currency of the statement.
fn planned_accounts(
    base: &str,
    existing: &[Account],
    parsed: &Parsed,
) -> Result<Vec<PlannedAccount>, LedgerError> {
    let mut currencies: Vec<Currency> = parsed.rows.iter().map(|r| r.currency).collect();
    currencies.sort_unstable();
    currencies.dedup();
    let accounts: Vec<PlannedAccount> = currencies
        .iter()
        .map(|c| {
            let name = account_for(base, *c, existing, currencies.len() == 1);
            let exists = existing.iter().any(|a| a.name == name);
            PlannedAccount {
                name,
                currency: *c,
                exists,
            }
        })
        .collect();
    if let Some(clash) = accounts.iter().find(|p| {
        existing
            .iter()
            .any(|a| a.name.eq_ignore_ascii_case(&p.name) && a.currency != p.currency)
    }) {
        return Err(LedgerError::AccountHoldsAnotherCurrency {
            account: clash.name.clone(),
        });
    }

    Ok(accounts)
}

/// Rows whose currency nothing stated take the currency of the account they go into, when that
/// account is in use (it has postings); otherwise the plan is refused with what to say. An empty
/// account's currency is only the chart's default, no evidence of the statement's.
async fn settle_unstated_currency(
    owner: OwnerId,
    conn: &mut PgConnection,
    base: &str,
    existing: &[Account],
    parsed: &mut Parsed,
) -> Result<(), LedgerError> {
    if !parsed.rows.iter().any(|r| r.currency_unstated) {
        return Ok(());
    }
    let target = existing.iter().find(|a| a.name.eq_ignore_ascii_case(base));
    let in_use = match target {
        Some(account) => sqlx::query_scalar::<_, bool>(
            "SELECT EXISTS (SELECT 1 FROM postings WHERE owner_id = $1 AND account_id = $2)",
        )
        .bind(owner.as_uuid())
        .bind(account.id)
        .fetch_one(&mut *conn)
        .await?
        .then_some(account),
        None => None,
    };
    // The amounts were read with two decimals; an account in a currency with others cannot take
    // them as they are.
    let in_use = in_use.filter(|a| a.currency.decimals() == Currency::INR.decimals());
    let Some(account) = in_use else {
        return Err(LedgerError::NoCurrencyToGoBy {
            account: base.to_owned(),
        });
    };
    for row in parsed.rows.iter_mut().filter(|r| r.currency_unstated) {
        row.currency = account.currency;
        row.currency_unstated = false;
    }
    parsed.format.currency_from = Some(format!(
        "the account {}, which holds {} (the statement names none)",
        account.name, account.currency
    ));
    Ok(())
}

/// How many times `key` was counted before this, counting it once more.
fn count_once_more(counts: &mut HashMap<u64, u32>, key: u64) -> u32 {
    let seen = counts.entry(key).or_insert(0);
    std::mem::replace(seen, seen.saturating_add(1))
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
    let existing = list_accounts(owner, &mut *conn).await?;
    let base = account.map_or(CHECKING, str::trim);
    if let Some(named) = existing.iter().find(|a| a.name.eq_ignore_ascii_case(base))
        && !matches!(named.account_type, AccountType::Asset | AccountType::Liability)
    {
        return Err(LedgerError::NotAStatementAccount {
            account: named.name.clone(),
            account_type: named.account_type,
        });
    }
    let mut parsed = parsed;
    settle_unstated_currency(owner, conn, base, &existing, &mut parsed).await?;
    let accounts = planned_accounts(base, &existing, &parsed)?;

    let categories: HashMap<String, String> = existing
        .iter()
        .filter(|a| a.account_type.is_category())
        .map(|a| (a.name.to_lowercase(), a.name.clone()))
        .collect();
    let rules: Vec<(String, String)> = sqlx::query_as(
        "SELECT lower(r.pattern), a.name FROM rules r JOIN accounts a ON a.id = r.account_id AND a.owner_id = r.owner_id
         WHERE r.owner_id = $1 ORDER BY r.priority, r.created_at, r.id",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?;

    // How often each (account, date, amount, description) came before, keyed by a digest of it:
    // a copy of every row's description as a key would take a large statement's memory twice.
    let mut occurrences: HashMap<u64, u32> = HashMap::with_capacity(parsed.rows.len());
    // The batch first, so the rows can be stored under it a chunk at a time as they are planned;
    // its plan is written once the counts are known.
    let id: Uuid = sqlx::query_scalar(
        "INSERT INTO import_batches (owner_id, filename, source_sha256, status, plan, row_count)
         VALUES ($1, $2, $3, 'planned', NULL, 0) RETURNING id",
    )
    .bind(owner.as_uuid())
    .bind(filename)
    .bind(source_sha256)
    .fetch_one(&mut *conn)
    .await?;
    let mut chunks = Chunks {
        owner,
        batch: id,
        stored: 0,
        summary: RowSummary::default(),
        duplicates: Vec::new(),
        duplicate_count: 0,
    };
    let mut pending = Vec::with_capacity(ROWS_PER_CHUNK);
    for row in parsed.rows {
        let account = accounts
            .iter()
            .find(|a| a.currency == row.currency)
            .map_or(base.to_owned(), |a| a.name.clone());
        let description_key = row.description.to_uppercase();
        let key = {
            use std::hash::{Hash as _, Hasher as _};
            let mut hasher = std::hash::DefaultHasher::new();
            (
                account.as_str(),
                row.date,
                row.amount_minor,
                description_key.as_str(),
            )
                .hash(&mut hasher);
            hasher.finish()
        };
        let occurrence = count_once_more(&mut occurrences, key);
        let lower = row.description.to_lowercase();
        let category = row
            .category
            .as_deref()
            .and_then(|c| categories.get(&c.trim().to_lowercase()).cloned())
            .or_else(|| {
                rules
                    .iter()
                    .find(|(pattern, _)| lower.contains(pattern.as_str()))
                    .map(|(_, c)| c.clone())
            })
            .unwrap_or_else(|| UNCATEGORIZED.to_owned());
        pending.push(PlannedRow {
            source_hash: source_hash(&account, row.date, row.amount_minor, &row.description, occurrence),
            line: row.line,
            date: row.date,
            description: row.description,
            amount_minor: row.amount_minor,
            currency: row.currency,
            account,
            category,
        });
        if pending.len() == ROWS_PER_CHUNK {
            chunks.store(conn, std::mem::take(&mut pending)).await?;
        }
    }
    chunks.store(conn, pending).await?;

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

/// The rows of a plan being made, stored a chunk at a time: duplicates split off, the rest
/// summed up for the preview and written under the batch.
struct Chunks {
    owner: OwnerId,
    batch: Uuid,
    stored: usize,
    summary: RowSummary,
    duplicates: Vec<DuplicateRow>,
    duplicate_count: usize,
}

impl Chunks {
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
         JOIN transactions t ON t.owner_id = $1 AND t.source_hash = h.hash",
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

/// A planned row as the transaction it books: the asset account and the category, each one
/// posting, summing to zero.
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
    let mut plan = load_plan(owner, &mut *conn, plan_id).await?;

    // The planned asset accounts first: a new owner's first statement in EUR makes Checking a EUR
    // account, where the chart would otherwise have made it INR a moment before.
    let existing = list_accounts(owner, &mut *conn).await?;
    for planned in plan
        .accounts
        .iter()
        .filter(|p| !existing.iter().any(|a| a.name == p.name))
    {
        sqlx::query("INSERT INTO accounts (owner_id, name, type, currency) VALUES ($1, $2, 'asset', $3)")
            .bind(owner.as_uuid())
            .bind(&planned.name)
            .bind(planned.currency.as_str())
            .execute(&mut *conn)
            .await?;
    }
    let chart = ensure_chart(owner, &mut *conn, Currency::INR).await?;
    let by_name: HashMap<&str, &Account> = chart.iter().map(|a| (a.name.as_str(), a)).collect();
    let find = |name: &str| {
        by_name
            .get(name)
            .copied()
            .ok_or_else(|| LedgerError::UnknownAccountName(name.to_owned()))
    };

    let total = plan.lines.rows.max(plan.rows.len());
    let mut report = CommitReport {
        import_batch_id: plan_id,
        imported: 0,
        uncategorized: 0,
        skipped_duplicates: 0,
        date_range: None,
        parse_errors: plan.lines.unreadable.max(plan.errors.len()),
    };
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
                Ok(transaction_of(
                    row,
                    find(&row.account)?,
                    find(&row.category)?,
                    plan_id,
                ))
            })
            .collect::<Result<Vec<_>, LedgerError>>()?;
        for (row, outcome) in rows
            .iter()
            .zip(insert_transactions(owner, &mut *conn, &news).await?)
        {
            match outcome {
                InsertOutcome::Inserted(_) => {
                    report.imported = report.imported.saturating_add(1);
                    report.uncategorized = report
                        .uncategorized
                        .saturating_add(usize::from(row.category == UNCATEGORIZED));
                    report.date_range = Some(match report.date_range {
                        None => (row.date, row.date),
                        Some((from, to)) => (from.min(row.date), to.max(row.date)),
                    });
                }
                InsertOutcome::Duplicate => {
                    report.skipped_duplicates = report.skipped_duplicates.saturating_add(1);
                }
            }
        }
        done = done.saturating_add(rows.len());
        progress(done, total);
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

/// The stored plan, locked for this transaction, if it is still to be committed.
async fn load_plan(owner: OwnerId, conn: &mut PgConnection, plan_id: Uuid) -> Result<Plan, LedgerError> {
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
            currency: Currency::INR,
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
