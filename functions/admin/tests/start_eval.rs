//! Starting the eval function: the SDK's asynchronous `Invoke` against a local stand-in for the
//! Lambda API that answers as Lambda does (`202` for an accepted event, `404` with
//! `ResourceNotFoundException` for a function that does not exist).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use axum::{
    Router,
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
};
use kakeibo_admin::evals::{LambdaInvoke, StartEval};
use kakeibo_api::secrets::SdkOptions;
use serde_json::Value;

#[derive(Debug, Clone)]
struct Seen {
    function: String,
    headers: HeaderMap,
    body: Value,
}

type Log = Arc<Mutex<Vec<Seen>>>;

async fn invoke(
    State(log): State<Log>,
    Path(function): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    log.lock().unwrap().push(Seen {
        function: function.clone(),
        headers,
        body,
    });
    if function == "kakeibo-eval" {
        StatusCode::ACCEPTED.into_response()
    } else {
        (
            StatusCode::NOT_FOUND,
            [("x-amzn-errortype", "ResourceNotFoundException"), ("content-type", "application/json")],
            format!(
                r#"{{"Type":"User","message":"Function not found: arn:aws:lambda:eu-west-1:123456789012:function:{function}"}}"#
            ),
        )
            .into_response()
    }
}

async fn stand_in() -> (String, Log) {
    let log = Log::default();
    let app = Router::new()
        .route("/2015-03-31/functions/{function}/invocations", post(invoke))
        .with_state(Arc::clone(&log));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, log)
}

fn options(endpoint: &str) -> SdkOptions {
    SdkOptions {
        endpoint: Some(endpoint.to_owned()),
        region: Some("eu-west-1".into()),
        static_credentials: Some((
            "AKIDEXAMPLE".into(),
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        )),
    }
}

#[tokio::test]
async fn the_eval_function_is_invoked_asynchronously_with_the_operator_named() {
    let (url, log) = stand_in().await;
    let starter = LambdaInvoke::new(&options(&url), "kakeibo-eval").await;
    let said = starter.start("ops@kakeibo.example").await.unwrap();
    assert!(said.contains("kakeibo-eval"), "{said}");

    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    assert_eq!(request.function, "kakeibo-eval");
    assert_eq!(request.headers["x-amz-invocation-type"], "Event");
    let authorization = request.headers["authorization"].to_str().unwrap();
    assert!(
        authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
            && authorization.contains("/eu-west-1/lambda/aws4_request"),
        "{authorization}"
    );
    assert_eq!(request.body["trigger"], "admin");
    assert_eq!(request.body["requested_by"], "ops@kakeibo.example");
}

#[tokio::test]
async fn a_missing_function_is_a_clear_error() {
    let (url, _) = stand_in().await;
    let starter = LambdaInvoke::new(&options(&url), "kakeibo-nothing").await;
    let error = starter.start("ops@kakeibo.example").await.unwrap_err();
    assert!(
        error.contains("kakeibo-nothing") && error.contains("Function not found"),
        "{error}"
    );
}

#[tokio::test]
async fn without_a_function_name_nothing_can_be_started() {
    assert!(kakeibo_admin::evals::from_settings(&|_| None).await.is_none());
    assert!(
        kakeibo_admin::evals::from_settings(&|_| Some("  ".into()))
            .await
            .is_none()
    );
}
