//! Gemini on Vertex AI against a local stand-in: the service-account key signs an RS256 JWT
//! (checked here with the public half), the token endpoint's access token is sent as a bearer
//! token to the project's publisher path and reused until near its expiry, and a refused
//! exchange surfaces as a refusal. The key pair in `tests/fixtures` exists only for this test.

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use kakeibo_core::{Message, ModelRequest, ProviderError, provider::complete};
use kakeibo_providers::{Gemini, GeminiConfig};
use serde_json::{Value, json};
use support::standin::{Reply, Standin};

use crate::support;

const PRIVATE: &str = include_str!("../fixtures/test-only-rsa-key.pem");
const PUBLIC: &str = include_str!("../fixtures/test-only-rsa-key.pub.pem");
const GENERATE: &str = "POST /v1/projects/kakeibo-test/locations/europe-west4/publishers/google/models/gemini-3.6-flash:streamGenerateContent?alt=sse";

fn answer() -> Reply {
    Reply::events(&[
        json!({"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}),
    ])
}

fn token(value: &str, expires_in: u64) -> Reply {
    Reply::json(
        200,
        &json!({"access_token": value, "expires_in": expires_in, "token_type": "Bearer"}),
    )
}

async fn vertex(replies: Vec<Reply>) -> (Standin, Gemini, String) {
    let (state, address) = Standin::start(replies).await;
    let token_uri = format!("http://{address}/token");
    let key = json!({
        "type": "service_account", "project_id": "kakeibo-test", "private_key_id": "key-1",
        "private_key": PRIVATE, "client_email": "agent@kakeibo-test.iam.gserviceaccount.com",
        "token_uri": token_uri,
    })
    .to_string();
    let origin = format!("http://{address}");
    let vars = [
        ("GEMINI_SERVICE_ACCOUNT_JSON", key.as_str()),
        ("GEMINI_BASE_URL", origin.as_str()),
        ("VERTEX_LOCATION", "europe-west4"),
    ];
    let lookup = |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    };
    let config = GeminiConfig::vertex_from_vars("gemini-3.6-flash", &lookup).unwrap();
    assert!(
        !format!("{config:?}").contains("PRIVATE KEY"),
        "the key is never printed"
    );
    (state, Gemini::new(config).unwrap(), token_uri)
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are kakeibo.".into(),
        messages: vec![Message::user("hi")],
        tools: Vec::new().into(),
        max_tokens: 10,
    }
}

#[tokio::test]
async fn a_signed_jwt_buys_a_token_that_is_reused_until_near_expiry() {
    let (state, gemini, token_uri) = vertex(vec![token("ya29.first", 3599), answer(), answer()]).await;
    for _ in 0..2 {
        let reply = complete(&gemini, &request(), &mut |_| {}).await.unwrap();
        assert_eq!(reply.message.text(), "ok");
    }
    assert_eq!(state.calls(), ["POST /token", GENERATE, GENERATE]);
    let received = state.received();
    for (_, _, headers) in &received[1..] {
        assert_eq!(headers.get("authorization").unwrap(), "Bearer ya29.first");
        assert!(headers.get("x-goog-api-key").is_none());
    }

    let Value::String(form) = &received[0].1 else {
        panic!("{:?}", received[0].1)
    };
    let assertion = form
        .strip_prefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=")
        .unwrap();
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_audience(&[token_uri.as_str()]);
    let decoded = jsonwebtoken::decode::<Value>(
        assertion,
        &DecodingKey::from_rsa_pem(PUBLIC.as_bytes()).unwrap(),
        &validation,
    )
    .expect("signed with the service account's key");
    assert_eq!(decoded.header.kid.as_deref(), Some("key-1"));
    assert_eq!(
        decoded.claims["iss"],
        "agent@kakeibo-test.iam.gserviceaccount.com"
    );
    assert_eq!(
        decoded.claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
    let lifetime = decoded.claims["exp"].as_u64().unwrap() - decoded.claims["iat"].as_u64().unwrap();
    assert_eq!(lifetime, 3600);
}

#[tokio::test]
async fn a_token_near_expiry_is_renewed_and_a_refusal_is_said() {
    // Four minutes left is inside the five-minute margin: every request renews.
    let (state, gemini, _) = vertex(vec![
        token("ya29.a", 240),
        answer(),
        token("ya29.b", 240),
        answer(),
    ])
    .await;
    for _ in 0..2 {
        complete(&gemini, &request(), &mut |_| {}).await.unwrap();
    }
    assert_eq!(state.calls(), ["POST /token", GENERATE, "POST /token", GENERATE]);
    assert_eq!(
        state.received()[3].2.get("authorization").unwrap(),
        "Bearer ya29.b"
    );

    let refused = json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."});
    let (state, gemini, _) = vertex(vec![Reply::json(400, &refused)]).await;
    let err = complete(&gemini, &request(), &mut |_| {}).await.unwrap_err();
    assert!(
        matches!(&err, ProviderError::Rejected { status: 400, message } if message.contains("invalid_grant")),
        "{err:?}"
    );
    assert_eq!(state.calls(), ["POST /token"], "no model call without a token");
}
