//! Request hygiene shared by every route: the origin check on cookie-authenticated writes, body
//! limits, JSON bodies with errors that say what is wrong, and the client address.

use axum::{
    body::Body,
    extract::Request,
    http::{HeaderMap, Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::DeserializeOwned;

use crate::{config::Site, error::ApiError};

/// The largest JSON body of any route.
pub const JSON_LIMIT: usize = 64 * 1024;

/// The client's address, put on the request by whoever received it (the Lambda adapter from the
/// request context, the local server from the socket).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAddress(pub String);

/// The address used for the per-address quotas: the last entry of `header` when a trusted proxy
/// sets it (entries before the last are whatever the client sent), else the received address,
/// else a shared "unknown" bucket (never no limit at all). A port after the address is dropped.
pub fn client_address(
    request_address: Option<&ClientAddress>,
    headers: &HeaderMap,
    header: Option<&str>,
) -> String {
    let from_header = header.and_then(|name| {
        let value = headers.get(name)?.to_str().ok()?;
        let last = value.rsplit(',').next()?.trim();
        // CloudFront's viewer address always ends in the port, even for IPv6 without brackets.
        let with_port = name.eq_ignore_ascii_case("cloudfront-viewer-address");
        (!last.is_empty()).then(|| address_key_of(last, with_port))
    });
    from_header
        .or_else(|| request_address.map(|a| address_key_of(&a.0, false)))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The address a quota counts: without a port, and an IPv6 address as its /64 (one host holds a
/// whole /64, so counting single addresses would let it count itself many times).
fn address_key_of(text: &str, with_port: bool) -> String {
    use std::net::{IpAddr, SocketAddr};
    let text = text.trim();
    let ip = if with_port {
        text.rsplit_once(':')
            .map(|(ip, _)| ip.trim_start_matches('[').trim_end_matches(']'))
            .and_then(|ip| ip.parse::<IpAddr>().ok())
    } else {
        text.parse::<IpAddr>()
            .ok()
            .or_else(|| text.parse::<SocketAddr>().ok().map(|s| s.ip()))
    };
    match ip {
        Some(IpAddr::V6(v6)) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                v4.to_string()
            } else {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        }
        Some(IpAddr::V4(v4)) => v4.to_string(),
        None => text.to_owned(),
    }
}

/// Reads the whole body, refusing more than `limit` bytes with `413`.
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(ApiError::TooLarge { limit }),
        Err(e) => Err(ApiError::BadRequest(format!(
            "the request body could not be read: {e}"
        ))),
    }
}

/// A JSON body of type `T`, at most [`JSON_LIMIT`] bytes; `400` names the problem.
pub async fn json_body<T: DeserializeOwned>(body: Body) -> Result<T, ApiError> {
    let bytes = read_body(body, JSON_LIMIT).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::BadRequest("the request needs a JSON body".into()));
    }
    parse_json(&bytes)
}

/// A JSON body of type `T` when there is one; an empty (or blank) body is `T::default()`.
pub async fn optional_json_body<T: DeserializeOwned + Default>(body: Body) -> Result<T, ApiError> {
    let bytes = read_body(body, JSON_LIMIT).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    parse_json(&bytes)
}

/// `bytes` as `T`, refusing text PostgreSQL cannot store (a NUL character anywhere) before
/// anything reads it. JSON itself refuses unpaired surrogates and raw control characters.
fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        ApiError::BadRequest(format!(
            "the JSON body is not valid: {}",
            in_words(&e.to_string())
        ))
    })?;
    if has_nul(&value) {
        return Err(ApiError::BadRequest(
            "the JSON body contains the NUL character (\\u0000), which no text here may hold".into(),
        ));
    }
    serde_json::from_value(value).map_err(|e| {
        ApiError::BadRequest(format!(
            "the JSON body is not valid: {}",
            in_words(&e.to_string())
        ))
    })
}

fn has_nul(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(text) => text.contains('\0'),
        serde_json::Value::Array(items) => items.iter().any(has_nul),
        serde_json::Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

/// A deserializer's message for a person: the Rust names of types become what they are in JSON
/// (`expected struct ChatBody` → `expected an object`, `expected internally tagged enum Action` →
/// `expected one of the allowed values`, `expected u32` → `expected a whole number of at least 0`).
pub fn in_words(message: &str) -> String {
    const QUALIFIERS: [&str; 5] = [
        "internally tagged ",
        "adjacently tagged ",
        "untagged ",
        "tuple ",
        "unit ",
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    loop {
        let next = [("struct ", "an object"), ("enum ", "one of the allowed values")]
            .into_iter()
            .filter_map(|(word, words)| rest.find(word).map(|at| (at, word, words)))
            .min_by_key(|(at, ..)| *at);
        let Some((at, word, words)) = next else {
            break;
        };
        let before = rest.get(..at).unwrap_or_default();
        let before = QUALIFIERS
            .iter()
            .find_map(|q| before.strip_suffix(q))
            .unwrap_or(before);
        let after = rest.get(at + word.len()..).unwrap_or_default();
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        out.push_str(before);
        out.push_str(words);
        rest = after.get(name_len..).unwrap_or_default();
    }
    out.push_str(rest);
    numbers_in_words(&out)
}

/// `expected u32` and its kin in words.
fn numbers_in_words(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("expected ") {
        let (before, after) = rest.split_at(at + "expected ".len());
        out.push_str(before);
        let word_len = after
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(after.len());
        let words = match after.get(..word_len).unwrap_or_default() {
            "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number of at least 0",
            "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
            "f32" | "f64" => "a number",
            "char" => "a single character",
            _ => "",
        };
        if words.is_empty() {
            rest = after;
        } else {
            out.push_str(words);
            rest = after.get(word_len..).unwrap_or_default();
        }
    }
    out.push_str(rest);
    out
}

/// The query string of a request as `T`: like axum's `Query`, but a query it cannot read is a
/// JSON `400` in words (axum's own answer is plain text naming the failure), and a NUL (`%00`)
/// is refused before anything reads it.
#[derive(Debug, Clone, Copy, Default)]
pub struct QueryOf<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S> for QueryOf<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or_default();
        if query.to_ascii_lowercase().contains("%00") {
            return Err(ApiError::BadRequest(
                "the query string contains the NUL character (%00), which no text here may hold".into(),
            ));
        }
        // Through serde_path_to_error, so the refusal names the parameter (`limit: …`).
        let pairs = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(pairs).map(QueryOf).map_err(|e| {
            ApiError::BadRequest(format!(
                "the query string is not valid: {}",
                in_words(&e.to_string())
            ))
        })
    }
}

/// A JSON body as `T`, read as [`json_body`] reads it: at most [`JSON_LIMIT`] bytes, and a body
/// it cannot read is a `400` that says what is wrong.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonOf<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequest<S> for JsonOf<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        json_body(request.into_body()).await.map(JsonOf)
    }
}

/// An id a route's path names (`/api/runs/{id}`). One that is not an id names nothing the visitor
/// has: `404`, as an id of someone else's row is.
pub fn path_id<T: std::str::FromStr>(text: &str) -> Result<T, ApiError> {
    text.parse().map_err(|_| ApiError::NotFound)
}

/// [`path_id`] as an extractor, for a route that reads the id before anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdOf(pub uuid::Uuid);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for IdOf {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(text) = axum::extract::Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::NotFound)?;
        path_id(&text).map(IdOf)
    }
}

/// Refuses a state-changing request that does not show it comes from the site: its `Origin` must
/// be the site's, or, without an `Origin`, the browser's `Sec-Fetch-Site` must say `same-origin`.
/// The session cookie rides along on cross-site requests, so its writes must come from the site;
/// `Host` proves nothing (it names this server whoever sent the request), so it is not enough.
pub fn check_origin(method: &Method, headers: &HeaderMap, site: &Site) -> Result<(), ApiError> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let value = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_lowercase)
    };
    let fetch_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .map(str::to_lowercase);
    match (value(header::ORIGIN), fetch_site.as_deref()) {
        (Some(origin), _) if origin.trim_end_matches('/') == site.origin => Ok(()),
        (Some(origin), _) => Err(ApiError::Forbidden(format!(
            "requests from {origin} are not accepted"
        ))),
        (None, Some("same-origin")) => Ok(()),
        _ => Err(ApiError::Forbidden(
            "the request does not say it comes from the site: send the site's Origin header".into(),
        )),
    }
}

/// Refuses a body that is not said to be JSON on a route that reads JSON: a cross-site form can
/// send `text/plain` without a preflight, so JSON under another type is never read. Raw uploads
/// (`POST /api/uploads`) are the one route whose body is not JSON; an empty body needs no type.
pub fn check_json_type(
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    empty: bool,
) -> Result<(), ApiError> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) || empty || path == "/api/uploads" {
        return Ok(());
    }
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|essence| essence.trim().to_ascii_lowercase())
        .is_some_and(|essence| {
            essence == "application/json"
                || (essence.starts_with("application/") && essence.ends_with("+json"))
        });
    if is_json {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType(
            "this route reads JSON: send the body with Content-Type: application/json".into(),
        ))
    }
}

/// Middleware: [`check_json_type`] on every request.
pub async fn json_type_guard(request: Request, next: Next) -> Response {
    use axum::body::HttpBody as _;
    let empty = request.body().size_hint().exact() == Some(0);
    match check_json_type(request.method(), request.uri().path(), request.headers(), empty) {
        Ok(()) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

/// Middleware: [`check_origin`] against the site in the router's state.
pub async fn origin_guard(site: Site, request: Request, next: Next) -> Response {
    match check_origin(request.method(), request.headers(), &site) {
        Ok(()) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        Site::parse("https://kakeibo.example").unwrap_or_else(|e| panic!("{e}"))
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap_or_else(|_| panic!("{v}")));
        }
        h
    }

    #[test]
    fn writes_must_come_from_the_site() {
        let s = site();
        assert!(
            check_origin(
                &Method::POST,
                &headers(&[("origin", "https://kakeibo.example")]),
                &s
            )
            .is_ok()
        );
        assert!(check_origin(&Method::POST, &headers(&[("origin", "https://evil.example")]), &s).is_err());
        // Host names this server whoever sent the request: without Origin, only the browser's
        // own Sec-Fetch-Site: same-origin will do.
        assert!(check_origin(&Method::POST, &headers(&[("host", "kakeibo.example")]), &s).is_err());
        assert!(check_origin(&Method::POST, &headers(&[("sec-fetch-site", "same-origin")]), &s).is_ok());
        assert!(check_origin(&Method::POST, &headers(&[("sec-fetch-site", "same-site")]), &s).is_err());
        assert!(check_origin(&Method::POST, &headers(&[("sec-fetch-site", "cross-site")]), &s).is_err());
        assert!(check_origin(&Method::DELETE, &headers(&[("host", "evil.example")]), &s).is_err());
        assert!(check_origin(&Method::POST, &headers(&[]), &s).is_err());
        assert!(check_origin(&Method::GET, &headers(&[("origin", "https://evil.example")]), &s).is_ok());
    }

    #[test]
    fn json_routes_need_a_json_type() {
        let post = |pairs: &[(&'static str, &str)], path: &str, empty: bool| {
            check_json_type(&Method::POST, path, &headers(pairs), empty).is_ok()
        };
        assert!(post(&[("content-type", "application/json")], "/api/chat", false));
        assert!(post(
            &[("content-type", "Application/JSON; charset=utf-8")],
            "/api/chat",
            false
        ));
        assert!(post(
            &[("content-type", "application/merge-patch+json")],
            "/api/chat",
            false
        ));
        assert!(!post(&[("content-type", "text/plain")], "/api/chat", false));
        assert!(!post(
            &[("content-type", "application/x-www-form-urlencoded")],
            "/api/session/sign-in",
            false
        ));
        assert!(!post(&[], "/api/chat", false));
        assert!(post(&[], "/api/session", true), "no body, no type needed");
        assert!(
            post(&[("content-type", "text/csv")], "/api/uploads", false),
            "a raw upload"
        );
        assert!(!post(
            &[("content-type", "text/plain")],
            "/api/uploads/x/preview",
            false
        ));
        assert!(check_json_type(&Method::GET, "/api/runs", &headers(&[]), false).is_ok());
    }

    #[test]
    fn the_address_header_counts_only_when_configured_and_only_its_last_entry() {
        let h = headers(&[
            ("x-forwarded-for", "198.51.100.4, 10.0.0.1"),
            ("cloudfront-viewer-address", "2001:db8::7:46532"),
        ]);
        let received = ClientAddress("10.0.0.9".into());
        assert_eq!(
            client_address(Some(&received), &h, Some("x-forwarded-for")),
            "10.0.0.1"
        );
        assert_eq!(
            client_address(Some(&received), &h, Some("cloudfront-viewer-address")),
            "2001:db8:0:0::/64"
        );
        assert_eq!(client_address(Some(&received), &h, None), "10.0.0.9");
        assert_eq!(client_address(Some(&received), &h, Some("x-absent")), "10.0.0.9");
        assert_eq!(client_address(None, &HeaderMap::new(), None), "unknown");
        assert_eq!(address_key_of("203.0.113.7:443", true), "203.0.113.7");
        assert_eq!(address_key_of("[2001:db8::1]:443", true), "2001:db8:0:0::/64");
        assert_eq!(
            address_key_of("2001:db8:1:2:3:4:5:6:443", true),
            "2001:db8:1:2::/64"
        );
        assert_eq!(address_key_of("2001:db8:1:2:ffff::9", false), "2001:db8:1:2::/64");
        assert_eq!(address_key_of("::ffff:198.51.100.4", false), "198.51.100.4");
    }

    #[test]
    fn deserializer_messages_name_no_rust_type() {
        assert_eq!(
            in_words("invalid type: string \"x\", expected struct ChatBody at line 1"),
            "invalid type: string \"x\", expected an object at line 1"
        );
        assert_eq!(
            in_words("invalid type: integer `1`, expected internally tagged enum Action"),
            "invalid type: integer `1`, expected one of the allowed values"
        );
        assert_eq!(
            in_words("data did not match any variant of untagged enum Limit"),
            "data did not match any variant of one of the allowed values"
        );
        assert_eq!(
            in_words("limit: invalid digit found in string, expected i64"),
            "limit: invalid digit found in string, expected a whole number"
        );
        assert_eq!(in_words("expected a string"), "expected a string");
        assert_eq!(
            in_words("unknown field `x`, expected one of `message`"),
            "unknown field `x`, expected one of `message`"
        );
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_413_and_bad_json_says_why() {
        let big = Body::from(vec![b' '; 10]);
        assert!(matches!(
            read_body(big, 4).await,
            Err(ApiError::TooLarge { limit: 4 })
        ));
        let err = json_body::<serde_json::Value>(Body::from("{\"a\":")).await.err();
        assert!(
            matches!(&err, Some(ApiError::BadRequest(m)) if m.contains("EOF")),
            "{err:?}"
        );
        let err = json_body::<serde_json::Value>(Body::empty()).await.err();
        assert!(
            matches!(&err, Some(ApiError::BadRequest(m)) if m.contains("needs a JSON body")),
            "{err:?}"
        );
    }
}
