//! The visitor's session: who they are (`GET`/`POST /api/session`), signing up, in and out, and
//! deleting the account.

use std::sync::Arc;

use axum::{
    Json,
    extract::{Request, State as Shared},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use chrono::Utc;
use kakeibo_api::{
    ApiError, State,
    request::{json_body, optional_json_body},
    visitor,
};
use kakeibo_auth::{Visitor, visitors};
use kakeibo_operator::{
    admin::assert_admin,
    quota::{self},
};
use serde::Deserialize;
use serde_json::json;

use crate::{account, chat::address_key};

/// The visitor as the page sees it. `operator` says whether the admin door opens for them (an
/// operator account on `ADMIN_EMAILS`), so the nav can show the operator's room; it is not the
/// boundary — every admin route checks again and answers `404`.
pub(crate) fn visitor_json(state: &State, visitor: &Visitor) -> serde_json::Value {
    let operator = !visitor.is_anonymous
        && !visitor.blocked
        && assert_admin(visitor.email.as_deref(), visitor.operator, &state.config.admins).is_some();
    json!({"id": visitor.id, "email": visitor.email, "anonymous": visitor.is_anonymous,
           "emailVerified": visitor.email_verified, "blocked": visitor.blocked, "operator": operator})
}

/// The body of both session routes: `{visitor, model, botCheck, googleSignIn, mail}`, and with a
/// visitor `messages`. `mail` says whether the site sends mail (a reset link, say).
/// `botCheck` is `{provider: "turnstile", siteKey}` while the next message needs the check's
/// token (it is configured, and the visitor has not passed it), else `null`.
pub(crate) async fn session_json(
    state: &State,
    visitor: Option<&Visitor>,
    address_key: &str,
) -> Result<serde_json::Value, ApiError> {
    let model = state
        .model
        .as_ref()
        .ok()
        .map(|m| json!({"provider": m.name(), "model": m.model()}));
    let bot_check = state
        .bot_check
        .as_ref()
        .filter(|_| !visitor.is_some_and(|v| v.human_checked))
        .map(|check| json!({"provider": "turnstile", "siteKey": check.site_key()}));
    let Some(visitor) = visitor else {
        return Ok(json!({"visitor": null, "model": model, "botCheck": bot_check,
                   "googleSignIn": state.google.is_some(), "mail": state.sends_mail()}));
    };
    let quotas = &state.config.quotas;
    let limit = if visitor.is_anonymous {
        quotas.anonymous_daily
    } else {
        quotas.signed_in_daily
    };
    let used = quota::messages_today(visitor.owner(), &state.owner_pool, Utc::now().date_naive()).await?;
    let address = match quota::charged_address(visitor.is_anonymous, address_key) {
        Some(key) => Some((
            quotas.address_daily,
            quota::address_messages_today(&state.owner_pool, key).await?,
        )),
        None => None,
    };
    Ok(json!({
        "visitor": visitor_json(state, visitor),
        "model": model,
        "botCheck": bot_check,
        "googleSignIn": state.google.is_some(),
        "mail": state.sends_mail(),
        "messages": quota::MessagesLeft::of((limit, used), address),
    }))
}

pub(crate) async fn session(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, _) = request.into_parts();
    let key = address_key(&state, &parts);
    let Some(resolved) = visitor::current(&state, &parts.headers).await? else {
        return Ok(Json(session_json(&state, None, &key).await?).into_response());
    };
    let body = session_json(&state, Some(&resolved.visitor), &key).await;
    Ok(resolved.respond(body.map(|b| Json(b).into_response())))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VisitBody {
    /// The bot check's token, when the session asks for one (or in `X-Turnstile-Token`).
    #[serde(default, rename = "turnstileToken")]
    turnstile_token: Option<String>,
}

/// Starts an anonymous visit when the request has none (as a first chat message would, counted
/// per address, behind the bot check when it is on), without sending a message: the page calls
/// it before a first upload. A visit that has not passed the check passes it here with a token.
pub(crate) async fn start_session(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let input: VisitBody = optional_json_body(body).await?;
    let token = visitor::bot_check_token(&parts.headers, input.turnstile_token.as_deref());
    let key = address_key(&state, &parts);
    let (resolved, status) = match visitor::current(&state, &parts.headers).await? {
        Some(resolved) if state.bot_check.is_none() || resolved.visitor.human_checked || token.is_none() => {
            (resolved, StatusCode::OK)
        }
        Some(_) => (
            visitor::checked_or_new(&state, &parts.headers, &key, token).await?,
            StatusCode::OK,
        ),
        None => (
            visitor::checked_or_new(&state, &parts.headers, &key, token).await?,
            StatusCode::CREATED,
        ),
    };
    let body = session_json(&state, Some(&resolved.visitor), &key).await;
    Ok(resolved.respond(body.map(|b| (status, Json(b)).into_response())))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Credentials {
    email: String,
    password: String,
    /// The bot check's token, for a sign-up that starts or grows a visit not yet checked.
    #[serde(default, rename = "turnstileToken")]
    turnstile_token: Option<String>,
}

/// The visitor after signing up or in, with a fresh session.
pub(crate) fn signed_in(state: &State, visitor: &Visitor) -> Result<Response, ApiError> {
    let cookie = visitor::issue(state, visitor)?;
    let mut response = Json(json!({"visitor": visitor_json(state, visitor)})).into_response();
    let value = HeaderValue::from_str(&cookie).map_err(ApiError::internal)?;
    response.headers_mut().append(header::SET_COOKIE, value);
    Ok(response)
}

pub(crate) async fn sign_up(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let credentials: Credentials = json_body(body).await?;
    let key = address_key(&state, &parts);
    let token = visitor::bot_check_token(&parts.headers, credentials.turnstile_token.as_deref());
    let resolved = visitor::checked_or_new(&state, &parts.headers, &key, token).await?;
    let result = async {
        let visitor = visitors::sign_up(
            &state.owner_pool,
            &resolved.visitor,
            &credentials.email,
            &credentials.password,
            Some(&key),
            Utc::now(),
        )
        .await?;
        account::mail_verification(&state, &visitor).await;
        signed_in(&state, &visitor)
    }
    .await;
    Ok(resolved.respond(result))
}

pub(crate) async fn sign_in(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let credentials: Credentials = json_body(body).await?;
    let current = visitor::current(&state, &parts.headers).await?;
    let key = address_key(&state, &parts);
    let visitor = visitors::sign_in(
        &state.owner_pool,
        current.as_ref().map(|r| &r.visitor),
        &credentials.email,
        &credentials.password,
        Some(&key),
        Utc::now(),
    )
    .await?;
    signed_in(&state, &visitor)
}

/// Whole seconds from `now` to the next midnight UTC, when daily quotas renew (at least one).
pub(crate) fn until_midnight_utc(now: chrono::DateTime<Utc>) -> i64 {
    let midnight = now
        .date_naive()
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc());
    midnight.map_or(1, |m| visitors::whole_seconds(m - now))
}

/// The value of the cookie `name` in the request's `Cookie` headers.
pub(crate) fn token_from_named_cookie(headers: &axum::http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

pub(crate) async fn sign_out(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    // Every session of the visitor ends, copies included; without a valid session there is
    // nothing to end but the cookie.
    if let Ok(Some(resolved)) = visitor::current(&state, request.headers()).await {
        visitors::sign_out(&state.owner_pool, resolved.visitor.owner()).await?;
    }
    let mut response = Json(json!({"signed_out": true})).into_response();
    if let Ok(value) = HeaderValue::from_str(&state.sessions.clear_cookie()) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}

pub(crate) async fn delete_account(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    visitors::delete_account(&state.owner_pool, resolved.visitor.owner()).await?;
    let mut response = Json(json!({"deleted": true})).into_response();
    if let Ok(value) = HeaderValue::from_str(&state.sessions.clear_cookie()) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}
