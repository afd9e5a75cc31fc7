//! The settings of a function, read once per process.
//!
//! Locally they come from the environment. In Lambda, `SECRETS_ARN` names a Secrets Manager
//! secret whose JSON object holds the sensitive ones (`JWT_SECRET`, `RATE_LIMIT_SALT`, provider
//! keys, database URLs); its values win over the environment's.

use std::collections::BTreeMap;

use kakeibo_operator::{admin::AdminAllowlist, quota::QuotaLimits};

use crate::secrets;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} is not set")]
    Missing(&'static str),
    #[error("{name} is not valid: {why}")]
    Invalid { name: &'static str, why: String },
    #[error("reading the secret {arn}: {why}")]
    Secret { arn: String, why: String },
    #[error(transparent)]
    Identity(#[from] kakeibo_identity::InvalidSetting),
}

/// The public site: the only origin allowed to send cookie-authenticated writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// `scheme://host[:port]`, lower case, no path.
    pub origin: String,
    /// `host[:port]`.
    pub host: String,
    /// `https`, or plain http off localhost: the session cookie is `Secure`.
    pub secure_cookies: bool,
}

impl Site {
    pub fn parse(url: &str) -> Result<Self, ConfigError> {
        let invalid = |why: &str| ConfigError::Invalid {
            name: "SITE_URL",
            why: why.to_owned(),
        };
        let url = url.trim().trim_end_matches('/').to_lowercase();
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| invalid("expected scheme://host"))?;
        if scheme != "http" && scheme != "https" {
            return Err(invalid("the scheme must be http or https"));
        }
        if rest.is_empty() || rest.contains('/') {
            return Err(invalid("expected scheme://host[:port] without a path"));
        }
        let hostname = rest.rsplit_once(':').map_or(rest, |(h, _)| h);
        let local = matches!(hostname, "localhost" | "127.0.0.1" | "[::1]");
        if scheme == "http" && !local {
            return Err(invalid("plain http is only allowed for localhost"));
        }
        Ok(Self {
            origin: format!("{scheme}://{rest}"),
            host: rest.to_owned(),
            secure_cookies: !(scheme == "http" && local),
        })
    }
}

/// Everything a function needs, parsed and checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// The owner role (admin module, quota gate, visitors).
    pub database_url: String,
    /// `app_user`, under row-level security (all owner-scoped work). Falls back to
    /// `database_url` when unset, which turns the RLS backstop off — said at start.
    pub app_database_url: Option<String>,
    pub jwt_secret: String,
    pub rate_limit_salt: String,
    pub site: Site,
    pub admins: AdminAllowlist,
    pub quotas: QuotaLimits,
    /// A header a trusted proxy in front sets to the client's address (`CloudFront-Viewer-Address`
    /// behind CloudFront); its last entry is used. `None`: the gateway's source address.
    pub client_address_header: Option<String>,
    /// Connections per pool (a Lambda instance serves one request at a time).
    pub pool_size: u32,
    /// What the CDN in front sends in `X-Origin-Verify`; when set, requests without it are
    /// refused (the API's own address is public).
    pub origin_verify: Option<String>,
    /// The bot check before a visitor's first message (`TURNSTILE_SECRET`, `TURNSTILE_SITE_KEY`,
    /// `TURNSTILE_VERIFY_URL`); `None`: off.
    pub bot_check: Option<kakeibo_identity::bot_check::BotCheckSettings>,
    /// Google sign-in (`GOOGLE_CLIENT_ID`, `GOOGLE_CLIENT_SECRET`, `GOOGLE_ISSUER`); `None`: off.
    pub google: Option<kakeibo_identity::google::GoogleSettings>,
    /// Mail (`MAIL_OUTBOX` locally, `MAIL_FROM` through SES); `None`: off.
    pub mail: Option<crate::mail::MailSettings>,
    /// What the agent does with an answer's figure no tool returned (`FIGURES`: `flag`, the
    /// default, or `retry`).
    pub figures: kakeibo_core::FiguresPolicy,
    /// Whether the agent keeps a task list for long work (`TASK_LIST=on`; off by default, where
    /// every model call is a visitor's cost), shown in the answer's margin.
    pub task_list: bool,
    /// Whether the agent may hand work to subagents (`SUBAGENTS=on`; off by default, for the
    /// same reason): a subagent here is offered only the read tools (a write waits for the
    /// visitor, which a subagent's turn cannot), and is shown in the answer's margin.
    pub subagents: bool,
    /// Every setting, for the provider selection (`KAKEIBO_PROVIDER`, keys, models).
    pub vars: BTreeMap<String, String>,
}

/// An operator's switch: `on`, or `off` (the default).
fn switch(get: &dyn Fn(&str) -> Option<String>, name: &'static str) -> Result<bool, ConfigError> {
    match get(name).as_deref() {
        None | Some("off") => Ok(false),
        Some("on") => Ok(true),
        Some(other) => Err(ConfigError::Invalid {
            name,
            why: format!("{other:?} is neither on nor off"),
        }),
    }
}

/// Every setting a function reads, for the deployment template's check (`infra/`): each must be
/// set there, directly or through a secret.
pub const SETTINGS: &[&str] = &[
    "DATABASE_URL",
    "APP_DATABASE_URL",
    "JWT_SECRET",
    "RATE_LIMIT_SALT",
    "SITE_URL",
    "ADMIN_EMAILS",
    "ANON_DAILY_MESSAGE_QUOTA",
    "USER_DAILY_MESSAGE_QUOTA",
    "IP_DAILY_MESSAGE_QUOTA",
    "GLOBAL_DAILY_BUDGET_USD",
    "DAILY_EXPORT_QUOTA",
    "FIGURES",
    "TASK_LIST",
    "SUBAGENTS",
    "CLIENT_ADDRESS_HEADER",
    "DATABASE_POOL_SIZE",
    "ORIGIN_VERIFY",
    "TURNSTILE_SECRET",
    "TURNSTILE_SITE_KEY",
    "TURNSTILE_VERIFY_URL",
    "GOOGLE_CLIENT_ID",
    "GOOGLE_CLIENT_SECRET",
    "GOOGLE_ISSUER",
    "MAIL_FROM",
];

/// Fills in the settings that live in Secrets Manager, leaving the others as they are:
/// - `SECRETS_ARN`: one or more secrets (comma-separated), each a JSON object of settings
///   (`JWT_SECRET`, `RATE_LIMIT_SALT`, provider keys…), whose values win over the environment's;
/// - `DB_OWNER_SECRET_ARN` / `DB_APP_SECRET_ARN`: a database role's `{"username", "password"}`
///   (the shape RDS Proxy reads), joined with `DB_HOST`, `DB_PORT` (5432) and `DB_NAME` into
///   `DATABASE_URL` / `APP_DATABASE_URL` (TLS required);
/// - `ORIGIN_VERIFY_SECRET_ARN`: the value the CDN sends in `X-Origin-Verify` (`ORIGIN_VERIFY`).
pub async fn resolve_secrets(
    mut vars: BTreeMap<String, String>,
    sdk: &secrets::SdkOptions,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let named = |vars: &BTreeMap<String, String>, name: &str| {
        vars.get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if let Some(list) = named(&vars, "SECRETS_ARN") {
        for arn in list.split(',').map(str::trim).filter(|a| !a.is_empty()) {
            vars.extend(secrets::fetch(arn, sdk).await?);
        }
    }
    for (arn_var, url_var) in [
        ("DB_OWNER_SECRET_ARN", "DATABASE_URL"),
        ("DB_APP_SECRET_ARN", "APP_DATABASE_URL"),
    ] {
        let Some(arn) = named(&vars, arn_var) else {
            continue;
        };
        let role = secrets::fetch(&arn, sdk).await?;
        let host = named(&vars, "DB_HOST").ok_or(ConfigError::Missing("DB_HOST"))?;
        let port = named(&vars, "DB_PORT").unwrap_or_else(|| "5432".to_owned());
        let database = named(&vars, "DB_NAME").unwrap_or_else(|| "kakeibo".to_owned());
        let field = |key: &str| {
            role.get(key).cloned().ok_or_else(|| ConfigError::Secret {
                arn: arn.clone(),
                why: format!("the database secret has no {key}"),
            })
        };
        let mut url = url::Url::parse(&format!("postgres://{host}:{port}/{database}?sslmode=require"))
            .map_err(|e| ConfigError::Invalid {
                name: "DB_HOST",
                why: e.to_string(),
            })?;
        let invalid = |()| ConfigError::Invalid {
            name: "DB_HOST",
            why: "the host cannot carry credentials".into(),
        };
        url.set_username(&field("username")?).map_err(invalid)?;
        url.set_password(Some(&field("password")?)).map_err(invalid)?;
        vars.insert(url_var.to_owned(), url.to_string());
    }
    if let Some(arn) = named(&vars, "ORIGIN_VERIFY_SECRET_ARN") {
        let value = secrets::fetch_string(&arn, sdk).await?;
        vars.insert("ORIGIN_VERIFY".to_owned(), value);
    }
    Ok(vars)
}

/// The site used when `SITE_URL` is unset: the local stack.
pub const LOCAL_SITE: &str = "http://127.0.0.1:3000";

impl Config {
    /// From settings already gathered (tests pass a map; [`Config::load`] the environment).
    pub fn from_vars(vars: BTreeMap<String, String>) -> Result<Self, ConfigError> {
        let get = |name: &str| {
            vars.get(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let required = |name: &'static str| get(name).ok_or(ConfigError::Missing(name));
        let number = |name: &'static str, default: f64| -> Result<f64, ConfigError> {
            get(name).map_or(Ok(default), |v| {
                v.parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite() && *n >= 0.0)
                    .ok_or(ConfigError::Invalid {
                        name,
                        why: format!("{v:?} is not a non-negative number"),
                    })
            })
        };
        let count = |name: &'static str, default: i32| -> Result<i32, ConfigError> {
            get(name).map_or(Ok(default), |v| {
                v.parse::<i32>()
                    .ok()
                    .filter(|n| *n >= 0)
                    .ok_or(ConfigError::Invalid {
                        name,
                        why: format!("{v:?} is not a non-negative whole number"),
                    })
            })
        };
        let jwt_secret = required("JWT_SECRET")?;
        if jwt_secret.len() < kakeibo_auth::session::MIN_SECRET_BYTES {
            return Err(ConfigError::Invalid {
                name: "JWT_SECRET",
                why: format!(
                    "it must be at least {} bytes",
                    kakeibo_auth::session::MIN_SECRET_BYTES
                ),
            });
        }
        let defaults = QuotaLimits::default();
        Ok(Self {
            database_url: required("DATABASE_URL")?,
            app_database_url: get("APP_DATABASE_URL"),
            jwt_secret,
            rate_limit_salt: required("RATE_LIMIT_SALT")?,
            site: Site::parse(&get("SITE_URL").unwrap_or_else(|| LOCAL_SITE.to_owned()))?,
            admins: AdminAllowlist::parse(&get("ADMIN_EMAILS").unwrap_or_default()),
            quotas: QuotaLimits {
                anonymous_daily: count("ANON_DAILY_MESSAGE_QUOTA", defaults.anonymous_daily)?,
                signed_in_daily: count("USER_DAILY_MESSAGE_QUOTA", defaults.signed_in_daily)?,
                address_daily: count("IP_DAILY_MESSAGE_QUOTA", defaults.address_daily)?,
                global_daily_usd: number("GLOBAL_DAILY_BUDGET_USD", defaults.global_daily_usd)?,
                exports_daily: count("DAILY_EXPORT_QUOTA", defaults.exports_daily)?,
            },
            client_address_header: get("CLIENT_ADDRESS_HEADER").map(|h| h.to_ascii_lowercase()),
            pool_size: u32::try_from(count("DATABASE_POOL_SIZE", 4)?.max(1)).unwrap_or(4),
            origin_verify: get("ORIGIN_VERIFY"),
            bot_check: kakeibo_identity::bot_check::BotCheckSettings::from_settings(get)?,
            google: kakeibo_identity::google::GoogleSettings::from_settings(get)?,
            mail: crate::mail::MailSettings::from_settings(get)?,
            figures: get("FIGURES")
                .map(|v| kakeibo_core::FiguresPolicy::parse(&v))
                .transpose()
                .map_err(|why| ConfigError::Invalid { name: "FIGURES", why })?
                .unwrap_or_default(),
            task_list: switch(&get, "TASK_LIST")?,
            subagents: switch(&get, "SUBAGENTS")?,
            vars,
        })
    }

    /// The environment, and the secrets it names (see [`resolve_secrets`]).
    pub async fn load() -> Result<Self, ConfigError> {
        let vars: BTreeMap<String, String> = std::env::vars().collect();
        Self::from_vars(resolve_secrets(vars, &secrets::SdkOptions::default()).await?)
    }

    /// A setting by name (blank counts as unset).
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars
            .get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    const BASE: &[(&str, &str)] = &[
        ("DATABASE_URL", "postgres://kakeibo@127.0.0.1/kakeibo"),
        ("JWT_SECRET", "0123456789abcdef0123456789abcdef"),
        ("RATE_LIMIT_SALT", "salt"),
    ];

    #[test]
    fn defaults_follow_the_spec_and_missing_settings_are_named() {
        let config = Config::from_vars(vars(BASE)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.quotas, QuotaLimits::default());
        assert_eq!(config.site.origin, LOCAL_SITE);
        assert!(!config.site.secure_cookies);
        for missing in ["DATABASE_URL", "JWT_SECRET", "RATE_LIMIT_SALT"] {
            let partial: Vec<_> = BASE.iter().copied().filter(|(k, _)| *k != missing).collect();
            let err = Config::from_vars(vars(&partial)).err().map(|e| e.to_string());
            assert_eq!(err, Some(format!("{missing} is not set")));
        }
        let mut weak = vars(BASE);
        weak.insert("JWT_SECRET".into(), "short".into());
        assert!(Config::from_vars(weak).is_err());
        let mut bad = vars(BASE);
        bad.insert("ANON_DAILY_MESSAGE_QUOTA".into(), "-1".into());
        assert!(Config::from_vars(bad).is_err());
    }

    #[test]
    fn the_task_list_and_subagents_are_off_unless_the_operator_turns_them_on() {
        let default = Config::from_vars(vars(BASE)).unwrap_or_else(|e| panic!("{e}"));
        assert!(!default.task_list && !default.subagents);
        for (name, of) in [
            ("TASK_LIST", (|c: &Config| c.task_list) as fn(&Config) -> bool),
            ("SUBAGENTS", |c: &Config| c.subagents),
        ] {
            let with = |value: &str| {
                let mut all = vars(BASE);
                all.insert(name.into(), value.into());
                Config::from_vars(all).map(|c| of(&c)).map_err(|e| e.to_string())
            };
            assert_eq!(with("off"), Ok(false));
            assert_eq!(with("on"), Ok(true));
            let refused = with("yes").err().unwrap_or_default();
            assert!(
                refused.contains(name) && refused.contains("neither on nor off"),
                "{refused}"
            );
        }
    }

    #[test]
    fn the_site_decides_secure_cookies_and_refuses_plain_http_elsewhere() {
        let site = Site::parse("https://Kakeibo.Example/").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(site.origin, "https://kakeibo.example");
        assert!(site.secure_cookies);
        assert!(Site::parse("http://kakeibo.example").is_err());
        assert!(Site::parse("https://kakeibo.example/app").is_err());
        assert!(!Site::parse("http://localhost:3000").is_ok_and(|s| s.secure_cookies));
    }
}
