//! `get_balances`: each account's balance, net worth and its month-end history, and what waits
//! in transit between the owner's own accounts.

use futures_util::future::BoxFuture;
use kakeibo_core::{
    Tier, ToolError, TypedTool,
    figures::{Measure, ToolFigure},
};
use kakeibo_ledger::Money;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Scope,
    common::{Amount, Month},
    rows,
};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BalancesInput {
    /// How many month-ends of net worth history to give (default 12, at most 120).
    #[serde(default)]
    pub months: Option<u32>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BalancesOutput {
    /// The currency the user's new accounts and budgets take (none before their first import).
    pub home_currency: Option<kakeibo_ledger::Currency>,
    pub accounts: Vec<Account>,
    /// Assets less liabilities, one figure per currency (never converted).
    pub net_worth: Vec<Amount>,
    pub history: Vec<MonthEnd>,
    /// Rows that look like transfers whose other side is not in the ledger yet: neither spending
    /// nor income until they are paired or settled.
    pub in_transit: Vec<Transit>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Account {
    pub name: String,
    pub kind: kakeibo_ledger::AccountKind,
    /// Held positive; owed (a card, a loan) negative.
    #[serde(flatten)]
    pub balance: Amount,
    pub postings: i64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct MonthEnd {
    pub month: String,
    #[serde(flatten)]
    pub net_worth: Amount,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Transit {
    pub transaction_id: uuid::Uuid,
    pub date: chrono::NaiveDate,
    pub account: String,
    pub description: String,
    #[serde(flatten)]
    pub amount: Amount,
}

#[derive(Debug)]
pub struct GetBalances(pub Scope);

impl TypedTool for GetBalances {
    type Input = BalancesInput;
    type Output = BalancesOutput;
    const NAME: &'static str = "get_balances";
    const DESCRIPTION: &'static str = "Each account that holds money (checking, savings, cash, a card or loan, \
        and transfers in transit) with its balance — held positive, owed negative — the net worth (assets less \
        liabilities) per currency, its month-end history, and the rows waiting in transit for the other side of a \
        transfer between the person's own accounts. Use it for 'what am I worth', 'what do I owe on my card', \
        'how much is in savings'. Transfers between own accounts are never spending or income.";
    const TIER: Tier = Tier::Read;

    /// Each account's balance (its postings), the net worth (every holding account's postings),
    /// each month-end's (up to that month's end) and each row in transit (itself).
    fn figures(&self, out: &BalancesOutput) -> Option<Vec<ToolFigure>> {
        let mut figures = Vec::new();
        for (i, w) in out.net_worth.iter().enumerate() {
            let query = rows::query(Measure::Balance, None, None, w.currency);
            figures.push(rows::queried("net worth", format!("/net_worth/{i}"), w, query));
        }
        for (i, a) in out.accounts.iter().enumerate() {
            let mut query = rows::query(Measure::Balance, None, None, a.balance.currency);
            query.accounts = vec![a.name.clone()];
            figures.push(rows::queried(
                &a.name,
                format!("/accounts/{i}"),
                &a.balance,
                query,
            ));
        }
        for (i, h) in out.history.iter().enumerate() {
            let end = Month::parse(&h.month).map(Month::last_day);
            let query = rows::query(Measure::Balance, None, end, h.net_worth.currency);
            let label = format!("net worth at the end of {}", h.month);
            figures.push(rows::queried(
                &label,
                format!("/history/{i}"),
                &h.net_worth,
                query,
            ));
        }
        for (i, t) in out.in_transit.iter().enumerate() {
            let at = format!("/in_transit/{i}");
            figures.push(rows::of_transactions(
                &t.description,
                at,
                &t.amount,
                vec![t.transaction_id],
            ));
        }
        Some(figures)
    }

    fn run(&self, input: BalancesInput) -> BoxFuture<'_, Result<BalancesOutput, ToolError>> {
        Box::pin(async move {
            let owner = self.0.owner;
            let months = input.months.unwrap_or(12).clamp(1, 120);
            let found = self
                .0
                .read(|conn| {
                    Box::pin(async move { Ok(kakeibo_ledger::balances(owner, conn, months).await?) })
                })
                .await?;
            Ok(BalancesOutput {
                home_currency: found.home_currency,
                accounts: found
                    .accounts
                    .into_iter()
                    .map(|a| Account {
                        name: a.name,
                        kind: a.kind,
                        balance: Money::new(a.balance_minor, a.currency).into(),
                        postings: a.postings,
                    })
                    .collect(),
                net_worth: found
                    .net_worth
                    .into_iter()
                    .map(|(c, m)| Money::new(m, c).into())
                    .collect(),
                history: found
                    .history
                    .into_iter()
                    .map(|h| MonthEnd {
                        month: h.month,
                        net_worth: Money::new(h.net_worth_minor, h.currency).into(),
                    })
                    .collect(),
                in_transit: found
                    .in_transit
                    .into_iter()
                    .map(|t| Transit {
                        transaction_id: t.transaction_id,
                        date: t.date,
                        account: t.account,
                        description: t.description,
                        amount: Money::new(t.amount_minor, t.currency).into(),
                    })
                    .collect(),
            })
        })
    }
}
