//! Who is asking: the session cookie turned into a visitor row.
//!
//! No cookie is a new visit (routes that start one create an anonymous visitor). A cookie that is
//! not a valid session — expired, tampered, signed with another key or `alg: none` — or that names
//! a deleted visitor is a `401`, which also clears the cookie.

use axum::{
    http::{HeaderMap, HeaderValue, header},
    response::Response,
};
use chrono::Utc;
use kakeibo_auth::{Sessions, Visitor, visitors};
use kakeibo_operator::quota::{self, Refusal};

use kakeibo_identity::bot_check::{BotRefusal, Verdict};

use crate::{error::ApiError, state::State};

/// A visitor and, when the session was created or renewed, the cookie to send back.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub visitor: Visitor,
    pub set_cookie: Option<String>,
}

impl Resolved {
    /// `result` as the answer (a refusal too), with the session cookie when one was made or
    /// renewed — so a new visitor keeps the session they were given even when refused.
    pub fn respond(&self, result: Result<Response, ApiError>) -> Response {
        let mut response = result.unwrap_or_else(axum::response::IntoResponse::into_response);
        self.apply(&mut response);
        response
    }

    /// Adds the session cookie to `response` when there is one to send — unless the handler set a
    /// session of its own (signing up or in), which must stay the last word.
    pub fn apply(&self, response: &mut Response) {
        let already = response.headers().get_all(header::SET_COOKIE).iter().any(|v| {
            v.to_str().is_ok_and(|c| {
                c.starts_with(kakeibo_auth::SESSION_COOKIE)
                    || c.starts_with(kakeibo_auth::SECURE_SESSION_COOKIE)
            })
        });
        if already {
            return;
        }
        if let Some(cookie) = self
            .set_cookie
            .as_deref()
            .and_then(|c| HeaderValue::from_str(c).ok())
        {
            response.headers_mut().append(header::SET_COOKIE, cookie);
        }
    }
}

/// The visitor of the request's session, if it carries one.
pub async fn current(state: &State, headers: &HeaderMap) -> Result<Option<Resolved>, ApiError> {
    let cookies = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok());
    let Some(token) = state.sessions.token_from_cookies(cookies) else {
        return Ok(None);
    };
    let claims = state
        .sessions
        .verify(token)
        .map_err(|e| ApiError::Unauthorized(format!("{e}; reload to start a new one")))?;
    let visitor = visitors::load(&state.app, claims.owner())
        .await?
        .ok_or_else(|| ApiError::Unauthorized("this session's visitor no longer exists".into()))?;
    if claims.ver != visitor.session_epoch {
        // Signed out (or up) since: as if there were no session — a route that starts visits
        // starts a new one, and the others answer `401` as for no session.
        return Ok(None);
    }
    let now = Utc::now();
    let set_cookie = if Sessions::needs_renewal(&claims, now) {
        Some(issue(state, &visitor)?)
    } else {
        None
    };
    Ok(Some(Resolved { visitor, set_cookie }))
}

/// The visitor of the session; `401` without one.
pub async fn require(state: &State, headers: &HeaderMap) -> Result<Resolved, ApiError> {
    current(state, headers)
        .await?
        .ok_or_else(|| ApiError::Unauthorized("there is no session; start with a chat message".into()))
}

/// The visitor of the session, or a new anonymous visitor with a fresh session — counted per
/// address (`address_key`), so one address cannot mint visitors without bound.
pub async fn current_or_new(
    state: &State,
    headers: &HeaderMap,
    address_key: &str,
) -> Result<Resolved, ApiError> {
    if let Some(resolved) = current(state, headers).await? {
        return Ok(resolved);
    }
    if !quota::admit_new_visitor(&state.owner_pool, address_key, &state.config.quotas, Utc::now()).await? {
        return Err(ApiError::Refused(Refusal::IpQuota));
    }
    let visitor = visitors::create_anonymous(&state.owner_pool).await?;
    let set_cookie = Some(issue(state, &visitor)?);
    Ok(Resolved { visitor, set_cookie })
}

/// The header a bot-check token travels in on routes whose body is not JSON of ours (an upload,
/// say); a chat message carries it as `turnstile_token` in its body instead.
pub const BOT_CHECK_HEADER: &str = "x-turnstile-token";

/// The bot check's token of a request: `from_body` when the body carried one, else the
/// [`BOT_CHECK_HEADER`].
pub fn bot_check_token<'a>(headers: &'a HeaderMap, from_body: Option<&'a str>) -> Option<&'a str> {
    from_body
        .filter(|t| !t.trim().is_empty())
        .or_else(|| headers.get(BOT_CHECK_HEADER).and_then(|v| v.to_str().ok()))
        .filter(|t| !t.trim().is_empty())
}

/// [`current_or_new`] behind the bot check, when one is configured: the session's visitor when
/// they passed it already; otherwise `token` is verified first — before a visitor is made or
/// anything is charged — and the visitor is marked, so the check is asked once. Without the
/// check, [`current_or_new`] itself. Every route that makes a visitor or grows what one keeps
/// (a message, a visit, a sign-up, an upload, a preview) comes through here or [`require_checked`].
pub async fn checked_or_new(
    state: &State,
    headers: &HeaderMap,
    address_key: &str,
    token: Option<&str>,
) -> Result<Resolved, ApiError> {
    let Some(check) = &state.bot_check else {
        return current_or_new(state, headers, address_key).await;
    };
    let current = match current(state, headers).await? {
        Some(resolved) if resolved.visitor.human_checked => return Ok(resolved),
        other => other,
    };
    pass(check, token).await?;
    let mut resolved = match current {
        Some(resolved) => resolved,
        None => current_or_new(state, headers, address_key).await?,
    };
    visitors::mark_human_checked(&state.owner_pool, resolved.visitor.owner()).await?;
    resolved.visitor.human_checked = true;
    Ok(resolved)
}

/// [`require`] behind the bot check: the session's visitor, who must have passed it or pass it
/// now with `token`.
pub async fn require_checked(
    state: &State,
    headers: &HeaderMap,
    token: Option<&str>,
) -> Result<Resolved, ApiError> {
    let mut resolved = require(state, headers).await?;
    if let Some(check) = &state.bot_check
        && !resolved.visitor.human_checked
    {
        pass(check, token).await?;
        visitors::mark_human_checked(&state.owner_pool, resolved.visitor.owner()).await?;
        resolved.visitor.human_checked = true;
    }
    Ok(resolved)
}

/// `token` verified by the bot check, failing closed.
async fn pass(check: &kakeibo_identity::bot_check::BotCheck, token: Option<&str>) -> Result<(), ApiError> {
    let token = token
        .filter(|t| !t.trim().is_empty())
        .ok_or(ApiError::BotCheck(BotRefusal::Required))?;
    match check.verify(token).await {
        Verdict::Passed => Ok(()),
        Verdict::Failed(codes) => {
            tracing::info!(codes = ?codes, "the bot check refused a token");
            Err(ApiError::BotCheck(BotRefusal::Failed))
        }
        Verdict::Unavailable(why) => {
            tracing::warn!(why, "the bot check could not be verified; the request is refused");
            Err(ApiError::BotCheck(BotRefusal::Unavailable))
        }
    }
}

/// A new session cookie for `visitor`.
pub fn issue(state: &State, visitor: &Visitor) -> Result<String, ApiError> {
    let token = state
        .sessions
        .issue(visitor.owner(), visitor.session_epoch, Utc::now())
        .map_err(ApiError::internal)?;
    Ok(state.sessions.cookie(&token))
}
