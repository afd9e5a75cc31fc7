//! The write tools as one kind: each a [`WriteTool`], applied on a connection already scoped to
//! its owner — its own transaction when the loop runs it, the transaction that records a
//! person's decision when the confirm protocol does ([`run_write`]). [`WRITES`] lists them once:
//! the registry and the confirm protocol both read it, so a write tool added there is offered to
//! the model and applied on confirmation alike, and one left out is neither.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use kakeibo_core::{Tool, ToolError, TypedTool, typed};
use serde_json::Value;
use sqlx::PgConnection;

use crate::{
    CategorizeTransactions, ImportStatementCsv, MemorySave, Scope, SetBudget, SetCategoryRule, SettleTransit,
    ToolsError, common,
};

/// A tool that changes the owner's data.
pub trait WriteTool: TypedTool {
    /// The tool, over `scope`.
    fn over(scope: Scope) -> Self;

    /// The scope it runs in.
    fn scope(&self) -> &Scope;

    /// Applies the write on `conn`, a transaction already scoped to the owner.
    fn apply<'c>(
        scope: &'c Scope,
        conn: &'c mut PgConnection,
        input: Self::Input,
    ) -> BoxFuture<'c, Result<Self::Output, ToolsError>>;
}

/// The [`WriteTool`] of a tool over a scope (`Tool(Scope)`): its write is `apply(owner, conn,
/// &input)` (`owner apply`) or `apply(scope, conn, input)` (`scope apply`).
macro_rules! write_tool {
    ($tool:ident, owner $apply:ident) => {
        write_tool!(@impl $tool, |scope, conn, input| $apply(scope.owner, conn, &input));
    };
    ($tool:ident, scope $apply:ident) => {
        write_tool!(@impl $tool, |scope, conn, input| $apply(scope, conn, input));
    };
    (@impl $tool:ident, |$scope:ident, $conn:ident, $input:ident| $call:expr) => {
        impl WriteTool for $tool {
            fn over(scope: Scope) -> Self {
                Self(scope)
            }

            fn scope(&self) -> &Scope {
                &self.0
            }

            fn apply<'c>(
                $scope: &'c Scope,
                $conn: &'c mut PgConnection,
                $input: Self::Input,
            ) -> BoxFuture<'c, Result<Self::Output, ToolsError>> {
                Box::pin(async move { $call.await })
            }
        }
    };
}
pub(crate) use write_tool;

/// [`TypedTool::run`] of a write tool: [`WriteTool::apply`] in a transaction of its own.
pub(crate) fn in_own_transaction<T: WriteTool>(
    tool: &T,
    input: T::Input,
) -> BoxFuture<'_, Result<T::Output, ToolError>> {
    let scope = tool.scope().clone();
    Box::pin(async move {
        let within = scope.clone();
        scope
            .run(move |conn| Box::pin(async move { T::apply(&within, conn, input).await }))
            .await
    })
}

/// Applies a write from its stored arguments: what [`run_write`] dispatches to.
type Applier = for<'c> fn(&'c Scope, &'c mut PgConnection, Value) -> BoxFuture<'c, Result<Value, ToolError>>;

/// One write tool: its name, how to make it over a scope, how to apply stored arguments.
pub struct WriteEntry {
    pub name: &'static str,
    make: fn(Scope) -> Arc<dyn Tool>,
    apply: Applier,
}

impl std::fmt::Debug for WriteEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl WriteEntry {
    const fn of<T: WriteTool>() -> Self {
        Self {
            name: T::NAME,
            make: make::<T>,
            apply: apply::<T>,
        }
    }

    /// The tool over `scope`, for the registry.
    pub fn tool(&self, scope: &Scope) -> Arc<dyn Tool> {
        (self.make)(scope.clone())
    }
}

fn make<T: WriteTool>(scope: Scope) -> Arc<dyn Tool> {
    typed(T::over(scope))
}

fn apply<'c, T: WriteTool>(
    scope: &'c Scope,
    conn: &'c mut PgConnection,
    args: Value,
) -> BoxFuture<'c, Result<Value, ToolError>> {
    Box::pin(async move {
        let input: T::Input =
            serde_json::from_value(args).map_err(|e| ToolError::InvalidInput(vec![e.to_string()]))?;
        let output = T::apply(scope, conn, input).await.map_err(common::tool_error)?;
        serde_json::to_value(output).map_err(|e| common::tool_error(ToolsError::Serialise(e)))
    })
}

/// Every write tool, by name.
pub const WRITES: [WriteEntry; 6] = [
    WriteEntry::of::<CategorizeTransactions>(),
    WriteEntry::of::<ImportStatementCsv>(),
    WriteEntry::of::<MemorySave>(),
    WriteEntry::of::<SetBudget>(),
    WriteEntry::of::<SetCategoryRule>(),
    WriteEntry::of::<SettleTransit>(),
];

/// Runs the write tool `name` on `conn`, a transaction already scoped to the owner: what the
/// confirm protocol uses to apply an approved write in the transaction that records it. The
/// arguments are parsed again here; a name that is not a write tool's is refused.
pub async fn run_write(
    scope: &Scope,
    conn: &mut PgConnection,
    name: &str,
    args: Value,
) -> Result<Value, ToolError> {
    match WRITES.iter().find(|w| w.name == name) {
        Some(write) => (write.apply)(scope, conn, args).await,
        None => Err(ToolError::Refused(format!("{name} is not a write tool"))),
    }
}

#[cfg(test)]
mod tests {
    use kakeibo_core::Tier;

    use super::*;

    #[tokio::test]
    async fn the_registry_s_writes_are_exactly_the_listed_ones() {
        // The pool never connects: making tools needs no database.
        let pool = kakeibo_ledger::connect("postgres://nobody@127.0.0.1:1/none", 1).unwrap();
        let scope = Scope::new(kakeibo_ledger::EVAL_OWNER, pool);
        let registry = crate::registry(&scope);
        let writes: Vec<&str> = registry
            .tools()
            .iter()
            .filter(|t| t.tier() == Tier::Write)
            .map(|t| t.name())
            .collect();
        let listed: Vec<&str> = WRITES.iter().map(|w| w.name).collect();
        assert_eq!(writes, listed, "the registry and WRITES are in name order");
        assert!(WRITES.iter().all(|w| w.tool(&scope).tier() == Tier::Write));
    }
}
