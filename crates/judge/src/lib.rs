//! kakeibo-judge: the decision layer — typed yes/no questions answered with a probability read
//! from one token's log-probabilities on an OpenAI-compatible endpoint.
//!
//! [`Judge::ask`] sends a question with `max_tokens` 1, `logprobs` and `top_logprobs` 5, and
//! reads the first token's alternatives: P(yes) is the probability of the `Y` label renormalised
//! over `Y` and `N`. Every failure — the request failing, the time limit, a label missing from
//! the alternatives, a value outside [0, 1] — is a [`JudgeFailure`], which each use resolves to
//! its safe side and records. [`Judge::probe`] asks two control questions at start, one whose
//! answer is yes and one whose answer is no, and refuses an endpoint whose answers carry no usable
//! log-probabilities or are not clearly right.
//!
//! Two uses: [`router`] (which model a conversation gets) and [`stop`] (whether a run that looks
//! stuck should stop). Neither can approve a write: they pick a model and end a run, nothing else.

// A judge's reply can say anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod router;
pub mod stop;

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

/// How long one question may take before it counts as failed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// The system prompt: one character, Y or N, in that order (the order is part of the calibration).
const SYSTEM: &str = "You answer yes/no questions with exactly one character: Y for yes or N for no. \
    Never write anything else.";

/// Where the judge asks: an OpenAI-compatible chat completions endpoint.
#[derive(Clone)]
pub struct JudgeConfig {
    /// Up to the version, without a trailing slash (`http://localhost:11434/v1`).
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub timeout: Duration,
}

impl std::fmt::Debug for JudgeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgeConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl JudgeConfig {
    /// From `JUDGE_BASE_URL`, `DECISION_MODEL` (the model asked there — `JUDGE_MODEL` is the
    /// evaluations' grader), the optional `JUDGE_API_KEY` and `JUDGE_TIMEOUT_MS` as `var` reads
    /// them; `None` without a base URL (no judge: every use takes its safe side).
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Self>, ConfigError> {
        let Some(base_url) = var("JUDGE_BASE_URL") else {
            return Ok(None);
        };
        let model = var("DECISION_MODEL").ok_or(ConfigError::NoModel)?;
        let timeout = match var("JUDGE_TIMEOUT_MS") {
            None => DEFAULT_TIMEOUT,
            Some(ms) => ms
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|ms| (50..=60_000).contains(ms))
                .map(Duration::from_millis)
                .ok_or(ConfigError::Timeout(ms))?,
        };
        Ok(Some(Self {
            base_url: base_url.trim().trim_end_matches('/').to_owned(),
            api_key: var("JUDGE_API_KEY"),
            model,
            timeout,
        }))
    }
}

/// Why the judge's settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("JUDGE_BASE_URL is set without DECISION_MODEL: name the model the decision layer asks there")]
    NoModel,
    #[error("JUDGE_TIMEOUT_MS={0} is not a number of milliseconds from 50 to 60000")]
    Timeout(String),
}

/// Why a question got no probability. Each use takes its safe side on any of them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JudgeFailure {
    #[error("the judge's endpoint failed: {0}")]
    Request(String),
    #[error("the judge did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the judge's answer carries no log-probabilities")]
    NoLogprobs,
    #[error("neither label, or only one, is among the first token's alternatives ({0})")]
    MissingLabel(String),
    #[error("the probability {0} is outside [0, 1]")]
    OutOfRange(f64),
}

impl JudgeFailure {
    /// A short name for records and reports.
    pub fn kind(&self) -> &'static str {
        match self {
            JudgeFailure::Request(_) => "error",
            JudgeFailure::Timeout(_) => "timeout",
            JudgeFailure::NoLogprobs => "no_logprobs",
            JudgeFailure::MissingLabel(_) => "missing_label",
            JudgeFailure::OutOfRange(_) => "out_of_range",
        }
    }
}

/// Why a judge was refused at start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProbeError {
    #[error("the judge's endpoint cannot serve as a judge: {0}")]
    Failed(JudgeFailure),
    #[error(
        "the judge cannot tell a plain yes from a plain no: P(yes) = {yes:.3} for a yes and {no:.3} \
         for a no (a judge needs at least 0.8 and at most 0.2)"
    )]
    Unclear { yes: f64, no: f64 },
}

/// Why the settings give no judge although they name one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoJudge {
    #[error("no judge: {0}")]
    Settings(#[from] ConfigError),
    #[error(
        "no judge: {model} failed the probe ({error}); the router keeps the agent model and no run is \
         stopped as stuck"
    )]
    Probe { model: String, error: ProbeError },
}

/// The judge the settings name (`JUDGE_BASE_URL`, `DECISION_MODEL`, …, as `var` reads them), once
/// its probe passed; `Ok(None)` when none is set, and why not when the settings are wrong or the
/// endpoint failed the probe: every use then takes its safe side.
pub async fn from_settings_or_why(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Judge>, NoJudge> {
    let Some(config) = JudgeConfig::from_vars(var)? else {
        return Ok(None);
    };
    let model = config.model.clone();
    let judge = Judge::probe(config)
        .await
        .map_err(|error| NoJudge::Probe { model, error })?;
    tracing::info!(model = judge.model(), "the judge passed its probe");
    Ok(Some(judge))
}

/// [`from_settings_or_why`] with the reason logged: `None` when none is set, the settings are
/// wrong, or the endpoint failed the probe.
pub async fn from_settings(var: &dyn Fn(&str) -> Option<String>) -> Option<Judge> {
    from_settings_or_why(var).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the decision layer runs without its judge");
        None
    })
}

/// A yes/no judge over one endpoint.
#[derive(Debug, Clone)]
pub struct Judge {
    config: JudgeConfig,
    client: reqwest::Client,
}

/// The control questions: the first's answer is yes beyond doubt, the second's no.
const CONTROL_YES: &str = "Is 100 greater than 3?";
const CONTROL_NO: &str = "Is 3 greater than 100?";
/// How sure a judge must be of each control's answer (the refusal's sentence says these values):
/// as sure as the stop judge must be to act — a judge that cannot clear that line on a plain
/// question cannot be trusted to clear it on a real one.
const CLEAR: f64 = 0.8;
const UNCLEAR: f64 = 1.0 - CLEAR;

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    logprobs: Option<Logprobs>,
}

#[derive(Deserialize)]
struct Logprobs {
    content: Option<Vec<TokenLogprob>>,
}

#[derive(Deserialize)]
struct TokenLogprob {
    token: String,
    logprob: f64,
    #[serde(default)]
    top_logprobs: Vec<Alternative>,
}

#[derive(Deserialize)]
struct Alternative {
    token: String,
    logprob: f64,
}

impl Judge {
    /// A judge over `config`'s endpoint, not yet probed (see [`Judge::probe`]).
    pub fn new(config: JudgeConfig) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(config.timeout)
            .build()
            .unwrap_or_default();
        Self { config, client }
    }

    /// A judge over `config`'s endpoint once it answered two control questions with usable
    /// log-probabilities, a clear yes to the one and a clear no to the other; refused otherwise.
    /// (One control is not enough: a model that leans to yes whatever it is asked passes it.)
    pub async fn probe(config: JudgeConfig) -> Result<Self, ProbeError> {
        let judge = Self::new(config);
        let yes = judge.ask(CONTROL_YES).await.map_err(ProbeError::Failed)?;
        let no = judge.ask(CONTROL_NO).await.map_err(ProbeError::Failed)?;
        if yes >= CLEAR && no <= UNCLEAR {
            Ok(judge)
        } else {
            Err(ProbeError::Unclear { yes, no })
        }
    }

    /// The model that judges.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// P(yes) for `question`.
    pub async fn ask(&self, question: &str) -> Result<f64, JudgeFailure> {
        let limit = self.config.timeout;
        match tokio::time::timeout(limit, self.request(question)).await {
            Ok(answer) => answer,
            Err(_) => Err(JudgeFailure::Timeout(limit)),
        }
    }

    async fn request(&self, question: &str) -> Result<f64, JudgeFailure> {
        let body = json!({
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": format!("{question}\n\nAnswer (Y or N):")},
            ],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": true,
            "top_logprobs": 5,
        });
        let mut request = self
            .client
            .post(format!("{}/chat/completions", self.config.base_url))
            .json(&body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| JudgeFailure::Request(without_url(&e)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(JudgeFailure::Request(format!("status {}", status.as_u16())));
        }
        let completion: Completion = response.json().await.map_err(|e| {
            JudgeFailure::Request(format!("an answer that is not a completion: {}", without_url(&e)))
        })?;
        let first = completion
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.logprobs)
            .and_then(|l| l.content)
            .and_then(|tokens| tokens.into_iter().next())
            .ok_or(JudgeFailure::NoLogprobs)?;
        p_yes(&first)
    }
}

/// A request error without the URL in it (it may carry a key in its query).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_connect() {
        "cannot connect"
    } else if e.is_decode() {
        "cannot read the answer"
    } else if e.is_timeout() {
        "timed out"
    } else {
        "the request failed"
    };
    kind.to_owned()
}

/// P(yes) from the first token: the `Y` label's probability renormalised over `Y` and `N` (each
/// label the sum of its spellings among the alternatives: `Y`, ` y`, `Yes`…).
fn p_yes(first: &TokenLogprob) -> Result<f64, JudgeFailure> {
    let mut alternatives: Vec<(&str, f64)> = first
        .top_logprobs
        .iter()
        .map(|a| (a.token.as_str(), a.logprob))
        .collect();
    if alternatives.is_empty() {
        // A server that gives only the chosen token: that one alone.
        alternatives.push((first.token.as_str(), first.logprob));
    }
    let label = |token: &str| match token.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(true),
        "n" | "no" => Some(false),
        _ => None,
    };
    let (mut yes, mut no) = (0.0_f64, 0.0_f64);
    for (token, logprob) in &alternatives {
        if logprob.is_nan() || *logprob > 1e-9 {
            return Err(JudgeFailure::OutOfRange(logprob.exp()));
        }
        match label(token) {
            Some(true) => yes += logprob.exp(),
            Some(false) => no += logprob.exp(),
            None => {}
        }
    }
    if yes == 0.0 || no == 0.0 {
        let seen: Vec<&str> = alternatives.iter().map(|(t, _)| *t).collect();
        return Err(JudgeFailure::MissingLabel(format!("{seen:?}")));
    }
    let p = yes / (yes + no);
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(JudgeFailure::OutOfRange(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(alternatives: &[(&str, f64)]) -> TokenLogprob {
        TokenLogprob {
            token: alternatives.first().map_or("", |a| a.0).to_owned(),
            logprob: alternatives.first().map_or(0.0, |a| a.1),
            top_logprobs: alternatives
                .iter()
                .map(|(token, logprob)| Alternative {
                    token: (*token).to_owned(),
                    logprob: *logprob,
                })
                .collect(),
        }
    }

    #[test]
    fn the_yes_label_is_renormalised_over_both_labels_and_their_spellings() {
        // P(Y) = 0.6, P(N) = 0.2, the rest elsewhere: 0.6 / 0.8.
        let p = p_yes(&token(&[
            ("Y", 0.6_f64.ln()),
            ("N", 0.2_f64.ln()),
            ("Maybe", 0.1_f64.ln()),
        ]))
        .unwrap();
        assert!((p - 0.75).abs() < 1e-12, "{p}");
        // Spellings add up: Y 0.3 + " yes" 0.3 against N 0.2 + "no" 0.2.
        let p = p_yes(&token(&[
            ("Y", 0.3_f64.ln()),
            (" yes", 0.3_f64.ln()),
            ("N", 0.2_f64.ln()),
            ("no", 0.2_f64.ln()),
        ]))
        .unwrap();
        assert!((p - 0.6).abs() < 1e-12, "{p}");
        assert!(matches!(
            p_yes(&token(&[("Y", -0.01), ("Sure", -5.0)])),
            Err(JudgeFailure::MissingLabel(_))
        ));
        assert!(matches!(
            p_yes(&token(&[("Y", 0.5), ("N", -1.0)])),
            Err(JudgeFailure::OutOfRange(_))
        ));
        assert!(matches!(
            p_yes(&token(&[("Y", f64::NAN), ("N", -1.0)])),
            Err(JudgeFailure::OutOfRange(_))
        ));
    }
}
