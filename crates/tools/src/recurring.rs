//! `detect_recurring`: subscriptions, bills and salaries, found from regular gaps.

use std::collections::{BTreeMap, HashMap};

use futures_util::future::BoxFuture;
use kakeibo_core::{Tier, ToolError, TypedTool, figures::ToolFigure};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Scope,
    common::{Amount, Filter, TransactionView, merchant_key, transactions},
};
use kakeibo_ledger::Currency;

/// How strict to be.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RecurringInput {
    /// The fewest occurrences that make a pattern (2–24, default 3).
    #[serde(default = "default_min")]
    #[schemars(range(min = 2, max = 24))]
    pub min_occurrences: usize,
}

fn default_min() -> usize {
    3
}

impl Default for RecurringInput {
    fn default() -> Self {
        Self {
            min_occurrences: default_min(),
        }
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RecurringOutput {
    pub count: usize,
    /// What the recurring charges (not income) cost per month, per currency.
    pub monthly_commitment: Vec<Amount>,
    pub merchants: Vec<Merchant>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Merchant {
    pub merchant: String,
    pub category: String,
    pub cadence: &'static str,
    pub occurrences: usize,
    pub median_gap_days: f64,
    pub last_seen: String,
    /// The average amount, signed as the account sees it.
    #[serde(flatten)]
    pub amount: Amount,
    /// The payments it was found in (for the rows behind its figure; not in the model's view).
    #[serde(skip)]
    pub transaction_ids: Vec<uuid::Uuid>,
}

#[derive(Debug)]
pub struct DetectRecurring(pub Scope);

impl TypedTool for DetectRecurring {
    type Input = RecurringInput;
    type Output = RecurringOutput;
    const NAME: &'static str = "detect_recurring";
    const DESCRIPTION: &'static str = "Find recurring payments and income (subscriptions, rent, bills, salary) \
        from regular gaps between charges to the same merchant. Use it for \"what do I subscribe to?\", \"what \
        are my fixed monthly costs?\". Returns each merchant's cadence and average amount and the monthly \
        commitment.";
    const TIER: Tier = Tier::Read;

    /// Each payment's typical amount: the average of the payments it was found in. The monthly
    /// commitment is an estimate from them, which no row makes.
    fn figures(&self, out: &RecurringOutput) -> Option<Vec<ToolFigure>> {
        let commitment = out.monthly_commitment.iter().enumerate().map(|(i, a)| {
            crate::rows::unsourced("monthly commitment", format!("/monthly_commitment/{i}"), a)
        });
        let merchants = out.merchants.iter().enumerate().map(|(i, m)| {
            let at = format!("/merchants/{i}");
            crate::rows::of_transactions(&m.merchant, at, &m.amount, m.transaction_ids.clone()).averaged()
        });
        Some(merchants.chain(commitment).collect())
    }

    fn run(&self, input: RecurringInput) -> BoxFuture<'_, Result<RecurringOutput, ToolError>> {
        Box::pin(async move {
            let owner = self.0.owner;
            let views = self
                .0
                .read(|conn| {
                    Box::pin(async move {
                        transactions(
                            owner,
                            conn,
                            &Filter {
                                ascending: true,
                                ..Filter::default()
                            },
                        )
                        .await
                    })
                })
                .await?;
            Ok(detect(&views, input.min_occurrences))
        })
    }
}

/// Cadences by the median gap in days: (name, shortest, longest, months per occurrence as
/// (numerator, denominator) for the monthly commitment).
const CADENCES: [(&str, f64, f64, i64, i64); 5] = [
    ("weekly", 5.0, 9.0, 52, 12),
    ("fortnightly", 12.0, 17.0, 26, 12),
    ("monthly", 26.0, 35.0, 1, 1),
    ("quarterly", 85.0, 97.0, 1, 3),
    ("annual", 350.0, 380.0, 1, 12),
];

/// The detection over transactions in date order.
pub(crate) fn detect(views: &[TransactionView], min_occurrences: usize) -> RecurringOutput {
    let mut groups: BTreeMap<(String, Currency), Vec<&TransactionView>> = BTreeMap::new();
    for view in views {
        let key = merchant_key(&view.description);
        if !key.is_empty() {
            groups.entry((key, view.currency)).or_default().push(view);
        }
    }
    let mut merchants = Vec::new();
    let mut commitment: BTreeMap<Currency, i64> = BTreeMap::new();
    for ((key, _), members) in groups {
        if members.len() < min_occurrences.max(2) {
            continue;
        }
        let gaps: Vec<f64> = members
            .iter()
            .zip(members.iter().skip(1))
            .map(|(a, b)| gap_days(a, b))
            .collect();
        let median = median(&gaps);
        let tolerance = (0.4 * median).max(4.0);
        if gaps.iter().any(|g| (g - median).abs() > tolerance) {
            continue;
        }
        let Some(&(cadence, _, _, per_month_num, per_month_den)) = CADENCES
            .iter()
            .find(|(_, low, high, _, _)| median >= *low && median <= *high)
        else {
            continue;
        };
        let Some(currency) = members.first().map(|m| m.currency) else {
            continue;
        };
        let total: i128 = members.iter().map(|m| i128::from(m.amount_minor)).sum();
        let average = rounded_div(total, i128::try_from(members.len()).unwrap_or(1));
        let category = most_common_category(&members);
        if average < 0 && !is_income(&members) {
            // An estimate per month: past what an amount holds it stays at the most, never wraps.
            let monthly = i64::try_from(rounded_div(
                -average * i128::from(per_month_num),
                i128::from(per_month_den),
            ))
            .unwrap_or(i64::MAX);
            let entry = commitment.entry(currency).or_default();
            *entry = entry.saturating_add(monthly);
        }
        merchants.push(Merchant {
            merchant: key,
            category,
            cadence,
            occurrences: members.len(),
            median_gap_days: median,
            last_seen: members.last().map(|m| m.date.to_string()).unwrap_or_default(),
            amount: Amount::new(i64::try_from(average).unwrap_or(0), currency),
            transaction_ids: members.iter().map(|m| m.id).collect(),
        });
    }
    merchants.sort_by(|a, b| {
        b.occurrences
            .cmp(&a.occurrences)
            .then_with(|| a.merchant.cmp(&b.merchant))
    });
    RecurringOutput {
        count: merchants.len(),
        monthly_commitment: commitment.into_iter().map(|(c, a)| Amount::new(a, c)).collect(),
        merchants,
    }
}

#[allow(clippy::cast_precision_loss)]
fn gap_days(a: &TransactionView, b: &TransactionView) -> f64 {
    (b.date - a.date).num_days() as f64
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let at = |i: usize| sorted.get(i).copied().unwrap_or(0.0);
    match n {
        0 => 0.0,
        n if n % 2 == 1 => at(n / 2),
        n => f64::midpoint(at(n / 2 - 1), at(n / 2)),
    }
}

/// `numerator / denominator` rounded half away from zero.
fn rounded_div(numerator: i128, denominator: i128) -> i128 {
    let half = denominator / 2;
    if numerator >= 0 {
        (numerator + half) / denominator
    } else {
        (numerator - half) / denominator
    }
}

fn most_common_category(members: &[&TransactionView]) -> String {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for m in members
        .iter()
        .filter(|m| m.category != kakeibo_ledger::UNCATEGORIZED)
    {
        *counts.entry(m.category.as_str()).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .map_or_else(|| kakeibo_ledger::UNCATEGORIZED.to_owned(), |(c, _)| c.to_owned())
}

fn is_income(members: &[&TransactionView]) -> bool {
    members
        .iter()
        .any(|m| m.category_type.as_deref() == Some("income"))
}
