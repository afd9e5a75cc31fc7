//! `list_accounts`: every account and its balance.

use futures_util::future::BoxFuture;
use kakeibo_core::{
    Tier, ToolError, TypedTool,
    figures::{Measure, ToolFigure},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Scope, common::Amount, rows};
use kakeibo_ledger::Currency;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoInput {}

#[derive(Debug, Serialize)]
pub struct AccountsOutput {
    pub accounts: Vec<AccountBalance>,
}

#[derive(Debug, Serialize)]
pub struct AccountBalance {
    pub name: String,
    #[serde(rename = "type")]
    pub account_type: String,
    pub postings: i64,
    /// The sum of the account's postings (one row per currency it holds); none for a category
    /// with no postings (a category holds no currency of its own).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub balance: Option<Amount>,
}

#[derive(Debug)]
pub struct ListAccounts(pub Scope);

impl TypedTool for ListAccounts {
    type Input = NoInput;
    type Output = AccountsOutput;
    const NAME: &'static str = "list_accounts";
    const DESCRIPTION: &'static str = "List every account and category with its balance and number of postings. \
        Use it to see which categories exist, the checking balance, or total income and spending per category \
        over all time.";
    const TIER: Tier = Tier::Read;

    /// Each balance: the account's postings (a category's, all of them).
    fn figures(&self, out: &AccountsOutput) -> Option<Vec<ToolFigure>> {
        let mut figures = Vec::new();
        for (i, a) in out.accounts.iter().enumerate() {
            let Some(balance) = &a.balance else { continue };
            let holds_money = matches!(a.account_type.as_str(), "asset" | "liability");
            let measure = if holds_money {
                Measure::Balance
            } else {
                Measure::Postings
            };
            let mut query = rows::query(measure, None, None, balance.currency);
            if holds_money {
                query.accounts = vec![a.name.clone()];
            } else {
                query.categories = vec![a.name.clone()];
            }
            figures.push(rows::queried(&a.name, format!("/accounts/{i}"), balance, query));
        }
        Some(figures)
    }

    fn run(&self, _input: NoInput) -> BoxFuture<'_, Result<AccountsOutput, ToolError>> {
        Box::pin(async move {
            let owner = self.0.owner;
            let rows: Vec<(String, String, i64, i64, Option<Currency>)> = self
                .0
                .read(|conn| {
                    Box::pin(async move {
                        Ok(sqlx::query_as(
                            "SELECT a.name, a.type::text, count(p.id), coalesce(sum(p.amount_minor), 0)::bigint,
                                    coalesce(p.currency, a.currency)::text
                             FROM accounts a
                             LEFT JOIN postings p ON p.account_id = a.id AND p.owner_id = a.owner_id
                             WHERE a.owner_id = $1
                             GROUP BY a.id, a.name, a.type, coalesce(p.currency, a.currency)
                             ORDER BY a.type, a.name, 5",
                        )
                        .bind(owner.as_uuid())
                        .fetch_all(conn)
                        .await?)
                    })
                })
                .await?;
            Ok(AccountsOutput {
                accounts: rows
                    .into_iter()
                    .map(
                        |(name, account_type, postings, balance, currency)| AccountBalance {
                            name,
                            account_type,
                            postings,
                            balance: currency.map(|c| Amount::new(balance, c)),
                        },
                    )
                    .collect(),
            })
        })
    }
}
