//! The judge against a local stand-in of an OpenAI-compatible endpoint that answers with
//! real-shaped `logprobs` (the request's `model` picks the behaviour): probabilities read
//! correctly, the probe, and each of the four failure kinds — an error, a timeout, a missing
//! label, a value outside [0, 1] — landing on the safe side for the router (the agent model) and
//! for the stop judge (the run goes on).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Json, Router, extract::State, http::StatusCode, routing::post};
use kakeibo_core::turn::CallRecord;
use kakeibo_judge::{
    Judge, JudgeConfig, JudgeFailure, ProbeError,
    router::{Route, route},
    stop::judge_stop,
};
use serde_json::{Value, json};

type Seen = Arc<Mutex<Vec<Value>>>;

/// A chat completion as an OpenAI-compatible server sends it, its first token's alternatives
/// being `top`.
fn completion(model: &str, top: &[(&str, f64)]) -> Value {
    let alternatives: Vec<Value> = top
        .iter()
        .map(|(token, logprob)| json!({"token": token, "logprob": logprob, "bytes": token.as_bytes()}))
        .collect();
    let (token, logprob) = top.first().copied().unwrap_or(("", 0.0));
    json!({
        "id": "chatcmpl-standin", "object": "chat.completion", "created": 1_770_000_000, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": token},
                     "logprobs": {"content": [{"token": token, "logprob": logprob, "bytes": token.as_bytes(),
                                               "top_logprobs": alternatives}],
                                  "refusal": null},
                     "finish_reason": "length"}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 1, "total_tokens": 81}
    })
}

async fn answer(State(seen): State<Seen>, Json(request): Json<Value>) -> (StatusCode, Json<Value>) {
    seen.lock().unwrap().push(request.clone());
    let model = request["model"].as_str().unwrap_or_default().to_owned();
    let asked = request["messages"][1]["content"].as_str().unwrap_or_default();
    // The probe's control whose answer is no.
    let plain_no = asked.starts_with("Is 3 greater than 100?");
    let ok = StatusCode::OK;
    match model.as_str() {
        // A competent judge's controls, and sure yes to everything else.
        "sure-yes" if plain_no => (ok, Json(completion(&model, &[("N", -0.01), ("Y", -4.8)]))),
        // Yes to everything, the controls included: a model that leans to yes.
        "yes-to-all" => (ok, Json(completion(&model, &[("Y", -0.05), ("N", -3.0)]))),
        // What a 135M model answers: a coin with a slight lean, the labels a small share.
        "coin" => (
            ok,
            Json(completion(
                &model,
                &[("1", -0.64), ("Yes", -2.64), ("No", -2.69), ("Y", -3.65)],
            )),
        ),
        // P(Y) 0.6 and P(N) 0.2 among the alternatives: 0.75 once renormalised.
        "calibrated" => (
            ok,
            Json(completion(
                &model,
                &[("Y", 0.6_f64.ln()), ("N", 0.2_f64.ln()), (" The", 0.1_f64.ln())],
            )),
        ),
        "sure-yes" => (
            ok,
            Json(completion(&model, &[("Y", -0.01), ("N", -4.8), ("y", -6.0)])),
        ),
        "sure-no" => (ok, Json(completion(&model, &[("N", -0.01), ("Y", -4.8)]))),
        "error" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"error": {"message": "overloaded"}})),
        ),
        "slow" => {
            tokio::time::sleep(Duration::from_secs(10)).await;
            (ok, Json(completion(&model, &[("Y", -0.01), ("N", -4.8)])))
        }
        "missing-label" => (ok, Json(completion(&model, &[("Sure", -0.2), ("Maybe", -1.9)]))),
        "out-of-range" => (ok, Json(completion(&model, &[("Y", 0.7), ("N", -1.2)]))),
        "no-logprobs" => {
            let mut body = completion(&model, &[("Y", -0.01)]);
            body["choices"][0]["logprobs"] = Value::Null;
            (ok, Json(body))
        }
        _ => (
            StatusCode::NOT_FOUND,
            Json(json!({"error": {"message": "no such model"}})),
        ),
    }
}

async fn standin() -> (String, Seen) {
    let seen = Seen::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .with_state(Arc::clone(&seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/v1"), seen)
}

fn judge(base: &str, model: &str) -> Judge {
    Judge::new(JudgeConfig {
        base_url: base.to_owned(),
        api_key: Some("test-key".into()),
        model: model.into(),
        timeout: Duration::from_millis(400),
    })
}

/// Five calls of a run, the last failing.
fn calls() -> Vec<CallRecord> {
    (0..5)
        .map(|i| CallRecord {
            id: format!("call-{i}"),
            name: "search_transactions".into(),
            args: json!({"query": format!("swiggy {i}")}),
            tier: None,
            outcome: kakeibo_core::turn::ToolOutcome::of_run(i == 4),
            confirmed: None,
            result: "no transactions match".into(),
            headline: None,
        })
        .collect()
}

#[tokio::test]
async fn the_probability_is_the_yes_label_renormalised_from_one_tokens_logprobs() {
    let (base, seen) = standin().await;
    let p = judge(&base, "calibrated").ask("Is it?").await.unwrap();
    assert!((p - 0.75).abs() < 1e-9, "{p}");
    let sure = judge(&base, "sure-yes").ask("Is it?").await.unwrap();
    assert!(sure > 0.98, "{sure}");
    let request = seen.lock().unwrap()[0].clone();
    assert_eq!(request["max_tokens"], 1);
    assert_eq!(request["logprobs"], true);
    assert_eq!(request["top_logprobs"], 5);
    assert_eq!(request["temperature"], 0);
    let user = request["messages"][1]["content"].as_str().unwrap();
    assert!(user.ends_with("Answer (Y or N):"), "{user}");
}

#[tokio::test]
async fn the_probe_refuses_an_endpoint_without_logprobs_or_with_a_wrong_control_answer() {
    let (base, _) = standin().await;
    let config = |model: &str| JudgeConfig {
        base_url: base.clone(),
        api_key: None,
        model: model.into(),
        timeout: Duration::from_millis(400),
    };
    assert!(Judge::probe(config("sure-yes")).await.is_ok());
    assert_eq!(
        Judge::probe(config("no-logprobs")).await.unwrap_err(),
        ProbeError::Failed(JudgeFailure::NoLogprobs)
    );
    assert!(matches!(
        Judge::probe(config("sure-no")).await,
        Err(ProbeError::Unclear { yes, .. }) if yes < 0.1
    ));
    // A judge that says yes whatever it is asked passes a yes control; the no control refuses it.
    assert!(matches!(
        Judge::probe(config("yes-to-all")).await,
        Err(ProbeError::Unclear { yes, no }) if yes > 0.9 && no > 0.9
    ));
    // Nor is a lean enough: 0.59 for yes is on the right side of a half, not clear.
    let coin = Judge::probe(config("coin")).await.unwrap_err();
    assert!(
        matches!(coin, ProbeError::Unclear { yes, .. } if (0.5..0.8).contains(&yes)),
        "{coin}"
    );
    assert!(
        coin.to_string()
            .contains("cannot tell a plain yes from a plain no"),
        "{coin}"
    );
    assert!(matches!(
        Judge::probe(config("error")).await,
        Err(ProbeError::Failed(JudgeFailure::Request(_)))
    ));
}

#[tokio::test]
async fn the_router_takes_the_cheap_model_only_when_the_judge_is_sure() {
    let (base, _) = standin().await;
    let sure = route(
        Some(&judge(&base, "sure-yes")),
        "What did I spend on groceries in March?",
    )
    .await;
    assert_eq!(sure.route, Route::Cheap);
    // 0.75 is above the 0.7 line; "sure-no" far below it.
    assert_eq!(
        route(Some(&judge(&base, "calibrated")), "x").await.route,
        Route::Cheap
    );
    assert_eq!(
        route(Some(&judge(&base, "sure-no")), "x").await.route,
        Route::Agent
    );
    let none = route(None, "x").await;
    assert_eq!((none.route, none.failure), (Route::Agent, None));
}

#[tokio::test]
async fn the_stop_judge_stops_at_its_line_and_only_from_the_fourth_call() {
    let (base, seen) = standin().await;
    let sure = judge_stop(Some(&judge(&base, "sure-yes")), &calls()).await;
    assert!(sure.stop && sure.p_stuck.unwrap() > 0.98);
    // 0.75 is below the 0.8 line.
    let unsure = judge_stop(Some(&judge(&base, "calibrated")), &calls()).await;
    assert!(!unsure.stop && unsure.p_stuck.is_some());
    let asked = seen.lock().unwrap().len();
    let early = judge_stop(Some(&judge(&base, "sure-yes")), &calls()[..3]).await;
    assert!(!early.stop);
    assert_eq!(seen.lock().unwrap().len(), asked, "three calls: not asked");
    let question = seen.lock().unwrap()[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        question.contains("5. search_transactions") && question.contains("→ failed"),
        "{question}"
    );
}

/// Each failure kind: the router falls to the agent model and says why.
async fn router_fails_safe(model: &str, kind: &str) {
    let (base, _) = standin().await;
    let routed = route(Some(&judge(&base, model)), "What did I spend on groceries?").await;
    assert_eq!(routed.route, Route::Agent, "{model}");
    assert_eq!(
        routed.failure.as_ref().map(JudgeFailure::kind),
        Some(kind),
        "{routed:?}"
    );
}

/// Each failure kind: the stop judge lets the run go on and says why.
async fn stop_fails_safe(model: &str, kind: &str) {
    let (base, _) = standin().await;
    let verdict = judge_stop(Some(&judge(&base, model)), &calls()).await;
    assert!(!verdict.stop, "{model}");
    assert_eq!(
        verdict.failure.as_ref().map(JudgeFailure::kind),
        Some(kind),
        "{verdict:?}"
    );
}

#[tokio::test]
async fn router_error_gives_the_agent_model() {
    router_fails_safe("error", "error").await;
}

#[tokio::test]
async fn router_timeout_gives_the_agent_model() {
    router_fails_safe("slow", "timeout").await;
}

#[tokio::test]
async fn router_missing_label_gives_the_agent_model() {
    router_fails_safe("missing-label", "missing_label").await;
}

#[tokio::test]
async fn router_out_of_range_gives_the_agent_model() {
    router_fails_safe("out-of-range", "out_of_range").await;
}

#[tokio::test]
async fn stop_judge_error_goes_on() {
    stop_fails_safe("error", "error").await;
}

#[tokio::test]
async fn stop_judge_timeout_goes_on() {
    stop_fails_safe("slow", "timeout").await;
}

#[tokio::test]
async fn stop_judge_missing_label_goes_on() {
    stop_fails_safe("missing-label", "missing_label").await;
}

#[tokio::test]
async fn stop_judge_out_of_range_goes_on() {
    stop_fails_safe("out-of-range", "out_of_range").await;
}
