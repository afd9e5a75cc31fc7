//! The rows behind a figure: a tool's figure names them with a [`RowRef`] (transaction ids, or a
//! typed query of the owner's postings), and [`fetch`] runs that reference again — for the
//! person who clicks a figure, and for the tests that hold every figure equal to its rows' sum.
//!
//! A query's measures select exactly the postings the tools add up: `spending` what
//! `get_spend_report` totals, `income` what it lists as income, `postings` every posting on the
//! named categories (what `get_budget_status` counts as spent), `balance` the postings on the
//! named accounts that hold money (a balance, a net worth).

use chrono::NaiveDate;
use kakeibo_core::figures::{Measure, RowQuery, RowRef, ToolFigure};
use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use kakeibo_ledger::{Currency, OwnerId, UNCATEGORIZED, with_owner};

use crate::{
    ToolsError,
    common::{Amount, TransactionView, add_minor, view_select},
};

/// The most rows one answer lists; the count and the sum are of all of them.
pub const MAX_ROWS: i64 = 500;

/// One row behind a figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BackingRow {
    pub transaction_id: Uuid,
    pub date: NaiveDate,
    pub description: String,
    /// Where the money was held (checking, a card), or the transaction's category when that is
    /// what the row is (a transaction listed by id).
    pub account: String,
    /// The category or account the counted posting is on.
    pub posted_to: String,
    #[serde(flatten)]
    pub amount: Amount,
}

/// The rows of a figure: at most [`MAX_ROWS`], oldest first; how many there are and their sum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BackingRows {
    pub rows: Vec<BackingRow>,
    /// Every row the reference selects, listed or not.
    pub count: i64,
    /// The sum of every row, in the reference's currency (`None` when it selects none: its
    /// currency is not known).
    pub sum: Option<Amount>,
}

/// A query of `measure` for `from..=to` in `currency`.
pub fn query(
    measure: Measure,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
    currency: Currency,
) -> RowQuery {
    RowQuery {
        measure,
        from: from.map(|d| d.to_string()),
        to: to.map(|d| d.to_string()),
        categories: Vec::new(),
        accounts: Vec::new(),
        currency,
    }
}

/// A figure of `amount` at `pointer`, made of the rows `query` selects.
pub fn queried(label: &str, pointer: String, amount: &Amount, query: RowQuery) -> ToolFigure {
    ToolFigure::new(label, pointer, amount.amount_minor, amount.currency).with_rows(RowRef::Query(query))
}

/// A figure of `amount` at `pointer`, made of the transactions `ids`.
pub fn of_transactions(label: &str, pointer: String, amount: &Amount, ids: Vec<Uuid>) -> ToolFigure {
    ToolFigure::new(label, pointer, amount.amount_minor, amount.currency)
        .with_rows(RowRef::Transactions { ids })
}

/// A figure no ledger row makes (a budget, a remainder).
pub fn unsourced(label: &str, pointer: String, amount: &Amount) -> ToolFigure {
    ToolFigure::new(label, pointer, amount.amount_minor, amount.currency)
}

/// Runs `reference` again for `owner`. Another owner's ids or names select nothing: every query
/// filters by the owner (and row-level security does too, through `app_user`).
pub async fn fetch(owner: OwnerId, pool: &PgPool, reference: &RowRef) -> Result<BackingRows, ToolsError> {
    let reference = reference.clone();
    with_owner(owner, pool, |conn| {
        Box::pin(async move {
            match &reference {
                RowRef::Transactions { ids } => by_ids(owner, conn, ids).await,
                RowRef::Query(q) => by_query(owner, conn, q).await,
            }
        })
    })
    .await
}

async fn by_ids(owner: OwnerId, conn: &mut PgConnection, ids: &[Uuid]) -> Result<BackingRows, ToolsError> {
    const BY_IDS: &str = concat!(view_select!(), " AND t.id = ANY($2) ORDER BY t.date, t.id");
    let ids: Vec<Uuid> = ids
        .iter()
        .copied()
        .take(usize::try_from(MAX_ROWS).unwrap_or(0))
        .collect();
    let views: Vec<TransactionView> = sqlx::query_as(BY_IDS)
        .bind(owner.as_uuid())
        .bind(ids)
        .fetch_all(conn)
        .await?;
    let currency = views.first().map(|v| v.currency);
    // Several currencies cannot make one figure: the sum is of the first's, the others listed.
    let mut sum = 0i64;
    for v in views.iter().filter(|v| Some(v.currency) == currency) {
        sum = add_minor(sum, v.amount_minor, "a figure's rows")?;
    }
    let count = i64::try_from(views.len()).unwrap_or(i64::MAX);
    Ok(BackingRows {
        rows: views
            .into_iter()
            .map(|v| BackingRow {
                transaction_id: v.id,
                date: v.date,
                description: v.description,
                account: v.category.clone(),
                posted_to: v.category,
                amount: Amount::new(v.amount_minor, v.currency),
            })
            .collect(),
        count,
        sum: currency.map(|c| Amount::new(sum, c)),
    })
}

/// The postings a query selects: $1 owner, $2–$3 dates, $4 currency, $5 measure, $6 the
/// categories, $7 the accounts, $8 Uncategorized's name, $9 the most rows.
const BY_QUERY: &str = "
    WITH picked AS (
        SELECT t.id, t.date, t.description, a.name AS posted_to, p.amount_minor
        FROM postings p
        JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
        JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
        WHERE p.owner_id = $1 AND ($2::date IS NULL OR t.date >= $2) AND ($3::date IS NULL OR t.date <= $3)
          AND p.currency = $4
          AND CASE $5
                WHEN 'spending' THEN a.type = 'expense' AND NOT (a.name = $8 AND p.amount_minor < 0)
                WHEN 'income' THEN a.type = 'income' OR (a.name = $8 AND p.amount_minor < 0)
                WHEN 'postings' THEN a.type IN ('expense', 'income')
                ELSE a.type IN ('asset', 'liability') END
          AND (cardinality($6::text[]) = 0 OR a.name = ANY($6))
          AND (cardinality($7::text[]) = 0 OR CASE WHEN $5 = 'balance' THEN a.name = ANY($7)
               ELSE EXISTS (SELECT 1 FROM postings q JOIN accounts qa ON qa.id = q.account_id AND qa.owner_id = q.owner_id
                            WHERE q.owner_id = t.owner_id AND q.transaction_id = t.id AND qa.name = ANY($7)) END)
    )
    SELECT picked.id, picked.date, picked.description, picked.posted_to,
           coalesce((SELECT string_agg(ha.name, ', ' ORDER BY ha.name)
                     FROM postings h JOIN accounts ha ON ha.id = h.account_id AND ha.owner_id = h.owner_id
                     WHERE h.owner_id = $1 AND h.transaction_id = picked.id AND ha.type IN ('asset', 'liability')
                       AND ha.name <> picked.posted_to), '') AS account,
           picked.amount_minor,
           count(*) OVER ()::bigint AS total_count,
           (sum(picked.amount_minor) OVER ())::bigint AS total_sum
    FROM picked
    ORDER BY picked.date, picked.id, picked.posted_to, picked.amount_minor
    LIMIT $9";

/// A row of [`BY_QUERY`].
type QueryRow = (Uuid, NaiveDate, String, String, String, i64, i64, i64);

async fn by_query(owner: OwnerId, conn: &mut PgConnection, q: &RowQuery) -> Result<BackingRows, ToolsError> {
    let date = |text: &Option<String>| -> Result<Option<NaiveDate>, ToolsError> {
        text.as_deref()
            .map(|t| {
                NaiveDate::parse_from_str(t, "%Y-%m-%d")
                    .map_err(|_| ToolsError::BadReference(format!("{t:?} is not a date YYYY-MM-DD")))
            })
            .transpose()
    };
    let (from, to) = (date(&q.from)?, date(&q.to)?);
    let measure = match q.measure {
        Measure::Spending => "spending",
        Measure::Income => "income",
        Measure::Postings => "postings",
        Measure::Balance => "balance",
    };
    let found: Vec<QueryRow> = sqlx::query_as(BY_QUERY)
        .bind(owner.as_uuid())
        .bind(from)
        .bind(to)
        .bind(q.currency.as_str())
        .bind(measure)
        .bind(&q.categories)
        .bind(&q.accounts)
        .bind(UNCATEGORIZED)
        .bind(MAX_ROWS)
        .fetch_all(conn)
        .await?;
    let (count, sum) = found.first().map_or((0, 0), |r| (r.6, r.7));
    Ok(BackingRows {
        rows: found
            .into_iter()
            .map(
                |(id, date, description, posted_to, account, amount, _, _)| BackingRow {
                    transaction_id: id,
                    date,
                    description,
                    account,
                    posted_to,
                    amount: Amount::new(amount, q.currency),
                },
            )
            .collect(),
        count,
        sum: Some(Amount::new(sum, q.currency)),
    })
}
