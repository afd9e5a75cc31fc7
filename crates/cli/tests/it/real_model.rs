//! A whole turn of `kakeibo -p` on a real model server: llama.cpp's `llama-server` with
//! SmolLM2-135M-Instruct, which `cargo xtask test` builds and starts (`KAKEIBO_TEST_LLAMA_URL`).
//! The model calls no tool, so the turn must end honestly: an answer in words (or one the length
//! cap cut off, saying so), every figure in it marked as found in no tool's result, the run
//! stored with the real server's token counts, nothing written — and the same server, named as the decision layer's judge, refused by the
//! probe with a sentence, the run going on without it.

use sqlx::PgPool;

use crate::common;

/// The model's name as the server is started with it (`--alias`).
const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_turn_on_a_real_small_model_ends_honestly(pool: PgPool) {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    kakeibo_ledger::seed::ensure_demo_ledger(kakeibo_ledger::DEV_OWNER, &pool)
        .await
        .unwrap();
    let rows = |pool: &PgPool| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM postings")
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    let before = rows(&pool).await;
    let out = common::kakeibo_command(&pool)
        .args([
            "-p",
            "How much did I spend on groceries in March 2025? Give the amount in rupees.",
            "--output-format",
            "stream-json",
            "--allow-writes",
        ])
        .env("KAKEIBO_PROVIDER", "openai")
        .env("OPENAI_BASE_URL", &base)
        .env("AGENT_MODEL", MODEL)
        // What `cargo xtask model up` prints: the model rambles for minutes without a cap.
        .env("OPENAI_MAX_TOKENS", "512")
        .env("MODEL_TIMEOUT_SECS", "600")
        .env("JUDGE_BASE_URL", &base)
        .env("DECISION_MODEL", MODEL)
        .env("JUDGE_TIMEOUT_MS", "60000")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);

    // The judge: refused at start, said once, and the run went on without it.
    assert!(
        stderr.contains("no judge") && stderr.contains(MODEL),
        "the refused judge is said: {stderr}"
    );

    let events = common::events(&out);
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result", "{stdout}");
    assert_eq!(result["model"], format!("openai:{MODEL}"), "{result}");
    let answer = result["answer"].as_str().unwrap();
    let streamed: String = events
        .iter()
        .filter(|e| e["type"] == "token")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert!(!streamed.trim().is_empty(), "{result}");
    // Either an answer, or one the length cap cut off and that says so: nothing else is honest.
    let stored_status = match result.get("stop").and_then(|s| s.as_str()) {
        None => {
            assert_eq!(
                (out.status.code(), &result["status"]),
                (Some(0), &"ok".into()),
                "{result}"
            );
            assert_eq!(streamed.trim(), answer.trim(), "the stream is the answer");
            "ok"
        }
        Some("max_tokens") => {
            assert_eq!(out.status.code(), Some(2), "stopped short: {stderr}");
            assert!(answer.starts_with(streamed.trim()), "{result}");
            assert!(
                answer.ends_with("(The answer was cut off: it reached the length limit.)"),
                "{answer}"
            );
            "error"
        }
        Some(other) => panic!("the turn stopped for another reason ({other}): {result}\n{stderr}"),
    };

    // The real server counted kakeibo's whole prompt (instructions and every tool's schema).
    let input = result["usage"]["input_tokens"].as_u64().unwrap();
    assert!(input > 2_000, "{result}");
    assert!(result["usage"]["output_tokens"].as_u64().unwrap() > 0, "{result}");

    // No tool returned anything, so no figure the model wrote is grounded.
    let calls = result["tool_calls"].as_array().unwrap();
    if calls.is_empty()
        && let Some(figures) = result.get("figures")
    {
        let stated = figures["figures"].as_array().unwrap();
        assert_eq!(
            figures["ungrounded"].as_u64().unwrap(),
            stated.len() as u64,
            "a figure no tool returned passed as grounded: {figures}"
        );
    }

    // Stored as it went, and nothing written to the ledger.
    let (status, stored_input, model): (String, i64, String) =
        sqlx::query_as("SELECT status::text, input_tokens, model FROM trace_runs WHERE id = $1::uuid")
            .bind(result["run_id"].as_str().unwrap())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(status, stored_status);
    assert_eq!(u64::try_from(stored_input).unwrap(), input);
    assert_eq!(model, MODEL);
    assert_eq!(rows(&pool).await, before, "a turn without tool calls wrote rows");
}
