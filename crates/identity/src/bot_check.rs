//! The bot check before a visitor's first message: a Cloudflare Turnstile token from the page,
//! verified server-side at the `siteverify` endpoint (its base URL a setting, so the suite uses a
//! local stand-in). Off unless `TURNSTILE_SECRET` is set. It fails closed: a token the endpoint
//! refuses, an answer that is not its JSON, an error or a timeout all refuse the message, before
//! anything is charged. A visitor who passed is remembered (`users.human_checked_at`), so the check
//! is asked once.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::InvalidSetting;

/// Cloudflare's verification endpoint.
pub const SITEVERIFY_URL: &str = "https://challenges.cloudflare.com/turnstile/v0/siteverify";

/// How long a verification may take before the message is refused.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Cloudflare's limit on a token's length; a longer one is refused without a call.
const MAX_TOKEN_CHARS: usize = 2048;

/// The check's settings: `TURNSTILE_SECRET` (server side), `TURNSTILE_SITE_KEY` (given to the
/// page), `TURNSTILE_VERIFY_URL` (the endpoint; Cloudflare's by default).
#[derive(Clone)]
pub struct BotCheckSettings {
    pub secret: String,
    pub site_key: String,
    pub verify_url: String,
}

impl std::fmt::Debug for BotCheckSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotCheckSettings")
            .field("site_key", &self.site_key)
            .field("verify_url", &self.verify_url)
            .finish_non_exhaustive()
    }
}

impl BotCheckSettings {
    /// `None` when `TURNSTILE_SECRET` is unset (the check is off); an error when it is set without
    /// a site key, or the endpoint is not an http(s) URL.
    pub fn from_settings(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, InvalidSetting> {
        let Some((secret, site_key, verify_url)) = crate::service_settings(
            get,
            "TURNSTILE_SECRET",
            (
                "TURNSTILE_SITE_KEY",
                "the page needs the site key that goes with it",
            ),
            ("TURNSTILE_VERIFY_URL", SITEVERIFY_URL),
        )?
        else {
            return Ok(None);
        };
        Ok(Some(Self {
            secret,
            site_key,
            verify_url,
        }))
    }
}

/// What the check decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// The endpoint refused the token; its error codes (`invalid-input-response`,
    /// `timeout-or-duplicate`, …).
    Failed(Vec<String>),
    /// No verdict could be had (an error, a timeout, an answer that is not the endpoint's):
    /// refused all the same.
    Unavailable(String),
}

/// Why the bot check refused a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BotRefusal {
    /// No token came with a message that needs one (`403`).
    Required,
    /// The endpoint refused the token (`403`).
    Failed,
    /// No verdict could be had (`503`): refused all the same.
    Unavailable,
}

impl BotRefusal {
    pub fn reason(self) -> &'static str {
        match self {
            Self::Required => "bot_check_required",
            Self::Failed => "bot_check_failed",
            Self::Unavailable => "bot_check_unavailable",
        }
    }

    /// A sentence for the person who was refused.
    pub fn message(self) -> &'static str {
        match self {
            Self::Required => {
                "this site asks for a quick check that you are a person before a visit starts; \
                 complete it and try again"
            }
            Self::Failed => "verification failed; reload the page and try again",
            Self::Unavailable => {
                "the check that you are a person cannot be verified right now; try again in a minute"
            }
        }
    }
}

/// The verifier a function keeps for its lifetime.
#[derive(Debug, Clone)]
pub struct BotCheck {
    settings: BotCheckSettings,
    client: reqwest::Client,
}

#[derive(Debug, Deserialize)]
struct Answer {
    success: bool,
    #[serde(default, rename = "error-codes")]
    error_codes: Vec<String>,
}

impl BotCheck {
    pub fn new(settings: BotCheckSettings) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder().timeout(TIMEOUT).build()?;
        Ok(Self { settings, client })
    }

    /// The site key the page renders the widget with.
    pub fn site_key(&self) -> &str {
        &self.settings.site_key
    }

    /// Asks the endpoint about `token`. The visitor's address is not sent (it is optional to
    /// the endpoint, and kakeibo keeps addresses to itself).
    pub async fn verify(&self, token: &str) -> Verdict {
        let token = token.trim();
        if token.is_empty() || token.chars().count() > MAX_TOKEN_CHARS {
            return Verdict::Failed(vec!["invalid-input-response".into()]);
        }
        let body = json!({"secret": self.settings.secret, "response": token});
        let response = match self
            .client
            .post(&self.settings.verify_url)
            .json(&body)
            .send()
            .await
        {
            Ok(response) => response,
            Err(e) if e.is_timeout() => return Verdict::Unavailable("the verification timed out".into()),
            Err(_) => return Verdict::Unavailable("the verification endpoint could not be reached".into()),
        };
        let status = response.status();
        if !status.is_success() {
            return Verdict::Unavailable(format!("the verification endpoint answered {status}"));
        }
        match response.json::<Answer>().await {
            Ok(Answer { success: true, .. }) => Verdict::Passed,
            Ok(Answer { error_codes, .. }) => Verdict::Failed(error_codes),
            Err(e) if e.is_timeout() => Verdict::Unavailable("the verification timed out".into()),
            Err(_) => Verdict::Unavailable("the verification endpoint's answer was not its JSON".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Result<Option<BotCheckSettings>, InvalidSetting> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        BotCheckSettings::from_settings(|name| map.get(name).cloned())
    }

    #[test]
    fn off_without_a_secret_and_refused_half_configured() {
        assert!(settings(&[]).unwrap_or_else(|e| panic!("{e}")).is_none());
        assert!(settings(&[("TURNSTILE_SECRET", "s")]).is_err());
        assert!(
            settings(&[
                ("TURNSTILE_SECRET", "s"),
                ("TURNSTILE_SITE_KEY", "k"),
                ("TURNSTILE_VERIFY_URL", "ftp://x")
            ])
            .is_err()
        );
        let on = settings(&[("TURNSTILE_SECRET", "s"), ("TURNSTILE_SITE_KEY", "k")])
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("on"));
        assert_eq!(on.verify_url, SITEVERIFY_URL);
        assert!(
            !format!("{on:?}").contains("\"s\""),
            "the secret stays out of Debug"
        );
    }
}
