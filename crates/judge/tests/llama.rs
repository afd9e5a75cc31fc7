//! The judge against a real model server's log-probabilities: llama.cpp's `llama-server` with
//! SmolLM2-135M-Instruct, which `cargo xtask test` builds and starts (`KAKEIBO_TEST_LLAMA_URL`).
//! A 135M model is no judge: what it answers to a yes/no question is noise. So this is the real
//! test of the probe and of the fallback behind it — the real server's `logprobs` are read into a
//! probability or a typed failure, the probe refuses the model, and with the judge refused the
//! router gives the agent model and the stop judge lets the run go on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use kakeibo_core::turn::CallRecord;
use kakeibo_judge::{
    Judge, JudgeConfig, JudgeFailure, ProbeError,
    router::{CHEAP_AT, Route, route},
    stop::{STOP_AT, judge_stop},
};
use serde_json::json;

/// The model's name as the server is started with it (`--alias`).
const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";

fn config(base: &str) -> JudgeConfig {
    JudgeConfig {
        base_url: base.to_owned(),
        api_key: None,
        model: MODEL.into(),
        // One CPU thread beside a compiling suite: generous, so a refusal is the model's.
        timeout: Duration::from_mins(1),
    }
}

/// Five calls of a run that keep failing the same way.
fn stuck_calls() -> Vec<CallRecord> {
    (0..5)
        .map(|i| CallRecord {
            id: format!("call-{i}"),
            name: "search_transactions".into(),
            args: json!({"query": "swiggy"}),
            tier: None,
            outcome: kakeibo_core::turn::ToolOutcome::of_run(true),
            confirmed: None,
            result: "no transactions match".into(),
            headline: None,
        })
        .collect()
}

#[tokio::test]
async fn a_real_servers_logprobs_are_read_and_the_small_model_is_refused_as_judge() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    // The real server's first-token alternatives read into a probability, or a typed failure:
    // never a panic, never a value outside [0, 1].
    let unprobed = Judge::new(config(&base));
    for question in ["Is 100 greater than 3?", "Is 3 greater than 100?"] {
        match unprobed.ask(question).await {
            Ok(p) => assert!((0.0..=1.0).contains(&p), "{question}: {p}"),
            Err(JudgeFailure::MissingLabel(seen)) => assert!(!seen.is_empty(), "{question}"),
            Err(other) => panic!("{question}: the server's answer was not read: {other}"),
        }
    }

    // The probe refuses it: a judge that cannot tell a plain yes from a plain no. (With the
    // probe's former single control it passed: P(yes) 0.59 for "Is 100 greater than 3?".)
    let refused = Judge::probe(config(&base)).await.unwrap_err();
    assert!(
        matches!(
            refused,
            ProbeError::Unclear { .. } | ProbeError::Failed(JudgeFailure::MissingLabel(_))
        ),
        "{refused}"
    );

    // The settings' way in leaves no judge, and every use takes its safe side.
    let timeout = "60000".to_owned();
    let var = |name: &str| match name {
        "JUDGE_BASE_URL" => Some(base.clone()),
        "DECISION_MODEL" => Some(MODEL.to_owned()),
        "JUDGE_TIMEOUT_MS" => Some(timeout.clone()),
        _ => None,
    };
    let judge = kakeibo_judge::from_settings(&var).await;
    assert!(judge.is_none(), "the settings gave a judge the probe refused");
    let routed = route(judge.as_ref(), "how much did I spend on groceries last month?").await;
    assert_eq!(routed.route, Route::Agent);
    assert_eq!(routed.p_simple, None);
    let verdict = judge_stop(judge.as_ref(), &stuck_calls()).await;
    assert!(!verdict.stop, "{verdict:?}");
    assert_eq!(verdict.p_stuck, None);
}

#[tokio::test]
async fn an_unprobed_real_judge_never_leaves_the_safe_side_on_a_failure() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    // Asked directly (as if the probe had passed), the real model's answers either carry both
    // labels — a probability, acted on by its line — or fail, and a failure is the safe side.
    let judge = Judge::new(config(&base));
    let routed = route(Some(&judge), "how much did I spend on groceries last month?").await;
    match (routed.p_simple, &routed.failure) {
        (Some(p), None) => {
            assert!((0.0..=1.0).contains(&p), "{routed:?}");
            let by_line = if p >= CHEAP_AT { Route::Cheap } else { Route::Agent };
            assert_eq!(routed.route, by_line, "{routed:?}");
        }
        (None, Some(_)) => assert_eq!(routed.route, Route::Agent, "{routed:?}"),
        _ => panic!("a route is a probability or a failure: {routed:?}"),
    }
    let verdict = judge_stop(Some(&judge), &stuck_calls()).await;
    match (verdict.p_stuck, &verdict.failure) {
        (Some(p), None) => {
            assert!((0.0..=1.0).contains(&p), "{verdict:?}");
            assert_eq!(verdict.stop, p >= STOP_AT, "{verdict:?}");
        }
        (None, Some(_)) => assert!(!verdict.stop, "{verdict:?}"),
        _ => panic!("a verdict is a probability or a failure: {verdict:?}"),
    }
}
