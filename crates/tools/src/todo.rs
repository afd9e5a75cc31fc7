//! `todo_write`: the model's task list for long work ("categorise every uncategorised
//! transaction of 2025"), rewritten whole at each call. It changes nothing of the person's, so
//! it is a read: it runs unasked. The list lives in the conversation (each call's input is the
//! whole list), and every surface shows the latest as a checklist — the CLI under the call, ACP
//! as the session's plan.

use futures_util::future::BoxFuture;
use kakeibo_core::{Tier, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most items a list holds.
pub const MAX_TODOS: usize = 30;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Todo {
    /// What to do, in a few words ("Categorise March's uncategorised rows").
    #[schemars(length(min = 1, max = 200))]
    pub content: String,
    pub status: TodoStatus,
}

/// The whole list, as it stands now.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TodoInput {
    /// Every item, in order; at most one `in_progress`.
    #[schemars(length(max = 30))]
    pub todos: Vec<Todo>,
}

/// The list kept, and how far it is.
#[derive(Debug, Clone, Serialize)]
pub struct TodoOutput {
    pub todos: Vec<Todo>,
    /// `2 of 5 done`.
    pub progress: String,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct TodoWrite;

impl TypedTool for TodoWrite {
    type Input = TodoInput;
    type Output = TodoOutput;
    const NAME: &'static str = "todo_write";
    const DESCRIPTION: &'static str = "Keep your task list for work of several steps (three or more): \
         send the whole list each time, every item with its status (pending, in_progress, completed), \
         at most one in_progress. Mark an item in_progress before you start it and completed as soon as \
         it is done. The person sees the list as a checklist. Not for a question one or two calls answer.";
    const TIER: Tier = Tier::Read;

    fn check(&self, input: &TodoInput) -> Vec<String> {
        let mut problems = Vec::new();
        let working = input
            .todos
            .iter()
            .filter(|t| t.status == TodoStatus::InProgress)
            .count();
        if working > 1 {
            problems.push(format!(
                "todos: {working} items are in_progress; at most one may be"
            ));
        }
        if input.todos.iter().any(|t| t.content.trim().is_empty()) {
            problems.push("todos: an item's content is blank".to_owned());
        }
        problems
    }

    fn run(&self, input: TodoInput) -> BoxFuture<'_, Result<TodoOutput, ToolError>> {
        let done = input
            .todos
            .iter()
            .filter(|t| t.status == TodoStatus::Completed)
            .count();
        let progress = format!("{done} of {} done", input.todos.len());
        Box::pin(std::future::ready(Ok(TodoOutput {
            todos: input.todos,
            progress,
        })))
    }
}

/// The items of a `todo_write` call's input when the tool will take it (what surfaces show as
/// the list); `None` for an input it refuses.
pub fn todos_of(args: &serde_json::Value) -> Option<Vec<Todo>> {
    let tool = kakeibo_core::typed(TodoWrite);
    if !tool.validate(args).is_empty() {
        return None;
    }
    serde_json::from_value::<TodoInput>(args.clone())
        .ok()
        .map(|input| input.todos)
}

#[cfg(test)]
mod tests {
    use kakeibo_core::typed;
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn the_list_is_checked_and_kept_whole() {
        let tool = typed(TodoWrite);
        assert_eq!(tool.tier(), Tier::Read);
        let list = json!({"todos": [
            {"content": "Find March's uncategorised rows", "status": "completed"},
            {"content": "Categorise them", "status": "in_progress"},
            {"content": "Check the budget", "status": "pending"},
        ]});
        let out = tool.execute(list.clone()).await.unwrap();
        assert_eq!(out["progress"], "1 of 3 done");
        assert_eq!(out["todos"], list["todos"]);
        assert_eq!(todos_of(&list).unwrap().len(), 3);
        let two = json!({"todos": [
            {"content": "a", "status": "in_progress"},
            {"content": "b", "status": "in_progress"},
        ]});
        assert_eq!(
            tool.validate(&two),
            ["todos: 2 items are in_progress; at most one may be"]
        );
        assert_eq!(todos_of(&two), None, "a list the tool refuses is not shown");
        assert!(
            !tool
                .validate(&json!({"todos": [{"content": "a", "status": "doing"}]}))
                .is_empty()
        );
        assert!(
            !tool
                .validate(&json!({"todos": [{"content": "  ", "status": "pending"}]}))
                .is_empty()
        );
        let many: Vec<_> = (0..31)
            .map(|i| json!({"content": format!("{i}"), "status": "pending"}))
            .collect();
        assert!(!tool.validate(&json!({"todos": many})).is_empty(), "at most 30");
        assert_eq!(MAX_TODOS, 30);
    }
}
