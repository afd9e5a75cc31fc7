//! The tool contract with small tools of its own: validation lists every problem, unknown tools
//! name the available ones, write tools summarise, declarations are stable bytes.

use futures_util::future::BoxFuture;
use kakeibo_core::{CallError, Tier, ToolError, ToolRegistry, TypedTool, schema, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Spend,
    Income,
}

/// Input of the echo tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct EchoInput {
    /// A calendar month.
    #[schemars(regex(pattern = r"^\d{4}-(0[1-9]|1[0-2])$"))]
    month: String,
    /// How many rows.
    #[schemars(range(min = 1, max = 200))]
    #[serde(default = "twenty")]
    limit: u32,
    kind: Option<Kind>,
    from: Option<String>,
    to: Option<String>,
}

fn twenty() -> u32 {
    20
}

struct Echo;

impl TypedTool for Echo {
    type Input = EchoInput;
    type Output = Value;
    const NAME: &'static str = "echo";
    const DESCRIPTION: &'static str = "Use it to echo a month back.";
    const TIER: Tier = Tier::Read;

    fn check(&self, input: &EchoInput) -> Vec<String> {
        match (&input.from, &input.to) {
            (Some(from), Some(to)) if from > to => vec![format!("from ({from}) is after to ({to})")],
            _ => Vec::new(),
        }
    }

    fn run(&self, input: EchoInput) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            Ok(
                json!({"month": input.month, "limit": input.limit, "income": matches!(input.kind, Some(Kind::Income))}),
            )
        })
    }
}

/// Input of the budget tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct BudgetInput {
    category: String,
    amount_minor: i64,
}

struct Budget;

impl TypedTool for Budget {
    type Input = BudgetInput;
    type Output = Value;
    const NAME: &'static str = "budget";
    const DESCRIPTION: &'static str = "Use it to set a budget.";
    const TIER: Tier = Tier::Write;

    fn summarize(&self, input: &BudgetInput) -> String {
        format!("Set the {} budget to {}", input.category, input.amount_minor)
    }

    fn run(&self, _input: BudgetInput) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move { Err(ToolError::Refused("no such category".into())) })
    }
}

fn registry() -> ToolRegistry {
    ToolRegistry::new(vec![typed(Echo), typed(Budget)]).unwrap()
}

#[tokio::test]
async fn valid_input_runs_with_defaults() {
    let out = registry()
        .call("echo", json!({"month": "2025-03"}))
        .await
        .unwrap();
    assert_eq!(out, json!({"month": "2025-03", "limit": 20, "income": false}));
}

#[tokio::test]
async fn every_problem_is_listed() {
    let err = registry()
        .call(
            "echo",
            json!({"month": "March", "limit": 0, "kind": "gift", "to": 3}),
        )
        .await
        .unwrap_err();
    let CallError::Tool(ToolError::InvalidInput(problems)) = err else {
        panic!("{err:?}")
    };
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("month:")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("limit:")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("kind:")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("to:")), "{problems:#?}");

    let err = registry()
        .call("echo", json!({"month": "2025-03", "from": "b", "to": "a"}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        CallError::Tool(ToolError::InvalidInput(vec!["from (b) is after to (a)".into()]))
    );

    for junk in [json!(null), json!([1, 2]), json!("2025-03"), json!({})] {
        let err = registry().call("echo", junk.clone()).await.unwrap_err();
        assert!(
            matches!(err, CallError::Tool(ToolError::InvalidInput(ref p)) if !p.is_empty()),
            "{junk}: {err:?}"
        );
    }
}

#[tokio::test]
async fn unknown_tools_name_the_available_ones() {
    let err = registry().call("delete_everything", json!({})).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "there is no tool named \"delete_everything\"; the available tools are: budget, echo"
    );
}

#[test]
fn write_tools_summarise_and_read_tools_do_not() {
    let registry = registry();
    let budget = registry.get("budget").unwrap();
    assert_eq!(
        budget
            .summarize(&json!({"category": "Groceries", "amount_minor": 5}))
            .as_deref(),
        Some("Set the Groceries budget to 5")
    );
    assert!(
        registry
            .get("echo")
            .unwrap()
            .summarize(&json!({"month": "2025-03"}))
            .is_none()
    );
    assert_eq!(registry.read_only().names(), ["echo"]);
}

#[test]
fn duplicate_names_are_refused() {
    assert!(ToolRegistry::new(vec![typed(Echo), typed(Echo)]).is_err());
}

#[test]
fn declarations_are_restricted_sorted_and_stable() {
    let a = registry();
    let b = ToolRegistry::new(vec![typed(Budget), typed(Echo)]).unwrap();
    assert_eq!(a.declarations_json(), b.declarations_json());
    let parsed: Value = serde_json::from_str(a.declarations_json()).unwrap();
    assert_eq!(parsed[0]["name"], "budget");
    for declaration in parsed.as_array().unwrap() {
        assert_eq!(
            schema::forbidden_keywords(&declaration["parameters"]),
            Vec::<String>::new()
        );
    }
    let month = &parsed[1]["parameters"]["properties"]["month"];
    assert!(
        month["description"]
            .as_str()
            .unwrap()
            .contains("pattern: ^\\d{4}-(0[1-9]|1[0-2])$"),
        "{month}"
    );
    let kind = &parsed[1]["parameters"]["properties"]["kind"];
    assert_eq!(
        kind,
        &json!({"enum": ["spend", "income"], "nullable": true, "type": "string"})
    );
}
