//! The dry run's plan, stored in `import_batches`, and the commit that applies exactly it.

use std::collections::HashMap;

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
const PLAN_VERSION: u32 = 1;

/// What a commit will do, decided by the dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub version: u32,
    pub filename: String,
    pub source_sha256: String,
    pub format: Format,
    /// Asset accounts the rows go into (created at commit when `exists` is false).
    pub accounts: Vec<PlannedAccount>,
    pub rows: Vec<PlannedRow>,
    pub duplicates: Vec<DuplicateRow>,
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
        return Err(LedgerError::Invalid(format!(
            "the account {} holds another currency",
            clash.name
        )));
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
        return Err(LedgerError::Invalid(format!(
            "the statement states no currency (no symbol or code in its amounts, no currency column or \
             header) and {base} holds nothing yet to go by: say which currency it is in (kakeibo import \
             --currency EUR; the import tool's currency)"
        )));
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
        return Err(LedgerError::Invalid(format!(
            "{} is a {:?} account; statements go into an asset or liability account",
            named.name, named.account_type
        )));
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
    let mut rows = Vec::with_capacity(parsed.rows.len());
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
        let occurrence = *occurrences.entry(key).and_modify(|n| *n += 1).or_insert(0);
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
        rows.push(PlannedRow {
            source_hash: source_hash(&account, row.date, row.amount_minor, &row.description, occurrence),
            line: row.line,
            date: row.date,
            description: row.description,
            amount_minor: row.amount_minor,
            currency: row.currency,
            account,
            category,
        });
    }

    let (rows, duplicates) = split_duplicates(owner, conn, rows).await?;

    let lines = LineCount {
        rows: rows.len(),
        duplicates: duplicates.len(),
        ..parsed.lines
    };
    let plan = Plan {
        version: PLAN_VERSION,
        filename: filename.to_owned(),
        source_sha256: source_sha256.to_owned(),
        format: parsed.format,
        accounts,
        rows,
        duplicates,
        errors: parsed.errors,
        skipped: parsed.skipped,
        lines,
        base_account: base.to_owned(),
        mapping: parsed.mapping,
    };
    // Written straight to JSON text: a tree of `Value`s for a large statement would take several
    // times the plan's own memory.
    let stored = sqlx::types::Json(&plan);
    let id: Uuid = sqlx::query_scalar(
        "INSERT INTO import_batches (owner_id, filename, source_sha256, status, plan, row_count)
         VALUES ($1, $2, $3, 'planned', $4, $5) RETURNING id",
    )
    .bind(owner.as_uuid())
    .bind(filename)
    .bind(source_sha256)
    .bind(stored)
    .bind(i32::try_from(plan.rows.len()).unwrap_or(i32::MAX))
    .fetch_one(conn)
    .await?;
    Ok((id, plan))
}

/// The rows already in the ledger (by their source hash), apart from the rows to add.
async fn split_duplicates(
    owner: OwnerId,
    conn: &mut PgConnection,
    mut rows: Vec<PlannedRow>,
) -> Result<(Vec<PlannedRow>, Vec<DuplicateRow>), LedgerError> {
    let hashes: Vec<&str> = rows.iter().map(|r| r.source_hash.as_str()).collect();
    let known: Vec<(String, NaiveDate)> = sqlx::query_as(
        "SELECT source_hash, created_at::date FROM transactions WHERE owner_id = $1 AND source_hash = ANY($2)",
    )
    .bind(owner.as_uuid())
    .bind(&hashes)
    .fetch_all(&mut *conn)
    .await?;
    let known: HashMap<String, NaiveDate> = known.into_iter().collect();
    let duplicates: Vec<PlannedRow> = rows
        .extract_if(.., |r| known.contains_key(&r.source_hash))
        .collect();
    let duplicates: Vec<DuplicateRow> = duplicates
        .into_iter()
        .map(|r| DuplicateRow {
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
        })
        .collect();
    Ok((rows, duplicates))
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
    let plan = load_plan(owner, &mut *conn, plan_id).await?;

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

    let total = plan.rows.len();
    let mut report = CommitReport {
        import_batch_id: plan_id,
        imported: 0,
        uncategorized: 0,
        skipped_duplicates: 0,
        date_range: None,
        parse_errors: plan.errors.len(),
    };
    let mut done = 0;
    for chunk in plan.rows.chunks(5_000) {
        let mut news = Vec::with_capacity(chunk.len());
        for row in chunk {
            let (asset, category) = (find(&row.account)?, find(&row.category)?);
            news.push(NewTransaction {
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
                        amount_minor: -row.amount_minor,
                        currency: row.currency,
                    },
                ],
            });
        }
        for (row, outcome) in chunk
            .iter()
            .zip(insert_transactions(owner, &mut *conn, &news).await?)
        {
            match outcome {
                InsertOutcome::Inserted(_) => {
                    report.imported += 1;
                    report.uncategorized += usize::from(row.category == UNCATEGORIZED);
                    report.date_range = Some(match report.date_range {
                        None => (row.date, row.date),
                        Some((from, to)) => (from.min(row.date), to.max(row.date)),
                    });
                }
                InsertOutcome::Duplicate => report.skipped_duplicates += 1,
            }
        }
        done += chunk.len();
        progress(done, total);
    }
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
            return Err(LedgerError::Invalid(format!(
                "no import plan {plan_id}: preview the statement first"
            )));
        }
        Some((status, _)) if status == "committed" => {
            return Err(LedgerError::Invalid(format!(
                "import plan {plan_id} was already committed"
            )));
        }
        Some((_, Some(text))) => serde_json::from_str::<Plan>(&text)
            .map_err(|e| LedgerError::Invalid(format!("import plan {plan_id} cannot be read: {e}")))?,
        Some((_, None)) => {
            return Err(LedgerError::Invalid(format!(
                "import plan {plan_id} holds no plan"
            )));
        }
    };
    if plan.version > PLAN_VERSION {
        return Err(LedgerError::Invalid(format!(
            "import plan {plan_id} is of a newer version {}",
            plan.version
        )));
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
