//! The register: a person's transactions, searched by text, amount, dates, account and category,
//! sorted and paged — each row as a person reads it (what it was, from which account, in which
//! category, how much) with the ids that lead back to its postings and its statement.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use kakeibo_ledger::OwnerId;

use crate::RegisterError;

/// How many rows a page holds at most.
pub const MAX_PER_PAGE: u32 = 200;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortBy {
    #[default]
    Date,
    Amount,
    Description,
}

/// What to look for; every field narrows, none is needed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Search {
    /// Words in the description (as shown or as the statement had it), case-insensitive.
    pub q: Option<String>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    /// An account's exact name (Checking, Credit Card, …).
    pub account: Option<String>,
    /// A category's exact name; "Transfer" for money moved between own accounts.
    pub category: Option<String>,
    /// The amount's size, in minor units, at least / at most (either direction).
    pub min_minor: Option<i64>,
    pub max_minor: Option<i64>,
    /// Only the rows of one import.
    pub import: Option<Uuid>,
    #[serde(default)]
    pub sort: SortBy,
    /// Oldest (or smallest, or A) first; newest first by default.
    #[serde(default)]
    pub ascending: bool,
    /// From 1.
    pub page: Option<u32>,
    pub per_page: Option<u32>,
}

/// What a row is for the household.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, sqlx::Type, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum Kind {
    Spending,
    Income,
    /// Money moved between the person's own accounts: neither spending nor income.
    Transfer,
    /// One side of a transfer, waiting for the other.
    Transit,
    /// Anything else (an opening balance, a conversion).
    Other,
}

/// One category's share of a row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Part {
    pub category: String,
    /// Positive: spent in (or earned from) this category.
    pub amount_minor: i64,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct Row {
    pub id: Uuid,
    pub date: NaiveDate,
    pub description: String,
    /// The text as the statement had it.
    pub raw_description: String,
    /// The person's accounts the money moved in ("Checking", or "Checking → Savings").
    pub account: String,
    /// The category, "Split" for several, none for a transfer.
    pub category: Option<String>,
    #[sqlx(json)]
    pub parts: Vec<Part>,
    /// Signed: what the row did to the person's money (a transfer: the amount moved, positive).
    pub amount_minor: i64,
    pub currency: String,
    pub kind: Kind,
    pub import_batch_id: Option<Uuid>,
    /// The statement it came from.
    pub import_file: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Page {
    pub rows: Vec<Row>,
    /// Rows matching, over every page.
    pub total: i64,
    pub page: u32,
    pub per_page: u32,
    /// The owner's accounts that hold money and their categories, by name: what a search and an
    /// edit may name.
    pub accounts: Vec<String>,
    pub categories: Vec<String>,
}

/// The transactions the search's own columns select (`matching`), those whose figures are worked
/// out (`{pick}`: one page of them, when no filter or sort needs the figures; else all), each
/// one's figures from its postings, then the filters on figures, the count (`{total}`) and the
/// page (`{page}`); `{order}` is the sort.
const REGISTER: &str = "WITH matching AS (
            SELECT t.* FROM transactions t
            WHERE t.owner_id = $1
              AND ($2::date IS NULL OR t.date >= $2) AND ($3::date IS NULL OR t.date <= $3)
              AND ($4::text IS NULL OR t.description ILIKE $4 OR t.raw_description ILIKE $4)
              AND ($5::uuid IS NULL OR t.import_batch_id = $5 OR t.paired_batch_id = $5)
        ), picked AS ({pick}),
        shaped AS (
            SELECT t.id, t.date, t.description, t.raw_description, t.created_at, t.import_batch_id,
                   b.filename AS import_file,
                   coalesce(m.accounts, '') AS account, m.money, m.moved, m.legs, m.transit, m.currency,
                   coalesce(c.parts, '[]'::jsonb) AS parts, c.categories
            FROM picked t
            LEFT JOIN import_batches b ON b.owner_id = t.owner_id AND b.id = t.import_batch_id
            CROSS JOIN LATERAL (
                SELECT string_agg(a.name, ' → ' ORDER BY p.amount_minor, a.name)
                           FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind <> 'transit') AS accounts,
                       coalesce(sum(p.amount_minor) FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind <> 'transit'), 0)::int8 AS money,
                       coalesce(max(p.amount_minor) FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind <> 'transit'), 0)::int8 AS moved,
                       count(*) FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind <> 'transit') AS legs,
                       coalesce(bool_or(a.kind = 'transit'), false) AS transit,
                       min(p.currency)::text AS currency
                FROM postings p JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
                WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id
            ) m
            CROSS JOIN LATERAL (
                SELECT jsonb_agg(jsonb_build_object('category', a.name, 'amount_minor', p.amount_minor)
                                 ORDER BY abs(p.amount_minor) DESC, a.name) AS parts,
                       count(*) AS categories
                FROM postings p JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
                WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id AND a.type IN ('expense', 'income')
            ) c
        ), rows AS (
            SELECT *,
                   CASE WHEN legs >= 2 THEN moved ELSE money END AS amount_minor,
                   CASE WHEN legs >= 2 THEN 'transfer'
                        WHEN transit THEN 'transit'
                        WHEN categories = 0 THEN 'other'
                        WHEN money < 0 THEN 'spending' ELSE 'income' END AS kind,
                   CASE WHEN categories = 0 THEN NULL
                        WHEN categories = 1 THEN parts->0->>'category'
                        ELSE 'Split' END AS category
            FROM shaped
        ), hits AS (
            SELECT * FROM rows
            WHERE ($6::text IS NULL OR account = $6 OR account LIKE $6 || ' → %' OR account LIKE '% → ' || $6)
              AND ($7::text IS NULL
                   OR ($7 = 'Transfer' AND kind IN ('transfer', 'transit'))
                   OR parts @> jsonb_build_array(jsonb_build_object('category', $7::text)))
              AND ($8::int8 IS NULL OR abs(amount_minor) >= $8) AND ($9::int8 IS NULL OR abs(amount_minor) <= $9)
        )
        SELECT id, date, description, raw_description, account, category,
               (SELECT coalesce(jsonb_agg(jsonb_build_object('category', e->>'category',
                                 'amount_minor', CASE WHEN h.money < 0 THEN (e->>'amount_minor')::int8
                                                      ELSE -(e->>'amount_minor')::int8 END)), '[]')
                FROM jsonb_array_elements(h.parts) e) AS parts,
               amount_minor, coalesce(currency, '') AS currency, kind, import_batch_id, import_file,
               {total} AS total
        FROM hits h ORDER BY {order} {page}";

/// One page of `owner`'s register.
pub async fn search(owner: OwnerId, conn: &mut PgConnection, search: &Search) -> Result<Page, RegisterError> {
    if let (Some(from), Some(to)) = (search.from, search.to)
        && to < from
    {
        return Err(RegisterError::Invalid(format!(
            "the period ends ({to}) before it starts ({from})"
        )));
    }
    if let (Some(min), Some(max)) = (search.min_minor, search.max_minor)
        && max < min
    {
        return Err(RegisterError::Invalid(
            "the largest amount is below the smallest".into(),
        ));
    }
    let per_page = search.per_page.unwrap_or(50).clamp(1, MAX_PER_PAGE);
    let page = search.page.unwrap_or(1).max(1);
    let offset = i64::from(page.saturating_sub(1)) * i64::from(per_page);
    let text = search
        .q
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .map(|q| {
            format!(
                "%{}%",
                q.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
            )
        });
    let order = match (search.sort, search.ascending) {
        (SortBy::Date, false) => "date DESC, created_at DESC, id",
        (SortBy::Date, true) => "date, created_at, id",
        (SortBy::Amount, false) => "abs(amount_minor) DESC, date DESC, id",
        (SortBy::Amount, true) => "abs(amount_minor), date DESC, id",
        (SortBy::Description, false) => "lower(description) DESC, date DESC, id",
        (SortBy::Description, true) => "lower(description), date DESC, id",
    };
    // Without a filter or a sort on figures, the page is chosen first and only its rows are
    // worked out (a ledger of 10,000 rows reads its first page as fast as one of 100).
    let on_figures = search.account.is_some()
        || search.category.is_some()
        || search.min_minor.is_some()
        || search.max_minor.is_some()
        || search.sort == SortBy::Amount;
    let sql = if on_figures {
        REGISTER
            .replace("{pick}", "SELECT * FROM matching")
            .replace("{total}", "count(*) OVER ()")
            .replace("{page}", "LIMIT $10 OFFSET $11")
    } else {
        REGISTER
            .replace(
                "{pick}",
                "SELECT * FROM matching ORDER BY {order} LIMIT $10 OFFSET $11",
            )
            .replace("{total}", "(SELECT count(*) FROM matching)")
            .replace("{page}", "")
    }
    .replace("{order}", order);
    let rows: Vec<(Row, i64)> = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(owner.as_uuid())
        .bind(search.from)
        .bind(search.to)
        .bind(text)
        .bind(search.import)
        .bind(search.account.as_deref().map(str::trim).filter(|a| !a.is_empty()))
        .bind(
            search
                .category
                .as_deref()
                .map(str::trim)
                .filter(|c| !c.is_empty()),
        )
        .bind(search.min_minor)
        .bind(search.max_minor)
        .bind(i64::from(per_page))
        .bind(offset)
        .try_map(|row: sqlx::postgres::PgRow| {
            use sqlx::{FromRow, Row as _};
            Ok((Row::from_row(&row)?, row.try_get::<i64, _>("total")?))
        })
        .fetch_all(&mut *conn)
        .await?;
    let total = match rows.first() {
        Some((_, total)) => *total,
        // Past the last page the window is empty: count on their own.
        None if page > 1 => count(owner, conn, search).await?,
        None => 0,
    };
    let names: Vec<(String, bool)> = sqlx::query_as(
        "SELECT name, type IN ('expense', 'income') FROM accounts
         WHERE owner_id = $1 AND type IN ('asset', 'liability', 'expense', 'income')
           AND kind IS DISTINCT FROM 'transit'
         ORDER BY name",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?;
    let (categories, accounts): (Vec<_>, Vec<_>) = names.into_iter().partition(|(_, category)| *category);
    Ok(Page {
        rows: rows.into_iter().map(|(row, _)| row).collect(),
        total,
        page,
        per_page,
        accounts: accounts.into_iter().map(|(name, _)| name).collect(),
        categories: categories.into_iter().map(|(name, _)| name).collect(),
    })
}

/// How many rows match, for a page past the end.
async fn count(owner: OwnerId, conn: &mut PgConnection, search: &Search) -> Result<i64, RegisterError> {
    let first = Search {
        page: Some(1),
        per_page: Some(1),
        ..search.clone()
    };
    Ok(Box::pin(self::search(owner, conn, &first)).await?.total)
}
