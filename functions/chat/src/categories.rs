//! The categories, rules and budgets screens: a visitor's own filing of their books — no model, no
//! confirmation card; a merge and a rule given to past rows are recorded edits, reverted through
//! `POST /api/edits/{id}/revert` like the register's (`kakeibo-register`).
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/categories` | `{categories}`: each with its side, whether it is a starting one, and what uses it |
//! | `POST /api/categories` `{name, side}` | the new category (`201`) |
//! | `PATCH /api/categories/{id}` `{name}` | the renamed category; `422` for a starting one |
//! | `POST /api/categories/{id}/merge` `{into}` | the recorded edit |
//! | `GET /api/rules` | `{rules}` in the order they are tried, each with the rows like it |
//! | `POST /api/rules` `{pattern, category, priority?}` | the new rule (`201`) |
//! | `PATCH /api/rules/{id}` `{pattern, category, priority?}` | the changed rule |
//! | `DELETE /api/rules/{id}` | `{deleted}` |
//! | `POST /api/rules/preview` `{pattern, category}` | what filing the past rows like it would do |
//! | `POST /api/rules/apply` `{pattern, category}` | the recorded edit |
//! | `GET /api/budgets?month=YYYY-MM` | the month's spending categories, budget and spent (without `month`, the month of the newest transaction) |
//! | `PUT /api/budgets` `{category_id, month, amount_minor, currency?}` | the budget set |
//! | `DELETE /api/budgets/{id}` | `{deleted}` |
//!
//! An id of another visitor's category, rule or budget is `404`, exactly like one that never existed.

use axum::{http::StatusCode, response::Response};
use kakeibo_api::{
    ApiError,
    request::{IdOf, JsonOf, QueryOf},
};
use kakeibo_register::{
    answers::{CategoryList, Deleted, RuleList},
    budgets::{self, Month},
    categories::{self, Side},
    rules::{self, RuleInput},
};
use serde::Deserialize;
use uuid::Uuid;

use crate::register::Books;

/// Answers `201 Created` in place of a `200`.
fn created(response: Result<Response, ApiError>) -> Result<Response, ApiError> {
    response.map(|mut r| {
        if r.status() == StatusCode::OK {
            *r.status_mut() = StatusCode::CREATED;
        }
        r
    })
}

/// `GET /api/categories`.
pub(crate) async fn list(books: Books) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move {
                Ok(CategoryList {
                    categories: categories::list(owner, conn).await?,
                })
            })
        })
        .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewCategory {
    name: String,
    side: Side,
}

/// `POST /api/categories`.
pub(crate) async fn add(books: Books, JsonOf(input): JsonOf<NewCategory>) -> Result<Response, ApiError> {
    created(
        books
            .run(move |owner, conn| {
                Box::pin(async move { categories::add(owner, conn, &input.name, input.side).await })
            })
            .await,
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rename {
    name: String,
}

/// `PATCH /api/categories/{id}`.
pub(crate) async fn rename(
    books: Books,
    IdOf(category): IdOf,
    JsonOf(input): JsonOf<Rename>,
) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move { categories::rename(owner, conn, category, &input.name).await })
        })
        .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MergeInto {
    into: Uuid,
}

/// `POST /api/categories/{id}/merge`.
pub(crate) async fn merge(
    books: Books,
    IdOf(category): IdOf,
    JsonOf(input): JsonOf<MergeInto>,
) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move { categories::merge(owner, conn, category, input.into).await })
        })
        .await
}

/// `GET /api/rules`.
pub(crate) async fn list_rules(books: Books) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move {
                Ok(RuleList {
                    rules: rules::list(owner, conn).await?,
                })
            })
        })
        .await
}

/// `POST /api/rules`.
pub(crate) async fn add_rule(books: Books, JsonOf(input): JsonOf<RuleInput>) -> Result<Response, ApiError> {
    created(
        books
            .run(move |owner, conn| Box::pin(async move { rules::save(owner, conn, None, &input).await }))
            .await,
    )
}

/// `PATCH /api/rules/{id}`.
pub(crate) async fn change_rule(
    books: Books,
    IdOf(rule): IdOf,
    JsonOf(input): JsonOf<RuleInput>,
) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| Box::pin(async move { rules::save(owner, conn, Some(rule), &input).await }))
        .await
}

/// `DELETE /api/rules/{id}`.
pub(crate) async fn delete_rule(books: Books, IdOf(rule): IdOf) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move {
                Ok(Deleted {
                    deleted: rules::delete(owner, conn, rule).await?,
                })
            })
        })
        .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LikeInput {
    pattern: String,
    category: String,
}

/// `POST /api/rules/preview`: nothing changes.
pub(crate) async fn preview_rule(
    books: Books,
    JsonOf(input): JsonOf<LikeInput>,
) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move { rules::preview(owner, conn, &input.pattern, &input.category).await })
        })
        .await
}

/// `POST /api/rules/apply`.
pub(crate) async fn apply_rule(books: Books, JsonOf(input): JsonOf<LikeInput>) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move { rules::apply(owner, conn, &input.pattern, &input.category).await })
        })
        .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MonthQuery {
    month: Option<String>,
}

/// `GET /api/budgets?month=YYYY-MM`.
pub(crate) async fn month(books: Books, QueryOf(query): QueryOf<MonthQuery>) -> Result<Response, ApiError> {
    let month = query
        .month
        .as_deref()
        .map(Month::parse)
        .transpose()
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    books
        .run(move |owner, conn| {
            Box::pin(async move {
                let month = match month {
                    Some(month) => month,
                    None => budgets::latest(owner, &mut *conn, chrono::Utc::now().date_naive()).await?,
                };
                budgets::month(owner, conn, month).await
            })
        })
        .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetBudget {
    category_id: Uuid,
    month: String,
    amount_minor: i64,
    currency: Option<String>,
}

/// `PUT /api/budgets`.
pub(crate) async fn set_budget(books: Books, JsonOf(input): JsonOf<SetBudget>) -> Result<Response, ApiError> {
    let month = Month::parse(&input.month).map_err(|e| ApiError::Unprocessable(e.to_string()))?;
    books
        .run(move |owner, conn| {
            Box::pin(async move {
                budgets::set(
                    owner,
                    conn,
                    input.category_id,
                    month,
                    input.amount_minor,
                    input.currency.as_deref(),
                )
                .await
            })
        })
        .await
}

/// `DELETE /api/budgets/{id}`.
pub(crate) async fn delete_budget(books: Books, IdOf(budget): IdOf) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move {
                Ok(Deleted {
                    deleted: budgets::delete(owner, conn, budget).await?,
                })
            })
        })
        .await
}
