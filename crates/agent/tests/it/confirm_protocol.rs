//! The exactly-once confirm protocol against a real PostgreSQL: suspend in one set of objects,
//! resume in another, concurrent confirms, crashes at every step, expiry, and provider metadata
//! that must come back byte for byte.

use crate::common;
use crate::world;
use kakeibo_agent::Channel;
use std::sync::Arc;

use common::{app_pool, new_user};
use kakeibo_agent::turns::{Agent, ConfirmError, Leg, Outcome, TurnStore};
use kakeibo_core::{
    Block, ConfirmPolicy, Message, PermissionRules, Phase, ProviderMeta, RunStatus, Turn,
    scripted::{Scripted, reply_calls, reply_text},
    turn::{Deps, step},
};
use kakeibo_core::{RunId, SuspendedTurnId};
use kakeibo_ledger::OwnerId;
use kakeibo_tools::{Scope, registry};
use serde_json::json;
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use world::{World, world};

/// A model that asks for a rule and a read when told to, and says "Done." once it has results.
fn model() -> Scripted {
    Scripted::from_fn(|request| {
        let last = request.messages.last().unwrap();
        Ok(if last.is_tool_results() {
            let said: Vec<String> = last
                .content
                .iter()
                .filter_map(|b| {
                    if let Block::ToolResult { content, .. } = b {
                        Some(content.clone())
                    } else {
                        None
                    }
                })
                .collect();
            reply_text(&format!("Done. {}", said.join(" | ")))
        } else {
            reply_calls(&[
                ("list_accounts", json!({})),
                (
                    "set_category_rule",
                    json!({"pattern": "SWIGGY", "category": "Dining"}),
                ),
            ])
        })
    })
}

const SYSTEM: &str = "You are kakeibo.";

/// Runs `f` with a freshly built agent: nothing shared with other calls but the database.
async fn with_agent<T>(pool: &PgPool, owner: OwnerId, f: impl AsyncFnOnce(&Agent) -> T) -> T {
    let store = TurnStore::new(pool.clone());
    let agent = crate::agent_on(&store, owner, Arc::new(model()), SYSTEM, Channel::Web);
    f(&agent).await
}

async fn suspend(w: &World) -> (SuspendedTurnId, String) {
    let outcome = with_agent(&w.app, w.owner, async |agent| {
        agent
            .chat(
                w.conversation,
                "add a rule for swiggy",
                &ConfirmPolicy::Suspend,
                &|_| {},
            )
            .await
            .unwrap()
    })
    .await;
    let Outcome::Suspended {
        suspended_id,
        pending,
        ..
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    assert_eq!(pending.len(), 1);
    (suspended_id, pending[0].id.clone())
}

async fn confirm(w: &World, id: SuspendedTurnId, call: &str, allowed: bool) -> Result<Outcome, ConfirmError> {
    with_agent(&w.app, w.owner, async |agent| {
        agent.confirm(id, &[(call.to_owned(), allowed)], &|_| {}).await
    })
    .await
}

async fn rules(w: &World) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM rules")
        .fetch_one(&w.owner_pool)
        .await
        .unwrap()
}

async fn backdate_claim(w: &World, id: SuspendedTurnId) {
    sqlx::query("UPDATE suspended_turns SET claimed_at = claimed_at - interval '1 hour' WHERE id = $1")
        .bind(id.as_uuid())
        .execute(&w.owner_pool)
        .await
        .unwrap();
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_turn_suspended_in_one_process_resumes_in_another(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect.clone(), "rules").await;
    let (id, call) = suspend(&w).await;
    assert_eq!(rules(&w).await, 0, "nothing written before the person decides");
    let stored: serde_json::Value = sqlx::query_scalar("SELECT state FROM suspended_turns WHERE id = $1")
        .bind(id.as_uuid())
        .fetch_one(&w.owner_pool)
        .await
        .unwrap();
    let before = Turn::from_json(stored).unwrap();
    assert!(matches!(before.phase(), Phase::AwaitConfirm { .. }));

    // Fresh pool, store, registry and model: only the database is shared.
    let fresh = World {
        app: app_pool(&connect).await,
        ..w
    };
    let outcome = confirm(&fresh, id, &call, true).await.unwrap();
    let Outcome::Finished {
        status,
        answer,
        turn,
        run_id,
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    assert_eq!(status, RunStatus::Ok);
    assert!(answer.starts_with("Done."), "{answer}");
    assert!(
        answer.contains("SWIGGY"),
        "the model saw the write's result: {answer}"
    );
    assert_eq!(rules(&fresh).await, 1);
    assert!(
        turn.usage().input_tokens > before.usage().input_tokens,
        "usage carries on and grows"
    );
    assert_eq!(run_id, before.run_id());

    let run = run_id.as_uuid();
    let (runs, status): (i64, String) =
        sqlx::query_as("SELECT count(*), min(status::text) FROM trace_runs WHERE id = $1")
            .bind(run)
            .fetch_one(&fresh.owner_pool)
            .await
            .unwrap();
    assert_eq!((runs, status.as_str()), (1, "ok"), "one run");
    let seqs: Vec<i32> = sqlx::query_scalar("SELECT seq FROM trace_events WHERE run_id = $1 ORDER BY seq")
        .bind(run)
        .fetch_all(&fresh.owner_pool)
        .await
        .unwrap();
    assert_eq!(
        seqs,
        (0..i32::try_from(seqs.len()).unwrap()).collect::<Vec<_>>(),
        "one sequence across both processes"
    );
    assert!(seqs.len() >= 5);
    let messages: i64 =
        sqlx::query_scalar("SELECT count(*) FROM conversation_messages WHERE conversation_id = $1")
            .bind(fresh.conversation.as_uuid())
            .fetch_one(&fresh.owner_pool)
            .await
            .unwrap();
    assert_eq!(messages, i64::try_from(turn.history().len()).unwrap());
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM suspended_turns")
        .fetch_one(&fresh.owner_pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
    assert!(
        matches!(confirm(&fresh, id, &call, true).await, Err(ConfirmError::Gone)),
        "a finished turn is gone"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_hundred_concurrent_confirms_apply_once(options: PgPoolOptions, connect: PgConnectOptions) {
    let w = world(options, connect, "rules").await;
    let (id, call) = suspend(&w).await;
    let outcomes = with_agent(&w.app, w.owner, async |agent| {
        let decisions = [(call.clone(), true)];
        let confirms = (0..100).map(|_| agent.confirm(id, &decisions, &|_| {}));
        futures_util::future::join_all(confirms).await
    })
    .await;
    let finished = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(Outcome::Finished { .. })))
        .count();
    let refused = outcomes
        .iter()
        .filter(|o| matches!(o, Err(ConfirmError::Claimed { .. } | ConfirmError::Gone)))
        .count();
    let other: Vec<_> = outcomes
        .iter()
        .filter(|o| {
            !matches!(
                o,
                Ok(Outcome::Finished { .. }) | Err(ConfirmError::Claimed { .. } | ConfirmError::Gone)
            )
        })
        .collect();
    assert!(other.is_empty(), "{other:?}");
    assert_eq!((finished, refused), (1, 99));
    assert_eq!(rules(&w).await, 1, "the approved write ran once");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_crash_at_any_step_is_recovered_by_retrying(options: PgPoolOptions, connect: PgConnectOptions) {
    let w = world(options, connect, "rules").await;
    let store = TurnStore::new(w.app.clone());
    let scope = Scope::new(w.owner, w.app.clone());
    let tools = registry(&scope);
    let provider = model();
    let no_rules = PermissionRules::default();
    let tracer = kakeibo_core::trace::MemoryTracer::default();
    let deps = Deps {
        provider: &provider,
        budget: None,
        tools: &tools,
        system: SYSTEM,
        policy: &ConfirmPolicy::Suspend,
        rules: &no_rules,
        tracer: &tracer,
        on_event: &|_| {},
        hooks: None,
        stop_judge: None,
        figures: kakeibo_core::FiguresPolicy::Flag,
        max_iterations: kakeibo_core::turn::MAX_ITERATIONS,
    };
    let decisions = |call: &str| vec![(call.to_owned(), true)];

    for crash_point in [
        "after claim",
        "after apply",
        "during continuation",
        "before finish",
    ] {
        let (id, call) = suspend(&w).await;
        let before = rules(&w).await;
        let mut claim = store.claim(w.owner, id).await.unwrap();
        if crash_point == "after claim" {
            // The process died holding the row's lock, before its writes committed: its transaction
            // is rolled back (here when its connection goes back to the pool; on a crash, when the
            // server sees the connection close) and a retry gets through at once, no lease to wait.
            drop(claim);
            let mut retried = confirm(&w, id, &call, true).await;
            for _ in 0..100 {
                if !matches!(retried, Err(ConfirmError::Claimed { .. })) {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                retried = confirm(&w, id, &call, true).await;
            }
            assert!(
                matches!(
                    retried,
                    Ok(Outcome::Finished {
                        status: RunStatus::Ok,
                        ..
                    })
                ),
                "{crash_point}: {retried:?}"
            );
            assert_eq!(rules(&w).await, before + 1, "{crash_point}: the write ran once");
            continue;
        }
        let (results, _) = store
            .apply(&mut claim, &decisions(&call), &scope, &tools)
            .await
            .unwrap();
        if crash_point != "after apply" {
            let turn = claim.turn.clone().resume(results).unwrap();
            let turn = step(turn, &deps).await;
            if crash_point == "before finish" {
                let turn = kakeibo_core::drive(turn, &deps).await;
                assert!(turn.finished().is_some());
            }
        }
        // The process died here, its writes stored. A retry inside the lease is refused (the
        // holder may be continuing the turn); after it, it completes without running them again.
        assert!(
            matches!(
                confirm(&w, id, &call, true).await,
                Err(ConfirmError::Claimed { .. })
            ),
            "{crash_point}"
        );
        backdate_claim(&w, id).await;
        let outcome = confirm(&w, id, &call, true).await.unwrap();
        assert!(
            matches!(
                outcome,
                Outcome::Finished {
                    status: RunStatus::Ok,
                    ..
                }
            ),
            "{crash_point}: {outcome:?}"
        );
        assert_eq!(
            rules(&w).await,
            before + 1,
            "{crash_point}: the write ran exactly once"
        );
        let left: i64 = sqlx::query_scalar("SELECT count(*) FROM suspended_turns")
            .fetch_one(&w.owner_pool)
            .await
            .unwrap();
        assert_eq!(left, 0, "{crash_point}");
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn declined_and_expired_writes_never_run_and_say_which(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "rules").await;
    let (id, call) = suspend(&w).await;
    let Outcome::Finished { answer, .. } = confirm(&w, id, &call, false).await.unwrap() else {
        panic!()
    };
    assert!(answer.contains("The user declined this call"), "{answer}");

    let (id, call) = suspend(&w).await;
    sqlx::query("UPDATE suspended_turns SET expires_at = now() - interval '1 minute' WHERE id = $1")
        .bind(id.as_uuid())
        .execute(&w.owner_pool)
        .await
        .unwrap();
    let Outcome::Finished { answer, .. } = confirm(&w, id, &call, true).await.unwrap() else {
        panic!()
    };
    assert!(
        answer.contains("expired") && answer.contains("did not decline"),
        "{answer}"
    );
    assert_eq!(rules(&w).await, 0);

    // Another owner cannot tell this turn from one that does not exist.
    let (id, call) = suspend(&w).await;
    let stranger = new_user(&w.owner_pool).await;
    let theirs = with_agent(&w.app, stranger, async |agent| {
        agent.confirm(id, &[(call.clone(), true)], &|_| {}).await
    })
    .await;
    assert!(matches!(theirs, Err(ConfirmError::Gone)), "{theirs:?}");
    assert!(matches!(
        confirm(&w, id, &call, true).await,
        Ok(Outcome::Finished { .. })
    ));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn provider_metadata_survives_jsonb_byte_for_byte(options: PgPoolOptions, connect: PgConnectOptions) {
    let w = world(options, connect, "rules").await;
    let metas = [
        // Gemini: a thoughtSignature, base64.
        "CiQBjz1rX6YJ8ZSv+3uqAbCNwYtsiKBXrDrKL2d3Cd7f0ZzMFu8KZQGPPWtf4xH/0n9i7Q==",
        // Anthropic: a thinking block's signature and its text, kept as JSON text with odd spacing.
        "{\"signature\":\"EqQBCkgIAxABGAIiQL0=\",  \"thinking\": \"Let me check \\u00e9 the budget\"}",
        // OpenAI-compatible: reasoning_content with key order jsonb would change.
        "{\"z\":1,\"a\":[\"reasoning… ünïcode\",{\"b\":null}],\"reasoning_content\":\"step 1\\nstep 2\"}",
    ];
    let blocks: Vec<Block> = metas
        .iter()
        .enumerate()
        .map(|(i, meta)| Block::ToolUse {
            id: format!("call_{i}"),
            name: "set_budget".into(),
            input: json!({"category": "Dining", "month": "2025-03", "amount_minor": 100}),
            provider_meta: Some(ProviderMeta((*meta).to_owned())),
        })
        .collect();
    let turn = Turn::start(RunId::random(), Vec::new(), Message::user("budget"));
    let turn = waiting(
        &turn,
        Some(Message::assistant(blocks)),
        kakeibo_core::turn::now_unix() + 60,
    );
    let store = TurnStore::new(w.app.clone());
    let id = store
        .suspend(w.owner, w.conversation, &turn, &Leg::default())
        .await
        .unwrap();
    let back = store.claim(w.owner, id).await.unwrap().turn;
    let returned: Vec<String> = back.history()[1]
        .content
        .iter()
        .filter_map(|b| {
            if let Block::ToolUse {
                provider_meta: Some(m),
                ..
            } = b
            {
                Some(m.0.clone())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(returned, metas.map(str::to_owned));
    assert_eq!(back, turn);
}

#[test]
fn a_stored_version_1_turn_stays_readable_and_a_newer_one_is_refused() {
    let sample: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/suspended-turn-v1.json")).unwrap();
    let turn = Turn::from_json(sample.clone()).unwrap();
    let Phase::AwaitConfirm { pending, .. } = turn.phase() else {
        panic!()
    };
    assert_eq!(pending[0].tool, "set_budget");
    assert_eq!(turn.usage().input_tokens, 1850);
    let mut newer = sample;
    newer["version"] = json!(3);
    let err = Turn::from_json(newer).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the stored turn is version 3; this kakeibo reads versions up to 2"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn an_oversized_turn_is_refused_not_cut(options: PgPoolOptions, connect: PgConnectOptions) {
    let w = world(options, connect, "rules").await;
    let turn = Turn::start(RunId::random(), Vec::new(), Message::user("x".repeat(300 * 1024)));
    let turn = waiting(&turn, None, 0);
    let err = TurnStore::new(w.app.clone())
        .suspend(w.owner, w.conversation, &turn, &Leg::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ConfirmError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("the limit is 262144"));
}

/// `turn` waiting for a confirmation, with `reply` after its history: only the loop moves a
/// turn's phase, so a test that needs a waiting turn built by hand builds its stored form, as the
/// store would hold it.
fn waiting(turn: &Turn, reply: Option<Message>, expires_at: i64) -> Turn {
    let mut stored = turn.to_json().unwrap();
    if let Some(reply) = reply {
        stored["history"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::to_value(reply).unwrap());
    }
    stored["phase"] = serde_json::to_value(Phase::AwaitConfirm {
        calls: vec![],
        done: vec![],
        pending: vec![],
        expires_at,
    })
    .unwrap();
    Turn::from_json(stored).unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_write_that_fails_in_the_database_is_its_result_and_the_others_apply(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "rules").await;
    // Two writes in one batch; the database will refuse the second.
    let provider = Scripted::from_fn(|request| {
        let last = request.messages.last().unwrap();
        Ok(if last.is_tool_results() {
            reply_text(&format!(
                "Done. {}",
                serde_json::to_string(&last.content).unwrap()
            ))
        } else {
            reply_calls(&[
                (
                    "set_category_rule",
                    json!({"pattern": "SWIGGY", "category": "Dining"}),
                ),
                (
                    "set_budget",
                    json!({"category": "Groceries", "month": "2025-04", "amount_minor": 500_000}),
                ),
            ])
        })
    });
    let store = TurnStore::new(w.app.clone());
    let agent = crate::agent_on(&store, w.owner, Arc::new(provider), SYSTEM, Channel::Web);
    let Outcome::Suspended {
        suspended_id,
        pending,
        ..
    } = agent
        .chat(
            w.conversation,
            "rule and budget",
            &ConfirmPolicy::Suspend,
            &|_| {},
        )
        .await
        .unwrap()
    else {
        panic!("the writes did not wait")
    };
    sqlx::query("ALTER TABLE budgets ADD CONSTRAINT refused_here CHECK (amount_minor < 1000)")
        .execute(&w.owner_pool)
        .await
        .unwrap();
    let decisions: Vec<(String, bool)> = pending.iter().map(|p| (p.id.clone(), true)).collect();
    let outcome = agent.confirm(suspended_id, &decisions, &|_| {}).await.unwrap();
    let Outcome::Finished { answer, .. } = outcome else {
        panic!("{outcome:?}")
    };
    assert!(answer.contains("The tool failed"), "{answer}");
    assert_eq!(rules(&w).await, 1, "the rule was applied once");
    let budgets: i64 = sqlx::query_scalar("SELECT count(*) FROM budgets")
        .fetch_one(&w.owner_pool)
        .await
        .unwrap();
    assert_eq!(budgets, 0, "the refused budget left nothing");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_claim_is_refused_at_once_while_another_holds_it_and_a_stale_holder_finishes_nothing(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "rules").await;
    let store = TurnStore::new(w.app.clone());
    let scope = Scope::new(w.owner, w.app.clone());
    let tools = registry(&scope);
    let (id, call) = suspend(&w).await;
    let decisions = vec![(call.clone(), true)];
    // While one confirm holds the row (between its claim and its commit), another is refused
    // at once rather than left waiting for the lock.
    let mut first = store.claim(w.owner, id).await.unwrap();
    let second = store.claim(w.owner, id).await;
    assert!(
        matches!(second, Err(ConfirmError::Claimed { retry_after_secs: 1 })),
        "an apply is a short transaction: {second:?}"
    );
    let (results, stale_fence) = store.apply(&mut first, &decisions, &scope, &tools).await.unwrap();
    assert_eq!(rules(&w).await, 1);
    // Applied and going on with the turn: a confirm now is told how long the holder's lease
    // lasts (30 s), and the row says who holds it.
    let waiting = store.claim(w.owner, id).await;
    assert!(
        matches!(
            waiting,
            Err(ConfirmError::Claimed {
                retry_after_secs: 25..=30
            })
        ),
        "{waiting:?}"
    );
    let holder: Option<String> = sqlx::query_scalar("SELECT claimed_by FROM suspended_turns WHERE id = $1")
        .bind(id.as_uuid())
        .fetch_one(&w.owner_pool)
        .await
        .unwrap();
    assert!(
        holder
            .as_deref()
            .is_some_and(|h| h.ends_with(&format!(":{}", std::process::id()))),
        "{holder:?}"
    );
    // The first holder stalls past the lease in its continuation; another request takes the
    // turn over, with the stored results and a fence of its own, running nothing again.
    backdate_claim(&w, id).await;
    let mut current = store.claim(w.owner, id).await.unwrap();
    assert_eq!(current.applied(), Some(results.as_slice()));
    let (again, fence) = store
        .apply(&mut current, &decisions, &scope, &tools)
        .await
        .unwrap();
    assert_eq!(again, results);
    assert_eq!(rules(&w).await, 1, "the write ran once");
    // The stale holder can no longer finish (its fence is gone); the current one can.
    let finished = |fence| {
        let store = &store;
        let turn = first.turn.clone().resume(results.clone()).unwrap();
        async move {
            store
                .finish(
                    w.owner,
                    id,
                    fence,
                    first.conversation_id,
                    first.history_base,
                    &turn,
                    &[],
                )
                .await
        }
    };
    assert!(matches!(
        finished(stale_fence).await,
        Err(ConfirmError::Claimed { .. })
    ));
    finished(fence).await.unwrap();
    assert!(matches!(store.claim(w.owner, id).await, Err(ConfirmError::Gone)));
}
