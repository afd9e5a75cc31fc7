//! One mapping from every failure to an HTTP response: JSON `{error, reason?}`; internals are
//! logged, never sent.

use axum::{
    Json,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use kakeibo_agent::{AgentError, Busy, ConfirmError};
use kakeibo_ledger::LedgerError;
use kakeibo_operator::{OperatorError, UploadError, quota::Refusal};

use kakeibo_core::{CallError, ToolError};
use kakeibo_identity::bot_check::BotRefusal;
use kakeibo_tools::ToolsError;

/// Clears the session cookie on a `401`, so the browser starts a fresh visit next time: under both
/// its names (an answer does not know whether the site is HTTPS; a browser ignores the one that
/// does not apply).
const CLEAR_SESSION: [&str; 2] = [
    "kakeibo_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0",
    "__Host-kakeibo_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
];

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
    /// Another request holds a confirmation: `409 {error, reason: confirm_in_progress}` with
    /// `Retry-After`, the seconds until it may be taken over.
    #[error("{message}")]
    InProgress { message: String, retry_after_secs: u64 },
    /// The conversation has a turn in flight or a write waiting: `409 {error, reason}`.
    #[error("{}", .0.message())]
    Busy(Busy),
    #[error("{0}")]
    Gone(String),
    /// The request is well formed but its content cannot be used (a statement the importer
    /// cannot read): `422` with the sentence.
    #[error("{0}")]
    Unprocessable(String),
    /// A statement file of several accounts, read one at a time: `422 {error, reason:
    /// several_statements, statements}`, each in a few words, so the page can offer each by its
    /// number.
    #[error("{message}")]
    SeveralStatements {
        message: String,
        statements: Vec<String>,
    },
    #[error("the request body is larger than {limit} bytes")]
    TooLarge { limit: usize },
    /// A body under a type the route does not read: `415`.
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{message}")]
    TooManyRequests { message: String, retry_after_secs: i64 },
    #[error("{}", .0.message())]
    Refused(Refusal),
    /// The bot check refused a first message: `403 {reason: bot_check_required | bot_check_failed}`,
    /// or `503 {reason: bot_check_unavailable}` when no verdict could be had (it fails closed).
    #[error("{}", .0.message())]
    BotCheck(BotRefusal),
    /// The database cannot be reached this moment (restarting, or the connection was cut): `503
    /// {reason: database_unavailable}` with `Retry-After`. The pool replaces broken connections,
    /// so the same process answers again once the database is back.
    #[error("the database is unavailable for a moment; try again in a few seconds")]
    DatabaseUnavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The service cannot answer now for a stated reason (for example, no model configured).
    #[error("{error}")]
    Unavailable { error: String, reason: &'static str },
    /// Anything else: logged with its whole source chain, answered as a bare `500`.
    #[error("internal error: {0}")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    pub fn internal(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal(e.into())
    }

    /// An internal error met while `doing` something, the error kept as its source.
    pub fn internal_while(
        doing: &'static str,
        e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Internal(Box::new(While {
            doing,
            source: e.into(),
        }))
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) | Self::WrongCredentials(_) => StatusCode::UNAUTHORIZED,
            Self::BotCheck(BotRefusal::Unavailable) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Forbidden(_) | Self::BotCheck(_) => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) | Self::Busy(_) | Self::InProgress { .. } => StatusCode::CONFLICT,
            Self::Gone(_) => StatusCode::GONE,
            Self::Unprocessable(_) | Self::SeveralStatements { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Refused(_) | Self::Unavailable { .. } | Self::DatabaseUnavailable(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// The body of every refusal and failure: the sentence to show, and for those a page acts on,
/// a reason code (`turn_running`, `daily_limit`, `confirm_in_progress`, …).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct ErrorBody {
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The statements of a file of several (`several_statements`), in file order: the first is
    /// statement 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<String>,
}

impl ErrorBody {
    /// A sentence to show, with the reason code a page acts on when there is one.
    pub fn new(error: impl Into<String>, reason: Option<&str>) -> Self {
        Self {
            error: error.into(),
            reason: reason.map(str::to_owned),
            statements: Vec::new(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = match &self {
            Self::Refused(refusal) => ErrorBody::new(refusal.message(), Some(refusal.reason())),
            Self::Busy(busy) => ErrorBody::new(busy.message(), Some(busy.reason())),
            Self::BotCheck(refusal) => ErrorBody::new(refusal.message(), Some(refusal.reason())),
            Self::InProgress { message, .. } => ErrorBody::new(message.as_str(), Some("confirm_in_progress")),
            Self::DatabaseUnavailable(cause) => {
                tracing::warn!(detail = %chain(cause.as_ref()), "the database is unavailable");
                ErrorBody::new(self.to_string(), Some("database_unavailable"))
            }
            Self::Unavailable { error, reason } => ErrorBody::new(error.as_str(), Some(reason)),
            Self::SeveralStatements { message, statements } => ErrorBody {
                statements: statements.clone(),
                ..ErrorBody::new(message.as_str(), Some("several_statements"))
            },
            Self::Internal(detail) => {
                tracing::error!(detail = %chain(detail.as_ref()), "internal error");
                ErrorBody::new("internal error", None)
            }
            other => ErrorBody::new(other.to_string(), None),
        };
        let mut response = (status, Json(body)).into_response();
        let headers = response.headers_mut();
        match &self {
            Self::Unauthorized(_) => {
                for clear in CLEAR_SESSION {
                    headers.append(header::SET_COOKIE, HeaderValue::from_static(clear));
                }
            }
            Self::TooManyRequests { retry_after_secs, .. } => {
                if let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string()) {
                    headers.insert(header::RETRY_AFTER, v);
                }
            }
            Self::InProgress { retry_after_secs, .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            Self::DatabaseUnavailable(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            }
            _ => {}
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// What was being done when an internal error struck, with the error as its source.
#[derive(Debug, thiserror::Error)]
#[error("{doing}")]
struct While {
    doing: &'static str,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

/// An error and each of its sources, outermost first: `a: b: c`, without repeating a source
/// whose sentence the outer one already ends with.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut said = error.to_string();
    let mut next = error.source();
    while let Some(source) = next {
        let sentence = source.to_string();
        if !said.ends_with(&sentence) {
            said.push_str(": ");
            said.push_str(&sentence);
        }
        next = source.source();
    }
    said
}

impl From<LedgerError> for ApiError {
    fn from(e: LedgerError) -> Self {
        match e {
            LedgerError::Database(db) if database_unavailable(&db) => Self::DatabaseUnavailable(Box::new(db)),
            refused if refused.is_refusal() => Self::BadRequest(refused.to_string()),
            other => Self::internal(other),
        }
    }
}

/// Whether `e` says the database cannot be reached now — the connection failed or was cut, the
/// pool found none, or the server is shutting down or starting (SQLSTATE classes 08 and 57P) —
/// rather than that this request was wrong.
pub fn database_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

impl From<ToolsError> for ApiError {
    fn from(e: ToolsError) -> Self {
        match e {
            ToolsError::Ledger(inner) => inner.into(),
            // A read the dashboard made met a cut connection (its tool calls it transient).
            cut @ ToolsError::Dashboard {
                source: CallError::Tool(ToolError::Transient(_)),
                ..
            } => Self::DatabaseUnavailable(Box::new(cut)),
            refused if refused.is_refusal() => Self::BadRequest(refused.to_string()),
            other => Self::internal(other),
        }
    }
}

impl From<AgentError> for ApiError {
    fn from(e: AgentError) -> Self {
        match e {
            AgentError::Ledger(inner) => inner.into(),
            AgentError::Tools(inner) => inner.into(),
            other => Self::internal(other),
        }
    }
}

impl From<UploadError> for ApiError {
    fn from(e: UploadError) -> Self {
        match e {
            UploadError::TooLarge { .. } | UploadError::BadFileName => Self::BadRequest(e.to_string()),
            UploadError::Full { .. } => Self::Conflict(e.to_string()),
            UploadError::Ledger(inner) => inner.into(),
        }
    }
}

impl From<OperatorError> for ApiError {
    fn from(e: OperatorError) -> Self {
        match e {
            OperatorError::Ledger(inner) => inner.into(),
            OperatorError::Agent(inner) => inner.into(),
            other => Self::internal(other),
        }
    }
}

impl From<ConfirmError> for ApiError {
    fn from(e: ConfirmError) -> Self {
        match e {
            ConfirmError::Claimed { retry_after_secs } => Self::InProgress {
                message: e.to_string(),
                retry_after_secs,
            },
            ConfirmError::Gone => Self::Gone(e.to_string()),
            ConfirmError::TooLarge { .. } | ConfirmError::State(_) | ConfirmError::Write(_) => {
                Self::internal(e)
            }
            ConfirmError::Store(inner) | ConfirmError::NotStarted(inner) => inner.into(),
            ConfirmError::Busy(busy) => Self::Busy(busy),
            ConfirmError::Decisions(why) => Self::BadRequest(why),
        }
    }
}

impl From<kakeibo_auth::AuthError> for ApiError {
    fn from(e: kakeibo_auth::AuthError) -> Self {
        use kakeibo_auth::{AuthError as A, password::PasswordError};
        match e {
            A::InvalidEmail
            | A::Password(PasswordError::Length | PasswordError::Blank | PasswordError::Guessable(_))
            | A::AlreadySignedIn => Self::BadRequest(e.to_string()),
            A::EmailTaken | A::UnprovenAddress => Self::Conflict(e.to_string()),
            A::PasswordOnly | A::NoPassword => Self::Forbidden(e.to_string()),
            A::BadToken => Self::Gone(e.to_string()),
            A::BadCredentials => Self::WrongCredentials(e.to_string()),
            A::TooManyAttempts { retry_after_secs } => Self::TooManyRequests {
                message: e.to_string(),
                retry_after_secs,
            },
            A::Password(inner @ PasswordError::Hash(_)) => Self::internal(inner),
            A::Random(why) => Self::internal(why),
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

    #[tokio::test]
    async fn a_confirmation_in_progress_says_when_to_retry() {
        let response = ApiError::from(ConfirmError::Claimed { retry_after_secs: 17 }).into_response();
        assert_eq!(response.status(), StatusCode::CONFLICT);
        assert_eq!(
            response
                .headers()
                .get(header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
            Some("17")
        );
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(v["reason"], "confirm_in_progress");
        assert!(
            v["error"]
                .as_str()
                .is_some_and(|e| e.contains("try again in 17 s")),
            "{v}"
        );
    }
}
