//! kakeibo-identity: the outside services that vouch for a visitor, each a small HTTP client of
//! its own — [`google`], sign-in with Google (OpenID Connect: the authorisation code flow with
//! PKCE, the ID token checked against Google's keys), and [`bot_check`], Cloudflare Turnstile's
//! verdict on a browser. Neither knows sessions or the database: `kakeibo-auth` decides who a
//! visitor is, the functions ask these for evidence.

// A provider can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod bot_check;
pub mod google;

/// A setting of one of these services that cannot be used as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} is not valid: {why}")]
pub struct InvalidSetting {
    pub name: &'static str,
    pub why: String,
}

/// Refuses `value` for the setting `name` unless it is an http(s) URL.
pub(crate) fn http_url(name: &'static str, value: &str) -> Result<(), InvalidSetting> {
    let parsed = url::Url::parse(value).map_err(|e| InvalidSetting {
        name,
        why: e.to_string(),
    })?;
    if matches!(parsed.scheme(), "http" | "https") {
        Ok(())
    } else {
        Err(InvalidSetting {
            name,
            why: "it must be an http(s) URL".into(),
        })
    }
}

/// The settings of a service `switch` turns on: `None` while it is unset (the service is off);
/// else its value, the `partner` setting it then needs (an error saying `needed_for` when it is
/// missing), and the http(s) `endpoint` setting, `default` when unset.
pub(crate) fn service_settings(
    get: impl Fn(&str) -> Option<String>,
    switch: &'static str,
    (partner, needed_for): (&'static str, &str),
    (endpoint, default): (&'static str, &str),
) -> Result<Option<(String, String, String)>, InvalidSetting> {
    let Some(on) = get(switch) else {
        return Ok(None);
    };
    let partner_value = get(partner).ok_or_else(|| InvalidSetting {
        name: partner,
        why: format!("{switch} is set, so {needed_for}"),
    })?;
    let url = get(endpoint).unwrap_or_else(|| default.to_owned());
    http_url(endpoint, &url)?;
    Ok(Some((on, partner_value, url)))
}
