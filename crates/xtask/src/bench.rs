//! `cargo xtask bench`: every benchmark in one run, on a server that commits durably, then the
//! report — `bench/report/latest.{json,md}` (git-ignored) with the machine and the server's
//! settings — and the README's performance table, generated from it.
//!
//! Each benchmark prints its figures and leaves them in `bench/report/parts/<bench>.json`
//! (`kakeibo-bench`'s `Report`); the turn benchmark also runs the LangGraph peer
//! (`bench/peer/`), installed here into a virtual environment of its own.

use std::{fmt::Write as _, fs, process::ExitCode};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::{
    pg::{self, Database},
    process::{self, Cmd},
    venv,
};

/// The benchmarks, in the order they run: (part name, package, what it measures).
const BENCHES: [(&str, &str, &str); 5] = [
    (
        "import",
        "kakeibo-ledger",
        "import of a 100,000-row statement beside COPY of the same rows into the same tables",
    ),
    (
        "turn",
        "kakeibo-agent",
        "a turn's orchestration and a suspended write's confirm, beside LangGraph with PostgresSaver",
    ),
    (
        "reports",
        "kakeibo-tools",
        "each report tool on 1,000,000 postings beside the hand-written SQL that gives its numbers",
    ),
    (
        "export",
        "kakeibo-export",
        "the Beancount export of 1,000,000 postings beside COPY of the same rows out of PostgreSQL",
    ),
    (
        "cold_start",
        "kakeibo-runs",
        "a function binary's cold start beside a hello-world lambda_http binary with a connection",
    ),
];

/// The settings the report records.
const SETTINGS: [&str; 9] = [
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "wal_sync_method",
    "wal_level",
    "shared_buffers",
    "max_wal_size",
    "jit",
    "max_connections",
];

const README_BEGIN: &str = "<!-- bench-table:begin (cargo xtask bench writes this table) -->";
const README_END: &str = "<!-- bench-table:end -->";

pub fn run(only: &[String]) -> Result<ExitCode> {
    if let Some(unknown) = only
        .iter()
        .find(|name| !BENCHES.iter().any(|(bench, _, _)| bench == name))
    {
        let names: Vec<&str> = BENCHES.iter().map(|(bench, _, _)| *bench).collect();
        bail!(
            "there is no benchmark {unknown:?}; there are {}",
            names.join(", ")
        );
    }
    let db = Database::for_bench()?;
    let urls = db.up()?;
    let root = process::workspace_root();
    let parts = root.join("bench/report/parts");
    if parts.exists() {
        fs::remove_dir_all(&parts).with_context(|| format!("clearing {}", parts.display()))?;
    }
    fs::create_dir_all(&parts).with_context(|| format!("creating {}", parts.display()))?;
    let python = venv::ensure_bench()?;

    let ran = (|| -> Result<()> {
        for (bench, package, what) in BENCHES {
            if !only.is_empty() && !only.iter().any(|name| name == bench) {
                continue;
            }
            checkpoint(&urls.owner);
            process::step(&format!("{what} (release build)"));
            process::cargo(&["bench", "--package", package, "--bench", bench])
                .env("DATABASE_URL", &urls.test_master)
                .env("APP_DATABASE_URL", &urls.app)
                .env("BENCH_REPORT_DIR", &parts)
                .env("BENCH_PEER_PYTHON", &python)
                .status_ok()?;
        }
        Ok(())
    })();
    let server = server(&urls.owner, &db);
    if db.is_embedded() {
        db.down()?;
    }
    ran?;
    let server = server?;
    if !only.is_empty() {
        println!(
            "\nparts in {}; the report and the README's table come from a whole run (no --only)",
            parts.display()
        );
        return Ok(ExitCode::SUCCESS);
    }

    let mut benches = Vec::new();
    for (bench, _, _) in BENCHES.iter().chain(&[("langgraph", "", "")]) {
        let path = parts.join(format!("{bench}.json"));
        let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        benches.push(
            serde_json::from_str::<Value>(&text).with_context(|| format!("parsing {}", path.display()))?,
        );
    }
    let report = json!({
        "generated_at": now()?,
        "commit": commit(),
        "command": "cargo xtask bench",
        "machine": machine(),
        "postgres": server,
        "benches": benches,
    });
    let dir = root.join("bench/report");
    fs::write(dir.join("latest.json"), serde_json::to_string_pretty(&report)?)?;
    fs::write(dir.join("latest.md"), markdown(&report))?;
    let readme_path = root.join("README.md");
    let readme = fs::read_to_string(&readme_path).context("reading README.md")?;
    fs::write(&readme_path, with_table(&readme, &readme_table(&report))?).context("writing README.md")?;
    println!(
        "\nreport: {} and latest.json; the README's performance table is updated",
        dir.join("latest.md").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The time now, as the reports write it.
pub fn now() -> Result<String> {
    Ok(Cmd::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output_ok()?
        .trim()
        .to_owned())
}

/// Writes every dirty page back now, so a benchmark does not run under the write-back of the one
/// before it: the import leaves a few hundred megabytes of log behind, and the checkpoint that
/// follows is spread over minutes, its writes competing with the next benchmark's commits for the
/// disk. A server that refuses (`CHECKPOINT` needs `pg_checkpoint`) is said so, and the benchmark
/// runs anyway.
fn checkpoint(owner_url: &str) {
    let done = pg::psql(owner_url).and_then(|psql| psql.args(["-tAc", "CHECKPOINT"]).output_ok());
    if let Err(e) = done {
        println!("(no CHECKPOINT before this benchmark: {e:#}; it may run under the last one's write-back)");
    }
}

/// The server's version and the settings that bear on the figures.
fn server(owner_url: &str, db: &Database) -> Result<Value> {
    let sql = format!(
        "SELECT current_setting('server_version') UNION ALL SELECT name || '=' || current_setting(name) \
         FROM pg_settings WHERE name IN ({}) ",
        SETTINGS
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let out = pg::psql(owner_url)?.args(["-tAc", &sql]).output_ok()?;
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    let version = lines.next().unwrap_or("unknown").to_owned();
    let settings: serde_json::Map<String, Value> = lines
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), Value::from(v)))
        .collect();
    Ok(json!({
        "version": version,
        "server": if db.is_embedded() {
            "the benchmarks' own embedded cluster (.pgdata-bench), started for this run with a production \
             server's durability (synchronous_commit=on, fsync=on) and pg_stat_statements"
        } else {
            "the server of DATABASE_URL, with its settings as found"
        },
        "settings": settings,
    }))
}

fn machine() -> Value {
    let read = |path: &str| fs::read_to_string(path).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let memory_gib = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib.div_ceil(1024 * 1024));
    json!({
        "cores": std::thread::available_parallelism().map_or(0, usize::from),
        "cpu": cpu,
        "memory_gib": memory_gib,
        "kernel": read("/proc/sys/kernel/osrelease").trim(),
    })
}

/// The commit measured, marked when the work tree had changes (other than the README's table,
/// which the previous run wrote).
pub fn commit() -> String {
    let head = Cmd::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output_ok()
        .map_or_else(|_| "unknown".to_owned(), |h| h.trim().to_owned());
    let dirty = Cmd::new("git")
        .args([
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            ":!README.md",
        ])
        .output_ok()
        .is_ok_and(|s| !s.trim().is_empty());
    if dirty {
        format!("{head} with uncommitted changes")
    } else {
        head
    }
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// A number with the precision it deserves.
fn number(v: f64) -> String {
    if v.abs() >= 1000.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn ratio(f: &Value) -> String {
    let Some(r) = f["ratio"].as_f64() else {
        return String::new();
    };
    let r = if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    };
    if f["speedup"].as_bool() == Some(true) {
        format!("{r} faster")
    } else {
        r
    }
}

fn target(f: &Value) -> String {
    match (f["target"].as_str(), f["met"].as_bool()) {
        (Some(t), Some(true)) => format!("{t} ✓"),
        (Some(t), Some(false)) => format!("{t} ✗ not met"),
        _ => String::new(),
    }
}

/// A figure as a table row: name, value, baseline, ratio, target.
fn row(f: &Value) -> String {
    let unit = text(&f["unit"]);
    let baseline = match (f["baseline"].as_str(), f["baseline_value"].as_f64()) {
        (Some(b), Some(v)) => format!("{b}: {} {unit}", number(v)),
        _ => String::new(),
    };
    format!(
        "| {} | {} {unit} | {baseline} | {} | {} |\n",
        text(&f["name"]).trim(),
        number(f["value"].as_f64().unwrap_or(f64::NAN)),
        ratio(f),
        target(f)
    )
}

fn header(report: &Value) -> String {
    let m = &report["machine"];
    let pg = &report["postgres"];
    let settings = pg["settings"]
        .as_object()
        .map(|s| {
            s.iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    format!(
        "Measured by `cargo xtask bench` on {} at commit {}: {} cores ({}), {} GiB, Linux {}; \
         PostgreSQL {}, {}; {settings}.",
        text(&report["generated_at"]),
        text(&report["commit"]),
        m["cores"],
        text(&m["cpu"]),
        m["memory_gib"],
        text(&m["kernel"]),
        text(&pg["version"]),
        text(&pg["server"]),
    )
}

fn markdown(report: &Value) -> String {
    let mut md = format!("# kakeibo benchmark report\n\n{}\n", header(report));
    for bench in report["benches"].as_array().into_iter().flatten() {
        let _ = write!(
            md,
            "\n## {}\n\n`{}`\n\n| figure | value | baseline (same run) | ratio | target |\n|---|---|---|---|---|\n",
            text(&bench["title"]),
            text(&bench["command"])
        );
        for f in bench["figures"].as_array().into_iter().flatten() {
            md.push_str(&row(f));
        }
        for note in bench["notes"].as_array().into_iter().flatten() {
            let _ = write!(md, "\n- {}", text(note));
        }
        md.push('\n');
    }
    md
}

/// The README's table: every figure with a target, across the benchmarks.
fn readme_table(report: &Value) -> String {
    let mut md =
        String::from("| measured | kakeibo | baseline, same run | ratio | target |\n|---|---|---|---|---|\n");
    for bench in report["benches"].as_array().into_iter().flatten() {
        for f in bench["figures"].as_array().into_iter().flatten() {
            if !f["target"].is_null() || f["headline"].as_bool() == Some(true) {
                md.push_str(&row(f));
            }
        }
    }
    let _ = write!(
        md,
        "\n{} The whole report: `bench/report/latest.md`.\n",
        header(report)
    );
    md
}

/// `readme` with the text between the table's markers replaced by `table`.
fn with_table(readme: &str, table: &str) -> Result<String> {
    let (Some(begin), Some(end)) = (readme.find(README_BEGIN), readme.find(README_END)) else {
        bail!("README.md has no performance table markers ({README_BEGIN} … {README_END})");
    };
    if end < begin {
        bail!("README.md's performance table markers are out of order");
    }
    let after_begin = begin + README_BEGIN.len();
    Ok(format!("{}\n{table}{}", &readme[..after_begin], &readme[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_goes_between_the_markers_and_nowhere_else() {
        let readme = format!("intro\n{README_BEGIN}\nold table\n{README_END}\noutro\n");
        let new = with_table(&readme, "| new |\n").unwrap();
        assert_eq!(
            new,
            format!("intro\n{README_BEGIN}\n| new |\n{README_END}\noutro\n")
        );
        assert!(with_table("no markers", "x").is_err());
    }

    #[test]
    fn figures_read_as_the_report_says() {
        let f = json!({"name": "x", "value": 0.5, "unit": "ms", "ratio": 12.04, "speedup": true,
                       "target": "≥ 10× faster", "met": true});
        assert_eq!(ratio(&f), "12.0× faster");
        assert_eq!(target(&f), "≥ 10× faster ✓");
        assert_eq!(number(1234.5), "1234");
        assert_eq!(number(0.1234), "0.12");
    }

    #[test]
    fn the_readme_has_the_markers() {
        let readme = fs::read_to_string(process::workspace_root().join("README.md")).unwrap();
        assert!(with_table(&readme, "").is_ok());
    }
}
