//! What every function's router gets: JSON `404` for unknown routes, JSON `405` for a known
//! route with the wrong method, the origin check on writes, and no caching of API answers.

use axum::{Router, middleware, response::IntoResponse};

use crate::{config::Site, error::ApiError, request::origin_guard};

/// Finishes a function's router.
pub fn finish(router: Router, site: &Site) -> Router {
    let site = site.clone();
    router
        .fallback(|| async { ApiError::NotFound.into_response() })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed.into_response() })
        .layer(middleware::from_fn(move |request, next| {
            origin_guard(site.clone(), request, next)
        }))
}
