//! The context estimator against real token counts: each recorded Gemini exchange of the corpus
//! (`kakeibo-fixtures/`) rebuilt as the request kakeibo's adapter would send — the recorded
//! system prompt and messages, our declarations of the tools it named — and estimated, beside
//! the provider's own `usage.inputTokens` for exactly that request.
//!
//! The exchanges are put in recording order and split in two: those at even positions (first,
//! third, …) are the *fit* half, on which the divisors are fitted; the others are *held out*, and
//! only their error says how good the estimator is.

use std::{collections::HashMap, path::Path};

use kakeibo_core::{
    Block, Declaration, Message, ProviderMeta, Role,
    context::{Census, Divisors},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::MetricsError;

/// A recorded exchange as the corpus stores it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Recorded {
    request: RecordedRequest,
    result: RecordedResult,
    recorded_at: String,
}

#[derive(Debug, Deserialize)]
struct RecordedRequest {
    model: String,
    system: String,
    messages: Vec<RecordedMessage>,
    tools: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct RecordedMessage {
    role: Role,
    content: Vec<RecordedBlock>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum RecordedBlock {
    Text {
        text: String,
        #[serde(default, rename = "providerMeta")]
        provider_meta: Option<RecordedMeta>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
        #[serde(default, rename = "providerMeta")]
        provider_meta: Option<RecordedMeta>,
    },
    ToolResult {
        tool_use_id: String,
        name: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordedMeta {
    thought_signature: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RecordedResult {
    usage: RecordedUsage,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordedUsage {
    input_tokens: u64,
}

/// Which half an exchange is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Half {
    Fit,
    HeldOut,
}

/// One exchange rebuilt: what the provider counted, and what each estimator says.
#[derive(Debug, Clone, Serialize)]
pub struct Exchange {
    /// The fixture's file name without `.json`.
    pub id: String,
    pub recorded_at: String,
    pub model: String,
    pub half: Half,
    /// The provider's count of the request's input tokens.
    pub real: u64,
    pub census: Census,
    /// The reference design's two classes, digits included: (prose, JSON with the declarations).
    pub reference: (u64, u64),
    /// Tool declarations, calls and results as a share of the request's characters, in percent.
    pub json_share: f64,
}

impl Exchange {
    fn signature(meta: Option<RecordedMeta>) -> Option<ProviderMeta> {
        meta.and_then(|m| m.thought_signature).map(ProviderMeta)
    }

    fn rebuild(
        id: String,
        recorded: Recorded,
        declarations: &HashMap<&str, &Declaration>,
    ) -> Result<Self, MetricsError> {
        let request = recorded.request;
        let tools = request
            .tools
            .iter()
            .map(|name| {
                declarations
                    .get(name.as_str())
                    .map(|d| (*d).clone())
                    .ok_or_else(|| MetricsError::Fixture {
                        id: id.clone(),
                        message: format!("it names a tool kakeibo does not have: {name}"),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let messages: Vec<Message> = request
            .messages
            .into_iter()
            .map(|m| Message {
                role: m.role,
                content: m
                    .content
                    .into_iter()
                    .map(|b| match b {
                        RecordedBlock::Text { text, provider_meta } => Block::Text {
                            text,
                            provider_meta: Self::signature(provider_meta),
                        },
                        RecordedBlock::ToolUse {
                            id,
                            name,
                            input,
                            provider_meta,
                        } => Block::ToolUse {
                            id,
                            name,
                            input,
                            provider_meta: Self::signature(provider_meta),
                        },
                        RecordedBlock::ToolResult {
                            tool_use_id,
                            name,
                            content,
                            is_error,
                        } => Block::ToolResult {
                            tool_use_id,
                            name,
                            content,
                            is_error,
                        },
                    })
                    .collect(),
            })
            .collect();
        let census = Census::of(&request.system, &messages, &tools);
        // The reference's classes: the same characters with the digits back where they were.
        let texts = messages.iter().flat_map(|m| &m.content).map(|b| match b {
            Block::Text { text, .. } | Block::ThoughtSummary { text, .. } => text.chars().count(),
            Block::ToolUse { .. } | Block::ToolResult { .. } => 0,
        });
        let prose_chars =
            u64::try_from(request.system.chars().count() + texts.sum::<usize>()).unwrap_or(u64::MAX);
        let reference = (prose_chars, census.total() - census.opaque - prose_chars);
        let readable = census.prose + census.json + census.declarations + census.digits;
        let json = census.json + census.declarations;
        Ok(Self {
            id,
            recorded_at: recorded.recorded_at,
            model: request.model,
            half: Half::Fit,
            real: recorded.result.usage.input_tokens,
            census,
            reference,
            json_share: ratio(json, readable) * 100.0,
        })
    }
}

#[allow(clippy::cast_precision_loss)] // character and token counts, far below 2^52
fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Reads every recorded exchange in `dir`, rebuilt with `declarations`, in recording order and
/// split into halves.
pub fn exchanges(dir: &Path, declarations: &[Declaration]) -> Result<Vec<Exchange>, MetricsError> {
    let by_name: HashMap<&str, &Declaration> = declarations.iter().map(|d| (d.name, d)).collect();
    let io = |e: std::io::Error| MetricsError::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let text = std::fs::read_to_string(&path).map_err(|e| MetricsError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let recorded: Recorded = serde_json::from_str(&text).map_err(|e| MetricsError::Fixture {
            id: id.clone(),
            message: e.to_string(),
        })?;
        out.push(Exchange::rebuild(id, recorded, &by_name)?);
    }
    if out.len() < 4 {
        return Err(MetricsError::Fixture {
            id: dir.display().to_string(),
            message: format!(
                "{} recorded exchanges; at least 4 are needed to fit and hold out",
                out.len()
            ),
        });
    }
    out.sort_by(|a, b| (&a.recorded_at, &a.id).cmp(&(&b.recorded_at, &b.id)));
    for (position, exchange) in out.iter_mut().enumerate() {
        exchange.half = if position % 2 == 0 {
            Half::Fit
        } else {
            Half::HeldOut
        };
    }
    Ok(out)
}

/// The census as the five features of the fit, in [`Divisors`]' order.
fn features(census: &Census) -> [f64; 5] {
    #[allow(clippy::cast_precision_loss)] // character counts, far below 2^52
    let f = |n: u64| n as f64;
    [
        f(census.prose),
        f(census.json),
        f(census.declarations),
        f(census.digits),
        f(census.opaque),
    ]
}

/// Divisors fitted to `exchanges` by least squares on the relative error (each exchange weighed
/// by one over its real count squared), or `None` when the exchanges cannot determine them (a
/// class absent from all of them, or a fitted weight that is not positive).
pub fn fit(exchanges: &[&Exchange]) -> Option<Divisors> {
    const N: usize = 5;
    let mut normal = [[0.0_f64; N + 1]; N];
    for exchange in exchanges {
        let x = features(&exchange.census);
        #[allow(clippy::cast_precision_loss)] // token counts, far below 2^52
        let y = exchange.real as f64;
        if y <= 0.0 {
            continue;
        }
        let w = 1.0 / (y * y);
        for (row, xa) in normal.iter_mut().zip(x) {
            for (cell, xb) in row.iter_mut().zip(x) {
                *cell += w * xa * xb;
            }
            row[N] += w * xa * y;
        }
    }
    let weights = solve(normal)?;
    if weights.iter().any(|w| !w.is_finite() || *w <= 0.0) {
        return None;
    }
    Some(Divisors {
        prose: 1.0 / weights[0],
        json: 1.0 / weights[1],
        declarations: 1.0 / weights[2],
        digits: 1.0 / weights[3],
        opaque: 1.0 / weights[4],
    })
}

/// Gauss–Jordan elimination with partial pivoting on an augmented `N × (N + 1)` system.
#[allow(
    clippy::indexing_slicing,
    reason = "rows and columns run below N, and the system is N × (N + 1): every index is in the arrays' own sizes, never a figure read from outside"
)]
fn solve<const N: usize, const M: usize>(mut a: [[f64; M]; N]) -> Option<[f64; N]> {
    if M != N + 1 {
        return None;
    }
    for column in 0..N {
        let pivot = (column..N).max_by(|&i, &j| a[i][column].abs().total_cmp(&a[j][column].abs()))?;
        if a[pivot][column].abs() < 1e-300 {
            return None;
        }
        a.swap(column, pivot);
        let lead = a[column];
        for (i, row) in a.iter_mut().enumerate() {
            if i != column {
                let factor = row[column] / lead[column];
                for (cell, l) in row.iter_mut().zip(lead) {
                    *cell -= factor * l;
                }
            }
        }
    }
    let mut x = [0.0; N];
    for (i, xi) in x.iter_mut().enumerate() {
        *xi = a[i][M - 1] / a[i][i];
    }
    Some(x)
}

/// An estimator under test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Estimator {
    /// `context.rs` as shipped for Gemini ([`Divisors::GEMINI`]).
    Shipped,
    /// The divisors fitted on the fit half in this run.
    Refit { divisors: Divisors },
    /// The reference design's rule, kakeibo's before: prose / 4.1 + JSON / 2.6 (declarations as
    /// JSON, digits where they stand, signatures ignored).
    Reference,
    /// Every character of the request over four.
    CharsOver4,
}

impl Estimator {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Shipped => "kakeibo's estimator for Gemini (context.rs)",
            Self::Refit { .. } => "refitted on the fit half, this run",
            Self::Reference => "the reference's prose/4.1 + JSON/2.6",
            Self::CharsOver4 => "chars/4",
        }
    }

    pub fn estimate(&self, exchange: &Exchange) -> u64 {
        match self {
            Self::Shipped => exchange.census.tokens(&Divisors::GEMINI),
            Self::Refit { divisors } => exchange.census.tokens(divisors),
            Self::Reference => {
                #[allow(clippy::cast_precision_loss)] // character counts, far below 2^52
                let (prose, json) = (exchange.reference.0 as f64, exchange.reference.1 as f64);
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // finite, non-negative
                let tokens = (prose / 4.1 + json / 2.6).ceil() as u64;
                tokens
            }
            Self::CharsOver4 => exchange.census.total().div_ceil(4),
        }
    }
}

/// Mean and worst absolute percentage error of an estimator over some exchanges.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Errors {
    pub exchanges: usize,
    /// Mean absolute percentage error.
    pub mape: f64,
    pub worst: f64,
    pub worst_id: String,
}

impl Errors {
    pub fn of(estimator: &Estimator, exchanges: &[&Exchange]) -> Option<Self> {
        let errors: Vec<(f64, &str)> = exchanges
            .iter()
            .map(|e| (percent_error(estimator.estimate(e), e.real), e.id.as_str()))
            .collect();
        let (worst, worst_id) = errors.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0))?;
        #[allow(clippy::cast_precision_loss)] // a few dozen exchanges
        let mape = errors.iter().map(|e| e.0).sum::<f64>() / errors.len() as f64;
        Some(Self {
            exchanges: errors.len(),
            mape,
            worst,
            worst_id: worst_id.to_owned(),
        })
    }
}

/// |estimate − real| / real, in percent.
pub fn percent_error(estimate: u64, real: u64) -> f64 {
    ratio(estimate.abs_diff(real), real) * 100.0
}

/// The JSON-share bands the error is split by.
pub const BANDS: [(&str, f64, f64); 3] = [
    ("under 52% JSON", 0.0, 52.0),
    ("52–55% JSON", 52.0, 55.0),
    ("55% JSON and over", 55.0, 101.0),
];

/// One estimator's errors: held out, over all, and held out by JSON share.
#[derive(Debug, Clone, Serialize)]
pub struct EstimatorErrors {
    pub estimator: Estimator,
    pub label: &'static str,
    pub held_out: Option<Errors>,
    pub all: Option<Errors>,
    /// Held-out errors per band of [`BANDS`], in its order (`None` for an empty band).
    pub held_out_by_share: Vec<Option<Errors>>,
}

/// The whole measurement.
#[derive(Debug, Clone, Serialize)]
pub struct EstimatorReport {
    pub source: String,
    pub shipped: Divisors,
    /// The divisors fitted on the fit half in this run (`None` if the half cannot determine them).
    pub refit: Option<Divisors>,
    pub estimators: Vec<EstimatorErrors>,
    pub exchanges: Vec<Exchange>,
}

impl EstimatorReport {
    pub fn measure(source: String, exchanges: Vec<Exchange>) -> Self {
        let fit_half: Vec<&Exchange> = exchanges.iter().filter(|e| e.half == Half::Fit).collect();
        let held: Vec<&Exchange> = exchanges.iter().filter(|e| e.half == Half::HeldOut).collect();
        let all: Vec<&Exchange> = exchanges.iter().collect();
        let refit = fit(&fit_half);
        let mut estimators = vec![Estimator::Shipped];
        estimators.extend(refit.map(|divisors| Estimator::Refit { divisors }));
        estimators.extend([Estimator::Reference, Estimator::CharsOver4]);
        let estimators = estimators
            .into_iter()
            .map(|estimator| EstimatorErrors {
                estimator,
                label: estimator.label(),
                held_out: Errors::of(&estimator, &held),
                all: Errors::of(&estimator, &all),
                held_out_by_share: BANDS
                    .iter()
                    .map(|(_, low, high)| {
                        let band: Vec<&Exchange> = held
                            .iter()
                            .copied()
                            .filter(|e| e.json_share >= *low && e.json_share < *high)
                            .collect();
                        Errors::of(&estimator, &band)
                    })
                    .collect(),
            })
            .collect();
        Self {
            source,
            shipped: Divisors::GEMINI,
            refit,
            estimators,
            exchanges,
        }
    }

    /// The errors of one estimator kind.
    pub fn errors(&self, kind: fn(&Estimator) -> bool) -> Option<&EstimatorErrors> {
        self.estimators.iter().find(|e| kind(&e.estimator))
    }
}
