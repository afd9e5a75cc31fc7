//! Sign-in with Google: `GET /api/session/google/start` and its callback.

use std::sync::Arc;

use axum::{
    extract::{Request, State as Shared},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use chrono::Utc;
use kakeibo_api::{ApiError, State, request::QueryOf, visitor};
use kakeibo_auth::{AuthError, visitors};
use kakeibo_identity::google::{self, FLOW_COOKIE as GOOGLE_FLOW_COOKIE, FLOW_TTL_SECS, GoogleError};
use serde::Deserialize;

use crate::session::token_from_named_cookie;

/// Where Google sends the browser back: this site's callback route.
pub(crate) fn google_callback_url(state: &State) -> String {
    format!("{}/api/session/google/callback", state.config.site.origin)
}

/// The flow cookie: set for the callback's path only, for the flow's ten minutes (`None`:
/// cleared).
pub(crate) fn google_flow_cookie(state: &State, value: Option<&str>) -> String {
    let (name, secure) = google_flow_cookie_name(state);
    match value {
        Some(value) => format!(
            "{name}={value}; Path=/api/session/google; HttpOnly; SameSite=Lax; Max-Age={FLOW_TTL_SECS}{secure}"
        ),
        None => format!("{name}=; Path=/api/session/google; HttpOnly; SameSite=Lax; Max-Age=0{secure}"),
    }
}

/// The flow cookie's name and `Secure` flag: `__Secure-` on an HTTPS site, so only a secure
/// answer can set it (`__Host-` needs `Path=/`, and this cookie is for the callback only).
pub(crate) fn google_flow_cookie_name(state: &State) -> (String, &'static str) {
    if state.config.site.secure_cookies {
        (format!("__Secure-{GOOGLE_FLOW_COOKIE}"), "; Secure")
    } else {
        (GOOGLE_FLOW_COOKIE.to_owned(), "")
    }
}

/// A `303` to `location` with the cookies given.
pub(crate) fn see_other(location: &str, cookies: &[String]) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, value);
    }
    for cookie in cookies {
        if let Ok(value) = HeaderValue::from_str(cookie) {
            headers.append(header::SET_COOKIE, value);
        }
    }
    response
}

/// `GET /api/session/google/start`: the browser sent to Google's consent page, the flow's state,
/// nonce and PKCE verifier in a signed cookie. `404` when Google sign-in is off.
pub(crate) async fn start(Shared(state): Shared<Arc<State>>) -> Result<Response, ApiError> {
    let google = state.google.as_ref().ok_or(ApiError::NotFound)?;
    let key = google::flow_key(&state.config.jwt_secret);
    match google
        .start(&google_callback_url(&state), &key, Utc::now().timestamp())
        .await
    {
        Ok((location, flow)) => Ok(see_other(&location, &[google_flow_cookie(&state, Some(&flow))])),
        Err(e) => {
            tracing::warn!(reason = e.reason(), "Google sign-in could not start: {e}");
            Ok(see_other(&format!("/sign-in?error={}", e.reason()), &[]))
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct GoogleCallback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /api/session/google/callback`: the flow checked and the identity verified, then signed
/// in to its account (an anonymous visitor's rows move onto it, as with a password) and sent to
/// /chat; any failure goes back to /sign-in with its reason, and no session.
pub(crate) async fn callback(
    Shared(state): Shared<Arc<State>>,
    QueryOf(query): QueryOf<GoogleCallback>,
    request: Request,
) -> Result<Response, ApiError> {
    let google = state.google.as_ref().ok_or(ApiError::NotFound)?;
    let cleared = google_flow_cookie(&state, None);
    let flow = token_from_named_cookie(request.headers(), &google_flow_cookie_name(&state).0);
    let verified = match (&query.error, &query.code) {
        (None, Some(code)) => {
            let key = google::flow_key(&state.config.jwt_secret);
            google
                .finish(
                    &google_callback_url(&state),
                    flow.as_deref(),
                    code,
                    query.state.as_deref().unwrap_or_default(),
                    &key,
                )
                .await
        }
        _ => Err(GoogleError::Cancelled),
    };
    let identity = match verified {
        Ok(identity) => identity,
        Err(e) => {
            tracing::info!(reason = e.reason(), "Google sign-in refused: {e}");
            return Ok(see_other(&format!("/sign-in?error={}", e.reason()), &[cleared]));
        }
    };
    let current = visitor::current(&state, request.headers()).await.ok().flatten();
    let signed_in = visitors::sign_in_with_google(
        &state.owner_pool,
        current.as_ref().map(|r| &r.visitor),
        &identity.subject,
        &identity.email,
    )
    .await;
    let reason = match signed_in {
        Ok(visitor) => {
            let session = visitor::issue(&state, &visitor)?;
            return Ok(see_other("/chat", &[session, cleared]));
        }
        Err(AuthError::PasswordOnly) => "password_only",
        Err(AuthError::EmailTaken) => "google_taken",
        Err(AuthError::UnprovenAddress) => "google_unproven",
        Err(AuthError::InvalidEmail) => "google_unverified_email",
        Err(other) => return Err(other.into()),
    };
    Ok(see_other(&format!("/sign-in?error={reason}"), &[cleared]))
}
