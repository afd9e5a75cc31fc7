//! Passwords: argon2id in PHC strings, hashed off the async threads.

use argon2::{
    Argon2,
    password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash},
};

/// The shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 10;
/// The longest (argon2 is fed every byte; a bound keeps a request's cost bounded).
pub const MAX_PASSWORD_CHARS: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("the password must be {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters")]
    Length,
    #[error("hashing the password failed: {0}")]
    Hash(String),
}

pub fn check_strength(password: &str) -> Result<(), PasswordError> {
    let n = password.chars().count();
    if (MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&n) {
        Ok(())
    } else {
        Err(PasswordError::Length)
    }
}

/// The argon2id PHC string of `password`.
pub async fn hash(password: String) -> Result<String, PasswordError> {
    tokio::task::spawn_blocking(move || {
        Argon2::default()
            .hash_password(password.as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| PasswordError::Hash(e.to_string()))
    })
    .await
    .map_err(|e| PasswordError::Hash(e.to_string()))?
}

/// Whether `password` matches the stored PHC string (a malformed one matches nothing).
pub async fn verify(password: String, phc: String) -> bool {
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&phc).is_ok_and(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
    })
    .await
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let phc = hash("correct horse battery".into()).await.unwrap_or_default();
        assert!(phc.starts_with("$argon2id$"), "{phc}");
        assert!(verify("correct horse battery".into(), phc.clone()).await);
        assert!(!verify("correct horse battery!".into(), phc.clone()).await);
        assert!(!verify("anything".into(), "not a phc string".into()).await);
    }

    #[test]
    fn strength_is_a_length_range() {
        assert!(check_strength("short").is_err());
        assert!(check_strength("long enough pass").is_ok());
        assert!(check_strength(&"x".repeat(MAX_PASSWORD_CHARS + 1)).is_err());
    }
}
