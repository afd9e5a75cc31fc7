//! kakeibo-tools: the fourteen finance tools the model calls, the dashboard's figures and the
//! model's memory, each built per owner over a connection pool.
//!
//! Read tools: `search_transactions`, `get_spend_report`, `get_budget_status`,
//! `detect_recurring`, `flag_anomalies`, `convert_currency`, `list_accounts`, `get_balances`.
//! Write tools: `import_statement_csv`, `categorize_transactions`, `settle_transit`,
//! `set_category_rule`, `set_budget`, `memory_save`. Each runs inside [`with_owner`] and filters by its owner itself. Amounts always
//! go out as `{amount_minor, formatted, currency}`; different currencies are never added
//! together. [`dashboard`] computes the web's first-page figures through the same read tools, and
//! [`memory`] keeps what the model saved about an owner and recalls it into the system prompt.
//! It stands on `kakeibo-ledger` and `kakeibo-core`'s tool contract, and knows nothing of turns,
//! HTTP, providers or AWS.

// A statement, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod anomalies;
pub mod balances;
mod common;
mod currency;
pub mod dashboard;
mod error;
mod import_tool;
pub mod list_accounts;
pub mod memory;
pub mod recurring;
pub mod reports;
pub mod rows;
pub mod search;
mod snapshot;
pub mod todo;
mod write_tool;
mod writes;

use std::sync::Arc;

use kakeibo_core::{Tool, ToolRegistry, typed};
use sqlx::PgPool;

pub use self::{
    anomalies::FlagAnomalies,
    balances::GetBalances,
    common::{Amount, Category, ISO_DATE_PATTERN, MONTH_PATTERN, Month, merchant_key},
    currency::{ConvertCurrency, CurrencyCode},
    error::ToolsError,
    import_tool::{
        CommitOutcome, DryRunPreview, ImportInput, ImportOutcome, ImportStatementCsv, PreviewChoices,
        answer_transfers, import_statement, preview_upload, read_confined,
    },
    list_accounts::ListAccounts,
    recurring::DetectRecurring,
    reports::{GetBudgetStatus, GetSpendReport},
    search::SearchTransactions,
    snapshot::in_snapshot,
    todo::{Todo, TodoStatus, TodoWrite, todos_of},
    write_tool::{WRITES, WriteEntry, WriteTool, run_write},
    writes::{
        CategorizeInput, CategorizeTransactions, MemoryInput, MemorySave, RuleInput, SetBudget,
        SetCategoryRule, SettleInput, SettleTransit, categorize, memory_save, set_budget, set_category_rule,
        settle_transit,
    },
};
use kakeibo_ledger::{OwnerId, with_owner};

/// Where a tool runs: whose ledger, through which pool (`app_user` in the functions, so
/// row-level security applies too).
#[derive(Debug, Clone)]
pub struct Scope {
    pub owner: OwnerId,
    pub pool: PgPool,
    /// Where `import_statement_csv` may read files by path (the CLI's import folder). `None` on
    /// the web: there only uploaded statements are read.
    pub import_root: Option<std::path::PathBuf>,
}

impl Scope {
    pub fn new(owner: OwnerId, pool: PgPool) -> Self {
        Self {
            owner,
            pool,
            import_root: None,
        }
    }

    /// The same scope, reading statements by path from `dir` too.
    #[must_use]
    pub fn with_import_root(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.import_root = Some(dir.into());
        self
    }

    /// Runs `work` in one transaction scoped to the owner, mapping failures to tool errors.
    async fn run<T, F>(&self, work: F) -> Result<T, kakeibo_core::ToolError>
    where
        F: for<'c> FnOnce(
            &'c mut sqlx::PgConnection,
        ) -> futures_util::future::BoxFuture<'c, Result<T, crate::ToolsError>>,
    {
        with_owner(self.owner, &self.pool, work)
            .await
            .map_err(common::tool_error)
    }

    /// Runs the read `work` in the snapshot open around this task ([`in_snapshot`]) when there
    /// is one for this owner, else in a transaction of its own as [`Scope::run`] does.
    async fn read<T, F>(&self, work: F) -> Result<T, kakeibo_core::ToolError>
    where
        F: for<'c> FnOnce(
            &'c mut sqlx::PgConnection,
        ) -> futures_util::future::BoxFuture<'c, Result<T, crate::ToolsError>>,
    {
        let Some(mut tx) = snapshot::take(self.owner) else {
            return self.run(work).await;
        };
        let value = work(&mut tx).await.map_err(common::tool_error)?;
        snapshot::put_back(tx);
        Ok(value)
    }
}

/// Asks one tool from code, typed, as the model would (the tool's own checks first): what the
/// dashboard and the CLI's reports read, instead of its JSON by key.
pub async fn ask<T: kakeibo_core::TypedTool>(
    tool: T,
    input: T::Input,
) -> Result<T::Output, kakeibo_core::ToolError> {
    let problems = tool.check(&input);
    if problems.is_empty() {
        tool.run(input).await
    } else {
        Err(kakeibo_core::ToolError::InvalidInput(problems))
    }
}

/// Every tool, for `owner`.
pub fn registry(scope: &Scope) -> ToolRegistry {
    let tools: Vec<Arc<dyn Tool>> = vec![
        typed(SearchTransactions(scope.clone())),
        typed(GetSpendReport(scope.clone())),
        typed(GetBudgetStatus(scope.clone())),
        typed(DetectRecurring(scope.clone())),
        typed(FlagAnomalies(scope.clone())),
        typed(ConvertCurrency),
        typed(ListAccounts(scope.clone())),
        typed(GetBalances(scope.clone())),
    ]
    .into_iter()
    .chain(WRITES.iter().map(|write| write.tool(scope)))
    .collect();
    // The names above are distinct; a duplicate would be a programming error caught by tests.
    ToolRegistry::new(tools).unwrap_or_else(|e| panic!("tool registry: {e}"))
}

/// The registry over a scope nobody owns, for what describes the tools without running them.
fn unowned(pool: &PgPool) -> ToolRegistry {
    registry(&Scope::new(OwnerId::new(uuid::Uuid::nil()), pool.clone()))
}

/// Every tool's declaration as a model request carries it, in registry order. Nothing runs.
pub fn declarations(pool: &PgPool) -> Arc<[kakeibo_core::Declaration]> {
    unowned(pool).declared()
}

/// One tool as a catalogue lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct ToolInfo {
    pub name: &'static str,
    pub tier: kakeibo_core::Tier,
    pub description: &'static str,
}

/// Every tool the agent has — name, tier, description — in registry order (by name). Nothing
/// runs, so no owner is involved: the tools are built over a scope nobody owns.
pub fn catalogue(pool: &PgPool) -> Vec<ToolInfo> {
    unowned(pool)
        .tools()
        .iter()
        .map(|t| ToolInfo {
            name: t.name(),
            tier: t.tier(),
            description: t.description(),
        })
        .collect()
}
