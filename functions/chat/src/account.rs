//! An account's password and address: change the password, reset it by a mailed link, prove the
//! address by a mailed link.
//!
//! | route | answer |
//! |---|---|
//! | `POST /api/session/password` `{current, password}` | the visitor with a fresh session; every other session ends |
//! | `POST /api/session/password-reset` `{email}` | `202 {sent: true}` whether or not the address has an account |
//! | `POST /api/session/password-reset/confirm` `{token, password}` | `{reset: true}`; every session of the account ends |
//! | `POST /api/session/verify-email` `{token}` | `{verified: true}` |
//! | `POST /api/session/verify-email/resend` | `202 {sent: bool}` (`false`: proven already) |
//!
//! The links carry their token in the URL's fragment, which no browser sends to a server or in
//! a `Referer`; the page posts it here. A link that is unknown, used or expired is `410`.

use std::sync::Arc;

use axum::{
    Json,
    extract::{Request, State as Shared},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use chrono::Utc;
use kakeibo_api::{ApiError, State, mail::Mail, request::json_body, visitor};
use kakeibo_auth::{Visitor, proofs, visitors};
use serde::Deserialize;

use crate::{
    answers::{Reset, Sent, Verified},
    chat::address_key,
    session::signed_in,
};

/// Mails the link that proves a just-signed-up account's address, when the site sends mail. A
/// mail that cannot go is logged and not a failure of the sign-up: the page offers to resend it.
pub(crate) async fn mail_verification(state: &State, visitor: &Visitor) {
    if !state.sends_mail() {
        return;
    }
    let mailable = match proofs::verification_for_new_account(&state.owner_pool, visitor, Utc::now()).await {
        Ok(Some(mailable)) => mailable,
        Ok(None) => return,
        Err(e) => {
            tracing::error!(error = %e, "no verification link could be made for a new account");
            return;
        }
    };
    if let Err(e) = state
        .send_mail(&Mail::of(&mailable, &state.config.site.origin))
        .await
    {
        tracing::warn!(error = %e, "the verification mail of a new account was not sent");
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PasswordChange {
    current: String,
    password: String,
}

/// `POST /api/session/password`: the current password checked (and throttled, as a sign-in),
/// the new one set; the answer carries this browser's new session, every other one has ended.
pub(crate) async fn change_password(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let change: PasswordChange = json_body(body).await?;
    let resolved = visitor::require(&state, &parts.headers).await?;
    if resolved.visitor.is_anonymous {
        return Err(ApiError::Forbidden(
            "a visit without an account has no password; sign up to set one".into(),
        ));
    }
    let key = address_key(&state, &parts);
    let changed = visitors::change_password(
        &state.owner_pool,
        &resolved.visitor,
        &change.current,
        &change.password,
        Some(&key),
        Utc::now(),
    )
    .await?;
    signed_in(&state, &changed)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResetRequest {
    email: String,
}

/// `POST /api/session/password-reset`: a link mailed to the address when it has an account; the
/// same answer when it has none, so nobody learns which addresses do.
pub(crate) async fn request_reset(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let asked: ResetRequest = json_body(body).await?;
    state.require_mail()?;
    let key = address_key(&state, &parts);
    if let Some(mailable) =
        proofs::request_reset(&state.owner_pool, &asked.email, Some(&key), Utc::now()).await?
    {
        state
            .send_mail(&Mail::of(&mailable, &state.config.site.origin))
            .await?;
    }
    Ok((StatusCode::ACCEPTED, Json(Sent { sent: true })).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResetConfirm {
    token: String,
    password: String,
}

/// `POST /api/session/password-reset/confirm`: the link's token and the new password. Every
/// session of the account ends; the person signs in with the new password.
pub(crate) async fn confirm_reset(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let confirm: ResetConfirm = json_body(request.into_body()).await?;
    proofs::reset_password(
        &state.owner_pool,
        confirm.token.trim(),
        &confirm.password,
        Utc::now(),
    )
    .await?;
    Ok(Json(Reset { reset: true }).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VerifyEmail {
    token: String,
}

/// `POST /api/session/verify-email`: the link's token; the address is proven from now on.
pub(crate) async fn verify_email(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let verify: VerifyEmail = json_body(request.into_body()).await?;
    proofs::confirm_email(&state.owner_pool, verify.token.trim(), Utc::now()).await?;
    Ok(Json(Verified { verified: true }).into_response())
}

/// `POST /api/session/verify-email/resend`: another link to the signed-in account's address.
pub(crate) async fn resend_verification(
    Shared(state): Shared<Arc<State>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, _) = request.into_parts();
    let resolved = visitor::require(&state, &parts.headers).await?;
    let result = async {
        state.require_mail()?;
        let key = address_key(&state, &parts);
        let mailable =
            proofs::request_verification(&state.owner_pool, &resolved.visitor, Some(&key), Utc::now())
                .await?;
        let sent = match mailable {
            Some(mailable) => {
                state
                    .send_mail(&Mail::of(&mailable, &state.config.site.origin))
                    .await?;
                true
            }
            None => false,
        };
        Ok((StatusCode::ACCEPTED, Json(Sent { sent })).into_response())
    }
    .await;
    Ok(resolved.respond(result))
}
