//! What every function's router gets: JSON `404` for unknown routes, JSON `405` for a known
//! route with the wrong method, the origin check on writes, and — behind a CDN — the CDN's
//! `X-Origin-Verify` header on every request.

use axum::{
    Router,
    extract::Request,
    middleware::{self, Next},
    response::{IntoResponse, Response},
};

use crate::{
    config::Config,
    error::ApiError,
    headers::security_headers,
    request::{json_type_guard, origin_guard},
};

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

/// A JSON `405` for a known route with the wrong method, the origin check on writes, JSON bodies
/// only under a JSON type, the origin-verify check (for a router that brings its own fallback,
/// like the local server's), and the security headers on every answer.
pub fn guard(router: Router, config: &Config) -> Router {
    let site = config.site.clone();
    let verify = config.origin_verify.clone();
    let https = config.site.secure_cookies;
    router
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed.into_response() })
        .layer(middleware::from_fn(refusals_in_json))
        .layer(middleware::from_fn(json_type_guard))
        .layer(middleware::from_fn(move |request, next| {
            origin_guard(site.clone(), request, next)
        }))
        .layer(middleware::from_fn(move |request, next| {
            from_the_cdn(verify.clone(), request, next)
        }))
        .layer(middleware::from_fn(move |request, next| {
            security_headers(https, request, next)
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

/// Every refusal is JSON `{error}` in words: a `4xx` some extractor answered in plain text (a path
/// segment that is not UTF-8, say) is rewrapped. Streams and JSON pass untouched.
async fn refusals_in_json(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/event-stream"));
    if !status.is_client_error() || is_json {
        return response;
    }
    let (_, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let error = if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("the request was refused")
            .to_lowercase()
    } else {
        crate::request::in_words(&text)
    };
    (status, axum::Json(crate::error::ErrorBody::new(error, None))).into_response()
}

/// Equality that takes as long for every mismatch of equal length.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
