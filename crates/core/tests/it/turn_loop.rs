//! The turn state machine with a scripted model and small tools of its own.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicUsize, Ordering},
};

use futures_util::future::BoxFuture;
use kakeibo_core::{
    Block, ConfirmPolicy, Deps, ErrorTrace, Hooks, MemoryTracer, Message, PermissionRules, Phase, Role,
    RunStatus, StopReason, Tier, ToolError, ToolRegistry, ToolResult, TraceKind, TracePayload, Turn,
    TypedTool, drive,
    scripted::{Scripted, reply_calls, reply_stopped, reply_text},
    turn::{DECLINED, DENIED_BY_RULE, MAX_ITERATIONS},
    typed,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema)]
struct LookInput {
    /// What to look for.
    what: String,
}

/// A read tool that counts its runs; `what: "boom"` throws, `what: "flaky"` fails transiently once.
struct Look {
    runs: Arc<AtomicUsize>,
    flaky: Arc<AtomicUsize>,
}

impl TypedTool for Look {
    type Input = LookInput;
    type Output = Value;
    const NAME: &'static str = "look";
    const DESCRIPTION: &'static str = "Look something up.";
    const TIER: Tier = Tier::Read;

    fn run(&self, input: LookInput) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            self.runs.fetch_add(1, Ordering::SeqCst);
            match input.what.as_str() {
                "boom" => Err(ToolError::Failed("the lookup broke".into())),
                "flaky" if self.flaky.fetch_add(1, Ordering::SeqCst) == 0 => {
                    Err(ToolError::Transient("connection reset".into()))
                }
                _ => Ok(json!({"found": input.what})),
            }
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct SaveInput {
    /// What to save.
    value: i64,
}

/// A write tool that counts its runs.
struct Save(Arc<AtomicUsize>);

impl TypedTool for Save {
    type Input = SaveInput;
    type Output = Value;
    const NAME: &'static str = "save";
    const DESCRIPTION: &'static str = "Save a value.";
    const TIER: Tier = Tier::Write;

    fn summarize(&self, input: &SaveInput) -> String {
        format!("Save {}", input.value)
    }

    fn run(&self, input: SaveInput) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"saved": input.value}))
        })
    }
}

struct Harness {
    tools: ToolRegistry,
    reads: Arc<AtomicUsize>,
    writes: Arc<AtomicUsize>,
    tracer: MemoryTracer,
}

fn harness() -> Harness {
    let reads = Arc::new(AtomicUsize::new(0));
    let writes = Arc::new(AtomicUsize::new(0));
    let tools = ToolRegistry::new(vec![
        typed(Look {
            runs: Arc::clone(&reads),
            flaky: Arc::new(AtomicUsize::new(0)),
        }),
        typed(Save(Arc::clone(&writes))),
    ])
    .unwrap();
    Harness {
        tools,
        reads,
        writes,
        tracer: MemoryTracer::default(),
    }
}

async fn run(h: &Harness, provider: &Scripted, policy: &ConfirmPolicy, rules: &PermissionRules) -> Turn {
    run_hooked(h, provider, policy, rules, None).await
}

async fn run_hooked(
    h: &Harness,
    provider: &Scripted,
    policy: &ConfirmPolicy,
    rules: &PermissionRules,
    hooks: Option<&dyn Hooks>,
) -> Turn {
    let deps = Deps {
        provider,
        budget: None,
        tools: &h.tools,
        system: "You are a test.",
        policy,
        rules,
        tracer: &h.tracer,
        on_event: &|_| {},
        hooks: hooks.map(|hooks| kakeibo_core::hooks::HookSite {
            hooks,
            session: "conversation-1",
        }),
        stop_judge: None,
        figures: kakeibo_core::FiguresPolicy::Flag,
        max_iterations: kakeibo_core::turn::MAX_ITERATIONS,
    };
    drive(
        Turn::start(kakeibo_core::RunId::random(), Vec::new(), Message::user("go")),
        &deps,
    )
    .await
}

/// A turn under the default policy (writes denied) and no permission rules.
async fn run_plain(h: &Harness, provider: &Scripted) -> Turn {
    run(h, provider, &ConfirmPolicy::AutoDeny, &PermissionRules::default()).await
}

fn results_of(message: &Message) -> Vec<(String, bool, String)> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult {
                tool_use_id,
                is_error,
                content,
                ..
            } => Some((tool_use_id.clone(), *is_error, content.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_loop_stops_at_the_cap_with_one_tool_free_answer() {
    let h = harness();
    let provider = Scripted::from_fn(|request| {
        Ok(if request.tools.is_empty() {
            reply_text("Here is what I found.")
        } else {
            reply_calls(&[("look", json!({"what": "more"}))])
        })
    });
    let turn = run_plain(&h, &provider).await;
    assert_eq!(turn.finished(), Some((RunStatus::Error, "Here is what I found.")));
    let requests = provider.requests();
    assert_eq!(requests.len(), MAX_ITERATIONS as usize + 1);
    assert!(
        requests.last().unwrap().tools.is_empty(),
        "the last call has no tools"
    );
    assert_eq!(
        h.reads.load(Ordering::SeqCst),
        MAX_ITERATIONS as usize - 1,
        "the 12th batch is not run"
    );
    let last_results = results_of(&turn.history()[turn.history().len() - 2]);
    assert!(last_results[0].1 && last_results[0].2.contains("limit of model calls"));
    assert!(
        h.tracer
            .events()
            .iter()
            .any(|e| matches!(e.payload, TracePayload::Error(ErrorTrace::IterationLimit { .. })))
    );
}

#[tokio::test]
async fn failures_and_bad_arguments_become_results_the_model_recovers_from() {
    let h = harness();
    let provider = Scripted::new(vec![
        Ok(reply_calls(&[("look", json!({"what": "boom"}))])),
        Ok(reply_calls(&[("look", json!({"wat": 1})), ("summon", json!({}))])),
        Ok(reply_calls(&[("look", json!({"what": "flaky"}))])),
        Ok(reply_text("Done.")),
    ]);
    let turn = run_plain(&h, &provider).await;
    assert_eq!(turn.finished(), Some((RunStatus::Ok, "Done.")));
    let requests = provider.requests();
    let thrown = results_of(requests[1].messages.last().unwrap());
    assert!(
        thrown[0].1 && thrown[0].2.contains("the lookup broke"),
        "{thrown:?}"
    );
    let invalid = results_of(requests[2].messages.last().unwrap());
    assert!(
        invalid[0].1 && invalid[0].2.starts_with("Invalid arguments for look"),
        "{invalid:?}"
    );
    assert!(
        invalid[1].1 && invalid[1].2.contains("The available tools are: look, save"),
        "{invalid:?}"
    );
    let retried = results_of(requests[3].messages.last().unwrap());
    assert!(
        !retried[0].1 && retried[0].2.starts_with("<tool_data>"),
        "a transient read failure is retried once: {retried:?}"
    );
}

#[tokio::test]
async fn a_mixed_batch_under_suspend_runs_reads_and_leaves_writes_pending() {
    let h = harness();
    let provider = Scripted::new(vec![Ok(reply_calls(&[
        ("save", json!({"value": 1})),
        ("look", json!({"what": "a"})),
        ("save", json!({"value": 2})),
        ("look", json!({"what": "b"})),
    ]))]);
    let turn = run(
        &h,
        &provider,
        &ConfirmPolicy::Suspend,
        &PermissionRules::default(),
    )
    .await;
    let Phase::AwaitConfirm {
        done,
        pending,
        calls,
        expires_at,
    } = turn.phase()
    else {
        panic!("{:?}", turn.phase())
    };
    assert_eq!(h.reads.load(Ordering::SeqCst), 2);
    assert_eq!(h.writes.load(Ordering::SeqCst), 0);
    assert_eq!(done.len(), 2);
    assert_eq!(
        pending.iter().map(|p| p.summary.as_str()).collect::<Vec<_>>(),
        ["Save 1", "Save 2"]
    );
    assert_eq!(calls.len(), 4);
    assert!(*expires_at > kakeibo_core::turn::now_unix());
    assert_eq!(
        turn.history().last().unwrap().role,
        Role::Assistant,
        "no results message yet"
    );

    // The stored form goes through JSON and back, then the person approves one and declines one.
    let stored = Turn::from_json(turn.to_json().unwrap()).unwrap();
    assert_eq!(stored, turn);
    let pending = pending.clone();
    let results = vec![
        ToolResult {
            tool_use_id: pending[1].id.clone(),
            name: "save".into(),
            content: DECLINED.into(),
            is_error: false,
        },
        ToolResult {
            tool_use_id: pending[0].id.clone(),
            name: "save".into(),
            content: "<tool_data>ok</tool_data>".into(),
            is_error: false,
        },
    ];
    let resumed = stored.resume(results).unwrap();
    let order: Vec<String> = results_of(resumed.history().last().unwrap())
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(
        order,
        ["call_0_save", "call_1_look", "call_2_save", "call_3_look"],
        "call order"
    );
    assert_eq!(resumed.phase(), &Phase::CallModel);
}

#[tokio::test]
async fn rules_and_policies_decide_writes() {
    let h = harness();
    let batch = || Ok(reply_calls(&[("save", json!({"value": 7}))]));
    let deny = PermissionRules::parse("allow save; deny save(value=7)").unwrap();
    let provider = Scripted::new(vec![batch(), Ok(reply_text("ok"))]);
    run(&h, &provider, &ConfirmPolicy::AutoAllow, &deny).await;
    assert_eq!(h.writes.load(Ordering::SeqCst), 0, "a deny wins over AutoAllow");
    assert_eq!(
        results_of(provider.requests()[1].messages.last().unwrap())[0].2,
        DENIED_BY_RULE
    );

    let provider = Scripted::new(vec![batch(), Ok(reply_text("ok"))]);
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let inline = ConfirmPolicy::Inline(Box::new(move |write| {
        counter.fetch_add(1, Ordering::SeqCst);
        let answer = write.summary == "Save 8";
        Box::pin(async move { answer })
    }));
    run(&h, &provider, &inline, &PermissionRules::default()).await;
    assert_eq!(
        (asked.load(Ordering::SeqCst), h.writes.load(Ordering::SeqCst)),
        (1, 0)
    );
    assert_eq!(
        results_of(provider.requests()[1].messages.last().unwrap())[0].2,
        DECLINED
    );

    let provider = Scripted::new(vec![batch(), Ok(reply_text("ok"))]);
    run(
        &h,
        &provider,
        &ConfirmPolicy::AutoAllow,
        &PermissionRules::default(),
    )
    .await;
    assert_eq!(h.writes.load(Ordering::SeqCst), 1);
    let confirms = h
        .tracer
        .events()
        .into_iter()
        .filter(|e| e.kind() == TraceKind::Confirm)
        .count();
    assert_eq!(confirms, 3, "every decision is traced");
}

#[tokio::test]
async fn blocked_cut_off_and_stuck_runs_end_honestly() {
    let h = harness();
    let provider = Scripted::new(vec![Ok(reply_stopped(StopReason::Blocked, vec![]))]);
    let turn = run_plain(&h, &provider).await;
    assert_eq!(turn.finished().map(|f| f.0), Some(RunStatus::Blocked));

    // Cut off inside a tool call: asked again once with twice the room, then the turn ends.
    let cut = || {
        Ok(reply_stopped(
            StopReason::MaxTokens,
            vec![Block::ToolUse {
                id: "c".into(),
                name: "look".into(),
                input: json!({}),
                provider_meta: None,
            }],
        ))
    };
    let provider = Scripted::new(vec![cut(), cut()]);
    let turn = run_plain(&h, &provider).await;
    let rooms: Vec<u32> = provider.requests().iter().map(|r| r.max_tokens).collect();
    assert_eq!(rooms, [16_000, 32_000]);
    assert_eq!(turn.finished().map(|f| f.0), Some(RunStatus::Error));
    assert!(turn.finished().unwrap().1.contains("cut off"));

    let provider = Scripted::from_fn(|_| Ok(reply_calls(&[("look", json!({"what": "boom"}))])));
    let turn = run_plain(&h, &provider).await;
    let (status, answer) = turn.finished().unwrap();
    assert_eq!(status, RunStatus::Stuck);
    assert!(
        answer.starts_with("Stopped: look failed the same way 3 times"),
        "{answer}"
    );
    assert_eq!(provider.requests().len(), 3);
}

#[tokio::test]
async fn reads_of_a_batch_run_together_and_results_keep_call_order() {
    let h = harness();
    let calls: Vec<(&str, Value)> = (0..6)
        .map(|i| ("look", json!({"what": format!("item {i}")})))
        .collect();
    let provider = Scripted::new(vec![Ok(reply_calls(&calls)), Ok(reply_text("ok"))]);
    let turn = run_plain(&h, &provider).await;
    assert_eq!(turn.finished().map(|f| f.0), Some(RunStatus::Ok));
    let results = results_of(provider.requests()[1].messages.last().unwrap());
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        ids,
        [
            "call_0_look",
            "call_1_look",
            "call_2_look",
            "call_3_look",
            "call_4_look",
            "call_5_look"
        ]
    );
    assert!(results[5].2.contains("item 5"));
    let seqs: Vec<u32> = h.tracer.events().iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (0..u32::try_from(seqs.len()).unwrap()).collect::<Vec<_>>(),
        "events numbered without gaps"
    );
    assert!(turn.usage().input_tokens > 0);
}

/// A model whose first call answers from a script and whose later calls never answer.
struct ThenSilent(Scripted, AtomicUsize);

impl kakeibo_core::Provider for ThenSilent {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn model(&self) -> &'static str {
        "then-silent"
    }
    fn stream<'a>(
        &'a self,
        request: &'a kakeibo_core::ModelRequest,
    ) -> futures_util::stream::BoxStream<'a, Result<kakeibo_core::StreamEvent, kakeibo_core::ProviderError>>
    {
        if self.1.fetch_add(1, Ordering::SeqCst) == 0 {
            self.0.stream(request)
        } else {
            Box::pin(futures_util::stream::pending())
        }
    }
}

#[tokio::test]
async fn a_stopped_turn_keeps_what_ran_and_ends_aborted() {
    let h = harness();
    let provider = ThenSilent(
        Scripted::new(vec![Ok(reply_calls(&[("look", json!({"what": "rent"}))]))]),
        AtomicUsize::new(0),
    );
    let deps = Deps {
        provider: &provider,
        budget: None,
        tools: &h.tools,
        system: "You are a test.",
        policy: &ConfirmPolicy::AutoDeny,
        rules: &PermissionRules::default(),
        tracer: &h.tracer,
        on_event: &|_| {},
        hooks: None,
        stop_judge: None,
        figures: kakeibo_core::FiguresPolicy::Flag,
        max_iterations: kakeibo_core::turn::MAX_ITERATIONS,
    };
    let start = Turn::start(kakeibo_core::RunId::random(), Vec::new(), Message::user("go"));
    let mut stop = std::pin::pin!(tokio::time::sleep(std::time::Duration::from_millis(200)));
    let turn = kakeibo_core::drive_until(start, &deps, stop.as_mut()).await;

    assert_eq!(
        (turn.finished(), turn.stop()),
        (
            Some((RunStatus::Aborted, kakeibo_core::turn::CANCELLED)),
            Some(kakeibo_core::Stop::Cancelled)
        )
    );
    // The read ran before the stop, and its result is kept in the history with its trace.
    assert_eq!(h.reads.load(Ordering::SeqCst), 1);
    let last = turn.history().last().unwrap();
    assert_eq!(results_of(last).len(), 1);
    assert!(results_of(last)[0].2.contains("rent"));
    let kinds: Vec<TraceKind> = h.tracer.events().iter().map(|e| e.payload.kind()).collect();
    assert!(kinds.contains(&TraceKind::ToolCall), "{kinds:?}");
    assert_eq!(
        provider.1.load(Ordering::SeqCst),
        2,
        "the second model call was given up"
    );

    // Without a stop in time, the same machinery runs a turn to its end.
    let provider = Scripted::new(vec![Ok(reply_text("ok"))]);
    let deps = Deps {
        provider: &provider,
        ..deps
    };
    let start = Turn::start(kakeibo_core::RunId::random(), Vec::new(), Message::user("go"));
    let mut never = std::pin::pin!(std::future::pending::<()>());
    let turn = kakeibo_core::drive_until(start, &deps, never.as_mut()).await;
    assert_eq!(turn.finished().map(|f| f.0), Some(RunStatus::Ok));
}

/// Hooks set up by each test: what they answer.
#[derive(Default)]
struct TestHooks {
    pre: kakeibo_core::hooks::PreToolUse,
    permission: Option<bool>,
    post: kakeibo_core::hooks::PostToolUse,
    /// Reasons the Stop hook gives, one a call; `None` once they run out (or always with `forever`).
    stop_reasons: Mutex<Vec<String>>,
    stop_forever: bool,
}

impl Hooks for TestHooks {
    fn pre_tool_use<'a>(
        &'a self,
        _session: &'a str,
        _call: &'a kakeibo_core::ToolUse,
        _tier: Tier,
    ) -> BoxFuture<'a, kakeibo_core::hooks::PreToolUse> {
        Box::pin(std::future::ready(self.pre.clone()))
    }
    fn permission_request<'a>(
        &'a self,
        _session: &'a str,
        _write: &'a kakeibo_core::PendingWrite,
    ) -> BoxFuture<'a, Option<bool>> {
        Box::pin(std::future::ready(self.permission))
    }
    fn post_tool_use<'a>(
        &'a self,
        _session: &'a str,
        _call: &'a kakeibo_core::ToolUse,
        _content: &'a str,
        _is_error: bool,
    ) -> BoxFuture<'a, kakeibo_core::hooks::PostToolUse> {
        Box::pin(std::future::ready(self.post.clone()))
    }
    fn stop<'a>(
        &'a self,
        _session: &'a str,
        _answer: &'a str,
        _active: bool,
    ) -> BoxFuture<'a, Option<String>> {
        let reason = if self.stop_forever {
            Some("keep going".to_owned())
        } else {
            self.stop_reasons.lock().unwrap().pop()
        };
        Box::pin(std::future::ready(reason))
    }
}

fn pre(
    verdict: Option<kakeibo_core::hooks::Verdict>,
    input: Option<Value>,
) -> kakeibo_core::hooks::PreToolUse {
    kakeibo_core::hooks::PreToolUse {
        verdict,
        reason: Some("not on a Sunday".to_owned()),
        updated_input: input,
        stop: None,
    }
}

#[tokio::test]
async fn pre_tool_use_refuses_rewrites_and_never_lifts_a_deny_rule() {
    use kakeibo_core::hooks::Verdict;
    let look = || {
        Scripted::new(vec![
            Ok(reply_calls(&[("look", json!({"what": "rent"}))])),
            Ok(reply_text("ok")),
        ])
    };
    let plain = PermissionRules::default();

    // Refused: answered as refused, with the hook's reason, never run.
    let h = harness();
    let hooks = TestHooks {
        pre: pre(Some(Verdict::Deny), None),
        ..TestHooks::default()
    };
    let provider = look();
    run_hooked(&h, &provider, &ConfirmPolicy::AutoDeny, &plain, Some(&hooks)).await;
    let results = results_of(provider.requests()[1].messages.last().unwrap());
    assert!(
        results[0].2.contains("A hook of this kakeibo refused this call"),
        "{results:?}"
    );
    assert!(results[0].2.contains("not on a Sunday"));
    assert_eq!(h.reads.load(Ordering::SeqCst), 0);

    // Rewritten: runs with the hook's input; a rewrite that does not validate does not run.
    let h = harness();
    let hooks = TestHooks {
        pre: pre(None, Some(json!({"what": "groceries"}))),
        ..TestHooks::default()
    };
    let provider = look();
    run_hooked(&h, &provider, &ConfirmPolicy::AutoDeny, &plain, Some(&hooks)).await;
    let results = results_of(provider.requests()[1].messages.last().unwrap());
    assert!(
        results[0].2.contains("groceries") && !results[0].2.contains("rent"),
        "{results:?}"
    );
    let hooks = TestHooks {
        pre: pre(None, Some(json!({"what": 5}))),
        ..TestHooks::default()
    };
    let provider = look();
    run_hooked(&h, &provider, &ConfirmPolicy::AutoDeny, &plain, Some(&hooks)).await;
    let results = results_of(provider.requests()[1].messages.last().unwrap());
    assert!(
        results[0].1 && results[0].2.starts_with("Invalid arguments"),
        "{results:?}"
    );
    assert_eq!(h.reads.load(Ordering::SeqCst), 1);

    // A hook's allow never lifts a deny rule.
    let h = harness();
    let hooks = TestHooks {
        pre: pre(Some(Verdict::Allow), None),
        ..TestHooks::default()
    };
    let provider = Scripted::new(vec![
        Ok(reply_calls(&[("save", json!({"value": 1}))])),
        Ok(reply_text("ok")),
    ]);
    let deny = PermissionRules::parse("deny save").unwrap();
    run_hooked(&h, &provider, &ConfirmPolicy::AutoAllow, &deny, Some(&hooks)).await;
    assert_eq!(h.writes.load(Ordering::SeqCst), 0);
    let results = results_of(provider.requests()[1].messages.last().unwrap());
    assert_eq!(results[0].2, DENIED_BY_RULE);
}

#[tokio::test]
async fn a_hooks_allow_never_skips_the_person_under_suspend() {
    use kakeibo_core::hooks::Verdict;
    let save = || {
        Scripted::new(vec![
            Ok(reply_calls(&[("save", json!({"value": 1}))])),
            Ok(reply_text("ok")),
        ])
    };
    let plain = &PermissionRules::default();
    let outcome = |pre_verdict, permission, policy: ConfirmPolicy| async move {
        let h = harness();
        let hooks = TestHooks {
            pre: pre(pre_verdict, None),
            permission,
            ..TestHooks::default()
        };
        let turn = run_hooked(&h, &save(), &policy, plain, Some(&hooks)).await;
        let waiting = matches!(turn.phase(), Phase::AwaitConfirm { .. });
        (waiting, h.writes.load(Ordering::SeqCst))
    };
    // Where the policy would decline or ask inline, a hook's allow runs the write.
    assert_eq!(
        outcome(Some(Verdict::Allow), None, ConfirmPolicy::AutoDeny).await,
        (false, 1)
    );
    assert_eq!(
        outcome(None, Some(true), ConfirmPolicy::AutoDeny).await,
        (false, 1)
    );
    // Under Suspend the person still decides; only a deny counts at once.
    assert_eq!(
        outcome(Some(Verdict::Allow), None, ConfirmPolicy::Suspend).await,
        (true, 0)
    );
    assert_eq!(outcome(None, Some(true), ConfirmPolicy::Suspend).await, (true, 0));
    assert_eq!(
        outcome(None, Some(false), ConfirmPolicy::Suspend).await,
        (false, 0)
    );
    assert_eq!(
        outcome(Some(Verdict::Ask), Some(false), ConfirmPolicy::AutoAllow).await,
        (false, 0)
    );
    // No answer: the policy as before.
    assert_eq!(outcome(None, None, ConfirmPolicy::AutoAllow).await, (false, 1));
    assert_eq!(outcome(None, None, ConfirmPolicy::Suspend).await, (true, 0));
}

#[tokio::test]
async fn post_tool_use_adds_notes_or_stops_and_stop_sends_the_model_back() {
    let look = || {
        Scripted::new(vec![
            Ok(reply_calls(&[("look", json!({"what": "rent"}))])),
            Ok(reply_text("ok")),
        ])
    };
    let plain = PermissionRules::default();

    let h = harness();
    let hooks = TestHooks {
        post: kakeibo_core::hooks::PostToolUse {
            notes: vec!["figures are in paise".to_owned()],
            stop: None,
        },
        ..TestHooks::default()
    };
    let provider = look();
    run_hooked(&h, &provider, &ConfirmPolicy::AutoDeny, &plain, Some(&hooks)).await;
    let results = results_of(provider.requests()[1].messages.last().unwrap());
    assert!(results[0].2.ends_with("\n[figures are in paise]"), "{results:?}");

    let hooks = TestHooks {
        post: kakeibo_core::hooks::PostToolUse {
            notes: Vec::new(),
            stop: Some("enough".to_owned()),
        },
        ..TestHooks::default()
    };
    let provider = look();
    let turn = run_hooked(&h, &provider, &ConfirmPolicy::AutoDeny, &plain, Some(&hooks)).await;
    assert_eq!(turn.stop(), Some(kakeibo_core::Stop::Hook));
    assert_eq!(turn.finished().map(|f| f.0), Some(RunStatus::Aborted));
    assert_eq!(provider.requests().len(), 1, "no model call after the stop");

    // PreToolUse's `continue: false`: the call is answered, then the turn ends.
    let hooks = TestHooks {
        pre: kakeibo_core::hooks::PreToolUse {
            stop: Some("closing time".to_owned()),
            ..kakeibo_core::hooks::PreToolUse::default()
        },
        ..TestHooks::default()
    };
    let provider = look();
    let turn = run_hooked(&h, &provider, &ConfirmPolicy::AutoDeny, &plain, Some(&hooks)).await;
    assert_eq!(turn.stop(), Some(kakeibo_core::Stop::Hook));
    assert_eq!(provider.requests().len(), 1, "no model call after the stop");
    let results = results_of(turn.history().last().unwrap());
    assert!(!results[0].1, "the read ran and answered: {results:?}");

    // Stop: twice back to work with its reason, then done.
    let hooks = TestHooks {
        stop_reasons: Mutex::new(vec!["check March too".to_owned(), "check April".to_owned()]),
        ..TestHooks::default()
    };
    let provider = Scripted::new(vec![
        Ok(reply_text("one")),
        Ok(reply_text("two")),
        Ok(reply_text("three")),
    ]);
    let turn = run_hooked(&h, &provider, &ConfirmPolicy::AutoDeny, &plain, Some(&hooks)).await;
    assert_eq!(turn.finished(), Some((RunStatus::Ok, "three")));
    let told: Vec<String> = turn
        .history()
        .iter()
        .filter(|m| m.role == Role::User)
        .map(Message::text)
        .collect();
    assert_eq!(
        told[1..],
        [
            "[A Stop hook of this kakeibo: check April]",
            "[A Stop hook of this kakeibo: check March too]"
        ]
    );

    // At most five times a run.
    let hooks = TestHooks {
        stop_forever: true,
        ..TestHooks::default()
    };
    let provider = Scripted::new((0..7).map(|i| Ok(reply_text(&format!("answer {i}")))).collect());
    let turn = run_hooked(&h, &provider, &ConfirmPolicy::AutoDeny, &plain, Some(&hooks)).await;
    assert_eq!(provider.requests().len(), 6);
    assert_eq!(turn.finished(), Some((RunStatus::Ok, "answer 5")));
}

/// A stop judge that answers from a list: how many batches to let go on before it says stop.
struct CountingJudge {
    asked: std::sync::atomic::AtomicUsize,
    stop_after: usize,
}

impl kakeibo_core::turn::StopJudge for CountingJudge {
    fn stuck<'a>(&'a self, calls: &'a [kakeibo_core::turn::CallRecord]) -> BoxFuture<'a, Option<String>> {
        let asked = self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let say = (asked >= self.stop_after).then(|| format!("no progress after {} calls", calls.len()));
        Box::pin(std::future::ready(say))
    }
}

async fn run_judged(h: &Harness, provider: &Scripted, judge: &CountingJudge) -> Turn {
    let plain = PermissionRules::default();
    let deps = Deps {
        provider,
        budget: None,
        tools: &h.tools,
        system: "You are a test.",
        policy: &ConfirmPolicy::AutoDeny,
        rules: &plain,
        tracer: &h.tracer,
        on_event: &|_| {},
        hooks: None,
        stop_judge: Some(judge),
        figures: kakeibo_core::FiguresPolicy::Flag,
        max_iterations: kakeibo_core::turn::MAX_ITERATIONS,
    };
    drive(
        Turn::start(kakeibo_core::RunId::random(), Vec::new(), Message::user("go")),
        &deps,
    )
    .await
}

#[tokio::test]
async fn the_stop_judge_is_asked_after_each_batch_and_can_only_end_the_run() {
    let looks = || {
        Scripted::new(vec![
            Ok(reply_calls(&[("look", json!({"what": "rent"}))])),
            Ok(reply_calls(&[("look", json!({"what": "food"}))])),
            Ok(reply_text("done")),
        ])
    };
    let h = harness();
    // Saying nothing: asked once per batch, the run answers.
    let quiet = CountingJudge {
        asked: 0.into(),
        stop_after: usize::MAX,
    };
    let provider = looks();
    let turn = run_judged(&h, &provider, &quiet).await;
    assert_eq!(turn.finished(), Some((RunStatus::Ok, "done")));
    assert_eq!(quiet.asked.load(std::sync::atomic::Ordering::SeqCst), 2);

    // Saying stop after the second batch: stuck, with its reason, no third model call.
    let stopping = CountingJudge {
        asked: 0.into(),
        stop_after: 2,
    };
    let provider = looks();
    let turn = run_judged(&h, &provider, &stopping).await;
    assert_eq!(turn.stop(), Some(kakeibo_core::Stop::Stuck));
    assert_eq!(
        turn.finished(),
        Some((RunStatus::Stuck, "Stopped: no progress after 2 calls."))
    );
    assert_eq!(provider.requests().len(), 2);
}
