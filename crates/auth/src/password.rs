//! Passwords: argon2id in PHC strings, hashed off the async threads; a new one is refused when
//! it is blank or easy to guess (zxcvbn's offline estimate, with the account's address as a hint).

use argon2::{
    Argon2,
    password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash},
};

/// The shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 10;
/// The longest (argon2 is fed every byte; a bound keeps a request's cost bounded).
pub const MAX_PASSWORD_CHARS: usize = 256;

/// The least zxcvbn score a new password needs: `Three` is "safely unguessable" (about 10^10
/// guesses), what an offline attack on a slow hash should not reach.
pub const LEAST_SCORE: zxcvbn::Score = zxcvbn::Score::Three;
/// zxcvbn's matching grows faster than linearly; past this many characters a password is long
/// enough that its head decides.
const ESTIMATED_CHARS: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("the password must be {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters")]
    Length,
    #[error("the password cannot be only spaces")]
    Blank,
    /// zxcvbn's estimate is under [`LEAST_SCORE`]; the sentence says why in its words.
    #[error("this password is too easy to guess{0}")]
    Guessable(String),
    #[error("hashing the password failed: {0}")]
    Hash(String),
}

/// Whether `password` may be a new password of the account of `email` (its parts are hints
/// zxcvbn penalises): the length range, not blank, and not guessable.
pub fn check_strength(password: &str, email: Option<&str>) -> Result<(), PasswordError> {
    let n = password.chars().count();
    if !(MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&n) {
        return Err(PasswordError::Length);
    }
    if password.trim().is_empty() {
        return Err(PasswordError::Blank);
    }
    let head: String = password.chars().take(ESTIMATED_CHARS).collect();
    let local = email.and_then(|e| e.split_once('@')).map(|(local, _)| local);
    let hints: Vec<&str> = email
        .into_iter()
        .chain(local)
        .chain(email.into_iter().flat_map(|e| e.split(['@', '.', '+', '_', '-'])))
        .filter(|part| part.len() >= 3)
        .chain(["kakeibo", "household", "ledger"])
        .collect();
    let estimate = zxcvbn::zxcvbn(&head, &hints);
    if estimate.score() >= LEAST_SCORE {
        return Ok(());
    }
    let why = estimate
        .feedback()
        .map(|f| {
            f.warning()
                .map(|w| w.to_string())
                .into_iter()
                .chain(f.suggestions().iter().map(ToString::to_string))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|s| !s.is_empty())
        .map_or_else(String::new, |s| format!(": {s}"));
    Err(PasswordError::Guessable(why))
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
    fn strength_is_a_length_range_then_an_estimate() {
        assert!(matches!(
            check_strength("short", None),
            Err(PasswordError::Length)
        ));
        assert!(check_strength("a long enough password", None).is_ok());
        assert!(matches!(
            check_strength(&"x".repeat(MAX_PASSWORD_CHARS + 1), None),
            Err(PasswordError::Length)
        ));
        // The longest accepted password is estimated quickly and passes on its length.
        let mut seed = 7u32;
        let long: String = (0..MAX_PASSWORD_CHARS)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'a' + u8::try_from((seed >> 16) % 26).unwrap_or(0))
            })
            .collect();
        assert!(check_strength(&long, None).is_ok());
    }

    #[test]
    fn blank_common_and_personal_passwords_are_refused_with_a_reason() {
        assert!(matches!(
            check_strength("          ", None),
            Err(PasswordError::Blank)
        ));
        assert!(matches!(
            check_strength(" \t  \u{a0}       ", None),
            Err(PasswordError::Blank)
        ));
        for weak in [
            "password123",
            "1234567890",
            "qwertyuiop",
            "aaaaaaaaaaaa",
            "iloveyou12",
        ] {
            let refused = check_strength(weak, None);
            assert!(
                matches!(refused, Err(PasswordError::Guessable(_))),
                "{weak}: {refused:?}"
            );
        }
        // Strong alone, weak when it is the account's own address.
        let own = check_strength("figueroa2024", Some("mariana.figueroa@example.com"));
        assert!(matches!(own, Err(PasswordError::Guessable(_))), "{own:?}");
        let Err(e) = check_strength("password123", None) else {
            unreachable!()
        };
        assert!(
            e.to_string().starts_with("this password is too easy to guess: "),
            "{e}"
        );
    }
}
