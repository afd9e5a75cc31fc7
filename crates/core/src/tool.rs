//! The tool contract: what a tool declares, how its input is checked, how it runs.

use std::{
    any::TypeId,
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock},
};

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::{
    figures::{ToolFigure, amounts_in},
    schema,
};

/// Whether a tool only reads, or changes the user's data (and so needs their confirmation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Read,
    Write,
}

/// What a provider is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Declaration {
    pub name: &'static str,
    pub description: &'static str,
    /// The input schema in the restricted subset (see [`crate::schema`]); shared, so a
    /// declaration copies for the price of a pointer.
    pub parameters: Arc<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The input does not fit the tool: every problem found, for the model to correct.
    #[error("invalid arguments: {}", .0.join("; "))]
    InvalidInput(Vec<String>),
    /// The tool ran and refused (no such category, file not allowed, …): a message for the model.
    #[error("{0}")]
    Refused(String),
    /// Something failed that may work when tried again (a dropped database connection, a timeout).
    #[error("temporarily unavailable: {0}")]
    Transient(String),
    /// Something failed that retrying will not fix.
    #[error("failed: {0}")]
    Failed(String),
}

/// A tool as the loop sees it: untyped JSON in, JSON out.
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    /// When to use the tool, written for the model.
    fn description(&self) -> &'static str;
    fn tier(&self) -> Tier;
    fn declaration(&self) -> &Declaration;
    /// Checks `input` against the tool's schema and rules; every problem, or the empty list.
    fn validate(&self, input: &Value) -> Vec<String>;
    /// One line for a confirmation card (what a write would do). `None` for read tools.
    fn summarize(&self, input: &Value) -> Option<String>;
    /// The confirmation card's line when saying what the write would do means looking something
    /// up (a stored plan's rows and totals); by default [`Tool::summarize`]. The loop asks this
    /// one; a failed look-up falls back to the summary.
    fn describe<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Option<String>> {
        Box::pin(std::future::ready(self.summarize(input)))
    }
    /// Validates again, then runs.
    fn execute(&self, input: Value) -> BoxFuture<'_, Result<Value, ToolError>>;
    /// [`Tool::execute`], with the figures of the result and the rows behind them — what the
    /// loop runs, so an answer's figures can be checked against them. By default every amount
    /// object in the result, with no rows.
    fn execute_sourced(&self, input: Value) -> BoxFuture<'_, Result<Sourced, ToolError>> {
        Box::pin(async move {
            let value = self.execute(input).await?;
            let figures = amounts_in(&value, MAX_FIGURES);
            Ok(Sourced { value, figures })
        })
    }

    /// `Some` for the `task` tool only: the loop runs its calls itself, in a subagent
    /// ([`crate::turn::subagent`]).
    fn subagents(&self) -> Option<&crate::turn::subagent::TaskTool> {
        None
    }
}

/// The most figures one result is checked with.
pub const MAX_FIGURES: usize = 200;

/// A tool's result and the figures it states.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced {
    pub value: Value,
    /// Headline first: the figure a margin shows for the call.
    pub figures: Vec<ToolFigure>,
}

/// A tool with typed input and output; [`typed`] turns it into a [`Tool`].
pub trait TypedTool: Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    type Output: Serialize + Send;
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    const TIER: Tier;

    /// Rules the schema cannot say (a range whose end is before its start, …).
    fn check(&self, _input: &Self::Input) -> Vec<String> {
        Vec::new()
    }

    /// One line for the confirmation card of a write tool.
    fn summarize(&self, _input: &Self::Input) -> String {
        format!("Run {}", Self::NAME)
    }

    /// The card's line from what the tool can look up (a stored plan); `None` (the default, and
    /// whenever the look-up fails) keeps [`TypedTool::summarize`].
    fn describe<'a>(&'a self, _input: &'a Self::Input) -> BoxFuture<'a, Option<String>> {
        Box::pin(std::future::ready(None))
    }

    fn run(&self, input: Self::Input) -> BoxFuture<'_, Result<Self::Output, ToolError>>;

    /// The figures `output` states, headline first, each with the rows that make it (the output
    /// may keep what it needs for them out of its serialised form); `None`
    /// (the default) reads every amount object of the serialised result, with no rows.
    fn figures(&self, _output: &Self::Output) -> Option<Vec<ToolFigure>> {
        None
    }
}

/// The per-type part of a typed tool, computed once per process.
struct Compiled {
    declaration: Declaration,
    validator: Option<jsonschema::Validator>,
}

fn compiled<T: TypedTool>() -> Arc<Compiled> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<Compiled>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let mut cache = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    Arc::clone(cache.entry(TypeId::of::<T>()).or_insert_with(|| {
        let validation = schema::validation_schema::<T::Input>();
        Arc::new(Compiled {
            declaration: Declaration {
                name: T::NAME,
                description: T::DESCRIPTION,
                parameters: Arc::new(schema::declaration_schema::<T::Input>()),
            },
            // A schema schemars derived always compiles; if one ever did not, serde still
            // checks the input when it is deserialised.
            validator: jsonschema::validator_for(&validation).ok(),
        })
    }))
}

/// Every way `input` does not fit the schema `validator` checks, each as `path: problem` (the
/// path dotted, `input` for the whole), for the model to correct.
pub fn problems(validator: &jsonschema::Validator, input: &Value) -> Vec<String> {
    validator
        .iter_errors(input)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() {
                "input".to_owned()
            } else {
                path.trim_start_matches('/').replace('/', ".")
            };
            format!("{at}: {e}")
        })
        .collect()
}

/// Wraps a [`TypedTool`] as a [`Tool`].
pub fn typed<T: TypedTool>(tool: T) -> Arc<dyn Tool> {
    Arc::new(Typed {
        compiled: compiled::<T>(),
        tool,
    })
}

struct Typed<T> {
    compiled: Arc<Compiled>,
    tool: T,
}

impl<T: TypedTool> Typed<T> {
    fn parse(&self, input: &Value) -> Result<T::Input, Vec<String>> {
        let mut problems: Vec<String> = match &self.compiled.validator {
            Some(validator) => problems(validator, input),
            None => Vec::new(),
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        match serde_json::from_value::<T::Input>(input.clone()) {
            Ok(parsed) => {
                problems = self.tool.check(&parsed);
                if problems.is_empty() {
                    Ok(parsed)
                } else {
                    Err(problems)
                }
            }
            Err(e) => Err(vec![format!("input: {e}")]),
        }
    }
}

impl<T: TypedTool> Tool for Typed<T> {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }

    fn tier(&self) -> Tier {
        T::TIER
    }

    fn declaration(&self) -> &Declaration {
        &self.compiled.declaration
    }

    fn validate(&self, input: &Value) -> Vec<String> {
        self.parse(input).err().unwrap_or_default()
    }

    fn summarize(&self, input: &Value) -> Option<String> {
        if T::TIER == Tier::Read {
            return None;
        }
        Some(match self.parse(input) {
            Ok(parsed) => self.tool.summarize(&parsed),
            Err(_) => format!("{} (with arguments that do not validate)", T::NAME),
        })
    }

    fn describe<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            if T::TIER == Tier::Read {
                return None;
            }
            match self.parse(input) {
                Ok(parsed) => match self.tool.describe(&parsed).await {
                    Some(line) => Some(line),
                    None => Some(self.tool.summarize(&parsed)),
                },
                Err(_) => self.summarize(input),
            }
        })
    }

    fn execute(&self, input: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            let parsed = self.parse(&input).map_err(ToolError::InvalidInput)?;
            let output = self.tool.run(parsed).await?;
            serde_json::to_value(output)
                .map_err(|e| ToolError::Failed(format!("serialising the result: {e}")))
        })
    }

    fn execute_sourced(&self, input: Value) -> BoxFuture<'_, Result<Sourced, ToolError>> {
        Box::pin(async move {
            let parsed = self.parse(&input).map_err(ToolError::InvalidInput)?;
            let output = self.tool.run(parsed).await?;
            let value = serde_json::to_value(&output)
                .map_err(|e| ToolError::Failed(format!("serialising the result: {e}")))?;
            let mut figures = self
                .tool
                .figures(&output)
                .unwrap_or_else(|| amounts_in(&value, MAX_FIGURES));
            figures.truncate(MAX_FIGURES);
            Ok(Sourced { value, figures })
        })
    }
}
