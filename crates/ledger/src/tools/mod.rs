//! The finance tools the model calls, built per owner over a connection pool.
//!
//! Read tools: `search_transactions`, `get_spend_report`, `get_budget_status`,
//! `detect_recurring`, `flag_anomalies`, `convert_currency`, `list_accounts`. Write tools:
//! `import_statement_csv`, `categorize_transactions`, `set_category_rule`, `set_budget`,
//! `memory_save`. Each runs inside
//! [`with_owner`] and filters by its owner itself. Amounts always go out as
//! `{amount_minor, formatted, currency}`; different currencies are never added together.

mod anomalies;
mod common;
mod currency;
mod import_tool;
mod list_accounts;
mod recurring;
mod reports;
mod search;
mod writes;

use std::sync::Arc;

use kakeibo_core::{Tool, ToolRegistry, typed};
use sqlx::PgPool;

pub use self::{
    anomalies::FlagAnomalies,
    common::{Amount, Category, ISO_DATE_PATTERN, MONTH_PATTERN, Month, merchant_key},
    currency::ConvertCurrency,
    import_tool::{ImportStatementCsv, read_confined},
    list_accounts::ListAccounts,
    recurring::DetectRecurring,
    reports::{GetBudgetStatus, GetSpendReport},
    search::SearchTransactions,
    writes::{CategorizeTransactions, MemorySave, SetBudget, SetCategoryRule},
};
use crate::{db::with_owner, owner::OwnerId};

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
        ) -> futures_util::future::BoxFuture<'c, Result<T, crate::LedgerError>>,
    {
        with_owner(self.owner, &self.pool, work)
            .await
            .map_err(common::tool_error)
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
        typed(ImportStatementCsv(scope.clone())),
        typed(CategorizeTransactions(scope.clone())),
        typed(SetCategoryRule(scope.clone())),
        typed(SetBudget(scope.clone())),
        typed(MemorySave(scope.clone())),
    ];
    // The names above are distinct; a duplicate would be a programming error caught by tests.
    ToolRegistry::new(tools).unwrap_or_else(|e| panic!("tool registry: {e}"))
}
