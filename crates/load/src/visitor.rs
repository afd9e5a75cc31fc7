//! One simulated visitor: a session, then what a visitor of the site does, chosen at random each
//! time, until the deadline.

use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{
    sse,
    traffic::{Plan, Tally, VisitorLog, Window, Write, WriteKind, address, since},
};

/// Questions the demo script answers with read tools (one each).
const QUESTIONS: [&str; 4] = [
    "how much did I spend on groceries in march 2025?",
    "what subscriptions do I have?",
    "anything unusual?",
    "how much did I spend?",
];

/// A conversation is left for a new one after this many messages, as visitors do.
const MESSAGES_PER_CONVERSATION: u32 = 6;

/// The prefix of every tag; the visitor's index and the write's follow (`LOAD-V3-R7`).
pub const TAG_PREFIX: &str = "LOAD-V";

/// A number from 0 to 99, fresh each call.
fn roll() -> u128 {
    Uuid::new_v4().as_u128() % 100
}

/// Runs one visitor until `deadline`; what it did and how long each request took. `clock` is the
/// load's start, and `window` when a disruption ran (errors it explains are tallied apart).
pub async fn visit(
    plan: &Plan,
    index: usize,
    deadline: Instant,
    clock: Instant,
    window: &Window,
) -> (VisitorLog, Tally) {
    let mut visitor = Visitor::new(plan, index, clock, window);
    match Client::builder()
        .local_address(address(index))
        .timeout(plan.request_timeout)
        .build()
    {
        Ok(client) => visitor.client = Some(client),
        Err(e) => {
            visitor.tally.error("load", format!("no HTTP client: {e}"));
            return (visitor.log, visitor.tally);
        }
    }
    while Instant::now() < deadline && !visitor.start().await {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    while Instant::now() < deadline {
        match roll() {
            0..40 => visitor.ask().await,
            40..65 => visitor.make_rule().await,
            65..80 => visitor.dashboard().await,
            80..90 => visitor.listings().await,
            _ => visitor.import().await,
        }
    }
    (visitor.log, visitor.tally)
}

struct Visitor<'a> {
    plan: &'a Plan,
    clock: Instant,
    window: &'a Window,
    /// The last request's start and end, in milliseconds from `clock`.
    span: (u64, u64),
    client: Option<Client>,
    cookie: Option<String>,
    conversation: Option<String>,
    messages_here: u32,
    writes: u32,
    log: VisitorLog,
    tally: Tally,
}

/// A `2xx` answer.
struct Reply {
    body: String,
    cookie: Option<String>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

enum Body {
    None,
    Json(Value),
    Csv(String),
}

impl<'a> Visitor<'a> {
    /// Visitor `index` before its first request: no client, session or conversation yet.
    fn new(plan: &'a Plan, index: usize, clock: Instant, window: &'a Window) -> Self {
        Self {
            plan,
            clock,
            window,
            span: (0, 0),
            client: None,
            cookie: None,
            conversation: None,
            messages_here: 0,
            writes: 0,
            log: VisitorLog::new(index),
            tally: Tally::default(),
        }
    }
}

impl Visitor<'_> {
    /// Sends one request, timing it under `route`; a `2xx` answer, or `None` with the error tallied
    /// by kind (the status and the refusal's `reason`, or what broke).
    async fn send(&mut self, route: &'static str, method: Method, path: &str, body: Body) -> Option<Reply> {
        let client = self.client.as_ref()?;
        let mut request = client
            .request(method, format!("{}{path}", self.plan.base))
            .header("origin", &self.plan.origin);
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        request = match body {
            Body::None => request,
            Body::Json(value) => request.json(&value),
            Body::Csv(text) => request.header("content-type", "text/csv").body(text),
        };
        let started = Instant::now();
        let from_ms = since(self.clock);
        let answer = match request.send().await {
            Ok(response) => {
                let status = response.status();
                let cookie = session_cookie(response.headers());
                response.text().await.map(|body| (status, body, cookie))
            }
            Err(e) => Err(e),
        };
        self.tally.timed(route, started.elapsed());
        self.span = (from_ms, since(self.clock));
        match answer {
            Ok((status, body, cookie)) if status.is_success() => {
                self.window.succeeded(self.span.0, self.span.1);
                Some(Reply { body, cookie })
            }
            Ok((status, body, _)) => {
                self.fault(route, refusal(status, &body));
                None
            }
            Err(e) => {
                self.fault(route, broken(&e));
                None
            }
        }
    }

    /// An error of the last request: the disruption's doing when that request met it. A visitor
    /// whose request the disruption cut starts a new conversation, as a person shown the error
    /// would: the old one may hold a write still waiting for its answer (`409 awaiting_confirm`).
    fn fault(&mut self, route: &'static str, kind: impl std::fmt::Display) {
        if self.window.overlaps(self.span.0, self.span.1) {
            self.tally.disrupted(route, kind);
            self.conversation = None;
            self.messages_here = 0;
        } else {
            self.tally.error(route, kind);
        }
    }

    /// A session (`POST /api/session`) and the owner it names; false when either failed.
    async fn start(&mut self) -> bool {
        let Some(reply) = self
            .send("POST /api/session", Method::POST, "/api/session", Body::None)
            .await
        else {
            return false;
        };
        let Some(cookie) = reply.cookie else {
            self.tally.error("POST /api/session", "no session cookie");
            return false;
        };
        self.cookie = Some(cookie);
        let Some(reply) = self
            .send("GET /api/session", Method::GET, "/api/session", Body::None)
            .await
        else {
            return false;
        };
        self.log.owner = reply
            .json()
            .pointer("/visitor/id")
            .and_then(Value::as_str)
            .and_then(|id| id.parse().ok());
        if self.log.owner.is_none() {
            self.tally.error("GET /api/session", "no visitor in the answer");
        }
        self.log.owner.is_some()
    }

    /// Sends `message` to the visitor's conversation; the answer's events when it was admitted.
    async fn chat(&mut self, route: &'static str, message: &str) -> Option<Vec<(String, Value)>> {
        if self.messages_here >= MESSAGES_PER_CONVERSATION {
            self.conversation = None;
            self.messages_here = 0;
        }
        let body = match &self.conversation {
            Some(conversation) => json!({"message": message, "conversation_id": conversation}),
            None => json!({"message": message}),
        };
        let reply = self
            .send(route, Method::POST, "/api/chat", Body::Json(body))
            .await?;
        self.messages_here += 1;
        let events = sse::events(&reply.body);
        self.ended(route, &events);
        Some(events)
    }

    /// Records a turn's end: the run of an admitted message, or why there was none.
    fn ended(&mut self, route: &'static str, events: &[(String, Value)]) {
        if let Some(error) = sse::first(events, "error") {
            self.fault(
                route,
                format!("error event: {}", text(error, "message").unwrap_or("?")),
            );
        }
        let Some(end) = sse::first(events, "turn_end") else {
            self.log.unended += 1;
            self.fault(route, "the stream ended without a turn_end");
            return;
        };
        if route.starts_with("POST /api/chat") {
            match text(end, "run_id").and_then(|id| id.parse().ok()) {
                Some(run) => self.log.runs.push(run),
                None => self.fault(route, "a turn_end without its run"),
            }
            if let Some(conversation) = text(end, "conversation_id") {
                self.conversation = Some(conversation.to_owned());
            }
        }
        // A write's message ends its turn suspended, waiting for the person.
        let expected = if route.starts_with("POST /api/chat (") && !route.ends_with("(read)") {
            "suspended"
        } else {
            "ok"
        };
        if text(end, "status") != Some(expected) {
            self.fault(
                route,
                format!(
                    "turn ended {} ({})",
                    text(end, "status").unwrap_or("?"),
                    text(end, "stop").unwrap_or("no stop")
                ),
            );
        }
    }

    /// A question the read tools answer.
    async fn ask(&mut self) {
        let question = QUESTIONS
            .get(usize::try_from(roll()).unwrap_or_default() % QUESTIONS.len())
            .copied()
            .unwrap_or("how much did I spend?");
        self.chat("POST /api/chat (read)", question).await;
    }

    /// The next tag of this visitor: `LOAD-V{index}-{kind}{n}`.
    fn tag(&mut self, kind: char) -> String {
        self.writes += 1;
        format!("{TAG_PREFIX}{}-{kind}{}", self.log.index, self.writes)
    }

    /// A rule the person allows (three times in four) or declines.
    async fn make_rule(&mut self) {
        let tag = self.tag('R');
        let message = format!("always put {tag} under Dining");
        let Some(events) = self.chat("POST /api/chat (write)", &message).await else {
            return;
        };
        self.confirm(&events, tag, WriteKind::Rule).await;
    }

    /// Answers the one write `events` asked to confirm, and records it.
    async fn confirm(&mut self, events: &[(String, Value)], tag: String, kind: WriteKind) {
        let route = "POST /api/confirm";
        let Some(asked) = sse::first(events, "confirm_request") else {
            self.fault(route, "the write asked for no confirmation");
            return;
        };
        let allowed = roll() >= 25;
        let body = json!({
            "suspended_turn_id": asked.get("suspended_turn_id"),
            "decisions": [{"id": asked.get("id"), "allowed": allowed}],
        });
        let mut write = Write {
            tag,
            kind,
            allowed,
            settled: false,
        };
        if let Some(reply) = self
            .send(route, Method::POST, "/api/confirm", Body::Json(body))
            .await
        {
            let events = sse::events(&reply.body);
            self.ended(route, &events);
            let decided = sse::first(&events, "tool_result").and_then(|r| text(r, "decision"));
            let expected = if allowed { "allowed" } else { "declined" };
            if decided == Some(expected) {
                write.settled = sse::first(&events, "turn_end").is_some();
            } else if decided.is_none() {
                // The stream broke before the write's result (a restart may do that).
                self.fault(route, "no result for the decided write");
            } else {
                // Another decision than the one sent is wrong whatever else happened.
                self.tally
                    .error(route, format!("decision {decided:?} where {expected} was sent"));
            }
        }
        self.log.writes.push(write);
    }

    /// A statement of three rows uploaded, previewed, imported (or declined), and its upload
    /// deleted.
    async fn import(&mut self) {
        let tag = self.tag('I');
        let statement = format!(
            "Date,Description,Amount\n\
             2025-07-01,{tag} CAFE,-250.00\n\
             2025-07-02,{tag} BOOKS,-1200.50\n\
             2025-07-03,{tag} REFUND,300.00\n"
        );
        let path = format!("/api/uploads?filename={tag}.csv");
        let Some(upload) = self
            .send("POST /api/uploads", Method::POST, &path, Body::Csv(statement))
            .await
        else {
            return;
        };
        let Some(id) = text(&upload.json(), "id").map(str::to_owned) else {
            self.fault("POST /api/uploads", "no upload id in the answer");
            return;
        };
        let preview_path = format!("/api/uploads/{id}/preview");
        if let Some(preview) = self
            .send(
                "POST /api/uploads/{id}/preview",
                Method::POST,
                &preview_path,
                Body::None,
            )
            .await
        {
            let plan = preview.json();
            match (
                text(&plan, "plan_id"),
                plan.get("rows_to_add").and_then(Value::as_u64),
            ) {
                (Some(plan_id), Some(rows)) => {
                    let message = format!("import the previewed statement, plan {plan_id}");
                    if let Some(events) = self.chat("POST /api/chat (import)", &message).await {
                        self.confirm(&events, tag, WriteKind::Import { rows }).await;
                    }
                }
                _ => self.fault("POST /api/uploads/{id}/preview", "no plan in the answer"),
            }
        }
        self.send(
            "DELETE /api/uploads/{id}",
            Method::DELETE,
            &format!("/api/uploads/{id}"),
            Body::None,
        )
        .await;
    }

    /// The dashboard of March 2025 (the demo ledger's) or July 2025 (where imports land).
    async fn dashboard(&mut self) {
        let month = if roll() < 50 { "2025-03" } else { "2025-07" };
        let path = format!("/api/dashboard?month={month}");
        if let Some(reply) = self
            .send("GET /api/dashboard", Method::GET, &path, Body::None)
            .await
        {
            self.look_for_others(&reply.body);
        }
    }

    /// The lists of runs and conversations, each id remembered for the checks.
    async fn listings(&mut self) {
        if let Some(reply) = self
            .send("GET /api/runs", Method::GET, "/api/runs", Body::None)
            .await
        {
            self.look_for_others(&reply.body);
            let ids = ids(reply.json().get("runs"));
            self.log.listed_runs.extend(ids);
        }
        if let Some(reply) = self
            .send(
                "GET /api/conversations",
                Method::GET,
                "/api/conversations",
                Body::None,
            )
            .await
        {
            self.look_for_others(&reply.body);
            let ids = ids(reply.json().get("conversations"));
            self.log.listed_conversations.extend(ids);
        }
    }

    /// Remembers every tag of another visitor's writes that `page` shows.
    fn look_for_others(&mut self, page: &str) {
        for found in page.split(TAG_PREFIX).skip(1) {
            let digits: String = found.chars().take_while(char::is_ascii_digit).collect();
            if digits.parse::<usize>().ok() != Some(self.log.index) {
                let tag: String = found
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                self.log.foreign_tags.insert(format!("{TAG_PREFIX}{tag}"));
            }
        }
    }
}

/// The `id` of each object of a JSON array.
fn ids(list: Option<&Value>) -> Vec<Uuid> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| text(item, "id")?.parse().ok())
        .collect()
}

/// The string at `key` of a JSON object.
fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// `kakeibo_session=…` from the answer's `Set-Cookie`, as a `Cookie` header sends it.
fn session_cookie(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter(|value| value.starts_with("kakeibo_session=") || value.starts_with("__Host-kakeibo_session="))
        .filter_map(|value| value.split(';').next())
        .map(str::to_owned)
        .next_back()
}

/// A refusal's kind: the status and the `reason` (or the `error`) of its JSON body.
fn refusal(status: StatusCode, body: &str) -> String {
    let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let why = text(&json, "reason")
        .or_else(|| text(&json, "error"))
        .unwrap_or("no JSON refusal");
    format!("{} {why}", status.as_u16())
}

/// What broke, without the URL.
fn broken(error: &reqwest::Error) -> String {
    let what = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else if error.is_body() || error.is_decode() {
        "the answer broke off"
    } else {
        "the request failed"
    };
    format!("transport: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_other_visitors_tags_are_foreign() {
        let plan = Plan {
            base: String::new(),
            origin: String::new(),
            visitors: 1,
            duration: Duration::ZERO,
            request_timeout: Duration::ZERO,
            disruption: None,
        };
        let window = Window::default();
        let mut visitor = Visitor::new(&plan, 3, Instant::now(), &window);
        visitor.look_for_others(r#"[{"description":"LOAD-V3-I1 CAFE"},{"d":"LOAD-V3-R12"}]"#);
        assert!(visitor.log.foreign_tags.is_empty());
        visitor.look_for_others(r#"{"a":"LOAD-V31-I2 BOOKS","b":"LOAD-V0-R1","c":"LOAD-V3-R4"}"#);
        let found: Vec<&str> = visitor.log.foreign_tags.iter().map(String::as_str).collect();
        assert_eq!(found, ["LOAD-V0-R1", "LOAD-V31-I2"]);
    }

    #[test]
    fn refusals_are_named_by_status_and_reason() {
        assert_eq!(
            refusal(
                StatusCode::CONFLICT,
                r#"{"error":"busy","reason":"turn_running"}"#
            ),
            "409 turn_running"
        );
        assert_eq!(
            refusal(StatusCode::BAD_REQUEST, r#"{"error":"no message"}"#),
            "400 no message"
        );
        assert_eq!(refusal(StatusCode::BAD_GATEWAY, "<html>"), "502 no JSON refusal");
    }
}
