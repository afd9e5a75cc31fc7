//! Google sign-in through OpenID Connect (when `GOOGLE_CLIENT_ID` is set): the authorization code
//! flow with PKCE (S256), `state` and `nonce`. The flow's secrets (state, nonce, code verifier)
//! travel in a short-lived signed cookie, so any function instance can finish a flow another
//! started. The ID token is verified here, not trusted: its RS256 signature against the issuer's
//! published keys (JWKS, fetched again once when a key id is new), its issuer, audience, expiry and
//! nonce, and a verified email. The issuer's endpoints come from its discovery document
//! (`GOOGLE_ISSUER`, Google's by default), so the suite uses a local stand-in identity provider.

use std::time::Duration;

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use jsonwebtoken::{
    Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, decode_header, encode, jwk::JwkSet,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::{OnceCell, RwLock};

use crate::InvalidSetting;

/// Google's issuer (its discovery document is under it).
pub const GOOGLE_ISSUER: &str = "https://accounts.google.com";

/// How long a sign-in may take from the start to the callback.
pub const FLOW_TTL_SECS: i64 = 600;

/// The cookie that carries a flow's secrets between the start and the callback.
pub const FLOW_COOKIE: &str = "kakeibo_google";

/// How long one request to the identity provider may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// `GOOGLE_CLIENT_ID`, `GOOGLE_CLIENT_SECRET`, `GOOGLE_ISSUER`.
#[derive(Clone)]
pub struct GoogleSettings {
    pub client_id: String,
    pub client_secret: String,
    pub issuer: String,
}

impl std::fmt::Debug for GoogleSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleSettings")
            .field("client_id", &self.client_id)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl GoogleSettings {
    /// `None` when `GOOGLE_CLIENT_ID` is unset (Google sign-in is off); an error when it is set
    /// without its secret, or the issuer is not an http(s) URL.
    pub fn from_settings(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, InvalidSetting> {
        let Some((client_id, client_secret, issuer)) = crate::service_settings(
            get,
            "GOOGLE_CLIENT_ID",
            (
                "GOOGLE_CLIENT_SECRET",
                "the code exchange needs the client's secret",
            ),
            ("GOOGLE_ISSUER", GOOGLE_ISSUER),
        )?
        else {
            return Ok(None);
        };
        Ok(Some(Self {
            client_id,
            client_secret,
            issuer: issuer.trim_end_matches('/').to_owned(),
        }))
    }
}

/// Why a sign-in did not finish. `reason()` goes back to the page.
#[derive(Debug, thiserror::Error)]
pub enum GoogleError {
    /// The identity provider could not be asked (discovery, keys or the code exchange failed).
    #[error("Google could not be reached: {0}")]
    Unavailable(String),
    /// The flow's cookie is missing, expired, forged, or names another `state`.
    #[error("the sign-in flow is missing, expired or not this browser's")]
    Flow,
    /// The person declined, or Google answered the callback with an error.
    #[error("Google sign-in was cancelled")]
    Cancelled,
    /// The ID token failed verification (signature, issuer, audience, expiry, nonce).
    #[error("Google's answer could not be verified: {0}")]
    Token(String),
    /// The Google account's email is not verified.
    #[error("the Google account's email is not verified")]
    UnverifiedEmail,
}

impl GoogleError {
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Unavailable(_) => "google_unavailable",
            Self::Flow => "google_flow",
            Self::Cancelled => "google_cancelled",
            Self::Token(_) => "google_token",
            Self::UnverifiedEmail => "google_unverified_email",
        }
    }
}

/// A verified Google identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Google's stable id of the account (`sub`).
    pub subject: String,
    pub email: String,
}

#[derive(Debug, Clone, Deserialize)]
struct Discovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
}

/// The flow's secrets, signed into [`FLOW_COOKIE`].
#[derive(Debug, Serialize, Deserialize)]
struct Flow {
    state: String,
    nonce: String,
    verifier: String,
    exp: i64,
}

#[derive(Debug, Deserialize)]
struct TokenAnswer {
    id_token: String,
}

#[derive(Debug, Deserialize)]
struct IdClaims {
    sub: String,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    email_verified: Option<EmailVerified>,
    #[serde(default)]
    nonce: Option<String>,
}

/// Google sends `email_verified` as a boolean; some providers send the string.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum EmailVerified {
    Flag(bool),
    Text(String),
}

impl EmailVerified {
    fn is_true(&self) -> bool {
        match self {
            Self::Flag(flag) => *flag,
            Self::Text(text) => text == "true",
        }
    }
}

/// The client a function keeps: discovery fetched once, keys fetched when needed.
#[derive(Debug)]
pub struct Google {
    settings: GoogleSettings,
    client: reqwest::Client,
    discovery: OnceCell<Discovery>,
    keys: RwLock<Option<JwkSet>>,
}

/// A random URL-safe string of 128 bits or more.
fn random() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

impl Google {
    pub fn new(settings: GoogleSettings) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder().timeout(TIMEOUT).build()?;
        Ok(Self {
            settings,
            client,
            discovery: OnceCell::new(),
            keys: RwLock::new(None),
        })
    }

    async fn discovery(&self) -> Result<&Discovery, GoogleError> {
        self.discovery
            .get_or_try_init(|| async {
                let url = format!("{}/.well-known/openid-configuration", self.settings.issuer);
                let found: Discovery = self.get_json(&url).await?;
                if found.issuer.trim_end_matches('/') != self.settings.issuer {
                    return Err(GoogleError::Unavailable(
                        "the discovery document names another issuer".into(),
                    ));
                }
                Ok(found)
            })
            .await
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, GoogleError> {
        let response = self
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| GoogleError::Unavailable(what_broke(&e)))?;
        if !response.status().is_success() {
            return Err(GoogleError::Unavailable(format!(
                "it answered {}",
                response.status()
            )));
        }
        response
            .json()
            .await
            .map_err(|_| GoogleError::Unavailable("its answer was not the JSON expected".into()))
    }

    /// Starts a sign-in: where to send the browser, and the flow cookie's value (signed with
    /// `key`) to set on the way.
    pub async fn start(
        &self,
        redirect_uri: &str,
        key: &[u8],
        now: i64,
    ) -> Result<(String, String), GoogleError> {
        let discovery = self.discovery().await?;
        let flow = Flow {
            state: random(),
            nonce: random(),
            verifier: random(),
            exp: now + FLOW_TTL_SECS,
        };
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(flow.verifier.as_bytes()));
        let mut location = url::Url::parse(&discovery.authorization_endpoint)
            .map_err(|_| GoogleError::Unavailable("its authorization endpoint is not a URL".into()))?;
        location
            .query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.settings.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", "openid email")
            .append_pair("state", &flow.state)
            .append_pair("nonce", &flow.nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("prompt", "select_account");
        let signed = |flow: &Flow| {
            let key = EncodingKey::from_secret(key)?;
            encode(&Header::new(Algorithm::HS256), flow, &key)
        };
        let cookie = signed(&flow)
            .map_err(|e| GoogleError::Unavailable(format!("the flow could not be signed: {e}")))?;
        Ok((location.into(), cookie))
    }

    /// Finishes a sign-in at the callback: the flow cookie checked against `state`, the code
    /// exchanged (with the PKCE verifier), and the ID token verified.
    pub async fn finish(
        &self,
        redirect_uri: &str,
        cookie: Option<&str>,
        code: &str,
        state: &str,
        key: &[u8],
    ) -> Result<Identity, GoogleError> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.required_spec_claims = ["exp".to_owned()].into();
        let flow_key = DecodingKey::from_secret(key).map_err(|_| GoogleError::Flow)?;
        let flow = cookie
            .and_then(|c| decode::<Flow>(c, &flow_key, &validation).ok())
            .map(|data| data.claims)
            .filter(|flow| !state.is_empty() && flow.state == state)
            .ok_or(GoogleError::Flow)?;
        let discovery = self.discovery().await?;
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", code)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("client_id", &self.settings.client_id)
            .append_pair("client_secret", &self.settings.client_secret)
            .append_pair("code_verifier", &flow.verifier)
            .finish();
        let response = self
            .client
            .post(&discovery.token_endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| GoogleError::Unavailable(what_broke(&e)))?;
        let status = response.status();
        if status.is_client_error() {
            // invalid_grant and friends: a code that is used, expired, or not this verifier's.
            return Err(GoogleError::Token(format!(
                "the code exchange was refused ({status})"
            )));
        }
        if !status.is_success() {
            return Err(GoogleError::Unavailable(format!(
                "the code exchange answered {status}"
            )));
        }
        let answer: TokenAnswer = response.json().await.map_err(|_| {
            GoogleError::Unavailable("the code exchange's answer was not the JSON expected".into())
        })?;
        self.verify(&answer.id_token, &flow.nonce, discovery).await
    }

    /// The ID token's claims, once its signature, issuer, audience, expiry and nonce hold.
    async fn verify(&self, token: &str, nonce: &str, discovery: &Discovery) -> Result<Identity, GoogleError> {
        let header = decode_header(token).map_err(|e| GoogleError::Token(e.to_string()))?;
        if header.alg != Algorithm::RS256 {
            return Err(GoogleError::Token(format!(
                "it is signed with {:?}, not RS256",
                header.alg
            )));
        }
        let kid = header
            .kid
            .ok_or_else(|| GoogleError::Token("it names no key".into()))?;
        let key = self.key(&kid, &discovery.jwks_uri).await?;
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_audience(&[&self.settings.client_id]);
        // Google writes its issuer with and without the scheme.
        let bare = self.settings.issuer.trim_start_matches("https://");
        validation.set_issuer(&[self.settings.issuer.as_str(), bare]);
        validation.required_spec_claims = ["exp", "iss", "aud", "sub"].map(str::to_owned).into();
        let claims = decode::<IdClaims>(token, &key, &validation)
            .map_err(|e| GoogleError::Token(e.to_string()))?
            .claims;
        if claims.nonce.as_deref() != Some(nonce) {
            return Err(GoogleError::Token("its nonce is not this flow's".into()));
        }
        let email = claims
            .email
            .filter(|_| claims.email_verified.as_ref().is_some_and(EmailVerified::is_true))
            .ok_or(GoogleError::UnverifiedEmail)?;
        Ok(Identity {
            subject: claims.sub,
            email,
        })
    }

    /// The issuer's key `kid`, from the cached key set, or the set fetched again once.
    async fn key(&self, kid: &str, jwks_uri: &str) -> Result<DecodingKey, GoogleError> {
        if let Some(set) = self.keys.read().await.as_ref()
            && let Some(jwk) = set.find(kid)
        {
            return DecodingKey::from_jwk(jwk).map_err(|e| GoogleError::Token(e.to_string()));
        }
        let set: JwkSet = self.get_json(jwks_uri).await?;
        let key = set
            .find(kid)
            .map(DecodingKey::from_jwk)
            .transpose()
            .map_err(|e| GoogleError::Token(e.to_string()))?;
        *self.keys.write().await = Some(set);
        key.ok_or_else(|| GoogleError::Token("it is signed with a key the issuer does not publish".into()))
    }
}

/// What broke in a request, without its URL.
fn what_broke(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "it timed out".into()
    } else if error.is_connect() {
        "it could not be reached".into()
    } else {
        "the request failed".into()
    }
}

/// The key that signs flow cookies: derived from the session key, so neither kind of token can
/// pass for the other.
pub fn flow_key(jwt_secret: &str) -> Vec<u8> {
    Sha256::digest(format!("kakeibo google flow|{jwt_secret}").as_bytes()).to_vec()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn off_without_a_client_id_and_refused_half_configured() {
        let settings = |pairs: &[(&str, &str)]| {
            let map: BTreeMap<String, String> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            GoogleSettings::from_settings(|name| map.get(name).cloned())
        };
        assert!(settings(&[]).unwrap_or_else(|e| panic!("{e}")).is_none());
        assert!(settings(&[("GOOGLE_CLIENT_ID", "id")]).is_err());
        let on = settings(&[("GOOGLE_CLIENT_ID", "id"), ("GOOGLE_CLIENT_SECRET", "shh")])
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("on"));
        assert_eq!(on.issuer, GOOGLE_ISSUER);
        assert!(!format!("{on:?}").contains("shh"));
    }

    #[test]
    fn the_flow_key_is_not_the_session_key() {
        assert_ne!(flow_key("s").as_slice(), b"s");
        assert_eq!(flow_key("s"), flow_key("s"));
        assert_ne!(flow_key("s"), flow_key("t"));
    }
}
