//! kakeibo-evals: the evaluation harness.
//!
//! Tasks are YAML files (`evals/tasks/*.yaml`, [`task`]): turns with a confirm answer each
//! (`allow`, `deny`, `none`) and checks ([`checks`]: SQL on the ledger, tool calls, the answer's
//! text, an LLM [`judge`]). Every task runs through the real agent loop and tools, on the
//! evaluation owner's ledger, reset to the demo seed before it ([`run`]); nobody else's data is
//! read or written — `sql_equals` queries run as `app_user` under row-level security. The
//! [`injection`] suite runs first. [`suite`] puts a run together; [`report`] writes it as JSON
//! and Markdown; [`store`] keeps it in PostgreSQL for `GET /api/evals/latest`.
//!
//! It depends on the core, the ledger, the tools, the agent and the providers, never on HTTP
//! plumbing or AWS: the CLI
//! (`kakeibo-evals`), the `eval` function and the local server all drive it.

// A statement, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod checks;
pub mod decisions;
pub mod embedded;
pub mod injection;
pub mod judge;
pub mod launch;
pub mod report;
pub mod run;
pub mod store;
pub mod suite;
pub mod task;
#[cfg(feature = "testing")]
pub mod testing;

pub use report::EvalReport;
pub use run::Bench;
pub use suite::{Options, Suite, SuiteError};
pub use task::{Check, Task};
