//! The `runs` function: the read side of one visitor's data. Every answer is owner-scoped; an id
//! of another visitor's row is `404`, exactly like an id that never existed.
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/runs?limit=N` | the visitor's runs, newest first |
//! | `GET /api/runs/{id}` | one run with its trace events in `seq` order |
//! | `GET /api/runs/{id}/figures/{n}` | figure `n` of the run's answer as checked, with the rows behind each tool figure it was found in, fetched again |
//! | `GET /api/dashboard?month=YYYY-MM` | spend by category and month, budgets, recurring, anomalies, the month's transactions and the months there are (default month: the latest) |
//! | `GET /api/conversations` | the visitor's conversations |
//! | `GET /api/conversations/{id}` | one conversation with its messages |
//! | `GET /api/evals/latest` | the newest evaluation report (no visitor's data: anyone may read it) |
//! | `GET /api/tools` | `{tools: [{name, tier, description}]}`: the agent's tools in registry order (anyone) |
//! | `GET /api/export` | the visitor's whole data as a zip (`kakeibo.journal`, `kakeibo.beancount`, `kakeibo.csv`, `kakeibo.json`), counted against the daily export quota |

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{Path, Request, State as Shared},
    response::{IntoResponse, Response},
    routing::get,
};
use kakeibo_agent::{conversations, runs};
use kakeibo_api::{
    ApiError, State,
    error::ErrorBody,
    request::{QueryOf, path_id},
    visitor,
};
use kakeibo_ledger::seed::ensure_demo_ledger;
use kakeibo_tools::dashboard;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The function's routes, unfinished (the local server merges every function's routes).
pub fn routes(state: Arc<State>) -> Router {
    Router::new()
        .route("/api/runs", get(list_runs))
        .route("/api/runs/{id}", get(run_detail))
        .route("/api/runs/{id}/figures/{n}", get(figure_rows))
        .route("/api/dashboard", get(dashboard))
        .route("/api/conversations", get(list_conversations))
        .route("/api/conversations/{id}", get(conversation))
        .route("/api/evals/latest", get(latest_evaluation))
        .route("/api/tools", get(list_tools))
        .route("/api/export", get(export))
        .with_state(state)
}

/// Every route of the function, finished: JSON `404`/`405`, the origin check on writes.
pub fn router(state: Arc<State>) -> Router {
    kakeibo_api::routes::function(state, routes)
}

/// One Lambda request (what `main` runs and tests call).
pub async fn handle(state: Arc<State>, request: lambda_http::Request) -> Response {
    kakeibo_api::lambda::dispatch(router(state), request).await
}

/// `value` as JSON, with the renewed session cookie when there is one.
fn answer(resolved: &visitor::Resolved, value: impl Serialize) -> Response {
    resolved.respond(Ok(Json(value).into_response()))
}

/// `GET /api/runs`: the visitor's runs, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunList {
    pub runs: Vec<runs::RunSummary>,
}

/// `GET /api/tools`: every tool the agent has.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolList {
    pub tools: Vec<kakeibo_tools::ToolInfo>,
}

/// `GET /api/conversations`: the visitor's conversations, most recently updated first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ConversationList {
    pub conversations: Vec<conversations::ConversationSummary>,
}

/// A path id (a run's or a conversation's); anything that does not parse cannot name a row, so
/// it is `404` too.
#[derive(Debug, Deserialize)]
struct Limit {
    limit: Option<i64>,
}

async fn list_runs(
    Shared(state): Shared<Arc<State>>,
    QueryOf(query): QueryOf<Limit>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let runs = runs::list_runs(resolved.visitor.owner(), &state.app, query.limit.unwrap_or(100)).await?;
    Ok(answer(&resolved, RunList { runs }))
}

async fn run_detail(
    Shared(state): Shared<Arc<State>>,
    Path(run): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let detail = runs::run_detail(resolved.visitor.owner(), &state.app, path_id(&run)?)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(answer(&resolved, detail))
}

/// The rows behind a figure: the reference stored with the run's trace, run again for the
/// visitor. A run, or a figure, the visitor does not have is `404`.
async fn figure_rows(
    Shared(state): Shared<Arc<State>>,
    Path((run, n)): Path<(String, String)>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let n: usize = n.parse().map_err(|_| ApiError::NotFound)?;
    let found = runs::figure_rows(resolved.visitor.owner(), &state.app, path_id(&run)?, n)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(answer(&resolved, found))
}

#[derive(Debug, Deserialize)]
struct DashboardQuery {
    month: Option<String>,
}

async fn dashboard(
    Shared(state): Shared<Arc<State>>,
    QueryOf(query): QueryOf<DashboardQuery>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let owner = resolved.visitor.owner();
    let result = async {
        if let Some(month) = &query.month {
            dashboard::parse_month(month)?;
        }
        if !resolved.visitor.demo_cloned {
            ensure_demo_ledger(owner, &state.app).await?;
        }
        let value = dashboard::dashboard(owner, &state.app, query.month.as_deref()).await?;
        Ok(Json(value).into_response())
    }
    .await;
    Ok(resolved.respond(result))
}

/// The largest zip the site sends: a Lambda answer is at most 6 MB, and a binary body travels as
/// base64 (a third more).
pub const MAX_EXPORT_BYTES: usize = 4 * 1024 * 1024;

/// "Download my data": the visitor's whole ledger and everything else of theirs as a zip of the
/// four export files, from one snapshot, written into the archive as the rows stream from the
/// database. Counted against the daily export quota (`429` past it); the same zip for the ledger
/// the pages show (the demo ledger is cloned first, as for the dashboard).
async fn export(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let owner = resolved.visitor.owner();
    let result = async {
        let now = chrono::Utc::now();
        kakeibo_operator::quota::admit_export(owner, &state.owner_pool, &state.config.quotas, now)
            .await?
            .map_err(|limit| ApiError::TooManyRequests {
                message: format!(
                    "you have downloaded your data {limit} times today, the most a day; downloads renew at midnight UTC"
                ),
                retry_after_secs: seconds_to_midnight(now),
            })?;
        if !resolved.visitor.demo_cloned {
            ensure_demo_ledger(owner, &state.app).await?;
        }
        let zip = kakeibo_export::zip(owner, &state.app, std::io::Cursor::new(Vec::new()))
            .await
            .map_err(|e| ApiError::Internal(Box::new(e)))?
            .into_inner();
        if zip.len() > MAX_EXPORT_BYTES {
            return Err(ApiError::Unprocessable(format!(
                "your data is {:.1} MiB compressed, more than the {} MiB the website can send in one download; \
                 the kakeibo command exports a ledger of any size (kakeibo export --format json)",
                size_mib(zip.len()),
                MAX_EXPORT_BYTES / (1024 * 1024)
            )));
        }
        let filename = format!("kakeibo-{}.zip", now.format("%Y-%m-%d"));
        Ok((
            [
                (axum::http::header::CONTENT_TYPE, "application/zip".to_owned()),
                (
                    axum::http::header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{filename}\""),
                ),
                (axum::http::header::CACHE_CONTROL, "no-store".to_owned()),
            ],
            zip,
        )
            .into_response())
    }
    .await;
    Ok(resolved.respond(result))
}

#[allow(clippy::cast_precision_loss)]
fn size_mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Whole seconds to the next midnight UTC, when daily quotas renew (at least one).
fn seconds_to_midnight(now: chrono::DateTime<chrono::Utc>) -> i64 {
    now.date_naive()
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map_or(1, |m| (m.and_utc() - now).num_seconds().max(1))
}

/// The agent's tools, from the real registry: no visitor's data, so no session needed.
async fn list_tools(Shared(state): Shared<Arc<State>>) -> Response {
    Json(ToolList {
        tools: kakeibo_tools::catalogue(&state.app),
    })
    .into_response()
}

async fn list_conversations(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let conversations = conversations::list_conversations(resolved.visitor.owner(), &state.app).await?;
    Ok(answer(&resolved, ConversationList { conversations }))
}

async fn conversation(
    Shared(state): Shared<Arc<State>>,
    Path(conversation): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let found = conversations::conversation(resolved.visitor.owner(), &state.app, path_id(&conversation)?)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(answer(&resolved, found))
}

/// The newest evaluation report as stored; `404` with a reason before the first run.
async fn latest_evaluation(Shared(state): Shared<Arc<State>>) -> Result<Response, ApiError> {
    match kakeibo_evals::store::latest(&state.app).await {
        Ok(Some(report)) => Ok(Json(report).into_response()),
        Ok(None) => Ok((
            axum::http::StatusCode::NOT_FOUND,
            Json(ErrorBody::new(
                "no evaluation has run yet: the eval function runs nightly, an operator can start one from /admin, and `kakeibo-evals` runs one locally",
                None,
            )),
        )
            .into_response()),
        Err(e) => Err(ApiError::internal_while("reading the latest evaluation report", e)),
    }
}
