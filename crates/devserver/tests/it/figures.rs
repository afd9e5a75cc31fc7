//! Every figure of an answer, checked, through the functions: the `figures` event on the chat
//! stream (before `turn_end`), the headline of each tool result, the stored trace, and the rows
//! behind a figure fetched again from the run — their sum the figure.

use crate::support;

use axum::http::StatusCode;
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, TestApp, state};

fn wrong_figure_script() -> String {
    format!(
        "script:{}",
        support::repo_root()
            .join("fixtures/scripts/wrong-figure.yaml")
            .display()
    )
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_wrong_figure_is_marked_on_the_stream_and_in_the_trace(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let script = wrong_figure_script();
    let state = state(&connect, Isolation::Rls, &[("KAKEIBO_PROVIDER", &script)]).await;
    let app = TestApp::new(&state);
    let (cookie, chat) = app.visitor("how much did I spend in June 2025?").await;
    assert_eq!(chat.status, StatusCode::OK, "{}", chat.body);
    let names: Vec<String> = chat.events().into_iter().map(|(e, _)| e).collect();
    assert_eq!(
        names,
        ["tool_call", "tool_result", "token", "figures", "turn_end"],
        "{}",
        chat.body
    );

    let result = &chat.named("tool_result")[0];
    assert_eq!(result["headline"]["label"], "total spending");
    assert_eq!(result["headline"]["formatted"], "₹1,40,619.00");

    let figures = &chat.named("figures")[0];
    assert_eq!(figures["ungrounded"], 1, "{figures}");
    let stated = figures["figures"].as_array().unwrap();
    assert_eq!(stated[0]["text"], "₹1,40,619.00");
    assert_eq!(stated[0]["grounding"], "exact");
    assert_eq!(stated[1]["text"], "₹99,999.99");
    assert_eq!(stated[1]["grounding"], "ungrounded");
    assert!(stated[1].get("how").is_none());

    // Stored with the run, as the trace page reads it.
    let run = support::turn_end(&chat)["run_id"].as_str().unwrap().to_owned();
    let detail = app.get(&format!("/api/runs/{run}"), Some(&cookie)).await.json();
    let traced: Vec<&Value> = detail["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "model_call" && e["payload"]["figures"].is_object())
        .collect();
    assert_eq!(traced.len(), 1, "on the call that answered: {detail}");
    assert_eq!(traced[0]["payload"]["figures"]["ungrounded"], 1);
    assert_eq!(
        traced[0]["payload"]["figures"]["figures"][1]["text"],
        "₹99,999.99"
    );

    // The grounded figure's rows, run again: their sum is the figure.
    let grounded = app
        .get(&format!("/api/runs/{run}/figures/0"), Some(&cookie))
        .await;
    assert_eq!(grounded.status, StatusCode::OK, "{}", grounded.body);
    let grounded = grounded.json();
    assert_eq!(grounded["figure"]["text"], "₹1,40,619.00");
    let source = &grounded["sources"][0];
    assert_eq!(source["tool"], "get_spend_report");
    assert_eq!(source["pointer"], "/total");
    assert_eq!(source["found"]["sum"]["amount_minor"], 14_061_900);
    assert_eq!(source["found"]["sum"]["amount_minor"], source["amount_minor"]);
    let rows = source["found"]["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        usize::try_from(source["found"]["count"].as_i64().unwrap()).unwrap()
    );
    let listed: i64 = rows.iter().map(|r| r["amount_minor"].as_i64().unwrap()).sum();
    assert_eq!(listed, 14_061_900, "every row listed adds up to the figure");
    assert!(
        rows.iter()
            .all(|r| r["date"].as_str().unwrap().starts_with("2025-06"))
    );

    // The ungrounded one has nothing behind it; a figure the answer does not have is 404.
    let ungrounded = app
        .get(&format!("/api/runs/{run}/figures/1"), Some(&cookie))
        .await
        .json();
    assert_eq!(ungrounded["figure"]["grounding"], "ungrounded");
    assert_eq!(ungrounded["sources"], Value::Array(Vec::new()));
    for missing in ["2", "x", "-1"] {
        let none = app
            .get(&format!("/api/runs/{run}/figures/{missing}"), Some(&cookie))
            .await;
        assert_eq!(none.status, StatusCode::NOT_FOUND, "{missing}: {}", none.body);
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_demo_answers_with_grounded_figures(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    let (_, chat) = app.visitor("How much did I spend in June 2025?").await;
    let figures = &chat.named("figures")[0];
    assert_eq!(figures["ungrounded"], 0, "{figures}");
    let texts: Vec<&str> = figures["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["₹1,40,619.00", "₹32,000.00", "₹22,733.00", "₹20,972.00"]);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn under_retry_the_answer_is_corrected_once_both_calls_stored(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let script = format!(
        "script:{}",
        support::repo_root()
            .join("fixtures/scripts/figure-retry.yaml")
            .display()
    );
    let state = state(
        &connect,
        Isolation::Rls,
        &[("KAKEIBO_PROVIDER", &script), ("FIGURES", "retry")],
    )
    .await;
    let app = TestApp::new(&state);
    let (cookie, chat) = app.visitor("how much did I spend in June 2025?").await;
    let names: Vec<String> = chat.events().into_iter().map(|(e, _)| e).collect();
    assert_eq!(
        names,
        [
            "tool_call",
            "tool_result",
            "token",
            "correcting",
            "token",
            "figures",
            "turn_end"
        ],
        "{}",
        chat.body
    );
    assert_eq!(
        chat.named("correcting")[0]["figures"],
        serde_json::json!(["₹99,999.99"])
    );
    let tokens = chat.named("token");
    assert!(tokens[0]["delta"].as_str().unwrap().contains("₹99,999.99"));
    assert_eq!(
        tokens[1]["delta"],
        "In June 2025 you spent ₹1,40,619.00 in all; the largest group was Rent at ₹32,000.00."
    );
    let figures = &chat.named("figures")[0];
    assert_eq!(figures["ungrounded"], 0, "{figures}");
    assert_eq!(figures["corrected"], serde_json::json!(["₹99,999.99"]));

    // The stored run has the wrong answer's call and the correcting one, each priced, and both checks.
    let run = support::turn_end(&chat)["run_id"].as_str().unwrap().to_owned();
    let detail = app.get(&format!("/api/runs/{run}"), Some(&cookie)).await.json();
    let kinds: Vec<&str> = detail["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["model_call", "tool_call", "model_call", "model_call"],
        "{detail}"
    );
    // Each answering call carries its answer's check: the first with its ungrounded figure.
    let checks: Vec<&Value> = detail["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["payload"]["figures"])
        .filter(|f| f.is_object())
        .collect();
    assert_eq!(checks.len(), 2, "{detail}");
    assert_eq!(
        (checks[0]["ungrounded"].as_u64(), checks[1]["ungrounded"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(detail["iterations"], 3);
    // The page reads the answer's figures from the last check.
    let last = app
        .get(&format!("/api/runs/{run}/figures/1"), Some(&cookie))
        .await
        .json();
    assert_eq!(last["figure"]["text"], "₹32,000.00");
    assert_eq!(last["sources"][0]["found"]["sum"]["amount_minor"], 3_200_000);

    // A setting that is neither policy stops the function from starting, saying why.
    let vars = [("FIGURES", "rewrite")];
    let config = kakeibo_api::Config::from_vars(
        [
            ("DATABASE_URL", "postgres://unused"),
            ("JWT_SECRET", "0123456789abcdef0123456789abcdef"),
            ("RATE_LIMIT_SALT", "salt"),
        ]
        .into_iter()
        .chain(vars)
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
    );
    let error = config.unwrap_err().to_string();
    assert!(error.contains("FIGURES") && error.contains("retry"), "{error}");
}
