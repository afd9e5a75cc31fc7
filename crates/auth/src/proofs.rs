//! One-time links mailed to an account's address: one proves the address (`verify`), one sets a
//! new password (`reset`).
//!
//! A token is 32 random bytes in base64url; only its SHA-256 is stored, with the address it was
//! sent to, so a leaked table opens nothing and a token is good only while the account still has
//! that address. Issuing a token replaces the account's earlier ones of that purpose; using one
//! spends it. Mailing costs and can be aimed at somebody else's inbox, so every request for a
//! link counts against the address it names and the client's address, as sign-ins do.
//!
//! The functions here make and spend tokens; sending the mail is the caller's.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use chrono::{DateTime, Duration, Utc};
use kakeibo_ledger::{OwnerId, OwnerRolePool};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::password;
use crate::visitors::{AuthError, Visitor, count_attempt, normalise_email, whole_seconds};

/// How long a link that proves an address stays good.
pub const VERIFY_TTL: Duration = Duration::hours(48);
/// How long a password-reset link stays good.
pub const RESET_TTL: Duration = Duration::hours(1);

/// What a link is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Proves the account's address.
    Verify,
    /// Sets a new password.
    Reset,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Self::Verify => "verify",
            Self::Reset => "reset",
        }
    }

    fn ttl(self) -> Duration {
        match self {
            Self::Verify => VERIFY_TTL,
            Self::Reset => RESET_TTL,
        }
    }
}

/// A token to mail: `to` is the address, `token` goes into the link and nowhere else (never a
/// log line).
#[derive(Clone, PartialEq, Eq)]
pub struct Mailable {
    pub to: String,
    pub token: String,
    pub purpose: Purpose,
}

impl std::fmt::Debug for Mailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailable")
            .field("purpose", &self.purpose)
            .finish_non_exhaustive()
    }
}

fn digest(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

fn new_token() -> Result<String, AuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| AuthError::Random(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A new `purpose` token for the account `owner` at its present address, replacing its earlier
/// ones of that purpose; `None` when the account has no address (or, to verify, has proven it).
async fn issue(
    pool: &OwnerRolePool,
    owner: OwnerId,
    purpose: Purpose,
    now: DateTime<Utc>,
) -> Result<Option<Mailable>, AuthError> {
    let token = new_token()?;
    let mut tx = pool.get().begin().await?;
    let email: Option<String> = sqlx::query_scalar(
        "SELECT email FROM users
         WHERE id = $1 AND NOT is_anonymous AND email IS NOT NULL
           AND ($2 <> 'verify' OR email_verified_at IS NULL)
         FOR UPDATE",
    )
    .bind(owner.as_uuid())
    .bind(purpose.as_str())
    .fetch_optional(&mut *tx)
    .await?;
    let Some(email) = email else {
        return Ok(None);
    };
    sqlx::query("DELETE FROM email_tokens WHERE user_id = $1 AND (purpose = $2 OR expires_at < $3)")
        .bind(owner.as_uuid())
        .bind(purpose.as_str())
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO email_tokens (token_hash, user_id, purpose, email, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(digest(&token))
    .bind(owner.as_uuid())
    .bind(purpose.as_str())
    .bind(&email)
    .bind(now)
    .bind(now + purpose.ttl())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(Mailable {
        to: email,
        token,
        purpose,
    }))
}

/// Counts a request for a mail to `email` from `address_key`: five a day each, then waits that
/// double, as failed sign-ins do (never given back: every mail costs).
async fn count_mail(
    pool: &OwnerRolePool,
    email: &str,
    address_key: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), AuthError> {
    let keys: Vec<String> = std::iter::once(format!("mail:{email}"))
        .chain(address_key.map(|a| format!("mail-address:{a}")))
        .collect();
    match count_attempt(pool, &keys, now).await? {
        Some(wait) => Err(AuthError::TooManyAttempts {
            retry_after_secs: whole_seconds(wait),
        }),
        None => Ok(()),
    }
}

/// The link that proves a just-signed-up account's address (not counted: one per sign-up, which
/// is counted already). `None` when there is nothing to prove.
pub async fn verification_for_new_account(
    pool: &OwnerRolePool,
    visitor: &Visitor,
    now: DateTime<Utc>,
) -> Result<Option<Mailable>, AuthError> {
    issue(pool, visitor.owner(), Purpose::Verify, now).await
}

/// Another link to prove a signed-in account's address, counted against it and `address_key`;
/// `None` when it is proven already.
pub async fn request_verification(
    pool: &OwnerRolePool,
    visitor: &Visitor,
    address_key: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<Mailable>, AuthError> {
    let Some(email) = visitor.email.as_deref().filter(|_| !visitor.is_anonymous) else {
        return Ok(None);
    };
    if visitor.email_verified {
        return Ok(None);
    }
    count_mail(pool, email, address_key, now).await?;
    issue(pool, visitor.owner(), Purpose::Verify, now).await
}

/// A password-reset link for the account of `email`, counted against that address and
/// `address_key` whether or not the account exists. `None` when there is no such account, or it
/// is an operator's (whose password is set with `kakeibo operator add` only): the caller answers
/// the same either way, so nobody learns which addresses have accounts.
pub async fn request_reset(
    pool: &OwnerRolePool,
    email: &str,
    address_key: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<Mailable>, AuthError> {
    let email = normalise_email(email)?;
    count_mail(pool, &email, address_key, now).await?;
    let account: Option<Uuid> =
        sqlx::query_scalar("SELECT id FROM users WHERE email = $1 AND NOT is_anonymous AND NOT operator")
            .bind(&email)
            .fetch_optional(pool.get())
            .await?;
    match account {
        Some(id) => issue(pool, OwnerId::new(id), Purpose::Reset, now).await,
        None => Ok(None),
    }
}

/// The account a live `purpose` token belongs to, and its address (both rows locked when
/// `lock`).
async fn holder(
    executor: impl sqlx::PgExecutor<'_>,
    token: &str,
    purpose: Purpose,
    now: DateTime<Utc>,
    lock: bool,
) -> Result<(Uuid, String), AuthError> {
    let lock = if lock { "FOR UPDATE OF t, u" } else { "" };
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT u.id, u.email FROM email_tokens t JOIN users u ON u.id = t.user_id
         WHERE t.token_hash = $1 AND t.purpose = $2 AND t.used_at IS NULL AND t.expires_at > $3
           AND u.email = t.email AND NOT u.is_anonymous
         {lock}"
    )))
    .bind(digest(token))
    .bind(purpose.as_str())
    .bind(now)
    .fetch_optional(executor)
    .await?
    .ok_or(AuthError::BadToken)
}

/// Follows a link that proves an address: the account's address is proven from now on (its
/// sessions stay: proving an address takes nothing from anyone).
pub async fn confirm_email(pool: &OwnerRolePool, token: &str, now: DateTime<Utc>) -> Result<(), AuthError> {
    let mut tx = pool.get().begin().await?;
    let (user, _) = holder(&mut *tx, token, Purpose::Verify, now, true).await?;
    sqlx::query("UPDATE email_tokens SET used_at = $2 WHERE token_hash = $1")
        .bind(digest(token))
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE users SET email_verified_at = coalesce(email_verified_at, $2) WHERE id = $1")
        .bind(user)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Follows a password-reset link: the new password is set, the address counts as proven (the
/// link reached it), every reset link of the account is spent and every session of it ends.
/// A password the rules refuse leaves the link unspent, so the person can try another.
pub async fn reset_password(
    pool: &OwnerRolePool,
    token: &str,
    new_password: &str,
    now: DateTime<Utc>,
) -> Result<(), AuthError> {
    let (_, email) = holder(pool.get(), token, Purpose::Reset, now, false).await?;
    password::check_strength(new_password, Some(&email))?;
    let phc = password::hash(new_password.to_owned()).await?;
    let mut tx = pool.get().begin().await?;
    let (user, _) = holder(&mut *tx, token, Purpose::Reset, now, true).await?;
    sqlx::query(
        "UPDATE email_tokens SET used_at = $2 WHERE user_id = $1 AND purpose = 'reset' AND used_at IS NULL",
    )
    .bind(user)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE users SET password_hash = $2, email_verified_at = coalesce(email_verified_at, $3),
                session_epoch = session_epoch + 1
         WHERE id = $1",
    )
    .bind(user)
    .bind(&phc)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_stored_only_as_digests() {
        let a = new_token().unwrap_or_default();
        let b = new_token().unwrap_or_default();
        assert_eq!(a.len(), 43, "32 bytes in unpadded base64url");
        assert_ne!(a, b);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_eq!(digest(&a).len(), 32);
        assert_ne!(digest(&a), a.as_bytes());
    }

    #[test]
    fn a_mailable_never_prints_its_token_or_address() {
        let m = Mailable {
            to: "ana@example.com".into(),
            token: "secret-token".into(),
            purpose: Purpose::Reset,
        };
        let shown = format!("{m:?}");
        assert!(
            !shown.contains("secret-token") && !shown.contains("ana@"),
            "{shown}"
        );
    }
}
