//! What a visitor says of their own books, without the model:
//!
//! | route | answer |
//! |---|---|
//! | `POST /api/session/home-currency` `{currency}` | `{home_currency}`: the currency new accounts and budgets take; accounts that hold money keep theirs |
//! | `POST /api/uploads/plans/{plan}/answers` `{answers: [{line, candidate}]}` | the preview again, each answered row saying what it becomes; the commit (through the model and its confirm card) pairs those rows so; `422` for a line that asks nothing |
//!
//! Neither changes a figure: the home currency moves no money, and an answer only decides what a
//! later, confirmed import does.

use std::{collections::BTreeMap, sync::Arc};

use axum::{
    Json,
    extract::{Path, Request, State as Shared},
    response::{IntoResponse, Response},
};
use kakeibo_api::{
    ApiError, State,
    request::{json_body, path_id},
    visitor,
};
use kakeibo_ledger::seed::ensure_demo_ledger;
use kakeibo_tools::{CurrencyCode, Scope, answer_transfers};
use serde::Deserialize;
use uuid::Uuid;

use crate::answers::HomeCurrency;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HomeCurrencyBody {
    currency: CurrencyCode,
}

/// `POST /api/session/home-currency`.
pub(crate) async fn set_home_currency(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let resolved = visitor::require(&state, &parts.headers).await?;
    let result = async {
        let input: HomeCurrencyBody = json_body(body).await?;
        let owner = resolved.visitor.owner();
        // The visitor's ledger exists before it is given a currency (the demo ledger's is INR).
        if !resolved.visitor.demo_cloned {
            ensure_demo_ledger(owner, &state.app).await?;
        }
        let currency = input.currency.currency();
        kakeibo_ledger::with_owner(owner, &state.app, move |conn| {
            Box::pin(async move { kakeibo_ledger::set_home_currency(owner, conn, currency).await })
        })
        .await?;
        Ok(Json(HomeCurrency {
            home_currency: currency,
        })
        .into_response())
    }
    .await;
    Ok(resolved.respond(result))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    /// The row's line in its statement.
    line: usize,
    /// Which of the row's candidates (from 0, as the preview lists them) it is one transfer with.
    candidate: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswersBody {
    answers: Vec<Answer>,
}

/// `POST /api/uploads/plans/{plan}/answers`.
pub(crate) async fn answer_plan(
    Shared(state): Shared<Arc<State>>,
    Path(plan): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let resolved = visitor::require(&state, &parts.headers).await?;
    let result = async {
        let plan: Uuid = path_id(&plan)?;
        let input: AnswersBody = json_body(body).await?;
        let answers: BTreeMap<usize, usize> =
            input.answers.into_iter().map(|a| (a.line, a.candidate)).collect();
        let scope = Scope::new(resolved.visitor.owner(), state.app.clone());
        match answer_transfers(&scope, plan, answers).await {
            Ok(preview) => Ok(Json(preview).into_response()),
            Err(kakeibo_tools::ToolsError::Ledger(kakeibo_ledger::LedgerError::NoPlan(_))) => {
                Err(ApiError::NotFound)
            }
            Err(refused) if refused.is_refusal() => Err(ApiError::Unprocessable(refused.to_string())),
            Err(other) => Err(other.into()),
        }
    }
    .await;
    Ok(resolved.respond(result))
}
