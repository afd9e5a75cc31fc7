//! Loading the function's secret from Secrets Manager, and sending mail through SES, against a
//! real local `moto_server` (installed by `cargo xtask test` into the suite's Python environment).

use std::{
    collections::BTreeMap,
    process::{Child, Command, Stdio},
    time::Duration,
};

use kakeibo_api::{Config, ConfigError, secrets};

struct Moto {
    child: Child,
    endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `moto_server` on a free port, or `None` (said plainly) outside `cargo xtask test`.
async fn moto() -> Option<Moto> {
    let python = kakeibo_testkit::python("moto_server")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(python)
        .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("moto_server starts");
    let endpoint = format!("http://127.0.0.1:{port}");
    let moto = Moto { child, endpoint };
    for _ in 0..150 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return Some(moto);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("moto_server did not listen on {}", moto.endpoint);
}

fn options(endpoint: &str) -> secrets::SdkOptions {
    secrets::SdkOptions {
        endpoint: Some(endpoint.to_owned()),
        region: Some("eu-west-1".into()),
        static_credentials: Some(("test".into(), "test".into())),
    }
}

#[tokio::test]
async fn the_secret_fills_the_configuration() {
    let Some(moto) = moto().await else { return };
    let options = options(&moto.endpoint);
    let client = secrets::client(&options).await;
    let secret = serde_json::json!({
        "JWT_SECRET": "from-secrets-manager-0123456789abcdef0123",
        "RATE_LIMIT_SALT": "salt-from-the-secret",
        "DATABASE_URL": "postgres://kakeibo:pw@db.internal/kakeibo",
        "APP_DATABASE_URL": "postgres://app_user:pw@db.internal/kakeibo",
        "GEMINI_API_KEY": "a-key",
        "GLOBAL_DAILY_BUDGET_USD": 2.5
    });
    let created = client
        .create_secret()
        .name("kakeibo/app")
        .secret_string(secret.to_string())
        .send()
        .await
        .expect("moto creates the secret");
    let arn = created.arn().unwrap().to_owned();

    let vars = secrets::fetch(&arn, &options).await.expect("the secret is read");
    assert_eq!(vars["JWT_SECRET"], "from-secrets-manager-0123456789abcdef0123");
    assert_eq!(vars["GLOBAL_DAILY_BUDGET_USD"], "2.5");

    // The secret's values win over the environment's.
    let mut env: BTreeMap<String, String> = BTreeMap::from([
        (
            "JWT_SECRET".into(),
            "from-the-environment-0123456789abcdef".into(),
        ),
        ("SITE_URL".into(), "https://kakeibo.example".into()),
        ("KAKEIBO_PROVIDER".into(), "gemini".into()),
    ]);
    env.extend(vars);
    let config = Config::from_vars(env).expect("a complete configuration");
    assert_eq!(config.jwt_secret, "from-secrets-manager-0123456789abcdef0123");
    assert_eq!(
        config.app_database_url.as_deref(),
        Some("postgres://app_user:pw@db.internal/kakeibo")
    );
    assert!((config.quotas.global_daily_usd - 2.5).abs() < f64::EPSILON);
    assert_eq!(config.var("GEMINI_API_KEY").as_deref(), Some("a-key"));

    // By name works as well as by ARN.
    assert!(secrets::fetch("kakeibo/app", &options).await.is_ok());
}

#[tokio::test]
async fn a_missing_or_malformed_secret_is_a_clear_error() {
    let Some(moto) = moto().await else { return };
    let options = options(&moto.endpoint);
    let missing = secrets::fetch("kakeibo/nothing-here", &options).await;
    assert!(
        matches!(&missing, Err(ConfigError::Secret { arn, why }) if arn == "kakeibo/nothing-here" && why.contains("ResourceNotFound")),
        "{missing:?}"
    );
    let client = secrets::client(&options).await;
    client
        .create_secret()
        .name("kakeibo/not-json")
        .secret_string("JWT_SECRET=oops")
        .send()
        .await
        .unwrap();
    let malformed = secrets::fetch("kakeibo/not-json", &options).await;
    assert!(
        matches!(&malformed, Err(ConfigError::Secret { why, .. }) if why.contains("not JSON")),
        "{malformed:?}"
    );
}

#[tokio::test]
async fn database_roles_and_the_origin_header_come_from_their_own_secrets() {
    let Some(moto) = moto().await else { return };
    let options = options(&moto.endpoint);
    let client = secrets::client(&options).await;
    let mut arns = Vec::new();
    for (name, value) in [
        (
            "kakeibo/db-owner",
            r#"{"username":"app_owner","password":"p@ss/word:1"}"#,
        ),
        ("kakeibo/db-app", r#"{"username":"app_user","password":"s3cret"}"#),
        ("kakeibo/origin-verify", "a-long-random-header-value"),
    ] {
        let created = client
            .create_secret()
            .name(name)
            .secret_string(value)
            .send()
            .await
            .unwrap();
        arns.push(created.arn().unwrap().to_owned());
    }
    let vars: BTreeMap<String, String> = BTreeMap::from([
        ("DB_OWNER_SECRET_ARN".into(), arns[0].clone()),
        ("DB_APP_SECRET_ARN".into(), arns[1].clone()),
        ("ORIGIN_VERIFY_SECRET_ARN".into(), arns[2].clone()),
        ("DB_HOST".into(), "proxy.internal".into()),
        ("DB_NAME".into(), "kakeibo".into()),
    ]);
    let resolved = kakeibo_api::config::resolve_secrets(vars, &options)
        .await
        .unwrap();
    assert_eq!(
        resolved["DATABASE_URL"],
        "postgres://app_owner:p%40ss%2Fword%3A1@proxy.internal:5432/kakeibo?sslmode=require"
    );
    assert_eq!(
        resolved["APP_DATABASE_URL"],
        "postgres://app_user:s3cret@proxy.internal:5432/kakeibo?sslmode=require"
    );
    assert_eq!(resolved["ORIGIN_VERIFY"], "a-long-random-header-value");

    // A role secret without a password, or no DB_HOST, is named plainly.
    let broken = client
        .create_secret()
        .name("kakeibo/db-broken")
        .secret_string(r#"{"username":"x"}"#)
        .send()
        .await
        .unwrap();
    let vars = BTreeMap::from([
        ("DB_APP_SECRET_ARN".to_owned(), broken.arn().unwrap().to_owned()),
        ("DB_HOST".to_owned(), "proxy.internal".to_owned()),
    ]);
    let err = kakeibo_api::config::resolve_secrets(vars, &options)
        .await
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref().is_some_and(|e| e.contains("no password")),
        "{err:?}"
    );
    let vars = BTreeMap::from([("DB_APP_SECRET_ARN".to_owned(), arns[1].clone())]);
    let err = kakeibo_api::config::resolve_secrets(vars, &options)
        .await
        .err()
        .map(|e| e.to_string());
    assert_eq!(err.as_deref(), Some("DB_HOST is not set"));
}

#[tokio::test]
async fn mail_goes_through_ses_from_a_verified_sender_only() {
    use kakeibo_api::mail::{Mail, MailSettings};
    use kakeibo_auth::proofs::{Mailable, Purpose};
    let Some(moto) = moto().await else { return };
    let options = options(&moto.endpoint);
    let settings = MailSettings::from_settings(|name| {
        (name == "MAIL_FROM").then(|| "kakeibo <no-reply@kakeibo.example>".to_owned())
    })
    .unwrap()
    .unwrap();
    let mailer = settings.mailer(&options).await;
    let mail = Mail::of(
        &Mailable {
            to: "ana@example.com".into(),
            token: "TOKEN".into(),
            purpose: Purpose::Reset,
        },
        "https://kakeibo.example",
    );
    let refused = mailer
        .send(&mail)
        .await
        .expect_err("SES refuses a sender it has not verified");
    assert!(refused.to_string().contains("SES"), "{refused}");

    let ses = aws_sdk_sesv2::Client::new(&secrets::sdk_config(&options).await);
    ses.create_email_identity()
        .email_identity("no-reply@kakeibo.example")
        .send()
        .await
        .expect("moto makes the identity");
    mailer
        .send(&mail)
        .await
        .expect("SES takes the mail from a verified sender");
}
