//! Visitors: created on first contact, signed up and in, moved, slowed down, deleted.
//!
//! These functions write `users` (and move rows between owners), which `app_user` may not do, so
//! they run as the owner role.

use chrono::{DateTime, Duration, Utc};
use kakeibo_ledger::{LedgerError, OwnerId, OwnerRolePool};
use serde::Serialize;
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Visitor {
    pub id: Uuid,
    pub email: Option<String>,
    pub is_anonymous: bool,
    pub blocked: bool,
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
    #[error("already signed in; sign out first")]
    AlreadySignedIn,
    #[error("wrong email or password")]
    BadCredentials,
    #[error("too many failed sign-ins; try again in {retry_after_secs} s")]
    TooManyAttempts { retry_after_secs: i64 },
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

impl From<sqlx::Error> for AuthError {
    fn from(e: sqlx::Error) -> Self {
        Self::Ledger(LedgerError::Database(e))
    }
}

const VISITOR_COLUMNS: &str = "id, email, is_anonymous, blocked_at IS NOT NULL AS blocked";

/// A new anonymous visitor.
pub async fn create_anonymous(pool: &OwnerRolePool) -> Result<Visitor, AuthError> {
    Ok(sqlx::query_as::<_, Visitor>(sqlx::AssertSqlSafe(format!(
        "INSERT INTO users (is_anonymous) VALUES (true) RETURNING {VISITOR_COLUMNS}"
    )))
    .fetch_one(pool.get())
    .await?)
}

/// The visitor a session names, marking them seen; `None` when the user no longer exists.
pub async fn load(pool: &OwnerRolePool, owner: OwnerId) -> Result<Option<Visitor>, AuthError> {
    Ok(sqlx::query_as::<_, Visitor>(sqlx::AssertSqlSafe(format!(
        "UPDATE users SET last_seen_at = now() WHERE id = $1 RETURNING {VISITOR_COLUMNS}"
    )))
    .bind(owner.as_uuid())
    .fetch_optional(pool.get())
    .await?)
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
/// are already theirs, so nothing moves.
pub async fn sign_up(
    pool: &OwnerRolePool,
    current: &Visitor,
    email: &str,
    password: &str,
) -> Result<Visitor, AuthError> {
    if !current.is_anonymous {
        return Err(AuthError::AlreadySignedIn);
    }
    let email = normalise_email(email)?;
    password::check_strength(password)?;
    let phc = password::hash(password.to_owned()).await?;
    let updated = sqlx::query_as::<_, Visitor>(sqlx::AssertSqlSafe(format!(
        "UPDATE users SET email = $2, password_hash = $3, is_anonymous = false
         WHERE id = $1 AND is_anonymous RETURNING {VISITOR_COLUMNS}"
    )))
    .bind(current.id)
    .bind(&email)
    .bind(&phc)
    .fetch_optional(pool.get())
    .await;
    match updated {
        Ok(Some(visitor)) => Ok(visitor),
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
    let keys: Vec<String> = std::iter::once(format!("account:{email}"))
        .chain(address_key.map(|k| format!("address:{k}")))
        .collect();
    if let Some(wait) = throttled(pool, &keys, now).await? {
        return Err(AuthError::TooManyAttempts {
            retry_after_secs: wait.num_seconds().max(1),
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
        record_failure(pool, &keys, now).await?;
        return Err(AuthError::BadCredentials);
    };
    sqlx::query("DELETE FROM sign_in_failures WHERE key = $1")
        .bind(&keys[0])
        .execute(pool.get())
        .await?;
    let target = OwnerId::new(account_id);
    if let Some(anonymous) = current.filter(|v| v.is_anonymous && v.id != account_id) {
        move_visitor(pool, anonymous.owner(), target).await?;
    }
    load(pool, target).await?.ok_or(AuthError::BadCredentials)
}

/// A valid argon2id hash of a random password nobody knows.
const UNUSABLE_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$WDo7EJqTfjFrQ2O1g8HnxhsT7mQsPK5z2JrWcMyjTi0";

/// How long the caller must still wait, when any key has failed too often lately.
async fn throttled(
    pool: &OwnerRolePool,
    keys: &[String],
    now: DateTime<Utc>,
) -> Result<Option<Duration>, AuthError> {
    let rows: Vec<(i32, DateTime<Utc>)> =
        sqlx::query_as("SELECT failures, last_failed_at FROM sign_in_failures WHERE key = ANY($1)")
            .bind(keys)
            .fetch_all(pool.get())
            .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(failures, last)| {
            let wait = wait_after(failures);
            let until = last + wait;
            (until > now).then(|| until - now)
        })
        .max())
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

async fn record_failure(pool: &OwnerRolePool, keys: &[String], now: DateTime<Utc>) -> Result<(), AuthError> {
    sqlx::query(
        "INSERT INTO sign_in_failures (key, failures, last_failed_at) SELECT k, 1, $2 FROM unnest($1::text[]) AS k
         ON CONFLICT (key) DO UPDATE SET failures = sign_in_failures.failures + 1, last_failed_at = $2",
    )
    .bind(keys)
    .bind(now)
    .execute(pool.get())
    .await?;
    Ok(())
}

/// Moves `from`'s rows onto `to` and deletes `from`, in one transaction.
async fn move_visitor(pool: &OwnerRolePool, from: OwnerId, to: OwnerId) -> Result<(), AuthError> {
    let mut tx = pool.get().begin().await?;
    sqlx::query("SET CONSTRAINTS ALL DEFERRED")
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
    if !target_has_ledger {
        sqlx::query(
            "UPDATE users SET demo_cloned_at = coalesce(demo_cloned_at, (SELECT demo_cloned_at FROM users WHERE id = $1))
             WHERE id = $2",
        )
        .bind(from.as_uuid())
        .bind(to.as_uuid())
        .execute(&mut *tx)
        .await?;
    }
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
