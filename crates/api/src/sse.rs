//! Server-sent events: `event: <name>` and `data: <json>` frames, with a comment line as a
//! heartbeat while the turn is quiet (so no proxy or origin read timeout cuts the stream).

use std::{convert::Infallible, time::Duration};

use axum::{
    body::Body,
    http::{HeaderValue, StatusCode, header},
    response::Response,
};
use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

/// How long the stream may stay silent before a heartbeat comment is sent.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// One frame.
pub fn frame(event: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {data}\n\n"))
}

/// The sending half of an event stream; sending after the client left is a no-op.
#[derive(Debug, Clone)]
pub struct Events(mpsc::UnboundedSender<Bytes>);

impl Events {
    pub fn send(&self, event: &str, data: &Value) {
        let _ = self.0.send(frame(event, data));
    }

    /// Sends a turn's event: its `type` as the SSE event, the rest as its data.
    pub fn emit(&self, event: &kakeibo_core::Event) {
        self.send(event.name(), &event.data());
    }
}

/// A `200 text/event-stream` response fed by the returned [`Events`]; the stream ends when every
/// `Events` is dropped.
pub fn stream() -> (Events, Response) {
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    let frames = futures_util::stream::unfold(rx, |mut rx| async move {
        match tokio::time::timeout(HEARTBEAT, rx.recv()).await {
            Ok(Some(bytes)) => Some((Ok::<_, Infallible>(bytes), rx)),
            Ok(None) => None,
            Err(_) => Some((Ok(Bytes::from_static(b": keep-alive\n\n")), rx)),
        }
    });
    let mut response = Response::new(Body::from_stream(frames));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    (Events(tx), response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_arrive_in_order_and_the_stream_ends_with_its_senders() {
        let (events, response) = stream();
        events.send("token", &serde_json::json!({"delta": "hi"}));
        events.send("turn_end", &serde_json::json!({"status": "ok"}));
        drop(events);
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&body),
            "event: token\ndata: {\"delta\":\"hi\"}\n\nevent: turn_end\ndata: {\"status\":\"ok\"}\n\n"
        );
    }
}
