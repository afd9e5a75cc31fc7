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
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    account,
    answers::{Gone, SignedOut},
    chat::address_key,
};

/// The visitor as the page sees it. `operator` says whether the admin door opens for them (an
/// operator account on `ADMIN_EMAILS`), so the nav can show the operator's room; it is not the
/// boundary — every admin route checks again and answers `404`.
#[derive(Debug, Serialize, JsonSchema)]
#[allow(clippy::struct_excessive_bools)] // what the page knows of the visitor, one flag each
pub struct VisitorView {
    pub id: Uuid,
    pub email: Option<String>,
    pub anonymous: bool,
    /// The address is proven (by the link mailed to it, or by Google).
    pub email_verified: bool,
    pub blocked: bool,
    pub operator: bool,
}

impl VisitorView {
    pub(crate) fn of(state: &State, visitor: &Visitor) -> Self {
        let operator = !visitor.is_anonymous
            && !visitor.blocked
            && assert_admin(visitor.email.as_deref(), visitor.operator, &state.config.admins).is_some();
        Self {
            id: visitor.id,
            email: visitor.email.clone(),
            anonymous: visitor.is_anonymous,
            email_verified: visitor.email_verified,
            blocked: visitor.blocked,
            operator,
        }
    }
}

/// The model the site's turns run on.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ModelView {
    pub provider: String,
    pub model: String,
}

/// The bot check the next message needs the token of.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BotCheckView {
    /// `turnstile`.
    pub provider: String,
    pub site_key: String,
}

/// `GET`/`POST /api/session`: the visitor (or `None`), the model, whether the next message needs
/// the bot check's token (it is configured, and the visitor has not passed it), whether Google
/// sign-in is on and the site sends mail (a reset link, say), and with a visitor the messages left
/// today.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionView {
    pub visitor: Option<VisitorView>,
    pub model: Option<ModelView>,
    pub bot_check: Option<BotCheckView>,
    pub google_sign_in: bool,
    pub mail: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<quota::MessagesLeft>,
}

/// Signing up or in: the visitor now.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SignedIn {
    pub visitor: VisitorView,
}

/// The body of both session routes.
pub(crate) async fn session_json(
    state: &State,
    visitor: Option<&Visitor>,
    address_key: &str,
) -> Result<SessionView, ApiError> {
    let model = state.model.as_ref().ok().map(|m| ModelView {
        provider: m.name().to_owned(),
        model: m.model().to_owned(),
    });
    let bot_check = state
        .bot_check
        .as_ref()
        .filter(|_| !visitor.is_some_and(|v| v.human_checked))
        .map(|check| BotCheckView {
            provider: "turnstile".to_owned(),
            site_key: check.site_key().to_owned(),
        });
    let Some(visitor) = visitor else {
        return Ok(SessionView {
            visitor: None,
            model,
            bot_check,
            google_sign_in: state.google.is_some(),
            mail: state.sends_mail(),
            messages: None,
        });
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
    Ok(SessionView {
        visitor: Some(VisitorView::of(state, visitor)),
        model,
        bot_check,
        google_sign_in: state.google.is_some(),
        mail: state.sends_mail(),
        messages: Some(quota::MessagesLeft::of((limit, used), address)),
    })
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
    #[serde(default)]
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
    #[serde(default)]
    turnstile_token: Option<String>,
}

/// The visitor after signing up or in, with a fresh session.
pub(crate) fn signed_in(state: &State, visitor: &Visitor) -> Result<Response, ApiError> {
    let cookie = visitor::issue(state, visitor)?;
    let mut response = Json(SignedIn {
        visitor: VisitorView::of(state, visitor),
    })
    .into_response();
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
    let mut response = Json(SignedOut { signed_out: true }).into_response();
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
    let mut response = Json(Gone { deleted: true }).into_response();
    if let Ok(value) = HeaderValue::from_str(&state.sessions.clear_cookie()) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}
