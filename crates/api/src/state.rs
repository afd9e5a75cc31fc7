//! What a function builds once per process (a Lambda cold start) and shares across requests.

use std::sync::Arc;

use kakeibo::{Agent, Channel, ConfirmPolicy};
use kakeibo_agent::turns::TurnStore;
use kakeibo_auth::Sessions;
use kakeibo_core::{
    ConversationId, Hooks, PermissionRules, Provider,
    pricing::{Price, Priced},
};
use kakeibo_ledger::{OwnerId, OwnerRolePool};
use kakeibo_operator::budget::DailyBudget;
use kakeibo_providers::select::{ModelRole, Settings};
use sqlx::PgPool;

use kakeibo_identity::{bot_check::BotCheck, google::Google};

use crate::{
    config::{Config, ConfigError},
    error::ApiError,
    mail::{Mail, MailSettings, Mailer},
};

/// The shared state of a function.
pub struct State {
    pub config: Config,
    /// `app_user`: every owner-scoped query (row-level security applies).
    pub app: PgPool,
    /// The owner role: only the admin module, the quota gate and visitors use it.
    pub owner_pool: OwnerRolePool,
    pub sessions: Sessions,
    pub store: TurnStore,
    /// The agent's model, or the sentence that says how to configure one.
    pub model: Result<Arc<dyn Provider>, String>,
    /// The model that summarises a long conversation's oldest messages, when one is set apart
    /// from the agent's (`SUMMARIZER_MODEL`, or Gemini's cheaper default).
    pub summarizer: Option<Arc<dyn Provider>>,
    pub rules: Arc<PermissionRules>,
    /// The deployment's hooks (`HOOKS`: Claude Code's settings format, HTTP endpoints only).
    pub hooks: Option<Arc<dyn Hooks>>,
    /// The cheap model (`CHEAP_MODEL`, at the agent model's provider), which the router may give
    /// a new conversation; `None`: every conversation gets the agent model.
    pub cheap_model: Option<Arc<dyn Provider>>,
    /// The decision layer's judge (`JUDGE_BASE_URL`, `DECISION_MODEL`…), probed on first use.
    judge_config: Option<kakeibo_judge::JudgeConfig>,
    judge: tokio::sync::OnceCell<Option<kakeibo_judge::Judge>>,
    /// The site's daily model budget: every model call of a web turn reserves against it.
    pub budget: Arc<DailyBudget>,
    /// The bot check before a visitor's first message, when configured.
    pub bot_check: Option<BotCheck>,
    /// Google sign-in, when configured.
    pub google: Option<Google>,
    /// Where mail goes (`MAIL_OUTBOX` or `MAIL_FROM`), made on first use; `None`: mail is off.
    mail_settings: Option<MailSettings>,
    mailer: tokio::sync::OnceCell<Mailer>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("site", &self.config.site)
            .field(
                "model",
                &self.model.as_ref().map(|m| format!("{}:{}", m.name(), m.model())),
            )
            .finish_non_exhaustive()
    }
}

/// How long a function's start waits for its database connections.
pub const WARM_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

impl State {
    /// Connects the pools (lazily: the first query opens a connection) and picks the model.
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        let connect = |name: &'static str, url: &str| {
            kakeibo_ledger::connect(url, config.pool_size).map_err(|e| ConfigError::Invalid {
                name,
                why: e.to_string(),
            })
        };
        let owner = connect("DATABASE_URL", &config.database_url)?;
        let app = if let Some(url) = &config.app_database_url {
            connect("APP_DATABASE_URL", url)?
        } else {
            tracing::warn!(
                "APP_DATABASE_URL is unset, so owner-scoped queries run as the owner role and \
                 row-level security is not a second wall"
            );
            owner.clone()
        };
        let pools = Pools {
            app,
            owner: OwnerRolePool::new(owner),
        };
        Self::with_pools(config, pools)
    }

    /// Opens one connection of each pool, side by side, so a function's first request finds them
    /// open: a cold start pays for the slower of the two handshakes instead of both, one after
    /// the other. A failure is only logged; the first query tries again and answers with it.
    /// It waits at most [`WARM_WITHIN`]: Lambda gives a function's start ten seconds.
    pub async fn warm_pools(&self) {
        self.warm(true).await;
    }

    /// [`State::warm_pools`] for a function whose routes use only the `app_user` pool (`runs`):
    /// the owner role's pool opens no connection until something asks for one.
    pub async fn warm_app_pool(&self) {
        self.warm(false).await;
    }

    async fn warm(&self, owner_role: bool) {
        let owner = async {
            if owner_role {
                self.owner_pool.get().acquire().await.map(drop)
            } else {
                Ok(())
            }
        };
        let both = futures_util::future::join(self.app.acquire(), owner);
        let Ok((app, owner)) = tokio::time::timeout(WARM_WITHIN, both).await else {
            tracing::warn!(
                seconds = WARM_WITHIN.as_secs(),
                "the database did not answer at start; the first request tries again"
            );
            return;
        };
        for (role, outcome) in [("app_user", app.err()), ("owner", owner.err())] {
            if let Some(error) = outcome {
                tracing::warn!(role, %error, "could not open a database connection at start");
            }
        }
    }

    /// With pools made elsewhere (tests connect per-test databases).
    pub fn with_pools(config: Config, pools: Pools) -> Result<Self, ConfigError> {
        let sessions =
            Sessions::new(config.jwt_secret.as_bytes(), config.site.secure_cookies).map_err(|e| {
                ConfigError::Invalid {
                    name: "JWT_SECRET",
                    why: e.to_string(),
                }
            })?;
        let lookup = |name: &str| config.var(name);
        let WebModels {
            model,
            summarizer,
            cheap_model,
        } = web_models(&config)?;
        let judge_config =
            kakeibo_judge::JudgeConfig::from_vars(&lookup).map_err(|e| ConfigError::Invalid {
                name: "JUDGE_BASE_URL",
                why: e.to_string(),
            })?;
        let rules = match config.var("PERMISSION_RULES") {
            Some(text) => PermissionRules::parse(&text).map_err(|e| ConfigError::Invalid {
                name: "PERMISSION_RULES",
                why: e.0,
            })?,
            None => PermissionRules::default(),
        };
        let hooks = match config.var("HOOKS") {
            Some(text) => {
                let invalid = |e: kakeibo_hooks::SettingsError| ConfigError::Invalid {
                    name: "HOOKS",
                    why: e.to_string(),
                };
                let settings = kakeibo_hooks::HookSettings::from_json(&text)
                    .and_then(kakeibo_hooks::HookSettings::http_only)
                    .map_err(invalid)?;
                let cwd = std::env::current_dir().unwrap_or_default();
                Some(Arc::new(kakeibo_hooks::SettingsHooks::new(settings, cwd)) as Arc<dyn Hooks>)
            }
            None => None,
        };
        let bot_check = config
            .bot_check
            .clone()
            .map(BotCheck::new)
            .transpose()
            .map_err(|e| ConfigError::Invalid {
                name: "TURNSTILE_VERIFY_URL",
                why: e.to_string(),
            })?;
        let google =
            config
                .google
                .clone()
                .map(Google::new)
                .transpose()
                .map_err(|e| ConfigError::Invalid {
                    name: "GOOGLE_ISSUER",
                    why: e.to_string(),
                })?;
        Ok(Self {
            bot_check,
            google,
            budget: Arc::new(DailyBudget::new(
                pools.owner.clone(),
                config.quotas.global_daily_usd,
            )),
            store: TurnStore::new(pools.app.clone()),
            app: pools.app,
            owner_pool: pools.owner,
            sessions,
            model,
            summarizer,
            rules: Arc::new(rules),
            hooks,
            cheap_model,
            judge_config,
            judge: tokio::sync::OnceCell::new(),
            mail_settings: config.mail.clone(),
            mailer: tokio::sync::OnceCell::new(),
            config,
        })
    }
}

impl State {
    /// The agent's model, or `503 {reason: "no_model"}` saying how to configure one.
    pub fn agent_model(&self) -> Result<Arc<dyn Provider>, ApiError> {
        self.model.clone().map_err(|why| ApiError::Unavailable {
            error: why,
            reason: "no_model",
        })
    }

    /// Whether this site sends mail: `503 {reason: mail_off}` when it has no way to, which a route
    /// that only sends mail answers before it does anything else.
    pub fn require_mail(&self) -> Result<&MailSettings, ApiError> {
        self.mail_settings.as_ref().ok_or(ApiError::Unavailable {
            error: "this site sends no mail, so it cannot send that link".into(),
            reason: "mail_off",
        })
    }

    /// Sends `mail`, or [`State::require_mail`]'s refusal. A mail that cannot be sent is a `503
    /// {reason: mail_unavailable}` (logged, the address not).
    pub async fn send_mail(&self, mail: &Mail) -> Result<(), ApiError> {
        let settings = self.require_mail()?;
        let mailer = self
            .mailer
            .get_or_init(|| async { settings.mailer(&crate::secrets::SdkOptions::default()).await })
            .await;
        mailer.send(mail).await.map_err(|e| {
            tracing::error!(error = %e, purpose = mail.purpose, "a mail could not be sent");
            ApiError::Unavailable {
                error: "the mail could not be sent just now; try again in a few minutes".into(),
                reason: "mail_unavailable",
            }
        })
    }

    /// Whether this site sends mail (the pages offer mailed links only then).
    pub fn sends_mail(&self) -> bool {
        self.mail_settings.is_some()
    }

    /// The decision layer's judge, when one is set and passed its probe (asked once per
    /// process, on first use; a judge that fails it is not used, and the log says why).
    pub async fn judge(&self) -> Option<&kakeibo_judge::Judge> {
        self.judge
            .get_or_init(|| async {
                let config = self.judge_config.clone()?;
                match kakeibo_judge::Judge::probe(config).await {
                    Ok(judge) => Some(judge),
                    Err(e) => {
                        tracing::warn!(error = %e, "no judge: it failed its probe");
                        None
                    }
                }
            })
            .await
            .as_ref()
    }

    /// The model a new conversation gets: the router asks the judge about its first message
    /// when a cheap model is set; the agent model without one, without a judge, or on any
    /// failure of the judge.
    pub async fn model_for_new(&self, first_message: &str, agent: &Arc<dyn Provider>) -> Arc<dyn Provider> {
        let Some(cheap) = &self.cheap_model else {
            return Arc::clone(agent);
        };
        let routed = kakeibo_judge::router::route(self.judge().await, first_message).await;
        tracing::info!(route = ?routed.route, p_simple = ?routed.p_simple, failure = ?routed.failure.as_ref().map(kakeibo_judge::JudgeFailure::kind), "routed a new conversation");
        match routed.route {
            kakeibo_judge::router::Route::Cheap => Arc::clone(cheap),
            kakeibo_judge::router::Route::Agent => Arc::clone(agent),
        }
    }

    /// The model an existing conversation keeps: its first run's — the cheap model when that is
    /// what it was given, the agent model otherwise (and with no cheap model set, always).
    pub async fn model_of(
        &self,
        owner: OwnerId,
        conversation: ConversationId,
        agent: &Arc<dyn Provider>,
    ) -> Arc<dyn Provider> {
        let Some(cheap) = &self.cheap_model else {
            return Arc::clone(agent);
        };
        match kakeibo_agent::conversations::first_model(owner, &self.app, conversation).await {
            Ok(Some(model)) if model == cheap.model() => Arc::clone(cheap),
            Ok(_) => Arc::clone(agent),
            Err(e) => {
                tracing::warn!(error = %e, "the conversation's model could not be read; the agent model is used");
                Arc::clone(agent)
            }
        }
    }

    /// The agent of `owner` on the web, on `model`: their tools over `app_user`, the
    /// deployment's rules and hooks, writes suspended for the visitor, each model call reserved
    /// against the site's daily budget, and the stop judge once it passed its probe.
    pub async fn web_agent(&self, owner: OwnerId, model: Arc<dyn Provider>) -> Result<Agent, kakeibo::Error> {
        let mut builder = Agent::builder(self.app.clone(), owner)
            .shared_provider(model)
            .channel(Channel::Web)
            .confirm_policy(ConfirmPolicy::Suspend)
            .rules(Arc::clone(&self.rules))
            .budget(Arc::clone(&self.budget) as Arc<dyn kakeibo_core::Budget>)
            .figures(self.config.figures);
        if self.config.task_list {
            builder = builder.task_list();
        }
        if self.config.subagents {
            builder = builder.subagents(Vec::new());
        }
        if let Some(summarizer) = &self.summarizer {
            builder = builder.summarizer(Arc::clone(summarizer));
        }
        if let Some(hooks) = &self.hooks {
            builder = builder.shared_hooks(Arc::clone(hooks));
        }
        if let Some(judge) = self.judge().await {
            builder = builder.stop_judge(judge.clone());
        }
        builder.build()
    }
}

/// The models of the web's turns.
struct WebModels {
    model: Result<Arc<dyn Provider>, String>,
    summarizer: Option<Arc<dyn Provider>>,
    cheap_model: Option<Arc<dyn Provider>>,
}

/// The price the setting `name` gives (`INPUT,OUTPUT[,CACHED]`), if it is set.
fn price_setting(config: &Config, name: &'static str) -> Result<Option<Price>, ConfigError> {
    config
        .var(name)
        .map(|text| Price::parse(&text))
        .transpose()
        .map_err(|why| ConfigError::Invalid { name, why })
}

/// `provider`, at `price` when one is set instead of its list price.
fn priced(provider: Arc<dyn Provider>, price: Option<Price>) -> Arc<dyn Provider> {
    match price {
        Some(price) => Arc::new(Priced {
            inner: provider,
            price,
        }),
        None => provider,
    }
}

/// The agent's model (priced by `MODEL_PRICE` when set), the summarizer set apart from it (by
/// `SUMMARIZER_PRICE`), and the cheap model the router may give a new conversation.
fn web_models(config: &Config) -> Result<WebModels, ConfigError> {
    let lookup = |name: &str| config.var(name);
    let price = price_setting(config, "MODEL_PRICE")?;
    let summarizer_price = price_setting(config, "SUMMARIZER_PRICE")?;
    let model = Settings::new(&lookup)
        .provider(ModelRole::Agent)
        .map(|provider| priced(Arc::from(provider), price))
        .map_err(|e| e.to_string());
    // Only beside an agent model: without one no turn runs, and the page says why.
    let summarizer = match &model {
        Ok(_) => Settings::new(&lookup)
            .summarizer()
            .map_err(|e| ConfigError::Invalid {
                name: "SUMMARIZER_MODEL",
                why: e.to_string(),
            })?
            .map(|summarizer| priced(summarizer, summarizer_price)),
        Err(_) => None,
    };
    let cheap_model = match (config.var("CHEAP_MODEL"), &model) {
        (Some(cheap), Ok(agent)) if cheap != agent.model() => {
            let with_cheap = |name: &str| {
                if name == "AGENT_MODEL" {
                    Some(cheap.clone())
                } else {
                    config.var(name)
                }
            };
            let provider = Settings::new(&with_cheap)
                .provider(ModelRole::Agent)
                .map_err(|e| ConfigError::Invalid {
                    name: "CHEAP_MODEL",
                    why: e.to_string(),
                })?;
            Some(Arc::from(provider))
        }
        _ => None,
    };
    Ok(WebModels {
        model,
        summarizer,
        cheap_model,
    })
}

/// The two pools of a function.
#[derive(Debug, Clone)]
pub struct Pools {
    pub app: PgPool,
    pub owner: OwnerRolePool,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn config(extra: &[(&str, &str)]) -> Config {
        let base = [
            ("DATABASE_URL", "postgres://kakeibo@127.0.0.1/kakeibo"),
            ("JWT_SECRET", "0123456789abcdef0123456789abcdef"),
            ("RATE_LIMIT_SALT", "salt"),
            // A local server with no list price for either model.
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("AGENT_MODEL", "local-agent"),
            ("SUMMARIZER_MODEL", "local-summarizer"),
        ];
        let vars: BTreeMap<String, String> = base
            .iter()
            .chain(extra)
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Config::from_vars(vars).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn each_model_takes_its_own_price_setting() {
        let unpriced = web_models(&config(&[])).unwrap();
        assert!(unpriced.model.as_ref().unwrap().price().is_none());
        assert!(unpriced.summarizer.as_ref().unwrap().price().is_none());

        let priced = web_models(&config(&[("MODEL_PRICE", "1,2"), ("SUMMARIZER_PRICE", "0,0")])).unwrap();
        let agent = priced.model.as_ref().unwrap().price().unwrap();
        let summarizer = priced.summarizer.as_ref().unwrap().price().unwrap();
        assert_ne!(agent, summarizer, "the summarizer is not priced as the agent");
        assert_eq!(summarizer, Price::parse("0,0").unwrap());
        assert_eq!(priced.summarizer.as_ref().unwrap().model(), "local-summarizer");

        let bad = web_models(&config(&[("SUMMARIZER_PRICE", "cheap")]))
            .err()
            .map(|e| e.to_string());
        assert!(bad.is_some_and(|e| e.contains("SUMMARIZER_PRICE")));
    }
}
