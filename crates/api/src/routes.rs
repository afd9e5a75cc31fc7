//! What every function's router gets: JSON `404` for unknown routes, JSON `405` for a known
//! route with the wrong method, the origin check on writes, and — behind a CDN — the CDN's
//! `X-Origin-Verify` header on every request.

use axum::{
    Router,
    extract::Request,
    middleware::{self, Next},
    response::{IntoResponse, Response},
};

use crate::{config::Config, error::ApiError, request::origin_guard};

/// Finishes a function's router: unknown routes are a JSON `404`, then [`guard`].
pub fn finish(router: Router, config: &Config) -> Router {
    guard(
        router.fallback(|| async { ApiError::NotFound.into_response() }),
        config,
    )
}

/// A function's `routes` on `state`, finished as [`finish`] does: what each function's `router`
/// is.
pub fn function(
    state: std::sync::Arc<crate::State>,
    routes: fn(std::sync::Arc<crate::State>) -> Router,
) -> Router {
    let config = state.config.clone();
    finish(routes(state), &config)
}

/// A JSON `405` for a known route with the wrong method, the origin check on writes, and the
/// origin-verify check (for a router that brings its own fallback, like the local server's).
pub fn guard(router: Router, config: &Config) -> Router {
    let site = config.site.clone();
    let verify = config.origin_verify.clone();
    router
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed.into_response() })
        .layer(middleware::from_fn(move |request, next| {
            origin_guard(site.clone(), request, next)
        }))
        .layer(middleware::from_fn(move |request, next| {
            from_the_cdn(verify.clone(), request, next)
        }))
}

/// With `ORIGIN_VERIFY` set, only requests carrying it in `X-Origin-Verify` (which the CDN adds)
/// are served: the API's own public address answers `403` to everyone else.
async fn from_the_cdn(expected: Option<String>, request: Request, next: Next) -> Response {
    match expected {
        Some(expected)
            if request
                .headers()
                .get("x-origin-verify")
                .and_then(|v| v.to_str().ok())
                .is_none_or(|v| !constant_time_eq(v.as_bytes(), expected.as_bytes())) =>
        {
            ApiError::Forbidden("requests must come through the site".into()).into_response()
        }
        _ => next.run(request).await,
    }
}

/// Equality that takes as long for every mismatch of equal length.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
