//! Orchestration overhead of a turn, and of a write suspended, confirmed and resumed, beside
//! LangGraph with `PostgresSaver` running the same flows on the same server and ledger.
//!
//! The read turn: a zero-latency scripted model asks for three read tools in one batch, the real
//! tools run on a real PostgreSQL, the model answers (the whole `Agent::chat`: history, run,
//! memory recall, trace events, history saved). Its overhead is the turn minus the same three
//! calls made directly just before it; beside it, stricter, the turn minus the time its tools ran
//! inside it (the span during which at least one tool was running). Both alike on both sides.
//!
//! The write flow: the model asks for `set_budget`, the turn suspends; fresh objects (store,
//! registry, agent, model) confirm it, as the confirm function does in another invocation; the
//! write runs and the model answers. Its baseline is the write made directly.
//!
//! The two sides run in alternating blocks, each round starting with the side the last one ended
//! with: the speed of a shared host drifts (the hypervisor's CPU steal comes and goes), and one
//! side run after the other would compare two different machines. The steal during each side's
//! blocks is reported.
//!
//! Beside the timings, counted by the server around each side's own flows: writing transactions,
//! commits and statements per flow. Last, a turn at the 100th exchange of one conversation against
//! a turn at its first.
//!
//! The peer (`bench/peer/langgraph_flows.py`) runs in a process of its own that takes its blocks
//! over stdin, when `BENCH_PEER_PYTHON` names a Python with its requirements (`cargo xtask bench`
//! installs one). `BENCH_TURNS` sets the read turns (default 1000), `BENCH_WRITES` the write
//! flows (200), `BENCH_EXCHANGES` the long conversations' length (100).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::too_many_lines
)] // A benchmark.

use kakeibo_agent::{AgentConfig, Channel};
use std::{
    io::{BufRead as _, BufReader, Write as _},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures_util::future::BoxFuture;
use kakeibo_agent::turns::{Agent, Outcome, TurnStore};
use kakeibo_bench::{Figure, Report, cpu::Ticks, percentile, scratch, server::Probe, setting};
use kakeibo_core::{
    Block, ConfirmPolicy, ConversationId, Declaration, Provider, Sourced, Tier, Tool, ToolError,
    ToolRegistry,
    scripted::{Scripted, reply_calls, reply_text},
};
use kakeibo_ledger::{DEV_OWNER, MIGRATOR, seed, with_owner};
use serde_json::{Value, json};
use sqlx::PgPool;

fn reads() -> Vec<(&'static str, Value)> {
    vec![
        ("get_spend_report", json!({"period": "2025-03"})),
        ("search_transactions", json!({"query": "swiggy", "limit": 5})),
        ("list_accounts", json!({})),
    ]
}

fn write() -> (&'static str, Value) {
    (
        "set_budget",
        json!({"category": "Groceries", "month": "2025-04", "amount_minor": 500_000}),
    )
}

/// The zero-latency model: `calls` in one batch, then `answer` once their results are in. It keeps
/// no copy of its requests (a test's model does, to be asked about them).
fn model(calls: Vec<(&'static str, Value)>, answer: &'static str) -> Scripted {
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
/// Read turns, and write flows, in one side's block.
const READ_BLOCK: usize = 50;
const WRITE_BLOCK: usize = 25;
/// Flows each side runs for the server's counters.
const COUNTED: usize = 100;

/// When each tool call ran.
type Spans = Arc<Mutex<Vec<(Instant, Instant)>>>;

/// A tool that records when it runs, so a turn's time inside its tools can be taken out of it.
struct Timed {
    tool: Arc<dyn Tool>,
    spans: Spans,
}

impl Tool for Timed {
    fn name(&self) -> &'static str {
        self.tool.name()
    }
    fn description(&self) -> &'static str {
        self.tool.description()
    }
    fn tier(&self) -> Tier {
        self.tool.tier()
    }
    fn declaration(&self) -> &Declaration {
        self.tool.declaration()
    }
    fn validate(&self, input: &Value) -> Vec<String> {
        self.tool.validate(input)
    }
    fn summarize(&self, input: &Value) -> Option<String> {
        self.tool.summarize(input)
    }
    fn execute(&self, input: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            let started = Instant::now();
            let result = self.tool.execute(input).await;
            self.spans.lock().unwrap().push((started, Instant::now()));
            result
        })
    }
    // What the loop runs: the tool's own figures with its result, as without the wrapper.
    fn execute_sourced(&self, input: Value) -> BoxFuture<'_, Result<Sourced, ToolError>> {
        Box::pin(async move {
            let started = Instant::now();
            let result = self.tool.execute_sourced(input).await;
            self.spans.lock().unwrap().push((started, Instant::now()));
            result
        })
    }
}

/// How long at least one tool was running, by the spans recorded since they were last taken.
fn tools_span(spans: &Spans) -> Duration {
    let mut taken = std::mem::take(&mut *spans.lock().unwrap());
    taken.sort();
    let mut total = Duration::ZERO;
    let mut covered: Option<Instant> = None;
    for (start, end) in taken {
        let from = covered.map_or(start, |c| c.max(start));
        if end > from {
            total += end - from;
            covered = Some(end);
        }
    }
    total
}

/// An agent as a function invocation builds one: everything fresh but the pool.
fn agent(store: &TurnStore, provider: Arc<dyn Provider>) -> Agent {
    let mut config = AgentConfig::new(provider, Channel::Eval);
    config.system = "bench".into();
    Agent::new(store.clone(), DEV_OWNER, config).unwrap()
}

/// The samples of one side.
#[derive(Default)]
struct Samples {
    turn: Vec<f64>,
    tools_inside: Vec<f64>,
    tools_alone: Vec<f64>,
    write_flow: Vec<f64>,
    write_alone: Vec<f64>,
    ticks: Ticks,
}

impl Samples {
    /// Each read turn minus its three tools called directly just before it, sorted.
    fn read_overhead(&self) -> Vec<f64> {
        differences(&self.turn, &self.tools_alone)
    }

    /// Each read turn minus the time its tools ran inside it, sorted.
    fn outside_tools(&self) -> Vec<f64> {
        differences(&self.turn, &self.tools_inside)
    }

    /// Each write flow minus the write made directly just before it, sorted.
    fn write_overhead(&self) -> Vec<f64> {
        differences(&self.write_flow, &self.write_alone)
    }
}

/// `whole[i] - part[i]`, at least zero, sorted.
fn differences(whole: &[f64], part: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = whole
        .iter()
        .zip(part)
        .map(|(whole, part)| (whole - part).max(0.0))
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// kakeibo's side: the agent of the read turns, with its tools timed.
struct Ours<'a> {
    pool: PgPool,
    store: &'a TurnStore,
    agent: Agent,
    spans: Spans,
}

/// The two kinds of flow a block runs.
#[derive(Debug, Clone, Copy)]
enum Flow {
    Reads,
    Writes,
}

impl Ours<'_> {
    async fn run(&self, flow: Flow, n: usize, into: &mut Samples) {
        let started = Ticks::now();
        match flow {
            Flow::Reads => self.reads(n, into).await,
            Flow::Writes => self.writes(n, into).await,
        }
        into.ticks = into.ticks.plus(Ticks::now().since(started));
    }

    async fn reads(&self, n: usize, into: &mut Samples) {
        for _ in 0..n {
            let alone = Instant::now();
            for (name, input) in reads() {
                self.agent.tools().call(name, input).await.unwrap();
            }
            into.tools_alone.push(ms(alone.elapsed()));
            let conversation = self.store.new_conversation(DEV_OWNER, None).await.unwrap();
            tools_span(&self.spans);
            let turn = Instant::now();
            let outcome = ask(&self.agent, conversation).await;
            into.turn.push(ms(turn.elapsed()));
            into.tools_inside.push(ms(tools_span(&self.spans)));
            assert!(matches!(outcome, Outcome::Finished { .. }));
        }
    }

    async fn writes(&self, n: usize, into: &mut Samples) {
        for _ in 0..n {
            let (name, input) = write();
            let alone = Instant::now();
            self.agent.tools().call(name, input).await.unwrap();
            into.write_alone.push(ms(alone.elapsed()));
            let flow = Instant::now();
            write_flow(&self.pool).await;
            into.write_flow.push(ms(flow.elapsed()));
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let turns = setting("BENCH_TURNS", 1000);
    let writes = setting("BENCH_WRITES", 200);
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
    let spans = Spans::default();
    let agent = agent(&store, Arc::new(reader));
    let timed: Vec<Arc<dyn Tool>> = agent
        .tools()
        .tools()
        .iter()
        .map(|tool| {
            Arc::new(Timed {
                tool: Arc::clone(tool),
                spans: Arc::clone(&spans),
            }) as Arc<dyn Tool>
        })
        .collect();
    let agent = agent.with_tools(ToolRegistry::new(timed).unwrap());
    let ours = Ours {
        pool: pool.clone(),
        store: &store,
        agent,
        spans,
    };
    let mut peer = Peer::start(&scratch);

    // Warm both paths, then gather statistics once more: the tables the flows write were empty
    // when the first plans were made (the foreign-key checks' among them, which a connection keeps),
    // and a server in use has statistics of what it holds.
    for _ in 0..WARM_UP {
        ask(
            &ours.agent,
            store.new_conversation(DEV_OWNER, None).await.unwrap(),
        )
        .await;
        write_flow(&pool).await;
    }
    if let Some(peer) = &mut peer {
        peer.ask("warm", WARM_UP);
    }
    sqlx::query("ANALYZE").execute(&pool).await.unwrap();

    let (mut mine, mut theirs) = (Samples::default(), Samples::default());
    // Alternating blocks: ours, theirs, theirs, ours, … so each side runs as often first as last.
    for (flow, total, block) in [
        (Flow::Reads, turns, READ_BLOCK),
        (Flow::Writes, writes, WRITE_BLOCK),
    ] {
        for (round, n) in blocks(total, block).into_iter().enumerate() {
            if round % 2 == 0 {
                ours.run(flow, n, &mut mine).await;
            }
            if let Some(peer) = &mut peer {
                peer.run(flow, n, &mut theirs);
            }
            if round % 2 == 1 {
                ours.run(flow, n, &mut mine).await;
            }
        }
    }

    // What the timed turns left for autovacuum, done now: an automatic ANALYZE during a count
    // would take transaction ids of its own, and count as the flows'.
    sqlx::query("VACUUM ANALYZE").execute(&pool).await.unwrap();
    let read_counts = {
        let mut conversations = Vec::with_capacity(COUNTED);
        for _ in 0..COUNTED {
            conversations.push(store.new_conversation(DEV_OWNER, None).await.unwrap());
        }
        let probe = Probe::start(&pool).await;
        for conversation in conversations {
            ask(&ours.agent, conversation).await;
        }
        probe.per_flow(&pool, COUNTED).await
    };
    let write_counts = {
        let probe = Probe::start(&pool).await;
        for _ in 0..COUNTED {
            write_flow(&pool).await;
        }
        probe.per_flow(&pool, COUNTED).await
    };
    let peer_counts = match &mut peer {
        Some(peer) => {
            let probe = Probe::start(&pool).await;
            peer.ask("count_reads", COUNTED);
            let reads = probe.per_flow(&pool, COUNTED).await;
            let probe = Probe::start(&pool).await;
            peer.ask("count_writes", COUNTED);
            Some((reads, probe.per_flow(&pool, COUNTED).await))
        }
        None => None,
    };
    let exchanges = setting("BENCH_EXCHANGES", 100);
    let (first, last) = long_conversations(&store, &ours.agent, exchanges).await;
    let peer_title = peer.map(Peer::quit);
    drop(ours);
    scratch.drop_database().await;

    let peer_report = peer_title.map(|title| {
        let mut report = Report::new(
            "langgraph",
            &title,
            "python bench/peer/langgraph_flows.py (driven by the turn benchmark)",
        );
        for figure in timings(&theirs) {
            report.push(figure);
        }
        if let Some((reads, writes)) = &peer_counts {
            for figure in counts(reads, writes) {
                report.push(figure);
            }
        }
        report.note(format!(
            "{turns} read turns and {writes} write flows in blocks alternating with kakeibo's; counts over \
             {COUNTED} flows each"
        ));
        report.finish();
        report
    });

    let mut report = Report::new(
        "turn",
        &format!(
            "A turn's orchestration ({turns} read turns: 2 scripted model calls, 3 read tools; {writes} write flows: \
             suspend, confirm by fresh objects, resume)"
        ),
        "cargo bench -p kakeibo-agent --bench turn",
    );
    let peer_value = |name: &str| peer_report.as_ref().and_then(|p| p.figure(name)).map(|f| f.value);
    for figure in timings(&mine)
        .into_iter()
        .chain(counts(&read_counts, &write_counts))
    {
        let target = match figure.name.as_str() {
            "read turn overhead p50" | "read turn overhead p99" => Some(10.0),
            "write flow p50" | "write flow p99" => Some(6.0),
            _ => None,
        };
        let figure = match peer_value(&figure.name) {
            // A time the peer also took: how many times faster; a count: how many times as many.
            Some(peer) if figure.unit == "ms" && figure.baseline.is_none() => {
                let name = format!("LangGraph {}", figure.name);
                let figure = figure.faster_than(&name, peer);
                match target {
                    Some(target) => figure.at_least(target),
                    None => figure,
                }
            }
            Some(peer) if figure.baseline.is_none() => {
                let name = format!("LangGraph {}", figure.name);
                figure.against(&name, peer)
            }
            _ => figure,
        };
        report.push(match figure.name.as_str() {
            "read turn writing transactions" => figure.value_at_most(2.0),
            "read turn outside its tools p50" | "read turn outside its tools p99" => figure.headline(),
            _ => figure,
        });
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
    if read_counts.statements.is_none() {
        report.note("statements not counted: the server does not load pg_stat_statements");
    }
    report.note(
        "read turn overhead: each turn minus its three tools called directly, one after the other, just \
         before it (what running the tools through the agent costs over calling them); outside its tools: \
         each turn minus the span during which at least one of its tools was running inside it, timed in \
         the tools' bodies on both sides (a side that runs its tools side by side gains nothing there)",
    );
    report.note(
        "statements: every statement the server ran, those inside kakeibo's phase functions included \
         (pg_stat_statements.track = all); statements sent: the top-level ones, each a round trip but for \
         the BEGIN and tenant a scoped transaction sends as one",
    );
    report.note(format!(
        "counts over {COUNTED} flows each; commits include the tools' reads (each tool reads in a transaction \
         of its own); writing transactions are the transaction ids the flows consumed (the server was \
         vacuumed and analysed just before, so no automatic ANALYZE takes one during a count)"
    ));
    report.note(
        "the write flow's writing transactions: the turn's opening with its new conversation (lazy), its \
         suspension (lazy: nothing has run, and the apply's flush carries it), the claim with the write and \
         its stored result, and the finish: two wait for a WAL flush",
    );
    let steal = |samples: &Samples| {
        samples
            .ticks
            .steal_percent()
            .map_or_else(|| "not counted".to_owned(), |p| format!("{p:.1}%"))
    };
    if let Some(peer) = &peer_report {
        report.note(format!("peer: {}", peer.title));
        report.note(format!(
            "the sides ran in alternating blocks of {READ_BLOCK} read turns and {WRITE_BLOCK} write flows; \
             CPU time the hypervisor stole from this machine: {} during kakeibo's blocks, {} during \
             LangGraph's",
            steal(&mine),
            steal(&theirs)
        ));
    } else {
        report.note("peer not run: BENCH_PEER_PYTHON is unset (`cargo xtask bench` installs it)");
        report.note(format!(
            "CPU time the hypervisor stole from this machine while the flows ran: {}",
            steal(&mine)
        ));
    }
    report.finish();
}

/// `total` split into blocks of at most `block`.
fn blocks(total: usize, block: usize) -> Vec<usize> {
    let mut left = total;
    let mut out = Vec::new();
    while left > 0 {
        let n = left.min(block);
        out.push(n);
        left -= n;
    }
    out
}

/// The timing figures of one side, named alike on both.
fn timings(samples: &Samples) -> Vec<Figure> {
    let overhead = samples.read_overhead();
    let outside = samples.outside_tools();
    let turn = sorted(&samples.turn);
    let write_flow = sorted(&samples.write_flow);
    vec![
        Figure::new("read turn overhead p50", percentile(&overhead, 50.0), "ms"),
        Figure::new("read turn overhead p99", percentile(&overhead, 99.0), "ms"),
        Figure::new(
            "read turn outside its tools p50",
            percentile(&outside, 50.0),
            "ms",
        ),
        Figure::new(
            "read turn outside its tools p99",
            percentile(&outside, 99.0),
            "ms",
        ),
        Figure::new("read turn p50", percentile(&turn, 50.0), "ms").against(
            "its 3 tools called directly",
            percentile(&sorted(&samples.tools_alone), 50.0),
        ),
        Figure::new("write flow p50", percentile(&write_flow, 50.0), "ms"),
        Figure::new("write flow p99", percentile(&write_flow, 99.0), "ms"),
        Figure::new(
            "write flow overhead p50",
            percentile(&samples.write_overhead(), 50.0),
            "ms",
        ),
    ]
}

/// The server's counts of one side, named alike on both.
fn counts(reads: &kakeibo_bench::server::PerFlow, writes: &kakeibo_bench::server::PerFlow) -> Vec<Figure> {
    let mut figures = Vec::new();
    for (flow, counts, per) in [
        ("read turn", reads, "per turn"),
        ("write flow", writes, "per flow"),
    ] {
        figures.push(Figure::new(
            &format!("{flow} writing transactions"),
            counts.writing,
            per,
        ));
        figures.push(Figure::new(&format!("{flow} commits"), counts.commits, per));
        figures.push(Figure::new(
            &format!("{flow} WAL"),
            counts.wal_bytes,
            &format!("bytes {per}"),
        ));
        if let Some(cpu) = counts.server_cpu_ms {
            figures.push(Figure::new(
                &format!("{flow} server CPU"),
                cpu,
                &format!("ms {per}"),
            ));
        }
        if let Some(statements) = counts.statements {
            figures.push(Figure::new(&format!("{flow} statements"), statements, per));
        }
        if let Some(sent) = counts.sent {
            figures.push(Figure::new(&format!("{flow} statements sent"), sent, per));
        }
        if let Some(ms) = counts.server_ms {
            figures.push(Figure::new(
                &format!("{flow} server time"),
                ms,
                &format!("ms {per}"),
            ));
        }
    }
    figures
}

/// One write flow, the first message of a new conversation: the turn suspends at `set_budget`;
/// then, as another invocation would, fresh objects confirm it and the turn finishes.
async fn write_flow(pool: &PgPool) {
    let store = TurnStore::new(pool.clone());
    let (name, input) = write();
    let writer = model(vec![(name, input)], "The Groceries budget for April is ₹5,000.");
    // The first message of a conversation, which the turn's opening makes (as the web's chat does).
    let outcome = agent(&store, Arc::new(writer))
        .start(
            ConversationId::random(),
            None,
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
    let outcome = agent(&store, Arc::new(writer))
        .confirm(suspended_id, &[(pending[0].id.clone(), true)], &|_| {})
        .await
        .unwrap();
    assert!(matches!(outcome, Outcome::Finished { .. }), "{outcome:?}");
}

/// The LangGraph peer: a process of its own on this benchmark's database, taking its blocks of
/// flows one JSON line at a time (`bench/peer/langgraph_flows.py`).
struct Peer {
    child: Child,
    commands: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl Peer {
    /// Starts the peer when a Python for it is configured.
    fn start(scratch: &scratch::Scratch) -> Option<Self> {
        let python = std::env::var_os("BENCH_PEER_PYTHON")?;
        let url = std::env::var("DATABASE_URL").unwrap();
        let url = match url.rsplit_once('/') {
            Some((server, _)) => format!("{server}/{}", scratch.name()),
            None => panic!("DATABASE_URL has no database name: {url}"),
        };
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/peer/langgraph_flows.py");
        println!("starting the LangGraph peer on the same database…");
        let mut child = Command::new(python)
            .arg(script)
            .args(["--database-url", &url, "--owner", &DEV_OWNER.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting the peer's Python");
        let commands = child.stdin.take().unwrap();
        let answers = BufReader::new(child.stdout.take().unwrap());
        Some(Self {
            child,
            commands,
            answers,
        })
    }

    /// Sends one command and waits for its answer.
    fn ask(&mut self, op: &str, n: usize) -> Value {
        writeln!(self.commands, "{}", json!({"op": op, "n": n})).unwrap();
        self.commands.flush().unwrap();
        let mut line = String::new();
        let read = self.answers.read_line(&mut line).unwrap();
        assert!(read > 0, "the LangGraph peer stopped (its error is above)");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("the peer answered {line:?}: {e}"))
    }

    /// One block of `flow`, its samples added to `into`.
    fn run(&mut self, flow: Flow, n: usize, into: &mut Samples) {
        let started = Ticks::now();
        let op = match flow {
            Flow::Reads => "reads",
            Flow::Writes => "writes",
        };
        let answer = self.ask(op, n);
        into.ticks = into.ticks.plus(Ticks::now().since(started));
        let samples = match flow {
            Flow::Reads => vec![
                (&mut into.turn, "turn_ms"),
                (&mut into.tools_inside, "tools_inside_ms"),
                (&mut into.tools_alone, "tools_alone_ms"),
            ],
            Flow::Writes => vec![
                (&mut into.write_flow, "flow_ms"),
                (&mut into.write_alone, "alone_ms"),
            ],
        };
        for (samples, key) in samples {
            samples.extend(numbers(&answer[key]));
        }
    }

    /// Ends the peer; returns its title (what it is: versions, settings).
    fn quit(mut self) -> String {
        let title = self.ask("hello", 0)["title"].as_str().unwrap().to_owned();
        writeln!(self.commands, "{}", json!({"op": "quit"})).unwrap();
        drop(self.commands);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the LangGraph peer failed: {status}");
        title
    }
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("the peer sent {value} where a list of numbers belongs"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// One read-only turn of `conversation`: the question the scripted model answers with three tools.
async fn ask(agent: &Agent, conversation: ConversationId) -> Outcome {
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
async fn long_conversations(store: &TurnStore, agent: &Agent, exchanges: usize) -> (Vec<f64>, Vec<f64>) {
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
