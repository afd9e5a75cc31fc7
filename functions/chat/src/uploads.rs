//! Statement uploads: stored, the sample kept, listed, deleted, and previewed by the importer.

use std::sync::Arc;

use axum::{
    Json,
    extract::{Request, State as Shared},
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use chrono::Utc;
use kakeibo_api::{
    ApiError, State,
    request::{QueryOf, optional_json_body, path_id, read_body},
    visitor,
};
use kakeibo_ledger::{import::ImportError, seed::ensure_demo_ledger};
use kakeibo_operator::{
    quota::{self},
    uploads::{self, MAX_UPLOAD_BYTES, list_uploads as uploads_of, save_upload},
};
use kakeibo_tools::{CurrencyCode, PreviewChoices, Scope, ToolsError, preview_upload as import_preview};
use serde::Deserialize;
use uuid::Uuid;

use crate::{answers::Gone, chat::address_key, session::until_midnight_utc};

#[derive(Debug, Deserialize)]
pub(crate) struct UploadQuery {
    filename: Option<String>,
}

pub(crate) async fn upload(
    Shared(state): Shared<Arc<State>>,
    QueryOf(query): QueryOf<UploadQuery>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let filename = query.filename.ok_or_else(|| {
        ApiError::BadRequest("name the file: POST /api/uploads?filename=statement.csv".into())
    })?;
    // Uploading needs a visit already started (by a chat message or signing in), so files
    // cannot be stored without any other limit applying, and one that passed the bot check.
    let token = visitor::bot_check_token(&parts.headers, None);
    let resolved = visitor::require_checked(&state, &parts.headers, token).await?;
    let result = async {
        let bytes = read_body(body, MAX_UPLOAD_BYTES).await?;
        if bytes.is_empty() {
            return Err(ApiError::BadRequest("the file is empty".into()));
        }
        let content_type = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let kept = save_upload(
            resolved.visitor.owner(),
            &state.app,
            &filename,
            content_type,
            &bytes,
            false,
        )
        .await?;
        Ok(kept_response(kept))
    }
    .await;
    Ok(resolved.respond(result))
}

/// The statement the site ships for trying the importer (the web app serves the same file).
const SAMPLE_STATEMENT: &[u8] = include_bytes!("../../../web/public/sample-statement.csv");

/// Keeps the shipped sample statement for the visitor, as an upload that counts against no
/// limit (kept once: trying it again is the same upload).
pub(crate) async fn upload_sample(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let token = visitor::bot_check_token(request.headers(), None);
    let resolved = visitor::require_checked(&state, request.headers(), token).await?;
    let result = async {
        let kept = save_upload(
            resolved.visitor.owner(),
            &state.app,
            "sample-statement.csv",
            Some("text/csv"),
            SAMPLE_STATEMENT,
            true,
        )
        .await?;
        Ok(kept_response(kept))
    }
    .await;
    Ok(resolved.respond(result))
}

/// `201` with a new upload, `200` with the one that already held the same bytes.
pub(crate) fn kept_response(kept: uploads::Kept) -> Response {
    let status = if kept.reused {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    (status, Json(kept)).into_response()
}

pub(crate) async fn list_uploads(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let uploads = uploads_of(resolved.visitor.owner(), &state.app).await?;
    Ok(resolved.respond(Ok(Json(uploads::UploadList { uploads }).into_response())))
}

pub(crate) async fn delete_upload(
    Shared(state): Shared<Arc<State>>,
    axum::extract::Path(id): axum::extract::Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let id: Uuid = path_id(&id)?;
    if !uploads::delete_upload(resolved.visitor.owner(), &state.app, id).await? {
        return Err(ApiError::NotFound);
    }
    Ok(resolved.respond(Ok(Json(Gone { deleted: true }).into_response())))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PreviewBody {
    /// The account to import into (default "Checking"), created when missing.
    #[serde(default)]
    account: Option<String>,
    /// The kind of a new account: checking, savings, card, cash or loan.
    #[serde(default)]
    kind: Option<kakeibo_ledger::AccountKind>,
    /// The currency of amounts that name none (without one, the plan takes the account's or asks).
    #[serde(default)]
    currency: Option<CurrencyCode>,
    /// Rows the balance column refuses, taken in at the figure the visitor chose.
    #[serde(default)]
    figures: Vec<TakenLine>,
    /// Which statement of a file that holds several (1-based).
    #[serde(default)]
    statement: Option<usize>,
}

/// One refused row of a preview, and the figure to take it in at.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TakenLine {
    line: usize,
    take: kakeibo_ledger::import::Figure,
}

/// The most refused rows one preview may take in on the visitor's word (a statement's refusals
/// are listed fifty at a time).
const MAX_TAKEN: usize = 500;

/// The importer's preview of one of the visitor's uploads, without the model: the import tool's
/// dry run (a plan stored for the later commit through the model and the confirm card). Nothing
/// enters the ledger. Each preview counts against the visitor's and the address's daily preview
/// quotas (`429` past them); one of a visitor's runs at a time (`409` while one does); the same
/// statement with the same options reuses its plan while the ledger has not changed; a visitor
/// keeps at most a few plans (the oldest are dropped).
pub(crate) async fn preview_upload(
    Shared(state): Shared<Arc<State>>,
    axum::extract::Path(id): axum::extract::Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let token = visitor::bot_check_token(&parts.headers, None);
    let resolved = visitor::require_checked(&state, &parts.headers, token).await?;
    let result = async {
        let id: Uuid = path_id(&id)?;
        let input: PreviewBody = optional_json_body(body).await?;
        let owner = resolved.visitor.owner();
        let now = Utc::now();
        quota::admit_preview(
            owner,
            !resolved.visitor.is_anonymous,
            &state.owner_pool,
            &address_key(&state, &parts),
            &state.config.quotas,
            now,
        )
        .await?
        .map_err(|refusal| ApiError::TooManyRequests {
            message: refusal.message(),
            retry_after_secs: until_midnight_utc(now),
        })?;
        // The plan is made against the ledger the visitor's chat will see.
        if !resolved.visitor.demo_cloned {
            ensure_demo_ledger(owner, &state.app).await?;
        }
        if input.figures.len() > MAX_TAKEN {
            return Err(ApiError::Unprocessable(format!(
                "at most {MAX_TAKEN} rows can be taken in at a chosen figure in one preview"
            )));
        }
        let choices = PreviewChoices {
            account: input.account.filter(|a| !a.trim().is_empty()),
            kind: input.kind,
            currency: input.currency,
            figures: input.figures.iter().map(|t| (t.line, t.take)).collect(),
            statement: input.statement,
        };
        let scope = Scope::new(owner, state.app.clone());
        let preview = match import_preview(&scope, id, choices).await {
            Ok(Some(preview)) => preview,
            Ok(None) => return Err(ApiError::NotFound),
            Err(busy @ ToolsError::PreviewBusy) => return Err(ApiError::Conflict(busy.to_string())),
            Err(ToolsError::Unreadable {
                filename,
                source: ImportError::SeveralStatements { statements },
            }) => {
                return Err(ApiError::SeveralStatements {
                    message: format!(
                        "{filename} holds {} statements (accounts): choose the one to read; each is imported on its own",
                        statements.len()
                    ),
                    statements,
                });
            }
            Err(refused) if refused.is_refusal() => return Err(ApiError::Unprocessable(refused.to_string())),
            Err(other) => return Err(other.into()),
        };
        Ok(Json(preview).into_response())
    }
    .await;
    Ok(resolved.respond(result))
}
