//! Visitors: created on first contact, signed up and in, moved, slowed down, deleted.
//!
//! These functions write `users` (and move rows between owners), which `app_user` may not do, so
//! they run as the owner role.

use chrono::{DateTime, Duration, Utc};
use kakeibo_ledger::{LedgerError, OwnerId, OwnerRolePool};
use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

use crate::password::{self, PasswordError};

/// Failed sign-ins allowed per key before each further attempt has to wait.
pub const FREE_FAILURES: i32 = 5;
/// The longest wait after repeated failures.
pub const MAX_WAIT: Duration = Duration::minutes(15);

/// The tables whose rows belong to a visitor's ledger; they move only onto an account that has no
/// ledger yet (an existing ledger is never merged into).
const LEDGER_TABLES: &[&str] = &[
    "accounts",
    "import_batches",
    "import_plan_rows",
    "import_mappings",
    "transactions",
    "postings",
    "rules",
    "budgets",
];
/// What always follows the visitor onto the account.
const VISITOR_TABLES: &[&str] = &[
    "conversations",
    "conversation_messages",
    "suspended_turns",
    "trace_runs",
    "trace_events",
    "memories",
    "uploads",
];

/// A `users` row as the functions see it (one flag per column, hence the bools).
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Visitor {
    pub id: Uuid,
    pub email: Option<String>,
    pub is_anonymous: bool,
    pub blocked: bool,
    /// Made an operator by `kakeibo operator add` (never by signing up).
    pub operator: bool,
    /// Sessions issued before this epoch are over.
    pub session_epoch: i32,
    /// Whether the demo ledger was cloned into theirs already (so no request has to ask again).
    pub demo_cloned: bool,
    /// Whether they passed the bot check (asked before a first message when one is configured).
    pub human_checked: bool,
    /// Whether the address is proven: by the link mailed to it, or by Google.
    pub email_verified: bool,
}

impl Visitor {
    pub fn owner(&self) -> OwnerId {
        OwnerId::new(self.id)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("that is not an email address")]
    InvalidEmail,
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error("an account with that email exists; sign in instead")]
    EmailTaken,
    /// Google sign-in for an address whose password account never proved it: linking would hand
    /// the account to whoever claimed the address first.
    #[error(
        "an account with this address was made with a password, and the address was never \
         confirmed: sign in with that password first, or reset it by e-mail"
    )]
    UnprovenAddress,
    /// A mailed link that is unknown, used, expired, or for an address the account no longer has.
    #[error("this link is not valid any more: it was used, it expired, or it was replaced by a newer one")]
    BadToken,
    /// A password change on an account that has none (made with Google): a reset link sets one.
    #[error("this account has no password yet: set one with a reset link sent to its address")]
    NoPassword,
    #[error("already signed in; sign out first")]
    AlreadySignedIn,
    #[error("wrong email or password")]
    BadCredentials,
    #[error("too many failed sign-ins; try again in {retry_after_secs} s")]
    TooManyAttempts { retry_after_secs: i64 },
    /// An operator account is never signed in to through another provider: its password only.
    #[error("this account signs in with its password")]
    PasswordOnly,
    /// The system's random source failed (a token could not be made).
    #[error("no randomness for a token: {0}")]
    Random(String),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

kakeibo_ledger::database_errors_are_ledger_errors!(AuthError);

const VISITOR_COLUMNS: &str =
    "id, email, is_anonymous, blocked_at IS NOT NULL AS blocked, operator, session_epoch,
     demo_cloned_at IS NOT NULL AS demo_cloned, human_checked_at IS NOT NULL AS human_checked,
     email_verified_at IS NOT NULL AS email_verified";

/// A new anonymous visitor.
pub async fn create_anonymous(pool: &OwnerRolePool) -> Result<Visitor, AuthError> {
    Ok(sqlx::query_as::<_, Visitor>(sqlx::AssertSqlSafe(format!(
        "INSERT INTO users (is_anonymous) VALUES (true) RETURNING {VISITOR_COLUMNS}"
    )))
    .fetch_one(pool.get())
    .await?)
}

/// The visitor a session names, marking them seen (when last seen five minutes ago or more);
/// `None` when the user no longer exists.
///
/// Through the `app_user` pool, in one statement (`app_visitor`, migration 0015): row-level
/// security shows the visitor only their own row, and most requests only read it.
pub async fn load(app: &PgPool, owner: OwnerId) -> Result<Option<Visitor>, AuthError> {
    Ok(sqlx::query_as::<_, Visitor>(
        "SELECT id, email, is_anonymous, blocked, operator, session_epoch, demo_cloned, human_checked,
                email_verified
         FROM app_visitor($1)",
    )
    .bind(owner.as_uuid())
    .fetch_optional(app)
    .await?)
}

/// Records that the visitor passed the bot check (once; later calls keep the first moment).
pub async fn mark_human_checked(pool: &OwnerRolePool, owner: OwnerId) -> Result<(), AuthError> {
    sqlx::query("UPDATE users SET human_checked_at = coalesce(human_checked_at, now()) WHERE id = $1")
        .bind(owner.as_uuid())
        .execute(pool.get())
        .await?;
    Ok(())
}

/// The address in its stored form: trimmed, lower case; refused unless it looks like one.
pub fn normalise_email(email: &str) -> Result<String, AuthError> {
    let email = email.trim().to_lowercase();
    let valid = email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !domain.starts_with('.') && !domain.ends_with('.')
        });
    if valid {
        Ok(email)
    } else {
        Err(AuthError::InvalidEmail)
    }
}

/// Attaches an email and password to an anonymous visitor: their ledger, conversations and runs
/// are already theirs, so nothing moves. The session epoch moves on, so a token copied while the
/// visitor was anonymous does not become an account's session.
///
/// The address is only claimed: until the link mailed to it is followed
/// ([`crate::proofs::confirm_email`]) no identity provider joins the account.
///
/// Each attempt counts against the email and `address_key` exactly as a sign-in's does (the same
/// counters), so learning whether an address has an account costs as much here as there; a
/// sign-up that succeeds takes its attempt back.
pub async fn sign_up(
    pool: &OwnerRolePool,
    current: &Visitor,
    email: &str,
    password: &str,
    address_key: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Visitor, AuthError> {
    if !current.is_anonymous {
        return Err(AuthError::AlreadySignedIn);
    }
    let email = normalise_email(email)?;
    password::check_strength(password, Some(&email))?;
    let keys = attempt_keys(&email, address_key);
    if let Some(wait) = count_attempt(pool, &keys, now).await? {
        return Err(AuthError::TooManyAttempts {
            retry_after_secs: whole_seconds(wait),
        });
    }
    let phc = password::hash(password.to_owned()).await?;
    let updated = sqlx::query_as::<_, Visitor>(sqlx::AssertSqlSafe(format!(
        "UPDATE users SET email = $2, password_hash = $3, is_anonymous = false, session_epoch = session_epoch + 1
         WHERE id = $1 AND is_anonymous RETURNING {VISITOR_COLUMNS}"
    )))
    .bind(current.id)
    .bind(&email)
    .bind(&phc)
    .fetch_optional(pool.get())
    .await;
    match updated {
        Ok(Some(visitor)) => {
            take_back(pool, &keys).await?;
            Ok(visitor)
        }
        Ok(None) => Err(AuthError::AlreadySignedIn),
        Err(sqlx::Error::Database(e)) if e.constraint() == Some("users_email_key") => {
            Err(AuthError::EmailTaken)
        }
        Err(e) => Err(e.into()),
    }
}

/// Signs in with email and password. An anonymous `current` visitor's conversations, runs,
/// memories and uploads move onto the account — and its ledger too when the account has none —
/// in one transaction, and the anonymous visitor is deleted. `address_key` (the hashed client
/// address) is throttled alongside the account.
pub async fn sign_in(
    pool: &OwnerRolePool,
    current: Option<&Visitor>,
    email: &str,
    password: &str,
    address_key: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Visitor, AuthError> {
    let email = normalise_email(email).map_err(|_| AuthError::BadCredentials)?;
    let keys = attempt_keys(&email, address_key);
    if let Some(wait) = count_attempt(pool, &keys, now).await? {
        return Err(AuthError::TooManyAttempts {
            retry_after_secs: whole_seconds(wait),
        });
    }
    let account: Option<(Uuid, Option<String>)> =
        sqlx::query_as("SELECT id, password_hash FROM users WHERE email = $1 AND NOT is_anonymous")
            .bind(&email)
            .fetch_optional(pool.get())
            .await?;
    // Verify against a fixed hash when there is no account, so both paths take argon2's time.
    let phc = account
        .as_ref()
        .and_then(|(_, h)| h.clone())
        .unwrap_or_else(|| UNUSABLE_HASH.to_owned());
    let matches = password::verify(password.to_owned(), phc).await && account.is_some();
    let Some((account_id, _)) = account.filter(|_| matches) else {
        return Err(AuthError::BadCredentials);
    };
    take_back(pool, &keys).await?;
    let target = OwnerId::new(account_id);
    if let Some(anonymous) = current.filter(|v| v.is_anonymous && v.id != account_id) {
        move_visitor(pool, anonymous.owner(), target).await?;
    }
    load(pool.get(), target).await?.ok_or(AuthError::BadCredentials)
}

/// Signs in with a Google identity the caller verified (`subject` is Google's stable account id,
/// `email` its verified address): the account linked to `subject`; else the account of `email`,
/// linked now; else the anonymous `current` visitor made into that account (as a sign-up does,
/// keeping its rows); else a new account. An anonymous `current` visitor's rows move onto an
/// existing account exactly as with a password sign-in. Operator accounts are never linked.
///
/// Linking joins Google to an account only when that account's address is proven (its mailed
/// link was followed) or the person is signed in to it right now (they know its password): an
/// address claimed by a password sign-up and never proven is [`AuthError::UnprovenAddress`].
/// Otherwise whoever signed up with someone else's address would be handed their owner's visits.
/// A link ends every other session of the account (the caller issues a fresh one).
pub async fn sign_in_with_google(
    pool: &OwnerRolePool,
    current: Option<&Visitor>,
    subject: &str,
    email: &str,
) -> Result<Visitor, AuthError> {
    let email = normalise_email(email)?;
    let anonymous = current.filter(|v| v.is_anonymous);
    // Linked already, or an account of that email to link (an operator's is refused).
    let existing: Option<(Uuid, bool, Option<String>, bool)> = sqlx::query_as(
        "SELECT id, operator, google_sub, email_verified_at IS NOT NULL FROM users
         WHERE NOT is_anonymous AND (google_sub = $1 OR email = $2)
         ORDER BY (google_sub = $1) DESC NULLS LAST LIMIT 1",
    )
    .bind(subject)
    .bind(&email)
    .fetch_optional(pool.get())
    .await?;
    let target = match existing {
        Some((_, true, _, _)) => return Err(AuthError::PasswordOnly),
        Some((id, false, linked, proven)) => {
            if linked.as_deref() != Some(subject) {
                let signed_in_to_it = current.is_some_and(|v| v.id == id && !v.is_anonymous);
                if linked.is_none() && !proven && !signed_in_to_it {
                    return Err(AuthError::UnprovenAddress);
                }
                // The email's account, linked to this Google account from now on (unless another
                // Google account holds it: then this one is a stranger to it), its address proven
                // by Google, and every other session of it ended.
                let linked_now = sqlx::query(
                    "UPDATE users SET google_sub = $2, email_verified_at = coalesce(email_verified_at, now()),
                            session_epoch = session_epoch + 1
                     WHERE id = $1 AND google_sub IS NULL AND (email_verified_at IS NOT NULL OR $3)",
                )
                .bind(id)
                .bind(subject)
                .bind(signed_in_to_it)
                .execute(pool.get())
                .await?;
                if linked_now.rows_affected() == 0 {
                    return Err(AuthError::EmailTaken);
                }
            }
            OwnerId::new(id)
        }
        None => {
            let made = match anonymous {
                Some(visitor) => {
                    sqlx::query_scalar::<_, Uuid>(
                        "UPDATE users SET email = $2, google_sub = $3, is_anonymous = false,
                                email_verified_at = now(), session_epoch = session_epoch + 1
                         WHERE id = $1 AND is_anonymous RETURNING id",
                    )
                    .bind(visitor.id)
                    .bind(&email)
                    .bind(subject)
                    .fetch_optional(pool.get())
                    .await
                }
                None => {
                    sqlx::query_scalar::<_, Uuid>(
                        "INSERT INTO users (email, google_sub, is_anonymous, email_verified_at)
                         VALUES ($1, $2, false, now()) RETURNING id",
                    )
                    .bind(&email)
                    .bind(subject)
                    .fetch_optional(pool.get())
                    .await
                }
            };
            return match made {
                Ok(Some(id)) => load(pool.get(), OwnerId::new(id))
                    .await?
                    .ok_or(AuthError::BadCredentials),
                Ok(None) => Err(AuthError::AlreadySignedIn),
                // Made a moment ago by another request: the caller may try again, and link.
                Err(sqlx::Error::Database(e)) if e.constraint().is_some_and(|c| c.starts_with("users_")) => {
                    Err(AuthError::EmailTaken)
                }
                Err(e) => Err(e.into()),
            };
        }
    };
    if let Some(visitor) = anonymous.filter(|v| v.id != target.as_uuid()) {
        move_visitor(pool, visitor.owner(), target).await?;
    }
    load(pool.get(), target).await?.ok_or(AuthError::BadCredentials)
}

/// The counters an attempt on `email` from `address_key` counts against: the account's from that
/// address, and the address's. Never the account's alone: failures from one address would then
/// lock its owner out from every other. Without an address (a caller that has none), the
/// account's.
pub(crate) fn attempt_keys(email: &str, address_key: Option<&str>) -> Vec<String> {
    match address_key {
        Some(address) => vec![format!("account:{email}|{address}"), format!("address:{address}")],
        None => vec![format!("account:{email}")],
    }
}

/// A success clears the first key's count (the account's from this address) and takes this
/// attempt back from the address's.
async fn take_back(pool: &OwnerRolePool, keys: &[String]) -> Result<(), AuthError> {
    if let Some(account) = keys.first() {
        sqlx::query("DELETE FROM sign_in_failures WHERE key = $1")
            .bind(account)
            .execute(pool.get())
            .await?;
    }
    if let Some(address) = keys.get(1) {
        sqlx::query("UPDATE sign_in_failures SET failures = greatest(failures - 1, 0) WHERE key = $1")
            .bind(address)
            .execute(pool.get())
            .await?;
    }
    Ok(())
}

/// A wait as the whole seconds `Retry-After` gives: rounded up, so a client that waits exactly
/// that long is let in (rounding down told it to come back a second early), and at least one.
pub fn whole_seconds(wait: Duration) -> i64 {
    let millis = wait.num_milliseconds();
    (millis / 1000 + i64::from(millis % 1000 > 0)).max(1)
}

/// A valid argon2id hash of a random password nobody knows.
const UNUSABLE_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$WDo7EJqTfjFrQ2O1g8HnxhsT7mQsPK5z2JrWcMyjTi0";

/// Counts this attempt against every key before the password is checked, so concurrent guesses
/// are counted too; answers how long the caller must still wait when a key is over its free
/// attempts (the attempt is then not counted). A key untouched for a day starts again.
pub(crate) async fn count_attempt(
    pool: &OwnerRolePool,
    keys: &[String],
    now: DateTime<Utc>,
) -> Result<Option<Duration>, AuthError> {
    let mut tx = pool.get().begin().await?;
    for key in keys {
        let counted: Option<i32> = sqlx::query_scalar(
            "INSERT INTO sign_in_failures AS f (key, failures, last_failed_at) VALUES ($1, 1, $2)
             ON CONFLICT (key) DO UPDATE
                SET failures = CASE WHEN f.last_failed_at < $2 - interval '1 day' THEN 1 ELSE f.failures + 1 END,
                    last_failed_at = $2
                WHERE f.last_failed_at < $2 - interval '1 day'
                   OR f.failures < $3
                   OR f.last_failed_at + least(power(2, f.failures - $3), $4) * interval '1 second' <= $2
             RETURNING failures",
        )
        .bind(key)
        .bind(now)
        .bind(FREE_FAILURES)
        .bind(MAX_WAIT.num_seconds())
        .fetch_optional(&mut *tx)
        .await?;
        if counted.is_none() {
            let (failures, last): (i32, DateTime<Utc>) =
                sqlx::query_as("SELECT failures, last_failed_at FROM sign_in_failures WHERE key = $1")
                    .bind(key)
                    .fetch_one(&mut *tx)
                    .await?;
            tx.rollback().await?;
            return Ok(Some(last + wait_after(failures) - now));
        }
    }
    tx.commit().await?;
    Ok(None)
}

/// The wait after `failures` failed attempts: none for the first few, then doubling from 1 s up
/// to [`MAX_WAIT`].
pub fn wait_after(failures: i32) -> Duration {
    if failures < FREE_FAILURES {
        return Duration::zero();
    }
    let doublings = u32::try_from(failures - FREE_FAILURES)
        .unwrap_or(u32::MAX)
        .min(20);
    Duration::seconds(1i64 << doublings).min(MAX_WAIT)
}

/// Moves `from`'s rows onto `to` and deletes `from`, in one transaction.
async fn move_visitor(pool: &OwnerRolePool, from: OwnerId, to: OwnerId) -> Result<(), AuthError> {
    let mut tx = pool.get().begin().await?;
    // Both users locked (in id order), and the source still anonymous: a sign-up or another
    // sign-in racing this one either waits or finds nothing to move.
    let locked: Vec<(Uuid, bool)> =
        sqlx::query_as("SELECT id, is_anonymous FROM users WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(vec![from.as_uuid(), to.as_uuid()])
            .fetch_all(&mut *tx)
            .await?;
    if !locked
        .iter()
        .any(|(id, anonymous)| *id == from.as_uuid() && *anonymous)
    {
        return Ok(());
    }
    sqlx::query("SET CONSTRAINTS ALL DEFERRED")
        .execute(&mut *tx)
        .await?;
    // A memory the account already keeps stays once.
    sqlx::query(
        "DELETE FROM memories m WHERE m.owner_id = $1 AND EXISTS (
            SELECT 1 FROM memories t WHERE t.owner_id = $2 AND t.content = m.content
                AND t.category IS NOT DISTINCT FROM m.category)",
    )
    .bind(from.as_uuid())
    .bind(to.as_uuid())
    .execute(&mut *tx)
    .await?;
    let target_has_ledger: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM accounts WHERE owner_id = $1)")
            .bind(to.as_uuid())
            .fetch_one(&mut *tx)
            .await?;
    let tables = VISITOR_TABLES
        .iter()
        .chain(if target_has_ledger { &[][..] } else { LEDGER_TABLES });
    for table in tables {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET owner_id = $2 WHERE owner_id = $1"
        )))
        .bind(from.as_uuid())
        .bind(to.as_uuid())
        .execute(&mut *tx)
        .await?;
    }
    // A visit that passed the bot check passes it for the account it signs in to; a ledger moved
    // onto an account that had none brings its "demo cloned" mark with it.
    sqlx::query(
        "UPDATE users t SET
             human_checked_at = coalesce(t.human_checked_at, f.human_checked_at),
             demo_cloned_at = CASE WHEN $3 THEN t.demo_cloned_at ELSE coalesce(t.demo_cloned_at, f.demo_cloned_at) END
         FROM users f WHERE f.id = $1 AND t.id = $2",
    )
    .bind(from.as_uuid())
    .bind(to.as_uuid())
    .bind(target_has_ledger)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO owner_daily_messages (owner_id, day, count) SELECT $2, day, count FROM owner_daily_messages WHERE owner_id = $1
         ON CONFLICT (owner_id, day) DO UPDATE SET count = owner_daily_messages.count + excluded.count",
    )
    .bind(from.as_uuid())
    .bind(to.as_uuid())
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM users WHERE id = $1 AND is_anonymous")
        .bind(from.as_uuid())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Ends every session of the visitor (sign-out signs out everywhere).
pub async fn sign_out(pool: &OwnerRolePool, owner: OwnerId) -> Result<(), AuthError> {
    sqlx::query("UPDATE users SET session_epoch = session_epoch + 1 WHERE id = $1")
        .bind(owner.as_uuid())
        .execute(pool.get())
        .await?;
    Ok(())
}

/// Changes a signed-in account's password, with its current one (checked and throttled as a
/// sign-in is). Every session of the account ends, this one included: the caller issues a fresh
/// one from the visitor returned.
pub async fn change_password(
    pool: &OwnerRolePool,
    current: &Visitor,
    current_password: &str,
    new_password: &str,
    address_key: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Visitor, AuthError> {
    let (Some(email), false) = (current.email.as_deref(), current.is_anonymous) else {
        return Err(AuthError::BadCredentials);
    };
    let keys = attempt_keys(email, address_key);
    if let Some(wait) = count_attempt(pool, &keys, now).await? {
        return Err(AuthError::TooManyAttempts {
            retry_after_secs: whole_seconds(wait),
        });
    }
    let phc: Option<String> = sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1")
        .bind(current.id)
        .fetch_optional(pool.get())
        .await?
        .flatten();
    let Some(phc) = phc else {
        return Err(AuthError::NoPassword);
    };
    if !password::verify(current_password.to_owned(), phc.clone()).await {
        return Err(AuthError::BadCredentials);
    }
    take_back(pool, &keys).await?;
    password::check_strength(new_password, Some(email))?;
    let new_phc = password::hash(new_password.to_owned()).await?;
    // Only if the hash is still the one checked: two changes at once cannot both win.
    sqlx::query_as::<_, Visitor>(sqlx::AssertSqlSafe(format!(
        "UPDATE users SET password_hash = $3, session_epoch = session_epoch + 1
         WHERE id = $1 AND password_hash = $2 RETURNING {VISITOR_COLUMNS}"
    )))
    .bind(current.id)
    .bind(&phc)
    .bind(&new_phc)
    .fetch_optional(pool.get())
    .await?
    .ok_or(AuthError::BadCredentials)
}

/// Makes `email` an operator account with `password` (created, or taken over when it exists —
/// only the owner role can, from `kakeibo operator add`). Every earlier session of it ends.
pub async fn make_operator(pool: &OwnerRolePool, email: &str, password: &str) -> Result<Visitor, AuthError> {
    let email = normalise_email(email)?;
    password::check_strength(password, Some(&email))?;
    let phc = password::hash(password.to_owned()).await?;
    Ok(sqlx::query_as::<_, Visitor>(sqlx::AssertSqlSafe(format!(
        "INSERT INTO users (email, password_hash, is_anonymous, operator, email_verified_at)
         VALUES ($1, $2, false, true, now())
         ON CONFLICT (email) WHERE email IS NOT NULL DO UPDATE
            SET password_hash = excluded.password_hash, is_anonymous = false, operator = true,
                email_verified_at = coalesce(users.email_verified_at, now()),
                session_epoch = users.session_epoch + 1
         RETURNING {VISITOR_COLUMNS}"
    )))
    .bind(&email)
    .bind(&phc)
    .fetch_one(pool.get())
    .await?)
}

/// Takes the operator flag away from `email`; `false` when there is no such account.
pub async fn remove_operator(pool: &OwnerRolePool, email: &str) -> Result<bool, AuthError> {
    let email = normalise_email(email)?;
    let done =
        sqlx::query("UPDATE users SET operator = false, session_epoch = session_epoch + 1 WHERE email = $1")
            .bind(&email)
            .execute(pool.get())
            .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes a visitor and, by cascade, everything of theirs. `false` when there was no such user.
pub async fn delete_account(pool: &OwnerRolePool, owner: OwnerId) -> Result<bool, AuthError> {
    let done = sqlx::query("DELETE FROM users WHERE id = $1")
        .bind(owner.as_uuid())
        .execute(pool.get())
        .await?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {

    #[test]
    fn retry_after_rounds_up_so_a_client_that_waits_it_is_let_in() {
        assert_eq!(whole_seconds(Duration::milliseconds(1_900)), 2);
        assert_eq!(whole_seconds(Duration::milliseconds(2_000)), 2);
        assert_eq!(whole_seconds(Duration::milliseconds(2_001)), 3);
        assert_eq!(whole_seconds(Duration::milliseconds(100)), 1);
        assert_eq!(whole_seconds(Duration::zero()), 1);
    }

    use super::*;

    #[test]
    fn emails_are_normalised_and_checked() {
        assert_eq!(
            normalise_email("  Ana@Example.COM ").ok().as_deref(),
            Some("ana@example.com")
        );
        for bad in [
            "",
            "ana",
            "@example.com",
            "ana@",
            "ana@example",
            "a na@example.com",
            "ana@.com",
        ] {
            assert!(normalise_email(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn waits_start_after_the_free_failures_and_stop_growing() {
        assert_eq!(wait_after(0), Duration::zero());
        assert_eq!(wait_after(FREE_FAILURES - 1), Duration::zero());
        assert_eq!(wait_after(FREE_FAILURES), Duration::seconds(1));
        assert_eq!(wait_after(FREE_FAILURES + 3), Duration::seconds(8));
        assert_eq!(wait_after(1000), MAX_WAIT);
    }

    #[tokio::test]
    async fn the_unusable_hash_parses_and_matches_nothing_common() {
        assert!(!password::verify("password".into(), UNUSABLE_HASH.into()).await);
        assert!(!password::verify(String::new(), UNUSABLE_HASH.into()).await);
    }
}
