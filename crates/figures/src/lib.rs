//! kakeibo-figures: every figure an answer states, checked against what its tools returned.
//!
//! A read tool's result carries [`ToolFigure`]s: each amount it states, the JSON pointer it
//! stands at, and a [`RowRef`] that gives back the ledger rows it was made of. When a turn ends,
//! [`find`] reads every money figure and percentage out of the answer's text — any currency
//! written before or after, Western and Indian grouping, decimal commas, negatives, `k`/`M`/
//! `lakh`/`crore`, hedges like "about" — and [`check`] matches each against the turn's figures:
//! equal in minor units, the sum or difference of two, or (a percentage) their ratio. What
//! matches is grounded, with its sources; what matches nothing is ungrounded, and says so.
//!
//! It knows nothing of turns, tools or the database: plain values in, plain values out.

// An answer is model output: nothing in it may make this code index out of bounds.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod check;
mod find;

use kakeibo_money::Currency;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use check::{Checked, FigureCheck, Grounding, How, check};
pub use find::{Marker, Stated, StatedKind, find};

/// Where a tool's figure came from: what gives back the rows that add up to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowRef {
    /// These transactions: the figure is their amounts' sum.
    Transactions { ids: Vec<Uuid> },
    /// The owner's postings this query selects: the figure is their sum.
    Query(RowQuery),
}

/// A selection of the owner's postings that the ledger can run again. Every field narrows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RowQuery {
    pub measure: Measure,
    /// First day, `YYYY-MM-DD`, inclusive; absent: from the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Last day, `YYYY-MM-DD`, inclusive; absent: to the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The category (expense or income account) names; empty: every one the measure counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// The asset or liability account names; empty: every one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<String>,
    pub currency: Currency,
}

/// What a [`RowQuery`] adds up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Spending: postings on expense categories, money in on Uncategorized left out (it is
    /// income) — what the spend report totals.
    Spending,
    /// Income: postings on income categories, and money in on Uncategorized.
    Income,
    /// Every posting on the named categories, in and out (what a budget counts as spent).
    Postings,
    /// A balance: every posting on the accounts that hold money (the named ones, or all).
    Balance,
}

/// One amount a tool's result states, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolFigure {
    /// What the amount is, in a few words ("total", "Dining", "2025-06", "Netflix").
    pub label: String,
    /// Where it stands in the tool's result (RFC 6901).
    pub pointer: String,
    pub amount_minor: i64,
    pub currency: Currency,
    /// The rows that make it; absent for a figure no row makes (a budget, a rate's result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<RowRef>,
    /// How the rows make it: their sum (the default), or their average.
    #[serde(default, skip_serializing_if = "Aggregate::is_sum")]
    pub aggregate: Aggregate,
}

/// How a figure is made of its rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    /// The rows' amounts added up.
    #[default]
    Sum,
    /// The rows' amounts added up and divided by how many there are, rounded half away from
    /// zero to the minor unit (a recurring payment's typical amount).
    Average,
}

impl Aggregate {
    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
    fn is_sum(&self) -> bool {
        *self == Self::Sum
    }
}

impl ToolFigure {
    pub fn new(
        label: impl Into<String>,
        pointer: impl Into<String>,
        amount_minor: i64,
        currency: Currency,
    ) -> Self {
        Self {
            label: label.into(),
            pointer: pointer.into(),
            amount_minor,
            currency,
            rows: None,
            aggregate: Aggregate::Sum,
        }
    }

    #[must_use]
    pub fn with_rows(mut self, rows: RowRef) -> Self {
        self.rows = Some(rows);
        self
    }

    /// The figure is its rows' average, not their sum.
    #[must_use]
    pub fn averaged(mut self) -> Self {
        self.aggregate = Aggregate::Average;
        self
    }
}

/// A result's headline figure as a person sees it beside the call: what it is, and the amount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Headline {
    pub label: String,
    /// The amount for people (`$2,191.73`, `₹48,250.00`).
    pub formatted: String,
    pub amount_minor: i64,
    pub currency: Currency,
}

impl Headline {
    pub fn of(figure: &ToolFigure) -> Self {
        Self {
            label: figure.label.clone(),
            formatted: kakeibo_money::Money::new(figure.amount_minor, figure.currency).format(),
            amount_minor: figure.amount_minor,
            currency: figure.currency,
        }
    }
}

/// A tool figure of a turn: which call returned it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Source {
    /// The tool call's id.
    pub call_id: String,
    pub tool: String,
    #[serde(flatten)]
    pub figure: ToolFigure,
}

/// Every amount object (`{amount_minor, currency, …}`) in a tool's result, with its pointer and
/// no rows: what a tool that says nothing more of its figures gives. At most `limit`.
pub fn amounts_in(value: &serde_json::Value, limit: usize) -> Vec<ToolFigure> {
    let mut out = Vec::new();
    walk(value, "", "", &mut out, limit);
    out
}

fn walk(value: &serde_json::Value, pointer: &str, key: &str, out: &mut Vec<ToolFigure>, limit: usize) {
    use serde_json::Value;
    if out.len() >= limit {
        return;
    }
    match value {
        Value::Object(map) => {
            let amount = map.get("amount_minor").and_then(Value::as_i64);
            let currency = map
                .get("currency")
                .and_then(Value::as_str)
                .and_then(|c| Currency::parse(c).ok());
            if let (Some(amount), Some(currency)) = (amount, currency) {
                let label = ["group", "category", "name", "description", "merchant", "account"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_str))
                    .unwrap_or(key);
                out.push(ToolFigure::new(label, pointer, amount, currency));
            }
            for (k, v) in map {
                walk(v, &format!("{pointer}/{}", escape(k)), k, out, limit);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, &format!("{pointer}/{i}"), key, out, limit);
            }
        }
        _ => {}
    }
}

/// A key as a JSON pointer writes it.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
