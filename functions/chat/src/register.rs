//! The register: a visitor's transactions to search, and their own edits to them — no model, no
//! confirmation card (a person's edit of their own books is their decision), each edit recorded
//! and reversible (`kakeibo-register`).
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/transactions?q&from&to&account&category&min_minor&max_minor&import&sort&ascending&page&per_page` | `{rows, total, page, per_page}`: one page of the register |
//! | `PATCH /api/transactions/{id}` `{category?, description?}` | the recorded edit(s) |
//! | `POST /api/transactions/{id}/split` `{shares: [{category, amount_minor}]}` | the recorded edit; `422` when the shares do not add up |
//! | `DELETE /api/transactions/{id}` | the recorded edit (the row can be put back) |
//! | `POST /api/imports/{id}/undo` | the recorded edit: the import's rows gone, its transfers back in transit |
//! | `GET /api/edits` | `{edits}`: the visitor's edits, newest first |
//! | `POST /api/edits/{id}/revert` | the recorded revert; `409` when the rows changed since |
//!
//! An id of another visitor's row is `404`, exactly like one that never existed.

use std::sync::Arc;

use axum::{
    Json,
    extract::{Path, Request, State as Shared},
    response::{IntoResponse, Response},
};
use kakeibo_api::{ApiError, State, request::QueryOf, request::json_body, visitor};
use kakeibo_ledger::{OwnerId, seed::ensure_demo_ledger, with_owner};
use kakeibo_register::{RegisterError, Search, Share, answers::EditList, edits, query};
use serde::Deserialize;
use uuid::Uuid;

pub(crate) fn api_error(e: RegisterError) -> ApiError {
    match e {
        RegisterError::NotFound => ApiError::NotFound,
        RegisterError::Invalid(text) | RegisterError::Refused(text) => ApiError::Unprocessable(text),
        RegisterError::Changed => ApiError::Conflict(RegisterError::Changed.to_string()),
        RegisterError::Ledger(e) => e.into(),
    }
}

pub(crate) fn id(text: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text).map_err(|_| ApiError::NotFound)
}

/// Runs `work` for the visitor in one owner-scoped transaction (the demo ledger made first, as
/// the chat would), answering its value as JSON.
pub(crate) async fn run<T, F>(
    state: &Arc<State>,
    headers: &axum::http::HeaderMap,
    work: F,
) -> Result<Response, ApiError>
where
    T: serde::Serialize,
    F: for<'c> FnOnce(
            OwnerId,
            &'c mut sqlx::PgConnection,
        ) -> futures_util::future::BoxFuture<'c, Result<T, RegisterError>>
        + Send,
{
    let resolved = visitor::require(state, headers).await?;
    let owner = resolved.visitor.owner();
    let result = async {
        if !resolved.visitor.demo_cloned {
            ensure_demo_ledger(owner, &state.app).await?;
        }
        let value = with_owner(owner, &state.app, move |conn| work(owner, conn))
            .await
            .map_err(api_error)?;
        Ok(Json(value).into_response())
    }
    .await;
    Ok(resolved.respond(result))
}

/// `GET /api/transactions`.
pub(crate) async fn list(
    Shared(state): Shared<Arc<State>>,
    QueryOf(search): QueryOf<Search>,
    request: Request,
) -> Result<Response, ApiError> {
    run(&state, request.headers(), move |owner, conn| {
        Box::pin(async move { query::search(owner, conn, &search).await })
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    category: Option<String>,
    description: Option<String>,
}

/// `PATCH /api/transactions/{id}`: a new category, a new description, or both (two edits).
pub(crate) async fn change(
    Shared(state): Shared<Arc<State>>,
    Path(transaction): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let transaction = id(&transaction)?;
    let change: Change = json_body(body).await?;
    if change.category.is_none() && change.description.is_none() {
        return Err(ApiError::BadRequest(
            "say what to change: category or description".into(),
        ));
    }
    run(&state, &parts.headers, move |owner, conn| {
        Box::pin(async move {
            let mut made = Vec::new();
            if let Some(category) = &change.category {
                made.push(edits::recategorize(owner, &mut *conn, transaction, category).await?);
            }
            if let Some(description) = &change.description {
                made.push(edits::describe(owner, &mut *conn, transaction, description).await?);
            }
            Ok(EditList { edits: made })
        })
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SplitBody {
    shares: Vec<ShareBody>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShareBody {
    category: String,
    amount_minor: i64,
}

/// `POST /api/transactions/{id}/split`.
pub(crate) async fn split(
    Shared(state): Shared<Arc<State>>,
    Path(transaction): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let transaction = id(&transaction)?;
    let input: SplitBody = json_body(body).await?;
    let shares: Vec<Share> = input
        .shares
        .into_iter()
        .map(|s| Share {
            category: s.category,
            amount_minor: s.amount_minor,
        })
        .collect();
    run(&state, &parts.headers, move |owner, conn| {
        Box::pin(async move { edits::split(owner, conn, transaction, &shares).await })
    })
    .await
}

/// `DELETE /api/transactions/{id}`.
pub(crate) async fn delete(
    Shared(state): Shared<Arc<State>>,
    Path(transaction): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let transaction = id(&transaction)?;
    run(&state, request.headers(), move |owner, conn| {
        Box::pin(async move { edits::delete(owner, conn, transaction).await })
    })
    .await
}

/// `POST /api/imports/{id}/undo`.
pub(crate) async fn undo_import(
    Shared(state): Shared<Arc<State>>,
    Path(batch): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let batch = id(&batch)?;
    run(&state, request.headers(), move |owner, conn| {
        Box::pin(async move { edits::undo_import(owner, conn, batch).await })
    })
    .await
}

/// `GET /api/edits`.
pub(crate) async fn list_edits(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    run(&state, request.headers(), move |owner, conn| {
        Box::pin(async move {
            Ok(EditList {
                edits: edits::list(owner, conn, 100).await?,
            })
        })
    })
    .await
}

/// `POST /api/edits/{id}/revert`.
pub(crate) async fn revert(
    Shared(state): Shared<Arc<State>>,
    Path(edit): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let edit = id(&edit)?;
    run(&state, request.headers(), move |owner, conn| {
        Box::pin(async move { edits::revert(owner, conn, edit).await })
    })
    .await
}
