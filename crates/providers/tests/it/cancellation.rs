//! When the caller goes away mid-request, the request goes too: the connection to the provider
//! is closed rather than left to run up a bill. Checked on a raw socket for each adapter.

use std::time::Duration;

use kakeibo_core::{Message, ModelRequest, Provider, provider::complete};
use kakeibo_providers::{
    Anthropic, AnthropicConfig, Gemini, GeminiConfig, OpenAi, OpenAiConfig,
    gemini::{GeminiAuth, cache::CacheSettings},
    http::Secret,
};
use tokio::{
    io::AsyncReadExt,
    net::{TcpListener, TcpStream},
};

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are kakeibo.".into(),
        messages: vec![Message::user("hi")],
        tools: Vec::new().into(),
        max_tokens: 10,
    }
}

/// Reads until the request's headers have arrived; the server never answers.
async fn read_request(socket: &mut TcpStream) {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut buffer).await.unwrap();
        assert!(n > 0, "closed before the request arrived");
        seen.extend_from_slice(&buffer[..n]);
    }
}

async fn dropped_caller_closes_the_connection(make: impl FnOnce(String) -> Box<dyn Provider>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let provider = make(base);
    let caller = tokio::spawn(async move {
        let _ = complete(provider.as_ref(), &request(), &mut |_| {}).await;
    });
    let (mut socket, _) = tokio::time::timeout(Duration::from_secs(5), listener.accept())
        .await
        .expect("the request was sent")
        .unwrap();
    read_request(&mut socket).await;
    caller.abort();
    let mut rest = Vec::new();
    // End of stream or a reset: either way the client hung up.
    let closed = tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut rest)).await;
    assert!(
        closed.is_ok(),
        "the connection stayed open after the caller went away"
    );
}

#[tokio::test]
async fn every_adapter_hangs_up_when_its_caller_goes_away() {
    let timeout = Duration::from_mins(2);
    dropped_caller_closes_the_connection(|base| {
        Box::new(
            Gemini::new(GeminiConfig {
                auth: GeminiAuth::ApiKey(Secret("k".into())),
                model: "gemini-3.6-flash".into(),
                base_url: format!("{base}/v1beta"),
                timeout,
                cache: CacheSettings::default(),
            })
            .unwrap(),
        )
    })
    .await;
    dropped_caller_closes_the_connection(|base| {
        Box::new(
            Anthropic::new(AnthropicConfig {
                api_key: Secret("k".into()),
                model: "claude".into(),
                base_url: base,
                timeout,
            })
            .unwrap(),
        )
    })
    .await;
    dropped_caller_closes_the_connection(|base| {
        Box::new(
            OpenAi::new(OpenAiConfig {
                api_key: None,
                model: "qwen3".into(),
                base_url: format!("{base}/v1"),
                timeout,
                max_output_tokens: None,
            })
            .unwrap(),
        )
    })
    .await;
}
