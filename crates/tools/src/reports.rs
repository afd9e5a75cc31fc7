//! `get_spend_report` (totals by category or month) and `get_budget_status`.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use futures_util::future::BoxFuture;
use kakeibo_core::{
    Tier, ToolError, TypedTool,
    figures::{Measure, ToolFigure},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Scope,
    common::{
        Amount, ISO_DATE_PATTERN, MONTH_PATTERN, Month, add_minor, check_month, check_range, month_arg,
        parse_date, tool_error,
    },
};
use crate::{ToolsError, rows};
use kakeibo_ledger::Currency;

/// A month, or an inclusive range of days.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Period {
    /// A calendar month, YYYY-MM.
    Month(#[schemars(regex(pattern = MONTH_PATTERN))] String),
    /// An inclusive range of days.
    Range {
        /// First day, YYYY-MM-DD.
        #[schemars(regex(pattern = ISO_DATE_PATTERN))]
        from: String,
        /// Last day, YYYY-MM-DD.
        #[schemars(regex(pattern = ISO_DATE_PATTERN))]
        to: String,
    },
}

impl Period {
    fn bounds(&self) -> Option<(NaiveDate, NaiveDate)> {
        match self {
            Self::Month(month) => Month::parse(month).map(|m| (m.first_day, m.last_day())),
            Self::Range { from, to } => Some((parse_date(from)?, parse_date(to)?)),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    #[default]
    Category,
    Month,
}

/// What to total.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SpendReportInput {
    /// The period: "YYYY-MM" for a month, or {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}.
    pub period: Period,
    /// Group the totals by category (default) or by month.
    #[serde(default)]
    pub group_by: GroupBy,
    /// Also list income (as negative amounts, `kind` "income"); it never counts toward the total.
    #[serde(default)]
    pub include_income: bool,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SpendReport {
    pub period: PeriodOut,
    pub group_by: &'static str,
    /// Total spending — the sum of the `spending` groups, refunds included — when the period has
    /// one currency. Income is never netted into it.
    pub total: Option<Amount>,
    /// Total spending per currency (each the sum of that currency's `spending` groups);
    /// currencies are never added together.
    pub totals_by_currency: Vec<Amount>,
    pub groups: Vec<Group>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PeriodOut {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Group {
    pub group: String,
    /// `spending` (expense categories; money out on no category) or `income` (income categories;
    /// money in on no category, as the group "Uncategorized income").
    pub kind: GroupKind,
    pub transactions: i64,
    #[serde(flatten)]
    pub amount: Amount,
}

/// Whether a group is money out or money in; spending sorts first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupKind {
    Spending,
    Income,
}

#[derive(Debug)]
pub struct GetSpendReport(pub Scope);

impl TypedTool for GetSpendReport {
    type Input = SpendReportInput;
    type Output = SpendReport;
    const NAME: &'static str = "get_spend_report";
    const DESCRIPTION: &'static str = "Total spending for a month or a date range, grouped by category or by \
        month. Use it for \"how much did I spend on X\", \"where did my money go in March\", or month-by-month \
        trends. Spending is positive, refunds negative; money in that has no category is income, never \
        negative spending. Set include_income to list income too (negative amounts, kind \"income\"); it never \
        counts toward the total.";
    const TIER: Tier = Tier::Read;

    /// The total first, then each currency's, then each group's: each the postings its query
    /// selects (a month's group, that month within the period; a category's, that category).
    fn figures(&self, out: &SpendReport) -> Option<Vec<ToolFigure>> {
        let (from, to) = (parse_date(&out.period.from), parse_date(&out.period.to));
        let spending = |c| rows::query(Measure::Spending, from, to, c);
        let mut figures = Vec::with_capacity(out.groups.len() + 2);
        if let Some(total) = &out.total {
            figures.push(rows::queried(
                "total spending",
                "/total".into(),
                total,
                spending(total.currency),
            ));
        }
        for (i, t) in out.totals_by_currency.iter().enumerate() {
            let label = format!("total spending in {}", t.currency);
            figures.push(rows::queried(
                &label,
                format!("/totals_by_currency/{i}"),
                t,
                spending(t.currency),
            ));
        }
        for (i, g) in out.groups.iter().enumerate() {
            let measure = match g.kind {
                GroupKind::Spending => Measure::Spending,
                GroupKind::Income => Measure::Income,
            };
            let mut query = rows::query(measure, from, to, g.amount.currency);
            if out.group_by == "month" {
                if let Some(month) = Month::parse(&g.group) {
                    query.from = Some(
                        from.map_or(month.first_day, |f| f.max(month.first_day))
                            .to_string(),
                    );
                    query.to = Some(
                        to.map_or(month.last_day(), |t| t.min(month.last_day()))
                            .to_string(),
                    );
                }
            } else {
                // Money in on Uncategorized is listed as "Uncategorized income".
                let uncategorized = format!("{} income", kakeibo_ledger::UNCATEGORIZED);
                let name = if g.kind == GroupKind::Income && g.group == uncategorized {
                    kakeibo_ledger::UNCATEGORIZED
                } else {
                    g.group.as_str()
                };
                query.categories = vec![name.to_owned()];
            }
            figures.push(rows::queried(&g.group, format!("/groups/{i}"), &g.amount, query));
        }
        Some(figures)
    }

    fn check(&self, input: &SpendReportInput) -> Vec<String> {
        match &input.period {
            Period::Month(month) => check_month("period", month),
            Period::Range { from, to } => check_range(Some(from), Some(to)),
        }
    }

    fn run(&self, input: SpendReportInput) -> BoxFuture<'_, Result<SpendReport, ToolError>> {
        Box::pin(async move {
            let (from, to) = input
                .period
                .bounds()
                .ok_or_else(|| ToolError::InvalidInput(vec!["period: not a month or a date range".into()]))?;
            let owner = self.0.owner;
            let (group_by, include_income) = (input.group_by, input.include_income);
            let (rows, home): (Vec<GroupRow>, Option<Currency>) = self
                .0
                .read(|conn| {
                    Box::pin(async move {
                        // Two statements rather than one with a switch: the planner estimates a
                        // plain filter, not a CASE, and the estimate decides whether a month is
                        // read through the date index or every posting is scanned.
                        let sql = if include_income {
                            WITH_INCOME_SQL
                        } else {
                            SPENDING_SQL
                        };
                        let rows = sqlx::query_as(sql)
                            .bind(owner.as_uuid())
                            .bind(from)
                            .bind(to)
                            .bind(group_by == GroupBy::Month)
                            .bind(kakeibo_ledger::UNCATEGORIZED)
                            .fetch_all(&mut *conn)
                            .await?;
                        let rows: Vec<GroupRow> = rows;
                        // Asked only when nothing was spent: the zero total's currency.
                        let home = if rows.iter().any(|r| r.1 == "spending") {
                            None
                        } else {
                            kakeibo_ledger::home_currency(owner, conn).await?
                        };
                        Ok((rows, home))
                    })
                })
                .await?;

            let mut groups: Vec<Group> = rows
                .into_iter()
                .map(|(group, kind, currency, transactions, amount)| Group {
                    group,
                    kind: if kind == "income" {
                        GroupKind::Income
                    } else {
                        GroupKind::Spending
                    },
                    transactions,
                    amount: Amount::new(amount, currency),
                })
                .collect();
            sort_groups(&mut groups, group_by);
            let mut totals: BTreeMap<Currency, i64> = BTreeMap::new();
            for group in groups.iter().filter(|g| g.kind == GroupKind::Spending) {
                let total = totals.entry(group.amount.currency).or_default();
                *total = add_minor(*total, group.amount.amount_minor, "the period's spending")
                    .map_err(tool_error)?;
            }
            let totals_by_currency: Vec<Amount> =
                totals.into_iter().map(|(c, a)| Amount::new(a, c)).collect();
            // Nothing spent is zero in the ledger's home currency; a ledger without one (nothing
            // imported) has no total to state, rather than one in a guessed currency.
            let total = match totals_by_currency.as_slice() {
                [] => home.map(|currency| Amount::new(0, currency)),
                [only] => Some(only.clone()),
                _ => None,
            };
            Ok(SpendReport {
                period: PeriodOut {
                    from: from.to_string(),
                    to: to.to_string(),
                },
                group_by: if group_by == GroupBy::Month {
                    "month"
                } else {
                    "category"
                },
                total,
                totals_by_currency,
                groups,
            })
        })
    }
}

/// A row of [`SPENDING_SQL`] or [`WITH_INCOME_SQL`]: group, kind, currency, transactions, amount.
type GroupRow = (String, String, Currency, i64, i64);

/// Spending per group (category or month) and currency: the expense accounts' postings, money
/// in on Uncategorized (income booked as a negative expense) left out. $1 owner, $2–$3 the
/// period, $4 by month, $5 the Uncategorized account's name.
const SPENDING_SQL: &str = "SELECT CASE WHEN $4 THEN to_char(t.date, 'YYYY-MM') ELSE a.name END AS grp,
            'spending' AS kind, p.currency::text, count(DISTINCT t.id), sum(p.amount_minor)::bigint
     FROM postings p
     JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
     JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
     WHERE p.owner_id = $1 AND t.date BETWEEN $2 AND $3
       AND a.type = 'expense' AND NOT (a.name = $5 AND p.amount_minor < 0)
     GROUP BY 1, 3";

/// Spending and income per group and currency. Money in on Uncategorized (an expense account) is
/// income: booked as a negative expense it would net against spending.
const WITH_INCOME_SQL: &str = "SELECT CASE WHEN $4 THEN to_char(t.date, 'YYYY-MM')
                  WHEN k.kind = 'income' AND a.type = 'expense' THEN a.name || ' income'
                  ELSE a.name END AS grp,
             k.kind, p.currency::text, count(DISTINCT t.id), sum(p.amount_minor)::bigint
     FROM postings p
     JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
     JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
     CROSS JOIN LATERAL (SELECT CASE
         WHEN a.type = 'income' THEN 'income'
         WHEN a.name = $5 AND p.amount_minor < 0 THEN 'income'
         ELSE 'spending' END AS kind) k
     WHERE p.owner_id = $1 AND t.date BETWEEN $2 AND $3 AND a.type IN ('expense', 'income')
     GROUP BY 1, 2, 3";

/// Spending before income; months in calendar order (a series); categories largest first, then
/// by name. Several currencies in one group keep a stable order too.
fn sort_groups(groups: &mut [Group], group_by: GroupBy) {
    match group_by {
        GroupBy::Month => groups.sort_by(|a, b| {
            a.kind
                .cmp(&b.kind)
                .then_with(|| a.group.cmp(&b.group))
                .then_with(|| a.amount.currency.cmp(&b.amount.currency))
        }),
        GroupBy::Category => groups.sort_by(|a, b| {
            a.kind
                .cmp(&b.kind)
                .then_with(|| b.amount.amount_minor.cmp(&a.amount.amount_minor))
                .then_with(|| a.group.cmp(&b.group))
                .then_with(|| a.amount.currency.cmp(&b.amount.currency))
        }),
    }
}

/// Which month to check.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct BudgetStatusInput {
    /// The month, YYYY-MM.
    #[schemars(regex(pattern = MONTH_PATTERN))]
    pub month: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BudgetStatus {
    pub month: String,
    pub categories: Vec<CategoryStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CategoryStatus {
    pub category: String,
    pub budget: Option<Amount>,
    pub actual: Amount,
    pub remaining: Option<Amount>,
    /// Spending as a share of the budget, in percent with one decimal; null without a budget.
    pub percent_used: Option<f64>,
    pub over_budget: bool,
}

#[derive(Debug)]
pub struct GetBudgetStatus(pub Scope);

impl TypedTool for GetBudgetStatus {
    type Input = BudgetStatusInput;
    type Output = BudgetStatus;
    const NAME: &'static str = "get_budget_status";
    const DESCRIPTION: &'static str = "Budget against actual spending for each category in one month. Use it \
        for \"am I over budget?\", \"how much budget is left for dining?\". Categories with spending but no \
        budget are listed with a null budget.";
    const TIER: Tier = Tier::Read;

    /// Each category's spending (every posting on it in the month), budget and remainder (which
    /// no row makes).
    fn figures(&self, out: &BudgetStatus) -> Option<Vec<ToolFigure>> {
        let month = Month::parse(&out.month)?;
        let mut figures = Vec::with_capacity(out.categories.len() * 3);
        for (i, c) in out.categories.iter().enumerate() {
            let mut query = rows::query(
                Measure::Postings,
                Some(month.first_day),
                Some(month.last_day()),
                c.actual.currency,
            );
            query.categories = vec![c.category.clone()];
            let at = format!("/categories/{i}");
            figures.push(rows::queried(
                &format!("{} spent", c.category),
                format!("{at}/actual"),
                &c.actual,
                query,
            ));
            if let Some(budget) = &c.budget {
                figures.push(rows::unsourced(
                    &format!("{} budget", c.category),
                    format!("{at}/budget"),
                    budget,
                ));
            }
            if let Some(left) = &c.remaining {
                figures.push(rows::unsourced(
                    &format!("{} remaining", c.category),
                    format!("{at}/remaining"),
                    left,
                ));
            }
        }
        Some(figures)
    }

    fn check(&self, input: &BudgetStatusInput) -> Vec<String> {
        check_month("month", &input.month)
    }

    fn run(&self, input: BudgetStatusInput) -> BoxFuture<'_, Result<BudgetStatus, ToolError>> {
        Box::pin(async move {
            let month = month_arg(&input.month)?;
            let owner = self.0.owner;
            let label = month.label();
            let month_key = label.clone();
            // (category, currency, budget, actual)
            let rows: Vec<(String, Currency, Option<i64>, i64)> = self
                .0
                .read(|conn| {
                    Box::pin(async move {
                        Ok(sqlx::query_as(
                            "WITH spent AS (
                                 SELECT a.name, p.currency::text AS currency, sum(p.amount_minor)::bigint AS actual
                                 FROM postings p
                                 JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
                                 JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
                                 WHERE p.owner_id = $1 AND a.type = 'expense' AND t.date BETWEEN $2 AND $3
                                 GROUP BY a.name, p.currency
                             ), budgeted AS (
                                 SELECT a.name, b.currency::text AS currency, b.amount_minor
                                 FROM budgets b JOIN accounts a ON a.id = b.account_id AND a.owner_id = b.owner_id
                                 WHERE b.owner_id = $1 AND b.month = $4
                             )
                             SELECT coalesce(b.name, s.name), coalesce(b.currency, s.currency),
                                    b.amount_minor, coalesce(s.actual, 0)::bigint
                             FROM budgeted b FULL JOIN spent s ON s.name = b.name AND s.currency = b.currency",
                        )
                        .bind(owner.as_uuid())
                        .bind(month.first_day)
                        .bind(month.last_day())
                        .bind(month_key)
                        .fetch_all(conn)
                        .await?)
                    })
                })
                .await?;

            let any_budget = rows.iter().any(|r| r.2.is_some());
            let mut categories: Vec<CategoryStatus> = rows
                .into_iter()
                .map(|(category, currency, budget, actual)| {
                    let remaining = budget
                        .map(|b| {
                            b.checked_sub(actual)
                                .map(|left| Amount::new(left, currency))
                                .ok_or(ToolsError::Overflow("a budget's remainder"))
                        })
                        .transpose()?;
                    Ok(CategoryStatus {
                        category,
                        budget: budget.map(|b| Amount::new(b, currency)),
                        actual: Amount::new(actual, currency),
                        remaining,
                        percent_used: budget.filter(|b| *b > 0).map(|b| percent(actual, b)),
                        over_budget: budget.is_some_and(|b| actual > b),
                    })
                })
                .collect::<Result<_, ToolsError>>()
                .map_err(tool_error)?;
            categories.sort_by(|a, b| {
                b.budget
                    .is_some()
                    .cmp(&a.budget.is_some())
                    .then(b.actual.amount_minor.cmp(&a.actual.amount_minor))
                    .then_with(|| a.category.cmp(&b.category))
            });
            Ok(BudgetStatus {
                note: (!any_budget)
                    .then(|| format!("No budgets are set for {label}; set_budget creates one.")),
                month: label,
                categories,
            })
        })
    }
}

/// `part / whole` in percent, rounded to one decimal (a ratio for display, not money).
#[allow(clippy::cast_precision_loss)]
fn percent(part: i64, whole: i64) -> f64 {
    let tenths = (i128::from(part) * 1000 + i128::from(whole) / 2).div_euclid(i128::from(whole));
    tenths as f64 / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str, minor: i64) -> Group {
        Group {
            group: name.into(),
            kind: if minor < 0 {
                GroupKind::Income
            } else {
                GroupKind::Spending
            },
            transactions: 1,
            amount: Amount::new(minor, Currency::INR),
        }
    }

    #[test]
    fn months_sort_in_calendar_order_and_categories_by_amount() {
        let names = |groups: &[Group]| groups.iter().map(|g| g.group.clone()).collect::<Vec<_>>();
        let mut months = vec![group("2025-03", 10), group("2024-12", 5), group("2025-01", 99)];
        sort_groups(&mut months, GroupBy::Month);
        assert_eq!(names(&months), ["2024-12", "2025-01", "2025-03"]);
        let mut categories = vec![group("Dining", 10), group("Groceries", 99), group("Bills", 10)];
        sort_groups(&mut categories, GroupBy::Category);
        assert_eq!(names(&categories), ["Groceries", "Bills", "Dining"]);
        // Income after spending, whatever the amounts.
        let mut mixed = vec![group("Salary", -500), group("2025-02", 3), group("2025-01", 7)];
        sort_groups(&mut mixed, GroupBy::Month);
        assert_eq!(names(&mixed), ["2025-01", "2025-02", "Salary"]);
    }

    #[test]
    fn percent_rounds_to_one_decimal() {
        assert!((percent(2_335_000, 2_000_000) - 116.8).abs() < 1e-9);
        assert!((percent(1, 3) - 33.3).abs() < 1e-9);
        assert!((percent(2, 3) - 66.7).abs() < 1e-9);
        assert!((percent(0, 100) - 0.0).abs() < 1e-9);
    }
}
