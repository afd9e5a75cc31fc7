//! The `confirm` function: a person's decisions on a suspended turn, and the rest of that turn as
//! server-sent events.
//!
//! `POST /api/confirm` `{suspended_turn_id, decisions: [{id, allowed}]}`. The claim is taken before
//! the stream starts, so losing it is a status: `409` while another request holds it, `410` once
//! it is finished or when it never existed for this visitor (another visitor's id included —
//! never `403`, nothing to detect). A write without a decision is declined. Quota kind `resume`:
//! never refused for the message quotas.

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::{sync::Arc, time::Instant};

use axum::{
    Router,
    extract::{Request, State as Shared},
    response::Response,
    routing::post,
};
use chrono::Utc;
use kakeibo_api::{
    ApiError, State,
    request::json_body,
    sse,
    turn_stream::{forward, send_result, spawn_turn},
    visitor,
};
use kakeibo_operator::quota::{self, QuotaKind};
use serde::Deserialize;

/// The most decisions one confirm may carry.
pub const MAX_DECISIONS: usize = 64;

/// The function's routes, unfinished (the local server merges every function's routes).
pub fn routes(state: Arc<State>) -> Router {
    Router::new()
        .route("/api/confirm", post(confirm))
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Decision {
    id: String,
    allowed: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmBody {
    suspended_turn_id: kakeibo_core::SuspendedTurnId,
    decisions: Vec<Decision>,
}

async fn confirm(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let input: ConfirmBody = json_body(body).await?;
    if input.decisions.len() > MAX_DECISIONS {
        return Err(ApiError::BadRequest(format!("at most {MAX_DECISIONS} decisions")));
    }
    let model = state.agent_model()?;
    let resolved = visitor::require(&state, &parts.headers).await?;
    let owner = resolved.visitor.owner();
    let result = async {
        quota::consume(
            owner,
            &state.owner_pool,
            None,
            QuotaKind::Resume,
            &state.config.quotas,
            Utc::now(),
        )
        .await?
        .map_err(ApiError::Refused)?;
        let claim = state.store.claim(owner, input.suspended_turn_id).await?;
        let decisions: Vec<(String, bool)> = input.decisions.into_iter().map(|d| (d.id, d.allowed)).collect();
        // Refused before the stream starts, the turn untouched and unlocked at once: a claim
        // merely dropped unlocks its row only when its connection is next used, so a corrected
        // confirm sent straight after would find it still "in progress".
        if let Err(refused) = claim.check_decisions(&decisions) {
            claim.release().await;
            return Err(refused.into());
        }
        let (events, response) = sse::stream();
        let state = Arc::clone(&state);
        let stream = events.clone();
        spawn_turn(&stream, async move {
            let started = Instant::now();
            let conversation = claim.conversation_id;
            // The turn goes on with the model it ran on (thought signatures are per model).
            let model = state.model_of(owner, conversation, &model).await;
            let result = match state.web_agent(owner, model).await {
                Ok(agent) => agent.resume(claim, &decisions, started, forward(&events)).await,
                Err(e) => {
                    claim.release().await;
                    Err(e)
                }
            };
            send_result(&events, result);
        });
        Ok::<_, ApiError>(response)
    }
    .await;
    Ok(resolved.respond(result))
}
