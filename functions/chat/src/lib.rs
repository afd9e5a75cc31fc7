//! The `chat` function: a message in, the turn out as server-sent events; the visitor's session
//! (sign-up, sign-in, sign-out, deleting the account) and statement uploads.
//!
//! | route | answer |
//! |---|---|
//! | `POST /api/chat` `{message, conversationId?}` | SSE: `token`, `tool_call`, `tool_result`, `confirm_request`, `turn_end`, `error` |
//! | `GET /api/session` | `{visitor, model, messages?}`: the visitor (or `null`), the model (or `null`), and with a visitor today's messages `{limit, used, left, binding}` — the limit that binds: `visitor` (their own) or `network` (the address's, shared by the anonymous visitors behind it) |
//! | `POST /api/session` | the same, after starting an anonymous visit when there is none (`201` then, `200` when one existed) |
//! | `POST /api/session/sign-up` `{email, password}` | the visitor, now with an account |
//! | `POST /api/session/sign-in` `{email, password}` | the account's visitor; an anonymous visitor's rows move onto it |
//! | `POST /api/session/sign-out` | the cookie cleared |
//! | `POST /api/session/password`, `…/password-reset`, `…/password-reset/confirm`, `…/verify-email`, `…/verify-email/resend` | see [`account`] |
//! | `POST /api/session/home-currency`, `POST /api/uploads/plans/{plan}/answers` | see [`books`] |
//! | `/api/transactions…`, `POST /api/imports/{id}/undo`, `/api/edits…` | the register and a person's own edits: see [`register`] |
//! | `/api/categories…`, `/api/rules…`, `/api/budgets…` | the categories, rules and budgets screens: see [`categories`] |
//! | `DELETE /api/account` | the visitor and everything of theirs deleted |
//! | `POST /api/uploads?filename=NAME` (the raw file) | the stored statement (`201`), or the one already holding the same bytes (`200`, `reused`), for the import tool |
//! | `POST /api/uploads/sample` | the shipped sample statement kept as an upload that counts against no limit (`201`, then `200`) |
//! | `GET /api/uploads` | the visitor's uploaded statements (at most 20, 50 MiB in all, the sample aside), each with its last import |
//! | `DELETE /api/uploads/{id}` | one of them deleted |
//! | `POST /api/uploads/{id}/preview` `{account?, kind?, currency?, figures?: [{line, take: amount\|balance}]}` (or no body) | the importer's preview of it (the import tool's dry run, a stored plan, reused for the same statement and options; a row the balance column refuses taken in at the figure chosen); `404` not the visitor's, `409` another of the visitor's previews is running, `422` a file the importer cannot read, `429` the day's previews are used |

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::{sync::Arc, time::Instant};

use axum::{
    Json, Router,
    extract::{Request, State as Shared},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{delete, get, post},
};
use chrono::Utc;
use kakeibo_agent::{
    conversations::{Availability, availability, title_of},
    turns::ConfirmError,
};
use kakeibo_api::{
    ApiError, State,
    request::{ClientAddress, QueryOf, client_address, json_body, optional_json_body, read_body},
    sse,
    turn_stream::{forward, send_outcome, spawn_turn},
    visitor,
};
use kakeibo_auth::{AuthError, Visitor, visitors};
use kakeibo_core::turn::StopJudge;
use kakeibo_core::{ConfirmPolicy, ConversationId};
use kakeibo_identity::google::{self, FLOW_COOKIE as GOOGLE_FLOW_COOKIE, FLOW_TTL_SECS, GoogleError};
use kakeibo_judge::stop::LlmStopJudge;
use kakeibo_ledger::seed::ensure_demo_ledger;
use kakeibo_operator::{
    admin::assert_admin,
    quota::{self, QuotaKind},
    uploads::{self, MAX_UPLOAD_BYTES, list_uploads as uploads_of, save_upload},
};
use kakeibo_tools::{CurrencyCode, PreviewChoices, Scope, ToolsError, preview_upload as import_preview};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

mod account;
mod books;
mod categories;
mod register;

/// The longest message accepted, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// The function's routes, unfinished (the local server merges every function's routes).
pub fn routes(state: Arc<State>) -> Router {
    Router::new()
        .route("/api/chat", post(chat))
        .route("/api/session", get(session).post(start_session))
        .route("/api/session/sign-up", post(sign_up))
        .route("/api/session/sign-in", post(sign_in))
        .route("/api/session/sign-out", post(sign_out))
        .route("/api/session/password", post(account::change_password))
        .route("/api/session/password-reset", post(account::request_reset))
        .route(
            "/api/session/password-reset/confirm",
            post(account::confirm_reset),
        )
        .route("/api/session/verify-email", post(account::verify_email))
        .route(
            "/api/session/verify-email/resend",
            post(account::resend_verification),
        )
        .route("/api/session/home-currency", post(books::set_home_currency))
        .route("/api/session/google/start", get(google_start))
        .route("/api/session/google/callback", get(google_callback))
        .route("/api/account", delete(delete_account))
        .route("/api/uploads", post(upload).get(list_uploads))
        .route("/api/uploads/sample", post(upload_sample))
        .route("/api/uploads/{id}", delete(delete_upload))
        .route("/api/uploads/{id}/preview", post(preview_upload))
        .route("/api/uploads/plans/{plan}/answers", post(books::answer_plan))
        .route("/api/transactions", get(register::list))
        .route(
            "/api/transactions/{id}",
            axum::routing::patch(register::change).delete(register::delete),
        )
        .route("/api/transactions/{id}/split", post(register::split))
        .route("/api/imports/{id}/undo", post(register::undo_import))
        .route("/api/edits", get(register::list_edits))
        .route("/api/edits/{id}/revert", post(register::revert))
        .route("/api/categories", get(categories::list).post(categories::add))
        .route("/api/categories/{id}", axum::routing::patch(categories::rename))
        .route("/api/categories/{id}/merge", post(categories::merge))
        .route(
            "/api/rules",
            get(categories::list_rules).post(categories::add_rule),
        )
        .route(
            "/api/rules/{id}",
            axum::routing::patch(categories::change_rule).delete(categories::delete_rule),
        )
        .route("/api/rules/preview", post(categories::preview_rule))
        .route("/api/rules/apply", post(categories::apply_rule))
        .route("/api/budgets", get(categories::month).put(categories::set_budget))
        .route("/api/budgets/{id}", delete(categories::delete_budget))
        .with_state(state)
}

/// Every route of the function, finished: JSON `404`/`405`, the origin check on writes.
pub fn router(state: Arc<State>) -> Router {
    kakeibo_api::routes::function(state, routes)
}

/// One Lambda request (what `main` runs and tests call).
pub async fn handle(state: Arc<State>, request: lambda_http::Request) -> Response {
    kakeibo_api::lambda::dispatch(router(state), request).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatBody {
    message: String,
    #[serde(default, rename = "conversationId", alias = "conversation_id")]
    conversation_id: Option<kakeibo_core::ConversationId>,
    /// The bot check's token (Turnstile), needed until the visitor has passed it once when
    /// `TURNSTILE_SECRET` is set; ignored otherwise.
    #[serde(default, rename = "turnstileToken")]
    turnstile_token: Option<String>,
}

/// The per-address quota key of a request.
pub(crate) fn address_key(state: &State, request: &axum::http::request::Parts) -> String {
    let address = client_address(
        request.extensions.get::<ClientAddress>(),
        &request.headers,
        state.config.client_address_header.as_deref(),
    );
    quota::address_key(&address, &state.config.rate_limit_salt, Utc::now().date_naive())
}

async fn chat(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let input: ChatBody = json_body(body).await?;
    let message = input.message.trim().to_owned();
    if message.is_empty() {
        return Err(ApiError::BadRequest("message is required".into()));
    }
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::BadRequest(format!(
            "the message is longer than {MAX_MESSAGE_CHARS} characters"
        )));
    }
    let agent_model = state.agent_model()?;
    let key = address_key(&state, &parts);
    let resolved =
        visitor::checked_or_new(&state, &parts.headers, &key, input.turnstile_token.as_deref()).await?;
    let result = async {
        let owner = resolved.visitor.owner();
        // A conversation that is not the visitor's, or that has a turn in flight or a write
        // waiting, is refused before anything is charged (the opening checks again under a lock);
        // a new one is made by its first turn's opening, only once the quota admitted the message.
        if let Some(conversation) = input.conversation_id {
            match availability(owner, &state.app, conversation).await? {
                Availability::Free => {}
                Availability::Missing => return Err(ApiError::NotFound),
                Availability::Busy(busy) => return Err(ApiError::Busy(busy)),
            }
        }
        // The address's limit guards anonymous visitors only; a signed-in person is counted per
        // account (many people share an address), and the global daily budget caps the site.
        let charged = quota::charged_address(resolved.visitor.is_anonymous, &key).map(str::to_owned);
        quota::consume(
            owner,
            &state.owner_pool,
            charged.as_deref(),
            QuotaKind::Message,
            &state.config.quotas,
            Utc::now(),
        )
        .await?
        .map_err(ApiError::Refused)?;
        if !resolved.visitor.demo_cloned
            && let Err(e) = ensure_demo_ledger(owner, &state.app).await
        {
            // The turn never started: the message it was charged for is given back.
            quota::refund(owner, &state.owner_pool, charged.as_deref(), Utc::now()).await?;
            return Err(e.into());
        }
        let (conversation, new_title) = match input.conversation_id {
            Some(conversation) => (conversation, None),
            None => (ConversationId::random(), Some(title_of(&message))),
        };
        let (events, response) = sse::stream();
        let state = Arc::clone(&state);
        let stream = events.clone();
        spawn_turn(&stream, async move {
            let started = Instant::now();
            // A new conversation is routed once, on its first message; one that exists keeps
            // the model it was given.
            let model = match &new_title {
                Some(_) => state.model_for_new(&message, &agent_model).await,
                None => state.model_of(owner, conversation, &agent_model).await,
            };
            let stop_judge = state.judge().await.cloned().map(LlmStopJudge);
            let mut agent = state.web_agent(owner, model.as_ref());
            agent.stop_judge = stop_judge.as_ref().map(|j| j as &dyn StopJudge);
            let on_event = forward(&events);
            let policy = ConfirmPolicy::Suspend;
            let outcome = match &new_title {
                Some(title) => {
                    agent
                        .start(conversation, Some(title), &message, &policy, &on_event)
                        .await
                }
                None => agent.chat(conversation, &message, &policy, &on_event).await,
            };
            if matches!(outcome, Err(ConfirmError::NotStarted(_) | ConfirmError::Busy(_))) {
                // Nothing of the turn was recorded and no model was called: the message it was
                // charged for is given back, so the visitor can send it again.
                if let Err(e) = quota::refund(owner, &state.owner_pool, charged.as_deref(), Utc::now()).await {
                    tracing::error!(error = %e, "the charge of a turn that never started could not be given back");
                }
            }
            send_outcome(&events, conversation, model.model(), started, outcome);
        });
        Ok(response)
    }
    .await;
    Ok(resolved.respond(result))
}

/// The visitor as the page sees it. `operator` says whether the admin door opens for them (an
/// operator account on `ADMIN_EMAILS`), so the nav can show the operator's room; it is not the
/// boundary — every admin route checks again and answers `404`.
fn visitor_json(state: &State, visitor: &Visitor) -> serde_json::Value {
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
async fn session_json(
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

async fn session(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
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
struct VisitBody {
    /// The bot check's token, when the session asks for one (or in `X-Turnstile-Token`).
    #[serde(default, rename = "turnstileToken")]
    turnstile_token: Option<String>,
}

/// Starts an anonymous visit when the request has none (as a first chat message would, counted
/// per address, behind the bot check when it is on), without sending a message: the page calls
/// it before a first upload. A visit that has not passed the check passes it here with a token.
async fn start_session(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
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
struct Credentials {
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

async fn sign_up(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
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

async fn sign_in(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
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

/// Where Google sends the browser back: this site's callback route.
fn google_callback_url(state: &State) -> String {
    format!("{}/api/session/google/callback", state.config.site.origin)
}

/// The flow cookie: set for the callback's path only, for the flow's ten minutes (`None`:
/// cleared).
fn google_flow_cookie(state: &State, value: Option<&str>) -> String {
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
fn google_flow_cookie_name(state: &State) -> (String, &'static str) {
    if state.config.site.secure_cookies {
        (format!("__Secure-{GOOGLE_FLOW_COOKIE}"), "; Secure")
    } else {
        (GOOGLE_FLOW_COOKIE.to_owned(), "")
    }
}

/// A `303` to `location` with the cookies given.
fn see_other(location: &str, cookies: &[String]) -> Response {
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
async fn google_start(Shared(state): Shared<Arc<State>>) -> Result<Response, ApiError> {
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
struct GoogleCallback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /api/session/google/callback`: the flow checked and the identity verified, then signed
/// in to its account (an anonymous visitor's rows move onto it, as with a password) and sent to
/// /chat; any failure goes back to /sign-in with its reason, and no session.
async fn google_callback(
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

/// Whole seconds from `now` to the next midnight UTC, when daily quotas renew (at least one).
fn until_midnight_utc(now: chrono::DateTime<Utc>) -> i64 {
    let midnight = now
        .date_naive()
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc());
    midnight.map_or(1, |m| visitors::whole_seconds(m - now))
}

/// The value of the cookie `name` in the request's `Cookie` headers.
fn token_from_named_cookie(headers: &axum::http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

async fn sign_out(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
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

async fn delete_account(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    visitors::delete_account(&state.owner_pool, resolved.visitor.owner()).await?;
    let mut response = Json(json!({"deleted": true})).into_response();
    if let Ok(value) = HeaderValue::from_str(&state.sessions.clear_cookie()) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}

#[derive(Debug, Deserialize)]
struct UploadQuery {
    filename: Option<String>,
}

async fn upload(
    Shared(state): Shared<Arc<State>>,
    QueryOf(query): QueryOf<UploadQuery>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let filename = query.filename.ok_or_else(|| {
        ApiError::BadRequest("name the file: POST /api/uploads?filename=statement.csv".into())
    })?;
    // Uploading needs a visit already started (by a chat message or signing in), so files
    // cannot be stored without any other limit applying, and one that passed the bot check.
    let token = visitor::bot_check_token(&parts.headers, None);
    let resolved = visitor::require_checked(&state, &parts.headers, token).await?;
    let result = async {
        let bytes = read_body(body, MAX_UPLOAD_BYTES).await?;
        if bytes.is_empty() {
            return Err(ApiError::BadRequest("the file is empty".into()));
        }
        let content_type = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let kept = save_upload(
            resolved.visitor.owner(),
            &state.app,
            &filename,
            content_type,
            &bytes,
            false,
        )
        .await?;
        Ok(kept_response(kept))
    }
    .await;
    Ok(resolved.respond(result))
}

/// The statement the site ships for trying the importer (the web app serves the same file).
const SAMPLE_STATEMENT: &[u8] = include_bytes!("../../../web/public/sample-statement.csv");

/// Keeps the shipped sample statement for the visitor, as an upload that counts against no
/// limit (kept once: trying it again is the same upload).
async fn upload_sample(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
    let token = visitor::bot_check_token(request.headers(), None);
    let resolved = visitor::require_checked(&state, request.headers(), token).await?;
    let result = async {
        let kept = save_upload(
            resolved.visitor.owner(),
            &state.app,
            "sample-statement.csv",
            Some("text/csv"),
            SAMPLE_STATEMENT,
            true,
        )
        .await?;
        Ok(kept_response(kept))
    }
    .await;
    Ok(resolved.respond(result))
}

/// `201` with a new upload, `200` with the one that already held the same bytes.
fn kept_response(kept: uploads::Kept) -> Response {
    let status = if kept.reused {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    (status, Json(kept)).into_response()
}

async fn list_uploads(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let rows = uploads_of(resolved.visitor.owner(), &state.app).await?;
    Ok(resolved.respond(Ok(Json(json!({"uploads": rows})).into_response())))
}

async fn delete_upload(
    Shared(state): Shared<Arc<State>>,
    axum::extract::Path(id): axum::extract::Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let resolved = visitor::require(&state, request.headers()).await?;
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::NotFound)?;
    if !uploads::delete_upload(resolved.visitor.owner(), &state.app, id).await? {
        return Err(ApiError::NotFound);
    }
    Ok(resolved.respond(Ok(Json(json!({"deleted": true})).into_response())))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PreviewBody {
    /// The account to import into (default "Checking"), created when missing.
    #[serde(default)]
    account: Option<String>,
    /// The kind of a new account: checking, savings, card, cash or loan.
    #[serde(default)]
    kind: Option<kakeibo_ledger::AccountKind>,
    /// The currency of amounts that name none (default INR).
    #[serde(default)]
    currency: Option<CurrencyCode>,
    /// Rows the balance column refuses, taken in at the figure the visitor chose.
    #[serde(default)]
    figures: Vec<TakenLine>,
}

/// One refused row of a preview, and the figure to take it in at.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TakenLine {
    line: usize,
    take: kakeibo_ledger::import::Figure,
}

/// The most refused rows one preview may take in on the visitor's word (a statement's refusals
/// are listed fifty at a time).
const MAX_TAKEN: usize = 500;

/// The importer's preview of one of the visitor's uploads, without the model: the import tool's
/// dry run (a plan stored for the later commit through the model and the confirm card). Nothing
/// enters the ledger. Each preview counts against the visitor's and the address's daily preview
/// quotas (`429` past them); one of a visitor's runs at a time (`409` while one does); the same
/// statement with the same options reuses its plan while the ledger has not changed; a visitor
/// keeps at most a few plans (the oldest are dropped).
async fn preview_upload(
    Shared(state): Shared<Arc<State>>,
    axum::extract::Path(id): axum::extract::Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let token = visitor::bot_check_token(&parts.headers, None);
    let resolved = visitor::require_checked(&state, &parts.headers, token).await?;
    let result = async {
        let id = Uuid::parse_str(&id).map_err(|_| ApiError::NotFound)?;
        let input: PreviewBody = optional_json_body(body).await?;
        let owner = resolved.visitor.owner();
        let now = Utc::now();
        quota::admit_preview(
            owner,
            !resolved.visitor.is_anonymous,
            &state.owner_pool,
            &address_key(&state, &parts),
            &state.config.quotas,
            now,
        )
        .await?
        .map_err(|refusal| ApiError::TooManyRequests {
            message: refusal.message(),
            retry_after_secs: until_midnight_utc(now),
        })?;
        // The plan is made against the ledger the visitor's chat will see.
        if !resolved.visitor.demo_cloned {
            ensure_demo_ledger(owner, &state.app).await?;
        }
        if input.figures.len() > MAX_TAKEN {
            return Err(ApiError::Unprocessable(format!(
                "at most {MAX_TAKEN} rows can be taken in at a chosen figure in one preview"
            )));
        }
        let choices = PreviewChoices {
            account: input.account.filter(|a| !a.trim().is_empty()),
            kind: input.kind,
            currency: input.currency,
            figures: input.figures.iter().map(|t| (t.line, t.take)).collect(),
        };
        let scope = Scope::new(owner, state.app.clone());
        let preview = match import_preview(&scope, id, choices).await {
            Ok(Some(preview)) => preview,
            Ok(None) => return Err(ApiError::NotFound),
            Err(busy @ ToolsError::PreviewBusy) => return Err(ApiError::Conflict(busy.to_string())),
            Err(refused) if refused.is_refusal() => return Err(ApiError::Unprocessable(refused.to_string())),
            Err(other) => return Err(other.into()),
        };
        Ok(Json(preview).into_response())
    }
    .await;
    Ok(resolved.respond(result))
}
