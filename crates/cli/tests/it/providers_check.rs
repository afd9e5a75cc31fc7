//! `kakeibo providers check` as a user runs it: with nothing configured, against a local server
//! that speaks the OpenAI-compatible wire format (answering, then refusing), with a script, and
//! with a setting that names no provider.

use std::{
    fmt::Write as _,
    process::{Command, Output},
    sync::{Arc, Mutex},
};

use axum::{Router, extract::State, http::HeaderMap, response::IntoResponse, routing::post};
use serde_json::{Value, json};

/// Every setting the selection reads, removed so the machine's own environment cannot leak in.
const SETTINGS: [&str; 11] = [
    "KAKEIBO_PROVIDER",
    "GEMINI_API_KEY",
    "GEMINI_AUTH",
    "GEMINI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "AGENT_MODEL",
    "SUMMARIZER_MODEL",
    "JUDGE_MODEL",
];

fn check(settings: &[(&str, &str)]) -> (i32, String) {
    check_with(&[], settings)
}

fn check_with(args: &[&str], settings: &[(&str, &str)]) -> (i32, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kakeibo"));
    command.args(["providers", "check"]).args(args);
    for name in SETTINGS {
        command.env_remove(name);
    }
    command.envs(settings.iter().copied());
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().unwrap();
    (
        status.code().unwrap(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        ),
    )
}

type Seen = Arc<Mutex<Vec<(Value, Option<String>)>>>;

/// A Chat Completions endpoint answering `status` with `body` (SSE when 200).
async fn server(status: u16, body: String) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(
                move |State(seen): State<Seen>, headers: HeaderMap, request: String| async move {
                    let auth = headers
                        .get("authorization")
                        .map(|v| v.to_str().unwrap().to_owned());
                    seen.lock()
                        .unwrap()
                        .push((serde_json::from_str(&request).unwrap(), auth));
                    let content_type = if status == 200 {
                        "text/event-stream"
                    } else {
                        "application/json"
                    };
                    (
                        axum::http::StatusCode::from_u16(status).unwrap(),
                        [("content-type", content_type)],
                        body,
                    )
                        .into_response()
                },
            ),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}/v1"), seen)
}

#[test]
fn with_nothing_configured_it_says_so_and_how_to_configure() {
    let (code, out) = check(&[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("No model provider is configured"), "{out}");
    for setting in [
        "GEMINI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "KAKEIBO_PROVIDER=script:PATH",
    ] {
        assert!(out.contains(setting), "{setting}: {out}");
    }
    assert!(!out.contains("answered"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_passes_and_one_that_refuses_fails() {
    let chunks = [
        json!({"model": "qwen3-8b-q4", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "OK"}, "finish_reason": null}]}),
        json!({"model": "qwen3-8b-q4", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"model": "qwen3-8b-q4", "choices": [], "usage": {"prompt_tokens": 21, "completion_tokens": 1}}),
    ];
    let mut sse = String::new();
    for chunk in &chunks {
        writeln!(sse, "data: {chunk}\n").unwrap();
    }
    sse.push_str("data: [DONE]\n\n");
    let (url, seen) = server(200, sse).await;
    let (code, out) = tokio::task::spawn_blocking(move || {
        check(&[
            ("OPENAI_BASE_URL", url.as_str()),
            ("OPENAI_API_KEY", "sk-secret-value"),
            ("AGENT_MODEL", "qwen3"),
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("provider    openai (OPENAI_BASE_URL is set)"),
        "{out}"
    );
    assert!(out.contains("judge       qwen3 (AGENT_MODEL)"), "{out}");
    assert!(
        out.contains("by qwen3-8b-q4: \"OK\" (21 tokens in, 1 out)"),
        "{out}"
    );
    assert!(
        out.contains("  KAKEIBO_PROVIDER=openai\n  AGENT_MODEL=qwen3\n"),
        "{out}"
    );
    assert!(out.contains("OPENAI_API_KEY=<your key, set>"), "{out}");
    assert!(!out.contains("sk-secret-value"), "a key is never printed: {out}");
    // The same prompt tokens with a tool and without: the server dropped it, and that is said.
    assert!(
        out.contains("tools       left out: a request with a tool counts the same 21 prompt tokens"),
        "{out}"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "the call, then one without a tool and one with");
    assert!(seen[1].0.get("tools").is_none() && seen[2].0["tools"][0]["function"]["name"] == "get_balances");
    assert_eq!(seen[0].0["model"], "qwen3");
    assert_eq!(seen[0].1.as_deref(), Some("Bearer sk-secret-value"));

    let refusal = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}});
    let (url, seen) = server(401, refusal.to_string()).await;
    let (code, out) = tokio::task::spawn_blocking(move || {
        check(&[("OPENAI_BASE_URL", url.as_str()), ("AGENT_MODEL", "qwen3")])
    })
    .await
    .unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("refused the request (401): Incorrect API key provided"),
        "{out}"
    );
    assert_eq!(seen.lock().unwrap().len(), 1, "a refusal is not retried");
}

#[test]
fn a_script_needs_no_model_and_a_bad_setting_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.json");
    std::fs::write(
        &path,
        r#"{"rules": [{"match": ".", "steps": [{"text": "Scripted hello."}]}]}"#,
    )
    .unwrap();
    let setting = format!("script:{}", path.display());
    let (code, out) = check(&[("KAKEIBO_PROVIDER", setting.as_str())]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("scripted replies, no model"), "{out}");
    assert!(out.contains("\"Scripted hello.\""), "{out}");

    let (code, out) = check(&[("KAKEIBO_PROVIDER", "script:/nonexistent/demo.json")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("cannot read the script /nonexistent/demo.json"),
        "{out}"
    );

    let (code, out) = check(&[("KAKEIBO_PROVIDER", "bedrock")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("KAKEIBO_PROVIDER=bedrock is not a provider"),
        "{out}"
    );

    let (code, out) = check(&[("ANTHROPIC_API_KEY", "k")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("has no default model: set AGENT_MODEL"), "{out}");
}

#[test]
fn no_call_still_checks_the_settings_and_never_prints_credentials() {
    let (code, out) = check_with(
        &["--no-call"],
        &[
            ("OPENAI_BASE_URL", "https://user:s3cret@llm.internal.example/v1"),
            ("AGENT_MODEL", "qwen3"),
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("call        skipped (--no-call)"), "{out}");
    assert!(
        out.contains("OPENAI_BASE_URL=https://llm.internal.example/v1"),
        "{out}"
    );
    assert!(!out.contains("s3cret"), "{out}");

    let (code, out) = check_with(&["--no-call"], &[("GEMINI_AUTH", "vertex")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("call        not possible: GEMINI_AUTH=vertex needs"),
        "{out}"
    );
}

/// Against the real local server `cargo xtask test` starts (llama-server): it is on this
/// machine, it serves the model named, and it answers.
#[test]
fn a_local_server_is_named_with_its_models() {
    let Some(base) = kakeibo_testkit::llama_url() else {
        return;
    };
    let (code, out) = check(&[
        ("KAKEIBO_PROVIDER", "openai"),
        ("OPENAI_BASE_URL", &base),
        ("AGENT_MODEL", "SmolLM2-135M-Instruct.Q4_1"),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("server      on this machine (http://127.0.0.1:")
            && out.contains("nothing kakeibo sends leaves it"),
        "{out}"
    );
    assert!(out.contains("serves      SmolLM2-135M-Instruct.Q4_1\n"), "{out}");
    assert!(out.contains("call        answered in "), "{out}");
    // SmolLM2's chat template has no place for tools: llama-server drops them without a word.
    assert!(
        out.contains("tools       left out: a request with a tool counts the same "),
        "{out}"
    );

    let (_, out) = check(&[
        ("KAKEIBO_PROVIDER", "openai"),
        ("OPENAI_BASE_URL", &base),
        ("AGENT_MODEL", "qwen3"),
    ]);
    assert!(out.contains("AGENT_MODEL=qwen3 is not among them"), "{out}");
}
