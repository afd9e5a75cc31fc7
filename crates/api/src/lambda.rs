//! Running a function's router under the Lambda runtime: buffered (`runs`, `admin`) or streamed
//! (`chat`, `confirm`). The router is the same one the local server mounts.

use std::convert::Infallible;

use axum::{Router, body::Body, response::Response};
use lambda_http::{RequestExt, request::RequestContext};
use tower::ServiceExt;

use crate::request::ClientAddress;

/// The address API Gateway or the Function URL saw the request come from.
pub fn source_address(request: &lambda_http::Request) -> Option<String> {
    match request.request_context_ref()? {
        RequestContext::ApiGatewayV2(context) => context.http.source_ip.clone(),
        RequestContext::ApiGatewayV1(context) => context.identity.source_ip.clone(),
        _ => None,
    }
}

/// Serves one Lambda request with `router`.
pub async fn dispatch(router: Router, request: lambda_http::Request) -> Response {
    let address = source_address(&request);
    let (mut parts, body) = request.into_parts();
    if let Some(address) = address {
        parts.extensions.insert(ClientAddress(address));
    }
    let body = match body {
        lambda_http::Body::Text(text) => Body::from(text),
        lambda_http::Body::Binary(bytes) => Body::from(bytes),
        _ => Body::empty(),
    };
    match router.oneshot(axum::http::Request::from_parts(parts, body)).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// Runs `router` as a buffered function.
pub async fn run(router: Router) -> Result<(), lambda_http::Error> {
    lambda_http::run(lambda_http::service_fn(move |request| {
        let router = router.clone();
        async move { Ok::<_, Infallible>(dispatch(router, request).await) }
    }))
    .await
}

/// Runs `router` as a streaming function (response streaming: SSE frames leave as they are made).
pub async fn run_streaming(router: Router) -> Result<(), lambda_http::Error> {
    lambda_http::run_with_streaming_response(lambda_http::service_fn(move |request| {
        let router = router.clone();
        async move { Ok::<_, Infallible>(dispatch(router, request).await) }
    }))
    .await
}
