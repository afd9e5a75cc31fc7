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

use std::{convert::Infallible, sync::Arc};

use axum::{
    Json,
    extract::FromRequestParts,
    http::{HeaderMap, request::Parts},
    response::{IntoResponse, Response},
};
use kakeibo_api::{
    ApiError, State,
    request::{IdOf, JsonOf, QueryOf},
    visitor,
};
use kakeibo_ledger::{OwnerId, seed::ensure_demo_ledger, with_owner};
use kakeibo_register::{RegisterError, Search, Share, answers::EditList, edits, query};
use serde::Deserialize;

pub(crate) fn api_error(e: RegisterError) -> ApiError {
    match e {
        RegisterError::NotFound => ApiError::NotFound,
        RegisterError::Invalid(text) | RegisterError::Refused(text) => ApiError::Unprocessable(text),
        RegisterError::Changed => ApiError::Conflict(RegisterError::Changed.to_string()),
        RegisterError::Ledger(e) => e.into(),
    }
}

/// The visitor's books, for a route that reads or changes them: taken from any request (who the
/// visitor is is asked by [`Books::run`], so a body or a path the route cannot read is refused
/// first, as it always was).
pub(crate) struct Books {
    state: Arc<State>,
    headers: HeaderMap,
}

impl FromRequestParts<Arc<State>> for Books {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<State>) -> Result<Self, Infallible> {
        Ok(Self {
            state: Arc::clone(state),
            headers: parts.headers.clone(),
        })
    }
}

impl Books {
    /// Runs `work` for the visitor in one owner-scoped transaction (the demo ledger made first,
    /// as the chat would), answering its value as JSON.
    pub(crate) async fn run<T, F>(self, work: F) -> Result<Response, ApiError>
    where
        T: serde::Serialize,
        F: for<'c> FnOnce(
                OwnerId,
                &'c mut sqlx::PgConnection,
            ) -> futures_util::future::BoxFuture<'c, Result<T, RegisterError>>
            + Send,
    {
        let state = &self.state;
        let resolved = visitor::require(state, &self.headers).await?;
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
}

/// `GET /api/transactions`.
pub(crate) async fn list(books: Books, QueryOf(search): QueryOf<Search>) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| Box::pin(async move { query::search(owner, conn, &search).await }))
        .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Change {
    category: Option<String>,
    description: Option<String>,
}

/// `PATCH /api/transactions/{id}`: a new category, a new description, or both (two edits).
pub(crate) async fn change(
    books: Books,
    IdOf(transaction): IdOf,
    JsonOf(change): JsonOf<Change>,
) -> Result<Response, ApiError> {
    if change.category.is_none() && change.description.is_none() {
        return Err(ApiError::BadRequest(
            "say what to change: category or description".into(),
        ));
    }
    books
        .run(move |owner, conn| {
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
pub(crate) struct SplitBody {
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
    books: Books,
    IdOf(transaction): IdOf,
    JsonOf(input): JsonOf<SplitBody>,
) -> Result<Response, ApiError> {
    let shares: Vec<Share> = input
        .shares
        .into_iter()
        .map(|s| Share {
            category: s.category,
            amount_minor: s.amount_minor,
        })
        .collect();
    books
        .run(move |owner, conn| {
            Box::pin(async move { edits::split(owner, conn, transaction, &shares).await })
        })
        .await
}

/// `DELETE /api/transactions/{id}`.
pub(crate) async fn delete(books: Books, IdOf(transaction): IdOf) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| Box::pin(async move { edits::delete(owner, conn, transaction).await }))
        .await
}

/// `POST /api/imports/{id}/undo`.
pub(crate) async fn undo_import(books: Books, IdOf(batch): IdOf) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| Box::pin(async move { edits::undo_import(owner, conn, batch).await }))
        .await
}

/// `GET /api/edits`.
pub(crate) async fn list_edits(books: Books) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| {
            Box::pin(async move {
                Ok(EditList {
                    edits: edits::list(owner, conn, 100).await?,
                })
            })
        })
        .await
}

/// `POST /api/edits/{id}/revert`.
pub(crate) async fn revert(books: Books, IdOf(edit): IdOf) -> Result<Response, ApiError> {
    books
        .run(move |owner, conn| Box::pin(async move { edits::revert(owner, conn, edit).await }))
        .await
}
