//! `flag_anomalies`: unusual charges, refunds and duplicate charges in one month.

use std::collections::HashMap;

use futures_util::future::BoxFuture;
use kakeibo_core::{Tier, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{
    Scope,
    common::{Amount, Filter, MONTH_PATTERN, Month, TransactionView, check_month, month_arg, transactions},
};
use kakeibo_ledger::Money;

/// Which month to examine.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnomaliesInput {
    /// The month, YYYY-MM.
    #[schemars(regex(pattern = MONTH_PATTERN))]
    pub month: String,
}

#[derive(Debug, Serialize)]
pub struct AnomaliesOutput {
    pub month: String,
    pub count: usize,
    pub anomalies: Vec<Anomaly>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Anomaly {
    pub transaction_id: Uuid,
    pub date: String,
    pub description: String,
    pub category: String,
    /// `outlier`, `refund` or `duplicate`.
    pub kind: &'static str,
    pub detail: String,
    #[serde(flatten)]
    pub amount: Amount,
}

/// Trailing months that make a category's normal.
const WINDOW_MONTHS: u32 = 6;
/// The fewest charges in the window before a category is judged.
const MIN_SAMPLES: usize = 5;
/// How many standard deviations from the mean is unusual.
const Z_THRESHOLD: f64 = 2.5;

#[derive(Debug)]
pub struct FlagAnomalies(pub Scope);

impl TypedTool for FlagAnomalies {
    type Input = AnomaliesInput;
    type Output = AnomaliesOutput;
    const NAME: &'static str = "flag_anomalies";
    const DESCRIPTION: &'static str = "Check one month for charges that look wrong: amounts far from a \
        category's usual (against the six months before), refunds, and identical charges on the same day \
        (possible double billing). Use it for \"anything unusual in May?\", \"was I charged twice?\".";
    const TIER: Tier = Tier::Read;

    fn check(&self, input: &AnomaliesInput) -> Vec<String> {
        check_month("month", &input.month)
    }

    fn run(&self, input: AnomaliesInput) -> BoxFuture<'_, Result<AnomaliesOutput, ToolError>> {
        Box::pin(async move {
            let month = month_arg(&input.month)?;
            let owner = self.0.owner;
            let views = self
                .0
                .run(|conn| {
                    Box::pin(async move {
                        let filter = Filter {
                            from: Some(month.months_before(WINDOW_MONTHS)),
                            to: Some(month.last_day()),
                            ascending: true,
                            ..Filter::default()
                        };
                        transactions(owner, conn, &filter).await
                    })
                })
                .await?;
            Ok(flag(month, &views))
        })
    }
}

/// Mean and population standard deviation of a category's spending in the window.
struct Normal {
    mean: f64,
    sd: f64,
}

#[allow(clippy::cast_precision_loss)]
pub(crate) fn flag(month: Month, views: &[TransactionView]) -> AnomaliesOutput {
    let in_month = |v: &&TransactionView| v.date >= month.first_day && v.date <= month.last_day();
    let judged = |v: &&TransactionView| {
        v.category_type.as_deref() == Some("expense") && v.category != kakeibo_ledger::UNCATEGORIZED
    };

    // Spending is the negated account amount: a purchase is positive, a refund negative.
    let mut samples: HashMap<(&str, &str), Vec<f64>> = HashMap::new();
    for v in views.iter().filter(|v| v.date < month.first_day).filter(judged) {
        samples
            .entry((v.category.as_str(), v.currency.as_str()))
            .or_default()
            .push(-(v.amount_minor as f64));
    }
    let normals: HashMap<(&str, &str), Normal> = samples
        .into_iter()
        .filter(|(_, s)| s.len() >= MIN_SAMPLES)
        .map(|(key, s)| {
            let mean = s.iter().sum::<f64>() / s.len() as f64;
            let variance = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / s.len() as f64;
            (
                key,
                Normal {
                    mean,
                    sd: variance.sqrt(),
                },
            )
        })
        .collect();

    let mut anomalies = Vec::new();
    let entry = |v: &TransactionView, kind: &'static str, detail: String| Anomaly {
        transaction_id: v.id,
        date: v.date.to_string(),
        description: v.description.clone(),
        category: v.category.clone(),
        kind,
        detail,
        amount: Amount::new(v.amount_minor, v.currency()),
    };
    for v in views.iter().filter(in_month).filter(judged) {
        let Some(normal) = normals.get(&(v.category.as_str(), v.currency.as_str())) else {
            continue;
        };
        if normal.sd == 0.0 {
            continue;
        }
        let spend = -(v.amount_minor as f64);
        let z = (spend - normal.mean) / normal.sd;
        if z.abs() <= Z_THRESHOLD {
            continue;
        }
        #[allow(clippy::cast_possible_truncation)]
        let usual = Money::new(normal.mean.round() as i64, v.currency()).format();
        if z > 0.0 {
            anomalies.push(entry(
                v,
                "outlier",
                format!(
                    "{:.1}× the usual {usual} for {} (z = {z:.1})",
                    spend / normal.mean,
                    v.category
                ),
            ));
        } else if spend < 0.0 {
            anomalies.push(entry(
                v,
                "refund",
                format!("money back on {} (usual charge {usual})", v.category),
            ));
        }
    }

    let mut copies: HashMap<(chrono::NaiveDate, i64, &str), Vec<&TransactionView>> = HashMap::new();
    for v in views.iter().filter(in_month) {
        copies
            .entry((v.date, v.amount_minor, v.description.as_str()))
            .or_default()
            .push(v);
    }
    for same in copies.values().filter(|c| c.len() > 1) {
        for v in same.iter().skip(1) {
            anomalies.push(entry(
                v,
                "duplicate",
                format!("{} identical charges on {}", same.len(), v.date),
            ));
        }
    }
    anomalies.sort_by(|a, b| {
        a.date
            .cmp(&b.date)
            .then(a.kind.cmp(b.kind))
            .then(a.transaction_id.cmp(&b.transaction_id))
    });
    AnomaliesOutput {
        month: month.label(),
        count: anomalies.len(),
        note: anomalies.is_empty().then(|| {
            format!(
                "Nothing unusual in {}: no outliers, refunds or duplicate charges found.",
                month.label()
            )
        }),
        anomalies,
    }
}
