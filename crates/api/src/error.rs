//! One mapping from every failure to an HTTP response: JSON `{error, reason?}`; internals are
//! logged, never sent.

use axum::{
    Json,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use kakeibo_ledger::{LedgerError, turns::ConfirmError};
use kakeibo_operator::quota::Refusal;
use serde_json::json;

/// Clears the session cookie on a `401`, so the browser starts a fresh visit next time.
const CLEAR_SESSION: &str = "kakeibo_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0";

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    /// No valid session: the answer also clears the session cookie.
    #[error("{0}")]
    Unauthorized(String),
    /// A sign-in with the wrong email or password: `401`, the visitor's own session kept.
    #[error("{0}")]
    WrongCredentials(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("not found")]
    NotFound,
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Gone(String),
    /// The request is well formed but its content cannot be used (a statement the importer
    /// cannot read): `422` with the sentence.
    #[error("{0}")]
    Unprocessable(String),
    #[error("the request body is larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("{message}")]
    TooManyRequests { message: String, retry_after_secs: i64 },
    #[error("{}", .0.message())]
    Refused(Refusal),
    /// The service cannot answer now for a stated reason (for example, no model configured).
    #[error("{error}")]
    Unavailable { error: String, reason: &'static str },
    /// Anything else: logged with its detail, answered as a bare `500`.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    pub fn internal(e: impl std::fmt::Display) -> Self {
        Self::Internal(e.to_string())
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) | Self::WrongCredentials(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Gone(_) => StatusCode::GONE,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Refused(_) | Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = match &self {
            Self::Refused(refusal) => json!({"error": refusal.message(), "reason": refusal.reason()}),
            Self::Unavailable { error, reason } => json!({"error": error, "reason": reason}),
            Self::Internal(detail) => {
                tracing::error!(detail = %detail, "internal error");
                json!({"error": "internal error"})
            }
            other => json!({"error": other.to_string()}),
        };
        let mut response = (status, Json(body)).into_response();
        let headers = response.headers_mut();
        match &self {
            Self::Unauthorized(_) => {
                headers.insert(header::SET_COOKIE, HeaderValue::from_static(CLEAR_SESSION));
            }
            Self::TooManyRequests { retry_after_secs, .. } => {
                if let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string()) {
                    headers.insert(header::RETRY_AFTER, v);
                }
            }
            _ => {}
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

impl From<LedgerError> for ApiError {
    fn from(e: LedgerError) -> Self {
        match e {
            LedgerError::Invalid(message) => Self::BadRequest(message),
            other => Self::internal(other),
        }
    }
}

impl From<kakeibo_operator::uploads::UploadError> for ApiError {
    fn from(e: kakeibo_operator::uploads::UploadError) -> Self {
        use kakeibo_operator::uploads::UploadError as U;
        match e {
            U::Invalid(message) => Self::BadRequest(message),
            U::Full(message) => Self::Conflict(message),
            U::Ledger(inner) => inner.into(),
        }
    }
}

impl From<ConfirmError> for ApiError {
    fn from(e: ConfirmError) -> Self {
        match e {
            ConfirmError::Claimed => Self::Conflict(e.to_string()),
            ConfirmError::Gone => Self::Gone(e.to_string()),
            ConfirmError::TooLarge { .. } | ConfirmError::State(_) => Self::internal(e),
            ConfirmError::Ledger(inner) => inner.into(),
        }
    }
}

impl From<kakeibo_auth::AuthError> for ApiError {
    fn from(e: kakeibo_auth::AuthError) -> Self {
        use kakeibo_auth::AuthError as A;
        match e {
            A::InvalidEmail
            | A::Password(kakeibo_auth::password::PasswordError::Length)
            | A::AlreadySignedIn => Self::BadRequest(e.to_string()),
            A::EmailTaken => Self::Conflict(e.to_string()),
            A::BadCredentials => Self::WrongCredentials(e.to_string()),
            A::TooManyAttempts { retry_after_secs } => Self::TooManyRequests {
                message: e.to_string(),
                retry_after_secs,
            },
            A::Password(inner) => Self::internal(inner),
            A::Ledger(inner) => inner.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn internals_never_leak_and_refusals_carry_their_reason() {
        let response = ApiError::internal("password authentication failed for user kakeibo").into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap_or_default();
        assert_eq!(&body[..], br#"{"error":"internal error"}"#);

        let response = ApiError::Refused(Refusal::OwnerQuota).into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(v["reason"], "owner_quota");
    }
}
