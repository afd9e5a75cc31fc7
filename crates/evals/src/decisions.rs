//! The decision layer measured: labelled sets under `evals/decisions/` — routing (first messages
//! labelled `cheap` or `strong`) and stuck runs (a run's calls labelled `stuck` or `progress`),
//! each with a dev set to tune on and a held-out set to report — run through a backend:
//!
//! - `heuristic`, offline: the router's rule of thumb, and the loop's own repeat check;
//! - `llm`: the judge at `JUDGE_BASE_URL` (probed first) — the router's question, and the
//!   repeat check then the stop judge, as the loop asks them.
//!
//! Per set it counts downgrades (cheap routes), wrong downgrades (a `strong` message sent to the
//! cheap model), missed downgrades; stops, wrong stops (a run making progress stopped) and missed
//! stops; and the judge's failures. Every read of a held-out set is appended to a log, so the
//! number of looks at it is on record.

use std::{
    fmt::Write as _,
    io::Write as _,
    path::{Path, PathBuf},
};

use kakeibo_core::turn::{CallRecord, ToolOutcome, repeat_check};
use kakeibo_judge::{
    Judge,
    router::{self, Route},
    stop,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which judge answers.
#[derive(Debug)]
pub enum Backend {
    /// Offline rules: the router's rule of thumb, the loop's repeat check.
    Heuristic,
    /// A probed logprob judge.
    Llm(Judge),
}

impl Backend {
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Heuristic => "heuristic",
            Backend::Llm(_) => "llm",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DecisionsError {
    #[error("reading {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path} is not a decision set: {why}")]
    Invalid { path: String, why: String },
    #[error("writing the held-out read log {path}: {source}")]
    Log { path: String, source: std::io::Error },
    #[error("no decision sets in {0}")]
    Empty(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RouteLabel {
    Cheap,
    Strong,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum StuckLabel {
    Stuck,
    Progress,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoutingItem {
    id: String,
    label: RouteLabel,
    message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    name: String,
    #[serde(default)]
    args: Value,
    ok: bool,
    outcome: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StuckItem {
    id: String,
    kind: String,
    label: StuckLabel,
    calls: Vec<Call>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Items {
    Routing(Vec<RoutingItem>),
    Stuck(Vec<StuckItem>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetFile {
    set: String,
    #[serde(default)]
    heldout: bool,
    items: Items,
}

/// What one set came to.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SetReport {
    pub set: String,
    /// `routing` or `stuck`.
    pub kind: String,
    pub heldout: bool,
    pub items: usize,
    /// Routing: messages sent to the cheap model.
    pub downgrades: usize,
    /// Routing: `strong` messages sent to the cheap model.
    pub wrong_downgrades: usize,
    /// Routing: `cheap` messages kept on the agent model.
    pub missed_downgrades: usize,
    /// Stuck: runs stopped.
    pub stops: usize,
    /// Stuck: runs making progress that were stopped.
    pub wrong_stops: usize,
    /// Stuck: stuck runs left going.
    pub missed_stops: usize,
    /// Questions the judge gave no probability for (each then took its safe side).
    pub judge_failures: usize,
    /// The ids decided wrongly (a stuck run's with its kind).
    pub wrong: Vec<String>,
}

/// The decision report: every set, by one backend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionReport {
    pub backend: String,
    /// The judge's model, for the `llm` backend.
    pub model: Option<String>,
    pub sets: Vec<SetReport>,
}

/// Runs every set in `dir` (`routing-*.yaml`, `stuck-*.yaml`, in name order) through `backend`,
/// appending a line to `reads_log` for each held-out set read.
pub async fn run(dir: &Path, backend: &Backend, reads_log: &Path) -> Result<DecisionReport, DecisionsError> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| DecisionsError::Read {
            path: dir.display().to_string(),
            source,
        })?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let yaml = p.extension().is_some_and(|e| e.eq_ignore_ascii_case("yaml"));
            (name.starts_with("routing-") || name.starts_with("stuck-")) && yaml
        })
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(DecisionsError::Empty(dir.display().to_string()));
    }
    let mut sets = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|source| DecisionsError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let file: SetFile = serde_yaml_ng::from_str(&text).map_err(|e| DecisionsError::Invalid {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        if file.heldout {
            log_read(reads_log, &file.set, backend)?;
        }
        let report = match &file.items {
            Items::Routing(items) => routing(&file, items, backend).await,
            Items::Stuck(items) => stuck(&file, items, backend).await,
        };
        sets.push(report);
    }
    Ok(DecisionReport {
        backend: backend.name().to_owned(),
        model: match backend {
            Backend::Llm(judge) => Some(judge.model().to_owned()),
            Backend::Heuristic => None,
        },
        sets,
    })
}

fn log_read(log: &Path, set: &str, backend: &Backend) -> Result<(), DecisionsError> {
    let failed = |source| DecisionsError::Log {
        path: log.display().to_string(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(failed)?;
    let model = match backend {
        Backend::Llm(judge) => format!(" ({})", judge.model()),
        Backend::Heuristic => String::new(),
    };
    writeln!(
        file,
        "{} {set} read by the {} backend{model}",
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ"),
        backend.name()
    )
    .map_err(failed)
}

async fn routing(file: &SetFile, items: &[RoutingItem], backend: &Backend) -> SetReport {
    let mut report = SetReport {
        set: file.set.clone(),
        kind: "routing".into(),
        heldout: file.heldout,
        items: items.len(),
        ..SetReport::default()
    };
    for item in items {
        let route = match backend {
            Backend::Heuristic => router::heuristic(&item.message),
            Backend::Llm(judge) => {
                let routed = router::route(Some(judge), &item.message).await;
                report.judge_failures += usize::from(routed.failure.is_some());
                routed.route
            }
        };
        match (route, item.label) {
            (Route::Cheap, RouteLabel::Cheap) => report.downgrades += 1,
            (Route::Cheap, RouteLabel::Strong) => {
                report.downgrades += 1;
                report.wrong_downgrades += 1;
                report.wrong.push(item.id.clone());
            }
            (Route::Agent, RouteLabel::Cheap) => {
                report.missed_downgrades += 1;
                report.wrong.push(item.id.clone());
            }
            (Route::Agent, RouteLabel::Strong) => {}
        }
    }
    report
}

async fn stuck(file: &SetFile, items: &[StuckItem], backend: &Backend) -> SetReport {
    let mut report = SetReport {
        set: file.set.clone(),
        kind: "stuck".into(),
        heldout: file.heldout,
        items: items.len(),
        ..SetReport::default()
    };
    for item in items {
        let calls: Vec<CallRecord> = item
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| CallRecord {
                id: format!("{}-{i}", item.id),
                name: c.name.clone(),
                args: c.args.clone(),
                tier: None,
                outcome: ToolOutcome::of_run(!c.ok),
                confirmed: None,
                result: c.outcome.clone(),
                headline: None,
            })
            .collect();
        // As the loop asks: its repeat check first, then the judge.
        let stopped = if repeat_check(&calls).is_some() {
            true
        } else {
            match backend {
                Backend::Heuristic => false,
                Backend::Llm(judge) => {
                    let verdict = stop::judge_stop(Some(judge), &calls).await;
                    report.judge_failures += usize::from(verdict.failure.is_some());
                    verdict.stop
                }
            }
        };
        match (stopped, item.label) {
            (true, StuckLabel::Stuck) => report.stops += 1,
            (true, StuckLabel::Progress) => {
                report.stops += 1;
                report.wrong_stops += 1;
                report.wrong.push(format!("{} ({})", item.id, item.kind));
            }
            (false, StuckLabel::Stuck) => {
                report.missed_stops += 1;
                report.wrong.push(format!("{} ({})", item.id, item.kind));
            }
            (false, StuckLabel::Progress) => {}
        }
    }
    report
}

impl DecisionReport {
    /// The report as a Markdown table.
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "Decision layer, backend `{}`{}\n\n\
             | set | items | downgrades | wrong downgrades | missed downgrades | stops | wrong stops | missed stops | judge failures |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            self.backend,
            self.model
                .as_ref()
                .map_or_else(String::new, |m| format!(" ({m})"))
        );
        for s in &self.sets {
            let (d, wd, md, st, ws, ms) = if s.kind == "routing" {
                (
                    s.downgrades.to_string(),
                    s.wrong_downgrades.to_string(),
                    s.missed_downgrades.to_string(),
                    "–".into(),
                    "–".into(),
                    "–".into(),
                )
            } else {
                (
                    "–".into(),
                    "–".into(),
                    "–".into(),
                    s.stops.to_string(),
                    s.wrong_stops.to_string(),
                    s.missed_stops.to_string(),
                )
            };
            let _ = writeln!(
                out,
                "| {}{} | {} | {d} | {wd} | {md} | {st} | {ws} | {ms} | {} |",
                s.set,
                if s.heldout { " (held out)" } else { "" },
                s.items,
                s.judge_failures
            );
        }
        out
    }
}
