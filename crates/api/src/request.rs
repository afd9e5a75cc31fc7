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
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest(format!("the JSON body is not valid: {e}")))
}

/// A JSON body of type `T` when there is one; an empty (or blank) body is `T::default()`.
pub async fn optional_json_body<T: DeserializeOwned + Default>(body: Body) -> Result<T, ApiError> {
    let bytes = read_body(body, JSON_LIMIT).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest(format!("the JSON body is not valid: {e}")))
}

/// Refuses a state-changing request whose `Origin` (or, without one, `Host`) is not the site:
/// the session cookie rides along on cross-site requests, so its writes must come from the site.
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
    match (value(header::ORIGIN), value(header::HOST)) {
        (Some(origin), _) if origin.trim_end_matches('/') == site.origin => Ok(()),
        (Some(origin), _) => Err(ApiError::Forbidden(format!(
            "requests from {origin} are not accepted"
        ))),
        (None, Some(host)) if host == site.host => Ok(()),
        _ => Err(ApiError::Forbidden(
            "the request does not come from the site".into(),
        )),
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
        assert!(check_origin(&Method::POST, &headers(&[("host", "kakeibo.example")]), &s).is_ok());
        assert!(check_origin(&Method::DELETE, &headers(&[("host", "evil.example")]), &s).is_err());
        assert!(check_origin(&Method::POST, &headers(&[]), &s).is_err());
        assert!(check_origin(&Method::GET, &headers(&[("origin", "https://evil.example")]), &s).is_ok());
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
