//! `flag_anomalies`: unusual charges, refunds and duplicate charges in one month.

use std::collections::HashMap;

use futures_util::future::BoxFuture;
use kakeibo_core::{Tier, ToolError, TypedTool, figures::ToolFigure};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use sqlx::PgConnection;

use crate::rows;

use super::{
    Scope, ToolsError,
    common::{Amount, MONTH_PATTERN, Month, TransactionView, check_month, month_arg, view_ascending_sql},
};
use kakeibo_ledger::{Money, OwnerId};

/// Which month to examine.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnomaliesInput {
    /// The month, YYYY-MM.
    #[schemars(regex(pattern = MONTH_PATTERN))]
    pub month: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AnomaliesOutput {
    pub month: String,
    pub count: usize,
    pub anomalies: Vec<Anomaly>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
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

    /// Each unusual transaction: itself.
    fn figures(&self, out: &AnomaliesOutput) -> Option<Vec<ToolFigure>> {
        Some(
            out.anomalies
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    rows::of_transactions(
                        &a.description,
                        format!("/anomalies/{i}"),
                        &a.amount,
                        vec![a.transaction_id],
                    )
                })
                .collect(),
        )
    }

    fn check(&self, input: &AnomaliesInput) -> Vec<String> {
        check_month("month", &input.month)
    }

    fn run(&self, input: AnomaliesInput) -> BoxFuture<'_, Result<AnomaliesOutput, ToolError>> {
        Box::pin(async move {
            let month = month_arg(&input.month)?;
            let owner = self.0.owner;
            let rows = self
                .0
                .read(|conn| Box::pin(async move { month_scored(owner, conn, month).await }))
                .await?;
            Ok(flag(month, &rows))
        })
    }
}

/// One transaction of the month with its category's normal over the window before it, when the
/// category is judged and has one.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct Scored {
    #[sqlx(flatten)]
    pub view: TransactionView,
    /// Mean and population standard deviation of the category's spending (the negated account
    /// amount: a purchase is positive, a refund negative) in the window.
    pub mean: Option<f64>,
    pub sd: Option<f64>,
}

/// The month's transactions, oldest first, each beside its category's normal: the normals are
/// aggregated where the rows are, so only the month's rows leave the server.
const MONTH_SCORED: &str = concat!(
    "WITH v AS (",
    view_ascending_sql!(),
    "),
     normals AS (
         SELECT category, currency, avg(-amount_minor::float8) AS mean, stddev_pop(-amount_minor::float8) AS sd
         FROM v
         WHERE date < $9 AND category_type = 'expense' AND category <> 'Uncategorized'
         GROUP BY category, currency HAVING count(*) >= $10),
     month AS (SELECT v.*, row_number() OVER () AS ord FROM v WHERE date >= $9)
     SELECT m.id, m.date, m.description, m.category, m.category_type, m.amount_minor, m.currency, n.mean, n.sd
     FROM month m
     LEFT JOIN normals n ON m.category_type = 'expense' AND n.category = m.category AND n.currency = m.currency
     ORDER BY m.ord"
);

async fn month_scored(
    owner: OwnerId,
    conn: &mut PgConnection,
    month: Month,
) -> Result<Vec<Scored>, ToolsError> {
    Ok(sqlx::query_as(MONTH_SCORED)
        .bind(owner.as_uuid())
        .bind(None::<&str>)
        .bind(None::<&str>)
        .bind(Some(month.months_before(WINDOW_MONTHS)))
        .bind(Some(month.last_day()))
        .bind(None::<i64>)
        .bind(None::<i64>)
        .bind(None::<i64>)
        .bind(month.first_day)
        .bind(i64::try_from(MIN_SAMPLES).unwrap_or(i64::MAX))
        .fetch_all(conn)
        .await?)
}

#[allow(clippy::cast_precision_loss)]
pub(crate) fn flag(month: Month, rows: &[Scored]) -> AnomaliesOutput {
    let mut anomalies = Vec::new();
    let entry = |v: &TransactionView, kind: &'static str, detail: String| Anomaly {
        transaction_id: v.id,
        date: v.date.to_string(),
        description: v.description.clone(),
        category: v.category.clone(),
        kind,
        detail,
        amount: Amount::new(v.amount_minor, v.currency),
    };
    for Scored { view: v, mean, sd } in rows {
        let (Some(mean), Some(sd)) = (*mean, *sd) else {
            continue;
        };
        if sd == 0.0 {
            continue;
        }
        let spend = -(v.amount_minor as f64);
        let z = (spend - mean) / sd;
        if z.abs() <= Z_THRESHOLD {
            continue;
        }
        #[allow(clippy::cast_possible_truncation)]
        let usual = Money::new(mean.round() as i64, v.currency).format();
        if z > 0.0 {
            anomalies.push(entry(
                v,
                "outlier",
                format!(
                    "{:.1}× the usual {usual} for {} (z = {z:.1})",
                    spend / mean,
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
    for v in rows.iter().map(|r| &r.view) {
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
