//! kakeibo-dev: the local stack's one port. Every function's routes, the same handlers the
//! Lambda binaries run (without the Lambda runtime), and the built web app (`web/dist`) for
//! everything outside `/api/`.

use std::{net::SocketAddr, path::Path, sync::Arc};

use axum::{
    Router,
    extract::{ConnectInfo, Request},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use kakeibo_api::{ApiError, ClientAddress, State};
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

/// All routes of all functions, plus the web app from `web_dist` when it exists.
pub fn app(state: Arc<State>, web_dist: Option<&Path>) -> Router {
    let config = state.config.clone();
    let api = Router::new()
        .merge(kakeibo_chat::routes(Arc::clone(&state)))
        .merge(kakeibo_confirm::routes(Arc::clone(&state)))
        .merge(kakeibo_runs::routes(Arc::clone(&state)))
        .merge(kakeibo_admin::routes(state));
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

/// Puts the socket's peer address on the request, as the Lambda adapter puts the gateway's.
async fn client_address(mut request: Request, next: Next) -> Response {
    if let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() {
        let address = ClientAddress(peer.ip().to_string());
        request.extensions_mut().insert(address);
    }
    next.run(request).await
}
