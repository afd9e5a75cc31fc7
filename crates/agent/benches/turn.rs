//! Orchestration overhead of a turn, and of a write suspended, confirmed and resumed, beside
//! LangGraph with `PostgresSaver` running the same flows on the same server and ledger.
//!
//! The read turn: a zero-latency scripted model asks for three read tools in one batch, the real
//! tools run on a real PostgreSQL, the model answers (the whole `Agent::chat`: history, run,
//! memory recall, trace events, history saved). Its baseline, measured in the same run, is the
//! same three calls made directly through the registry; the difference is the overhead.
//!
//! The write flow: the model asks for `set_budget`, the turn suspends; fresh objects (store,
//! registry, agent, model) confirm it, as the confirm function does in another invocation; the
//! write runs and the model answers. Its baseline is the write made directly.
//!
//! Beside the timings, counted by the server: writing transactions, commits and statements per
//! flow. Last, a turn at the 100th exchange of one conversation against a turn at its first.
//!
//! The peer (`bench/peer/langgraph_flows.py`) runs on this benchmark's scratch database after
//! kakeibo's flows, when `BENCH_PEER_PYTHON` names a Python with its requirements (`cargo xtask
//! bench` installs one). `BENCH_TURNS` sets the read turns (default 1000), `BENCH_WRITES` the
//! write flows (200), `BENCH_EXCHANGES` the long conversations' length (100).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::too_many_lines
)] // A benchmark.

use std::time::{Duration, Instant};

use kakeibo_agent::turns::{Agent, Outcome, TurnStore};
use kakeibo_bench::{Figure, Report, percentile, scratch, server::Probe, setting, sorted_ms};
use kakeibo_core::{
    Block, ConfirmPolicy, ConversationId, PermissionRules, Provider,
    scripted::{Scripted, reply_calls, reply_text},
};
use kakeibo_ledger::{DEV_OWNER, MIGRATOR, seed, with_owner};
use kakeibo_tools::{Scope, registry};
use serde_json::json;
use sqlx::PgPool;

fn reads() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("get_spend_report", json!({"period": "2025-03"})),
        ("search_transactions", json!({"query": "swiggy", "limit": 5})),
        ("list_accounts", json!({})),
    ]
}

fn write() -> (&'static str, serde_json::Value) {
    (
        "set_budget",
        json!({"category": "Groceries", "month": "2025-04", "amount_minor": 500_000}),
    )
}

/// The zero-latency model: `calls` in one batch, then `answer` once their results are in. It keeps
/// no copy of its requests (a test's model does, to be asked about them).
fn model(calls: Vec<(&'static str, serde_json::Value)>, answer: &'static str) -> Scripted {
    Scripted::from_fn(move |request| {
        let last = request.messages.last().unwrap();
        Ok(
            if last.content.iter().any(|b| matches!(b, Block::ToolResult { .. })) {
                reply_text(answer)
            } else {
                reply_calls(&calls)
            },
        )
    })
    .unrecorded()
}

/// Flows of each kind run before anything is timed, on both sides.
const WARM_UP: usize = 50;

static RULES: std::sync::LazyLock<PermissionRules> = std::sync::LazyLock::new(PermissionRules::default);

/// An agent as a function invocation builds one: everything fresh but the pool.
fn agent<'a>(store: &'a TurnStore, pool: &PgPool, provider: &'a dyn Provider) -> Agent<'a> {
    let scope = Scope::new(DEV_OWNER, pool.clone());
    Agent {
        store,
        tools: registry(&scope),
        scope,
        provider,
        system: "bench",
        rules: &RULES,
        channel: "eval",
        summarizer: None,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let turns = setting("BENCH_TURNS", 1000);
    let writes = setting("BENCH_WRITES", 200);
    let counted = 100;
    let scratch = scratch::create("turn", kakeibo_ledger::pool_options(4), &MIGRATOR).await;
    let pool = scratch.pool.clone();
    let data = seed::generate().unwrap();
    let rows = seed::read_transactions_csv(&seed::transactions_csv(&data).unwrap()).unwrap();
    with_owner(DEV_OWNER, &pool, |conn| {
        Box::pin(async move { seed::load(DEV_OWNER, conn, "seed.csv", &rows).await })
    })
    .await
    .unwrap();
    // Statistics for the freshly loaded ledger now, not whenever autovacuum comes by: both sides
    // read it, and neither should time the planner's guesses about empty tables.
    sqlx::query("ANALYZE").execute(&pool).await.unwrap();

    let store = TurnStore::new(pool.clone());
    let reader = model(reads(), "March: ₹1,58,558.00 spent.");
    let agent = agent(&store, &pool, &reader);

    // Warm both paths, then gather statistics once more: the tables the flows write were empty
    // when the first plans were made (the foreign-key checks' among them, which a connection keeps),
    // and a server in use has statistics of what it holds. The peer does the same.
    for _ in 0..WARM_UP {
        ask(&agent, store.new_conversation(DEV_OWNER, None).await.unwrap()).await;
        write_flow(&pool).await;
    }
    sqlx::query("ANALYZE").execute(&pool).await.unwrap();

    let (mut tools_alone, mut whole) = (Vec::with_capacity(turns), Vec::with_capacity(turns));
    for _ in 0..turns {
        let started = Instant::now();
        for (name, input) in reads() {
            agent.tools.call(name, input).await.unwrap();
        }
        tools_alone.push(started.elapsed());
        let conversation = store.new_conversation(DEV_OWNER, None).await.unwrap();
        let started = Instant::now();
        let outcome = ask(&agent, conversation).await;
        whole.push(started.elapsed());
        assert!(matches!(outcome, Outcome::Finished { .. }));
    }
    let (mut write_alone, mut write_whole) = (Vec::with_capacity(writes), Vec::with_capacity(writes));
    for _ in 0..writes {
        let (name, input) = write();
        let started = Instant::now();
        agent.tools.call(name, input).await.unwrap();
        write_alone.push(started.elapsed());
        let started = Instant::now();
        write_flow(&pool).await;
        write_whole.push(started.elapsed());
    }

    let read_counts = {
        let mut conversations = Vec::with_capacity(counted);
        for _ in 0..counted {
            conversations.push(store.new_conversation(DEV_OWNER, None).await.unwrap());
        }
        let probe = Probe::start(&pool).await;
        for conversation in conversations {
            ask(&agent, conversation).await;
        }
        probe.per_flow(&pool, counted).await
    };
    let write_counts = {
        let probe = Probe::start(&pool).await;
        for _ in 0..counted {
            write_flow(&pool).await;
        }
        probe.per_flow(&pool, counted).await
    };
    let exchanges = setting("BENCH_EXCHANGES", 100);
    let (first, last) = long_conversations(&store, &agent, exchanges).await;
    let peer = run_peer(&scratch);
    scratch.drop_database().await;

    let overhead = |whole: &[Duration], alone: &[Duration]| {
        let paired: Vec<Duration> = whole
            .iter()
            .zip(alone)
            .map(|(w, a)| w.saturating_sub(*a))
            .collect();
        sorted_ms(&paired)
    };
    let read_overhead = overhead(&whole, &tools_alone);
    let write_overhead = overhead(&write_whole, &write_alone);
    let (whole, tools_alone, write_whole) = (
        sorted_ms(&whole),
        sorted_ms(&tools_alone),
        sorted_ms(&write_whole),
    );

    let mut report = Report::new(
        "turn",
        &format!(
            "A turn's orchestration ({turns} read turns: 2 scripted model calls, 3 read tools; {writes} write flows: \
             suspend, confirm by fresh objects, resume)"
        ),
        "cargo bench -p kakeibo-agent --bench turn",
    );
    let peer_value = |name: &str| peer.as_ref().and_then(|p| p.figure(name)).map(|f| f.value);
    // A timing, read as a speed-up over the peer's figure of the same name.
    let versus = |name: &str, value: f64, target: f64| {
        let figure = Figure::new(name, value, "ms");
        match peer_value(name) {
            Some(peer) => figure
                .faster_than(&format!("LangGraph {name}"), peer)
                .at_least(target),
            None => figure,
        }
    };
    // A count, read against the peer's figure of the same name.
    let against_peer = |name: &str, value: f64, unit: &str| {
        let figure = Figure::new(name, value, unit);
        match peer_value(name) {
            Some(peer) => figure.against(&format!("LangGraph {name}"), peer),
            None => figure,
        }
    };
    report.push(versus(
        "read turn overhead p50",
        percentile(&read_overhead, 50.0),
        10.0,
    ));
    report.push(versus(
        "read turn overhead p99",
        percentile(&read_overhead, 99.0),
        10.0,
    ));
    report.push(
        Figure::new("read turn p50", percentile(&whole, 50.0), "ms")
            .against("its 3 tools alone", percentile(&tools_alone, 50.0)),
    );
    report.push(versus("write flow p50", percentile(&write_whole, 50.0), 6.0));
    report.push(versus("write flow p99", percentile(&write_whole, 99.0), 6.0));
    report.push(Figure::new(
        "write flow overhead p50",
        percentile(&write_overhead, 50.0),
        "ms",
    ));
    for (flow, counts, per) in [
        ("read turn", &read_counts, "per turn"),
        ("write flow", &write_counts, "per flow"),
    ] {
        let writing = against_peer(&format!("{flow} writing transactions"), counts.writing, per);
        report.push(if flow == "read turn" {
            writing.value_at_most(2.0)
        } else {
            writing
        });
        report.push(against_peer(&format!("{flow} commits"), counts.commits, per));
        report.push(against_peer(
            &format!("{flow} WAL"),
            counts.wal_bytes,
            &format!("bytes {per}"),
        ));
        if let Some(cpu) = counts.server_cpu_ms {
            report.push(Figure::new(
                &format!("{flow} server CPU"),
                cpu,
                &format!("ms {per}"),
            ));
        }
        if let Some(statements) = counts.statements {
            report.push(against_peer(&format!("{flow} statements"), statements, per));
        }
        if let Some(sent) = counts.sent {
            report.push(against_peer(&format!("{flow} statements sent"), sent, per));
        }
        if let Some(ms) = counts.server_ms {
            report.push(against_peer(
                &format!("{flow} server time"),
                ms,
                &format!("ms {per}"),
            ));
        }
    }
    if read_counts.statements.is_none() {
        report.note("statements not counted: the server does not load pg_stat_statements");
    }
    report.push(
        Figure::new(
            &format!(
                "turn at exchanges {}–{exchanges} p50",
                exchanges.saturating_sub(9)
            ),
            percentile(&last, 50.0),
            "ms",
        )
        .against("exchanges 1–10", percentile(&first, 50.0))
        .at_most(1.3),
    );
    report.note(
        "statements: every statement the server ran, those inside kakeibo's phase functions included \
         (pg_stat_statements.track = all); statements sent: the top-level ones, each a round trip but for \
         the BEGIN and tenant a scoped transaction sends as one",
    );
    report.note(format!(
        "counts over {counted} flows each; commits include the tools' reads (each tool reads in a transaction \
         of its own); writing transactions are the transaction ids the flows consumed"
    ));
    report.note(
        "the write flow's writing transactions: its new conversation, the turn's opening (lazy) and its \
         suspension, the claim (lazy), the write with its result, and the finish: four wait for a WAL flush",
    );
    match &peer {
        Some(peer) => report.note(format!("peer: {}", peer.title)),
        None => report.note("peer not run: BENCH_PEER_PYTHON is unset (`cargo xtask bench` installs it)"),
    }
    report.finish();
}

/// One write flow on a new conversation: the turn suspends at `set_budget`; then, as another
/// invocation would, fresh objects confirm it and the turn finishes.
async fn write_flow(pool: &PgPool) {
    let store = TurnStore::new(pool.clone());
    let (name, input) = write();
    let writer = model(vec![(name, input)], "The Groceries budget for April is ₹5,000.");
    let conversation = store.new_conversation(DEV_OWNER, None).await.unwrap();
    let outcome = agent(&store, pool, &writer)
        .chat(
            conversation,
            "Set my groceries budget for April to 5000",
            &ConfirmPolicy::Suspend,
            &|_| {},
        )
        .await
        .unwrap();
    let Outcome::Suspended {
        suspended_id,
        pending,
        ..
    } = outcome
    else {
        panic!("the write did not suspend: {outcome:?}")
    };
    let store = TurnStore::new(pool.clone());
    let (name, input) = write();
    let writer = model(vec![(name, input)], "The Groceries budget for April is ₹5,000.");
    let outcome = agent(&store, pool, &writer)
        .confirm(suspended_id, &[(pending[0].id.clone(), true)], &|_| {})
        .await
        .unwrap();
    assert!(matches!(outcome, Outcome::Finished { .. }), "{outcome:?}");
}

/// The LangGraph peer on this benchmark's database, when a Python for it is configured.
fn run_peer(scratch: &scratch::Scratch) -> Option<Report> {
    let python = std::env::var_os("BENCH_PEER_PYTHON")?;
    let url = std::env::var("DATABASE_URL").unwrap();
    let url = match url.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{}", scratch.name()),
        None => panic!("DATABASE_URL has no database name: {url}"),
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/peer/langgraph_flows.py");
    let out = std::env::temp_dir().join(format!("kakeibo-peer-{}.json", std::process::id()));
    println!("running the LangGraph peer on the same database…");
    let status = std::process::Command::new(python)
        .arg(script)
        .args(["--database-url", &url, "--owner", &DEV_OWNER.to_string()])
        .args(["--turns", &setting("BENCH_TURNS", 1000).to_string()])
        .args(["--writes", &setting("BENCH_WRITES", 200).to_string()])
        .args(["--warm-up", &WARM_UP.to_string()])
        .arg("--out")
        .arg(&out)
        .status()
        .expect("starting the peer's Python");
    assert!(status.success(), "the LangGraph peer failed: {status}");
    let text = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let report: Report = serde_json::from_slice(&text).unwrap();
    if let Some(dir) = std::env::var_os("BENCH_REPORT_DIR") {
        std::fs::write(std::path::Path::new(&dir).join("langgraph.json"), &text).unwrap();
    }
    Some(report)
}

/// One read-only turn of `conversation`: the question the scripted model answers with three tools.
async fn ask(agent: &Agent<'_>, conversation: ConversationId) -> Outcome {
    agent
        .chat(
            conversation,
            "How much did I spend in March?",
            &ConfirmPolicy::AutoDeny,
            &|_| {},
        )
        .await
        .unwrap()
}

/// Five conversations of `exchanges` turns each: the turn times of exchanges 1–10 and of the last
/// ten, sorted.
async fn long_conversations(store: &TurnStore, agent: &Agent<'_>, exchanges: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut first, mut last) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let conversation = store.new_conversation(DEV_OWNER, None).await.unwrap();
        for exchange in 1..=exchanges {
            let started = Instant::now();
            ask(agent, conversation).await;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            if exchange <= 10 {
                first.push(ms);
            } else if exchange + 10 > exchanges {
                last.push(ms);
            }
        }
    }
    first.sort_by(f64::total_cmp);
    last.sort_by(f64::total_cmp);
    (first, last)
}
