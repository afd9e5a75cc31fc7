//! Running a function's router under the Lambda runtime: buffered (`runs`, `admin`) or streamed
//! (`chat`, `confirm`). The router is the same one the local server mounts.

use std::{convert::Infallible, sync::Arc};

use axum::{Router, body::Body, response::Response};
use lambda_http::{RequestExt, request::RequestContext};
use tower::ServiceExt;

use crate::{Config, State, request::ClientAddress};

/// Which of the state's pools a function opens before its first request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warm {
    /// Both: the function's routes use the owner role's pool too.
    BothPools,
    /// Only `app_user`'s: the routes read as the visitor (`runs`).
    AppPool,
}

/// A function's cold start, the same for all six: logging, `--help` (answered without reading a
/// setting: `Ok(None)`, the binary exits 0), the settings (Secrets Manager included), the state,
/// and the pools `warm` names opened side by side.
pub async fn boot(
    function: &str,
    answers: &str,
    warm: Warm,
) -> Result<Option<Arc<State>>, lambda_http::Error> {
    crate::telemetry::init("info");
    if help_requested(function, answers) {
        return Ok(None);
    }
    let state = State::new(Config::load().await?)?;
    match warm {
        Warm::BothPools => state.warm_pools().await,
        Warm::AppPool => state.warm_app_pool().await,
    }
    Ok(Some(Arc::new(state)))
}

/// What `--help` prints for a function binary.
pub fn help_text(function: &str, answers: &str) -> String {
    format!(
        "{function}: the kakeibo `{function}` function, for AWS Lambda ({answers}).\n\n\
         It runs under the Lambda runtime, which starts it with AWS_LAMBDA_RUNTIME_API set. Locally,\n\
         `cargo xtask watch` runs this binary under `cargo lambda watch`, and `cargo xtask dev` serves\n\
         the same handlers without Lambda. Settings come from the environment and, when SECRETS_ARN is\n\
         set, from Secrets Manager: README.md, \"Configuration\", lists them."
    )
}

/// `--help` or `-h` among the arguments: prints [`help_text`] to stdout and returns true, for the
/// binary to exit 0 before it reads any setting.
pub fn help_requested(function: &str, answers: &str) -> bool {
    let asked = std::env::args().skip(1).any(|a| a == "--help" || a == "-h");
    if asked {
        println!("{}", help_text(function, answers));
    }
    asked
}

/// The address API Gateway or the Function URL saw the request come from.
pub fn source_address(request: &lambda_http::Request) -> Option<String> {
    match request.request_context_ref()? {
        RequestContext::ApiGatewayV2(context) => context.http.source_ip.clone(),
        RequestContext::ApiGatewayV1(context) => context.identity.source_ip.clone(),
        _ => None,
    }
}

/// The path the routes know (`/api/…`). A REST API event's URI carries its stage in front
/// (`/prod/api/chat`) unless `AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH` is set; the event's own path
/// never does, so that one is used.
fn route_path(request: &lambda_http::Request) -> Option<String> {
    match request.request_context_ref()? {
        RequestContext::ApiGatewayV1(_) => {
            Some(request.raw_http_path().to_owned()).filter(|p| p.starts_with('/'))
        }
        _ => None,
    }
}

/// `uri` with its path replaced (query kept).
fn with_path(uri: &axum::http::Uri, path: &str) -> Option<axum::http::Uri> {
    let path_and_query = match uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path.to_owned(),
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(path_and_query.parse().ok()?);
    axum::http::Uri::from_parts(parts).ok()
}

/// Serves one Lambda request with `router`, in a span that names its request id (never its
/// client address).
pub async fn dispatch(router: Router, request: lambda_http::Request) -> Response {
    let span = tracing::info_span!(
        "request",
        request_id = tracing::field::Empty,
        method = %request.method(),
        path = %request.uri().path(),
    );
    if let Some(context) = request.lambda_context_ref() {
        span.record("request_id", context.request_id.as_str());
    }
    tracing::Instrument::instrument(dispatch_in_span(router, request), span).await
}

async fn dispatch_in_span(router: Router, request: lambda_http::Request) -> Response {
    let address = source_address(&request);
    let path = route_path(&request);
    let (mut parts, body) = request.into_parts();
    if let Some(address) = address {
        parts.extensions.insert(ClientAddress(address));
    }
    if let Some(uri) = path.and_then(|p| with_path(&parts.uri, &p)) {
        parts.uri = uri;
    }
    let body = match body {
        lambda_http::Body::Text(text) => Body::from(text),
        lambda_http::Body::Binary(bytes) => Body::from(bytes),
        _ => Body::empty(),
    };
    let response = match router.oneshot(axum::http::Request::from_parts(parts, body)).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    tracing::info!(status = response.status().as_u16(), "answered");
    response
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
