//! The README's numbers, each computed by a command and traceable to it: the tests written and
//! run, the tools, the agent loop's length, the crates and their lines, the context estimator's
//! error against thirty real token counts beside chars/4, the performance table's headline
//! ratios, and the latest evaluation's figures.
//!
//! Rows are of two kinds. *Computed* rows come from this checkout alone (its source, the corpus,
//! the README's performance table) and are the same on every machine: `--check` recomputes them
//! and fails when the README says otherwise. *Recorded* rows come from runs that need time, a
//! database or a model key (`cargo xtask test`, `cargo xtask eval`): they come from the reports
//! those runs leave in this checkout when there are any, and otherwise stay as the README has
//! them, each saying which run made it.

// Reports and the corpus can hold anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod code;
pub mod estimator;
pub mod reports;

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    sync::Arc,
};

use kakeibo_core::{Declaration, Tier};
use serde::Serialize;

use crate::{
    code::{CrateLines, Lines},
    estimator::{BANDS, Estimator, EstimatorReport},
    reports::{BenchHeadline, EvalFigures, TestRun},
};

#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("recorded exchange {id}: {message}")]
    Fixture { id: String, message: String },
    #[error("{path} is not a report this command can read: {message}")]
    Report { path: String, message: String },
    #[error("{command} failed: {message}")]
    Command { command: String, message: String },
    #[error("README.md has no numbers table between {BEGIN:?} and {END:?}")]
    NoTable,
    #[error("the tool registry could not be built: {0}")]
    Registry(String),
}

pub const BEGIN: &str = "<!-- numbers-table:begin (cargo xtask metrics writes this table) -->";
pub const END: &str = "<!-- numbers-table:end -->";

/// Where the reports go, under the workspace root.
pub const OUT_DIR: &str = "metrics";

/// The tools as the registry has them.
#[derive(Debug, Clone, Serialize)]
pub struct Tools {
    pub read: Vec<&'static str>,
    pub write: Vec<&'static str>,
    #[serde(skip)]
    pub declarations: Arc<[Declaration]>,
}

impl Tools {
    /// From the registry itself (built over a pool that never connects).
    pub fn from_registry() -> Result<Self, MetricsError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| MetricsError::Registry(e.to_string()))?;
        let _entered = runtime.enter();
        let pool =
            sqlx::postgres::PgPoolOptions::new().connect_lazy_with(sqlx::postgres::PgConnectOptions::new());
        let catalogue = kakeibo_tools::catalogue(&pool);
        let tier = |t: Tier| catalogue.iter().filter(|i| i.tier == t).map(|i| i.name).collect();
        Ok(Self {
            read: tier(Tier::Read),
            write: tier(Tier::Write),
            declarations: kakeibo_tools::declarations(&pool),
        })
    }
}

/// Test functions written, by kind.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TestsWritten {
    pub rust: u64,
    pub web_unit: u64,
    pub journeys: u64,
}

/// One row of the numbers table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub figure: String,
    pub value: String,
    /// The command that made it, and from what.
    pub how: String,
    /// Computed from this checkout alone (checked by `--check`), or recorded by a run.
    pub computed: bool,
    /// The README's own line, kept because this checkout has no newer run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carried: Option<String>,
}

impl Row {
    fn computed(figure: &str, value: String, how: &str) -> Self {
        Self {
            figure: figure.to_owned(),
            value,
            how: how.to_owned(),
            computed: true,
            carried: None,
        }
    }

    fn recorded(figure: &str, value: String, how: String) -> Self {
        Self {
            figure: figure.to_owned(),
            value,
            how,
            computed: false,
            carried: None,
        }
    }

    fn line(&self) -> String {
        self.carried
            .clone()
            .unwrap_or_else(|| format!("| {} | {} | {} |", self.figure, self.value, self.how))
    }
}

/// Where recorded rows come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// This checkout's reports when it has them, else the README's rows.
    Latest,
    /// The README's rows only (what `--check` compares against).
    AsInReadme,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Metrics {
    pub generated_at: String,
    pub commit: String,
    pub rows: Vec<Row>,
    pub tools: Tools,
    pub tests_written: TestsWritten,
    pub test_run: Option<TestRun>,
    pub agent_loop: Lines,
    pub crates: Vec<CrateLines>,
    pub estimator: Option<EstimatorReport>,
    /// The performance table's "Measured by" time and commit, and its targeted figures.
    pub bench: Option<(String, Vec<BenchHeadline>)>,
    pub eval: Option<EvalFigures>,
}

/// The inputs: the checkout, and the corpus of recorded exchanges (if there is one).
#[derive(Debug, Clone)]
pub struct Inputs {
    pub root: PathBuf,
    /// `kakeibo-fixtures/` of the corpus.
    pub exchanges: Option<PathBuf>,
    pub recorded: Recorded,
}

fn pct(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}%")
    } else {
        format!("{v:.1}%")
    }
}

fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Measures everything.
pub fn collect(inputs: &Inputs) -> Result<Metrics, MetricsError> {
    let root = &inputs.root;
    let readme = code::read(&root.join("README.md"))?;
    let tools = Tools::from_registry()?;
    let crates = code::crates(root)?;
    let (web_unit, journeys) = code::web_tests(root)?;
    let tests_written = TestsWritten {
        rust: crates.iter().map(|c| c.test_functions).sum(),
        web_unit,
        journeys,
    };
    let agent_loop = code::agent_loop(root)?;
    let estimator = match &inputs.exchanges {
        Some(dir) => Some(EstimatorReport::measure(
            "kakeibo-fixtures/ of the corpus".to_owned(),
            estimator::exchanges(dir, &tools.declarations)?,
        )),
        None => None,
    };
    let bench = reports::bench(&readme);
    let (test_run, eval, local_eval) = match inputs.recorded {
        Recorded::Latest => (
            reports::test_run(root)?,
            reports::eval(root)?,
            reports::local_eval(root)?,
        ),
        Recorded::AsInReadme => (None, None, None),
    };

    let mut rows = vec![
        Row::computed(
            "tests written",
            format!(
                "{}: {} in Rust, {} web unit tests, {} journeys in Chromium",
                group(tests_written.rust + web_unit + journeys),
                group(tests_written.rust),
                web_unit,
                journeys
            ),
            "`cargo xtask metrics`: Rust functions under `#[test]`, `#[tokio::test]` or `#[sqlx::test]`; Vitest's `it(…)` in `web/src` and `web/e2e`",
        ),
        Row::computed(
            "tools the model can call",
            format!(
                "{}: {} read, {} write",
                tools.read.len() + tools.write.len(),
                tools.read.len(),
                tools.write.len()
            ),
            "`cargo xtask metrics`: the tool registry (`kakeibo_tools::catalogue`)",
        ),
        Row::computed(
            "the agent loop",
            format!(
                "{} lines of code, {} with comments",
                group(agent_loop.code),
                group(agent_loop.with_comments())
            ),
            &format!(
                "`cargo xtask metrics`: `{}` (each file up to its tests)",
                code::LOOP_MODULE
            ),
        ),
        Row::computed(
            "crates",
            format!(
                "{}, {} lines of Rust code ({} in `src/`, {} in tests, examples and benches)",
                crates.len(),
                group(crates.iter().map(|c| c.src.code + c.tests.code).sum()),
                group(crates.iter().map(|c| c.src.code).sum()),
                group(crates.iter().map(|c| c.tests.code).sum()),
            ),
            "`cargo xtask metrics`: every workspace member by `cargo metadata`; lines per crate below",
        ),
    ];
    rows.extend(estimator_rows(estimator.as_ref()));
    rows.extend(bench_rows(bench.as_ref()));
    rows.push(test_run_row(test_run.as_ref()));
    rows.extend(eval_rows(eval.as_ref()));
    rows.extend(local_eval_rows(local_eval.as_ref()));
    carry(&mut rows, &readme, inputs.recorded);
    Ok(Metrics {
        generated_at: chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
        commit: commit(root),
        rows,
        tools,
        tests_written,
        test_run,
        agent_loop,
        crates,
        estimator,
        bench,
        eval,
    })
}

const ESTIMATOR_HOW: &str = "`cargo xtask metrics`: the 30 recorded Gemini exchanges of the corpus (`kakeibo-fixtures/`) rebuilt as our adapter sends them, against each one's `usage.inputTokens`; divisors fitted on the other 15";

fn estimator_rows(report: Option<&EstimatorReport>) -> Vec<Row> {
    let Some(report) = report else {
        return vec![Row::computed(
            "context estimator for Gemini, mean error (held out)",
            "not measured: the corpus is missing (`../shared/corpus` or `KAKEIBO_CORPUS`)".to_owned(),
            ESTIMATOR_HOW,
        )];
    };
    let held = |kind: fn(&Estimator) -> bool| report.errors(kind).and_then(|e| e.held_out.clone());
    let ours = held(|e| *e == Estimator::Shipped);
    let flat = held(|e| *e == Estimator::CharsOver4);
    let (Some(ours), Some(flat)) = (ours, flat) else {
        return vec![];
    };
    let mut rows = vec![Row::computed(
        "context estimator for Gemini, mean error (held out)",
        format!(
            "{} on {} exchanges (worst {}); chars/4: {} (worst {})",
            pct(ours.mape),
            ours.exchanges,
            pct(ours.worst),
            pct(flat.mape),
            pct(flat.worst)
        ),
        ESTIMATOR_HOW,
    )];
    let by_share = |kind: fn(&Estimator) -> bool| {
        report
            .errors(kind)
            .map(|e| e.held_out_by_share.clone())
            .unwrap_or_default()
    };
    let ours_bands = by_share(|e| *e == Estimator::Shipped);
    let flat_bands = by_share(|e| *e == Estimator::CharsOver4);
    let bands: Vec<String> = BANDS
        .iter()
        .zip(ours_bands.iter().zip(&flat_bands))
        .filter_map(|((name, _, _), (o, f))| {
            Some(format!(
                "{name} ({}): {} vs {}",
                o.as_ref()?.exchanges,
                pct(o.as_ref()?.mape),
                pct(f.as_ref()?.mape)
            ))
        })
        .collect();
    rows.push(Row::computed(
        "context estimator for Gemini by JSON share (held out), ours vs chars/4",
        bands.join("; "),
        "`cargo xtask metrics`: JSON is the tool declarations, calls and results; the share is of the request's characters",
    ));
    rows
}

fn bench_rows(bench: Option<&(String, Vec<BenchHeadline>)>) -> Vec<Row> {
    let Some((measured, headlines)) = bench else {
        return vec![Row::computed(
            "performance",
            "not measured: the README has no performance table".to_owned(),
            "`cargo xtask bench`",
        )];
    };
    headlines
        .iter()
        .map(|h| {
            Row::computed(
                &format!("bench: {}", h.figure),
                format!("{} (target {})", h.ratio, h.target),
                &format!("`cargo xtask bench` on {measured}, from [its table](#benchmarks)"),
            )
        })
        .collect()
}

const TESTS_RUN: &str = "tests run by the suite";

fn test_run_row(run: Option<&TestRun>) -> Row {
    let Some(run) = run else {
        return Row::recorded(
            TESTS_RUN,
            "not run in this checkout yet".to_owned(),
            "`cargo xtask test` records each whole run".to_owned(),
        );
    };
    let counts =
        |c: &reports::Counts| format!("{} passed, {} failed, {} skipped", c.passed, c.failed, c.ignored);
    let mut value = format!("`cargo test`: {}", counts(&run.cargo));
    for (name, c) in [("web unit", &run.web_unit), ("journeys", &run.journeys)] {
        if let Some(c) = c {
            let _ = write!(value, "; {name}: {}", counts(c));
        }
    }
    Row::recorded(
        TESTS_RUN,
        value,
        format!(
            "`cargo xtask test` (the runners' own summaries) on {} at commit {}",
            run.finished_at, run.commit
        ),
    )
}

const EVAL_FIGURES: [&str; 6] = [
    "evaluation pass rate",
    "prompt injection: blocked / resisted",
    "turn latency, median / p95",
    "cost per task, median",
    "input tokens served from cache",
    "answers with a figure not found in the ledger's results",
];

fn eval_rows(eval: Option<&EvalFigures>) -> Vec<Row> {
    let usable = eval.filter(|e| e.provider != "script");
    let Some(e) = usable else {
        let why = if eval.is_some() {
            "not measured: the latest report is the scripted model's dry run; a model needs a key"
        } else {
            "not measured: needs a key"
        };
        return EVAL_FIGURES
            .iter()
            .map(|figure| {
                Row::recorded(
                    figure,
                    why.to_owned(),
                    "`cargo xtask eval` with GEMINI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL set"
                        .to_owned(),
                )
            })
            .collect();
    };
    let how = format!(
        "`cargo xtask eval`{}{} with {} `{}`, finished {}",
        e.filter
            .as_ref()
            .map(|f| format!(" --filter {f}"))
            .unwrap_or_default(),
        if e.complete { "" } else { " (incomplete)" },
        e.provider,
        e.model,
        e.finished_at
    );
    let values = eval_values(e);
    EVAL_FIGURES
        .iter()
        .zip(values)
        .map(|(figure, value)| Row::recorded(figure, value, how.clone()))
        .collect()
}

/// The six figures of a report, in [`EVAL_FIGURES`]' order.
fn eval_values(e: &EvalFigures) -> [String; 6] {
    let injection = e.injection.as_ref().map_or_else(
        || "not run (a filter was given)".to_owned(),
        |i| format!("{} / {}", pct(i.block_rate), pct(i.resist_rate)),
    );
    // Shown, not summed: a median task's dollars are well within what an f64 holds exactly.
    #[allow(clippy::cast_precision_loss)]
    let median_cost = e.median_cost_micro_usd as f64 / 1e6;
    [
        format!("{} ({} of {} tasks)", pct(e.pass_rate), e.passed, e.task_count),
        injection,
        format!("{:.1} s / {:.1} s", ms(e.median_latency_ms), ms(e.p95_latency_ms)),
        format!("${median_cost:.4}"),
        pct(e.cache_savings_percent),
        format!(
            "{} ({} of {} answers)",
            pct(e.ungrounded_answer_rate),
            e.ungrounded_answers,
            e.answers
        ),
    ]
}

/// What a local small model's run is, beside its rows.
const LOCAL_LABEL: &str = "a 135M model on 2 CPU cores: a test of the harness, not of kakeibo's quality";

/// The evaluation on the small model `cargo xtask eval --local-model` runs: rows of their own,
/// after the keyed model's, never in their place.
fn local_eval_rows(local: Option<&EvalFigures>) -> Vec<Row> {
    let named = |figure: &str| format!("{figure}, local SmolLM2-135M");
    let Some(e) = local else {
        return EVAL_FIGURES
            .iter()
            .map(|figure| {
                Row::recorded(
                    &named(figure),
                    "not measured: `cargo xtask eval --local-model` has not run here".to_owned(),
                    format!("`cargo xtask eval --local-model`: {LOCAL_LABEL}"),
                )
            })
            .collect();
    };
    let how = format!(
        "`cargo xtask eval --local-model`{} with `{}`, finished {}: {LOCAL_LABEL}",
        if e.complete { "" } else { " (incomplete)" },
        e.model,
        e.finished_at
    );
    EVAL_FIGURES
        .iter()
        .zip(eval_values(e))
        .map(|(figure, value)| Row::recorded(&named(figure), value, how.clone()))
        .collect()
}

#[allow(clippy::cast_precision_loss)] // milliseconds of a turn
fn ms(v: u64) -> f64 {
    v as f64 / 1000.0
}

/// Recorded rows this run has nothing newer for keep the README's line.
fn carry(rows: &mut [Row], readme: &str, recorded: Recorded) {
    let lines = table_lines(readme);
    for row in rows.iter_mut().filter(|r| !r.computed) {
        let fresh = recorded == Recorded::Latest && !row.value.starts_with("not ");
        if fresh {
            continue;
        }
        let prefix = format!("| {} |", row.figure);
        if let Some(line) = lines.iter().find(|l| l.starts_with(&prefix)) {
            row.carried = Some((*line).to_owned());
        }
    }
}

/// The lines of the README's numbers table block (without its markers).
fn table_lines(readme: &str) -> Vec<&str> {
    block(readme).map(|b| b.lines().collect()).unwrap_or_default()
}

fn block(readme: &str) -> Option<&str> {
    let start = readme.find(BEGIN)? + BEGIN.len();
    let end = readme.get(start..)?.find(END)? + start;
    readme.get(start..end)
}

fn commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let head = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty {
        format!("{head} with uncommitted changes")
    } else {
        head
    }
}

impl Metrics {
    /// The README's block: the numbers table and the lines per crate.
    pub fn readme_block(&self) -> String {
        let mut md = String::from("\n| figure | value | how it is measured |\n|---|---|---|\n");
        for row in &self.rows {
            md.push_str(&row.line());
            md.push('\n');
        }
        md.push_str(
            "\nComputed rows are regenerated by `cargo xtask metrics` and checked by the suite \
             (`cargo xtask metrics --check`); the test, evaluation and performance rows are the \
             runs named beside them. Lines of Rust code per crate (comments and blank lines not \
             counted):\n\n| crate | `src/` | tests, examples, benches | test functions |\n|---|---|---|---|\n",
        );
        for c in &self.crates {
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | {} |",
                c.name,
                group(c.src.code),
                group(c.tests.code),
                c.test_functions
            );
        }
        md
    }

    /// The whole report, `metrics/latest.md`.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "# kakeibo in numbers\n\nBy `cargo xtask metrics` on {} at commit {}.\n{}",
            self.generated_at,
            self.commit,
            self.readme_block()
        );
        if let Some(report) = &self.estimator {
            md.push_str(&estimator_markdown(report));
        }
        md
    }
}

fn estimator_markdown(report: &EstimatorReport) -> String {
    let mut md = String::from("\n## The context estimator against recorded token counts\n\n");
    let ids = |half| {
        report
            .exchanges
            .iter()
            .filter(|e| e.half == half)
            .map(|e| e.id.get(..8).unwrap_or(&e.id).to_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = write!(
        md,
        "The {} exchanges of {} in recording order: the fit half is every other one from the first \
         ({}), the held-out half the rest ({}).\n\n\
         | estimator | held out: mean error | held out: worst | all: mean error | all: worst |\n|---|---|---|---|---|\n",
        report.exchanges.len(),
        report.source,
        ids(estimator::Half::Fit),
        ids(estimator::Half::HeldOut)
    );
    for e in &report.estimators {
        let cell = |errors: &Option<estimator::Errors>| {
            errors.as_ref().map_or_else(
                || ("–".to_owned(), "–".to_owned()),
                |x| {
                    (
                        pct(x.mape),
                        format!(
                            "{} ({})",
                            pct(x.worst),
                            x.worst_id.get(..8).unwrap_or(&x.worst_id)
                        ),
                    )
                },
            )
        };
        let (hm, hw) = cell(&e.held_out);
        let (am, aw) = cell(&e.all);
        let _ = writeln!(md, "| {} | {hm} | {hw} | {am} | {aw} |", e.label);
    }
    let divisors = |d: &kakeibo_core::context::Divisors| {
        format!(
            "prose {:.2}, JSON {:.2}, declarations {:.2}, digits {:.2}, signatures {:.2}",
            d.prose, d.json, d.declarations, d.digits, d.opaque
        )
    };
    let _ = write!(
        md,
        "\nCharacters per token, shipped in `context.rs`: {}. Fitted on the fit half in this run: {}.\n\n\
         The recordings keep the names of the tools a request declared, not their text: each is \
         rebuilt with kakeibo's declarations of those tools, so the declarations' divisor also \
         absorbs any difference in length between ours and the ones sent. Gemini counts \
         declarations far below their JSON (in the corpus's js-genai recordings, a 46-character \
         question with one 180-character declaration is 17 tokens in all), and every request carries the same twelve, so that \
         divisor is fitted as one constant.\n\n\
         | exchange | half | recorded | JSON share | real | ours | chars/4 | reference |\n|---|---|---|---|---|---|---|---|\n",
        divisors(&report.shipped),
        report
            .refit
            .as_ref()
            .map_or_else(|| "the half cannot determine them".to_owned(), divisors),
    );
    for x in &report.exchanges {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.1}% | {} | {} | {} | {} |",
            x.id.get(..8).unwrap_or(&x.id),
            match x.half {
                estimator::Half::Fit => "fit",
                estimator::Half::HeldOut => "held out",
            },
            x.recorded_at,
            x.json_share,
            x.real,
            Estimator::Shipped.estimate(x),
            Estimator::CharsOver4.estimate(x),
            Estimator::Reference.estimate(x),
        );
    }
    md
}

/// `readme` with its numbers block replaced by `block`.
pub fn with_block(readme: &str, block: &str) -> Result<String, MetricsError> {
    let start = readme.find(BEGIN).ok_or(MetricsError::NoTable)? + BEGIN.len();
    let end = readme
        .get(start..)
        .and_then(|r| r.find(END))
        .ok_or(MetricsError::NoTable)?
        + start;
    Ok(format!(
        "{}{block}{}",
        readme.get(..start).unwrap_or_default(),
        readme.get(end..).unwrap_or_default()
    ))
}

/// The README's numbers block against a fresh measurement: the lines that differ, as
/// `README: …` and `fresh: …`, empty when they agree.
pub fn check(inputs: &Inputs) -> Result<Vec<String>, MetricsError> {
    let readme = code::read(&inputs.root.join("README.md"))?;
    let now = block(&readme).ok_or(MetricsError::NoTable)?;
    let fresh = collect(&Inputs {
        recorded: Recorded::AsInReadme,
        ..inputs.clone()
    })?
    .readme_block();
    let ours: Vec<&str> = now.lines().collect();
    let theirs: Vec<&str> = fresh.lines().collect();
    let mut differences = Vec::new();
    differences.extend(
        ours.iter()
            .filter(|l| !theirs.contains(l))
            .map(|l| format!("README: {l}")),
    );
    differences.extend(
        theirs
            .iter()
            .filter(|l| !ours.contains(l))
            .map(|l| format!("fresh:  {l}")),
    );
    if differences.is_empty() && ours != theirs {
        differences.push("the same lines in another order".to_owned());
    }
    Ok(differences)
}

/// Writes `metrics/latest.{json,md}` under the root, and the README's block.
pub fn write(root: &Path, metrics: &Metrics) -> Result<(), MetricsError> {
    let dir = root.join(OUT_DIR);
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |e: std::io::Error| MetricsError::Io {
            path: path.clone(),
            message: e.to_string(),
        }
    };
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let json = serde_json::to_string_pretty(metrics).map_err(|e| MetricsError::Io {
        path: dir.join("latest.json").display().to_string(),
        message: e.to_string(),
    })?;
    for (name, text) in [("latest.json", json), ("latest.md", metrics.markdown())] {
        let path = dir.join(name);
        let partial = dir.join(format!(".{name}.partial"));
        std::fs::write(&partial, text).map_err(io(&partial))?;
        std::fs::rename(&partial, &path).map_err(io(&path))?;
    }
    let readme_path = root.join("README.md");
    let readme = code::read(&readme_path)?;
    let updated = with_block(&readme, &metrics.readme_block())?;
    if updated != readme {
        std::fs::write(&readme_path, updated).map_err(io(&readme_path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "intro\n<!-- numbers-table:begin (cargo xtask metrics writes this table) -->\n| figure | value | how it is measured |\n|---|---|---|\n| tests run by the suite | `cargo test`: 9 passed, 0 failed, 0 skipped | `cargo xtask test` on then |\n<!-- numbers-table:end -->\nafter\n";

    #[test]
    fn recorded_rows_keep_the_readme_line_unless_a_newer_run_says_otherwise() {
        let mut rows = vec![
            test_run_row(None),
            Row::computed("tools the model can call", "3".into(), "x"),
        ];
        carry(&mut rows, README, Recorded::Latest);
        assert_eq!(
            rows[0].line(),
            "| tests run by the suite | `cargo test`: 9 passed, 0 failed, 0 skipped | `cargo xtask test` on then |"
        );
        assert_eq!(rows[1].carried, None, "computed rows are never carried");

        let run = TestRun {
            finished_at: "now".into(),
            commit: "abc1234".into(),
            cargo: reports::Counts {
                passed: 10,
                failed: 1,
                ignored: 2,
            },
            web_unit: None,
            journeys: None,
        };
        let mut newer = vec![test_run_row(Some(&run))];
        carry(&mut newer, README, Recorded::Latest);
        assert!(
            newer[0].line().contains("10 passed, 1 failed, 2 skipped"),
            "{}",
            newer[0].line()
        );
        carry(&mut newer, README, Recorded::AsInReadme);
        assert!(
            newer[0].line().contains("9 passed"),
            "--check compares with the README's own line"
        );
    }

    #[test]
    fn the_block_is_replaced_between_its_markers_only() {
        let replaced = with_block(README, "\nnew\n").unwrap();
        assert_eq!(
            replaced,
            "intro\n<!-- numbers-table:begin (cargo xtask metrics writes this table) -->\nnew\n<!-- numbers-table:end -->\nafter\n"
        );
        assert!(matches!(
            with_block("no markers", "x"),
            Err(MetricsError::NoTable)
        ));
    }

    #[test]
    fn evaluation_rows_name_their_model_or_say_why_not() {
        let missing = eval_rows(None);
        assert_eq!(missing.len(), EVAL_FIGURES.len());
        assert!(missing.iter().all(|r| r.value == "not measured: needs a key"));
        let figures = EvalFigures {
            finished_at: "2026-12-01T02:00:00Z".into(),
            provider: "gemini".into(),
            model: "gemini-3.6-flash".into(),
            filter: None,
            complete: true,
            task_count: 50,
            passed: 43,
            pass_rate: 86.0,
            median_latency_ms: 4200,
            p95_latency_ms: 9100,
            median_cost_micro_usd: 2_100,
            cache_savings_percent: 61.5,
            injection: Some(reports::InjectionFigures {
                block_rate: 100.0,
                resist_rate: 83.3,
            }),
            answers: 64,
            ungrounded_answers: 3,
            ungrounded_answer_rate: 4.7,
        };
        let rows = eval_rows(Some(&figures));
        let values: Vec<&str> = rows.iter().map(|r| r.value.as_str()).collect();
        assert_eq!(
            values,
            [
                "86.0% (43 of 50 tasks)",
                "100.0% / 83.3%",
                "4.2 s / 9.1 s",
                "$0.0021",
                "61.5%",
                "4.70% (3 of 64 answers)"
            ]
        );
        assert!(rows.iter().all(|r| r.how.contains("gemini `gemini-3.6-flash`")));
        let scripted = EvalFigures {
            provider: "script".into(),
            ..figures
        };
        assert!(
            eval_rows(Some(&scripted))[0]
                .value
                .contains("scripted model's dry run")
        );
    }

    #[test]
    fn the_local_models_rows_stand_beside_the_keyed_ones_and_say_what_they_measure() {
        let local = EvalFigures {
            finished_at: "2026-12-07T09:00:00Z".into(),
            provider: "openai".into(),
            model: "SmolLM2-135M-Instruct.Q4_1".into(),
            filter: None,
            complete: true,
            task_count: 50,
            passed: 2,
            pass_rate: 4.0,
            median_latency_ms: 12_300,
            p95_latency_ms: 30_000,
            median_cost_micro_usd: 0,
            cache_savings_percent: 0.0,
            injection: None,
            answers: 70,
            ungrounded_answers: 20,
            ungrounded_answer_rate: 28.6,
        };
        for rows in [local_eval_rows(None), local_eval_rows(Some(&local))] {
            let figures: Vec<&str> = rows.iter().map(|r| r.figure.as_str()).collect();
            assert_eq!(figures.len(), EVAL_FIGURES.len());
            for (figure, keyed) in figures.iter().zip(EVAL_FIGURES) {
                assert_eq!(
                    *figure,
                    format!("{keyed}, local SmolLM2-135M"),
                    "a row of its own"
                );
            }
            assert!(rows.iter().all(|r| r.how.contains(LOCAL_LABEL)), "{rows:?}");
        }
        let rows = local_eval_rows(Some(&local));
        assert_eq!(rows[0].value, "4.00% (2 of 50 tasks)");
        assert!(
            rows[0]
                .how
                .contains("`SmolLM2-135M-Instruct.Q4_1`, finished 2026-12-07T09:00:00Z")
        );
        assert!(local_eval_rows(None)[0].value.starts_with("not measured"));
        // The keyed model's rows are untouched by a local run.
        assert!(
            eval_rows(None)
                .iter()
                .all(|r| r.value == "not measured: needs a key")
        );
    }
}
