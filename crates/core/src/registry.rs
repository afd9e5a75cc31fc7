//! The set of tools one owner's turn may call.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::tool::{Declaration, Tier, Tool, ToolError};

/// Tools by name. Built per owner (each tool closes over its owner), so the declarations are the
/// same for every tenant and a provider's cached prompt prefix stays shared.
#[derive(Clone)]
pub struct ToolRegistry {
    /// Sorted by name; names are unique.
    tools: Vec<Arc<dyn Tool>>,
    declared: Arc<OnceLock<Arc<[Declaration]>>>,
    declarations_json: Arc<OnceLock<String>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("there is no tool named {name:?}; the available tools are: {}", .available.join(", "))]
    UnknownTool {
        name: String,
        available: Vec<&'static str>,
    },
    #[error(transparent)]
    Tool(#[from] ToolError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("two tools are named {0:?}")]
pub struct DuplicateTool(pub &'static str);

impl ToolRegistry {
    pub fn new(mut tools: Vec<Arc<dyn Tool>>) -> Result<Self, DuplicateTool> {
        tools.sort_by_key(|t| t.name());
        if let Some((twice, _)) = tools
            .iter()
            .zip(tools.iter().skip(1))
            .find(|(a, b)| a.name() == b.name())
        {
            return Err(DuplicateTool(twice.name()));
        }
        Ok(Self {
            tools,
            declared: Arc::default(),
            declarations_json: Arc::default(),
        })
    }

    /// Only the read tier (for read-only surfaces).
    #[must_use]
    pub fn read_only(&self) -> Self {
        Self {
            tools: self
                .tools
                .iter()
                .filter(|t| t.tier() == Tier::Read)
                .cloned()
                .collect(),
            declared: Arc::default(),
            declarations_json: Arc::default(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .binary_search_by_key(&name, |t| t.name())
            .ok()
            .and_then(|i| self.tools.get(i))
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The declarations, sorted by tool name.
    pub fn declarations(&self) -> Vec<&Declaration> {
        self.tools.iter().map(|t| t.declaration()).collect()
    }

    /// The declarations, sorted by tool name, as a model request carries them: copied once per
    /// registry, shared by every request after that.
    pub fn declared(&self) -> Arc<[Declaration]> {
        Arc::clone(
            self.declared
                .get_or_init(|| self.tools.iter().map(|t| t.declaration().clone()).collect()),
        )
    }

    /// The declarations as JSON: keys sorted at every depth, tools by name, computed once. The
    /// same tools give the same bytes in every build and process.
    pub fn declarations_json(&self) -> &str {
        self.declarations_json.get_or_init(|| {
            let declarations: Vec<Value> = self
                .declarations()
                .into_iter()
                .map(|d| crate::schema::sorted(&serde_json::to_value(d).unwrap_or(Value::Null)))
                .collect();
            serde_json::to_string(&declarations).unwrap_or_default()
        })
    }

    /// Looks the tool up, validates `input`, and runs it.
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, CallError> {
        let tool = self.get(name).ok_or_else(|| CallError::UnknownTool {
            name: name.to_owned(),
            available: self.names(),
        })?;
        Ok(tool.execute(input).await?)
    }
}
