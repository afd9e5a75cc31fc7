//! kakeibo-dev: the local stack's one port. Every function's routes, the same handlers the
//! Lambda binaries run (without the Lambda runtime), and the built web app (`web/dist`) for
//! everything outside `/api/`.

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::{
    net::SocketAddr,
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use axum::{
    Router,
    extract::{ConnectInfo, Request},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use futures_util::future::BoxFuture;
use kakeibo_admin::{Admin, evals::StartEval};
use kakeibo_api::{ApiError, ClientAddress, State};
use kakeibo_evals::launch::{Trigger, models, run_built_in};
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

/// All routes of all functions, plus the web app from `web_dist` when it exists.
pub fn app(state: Arc<State>, web_dist: Option<&Path>) -> Router {
    let config = state.config.clone();
    let api = Router::new()
        .merge(kakeibo_chat::routes(Arc::clone(&state)))
        .merge(kakeibo_confirm::routes(Arc::clone(&state)))
        .merge(kakeibo_runs::routes(Arc::clone(&state)))
        .merge(kakeibo_admin::routes(Admin {
            evals: Some(Arc::new(InProcessEvals::new(Arc::clone(&state)))),
            state,
        }));
    let web = web_dist
        .filter(|dir| dir.join("index.html").is_file())
        .map(|dir| {
            // Client routes (`/chat`, `/runs/…`) are the app's: unknown files fall back to index.html.
            ServeDir::new(dir).fallback(ServeFile::new(dir.join("index.html")))
        });
    let api = api.fallback(move |request: Request| {
        let web = web.clone();
        async move {
            match web {
                Some(web) if !request.uri().path().starts_with("/api/") => match web.oneshot(request).await {
                    Ok(response) => response.into_response(),
                    Err(never) => match never {},
                },
                None if !request.uri().path().starts_with("/api/") => (
                    axum::http::StatusCode::NOT_FOUND,
                    axum::Json(serde_json::json!({
                        "error": "the web app is not built (no web/dist/index.html); the API is under /api/"
                    })),
                )
                    .into_response(),
                _ => ApiError::NotFound.into_response(),
            }
        }
    });
    kakeibo_api::routes::guard(api, &config).layer(middleware::from_fn(client_address))
}

/// Puts the socket's peer address on the request, as the Lambda adapter puts the gateway's, and
/// serves it in a `request` span as the Lambda adapter does (with an id of this process's own in
/// place of Lambda's request id; never the address).
async fn client_address(mut request: Request, next: Next) -> Response {
    if let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() {
        let address = ClientAddress(peer.ip().to_string());
        request.extensions_mut().insert(address);
    }
    let span = tracing::info_span!(
        "request",
        request_id = %uuid::Uuid::new_v4(),
        method = %request.method(),
        path = %request.uri().path(),
    );
    tracing::Instrument::instrument(
        async move {
            let response = next.run(request).await;
            tracing::info!(status = response.status().as_u16(), "answered");
            response
        },
        span,
    )
    .await
}

/// Evaluation runs of the local server: the built-in suite in a task of this process, with this
/// process's models. The report lands where the eval function's does (`GET /api/evals/latest`).
#[derive(Debug)]
pub struct InProcessEvals {
    state: Arc<State>,
    running: Arc<AtomicBool>,
}

impl InProcessEvals {
    pub fn new(state: Arc<State>) -> Self {
        Self {
            state,
            running: Arc::default(),
        }
    }
}

impl StartEval for InProcessEvals {
    fn start<'a>(&'a self, _requested_by: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            models(&|name| self.state.config.var(name)).map_err(|e| e.to_string())?;
            if self.running.swap(true, Ordering::SeqCst) {
                return Err("an evaluation run is already going in this process".into());
            }
            let state = Arc::clone(&self.state);
            let running = Running(Arc::clone(&self.running));
            tokio::spawn(async move {
                // Cleared when the task ends, however it ends.
                let _running = running;
                // The operator's address stays out of the log.
                tracing::info!("evaluation run started by an operator");
                let var = |name: &str| state.config.var(name);
                let progress = |line: &str| tracing::info!("eval {line}");
                match run_built_in(&state.app, &var, Trigger::Admin, None, &progress).await {
                    Ok(report) => tracing::info!(
                        "evaluation run finished: {}/{} passed ({}%)",
                        report.passed,
                        report.task_count,
                        report.pass_rate
                    ),
                    Err(e) => tracing::error!("evaluation run failed: {e}"),
                }
            });
            Ok(
                "an evaluation run started in the local server; its report will be at GET /api/evals/latest"
                    .into(),
            )
        })
    }
}

/// Clears the in-process run's flag when dropped.
#[derive(Debug)]
struct Running(Arc<AtomicBool>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}
