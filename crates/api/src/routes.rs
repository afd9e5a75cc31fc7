//! What every function's router gets: JSON `404` for unknown routes, JSON `405` for a known
//! route with the wrong method, the origin check on writes.

use axum::{Router, middleware, response::IntoResponse};

use crate::{config::Site, error::ApiError, request::origin_guard};

/// Finishes a function's router: unknown routes are a JSON `404`, then [`guard`].
pub fn finish(router: Router, site: &Site) -> Router {
    guard(
        router.fallback(|| async { ApiError::NotFound.into_response() }),
        site,
    )
}

/// A JSON `405` for a known route with the wrong method, and the origin check on writes (for a
/// router that brings its own fallback, like the local server's web app).
pub fn guard(router: Router, site: &Site) -> Router {
    let site = site.clone();
    router
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed.into_response() })
        .layer(middleware::from_fn(move |request, next| {
            origin_guard(site.clone(), request, next)
        }))
}
