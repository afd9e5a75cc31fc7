//! The categories screen: a person's categories (the expense and income accounts of their chart)
//! listed with what uses them; one added; one of their own renamed; one of their own merged into
//! another — its rows, rules and budgets moved over in one recorded, reversible edit.
//!
//! The starting chart's categories (Groceries, Dining, …, Salary) keep their names and stay: the
//! assistant and the importer file into them by name. A person's own categories are theirs to
//! rename and merge away.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use kakeibo_ledger::{AccountType, DEFAULT_CHART, OwnerId, import::forget_kept_plans};

use crate::{
    Edit, RegisterError,
    edits::record_with,
    snapshot::{self, Posting, Snapshot},
};

/// What a category is to the household.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Spending.
    Expense,
    Income,
}

impl Side {
    fn account_type(self) -> AccountType {
        match self {
            Self::Expense => AccountType::Expense,
            Self::Income => AccountType::Income,
        }
    }
}

/// One category as the screen lists it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct Category {
    pub id: Uuid,
    pub name: String,
    /// `expense` or `income`.
    pub side: String,
    /// One of the starting chart's: it keeps its name and cannot be merged away.
    pub standard: bool,
    /// Transactions with a posting on it.
    pub transactions: i64,
    pub rules: i64,
    pub budgets: i64,
}

const CATEGORY_COLUMNS: &str = "a.id, a.name, a.type::text AS side, a.name = ANY($2) AS standard,
    (SELECT count(DISTINCT p.transaction_id) FROM postings p WHERE p.owner_id = a.owner_id AND p.account_id = a.id) AS transactions,
    (SELECT count(*) FROM rules r WHERE r.owner_id = a.owner_id AND r.account_id = a.id) AS rules,
    (SELECT count(*) FROM budgets b WHERE b.owner_id = a.owner_id AND b.account_id = a.id) AS budgets";

/// The starting chart's category names.
fn standard_names() -> Vec<&'static str> {
    DEFAULT_CHART
        .iter()
        .filter(|(_, t, _)| t.is_category())
        .map(|(name, _, _)| *name)
        .collect()
}

/// The owner's categories: spending first, then income, each by name.
pub async fn list(owner: OwnerId, conn: &mut PgConnection) -> Result<Vec<Category>, RegisterError> {
    Ok(sqlx::query_as::<_, Category>(sqlx::AssertSqlSafe(format!(
        "SELECT {CATEGORY_COLUMNS} FROM accounts a
         WHERE a.owner_id = $1 AND a.type IN ('expense', 'income')
         ORDER BY a.type = 'income', lower(a.name), a.id"
    )))
    .bind(owner.as_uuid())
    .bind(standard_names())
    .fetch_all(&mut *conn)
    .await?)
}

/// The category `id` of the owner.
async fn one(owner: OwnerId, conn: &mut PgConnection, id: Uuid) -> Result<Category, RegisterError> {
    sqlx::query_as::<_, Category>(sqlx::AssertSqlSafe(format!(
        "SELECT {CATEGORY_COLUMNS} FROM accounts a
         WHERE a.owner_id = $1 AND a.id = $3 AND a.type IN ('expense', 'income')"
    )))
    .bind(owner.as_uuid())
    .bind(standard_names())
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(RegisterError::NotFound)
}

/// A category name as a person may give it: 1 to 40 characters on one line, without “:” (the
/// separator of account names in the plain-text ledgers an export writes).
fn valid_name(text: &str) -> Result<String, RegisterError> {
    let name = text.trim();
    if name.is_empty() || name.chars().count() > 40 || name.chars().any(|c| c.is_control() || c == ':') {
        return Err(RegisterError::Invalid(
            "a category name is 1 to 40 characters on one line, without “:”".into(),
        ));
    }
    Ok(name.to_owned())
}

/// Refuses a name another account of the owner has (in any case).
async fn name_is_free(
    owner: OwnerId,
    conn: &mut PgConnection,
    name: &str,
    except: Option<Uuid>,
) -> Result<(), RegisterError> {
    let taken: Option<String> = sqlx::query_scalar(
        "SELECT name FROM accounts WHERE owner_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3",
    )
    .bind(owner.as_uuid())
    .bind(name)
    .bind(except)
    .fetch_optional(&mut *conn)
    .await?;
    match taken {
        Some(existing) => Err(RegisterError::Invalid(format!(
            "you already have an account or category named “{existing}”"
        ))),
        None => Ok(()),
    }
}

/// Adds a category of the owner's own.
pub async fn add(
    owner: OwnerId,
    conn: &mut PgConnection,
    name: &str,
    side: Side,
) -> Result<Category, RegisterError> {
    let name = valid_name(name)?;
    name_is_free(owner, &mut *conn, &name, None).await?;
    let id: Uuid =
        sqlx::query_scalar("INSERT INTO accounts (owner_id, name, type) VALUES ($1, $2, $3) RETURNING id")
            .bind(owner.as_uuid())
            .bind(&name)
            .bind(side.account_type())
            .fetch_one(&mut *conn)
            .await?;
    one(owner, conn, id).await
}

/// The sentence that refuses to rename or merge away a starting category.
fn keeps_its_name(name: &str) -> RegisterError {
    RegisterError::Refused(format!(
        "{name} is one of the starting categories the assistant and the importer file into, so it keeps its name and stays; add a category of your own and move rows into it instead"
    ))
}

/// Renames a category of the owner's own.
pub async fn rename(
    owner: OwnerId,
    conn: &mut PgConnection,
    id: Uuid,
    name: &str,
) -> Result<Category, RegisterError> {
    let category = one(owner, &mut *conn, id).await?;
    if category.standard {
        return Err(keeps_its_name(&category.name));
    }
    let name = valid_name(name)?;
    if name == category.name {
        return Err(RegisterError::Invalid("that is its name already".into()));
    }
    name_is_free(owner, &mut *conn, &name, Some(id)).await?;
    sqlx::query("UPDATE accounts SET name = $3 WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(id)
        .bind(&name)
        .execute(&mut *conn)
        .await?;
    // A kept preview filed rows under the old name.
    forget_kept_plans(owner, &mut *conn).await?;
    one(owner, conn, id).await
}

/// A budget row, kept whole in a merge's record.
#[derive(Debug, Clone, Serialize, Deserialize, sqlx::FromRow, schemars::JsonSchema)]
struct BudgetRow {
    id: Uuid,
    account_id: Uuid,
    month: String,
    amount_minor: i64,
    currency: String,
}

/// What a merge moved besides transactions, so its revert can put it back.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
struct Merged {
    /// The category merged away: its id, name and side.
    id: Uuid,
    name: String,
    side: Side,
    /// The rules moved from it.
    rules: Vec<Uuid>,
    /// Its budgets, and those of the category it went into for the same months, as they were.
    budgets: Vec<BudgetRow>,
    into_budgets: Vec<BudgetRow>,
}

/// The budgets of `from`, and those of `into` in the same months, locked; refused when a month
/// has one in each, in different currencies.
async fn budgets_of(
    owner: OwnerId,
    conn: &mut PgConnection,
    from: Uuid,
    into: Uuid,
) -> Result<(Vec<BudgetRow>, Vec<BudgetRow>), RegisterError> {
    let budgets: Vec<BudgetRow> = sqlx::query_as(
        "SELECT id, account_id, month::text, amount_minor, currency::text FROM budgets
         WHERE owner_id = $1 AND account_id = $2 ORDER BY month FOR UPDATE",
    )
    .bind(owner.as_uuid())
    .bind(from)
    .fetch_all(&mut *conn)
    .await?;
    let months: Vec<String> = budgets.iter().map(|b| b.month.clone()).collect();
    let into_budgets: Vec<BudgetRow> = sqlx::query_as(
        "SELECT id, account_id, month::text, amount_minor, currency::text FROM budgets
         WHERE owner_id = $1 AND account_id = $2 AND month = ANY($3) ORDER BY month FOR UPDATE",
    )
    .bind(owner.as_uuid())
    .bind(into)
    .bind(&months)
    .fetch_all(&mut *conn)
    .await?;
    let by_month: HashMap<&str, &BudgetRow> = into_budgets.iter().map(|b| (b.month.as_str(), b)).collect();
    if let Some((mine, theirs)) = budgets.iter().find_map(|b| {
        by_month
            .get(b.month.as_str())
            .filter(|t| t.currency != b.currency)
            .map(|t| (b, *t))
    }) {
        return Err(RegisterError::Refused(format!(
            "both have a budget for {} in different currencies ({} and {}): change one first",
            mine.month, mine.currency, theirs.currency
        )));
    }

    Ok((budgets, into_budgets))
}

/// Moves `budgets` to `into`, adding each to the one `into` already has in its month.
async fn move_budgets(
    owner: OwnerId,
    conn: &mut PgConnection,
    budgets: &[BudgetRow],
    into_budgets: &[BudgetRow],
    into: Uuid,
) -> Result<(), RegisterError> {
    let by_month: HashMap<&str, &BudgetRow> = into_budgets.iter().map(|b| (b.month.as_str(), b)).collect();
    for budget in budgets {
        match by_month.get(budget.month.as_str()) {
            Some(theirs) => {
                sqlx::query(
                    "UPDATE budgets SET amount_minor = amount_minor + $3 WHERE owner_id = $1 AND id = $2",
                )
                .bind(owner.as_uuid())
                .bind(theirs.id)
                .bind(budget.amount_minor)
                .execute(&mut *conn)
                .await?;
                sqlx::query("DELETE FROM budgets WHERE owner_id = $1 AND id = $2")
                    .bind(owner.as_uuid())
                    .bind(budget.id)
                    .execute(&mut *conn)
                    .await?;
            }
            None => {
                sqlx::query("UPDATE budgets SET account_id = $3 WHERE owner_id = $1 AND id = $2")
                    .bind(owner.as_uuid())
                    .bind(budget.id)
                    .bind(into)
                    .execute(&mut *conn)
                    .await?;
            }
        }
    }
    Ok(())
}

/// Merges category `from` (one of the owner's own) into `into`: its rows, rules and budgets go to
/// `into` (two budgets of one month add up) and `from` is gone. Recorded; revertible.
pub async fn merge(
    owner: OwnerId,
    conn: &mut PgConnection,
    from: Uuid,
    into: Uuid,
) -> Result<Edit, RegisterError> {
    if from == into {
        return Err(RegisterError::Invalid(
            "a category cannot be merged into itself".into(),
        ));
    }
    let source = one(owner, &mut *conn, from).await?;
    let target = one(owner, &mut *conn, into).await?;
    if source.standard {
        return Err(keeps_its_name(&source.name));
    }
    if source.side != target.side {
        let word = |side: &str| if side == "income" { "income" } else { "spending" };
        return Err(RegisterError::Invalid(format!(
            "{} is {} and {} is {}: a merge keeps spending with spending and income with income",
            source.name,
            word(&source.side),
            target.name,
            word(&target.side)
        )));
    }
    let side = if source.side == "income" {
        Side::Income
    } else {
        Side::Expense
    };
    let (budgets, into_budgets) = budgets_of(owner, &mut *conn, from, into).await?;

    // The rows: every posting on `from` moves to `into` (two legs on one category become one).
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT DISTINCT transaction_id FROM postings WHERE owner_id = $1 AND account_id = $2",
    )
    .bind(owner.as_uuid())
    .bind(from)
    .fetch_all(&mut *conn)
    .await?;
    let before = snapshot::read(owner, &mut *conn, &ids).await?;
    let after: Vec<Snapshot> = before.iter().map(|s| moved(s, from, into)).collect();
    let rules: Vec<Uuid> =
        sqlx::query_scalar("SELECT id FROM rules WHERE owner_id = $1 AND account_id = $2 ORDER BY id")
            .bind(owner.as_uuid())
            .bind(from)
            .fetch_all(&mut *conn)
            .await?;
    let rows = if before.len() == 1 { "row" } else { "rows" };
    let mut summary = format!(
        "Merged {} into {}: {} {rows}",
        source.name,
        target.name,
        before.len()
    );
    if !rules.is_empty() {
        summary = format!(
            "{summary}, {} {}",
            rules.len(),
            if rules.len() == 1 { "rule" } else { "rules" }
        );
    }
    if !budgets.is_empty() {
        let word = if budgets.len() == 1 { "budget" } else { "budgets" };
        summary = format!("{summary}, {} {word}", budgets.len());
    }
    let detail = Merged {
        id: from,
        name: source.name.clone(),
        side,
        rules: rules.clone(),
        budgets: budgets.clone(),
        into_budgets: into_budgets.clone(),
    };
    let detail = serde_json::to_value(&detail).map_err(|e| RegisterError::Invalid(e.to_string()))?;
    let edit = record_with(
        owner,
        &mut *conn,
        crate::edits::EditKind::Merge,
        &summary,
        (&before, &after),
        None,
        Some(detail),
    )
    .await?;

    sqlx::query("UPDATE rules SET account_id = $3 WHERE owner_id = $1 AND account_id = $2")
        .bind(owner.as_uuid())
        .bind(from)
        .bind(into)
        .execute(&mut *conn)
        .await?;
    move_budgets(owner, &mut *conn, &budgets, &into_budgets, into).await?;
    sqlx::query("DELETE FROM accounts WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(from)
        .execute(&mut *conn)
        .await?;
    forget_kept_plans(owner, conn).await?;
    Ok(edit)
}

/// `s` with its legs on `from` moved to `into`, legs of one account and currency made one.
fn moved(s: &Snapshot, from: Uuid, into: Uuid) -> Snapshot {
    let mut out = s.clone();
    let mut postings: Vec<Posting> = Vec::with_capacity(s.postings.len());
    for p in &s.postings {
        let account_id = if p.account_id == from { into } else { p.account_id };
        match postings
            .iter_mut()
            .find(|q| q.account_id == account_id && q.currency == p.currency && account_id == into)
        {
            Some(q) => q.amount_minor = q.amount_minor.saturating_add(p.amount_minor),
            None => postings.push(Posting {
                account_id,
                amount_minor: p.amount_minor,
                currency: p.currency,
            }),
        }
    }
    postings.sort_by_key(|p| (p.account_id, p.amount_minor));
    out.postings = postings;
    out
}

fn merged(detail: Option<&serde_json::Value>) -> Result<Merged, RegisterError> {
    detail
        .and_then(|d| serde_json::from_value::<Merged>(d.clone()).ok())
        .ok_or_else(|| RegisterError::Invalid("this merge kept no record of what it moved".into()))
}

/// A merge's revert, first half: the merged-away category back, with its id and name.
pub(crate) async fn unmerge_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    detail: Option<&serde_json::Value>,
) -> Result<(), RegisterError> {
    let merged = merged(detail)?;
    match name_is_free(owner, &mut *conn, &merged.name, None).await {
        Err(RegisterError::Invalid(_)) => {
            return Err(RegisterError::Refused(format!(
                "an account named “{}” exists again: rename it before putting the merged category back",
                merged.name
            )));
        }
        other => other?,
    }
    sqlx::query("INSERT INTO accounts (id, owner_id, name, type) VALUES ($1, $2, $3, $4)")
        .bind(merged.id)
        .bind(owner.as_uuid())
        .bind(&merged.name)
        .bind(merged.side.account_type())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// A merge's revert, second half: its rules and budgets back as they were.
pub(crate) async fn unmerge_uses(
    owner: OwnerId,
    conn: &mut PgConnection,
    detail: Option<&serde_json::Value>,
) -> Result<(), RegisterError> {
    let merged = merged(detail)?;
    sqlx::query("UPDATE rules SET account_id = $3 WHERE owner_id = $1 AND id = ANY($2)")
        .bind(owner.as_uuid())
        .bind(&merged.rules)
        .bind(merged.id)
        .execute(&mut *conn)
        .await?;
    let ids: Vec<Uuid> = merged.budgets.iter().map(|b| b.id).collect();
    sqlx::query("DELETE FROM budgets WHERE owner_id = $1 AND id = ANY($2)")
        .bind(owner.as_uuid())
        .bind(&ids)
        .execute(&mut *conn)
        .await?;
    for b in &merged.budgets {
        sqlx::query(
            "INSERT INTO budgets (id, owner_id, account_id, month, amount_minor, currency)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (account_id, month) DO UPDATE SET amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency",
        )
        .bind(b.id)
        .bind(owner.as_uuid())
        .bind(merged.id)
        .bind(&b.month)
        .bind(b.amount_minor)
        .bind(&b.currency)
        .execute(&mut *conn)
        .await?;
    }
    for b in &merged.into_budgets {
        sqlx::query("UPDATE budgets SET amount_minor = $3 WHERE owner_id = $1 AND id = $2")
            .bind(owner.as_uuid())
            .bind(b.id)
            .bind(b.amount_minor)
            .execute(&mut *conn)
            .await?;
    }
    forget_kept_plans(owner, conn).await?;
    Ok(())
}
