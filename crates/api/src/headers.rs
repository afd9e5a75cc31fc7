//! The security headers of every answer: a strict Content-Security-Policy (the site's pages get
//! one that lets them run only this site's own code and Cloudflare's bot check; the API's JSON
//! and streams one that lets them run nothing), no sniffing, no framing, no referrer, and HSTS
//! on an HTTPS site. `kakeibo-dev` sends the site's headers itself; in AWS the CDN's
//! response-headers policy in `infra/template.yaml` sends the same [`SITE_CSP`] with the pages
//! (a test holds the two equal) and the functions send the API's.

use axum::{
    extract::Request,
    http::{HeaderName, HeaderValue, header},
    middleware::Next,
    response::Response,
};

/// The pages' policy. Scripts: this site's modules and Cloudflare Turnstile's script (the bot
/// check), which also runs in its own frame. Styles: this site's, and the `style` attributes the
/// pages set. Fonts and images: this site's (and `data:` URLs the build inlines). Requests: this
/// site only. No plugins, no `<base>`, forms post here only, and no one frames the site.
pub const SITE_CSP: &str = "default-src 'self'; script-src 'self' https://challenges.cloudflare.com; \
     frame-src https://challenges.cloudflare.com; connect-src 'self'; img-src 'self' data:; \
     style-src 'self' 'unsafe-inline'; font-src 'self' data:; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// The API's policy: its answers are data, never a document that runs or loads anything.
pub const API_CSP: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// How long a browser keeps to HTTPS for the site once told (two years).
const HSTS: &str = "max-age=63072000; includeSubDomains";

/// Middleware: the security headers on every answer (a header a handler set is kept). `https`
/// adds HSTS.
pub async fn security_headers(https: bool, request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let csp = if api { API_CSP } else { SITE_CSP };
    let pairs: [(HeaderName, &'static str); 5] = [
        (header::CONTENT_SECURITY_POLICY, csp),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (
            HeaderName::from_static("permissions-policy"),
            "camera=(), microphone=(), geolocation=(), payment=()",
        ),
    ];
    for (name, value) in pairs {
        headers.entry(name).or_insert(HeaderValue::from_static(value));
    }
    if https {
        headers
            .entry(header::STRICT_TRANSPORT_SECURITY)
            .or_insert(HeaderValue::from_static(HSTS));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policies_are_valid_header_values_with_no_unsafe_scripts() {
        for csp in [SITE_CSP, API_CSP] {
            assert!(HeaderValue::from_str(csp).is_ok(), "{csp}");
            assert!(!csp.contains("unsafe-eval"), "{csp}");
            assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        }
        let scripts = SITE_CSP
            .split(';')
            .find(|d| d.trim().starts_with("script-src"))
            .unwrap_or_default();
        assert!(!scripts.contains("unsafe-inline"), "{scripts}");
    }
}
