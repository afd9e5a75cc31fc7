//! The suite compiled into the binary: the `eval` function has no `evals/` folder to read. A
//! test keeps this list equal to the files in `evals/tasks/`.

/// Every task file, by name, in order.
pub const TASK_FILES: &[(&str, &str)] = &[
    (
        "01-reports.yaml",
        include_str!("../../../evals/tasks/01-reports.yaml"),
    ),
    (
        "02-categorization.yaml",
        include_str!("../../../evals/tasks/02-categorization.yaml"),
    ),
    (
        "03-budgets.yaml",
        include_str!("../../../evals/tasks/03-budgets.yaml"),
    ),
    (
        "04-recurring-anomalies.yaml",
        include_str!("../../../evals/tasks/04-recurring-anomalies.yaml"),
    ),
    (
        "05-memory.yaml",
        include_str!("../../../evals/tasks/05-memory.yaml"),
    ),
    (
        "06-multitool.yaml",
        include_str!("../../../evals/tasks/06-multitool.yaml"),
    ),
    (
        "07-currency.yaml",
        include_str!("../../../evals/tasks/07-currency.yaml"),
    ),
    (
        "08-refusal.yaml",
        include_str!("../../../evals/tasks/08-refusal.yaml"),
    ),
    (
        "09-injection.yaml",
        include_str!("../../../evals/tasks/09-injection.yaml"),
    ),
    (
        "10-search-guardrails.yaml",
        include_str!("../../../evals/tasks/10-search-guardrails.yaml"),
    ),
    (
        "11-scope.yaml",
        include_str!("../../../evals/tasks/11-scope.yaml"),
    ),
];

/// The injection suite's scenarios.
pub const INJECTION: (&str, &str) = ("injection.yaml", include_str!("../../../evals/injection.yaml"));
