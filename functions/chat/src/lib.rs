//! The `chat` function: a message in, the turn out as server-sent events; the visitor's session
//! (sign-up, sign-in, sign-out, deleting the account) and statement uploads.
//!
//! | route | answer |
//! |---|---|
//! | `POST /api/chat` `{message, conversation_id?, turnstile_token?}` | SSE: `token`, `tool_call`, `tool_result`, `confirm_request`, `turn_end`, `error` |
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
//!
//! One module per resource: [`chat`] (the message, charged once by its `MessageCharge`),
//! [`session`], [`google_sign_in`], [`account`], [`books`], [`uploads`], [`register`],
//! [`categories`]. This file is the router.

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::sync::Arc;

use axum::{
    Router,
    response::Response,
    routing::{delete, get, post},
};
use kakeibo_api::State;

pub mod answers;

mod account;
mod books;
mod categories;
mod chat;
mod google_sign_in;
mod register;
mod session;
mod uploads;

pub use session::{BotCheckView, ModelView, SessionView, SignedIn, VisitorView};

/// The longest message accepted, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// The function's routes, unfinished (the local server merges every function's routes).
pub fn routes(state: Arc<State>) -> Router {
    Router::new()
        .route("/api/chat", post(chat::chat))
        .route("/api/session", get(session::session).post(session::start_session))
        .route("/api/session/sign-up", post(session::sign_up))
        .route("/api/session/sign-in", post(session::sign_in))
        .route("/api/session/sign-out", post(session::sign_out))
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
        .route("/api/session/google/start", get(google_sign_in::start))
        .route("/api/session/google/callback", get(google_sign_in::callback))
        .route("/api/account", delete(session::delete_account))
        .route("/api/uploads", post(uploads::upload).get(uploads::list_uploads))
        .route("/api/uploads/sample", post(uploads::upload_sample))
        .route("/api/uploads/{id}", delete(uploads::delete_upload))
        .route("/api/uploads/{id}/preview", post(uploads::preview_upload))
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
