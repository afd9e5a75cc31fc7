//! Google sign-in (OpenID Connect) against a local stand-in identity provider that serves a real
//! discovery document, a JWKS and a token endpoint which checks the client, the redirect URI and
//! the PKCE verifier as Google's does. The test plays the person on the consent page: it reads the
//! authorization request the site sent the browser to, and issues a code whose ID token it signs —
//! properly, or forged, expired, for another audience, issuer or nonce.
//!
//! The RSA keys under `tests/fixtures/oidc/` were made for this suite and sign nothing else.

use crate::support;

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use axum::{Json, Router, http::StatusCode, routing::get, routing::post};
use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Answer, Isolation, TestApp, serve, state};

const CLIENT_ID: &str = "kakeibo-test.apps.example";
const CLIENT_SECRET: &str = "stand-in-client-secret";
const FIXTURES: &str = "crates/devserver/tests/fixtures/oidc";

/// A code the person's consent produced: what the token endpoint checks, and the ID token it gives.
struct Grant {
    challenge: String,
    redirect_uri: String,
    id_token: String,
}

type Grants = Arc<Mutex<BTreeMap<String, Grant>>>;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(support::repo_root().join(FIXTURES).join(name)).unwrap()
}

/// The stand-in identity provider: its issuer URL and the codes it will honour.
async fn identity_provider() -> (String, Grants) {
    let grants: Grants = Arc::default();
    let issuer = Arc::new(Mutex::new(String::new()));
    let (for_discovery, for_token) = (Arc::clone(&issuer), Arc::clone(&grants));
    let jwks: Value = serde_json::from_str(&fixture("issuer.jwks.json")).unwrap();
    let app = Router::new()
        .route(
            "/.well-known/openid-configuration",
            get(move || {
                let base = for_discovery.lock().unwrap().clone();
                async move {
                    Json(json!({
                        "issuer": base,
                        "authorization_endpoint": format!("{base}/authorize"),
                        "token_endpoint": format!("{base}/token"),
                        "jwks_uri": format!("{base}/jwks"),
                        "response_types_supported": ["code"],
                        "id_token_signing_alg_values_supported": ["RS256"],
                        "code_challenge_methods_supported": ["S256"],
                    }))
                }
            }),
        )
        .route("/jwks", get(move || async move { Json(jwks) }))
        .route(
            "/token",
            post(move |body: String| {
                let grants = Arc::clone(&for_token);
                async move {
                    let form: BTreeMap<String, String> = form_urlencoded::parse(body.as_bytes()).into_owned().collect();
                    let field = |k: &str| form.get(k).cloned().unwrap_or_default();
                    let refused = |why: &str| (StatusCode::BAD_REQUEST, Json(json!({"error": why})));
                    if field("client_id") != CLIENT_ID || field("client_secret") != CLIENT_SECRET {
                        return refused("invalid_client");
                    }
                    // A code is good once.
                    let Some(grant) = grants.lock().unwrap().remove(&field("code")) else {
                        return refused("invalid_grant");
                    };
                    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(field("code_verifier").as_bytes()));
                    if field("grant_type") != "authorization_code"
                        || field("redirect_uri") != grant.redirect_uri
                        || challenge != grant.challenge
                    {
                        return refused("invalid_grant");
                    }
                    (
                        StatusCode::OK,
                        Json(json!({"access_token": "unused", "token_type": "Bearer", "expires_in": 3599, "id_token": grant.id_token})),
                    )
                }
            }),
        );
    let base = serve(app).await;
    issuer.lock().unwrap().clone_from(&base);
    (base, grants)
}

/// What the person's Google account says, and how the stand-in signs it.
struct Consent {
    sub: &'static str,
    email: &'static str,
    email_verified: bool,
    key: &'static str,
    audience: &'static str,
    issuer: Option<String>,
    nonce: Option<&'static str>,
    expires_in: i64,
}

impl Consent {
    fn of(sub: &'static str, email: &'static str) -> Self {
        Self {
            sub,
            email,
            email_verified: true,
            key: "issuer.pem",
            audience: CLIENT_ID,
            issuer: None,
            nonce: None,
            expires_in: 3600,
        }
    }
}

struct Site {
    app: TestApp,
    issuer: String,
    grants: Grants,
    /// Where the site's mail goes.
    outbox: std::path::PathBuf,
}

impl Site {
    /// `GET /api/session/google/start` from the visit `cookie`: the authorization request's
    /// parameters, and the flow cookie.
    async fn start(&self, cookie: Option<&str>) -> (BTreeMap<String, String>, String) {
        let started = self.app.get("/api/session/google/start", cookie).await;
        assert_eq!(started.status, StatusCode::SEE_OTHER, "{}", started.body);
        let location = reqwest::Url::parse(started.headers["location"].to_str().unwrap()).unwrap();
        assert!(
            location
                .as_str()
                .starts_with(&format!("{}/authorize?", self.issuer))
        );
        let params: BTreeMap<String, String> = location.query_pairs().into_owned().collect();
        let flow = started
            .headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap())
            .find(|v| v.starts_with("__Secure-kakeibo_google="))
            .unwrap();
        assert!(
            flow.contains("HttpOnly") && flow.contains("SameSite=Lax"),
            "{flow}"
        );
        (params, flow.split(';').next().unwrap().to_owned())
    }

    /// The person consents: a code whose ID token says `consent`.
    fn consent(&self, params: &BTreeMap<String, String>, consent: &Consent) -> String {
        let now = chrono::Utc::now().timestamp();
        let claims = json!({
            "iss": consent.issuer.clone().unwrap_or_else(|| self.issuer.clone()),
            "aud": consent.audience,
            "sub": consent.sub,
            "email": consent.email,
            "email_verified": consent.email_verified,
            "nonce": consent.nonce.unwrap_or(&params["nonce"]),
            "iat": now - 10,
            "exp": now + consent.expires_in,
        });
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("stand-in-1".into());
        let key = EncodingKey::from_rsa_pem(fixture(consent.key).as_bytes()).unwrap();
        let code = uuid::Uuid::new_v4().to_string();
        self.grants.lock().unwrap().insert(
            code.clone(),
            Grant {
                challenge: params["code_challenge"].clone(),
                redirect_uri: params["redirect_uri"].clone(),
                id_token: encode(&header, &claims, &key).unwrap(),
            },
        );
        code
    }

    /// The browser back at the callback with `query`, carrying `cookies`.
    async fn callback(&self, query: &str, cookies: &[&str]) -> Answer {
        let cookie = cookies.join("; ");
        self.app
            .get(
                &format!("/api/session/google/callback?{query}"),
                (!cookie.is_empty()).then_some(cookie.as_str()),
            )
            .await
    }

    /// A whole sign-in from the visit `cookie` with `consent`: the callback's answer.
    async fn sign_in(&self, cookie: Option<&str>, consent: &Consent) -> Answer {
        let (params, flow) = self.start(cookie).await;
        let code = self.consent(&params, consent);
        let mut cookies = vec![flow.as_str()];
        cookies.extend(cookie);
        self.callback(&format!("code={code}&state={}", params["state"]), &cookies)
            .await
    }
}

fn refused_with(answer: &Answer, reason: &str) {
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert_eq!(
        answer.headers["location"].to_str().unwrap(),
        format!("/sign-in?error={reason}")
    );
    assert!(
        answer.session_cookie().is_none(),
        "no session for a refused sign-in"
    );
}

async fn site(connect: &PgConnectOptions) -> (Site, Arc<kakeibo_api::State>) {
    let (issuer, grants) = identity_provider().await;
    let outbox = support::outbox();
    let state = state(
        connect,
        Isolation::Rls,
        &[
            ("GOOGLE_CLIENT_ID", CLIENT_ID),
            ("GOOGLE_CLIENT_SECRET", CLIENT_SECRET),
            ("GOOGLE_ISSUER", &issuer),
            ("MAIL_OUTBOX", outbox.to_str().unwrap()),
        ],
    )
    .await;
    let app = TestApp::new(&state);
    (
        Site {
            app,
            issuer,
            grants,
            outbox,
        },
        state,
    )
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_visitor_signs_in_with_google_and_keeps_what_they_did(_: PgPoolOptions, connect: PgConnectOptions) {
    let (site, state) = site(&connect).await;
    assert_eq!(
        site.app.get("/api/session", None).await.json()["google_sign_in"],
        true
    );

    // An anonymous visitor with a conversation signs in: PKCE S256, state and nonce were sent.
    let (visit, _) = site.app.visitor("how much did I spend?").await;
    let (params, _) = site.start(Some(&visit)).await;
    assert_eq!(params["code_challenge_method"], "S256");
    assert_eq!(params["client_id"], CLIENT_ID);
    assert_eq!(params["scope"], "openid email");
    assert_eq!(
        params["redirect_uri"],
        "https://kakeibo.example/api/session/google/callback"
    );
    assert!(params["state"].len() >= 32 && params["nonce"].len() >= 32);
    let signed_in = site
        .sign_in(Some(&visit), &Consent::of("google-sub-1", "Person@Gmail.example"))
        .await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    assert_eq!(signed_in.headers["location"], "/chat");
    let account = signed_in.session_cookie().unwrap();
    let session = site.app.get("/api/session", Some(&account)).await.json();
    assert_eq!(session["visitor"]["email"], "person@gmail.example");
    assert_eq!(session["visitor"]["anonymous"], false);
    assert_eq!(
        site.app.conversations(Some(&account)).await.json()["conversations"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "the visitor's conversation is the account's"
    );

    // Another visit, the same Google account: the same kakeibo account, with this visit's work.
    let (second, _) = site.app.visitor("anything unusual?").await;
    let again = site
        .sign_in(
            Some(&second),
            &Consent::of("google-sub-1", "person@gmail.example"),
        )
        .await;
    let again = again.session_cookie().unwrap();
    let session = site.app.get("/api/session", Some(&again)).await.json();
    assert_eq!(session["visitor"]["email"], "person@gmail.example");
    assert_eq!(
        site.app.conversations(Some(&again)).await.json()["conversations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let linked: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE google_sub = 'google-sub-1'")
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(linked, 1);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn forged_expired_and_mismatched_answers_are_refused(_: PgPoolOptions, connect: PgConnectOptions) {
    let (site, state) = site(&connect).await;
    let accounts = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM users WHERE google_sub IS NOT NULL")
            .fetch_one(state.owner_pool.get())
            .await
            .unwrap()
    };
    let base = || Consent::of("google-sub-2", "someone@gmail.example");
    let cases: Vec<(&str, Consent, &str)> = vec![
        (
            "signed with a key the issuer does not publish",
            Consent {
                key: "forger.pem",
                ..base()
            },
            "google_token",
        ),
        (
            "expired an hour ago",
            Consent {
                expires_in: -3600,
                ..base()
            },
            "google_token",
        ),
        (
            "for another client",
            Consent {
                audience: "someone-else.apps.example",
                ..base()
            },
            "google_token",
        ),
        (
            "from another issuer",
            Consent {
                issuer: Some("https://accounts.evil.example".into()),
                ..base()
            },
            "google_token",
        ),
        (
            "for another flow's nonce",
            Consent {
                nonce: Some("not-this-flows-nonce"),
                ..base()
            },
            "google_token",
        ),
        (
            "with an unverified email",
            Consent {
                email_verified: false,
                ..base()
            },
            "google_unverified_email",
        ),
    ];
    for (what, consent, reason) in &cases {
        let answer = site.sign_in(None, consent).await;
        assert_eq!(
            answer.headers["location"].to_str().unwrap(),
            format!("/sign-in?error={reason}"),
            "{what}"
        );
        refused_with(&answer, reason);
    }

    // The flow itself: another state, no flow cookie, a forged flow cookie, a code used twice, a
    // verifier that is not the challenge's, and the person saying no.
    let (params, flow) = site.start(None).await;
    let code = site.consent(&params, &base());
    refused_with(
        &site.callback(&format!("code={code}&state=other"), &[&flow]).await,
        "google_flow",
    );
    let code = site.consent(&params, &base());
    refused_with(
        &site
            .callback(&format!("code={code}&state={}", params["state"]), &[])
            .await,
        "google_flow",
    );
    // One character in the middle of the signature changed (an edge character may carry only
    // padding bits, which decode the same).
    let (signed, signature) = flow.rsplit_once('.').unwrap();
    let middle = signature.len() / 2;
    let swapped = if &signature[middle..=middle] == "A" {
        "B"
    } else {
        "A"
    };
    let forged_flow = format!(
        "{signed}.{}{swapped}{}",
        &signature[..middle],
        &signature[middle + 1..]
    );
    refused_with(
        &site
            .callback(&format!("code={code}&state={}", params["state"]), &[&forged_flow])
            .await,
        "google_flow",
    );
    let (other_params, other_flow) = site.start(None).await;
    let code = site.consent(&other_params, &base());
    let query = format!("code={code}&state={}", other_params["state"]);
    // The flow cookie of another start names another state.
    let (_, stranger_flow) = site.start(None).await;
    refused_with(&site.callback(&query, &[&stranger_flow]).await, "google_flow");
    let used = site.callback(&query, &[&other_flow]).await;
    assert_eq!(used.headers["location"], "/chat", "{}", used.body);
    refused_with(&site.callback(&query, &[&other_flow]).await, "google_token");
    let (params, flow) = site.start(None).await;
    let code = site.consent(&params, &base());
    site.grants.lock().unwrap().get_mut(&code).unwrap().challenge = "not-the-verifiers".into();
    refused_with(
        &site
            .callback(&format!("code={code}&state={}", params["state"]), &[&flow])
            .await,
        "google_token",
    );
    refused_with(
        &site
            .callback(
                &format!("error=access_denied&state={}", params["state"]),
                &[&flow],
            )
            .await,
        "google_cancelled",
    );
    assert_eq!(accounts().await, 1, "only the one good sign-in made an account");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn an_operator_account_is_never_reached_through_google(_: PgPoolOptions, connect: PgConnectOptions) {
    let (site, state) = site(&connect).await;
    site.app.operator(&state, None).await;
    let answer = site
        .sign_in(None, &Consent::of("google-sub-3", "ops@kakeibo.example"))
        .await;
    refused_with(&answer, "password_only");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn off_without_a_client_id(_: PgPoolOptions, connect: PgConnectOptions) {
    let state = state(&connect, Isolation::Rls, &[]).await;
    let app = TestApp::new(&state);
    assert_eq!(
        app.get("/api/session", None).await.json()["google_sign_in"],
        false
    );
    assert_eq!(
        app.get("/api/session/google/start", None).await.status,
        StatusCode::NOT_FOUND
    );
}

/// The uploads a session sees, by file name.
async fn uploads_of(app: &TestApp, cookie: &str) -> Vec<String> {
    app.get("/api/uploads", Some(cookie)).await.json()["uploads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["filename"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Someone signs up with an address that is not theirs and waits. Its owner arrives through
/// Google with a statement of their own: they are not joined to that account (nor does the
/// statement go there), and a password reset by mail — which only the owner receives — takes the
/// account back, ending the stranger's sessions; from then on Google links.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn an_address_nobody_proved_is_never_joined_through_google(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (site, state) = site(&connect).await;
    let app = &site.app;
    let (stranger_visit, _) = app.visitor("hello").await;
    let claimed = app
        .post(
            "/api/session/sign-up",
            json!({"email": "victim@gmail.example", "password": "the stranger's password"}),
            Some(&stranger_visit),
        )
        .await;
    assert_eq!(claimed.status, StatusCode::OK, "{}", claimed.body);
    let stranger = claimed.session_cookie().unwrap();

    // The owner, anonymous, uploads a statement, then signs in with Google.
    let (owner_visit, _) = app.visitor("hi").await;
    let upload = app
        .upload(
            &owner_visit,
            "private.csv",
            b"Date,Description,Amount\n2026-11-02,Rent,-1200.00\n",
        )
        .await;
    assert_eq!(upload.status, StatusCode::CREATED, "{}", upload.body);
    let consent = Consent::of("google-sub-victim", "victim@gmail.example");
    let refused = site.sign_in(Some(&owner_visit), &consent).await;
    refused_with(&refused, "google_unproven");
    assert_eq!(
        uploads_of(app, &owner_visit).await,
        ["private.csv"],
        "the visit keeps its upload"
    );
    assert_eq!(app.visitor_of(&owner_visit).await["anonymous"], true);
    let (_, again) = app
        .sign_in("victim@gmail.example", "the stranger's password")
        .await;
    assert!(
        uploads_of(app, &again.unwrap()).await.is_empty(),
        "the stranger sees nothing of the owner's"
    );
    let linked: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE google_sub IS NOT NULL")
        .fetch_one(state.owner_pool.get())
        .await
        .unwrap();
    assert_eq!(linked, 0);

    // The owner resets the password by mail: the stranger's sessions and password are over.
    let asked = app
        .post(
            "/api/session/password-reset",
            json!({"email": "victim@gmail.example"}),
            None,
        )
        .await;
    assert_eq!(asked.status, StatusCode::ACCEPTED, "{}", asked.body);
    let token = support::mailed_token(&site.outbox, "victim@gmail.example", "reset");
    let reset = app
        .post(
            "/api/session/password-reset/confirm",
            json!({"token": token, "password": "the owner's own phrase"}),
            None,
        )
        .await;
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    assert_eq!(app.visitor_of(&stranger).await, Value::Null);
    let (status, _) = app
        .sign_in("victim@gmail.example", "the stranger's password")
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Now the address is proven, and Google joins the account.
    let joined = site.sign_in(Some(&owner_visit), &consent).await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER, "{}", joined.body);
    assert_eq!(joined.headers["location"], "/chat");
    let account = joined.session_cookie().unwrap();
    assert_eq!(app.visitor_of(&account).await["email"], "victim@gmail.example");
    assert_eq!(uploads_of(app, &account).await, ["private.csv"]);
}

/// A proven address links at once, and the link ends every other session of the account.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_link_to_a_proven_address_ends_every_other_session(_: PgPoolOptions, connect: PgConnectOptions) {
    let (site, _state) = site(&connect).await;
    let app = &site.app;
    let password_session = app
        .signed_up("proven@gmail.example", "a long enough password")
        .await;
    let token = support::mailed_token(&site.outbox, "proven@gmail.example", "verify");
    let verified = app
        .post("/api/session/verify-email", json!({"token": token}), None)
        .await;
    assert_eq!(verified.status, StatusCode::OK, "{}", verified.body);

    let joined = site
        .sign_in(None, &Consent::of("google-sub-proven", "proven@gmail.example"))
        .await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER, "{}", joined.body);
    assert_eq!(joined.headers["location"], "/chat");
    let google_session = joined.session_cookie().unwrap();
    assert_eq!(
        app.visitor_of(&google_session).await["email"],
        "proven@gmail.example"
    );
    assert_eq!(app.visitor_of(&password_session).await, Value::Null);
}

/// Signed in with the password, the person links Google to their own unproven address, which
/// Google then proves.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn signed_in_with_its_password_an_account_links_google(_: PgPoolOptions, connect: PgConnectOptions) {
    let (site, _state) = site(&connect).await;
    let app = &site.app;
    let session = app
        .signed_up("mine@gmail.example", "a long enough password")
        .await;
    assert_eq!(app.visitor_of(&session).await["email_verified"], false);
    let joined = site
        .sign_in(
            Some(&session),
            &Consent::of("google-sub-mine", "mine@gmail.example"),
        )
        .await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER, "{}", joined.body);
    assert_eq!(joined.headers["location"], "/chat");
    let renewed = joined.session_cookie().unwrap();
    assert_eq!(app.visitor_of(&renewed).await["email_verified"], true);
    // From elsewhere, Google alone reaches it now.
    let elsewhere = site
        .sign_in(None, &Consent::of("google-sub-mine", "mine@gmail.example"))
        .await;
    assert_eq!(elsewhere.headers["location"], "/chat");
}
