//! `search_transactions`: find transactions by text, account, dates and size.

use futures_util::future::BoxFuture;
use kakeibo_core::{Tier, ToolError, TypedTool, figures::ToolFigure};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::rows;

use super::{
    Scope,
    common::{Amount, Filter, ISO_DATE_PATTERN, check_range, parse_date, transactions},
};

/// Which transactions to find; every filter is optional and they combine.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchInput {
    /// Case-insensitive text the description contains, e.g. "swiggy".
    pub query: Option<String>,
    /// An account or category name the transaction posts to, e.g. "Groceries" or "Checking".
    pub account: Option<String>,
    /// First day to include, YYYY-MM-DD.
    #[schemars(regex(pattern = ISO_DATE_PATTERN))]
    pub from: Option<String>,
    /// Last day to include, YYYY-MM-DD.
    #[schemars(regex(pattern = ISO_DATE_PATTERN))]
    pub to: Option<String>,
    /// Only transactions with an amount of at least this many minor units (paise), either sign.
    #[schemars(range(min = 0))]
    pub min_minor: Option<i64>,
    /// Only transactions with no amount above this many minor units, either sign.
    #[schemars(range(min = 0))]
    pub max_minor: Option<i64>,
    /// How many to return, newest first (1–200).
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: i64,
}

fn default_limit() -> i64 {
    20
}

impl Default for SearchInput {
    /// Every transaction, the default number of them.
    fn default() -> Self {
        Self {
            query: None,
            account: None,
            from: None,
            to: None,
            min_minor: None,
            max_minor: None,
            limit: default_limit(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct SearchOutput {
    pub count: usize,
    pub transactions: Vec<Found>,
}

#[derive(Debug, Serialize)]
pub struct Found {
    pub id: Uuid,
    pub date: String,
    pub description: String,
    pub category: String,
    #[serde(flatten)]
    pub amount: Amount,
}

#[derive(Debug)]
pub struct SearchTransactions(pub Scope);

impl TypedTool for SearchTransactions {
    type Input = SearchInput;
    type Output = SearchOutput;
    const NAME: &'static str = "search_transactions";
    const DESCRIPTION: &'static str = "Find individual transactions: by words in the description, by account or \
        category, by date range, or by size. Use it to list or look up specific charges (\"what did I pay \
        Netflix?\", \"show my biggest purchases in May\"); use get_spend_report for totals. Amounts are signed \
        minor units: negative means money left the account.";
    const TIER: Tier = Tier::Read;

    /// Each transaction found: itself.
    fn figures(&self, out: &SearchOutput) -> Option<Vec<ToolFigure>> {
        Some(
            out.transactions
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    rows::of_transactions(
                        &t.description,
                        format!("/transactions/{i}"),
                        &t.amount,
                        vec![t.id],
                    )
                })
                .collect(),
        )
    }

    fn check(&self, input: &SearchInput) -> Vec<String> {
        let mut problems = check_range(input.from.as_deref(), input.to.as_deref());
        if let (Some(min), Some(max)) = (input.min_minor, input.max_minor)
            && min > max
        {
            problems.push(format!("min_minor ({min}) is above max_minor ({max})"));
        }
        problems
    }

    fn run(&self, input: SearchInput) -> BoxFuture<'_, Result<SearchOutput, ToolError>> {
        Box::pin(async move {
            let owner = self.0.owner;
            let views = self
                .0
                .read(|conn| {
                    Box::pin(async move {
                        let filter = Filter {
                            query: input.query.as_deref().filter(|q| !q.trim().is_empty()),
                            account: input.account.as_deref(),
                            from: input.from.as_deref().and_then(parse_date),
                            to: input.to.as_deref().and_then(parse_date),
                            min_minor: input.min_minor,
                            max_minor: input.max_minor,
                            limit: Some(input.limit),
                            ascending: false,
                        };
                        transactions(owner, conn, &filter).await
                    })
                })
                .await?;
            let transactions: Vec<Found> = views
                .into_iter()
                .map(|v| Found {
                    amount: Amount::new(v.amount_minor, v.currency),
                    id: v.id,
                    date: v.date.to_string(),
                    description: v.description,
                    category: v.category,
                })
                .collect();
            Ok(SearchOutput {
                count: transactions.len(),
                transactions,
            })
        })
    }
}
