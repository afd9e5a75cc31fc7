//! The rules screen: a person's categorisation rules (a piece of text and the category a row
//! whose description holds it is filed under, in order of priority) listed with how many rows are
//! like each, added, changed and deleted; and a rule's category given to the past rows like it —
//! previewed first, then applied as one recorded, reversible edit.
//!
//! A rule files rows as the importer reads them: the first rule by priority whose text is in a
//! row's description, compared without case.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use kakeibo_ledger::{Account, OwnerId, import::forget_kept_plans, list_accounts};

use crate::{
    Edit, RegisterError,
    edits::{by_id, categorised, category, record, sort},
    snapshot::{self, Snapshot},
};

/// One rule as the screen lists it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct Rule {
    pub id: Uuid,
    pub pattern: String,
    pub category: String,
    /// Lower wins when several rules match a row.
    pub priority: i32,
    pub created_at: DateTime<Utc>,
    /// The rows of the ledger whose description holds the pattern, whatever their category.
    pub matches: i64,
}

/// A rule as a person writes it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleInput {
    pub pattern: String,
    pub category: String,
    /// 1 to 1000; 100 when not given.
    #[serde(default)]
    pub priority: Option<i32>,
}

/// The most rows one application of a rule reads: a pattern like more is too broad to check by eye.
pub const MAX_LIKE: i64 = 5_000;

/// Rows a preview lists (its counts cover every row).
pub const PREVIEW_ROWS: usize = 100;

/// A row `description` contains `pattern` (`$2`), in either of its texts, compared without case.
const LIKE: &str =
    "(strpos(lower(t.description), lower($2)) > 0 OR strpos(lower(t.raw_description), lower($2)) > 0)";

/// The owner's rules, in the order they are tried.
pub async fn list(owner: OwnerId, conn: &mut PgConnection) -> Result<Vec<Rule>, RegisterError> {
    Ok(sqlx::query_as::<_, Rule>(
        "SELECT r.id, r.pattern, a.name AS category, r.priority, r.created_at,
                (SELECT count(*) FROM transactions t WHERE t.owner_id = r.owner_id
                   AND (strpos(lower(t.description), lower(r.pattern)) > 0
                        OR strpos(lower(t.raw_description), lower(r.pattern)) > 0)) AS matches
         FROM rules r JOIN accounts a ON a.id = r.account_id AND a.owner_id = r.owner_id
         WHERE r.owner_id = $1 ORDER BY r.priority, r.created_at, r.id",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?)
}

async fn one(owner: OwnerId, conn: &mut PgConnection, id: Uuid) -> Result<Rule, RegisterError> {
    list(owner, conn)
        .await?
        .into_iter()
        .find(|r| r.id == id)
        .ok_or(RegisterError::NotFound)
}

/// A pattern as a rule keeps it: 2 to 100 characters on one line.
fn valid_pattern(text: &str) -> Result<String, RegisterError> {
    let pattern = text.trim();
    let n = pattern.chars().count();
    if !(2..=100).contains(&n) || pattern.chars().any(char::is_control) {
        return Err(RegisterError::Invalid(
            "a rule's text is 2 to 100 characters on one line".into(),
        ));
    }
    Ok(pattern.to_owned())
}

fn valid_priority(priority: Option<i32>) -> Result<i32, RegisterError> {
    match priority.unwrap_or(100) {
        p @ 1..=1000 => Ok(p),
        _ => Err(RegisterError::Invalid(
            "a priority is 1 to 1000 (lower wins)".into(),
        )),
    }
}

/// Adds a rule (`id` none) or changes rule `id`.
pub async fn save(
    owner: OwnerId,
    conn: &mut PgConnection,
    id: Option<Uuid>,
    input: &RuleInput,
) -> Result<Rule, RegisterError> {
    let pattern = valid_pattern(&input.pattern)?;
    let priority = valid_priority(input.priority)?;
    let accounts = list_accounts(owner, &mut *conn).await?;
    let target = category(&accounts, &input.category)?;
    let same: Option<Uuid> = sqlx::query_scalar(
        "SELECT id FROM rules WHERE owner_id = $1 AND lower(pattern) = lower($2) AND account_id = $3
           AND id IS DISTINCT FROM $4 LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(&pattern)
    .bind(target.id)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    if same.is_some() {
        return Err(RegisterError::Invalid(format!(
            "a rule already files “{pattern}” under {}",
            target.name
        )));
    }
    let saved: Option<Uuid> = match id {
        None => {
            sqlx::query_scalar(
                "INSERT INTO rules (owner_id, pattern, account_id, priority) VALUES ($1, $2, $3, $4) RETURNING id",
            )
            .bind(owner.as_uuid())
            .bind(&pattern)
            .bind(target.id)
            .bind(priority)
            .fetch_optional(&mut *conn)
            .await?
        }
        Some(id) => {
            sqlx::query_scalar(
                "UPDATE rules SET pattern = $3, account_id = $4, priority = $5 WHERE owner_id = $1 AND id = $2 RETURNING id",
            )
            .bind(owner.as_uuid())
            .bind(id)
            .bind(&pattern)
            .bind(target.id)
            .bind(priority)
            .fetch_optional(&mut *conn)
            .await?
        }
    };
    let saved = saved.ok_or(RegisterError::NotFound)?;
    // A kept preview was made with the rules as they were.
    forget_kept_plans(owner, &mut *conn).await?;
    one(owner, conn, saved).await
}

/// Deletes rule `id` (rows it filed keep their category).
pub async fn delete(owner: OwnerId, conn: &mut PgConnection, id: Uuid) -> Result<Uuid, RegisterError> {
    let gone: Option<Uuid> =
        sqlx::query_scalar("DELETE FROM rules WHERE owner_id = $1 AND id = $2 RETURNING id")
            .bind(owner.as_uuid())
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    let gone = gone.ok_or(RegisterError::NotFound)?;
    forget_kept_plans(owner, conn).await?;
    Ok(gone)
}

/// One past row a rule would file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LikeRow {
    pub id: Uuid,
    pub date: NaiveDate,
    pub description: String,
    /// Signed: what the row did to the person's money.
    pub amount_minor: i64,
    pub currency: String,
    /// Its category now.
    pub category: String,
}

/// What giving a rule's category to the past rows like it would do.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Like {
    pub pattern: String,
    pub category: String,
    /// Rows that would move to the category (the first [`PREVIEW_ROWS`] of them listed).
    pub to_file: usize,
    pub rows: Vec<LikeRow>,
    /// Rows like it already in the category.
    pub already: usize,
    /// Rows like it that take no single category: transfers between own accounts, splits,
    /// opening balances. They are left as they are.
    pub left_alone: usize,
}

/// The rows like `pattern` and, for those to file under `category`, their snapshots as they are
/// and as filing them would leave them.
async fn like(
    owner: OwnerId,
    conn: &mut PgConnection,
    pattern: &str,
    category_name: &str,
) -> Result<(Like, Vec<Snapshot>, Vec<Snapshot>), RegisterError> {
    let pattern = valid_pattern(pattern)?;
    let accounts: Vec<Account> = list_accounts(owner, &mut *conn).await?;
    let target = category(&accounts, category_name)?;
    let ids: Vec<Uuid> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT t.id FROM transactions t WHERE t.owner_id = $1 AND {LIKE}
         ORDER BY t.date DESC, t.id LIMIT $3"
    )))
    .bind(owner.as_uuid())
    .bind(&pattern)
    .bind(MAX_LIKE + 1)
    .fetch_all(&mut *conn)
    .await?;
    if i64::try_from(ids.len()).unwrap_or(i64::MAX) > MAX_LIKE {
        return Err(RegisterError::Invalid(format!(
            "more than {MAX_LIKE} rows hold “{pattern}”: give a longer text"
        )));
    }
    let mut found = snapshot::read(owner, &mut *conn, &ids).await?;
    found.sort_by(|a, b| b.date.cmp(&a.date).then(a.id.cmp(&b.id)));
    let index = by_id(&accounts);
    let mut out = Like {
        pattern,
        category: target.name.clone(),
        to_file: 0,
        rows: Vec::new(),
        already: 0,
        left_alone: 0,
    };
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for s in found {
        let Ok(legs) = categorised(&s, &index) else {
            out.left_alone += 1;
            continue;
        };
        let ([leg], [money]) = (legs.categories.as_slice(), legs.money.as_slice()) else {
            out.left_alone += 1;
            continue;
        };
        if leg.account_id == target.id {
            out.already += 1;
            continue;
        }
        out.to_file += 1;
        if out.rows.len() < PREVIEW_ROWS {
            out.rows.push(LikeRow {
                id: s.id,
                date: s.date,
                description: s.description.clone(),
                amount_minor: money.amount_minor,
                currency: money.currency.as_str().to_owned(),
                category: index
                    .get(&leg.account_id)
                    .map_or_else(String::new, |a| a.name.clone()),
            });
        }
        let from = leg.account_id;
        let mut filed = s.clone();
        for p in &mut filed.postings {
            if p.account_id == from {
                p.account_id = target.id;
            }
        }
        sort(&mut filed);
        before.push(s);
        after.push(filed);
    }
    Ok((out, before, after))
}

/// What filing the past rows like `pattern` under `category` would do; nothing changes.
pub async fn preview(
    owner: OwnerId,
    conn: &mut PgConnection,
    pattern: &str,
    category_name: &str,
) -> Result<Like, RegisterError> {
    Ok(like(owner, conn, pattern, category_name).await?.0)
}

/// Files the past rows like `pattern` under `category`, as one recorded edit.
pub async fn apply(
    owner: OwnerId,
    conn: &mut PgConnection,
    pattern: &str,
    category_name: &str,
) -> Result<Edit, RegisterError> {
    let (like, before, after) = like(owner, &mut *conn, pattern, category_name).await?;
    if before.is_empty() {
        return Err(RegisterError::Invalid(format!(
            "no row holding “{}” waits to be filed under {}",
            like.pattern, like.category
        )));
    }
    let rows = if before.len() == 1 { "row" } else { "rows" };
    let summary = format!(
        "Filed {} {rows} holding “{}” under {}",
        before.len(),
        like.pattern,
        like.category
    );
    record(
        owner,
        conn,
        crate::edits::EditKind::ApplyRule,
        &summary,
        &before,
        &after,
        None,
    )
    .await
}
