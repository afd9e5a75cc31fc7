//! Vertex AI auth for Gemini: a service-account key signs an RS256 JWT, the token endpoint
//! exchanges it for an access token, and the token is kept until five minutes before it expires.
//!
//! The key comes as a file (`GOOGLE_APPLICATION_CREDENTIALS`) or as its JSON text
//! (`GEMINI_SERVICE_ACCOUNT_JSON`, which is how a function receives it from its secret store).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use kakeibo_core::ProviderError;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::http::Secret;

const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// A token is renewed this long before it expires.
const RENEW_BEFORE: Duration = Duration::from_mins(5);

/// The fields of a service-account key file that signing needs.
#[derive(Clone, Deserialize)]
pub struct ServiceAccount {
    pub client_email: String,
    private_key: String,
    #[serde(default)]
    private_key_id: Option<String>,
    #[serde(default)]
    pub project_id: Option<String>,
    #[serde(default = "default_token_uri")]
    pub token_uri: String,
}

fn default_token_uri() -> String {
    DEFAULT_TOKEN_URI.to_owned()
}

impl std::fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

impl ServiceAccount {
    /// From the JSON text of a key file, or of that text encoded once more as a JSON string
    /// (as some secret stores hand it over). The error never quotes the text: it holds a key.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let unwrapped = match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::String(inner)) => inner,
            _ => text.to_owned(),
        };
        serde_json::from_str(&unwrapped).map_err(|e| {
            format!(
                "the service-account key is not a key file ({:?} error at line {}, column {})",
                e.classify(),
                e.line(),
                e.column()
            )
        })
    }
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
}

#[derive(Deserialize)]
struct TokenReply {
    access_token: String,
    #[serde(default = "default_lifetime")]
    expires_in: u64,
}

const fn default_lifetime() -> u64 {
    3600
}

/// Access tokens for one service account, fetched when needed and shared by every request.
#[derive(Debug)]
pub struct TokenSource {
    account: ServiceAccount,
    client: reqwest::Client,
    current: Mutex<Option<(Secret, SystemTime)>>,
}

impl TokenSource {
    pub fn new(account: ServiceAccount, client: reqwest::Client) -> Self {
        Self {
            account,
            client,
            current: Mutex::new(None),
        }
    }

    pub fn account(&self) -> &ServiceAccount {
        &self.account
    }

    /// A valid access token: the kept one, or a new one when it is near expiry. Concurrent
    /// callers wait for one exchange rather than each making their own.
    pub async fn token(&self) -> Result<Secret, ProviderError> {
        let mut current = self.current.lock().await;
        if let Some((token, expires)) = current.as_ref()
            && SystemTime::now() + RENEW_BEFORE < *expires
        {
            return Ok(token.clone());
        }
        let (token, lifetime) = self.exchange().await?;
        // A lifetime inside the renewal margin is still used once; an absurd one is capped.
        let lifetime = lifetime.min(Duration::from_hours(24));
        *current = Some((token.clone(), SystemTime::now() + lifetime));
        Ok(token)
    }

    fn assertion(&self) -> Result<String, ProviderError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let claims = Claims {
            iss: &self.account.client_email,
            scope: SCOPE,
            aud: &self.account.token_uri,
            iat: now,
            exp: now + 3600,
        };
        let mut header = Header::new(Algorithm::RS256);
        header.kid.clone_from(&self.account.private_key_id);
        let key = EncodingKey::from_rsa_pem(self.account.private_key.as_bytes()).map_err(|e| {
            ProviderError::Rejected {
                status: 0,
                message: format!("the service-account private key cannot sign: {e}"),
            }
        })?;
        jsonwebtoken::encode(&header, &claims, &key).map_err(|e| ProviderError::Rejected {
            status: 0,
            message: format!("could not sign the token request: {e}"),
        })
    }

    async fn exchange(&self) -> Result<(Secret, Duration), ProviderError> {
        let assertion = self.assertion()?;
        let form =
            format!("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}");
        let response = crate::http::send(
            || {
                self.client
                    .post(&self.account.token_uri)
                    .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(form.clone())
            },
            oauth_error,
            crate::http::no_retry_hint,
        )
        .await?;
        let reply: TokenReply = response
            .json()
            .await
            .map_err(|e| ProviderError::Protocol(format!("the token endpoint's reply: {e}")))?;
        Ok((Secret(reply.access_token), Duration::from_secs(reply.expires_in)))
    }
}

/// The token endpoint's errors (`{"error": "invalid_grant", "error_description": …}`), which
/// `http::send` hands over as the value of `error`: a string here.
fn oauth_error(error: &serde_json::Value, status: Option<u16>) -> ProviderError {
    let status = status.unwrap_or(400);
    let message = match error {
        serde_json::Value::String(code) => format!("token exchange refused: {code}"),
        other => crate::http::error_message(other),
    };
    crate::http::status_error(status, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_encoded_twice_is_read_and_a_bad_one_is_never_quoted() {
        let key = serde_json::json!({"client_email": "a@b", "private_key": "-----BEGIN PRIVATE KEY-----\nSECRETBYTES\n"});
        let twice = serde_json::to_string(&key.to_string()).unwrap();
        let account = ServiceAccount::from_json(&twice).unwrap();
        assert_eq!(account.client_email, "a@b");
        assert_eq!(account.token_uri, DEFAULT_TOKEN_URI);
        assert!(!format!("{account:?}").contains("SECRETBYTES"));

        let not_a_key =
            serde_json::to_string(&serde_json::json!({"private_key": "SECRETBYTES"}).to_string()).unwrap();
        let err = ServiceAccount::from_json(&not_a_key).unwrap_err();
        assert!(!err.contains("SECRETBYTES"), "{err}");
        assert!(err.contains("not a key file"), "{err}");
    }
}
