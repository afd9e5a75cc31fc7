//! Task files: what a task asks, how its turns are confirmed, and how it is checked.
//!
//! A YAML file holds a list of tasks (a single task is accepted too). Loading validates what YAML
//! cannot: at least one turn and one check, ids unique across files, regexes that compile, judge
//! thresholds from 1 to 5. Every error names the file and the task.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("{file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: not a task file: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: task {id:?}: {message}")]
    Invalid {
        file: String,
        id: String,
        message: String,
    },
    #[error("no task files (*.yaml) in {0}")]
    Empty(String),
}

/// How the writes a turn proposes are decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfirmAnswer {
    Allow,
    Deny,
    /// Nobody answers: writes are declined, like `deny`.
    #[default]
    None,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setup {
    /// The evaluation owner's ledger is replaced by a fresh copy of the demo seed.
    #[default]
    ResetAndSeed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnSpec {
    pub user: String,
    #[serde(default)]
    pub confirm: ConfirmAnswer,
}

/// The value a `sql_equals` check expects, compared as a string (`null` only with `null`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Expected {
    Text(String),
    Number(serde_json::Number),
    Bool(bool),
    Null,
}

impl Expected {
    pub fn as_text(&self) -> Option<String> {
        match self {
            Self::Text(text) => Some(text.clone()),
            Self::Number(n) => Some(n.to_string()),
            Self::Bool(b) => Some(b.to_string()),
            Self::Null => None,
        }
    }
}

fn default_times() -> u32 {
    1
}
fn default_flags() -> String {
    "i".into()
}
fn default_threshold() -> u8 {
    4
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    SqlEquals {
        query: String,
        expect: Expected,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    ToolWasCalled {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        args_subset: Option<Value>,
        #[serde(default = "default_times")]
        times: u32,
        /// A whole argument object a correct agent could send (holding `args_subset`). Never
        /// matched against the agent's calls: the suite's oracle test makes this call, so a task
        /// can ask for little (`args_subset`) and still be proven solvable.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        example_args: Option<Value>,
    },
    ToolNotCalled {
        name: String,
    },
    NoUnconfirmedWrites,
    ResponseContains {
        text: String,
        #[serde(default)]
        case_sensitive: bool,
    },
    ResponseNotContains {
        text: String,
    },
    ResponseRegex {
        pattern: String,
        #[serde(default = "default_flags")]
        flags: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    Judge {
        rubric: String,
        #[serde(default = "default_threshold")]
        threshold: u8,
    },
}

impl Check {
    /// The name of the check's type, as written in task files and reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::SqlEquals { .. } => "sql_equals",
            Self::ToolWasCalled { .. } => "tool_was_called",
            Self::ToolNotCalled { .. } => "tool_not_called",
            Self::NoUnconfirmedWrites => "no_unconfirmed_writes",
            Self::ResponseContains { .. } => "response_contains",
            Self::ResponseNotContains { .. } => "response_not_contains",
            Self::ResponseRegex { .. } => "response_regex",
            Self::Judge { .. } => "judge",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub id: String,
    pub description: String,
    #[serde(default)]
    pub setup: Setup,
    pub class: String,
    #[serde(default)]
    pub tags: Vec<String>,
    pub turns: Vec<TurnSpec>,
    pub checks: Vec<Check>,
}

impl Task {
    /// Whether `filter` selects this task: its class, one of its tags, or part of its id.
    pub fn matches(&self, filter: &str) -> bool {
        self.class == filter || self.tags.iter().any(|t| t == filter) || self.id.contains(filter)
    }

    fn validate(&self) -> Result<(), String> {
        if self.id.trim().is_empty() {
            return Err("the id is empty".into());
        }
        if self.class.trim().is_empty() {
            return Err("the class is empty".into());
        }
        if self.turns.is_empty() {
            return Err("a task needs at least one turn".into());
        }
        if self.turns.iter().any(|t| t.user.trim().is_empty()) {
            return Err("a turn has no user text".into());
        }
        if self.checks.is_empty() {
            return Err("a task needs at least one check".into());
        }
        for check in &self.checks {
            match check {
                Check::ResponseRegex { pattern, flags, .. } => {
                    crate::checks::compile(pattern, flags)
                        .map_err(|e| format!("response_regex {pattern:?}: {e}"))?;
                }
                Check::Judge { threshold, .. } if !(1..=5).contains(threshold) => {
                    return Err(format!("judge threshold {threshold} is not between 1 and 5"));
                }
                Check::ToolWasCalled { times: 0, .. } => {
                    return Err("tool_was_called times must be at least 1".into());
                }
                Check::ToolWasCalled {
                    args_subset: Some(subset),
                    ..
                } if !subset.is_object() => {
                    return Err("tool_was_called args_subset must be an object".into());
                }
                Check::ToolWasCalled {
                    args_subset,
                    example_args: Some(example),
                    ..
                } => {
                    if !example.is_object() {
                        return Err("tool_was_called example_args must be an object".into());
                    }
                    if args_subset
                        .as_ref()
                        .is_some_and(|subset| !crate::checks::subset_matches(subset, example))
                    {
                        return Err("tool_was_called example_args must hold args_subset".into());
                    }
                }
                Check::SqlEquals { query, .. } if query.trim().is_empty() => {
                    return Err("sql_equals has an empty query".into());
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    Many(Vec<Task>),
    One(Box<Task>),
}

/// Parses one task file's text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Vec<Task>, TaskError> {
    // Parse as a list first for the better error: most files are lists.
    let tasks = match serde_yaml_ng::from_str::<Vec<Task>>(text) {
        Ok(tasks) => tasks,
        Err(list_error) => match serde_yaml_ng::from_str::<OneOrMany>(text) {
            Ok(OneOrMany::One(task)) => vec![*task],
            Ok(OneOrMany::Many(tasks)) => tasks,
            Err(_) => {
                return Err(TaskError::Parse {
                    file: file.to_owned(),
                    message: list_error.to_string(),
                });
            }
        },
    };
    for task in &tasks {
        task.validate().map_err(|message| TaskError::Invalid {
            file: file.to_owned(),
            id: task.id.clone(),
            message,
        })?;
    }
    Ok(tasks)
}

/// Parses several files (name, text) in order and checks that ids are unique across them.
pub fn parse_all<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Vec<Task>, TaskError> {
    let mut all = Vec::new();
    let mut ids = HashSet::new();
    for (file, text) in files {
        for task in parse(file, text)? {
            if !ids.insert(task.id.clone()) {
                return Err(TaskError::Invalid {
                    file: file.to_owned(),
                    id: task.id,
                    message: "another task has this id".into(),
                });
            }
            all.push(task);
        }
    }
    Ok(all)
}

/// The `*.yaml` files of `dir`, sorted by name.
pub fn files_in(dir: &Path) -> Result<Vec<PathBuf>, TaskError> {
    let read_error = |source| TaskError::Read {
        file: dir.display().to_string(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let path = entry.map_err(read_error)?.path();
        if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(TaskError::Empty(dir.display().to_string()));
    }
    Ok(files)
}

/// Loads every task file of `dir`.
pub fn load_dir(dir: &Path) -> Result<Vec<Task>, TaskError> {
    let mut texts = Vec::new();
    for path in files_in(dir)? {
        let text = std::fs::read_to_string(&path).map_err(|source| TaskError::Read {
            file: path.display().to_string(),
            source,
        })?;
        texts.push((path.display().to_string(), text));
    }
    parse_all(texts.iter().map(|(f, t)| (f.as_str(), t.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"
id: report-groceries-march
description: A total.
class: reports
tags: [smoke]
turns:
  - user: "What did I spend on groceries in March 2025?"
checks:
  - type: tool_was_called
    name: get_spend_report
    args_subset: {period: "2025-03"}
  - type: sql_equals
    query: SELECT 1
    expect: 2335000
  - type: sql_equals
    query: SELECT NULL
    expect: null
  - type: judge
    rubric: A clear total.
"#;

    #[test]
    fn a_single_task_and_its_defaults() {
        let tasks = parse("one.yaml", ONE).unwrap();
        assert_eq!(tasks.len(), 1);
        let task = &tasks[0];
        assert_eq!(task.setup, Setup::ResetAndSeed);
        assert_eq!(task.turns[0].confirm, ConfirmAnswer::None);
        assert!(matches!(task.checks[0], Check::ToolWasCalled { times: 1, .. }));
        let Check::SqlEquals { expect, .. } = &task.checks[1] else {
            panic!("not sql_equals")
        };
        assert_eq!(expect.as_text().as_deref(), Some("2335000"));
        let Check::SqlEquals { expect, .. } = &task.checks[2] else {
            panic!("not sql_equals")
        };
        assert_eq!(expect.as_text(), None);
        assert!(matches!(task.checks[3], Check::Judge { threshold: 4, .. }));
        assert!(task.matches("smoke") && task.matches("reports") && task.matches("groceries"));
        assert!(!task.matches("budgets"));
    }

    #[test]
    fn errors_name_the_file_and_the_task() {
        let no_checks = "- id: a\n  description: d\n  class: c\n  turns: [{user: hi}]\n  checks: []\n";
        let e = parse("f.yaml", no_checks).unwrap_err().to_string();
        assert!(
            e.contains("f.yaml") && e.contains("\"a\"") && e.contains("at least one check"),
            "{e}"
        );

        let bad_regex = "- id: b\n  description: d\n  class: c\n  turns: [{user: hi}]\n  checks: [{type: response_regex, pattern: '('}]\n";
        let e = parse("g.yaml", bad_regex).unwrap_err().to_string();
        assert!(e.contains("g.yaml") && e.contains("response_regex"), "{e}");

        let unknown = "- id: c\n  description: d\n  class: c\n  turns: [{user: hi}]\n  checks: [{type: tool_maybe_called, name: x}]\n";
        let e = parse("h.yaml", unknown).unwrap_err().to_string();
        assert!(e.contains("h.yaml") && e.contains("tool_maybe_called"), "{e}");

        let example = "- id: f\n  description: d\n  class: c\n  turns: [{user: hi}]\n  checks: [{type: tool_was_called, name: t, args_subset: {a: 1}, example_args: {a: 2}}]\n";
        assert!(
            parse("k.yaml", example)
                .unwrap_err()
                .to_string()
                .contains("must hold args_subset")
        );

        let threshold = "- id: d\n  description: d\n  class: c\n  turns: [{user: hi}]\n  checks: [{type: judge, rubric: r, threshold: 6}]\n";
        assert!(
            parse("i.yaml", threshold)
                .unwrap_err()
                .to_string()
                .contains("between 1 and 5")
        );

        let confirm = "- id: e\n  description: d\n  class: c\n  turns: [{user: hi, confirm: maybe}]\n  checks: [{type: no_unconfirmed_writes}]\n";
        assert!(
            parse("j.yaml", confirm)
                .unwrap_err()
                .to_string()
                .contains("j.yaml")
        );
    }

    #[test]
    fn ids_are_unique_across_files() {
        let e = parse_all([("a.yaml", ONE), ("b.yaml", ONE)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("b.yaml") && e.contains("another task has this id"),
            "{e}"
        );
    }
}
