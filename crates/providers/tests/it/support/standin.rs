//! A local HTTP server that answers with the replies a test gives it, in order, and keeps every
//! request it received: the stand-in for a provider's endpoint.

use std::{
    collections::VecDeque,
    fmt::Write as _,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    body::Body,
    extract::State,
    http::{HeaderMap, Method, StatusCode, Uri, header},
    response::Response,
};
use serde_json::Value;

/// One answer of the stand-in.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, &'static str)>,
    pub body: String,
    pub sse: bool,
    /// How long the stand-in waits before answering.
    pub delay: Duration,
}

impl Reply {
    /// A 200 whose body is these events as SSE `data:` lines.
    pub fn events(events: &[Value]) -> Self {
        Self::sse(sse(events))
    }

    /// A 200 with this SSE text as it is.
    pub fn sse(text: String) -> Self {
        Self {
            status: 200,
            headers: vec![],
            body: text,
            sse: true,
            delay: Duration::ZERO,
        }
    }

    /// A JSON body with this status.
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![],
            body: body.to_string(),
            sse: false,
            delay: Duration::ZERO,
        }
    }

    #[must_use]
    pub fn header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }

    #[must_use]
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A request the stand-in received: path and query, JSON body, headers.
pub type Received = (String, Value, HeaderMap);

#[derive(Clone, Default)]
pub struct Standin {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    pub requests: Arc<Mutex<Vec<Received>>>,
    /// `METHOD path?query` of every request, in order.
    calls: Arc<Mutex<Vec<String>>>,
}

impl Standin {
    /// Serves `replies` on a free local port; any path, any method. Past the last reply it
    /// answers 500.
    pub async fn start(replies: Vec<Reply>) -> (Self, SocketAddr) {
        let state = Self {
            replies: Arc::new(Mutex::new(replies.into())),
            ..Self::default()
        };
        let app = Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (state, address)
    }

    pub fn received(&self) -> Vec<Received> {
        self.requests.lock().unwrap().clone()
    }

    /// `METHOD path?query` of every request, in order.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

async fn handle(
    State(s): State<Standin>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    s.calls.lock().unwrap().push(format!("{method} {uri}"));
    s.requests.lock().unwrap().push((
        uri.to_string(),
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
        headers,
    ));
    let next = s.replies.lock().unwrap().pop_front();
    let reply = next.unwrap_or_else(|| Reply::json(500, &serde_json::json!({})));
    tokio::time::sleep(reply.delay).await;
    let content_type = if reply.sse {
        "text/event-stream"
    } else {
        "application/json"
    };
    let mut response = Response::builder()
        .status(StatusCode::from_u16(reply.status).unwrap())
        .header(header::CONTENT_TYPE, content_type);
    for (k, v) in reply.headers {
        response = response.header(k, v);
    }
    response.body(Body::from(reply.body)).unwrap()
}

/// Events as SSE `data:` lines.
pub fn sse(events: &[Value]) -> String {
    events.iter().fold(String::new(), |mut out, e| {
        let _ = write!(out, "data: {e}\r\n\r\n");
        out
    })
}

/// Anthropic's SSE framing: `event: <type>` before each `data:` line.
pub fn named_sse(events: &[Value]) -> String {
    events.iter().fold(String::new(), |mut out, e| {
        let kind = e["type"].as_str().unwrap_or("message");
        let _ = write!(out, "event: {kind}\ndata: {e}\n\n");
        out
    })
}
