//! The JSON export: everything a person has in kakeibo, in one document whose JSON Schema is
//! published (`schema/export.schema.json`). [`crate::export`] writes it a row at a time; the
//! restore ([`crate::restore`]) reads it back as [`Export`].

use chrono::{DateTime, NaiveDate, Utc};
use kakeibo_ledger::{AccountKind, AccountType};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// The `format` every kakeibo JSON export starts with.
pub const FORMAT: &str = "kakeibo-export";
/// The export's version: a restore reads this one.
pub const VERSION: u32 = 1;

/// A whole JSON export. Amounts are integer minor units of their `currency` (`amount_minor`
/// 12345 in INR is ₹123.45), as in the ledger.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Export {
    /// Always `kakeibo-export`.
    pub format: String,
    pub version: u32,
    pub exported_at: DateTime<Utc>,
    /// The owner whose ledger this is.
    pub owner: Uuid,
    /// The dates the transactions were limited to; none for a whole export (the only kind a
    /// restore reads).
    pub period: Option<PeriodRow>,
    pub settings: Settings,
    pub accounts: Vec<AccountRow>,
    pub import_batches: Vec<BatchRow>,
    pub budgets: Vec<BudgetRow>,
    pub rules: Vec<RuleRow>,
    pub memories: Vec<MemoryRow>,
    pub import_mappings: Vec<MappingRow>,
    pub ledger_edits: Vec<EditRow>,
    pub transactions: Vec<TransactionRow>,
    pub conversations: Vec<ConversationRow>,
    pub runs: Vec<RunRow>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PeriodRow {
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The currency reports total in.
    pub home_currency: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct AccountRow {
    pub id: Uuid,
    pub name: String,
    /// asset, liability, income, expense or equity.
    #[serde(rename = "type")]
    #[sqlx(rename = "type")]
    pub account_type: AccountType,
    /// checking, savings, cash or transit (assets); card or loan (liabilities).
    pub kind: Option<AccountKind>,
    /// The one currency of an asset, liability or equity account; none for a category.
    pub currency: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A statement imported, with the plan it was committed from (its closing balance included).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct BatchRow {
    pub id: Uuid,
    pub account_id: Option<Uuid>,
    pub filename: String,
    pub source_sha256: Option<String>,
    pub row_count: i32,
    pub created_at: DateTime<Utc>,
    pub imported_at: Option<DateTime<Utc>>,
    pub undone_at: Option<DateTime<Utc>>,
    pub options_key: Option<String>,
    pub plan: Option<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct BudgetRow {
    pub id: Uuid,
    pub account_id: Uuid,
    /// YYYY-MM.
    pub month: String,
    pub amount_minor: i64,
    pub currency: String,
}

/// A categorisation rule: a description matching `pattern` goes to `account_id`; the lowest
/// priority wins.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct RuleRow {
    pub id: Uuid,
    pub pattern: String,
    pub account_id: Uuid,
    pub priority: i32,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct MemoryRow {
    pub id: Uuid,
    pub content: String,
    pub category: String,
    /// user_stated or agent_inferred.
    pub source: String,
    pub created_at: DateTime<Utc>,
}

/// How a statement's columns were read, remembered for the next statement of that account.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct MappingRow {
    pub account: String,
    pub mapping: Value,
    pub source: String,
    pub updated_at: DateTime<Utc>,
}

/// An edit a person made to the ledger, with the rows before and after (its undo).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct EditRow {
    pub id: Uuid,
    pub made_at: DateTime<Utc>,
    pub made_by: String,
    pub kind: String,
    pub summary: String,
    pub before: Value,
    pub after: Value,
    pub import_batch_id: Option<Uuid>,
    pub reverted_at: Option<DateTime<Utc>>,
    pub reverted_by: Option<Uuid>,
    pub detail: Option<Value>,
}

/// A transaction with all its postings; they sum to zero in each currency.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransactionRow {
    pub id: Uuid,
    pub date: NaiveDate,
    pub description: String,
    /// The text as the statement had it.
    pub raw_description: String,
    pub import_batch_id: Option<Uuid>,
    pub source_hash: Option<String>,
    /// The bank's own reference for the row (OFX FITID, camt AcctSvcrRef), when it gave one.
    pub bank_ref: Option<String>,
    pub bank_category: Option<String>,
    /// The other statement line of a transfer made of two (each account's statement has one).
    pub paired_source_hash: Option<String>,
    pub paired_description: Option<String>,
    pub paired_batch_id: Option<Uuid>,
    pub paired_date: Option<NaiveDate>,
    pub created_at: DateTime<Utc>,
    pub postings: Vec<PostingRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostingRow {
    pub id: Uuid,
    pub account_id: Uuid,
    /// Signed minor units: the effect on the account.
    pub amount_minor: i64,
    pub currency: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversationRow {
    pub id: Uuid,
    pub title: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// What older messages were folded into, when the conversation grew long.
    pub summary: Option<Value>,
    pub history_from: i32,
    pub messages: Vec<MessageRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct MessageRow {
    pub seq: i32,
    pub message: Value,
    pub created_at: DateTime<Utc>,
}

/// A run of the agent, summarised: what was asked, by which model, what it cost. The step-by-step
/// trace stays behind.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, sqlx::FromRow)]
#[serde(deny_unknown_fields)]
pub struct RunRow {
    pub id: Uuid,
    pub conversation_id: Option<Uuid>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub provider: String,
    pub model: String,
    pub status: String,
    pub channel: String,
    pub iterations: i32,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cached_tokens: i64,
    /// US dollars, as text (six decimals).
    pub cost_usd_est: String,
    pub latency_ms: i32,
    pub question: Option<String>,
}
