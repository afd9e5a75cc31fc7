//! Orchestration overhead of a turn: a zero-latency scripted model asking for three read tools,
//! the real tools on a real PostgreSQL, the whole `Agent::chat` (history, run, trace events,
//! history saved). The baseline, measured in the same run, is the same three tool calls made
//! directly through the registry; the difference is what the loop and its bookkeeping cost.
//!
//! Beside the timings, counted by the server, not timed: the transactions that wrote (from the
//! transaction ids a turn consumes) and all committed transactions (`pg_stat_database`, the
//! tools' reads included) per turn. Last, a turn at the 100th exchange of one conversation
//! against a turn at its first: appending the history keeps the two close.
//!
//! `cargo xtask bench` runs it; `BENCH_TURNS` sets the count (default 1000), `BENCH_EXCHANGES`
//! the length of the long conversations (default 100).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)] // A benchmark.

use std::time::Instant;

use kakeibo_agent::turns::{Agent, Outcome, TurnStore};
use kakeibo_core::{
    Block, ConfirmPolicy, ConversationId, PermissionRules,
    scripted::{Scripted, reply_calls, reply_text},
};
use kakeibo_ledger::{DEV_OWNER, seed, with_owner};
use kakeibo_tools::{Scope, registry};
use serde_json::json;

fn calls() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("get_spend_report", json!({"period": "2025-03"})),
        ("search_transactions", json!({"query": "swiggy", "limit": 5})),
        ("list_accounts", json!({})),
    ]
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[index.saturating_sub(1).min(sorted.len() - 1)]
}

#[path = "../../ledger/benches/support/mod.rs"]
mod support;
use support as scratch;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let turns = scratch::setting("BENCH_TURNS", 1000);
    let scratch = scratch::create("turn", 4).await;
    let pool = scratch.pool.clone();
    let data = seed::generate().unwrap();
    let rows = seed::read_transactions_csv(&seed::transactions_csv(&data).unwrap()).unwrap();
    with_owner(DEV_OWNER, &pool, |conn| {
        Box::pin(async move { seed::load(DEV_OWNER, conn, "seed.csv", &rows).await })
    })
    .await
    .unwrap();

    let store = TurnStore::new(pool.clone());
    let scope = Scope::new(DEV_OWNER, pool.clone());
    let tools = registry(&scope);
    let provider = Scripted::from_fn(|request| {
        let last = request.messages.last().unwrap();
        Ok(
            if last.content.iter().any(|b| matches!(b, Block::ToolResult { .. })) {
                reply_text("March: ₹1,58,558.00 spent.")
            } else {
                reply_calls(&calls())
            },
        )
    });
    let rules = PermissionRules::default();
    let agent = Agent {
        store: &store,
        tools: tools.clone(),
        scope,
        provider: &provider,
        system: "bench",
        rules: &rules,
        channel: "eval",
        summarizer: None,
    };

    // Warm both paths once.
    let conversation = store.new_conversation(DEV_OWNER, None).await.unwrap();
    agent
        .chat(conversation, "warm up", &ConfirmPolicy::AutoDeny, &|_| {})
        .await
        .unwrap();

    let mut baseline = Vec::with_capacity(turns);
    let mut loop_times = Vec::with_capacity(turns);
    for _ in 0..turns {
        let started = Instant::now();
        for (name, input) in calls() {
            tools.call(name, input).await.unwrap();
        }
        baseline.push(started.elapsed().as_secs_f64() * 1000.0);

        let conversation = store.new_conversation(DEV_OWNER, None).await.unwrap();
        let started = Instant::now();
        let outcome = ask(&agent, conversation).await;
        loop_times.push(started.elapsed().as_secs_f64() * 1000.0);
        assert!(matches!(outcome, Outcome::Finished { .. }));
    }
    let counts = count_commits(&pool, &agent, 100).await;
    let exchanges = scratch::setting("BENCH_EXCHANGES", 100);
    let (first, last) = long_conversations(&store, &agent, exchanges).await;
    scratch.drop_database().await;

    baseline.sort_by(f64::total_cmp);
    loop_times.sort_by(f64::total_cmp);
    let overhead: Vec<f64> = {
        let mut o: Vec<f64> = loop_times.iter().zip(&baseline).map(|(l, b)| l - b).collect();
        o.sort_by(f64::total_cmp);
        o
    };
    println!("turns: {turns}, each: 2 model calls (scripted, no latency), 3 read tools, real PostgreSQL");
    println!(
        "tools alone   p50 {:>7.2} ms  p99 {:>7.2} ms  (baseline: the same three calls, no loop)",
        percentile(&baseline, 50.0),
        percentile(&baseline, 99.0)
    );
    println!(
        "whole turn    p50 {:>7.2} ms  p99 {:>7.2} ms",
        percentile(&loop_times, 50.0),
        percentile(&loop_times, 99.0)
    );
    println!(
        "overhead      p50 {:>7.2} ms  p99 {:>7.2} ms  (turn minus tools: loop, history, run, trace events)",
        percentile(&overhead, 50.0),
        percentile(&overhead, 99.0)
    );
    println!(
        "ratio         a turn takes {:.2}× its tools' time (p50)",
        percentile(&loop_times, 50.0) / percentile(&baseline, 50.0)
    );
    println!(
        "commits       {:.2} writing, {:.2} in all (the tools' reads included), per turn, over {} turns",
        counts.writing, counts.all, counts.turns
    );
    println!(
        "long thread   exchanges 1–10 p50 {:>7.2} ms; exchanges {}–{} p50 {:>7.2} ms: {:.2}× (5 conversations)",
        percentile(&first, 50.0),
        exchanges.saturating_sub(9),
        exchanges,
        percentile(&last, 50.0),
        percentile(&last, 50.0) / percentile(&first, 50.0)
    );
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

struct Commits {
    turns: usize,
    writing: f64,
    all: f64,
}

/// Writing transactions per turn from the transaction ids `turns` turns consumed (exact: each
/// writing transaction takes one, and so does each probe), and all commits from
/// `pg_stat_database`, read after the server's statistics have been flushed (a backend reports
/// them when it has been idle for ten seconds).
async fn count_commits(pool: &sqlx::PgPool, agent: &Agent<'_>, turns: usize) -> Commits {
    let xid = async || -> i64 {
        sqlx::query_scalar("SELECT pg_current_xact_id()::text::bigint")
            .fetch_one(pool)
            .await
            .unwrap()
    };
    let commits = async || -> i64 {
        tokio::time::sleep(std::time::Duration::from_secs(11)).await;
        sqlx::query_scalar("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
            .fetch_one(pool)
            .await
            .unwrap()
    };
    let conversations = {
        let mut ids = Vec::with_capacity(turns);
        for _ in 0..turns {
            ids.push(agent.store.new_conversation(DEV_OWNER, None).await.unwrap());
        }
        ids
    };
    let (commits_before, xid_before) = (commits().await, xid().await);
    for conversation in conversations {
        ask(agent, conversation).await;
    }
    let xid_after = xid().await;
    let commits_after = commits().await;
    // The probes: the second xid probe, and the two xid probes and the first commit reading.
    let writing = (xid_after - xid_before - 1) as f64 / turns as f64;
    let all = (commits_after - commits_before - 3) as f64 / turns as f64;
    Commits { turns, writing, all }
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
