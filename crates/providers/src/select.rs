//! Which provider and model a process uses, from its settings: `KAKEIBO_PROVIDER`
//! (`gemini`, `anthropic`, `openai` or `script:PATH`) and a model per role (`AGENT_MODEL`,
//! `SUMMARIZER_MODEL`, `JUDGE_MODEL`). Without `KAKEIBO_PROVIDER` the first provider whose
//! settings are present is used, in the order Gemini, Anthropic, OpenAI-compatible. With none,
//! selection fails and says how to configure one: nothing is ever faked.

use std::{fmt, path::PathBuf, sync::Arc};

use kakeibo_core::{Provider, ProviderError};

use crate::script::{Script, ScriptError};

use crate::{
    Anthropic, AnthropicConfig, Gemini, GeminiConfig, OpenAi, OpenAiConfig,
    replay::{self, Recorder, Replay},
};

/// What a model is used for; each role has its own setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRole {
    Agent,
    Summarizer,
    Judge,
}

impl ModelRole {
    pub const ALL: [Self; 3] = [Self::Agent, Self::Summarizer, Self::Judge];

    /// The setting that names the role's model.
    pub const fn variable(self) -> &'static str {
        match self {
            Self::Agent => "AGENT_MODEL",
            Self::Summarizer => "SUMMARIZER_MODEL",
            Self::Judge => "JUDGE_MODEL",
        }
    }

    /// Gemini's model for the role when the setting is absent.
    pub const fn gemini_default(self) -> &'static str {
        match self {
            Self::Agent => "gemini-3.6-flash",
            Self::Summarizer => "gemini-3.5-flash-lite",
            Self::Judge => "gemini-3.1-pro-preview",
        }
    }
}

/// The provider the settings name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Gemini,
    Anthropic,
    OpenAi,
    Script(PathBuf),
}

impl Choice {
    /// The `KAKEIBO_PROVIDER` value that names this choice.
    pub fn setting(&self) -> String {
        match self {
            Self::Gemini => "gemini".into(),
            Self::Anthropic => "anthropic".into(),
            Self::OpenAi => "openai".into(),
            Self::Script(path) => format!("script:{}", path.display()),
        }
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.setting())
    }
}

/// Why no provider could be made.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error(
        "no model provider is configured. Set one of: GEMINI_API_KEY (Gemini), ANTHROPIC_API_KEY \
         (Anthropic), OPENAI_BASE_URL with an optional OPENAI_API_KEY (any OpenAI-compatible \
         server), or KAKEIBO_PROVIDER=script:PATH (scripted replies, no model)"
    )]
    NothingConfigured,
    #[error("KAKEIBO_PROVIDER={0} is not a provider; use gemini, anthropic, openai or script:PATH")]
    Unknown(String),
    #[error("KAKEIBO_PROVIDER={provider} needs {variable}")]
    Missing {
        provider: &'static str,
        variable: &'static str,
    },
    #[error("the {provider} provider has no default model: set {variable}")]
    NoModel {
        provider: &'static str,
        variable: &'static str,
    },
    #[error("GEMINI_AUTH={0} is not a way to sign in; use api-key (GEMINI_API_KEY) or vertex")]
    UnsupportedAuth(String),
    #[error("{0}")]
    Settings(String),
    #[error(transparent)]
    Script(#[from] ScriptError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// A provider's settings, read through a lookup (the process environment in production).
pub struct Settings<'a> {
    var: &'a dyn Fn(&str) -> Option<String>,
}

impl fmt::Debug for Settings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Settings")
    }
}

impl<'a> Settings<'a> {
    /// Settings from `var`; blank values count as absent.
    pub fn new(var: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Self { var }
    }

    pub fn get(&self, name: &str) -> Option<String> {
        (self.var)(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// The provider to use, and why.
    pub fn choice(&self) -> Result<Choice, SelectError> {
        if let Some(setting) = self.get("KAKEIBO_PROVIDER") {
            return match setting.to_ascii_lowercase().as_str() {
                "gemini" => Ok(Choice::Gemini),
                "anthropic" => Ok(Choice::Anthropic),
                "openai" => Ok(Choice::OpenAi),
                _ => match setting.strip_prefix("script:") {
                    Some(path) if !path.trim().is_empty() => Ok(Choice::Script(PathBuf::from(path.trim()))),
                    _ => Err(SelectError::Unknown(setting)),
                },
            };
        }
        if self.get("GEMINI_API_KEY").is_some() || self.get("GEMINI_AUTH").is_some() {
            Ok(Choice::Gemini)
        } else if self.get("ANTHROPIC_API_KEY").is_some() {
            Ok(Choice::Anthropic)
        } else if self.get("OPENAI_BASE_URL").is_some() {
            Ok(Choice::OpenAi)
        } else {
            Err(SelectError::NothingConfigured)
        }
    }

    /// The model for `role` under `choice`, with the setting it came from (`"default"` for
    /// Gemini's defaults). Elsewhere the summarizer and the judge fall back to `AGENT_MODEL`: one
    /// local model can play every role.
    pub fn model(&self, choice: &Choice, role: ModelRole) -> Result<(String, &'static str), SelectError> {
        if let Some(model) = self.get(role.variable()) {
            return Ok((model, role.variable()));
        }
        let provider = match choice {
            Choice::Gemini => return Ok((role.gemini_default().to_owned(), "default")),
            Choice::Script(_) => return Ok(("script".to_owned(), "default")),
            Choice::Anthropic => "anthropic",
            Choice::OpenAi => "openai",
        };
        let agent = ModelRole::Agent.variable();
        match self.get(agent) {
            Some(model) => Ok((model, agent)),
            None => Err(SelectError::NoModel {
                provider,
                variable: agent,
            }),
        }
    }

    /// The provider for `role`, ready to call. With `REPLAY=1` it is the recorded fixtures
    /// (no key needed: the model named, or Gemini's default, keys them); with `RECORD=1` the
    /// real provider, each reply also written as a fixture.
    pub fn provider(&self, role: ModelRole) -> Result<Box<dyn Provider>, SelectError> {
        let fixtures = replay::fixtures_dir(&|name| self.get(name));
        if self.get("REPLAY").as_deref() == Some("1") {
            let choice = self.choice().unwrap_or(Choice::Gemini);
            let (model, _) = self.model(&choice, role)?;
            return Ok(Box::new(Replay::new(model, fixtures)));
        }
        let provider = self.live(role)?;
        if self.get("RECORD").as_deref() == Some("1") {
            return Ok(Box::new(Recorder::new(provider, fixtures)));
        }
        Ok(provider)
    }

    /// The agent's model and, apart from it, the summarizer's ([`Settings::summarizer`]).
    pub fn models(&self) -> Result<Models, SelectError> {
        Ok(Models {
            agent: Arc::from(self.provider(ModelRole::Agent)?),
            summarizer: self.summarizer()?,
        })
    }

    /// The model that summarises old history, when it is not the agent's: the one
    /// `SUMMARIZER_MODEL` names, else Gemini's cheaper default on live Gemini. Elsewhere — and
    /// replaying recorded replies, which are keyed by the agent's model — `None`: the agent's
    /// model summarises.
    pub fn summarizer(&self) -> Result<Option<Arc<dyn Provider>>, SelectError> {
        let named = self.get(ModelRole::Summarizer.variable()).is_some();
        let live_gemini =
            self.get("REPLAY").as_deref() != Some("1") && matches!(self.choice(), Ok(Choice::Gemini));
        if !named && !live_gemini {
            return Ok(None);
        }
        Ok(Some(Arc::from(self.provider(ModelRole::Summarizer)?)))
    }

    fn live(&self, role: ModelRole) -> Result<Box<dyn Provider>, SelectError> {
        let choice = self.choice()?;
        let (model, _) = self.model(&choice, role)?;
        let var = |name: &str| self.get(name);
        Ok(match choice {
            Choice::Gemini => {
                let config = match self.get("GEMINI_AUTH").as_deref() {
                    None | Some("api-key") => {
                        GeminiConfig::from_vars(&model, &var).ok_or(SelectError::Missing {
                            provider: "gemini",
                            variable: "GEMINI_API_KEY",
                        })?
                    }
                    Some("vertex") => {
                        GeminiConfig::vertex_from_vars(&model, &var).map_err(SelectError::Settings)?
                    }
                    Some(other) => return Err(SelectError::UnsupportedAuth(other.to_owned())),
                };
                Box::new(Gemini::new(config)?)
            }
            Choice::Anthropic => {
                let config = AnthropicConfig::from_vars(&model, &var).ok_or(SelectError::Missing {
                    provider: "anthropic",
                    variable: "ANTHROPIC_API_KEY",
                })?;
                Box::new(Anthropic::new(config)?)
            }
            Choice::OpenAi => {
                let config = OpenAiConfig::from_vars(&model, &var).ok_or(SelectError::Missing {
                    provider: "openai",
                    variable: "OPENAI_BASE_URL",
                })?;
                Box::new(OpenAi::new(config)?)
            }
            Choice::Script(path) => Box::new(Script::from_file(&path)?),
        })
    }
}

/// The models `spec` names within the providers `var` configures: `MODEL` (another model of the
/// provider in use), `gemini:MODEL`, `anthropic:MODEL`, `openai:MODEL` or `script:PATH` — how the
/// REPL's `/model` and a subagent type's `model` name one.
pub fn models_named(spec: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<Models, SelectError> {
    let (provider, model) = match spec.split_once(':') {
        Some((name @ ("gemini" | "anthropic" | "openai"), model)) => {
            (Some(name.to_owned()), Some(model.to_owned()))
        }
        Some(("script", _)) => (Some(spec.to_owned()), None),
        _ => (None, Some(spec.to_owned())),
    };
    let named = move |name: &str| match name {
        "KAKEIBO_PROVIDER" if provider.is_some() => provider.clone(),
        "AGENT_MODEL" if model.is_some() => model.clone(),
        _ => var(name),
    };
    Settings::new(&named).models()
}

/// The provider for `role` from the process environment.
pub fn from_env(role: ModelRole) -> Result<Box<dyn Provider>, SelectError> {
    Settings::new(&|name| std::env::var(name).ok()).provider(role)
}

/// The agent's models from the process environment ([`Settings::models`]).
pub fn models_from_env() -> Result<Models, SelectError> {
    Settings::new(&|name| std::env::var(name).ok()).models()
}

/// The models an agent runs with: its own, and the one that summarises old history when the
/// settings name one apart from it.
#[derive(Clone)]
pub struct Models {
    pub agent: Arc<dyn Provider>,
    /// `None`: the agent's own model summarises.
    pub summarizer: Option<Arc<dyn Provider>>,
}

impl fmt::Debug for Models {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Models")
            .field("agent", &self.agent.model())
            .field("summarizer", &self.summarizer.as_ref().map(|s| s.model()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn the_summarizer_is_a_model_apart_only_where_one_is_named_or_gemini_has_one() {
        let summarizer = |pairs: &[(&str, &str)]| {
            let map: HashMap<String, String> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            let var = move |name: &str| map.get(name).cloned();
            Settings::new(&var)
                .summarizer()
                .unwrap()
                .map(|p| p.model().to_owned())
        };
        // Live Gemini: its cheaper default, or the model named.
        assert_eq!(
            summarizer(&[("GEMINI_API_KEY", "k")]).as_deref(),
            Some("gemini-3.5-flash-lite")
        );
        assert_eq!(
            summarizer(&[("GEMINI_API_KEY", "k"), ("SUMMARIZER_MODEL", "gemini-x")]).as_deref(),
            Some("gemini-x")
        );
        // Elsewhere only a named one; replaying, only a named one (fixtures key the model).
        assert_eq!(
            summarizer(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"), ("AGENT_MODEL", "m")]),
            None
        );
        assert_eq!(
            summarizer(&[
                ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
                ("AGENT_MODEL", "m"),
                ("SUMMARIZER_MODEL", "small")
            ])
            .as_deref(),
            Some("small")
        );
        assert_eq!(summarizer(&[("REPLAY", "1"), ("GEMINI_API_KEY", "k")]), None);
        assert_eq!(summarizer(&[]), None);
    }

    /// Settings given as pairs, and the outcome expected from them.
    type Case<'a, T> = (&'a [(&'a str, &'a str)], T);

    fn settings(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_choice_follows_the_setting_then_what_is_configured() {
        let cases: [Case<Result<Choice, &str>>; 8] = [
            (&[], Err("no model provider is configured")),
            (
                &[("GEMINI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")],
                Ok(Choice::Gemini),
            ),
            (
                &[("ANTHROPIC_API_KEY", "k"), ("OPENAI_BASE_URL", "u")],
                Ok(Choice::Anthropic),
            ),
            (
                &[("OPENAI_BASE_URL", "http://localhost:11434/v1")],
                Ok(Choice::OpenAi),
            ),
            (
                &[("KAKEIBO_PROVIDER", "OpenAI"), ("GEMINI_API_KEY", "k")],
                Ok(Choice::OpenAi),
            ),
            (
                &[("KAKEIBO_PROVIDER", "script: demo.yaml")],
                Ok(Choice::Script("demo.yaml".into())),
            ),
            (&[("KAKEIBO_PROVIDER", "script:")], Err("is not a provider")),
            (
                &[("KAKEIBO_PROVIDER", "  "), ("GEMINI_API_KEY", " ")],
                Err("no model provider"),
            ),
        ];
        for (pairs, expected) in cases {
            let map = settings(pairs);
            let lookup = |name: &str| map.get(name).cloned();
            let got = Settings::new(&lookup).choice();
            match (got, expected) {
                (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{pairs:?}"),
                (Err(got), Err(expected)) => assert!(got.to_string().contains(expected), "{pairs:?}: {got}"),
                (got, expected) => panic!("{pairs:?}: {got:?} but expected {expected:?}"),
            }
        }
    }

    #[test]
    fn models_per_role_with_defaults_only_where_there_are_any() {
        let map = settings(&[("JUDGE_MODEL", "gemini-3.1-pro")]);
        let lookup = |name: &str| map.get(name).cloned();
        let s = Settings::new(&lookup);
        assert_eq!(
            s.model(&Choice::Gemini, ModelRole::Agent).unwrap(),
            ("gemini-3.6-flash".to_owned(), "default")
        );
        assert_eq!(
            s.model(&Choice::Gemini, ModelRole::Judge).unwrap(),
            ("gemini-3.1-pro".to_owned(), "JUDGE_MODEL")
        );
        let err = s.model(&Choice::Anthropic, ModelRole::Summarizer).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the anthropic provider has no default model: set AGENT_MODEL"
        );

        let map = settings(&[("AGENT_MODEL", "qwen3"), ("SUMMARIZER_MODEL", "qwen3-small")]);
        let lookup = |name: &str| map.get(name).cloned();
        let s = Settings::new(&lookup);
        let roles: Vec<_> = ModelRole::ALL
            .iter()
            .map(|role| s.model(&Choice::OpenAi, *role).unwrap())
            .collect();
        assert_eq!(
            roles,
            [
                ("qwen3".to_owned(), "AGENT_MODEL"),
                ("qwen3-small".to_owned(), "SUMMARIZER_MODEL"),
                ("qwen3".to_owned(), "AGENT_MODEL"),
            ],
            "the judge falls back to the agent's model"
        );
    }

    #[test]
    fn missing_pieces_are_named() {
        let cases: [Case<&str>; 5] = [
            (&[("KAKEIBO_PROVIDER", "gemini")], "needs GEMINI_API_KEY"),
            (
                &[("KAKEIBO_PROVIDER", "anthropic"), ("AGENT_MODEL", "m")],
                "needs ANTHROPIC_API_KEY",
            ),
            (
                &[("KAKEIBO_PROVIDER", "openai"), ("AGENT_MODEL", "m")],
                "needs OPENAI_BASE_URL",
            ),
            (
                &[("GEMINI_AUTH", "vertex")],
                "needs GEMINI_SERVICE_ACCOUNT_JSON or GOOGLE_APPLICATION_CREDENTIALS",
            ),
            (
                &[("GEMINI_AUTH", "oauth")],
                "GEMINI_AUTH=oauth is not a way to sign in",
            ),
        ];
        for (pairs, expected) in cases {
            let map = settings(pairs);
            let lookup = |name: &str| map.get(name).cloned();
            let err = Settings::new(&lookup).provider(ModelRole::Agent).err().unwrap();
            assert!(err.to_string().contains(expected), "{pairs:?}: {err}");
        }
        let map = settings(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1/"),
            ("AGENT_MODEL", "qwen3"),
        ]);
        let lookup = |name: &str| map.get(name).cloned();
        let provider = Settings::new(&lookup).provider(ModelRole::Agent).unwrap();
        assert_eq!((provider.name(), provider.model()), ("openai", "qwen3"));
    }

    #[test]
    fn replay_needs_no_key() {
        let map = settings(&[("REPLAY", "1")]);
        let lookup = |name: &str| map.get(name).cloned();
        let provider = Settings::new(&lookup).provider(ModelRole::Judge).unwrap();
        assert_eq!(
            (provider.name(), provider.model()),
            ("replay", "gemini-3.1-pro-preview")
        );
    }
}
