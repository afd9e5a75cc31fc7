//! The `admin` function: the operator's overview and actions. Every route is `404` unless the
//! visitor is signed in to an operator account (made with `kakeibo operator add`) whose email is
//! on `ADMIN_EMAILS` — the page does not exist for anyone else.
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/admin/overview` | budget, traffic, health, safety, tools, recent runs, users, geography, and `evaluation` `{running, latest: null \| {finishedAt, model, passed, taskCount, complete}}` |
//! | `POST /api/admin/action` `{"action": "pause_live_chat", "paused": bool}` or `{"action": "block_owner", "ownerId": uuid, "blocked": bool}` | `{ok: true}` |
//! | `GET /api/admin/runs/{id}` | any visitor's run with its trace events (the operator's trace page) |
//! | `POST /api/admin/action` `{"action": "run_eval"}` | `202 {ok: true, started}`: an evaluation run starts (its report: `GET /api/evals/latest`); `503` `eval_running` while one runs, `evals_unavailable` where none can be started, `eval_start_failed` when starting fails |

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod evals;

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{Request, State as Shared},
    http::HeaderMap,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use chrono::Utc;
use kakeibo_api::{
    ApiError, State,
    request::{json_body, path_id},
    visitor,
};
use kakeibo_ledger::OwnerId;
use kakeibo_operator::admin::{self, AdminSession, assert_admin};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::evals::StartEval;

/// What the admin routes run with: the shared state, and what starts an evaluation run (none
/// where nothing can: no `EVAL_FUNCTION_NAME`).
#[derive(Debug, Clone)]
pub struct Admin {
    pub state: Arc<State>,
    pub evals: Option<Arc<dyn StartEval>>,
}

/// The function's routes, unfinished (the local server merges every function's routes).
pub fn routes(admin: Admin) -> Router {
    Router::new()
        .route("/api/admin/overview", get(overview))
        .route("/api/admin/action", post(action))
        .route("/api/admin/runs/{id}", get(run_detail))
        .with_state(admin)
}

/// Every route of the function, finished: JSON `404`/`405`, the origin check on writes.
pub fn router(admin: Admin) -> Router {
    let config = admin.state.config.clone();
    kakeibo_api::routes::finish(routes(admin), &config)
}

/// One Lambda request (what `main` runs and tests call).
pub async fn handle(admin: Admin, request: lambda_http::Request) -> Response {
    kakeibo_api::lambda::dispatch(router(admin), request).await
}

/// The operator's session, or `404` for everyone else (no session, an invalid one, anonymous,
/// not on the list).
async fn operator(state: &State, headers: &HeaderMap) -> Result<AdminSession, ApiError> {
    let resolved = visitor::current(state, headers)
        .await
        .map_err(|_| ApiError::NotFound)?;
    let visitor = resolved
        .map(|r| r.visitor)
        .filter(|v| !v.is_anonymous && !v.blocked);
    let operator = visitor.as_ref().is_some_and(|v| v.operator);
    assert_admin(
        visitor.as_ref().and_then(|v| v.email.as_deref()),
        operator,
        &state.config.admins,
    )
    .ok_or(ApiError::NotFound)
}

async fn overview(Shared(admin): Shared<Admin>, request: Request) -> Result<Response, ApiError> {
    let state = admin.state;
    let session = operator(&state, request.headers()).await?;
    let overview = admin::overview(
        &session,
        &state.owner_pool,
        Utc::now(),
        state.config.quotas.global_daily_usd,
    )
    .await?;
    let evaluation = evaluation(&state).await?;
    Ok(Json(AdminOverview { overview, evaluation }).into_response())
}

/// `GET /api/admin/overview`: the operator's panels and the evaluation's.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AdminOverview {
    #[serde(flatten)]
    pub overview: admin::Overview,
    pub evaluation: EvaluationPanel,
}

/// Whether an evaluation runs now, and the newest stored report's headline (`None` before the
/// first).
#[derive(Debug, Serialize, JsonSchema)]
pub struct EvaluationPanel {
    pub running: bool,
    pub latest: Option<EvalHeadline>,
}

/// What the overview says of a report: when it finished, on which model, how many passed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EvalHeadline {
    pub finished_at: chrono::DateTime<Utc>,
    pub model: String,
    pub passed: usize,
    pub task_count: usize,
    pub complete: bool,
}

/// Whether an evaluation runs now, and the newest stored report's headline.
async fn evaluation(state: &State) -> Result<EvaluationPanel, ApiError> {
    let running = kakeibo_evals::suite::running(&state.app)
        .await
        .map_err(|e| ApiError::internal_while("checking for a running evaluation", e))?;
    let latest = kakeibo_evals::store::latest(&state.app)
        .await
        .map_err(|e| ApiError::internal_while("reading the latest evaluation report", e))?;
    let latest = latest.map(|report| EvalHeadline {
        finished_at: report.finished_at,
        model: report.model,
        passed: report.passed,
        task_count: report.task_count,
        complete: report.complete,
    });
    Ok(EvaluationPanel { running, latest })
}

async fn run_detail(
    Shared(admin): Shared<Admin>,
    axum::extract::Path(run): axum::extract::Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let state = admin.state;
    let session = operator(&state, request.headers()).await?;
    let run: kakeibo_core::RunId = path_id(&run)?;
    let detail = admin::run_detail(&session, &state.owner_pool, run)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(detail).into_response())
}

/// `POST /api/admin/action`: what the operator asks for.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Stop (or let again) every visitor's live chat; replies recorded beforehand still play.
    PauseLiveChat { paused: bool },
    /// Keep a visitor from chatting and importing (or let them again).
    BlockOwner { owner_id: Uuid, blocked: bool },
    /// Start an evaluation run now.
    RunEval {},
}

/// The action as done, answered to the page.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ActionDone {
    LiveChat {
        ok: bool,
        paused: bool,
    },
    Owner {
        ok: bool,
        owner_id: Uuid,
        blocked: bool,
    },
    /// `202`: the run started; how, in words.
    Eval {
        ok: bool,
        started: String,
    },
}

async fn action(Shared(admin): Shared<Admin>, request: Request) -> Result<Response, ApiError> {
    let state = admin.state;
    let (parts, body) = request.into_parts();
    let session = operator(&state, &parts.headers).await?;
    let action: Action = json_body(body).await?;
    match action {
        Action::PauseLiveChat { paused } => {
            admin::set_live_chat_paused(&session, &state.owner_pool, paused).await?;
            Ok(Json(ActionDone::LiveChat { ok: true, paused }).into_response())
        }
        Action::BlockOwner { owner_id, blocked } => {
            if !admin::set_blocked(&session, &state.owner_pool, OwnerId::new(owner_id), blocked).await? {
                return Err(ApiError::BadRequest(format!("there is no visitor {owner_id}")));
            }
            Ok(Json(ActionDone::Owner {
                ok: true,
                owner_id,
                blocked,
            })
            .into_response())
        }
        Action::RunEval {} => {
            let Some(evals) = &admin.evals else {
                return Err(ApiError::Unavailable {
                    error: "evaluation runs cannot be started here: EVAL_FUNCTION_NAME is unset".into(),
                    reason: "evals_unavailable",
                });
            };
            // A second start would wait for the first and then run the whole suite again.
            let running = kakeibo_evals::suite::running(&state.app)
                .await
                .map_err(|e| ApiError::internal_while("checking for a running evaluation", e))?;
            if running {
                return Err(ApiError::Unavailable {
                    error: "an evaluation is running now; its report comes when it ends".into(),
                    reason: "eval_running",
                });
            }
            let started = evals
                .start(session.email())
                .await
                .map_err(|why| ApiError::Unavailable {
                    error: format!("the evaluation run did not start: {why}"),
                    reason: "eval_start_failed",
                })?;
            Ok((StatusCode::ACCEPTED, Json(ActionDone::Eval { ok: true, started })).into_response())
        }
    }
}
