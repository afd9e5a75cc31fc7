//! Sessions: an HS256 JWT in the `kakeibo_session` cookie, short-lived and renewed as it is used.

use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, encode};
use kakeibo_ledger::OwnerId;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub const SESSION_COOKIE: &str = "kakeibo_session";
/// The session cookie's name on an HTTPS site: the `__Host-` prefix makes a browser take it only
/// from this very host, over HTTPS, for the whole site, so no other subdomain can plant or
/// shadow it.
pub const SECURE_SESSION_COOKIE: &str = "__Host-kakeibo_session";
/// How long a session lasts without use.
pub const SESSION_TTL: Duration = Duration::hours(12);
/// A session older than this is re-issued on its next use (sliding renewal).
pub const RENEW_AFTER: Duration = Duration::minutes(10);
/// The shortest `JWT_SECRET` accepted.
pub const MIN_SECRET_BYTES: usize = 32;
const ISSUER: &str = "kakeibo";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The visitor (a `users` row).
    pub sub: Uuid,
    pub iat: i64,
    pub exp: i64,
    pub iss: String,
    /// The visitor's session epoch when issued; a later epoch (sign-up, sign-out) ends it.
    pub ver: i32,
}

impl Claims {
    pub fn owner(&self) -> OwnerId {
        OwnerId::new(self.sub)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("JWT_SECRET must be at least {MIN_SECRET_BYTES} bytes")]
    WeakSecret,
    /// Past its expiry, or issued in the future.
    #[error("the session has expired")]
    Expired,
    /// Tampered with, or signed with another key, algorithm or issuer: not one this site issued.
    #[error("the session was not issued by this site")]
    NotOurs,
    /// Not a token at all: its shape, encoding or claims are wrong.
    #[error("the session is not a token")]
    Malformed,
    /// A new token could not be signed: never the visitor's doing.
    #[error("a session could not be signed")]
    Signing(#[source] jsonwebtoken::errors::Error),
}

impl SessionError {
    /// What a token that failed verification was.
    fn of_token(error: &jsonwebtoken::errors::Error) -> Self {
        use jsonwebtoken::errors::ErrorKind;
        match error.kind() {
            ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => Self::Expired,
            ErrorKind::InvalidSignature
            | ErrorKind::InvalidAlgorithm
            | ErrorKind::MissingAlgorithm
            | ErrorKind::InvalidAlgorithmName
            | ErrorKind::UnsupportedAlgorithm
            | ErrorKind::InvalidIssuer
            | ErrorKind::InvalidAudience
            | ErrorKind::InvalidSubject => Self::NotOurs,
            _ => Self::Malformed,
        }
    }
}

/// Issues and checks session tokens with one secret.
#[derive(Clone)]
pub struct Sessions {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    /// `Secure` on the cookie; dropped only when the site is plain-http localhost.
    secure: bool,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("secure", &self.secure)
            .finish_non_exhaustive()
    }
}

impl Sessions {
    pub fn new(secret: &[u8], secure: bool) -> Result<Self, SessionError> {
        if secret.len() < MIN_SECRET_BYTES {
            return Err(SessionError::WeakSecret);
        }
        let encoding = EncodingKey::from_secret(secret).map_err(|_| SessionError::WeakSecret)?;
        let decoding = DecodingKey::from_secret(secret).map_err(|_| SessionError::WeakSecret)?;
        let mut validation = Validation::new(Algorithm::HS256);
        validation.algorithms = vec![Algorithm::HS256];
        validation.leeway = 5;
        validation.set_issuer(&[ISSUER]);
        validation.set_required_spec_claims(&["exp", "iat", "sub", "iss"]);
        // `ver` is required too: Claims has no default for it, so a token without it is invalid.
        Ok(Self {
            encoding,
            decoding,
            validation,
            secure,
        })
    }

    /// A fresh token for `owner` in session epoch `epoch`, valid for [`SESSION_TTL`] from `now`.
    pub fn issue(&self, owner: OwnerId, epoch: i32, now: DateTime<Utc>) -> Result<String, SessionError> {
        let claims = Claims {
            sub: owner.as_uuid(),
            iat: now.timestamp(),
            exp: (now + SESSION_TTL).timestamp(),
            iss: ISSUER.to_owned(),
            ver: epoch,
        };
        encode(&Header::new(Algorithm::HS256), &claims, &self.encoding).map_err(SessionError::Signing)
    }

    /// The claims of a valid token (signature, algorithm, issuer and expiry checked).
    pub fn verify(&self, token: &str) -> Result<Claims, SessionError> {
        decode::<Claims>(token, &self.decoding, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| SessionError::of_token(&e))
    }

    /// Whether a valid session should be re-issued now (sliding renewal).
    pub fn needs_renewal(claims: &Claims, now: DateTime<Utc>) -> bool {
        now.timestamp() - claims.iat >= RENEW_AFTER.num_seconds()
    }

    /// The session cookie's name: [`SECURE_SESSION_COOKIE`] on an HTTPS site, else
    /// [`SESSION_COOKIE`] (a `__Host-` cookie needs `Secure`, which plain-http localhost lacks).
    pub fn cookie_name(&self) -> &'static str {
        if self.secure {
            SECURE_SESSION_COOKIE
        } else {
            SESSION_COOKIE
        }
    }

    /// The `Set-Cookie` value carrying `token`.
    pub fn cookie(&self, token: &str) -> String {
        format!(
            "{}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{}",
            self.cookie_name(),
            SESSION_TTL.num_seconds(),
            if self.secure { "; Secure" } else { "" }
        )
    }

    /// The `Set-Cookie` value that removes the session.
    pub fn clear_cookie(&self) -> String {
        format!(
            "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{}",
            self.cookie_name(),
            if self.secure { "; Secure" } else { "" }
        )
    }

    /// The session token in the `Cookie` headers, under this site's cookie name only (the last
    /// one wins when repeated).
    pub fn token_from_cookies<'a>(&self, headers: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
        token_named(headers, self.cookie_name())
    }
}

/// The value of the cookie `name` in `Cookie` headers, if any and not empty (the last wins).
fn token_named<'a>(headers: impl IntoIterator<Item = &'a str>, name: &str) -> Option<&'a str> {
    headers
        .into_iter()
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(key, _)| *key == name)
        .map(|(_, value)| value.trim())
        .last()
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions() -> Sessions {
        Sessions::new(&[7u8; 32], true).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_token_round_trips_and_names_its_owner() {
        let s = sessions();
        let owner = OwnerId::new(Uuid::new_v4());
        let token = s.issue(owner, 3, Utc::now()).unwrap_or_default();
        let claims = s.verify(&token).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(claims.owner(), owner);
        assert_eq!(claims.ver, 3);
        assert!(!Sessions::needs_renewal(&claims, Utc::now()));
        assert!(Sessions::needs_renewal(&claims, Utc::now() + RENEW_AFTER));
    }

    #[test]
    fn a_failed_token_says_why() {
        let s = sessions();
        let owner = OwnerId::new(Uuid::new_v4());
        let stale = s
            .issue(owner, 0, Utc::now() - SESSION_TTL - Duration::minutes(1))
            .unwrap_or_default();
        assert!(matches!(s.verify(&stale), Err(SessionError::Expired)));
        let other = Sessions::new(&[8u8; 32], true).unwrap_or_else(|e| panic!("{e}"));
        let foreign = other.issue(owner, 0, Utc::now()).unwrap_or_default();
        assert!(matches!(s.verify(&foreign), Err(SessionError::NotOurs)));
        let token = s.issue(owner, 0, Utc::now()).unwrap_or_default();
        let (unsigned, _) = token.rsplit_once('.').unwrap_or_default();
        assert!(matches!(
            s.verify(&format!("{unsigned}.AAAA")),
            Err(SessionError::NotOurs)
        ));
        for junk in ["", "abc", "a.b.c", "\u{0}.\u{0}.\u{0}"] {
            assert!(matches!(s.verify(junk), Err(SessionError::Malformed)), "{junk:?}");
        }
    }

    #[test]
    fn short_secrets_are_refused() {
        assert!(matches!(
            Sessions::new(b"short", true),
            Err(SessionError::WeakSecret)
        ));
    }

    #[test]
    fn the_cookie_is_http_only_lax_and_host_bound_and_secure_unless_local() {
        let cookie = sessions().cookie("abc");
        assert!(
            cookie.starts_with("__Host-kakeibo_session=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=43200"),
            "{cookie}"
        );
        assert!(cookie.ends_with("; Secure") && !cookie.contains("Domain"));
        assert!(
            sessions()
                .clear_cookie()
                .starts_with("__Host-kakeibo_session=; Path=/")
        );
        let local = Sessions::new(&[7u8; 32], false).unwrap_or_else(|e| panic!("{e}"));
        assert!(local.cookie("abc").starts_with("kakeibo_session=abc; "));
        assert!(!local.cookie("abc").contains("Secure"));
        assert!(local.clear_cookie().contains("Max-Age=0"));
    }

    #[test]
    fn the_token_is_found_among_other_cookies_under_the_sites_name_only() {
        let local = Sessions::new(&[7u8; 32], false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            local.token_from_cookies(["a=1; kakeibo_session=tok; b=2"]),
            Some("tok")
        );
        assert_eq!(local.token_from_cookies(["a=1", "kakeibo_session=x"]), Some("x"));
        assert_eq!(local.token_from_cookies(["kakeibo_session="]), None);
        assert_eq!(local.token_from_cookies(["other=1"]), None);
        // On HTTPS a cookie without the prefix (one a subdomain could plant) is not the session.
        let https = sessions();
        assert_eq!(https.token_from_cookies(["kakeibo_session=planted"]), None);
        assert_eq!(
            https.token_from_cookies(["kakeibo_session=planted; __Host-kakeibo_session=real"]),
            Some("real")
        );
    }
}
