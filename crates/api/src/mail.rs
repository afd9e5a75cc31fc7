//! Mail to a person's address: the link that proves it and the password-reset link.
//!
//! Two ways out, chosen by the settings:
//! - `MAIL_OUTBOX=DIR` (the local site): each mail is written to `DIR` as one JSON file
//!   (`{to, subject, text, link, purpose}`), newest last by name, where a developer — and the
//!   tests — read it. Nothing leaves the machine.
//! - `MAIL_FROM=ADDRESS` (a deployment): Amazon SES (`SendEmail` of the v2 API) from that verified
//!   sender, with the function's role. The SDK's standard `AWS_ENDPOINT_URL` points it elsewhere
//!   (the suite's `moto_server`).
//!
//! With neither, mail is off: sign-up still works (the address stays unproven), and the routes
//! that only send mail answer `503 {reason: mail_off}` — said plainly, never faked.

use std::path::PathBuf;

use kakeibo_auth::proofs::{Mailable, Purpose};

use crate::config::ConfigError;
use crate::secrets::{SdkOptions, sdk_config};

/// One mail, plain text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub text: String,
    /// The one link in it (the outbox keeps it apart, so a reader need not parse the text).
    pub link: String,
    pub purpose: &'static str,
}

impl Mail {
    /// The mail that carries `mailable`'s link to this site's page for it.
    pub fn of(mailable: &Mailable, site_origin: &str) -> Self {
        match mailable.purpose {
            Purpose::Verify => {
                let link = format!("{site_origin}/verify-email#token={}", mailable.token);
                Self {
                    to: mailable.to.clone(),
                    subject: "Confirm your address for kakeibo".into(),
                    text: format!(
                        "Someone — we hope you — made a kakeibo account with this address.\n\n\
                         To confirm it is yours, open this link within 48 hours:\n\n{link}\n\n\
                         If it was not you, ignore this mail: an address nobody confirms is never \
                         joined to a Google sign-in, and you can take the account over with \
                         \"Forgot your password?\" on the sign-in page.\n"
                    ),
                    link,
                    purpose: "verify",
                }
            }
            Purpose::Reset => {
                let link = format!("{site_origin}/reset-password#token={}", mailable.token);
                Self {
                    to: mailable.to.clone(),
                    subject: "Reset your kakeibo password".into(),
                    text: format!(
                        "A new password was asked for the kakeibo account of this address.\n\n\
                         To set one, open this link within an hour:\n\n{link}\n\n\
                         Setting it signs the account out everywhere. If you did not ask, ignore \
                         this mail: your password stays as it is.\n"
                    ),
                    link,
                    purpose: "reset",
                }
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("writing to the outbox {path}: {source}")]
    Outbox {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("Amazon SES refused the mail: {0}")]
    Ses(String),
}

/// Where mail goes.
#[derive(Debug, Clone)]
pub enum Mailer {
    /// A folder of JSON files (the local site).
    Outbox(PathBuf),
    /// Amazon SES from a verified sender.
    Ses {
        client: aws_sdk_sesv2::Client,
        from: String,
    },
}

/// The mail settings as read: resolved into a [`Mailer`] once the SDK may be asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailSettings {
    Outbox(PathBuf),
    Ses { from: String },
}

impl MailSettings {
    /// `MAIL_OUTBOX` wins over `MAIL_FROM`; `None`: mail is off.
    pub fn from_settings(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, ConfigError> {
        if let Some(dir) = get("MAIL_OUTBOX") {
            return Ok(Some(Self::Outbox(PathBuf::from(dir))));
        }
        let Some(from) = get("MAIL_FROM") else {
            return Ok(None);
        };
        let address = from
            .rsplit_once('<')
            .map_or(from.as_str(), |(_, rest)| rest.trim_end_matches('>'));
        if kakeibo_auth::visitors::normalise_email(address).is_err() {
            return Err(ConfigError::Invalid {
                name: "MAIL_FROM",
                why: "expected an address, or a name and <address>".into(),
            });
        }
        Ok(Some(Self::Ses { from }))
    }

    /// The mailer these settings name (an SES client from the SDK's defaults and `sdk`).
    pub async fn mailer(&self, sdk: &SdkOptions) -> Mailer {
        match self {
            Self::Outbox(dir) => Mailer::Outbox(dir.clone()),
            Self::Ses { from } => Mailer::Ses {
                client: aws_sdk_sesv2::Client::new(&sdk_config(sdk).await),
                from: from.clone(),
            },
        }
    }
}

impl Mailer {
    /// Sends `mail`. Neither the address nor the link is logged.
    pub async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        match self {
            Self::Outbox(dir) => write_outbox(dir, mail).await,
            Self::Ses { client, from } => send_ses(client, from, mail).await,
        }
    }
}

async fn write_outbox(dir: &std::path::Path, mail: &Mail) -> Result<(), MailError> {
    let fail = |path: PathBuf| move |source| MailError::Outbox { path, source };
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(fail(dir.to_owned()))?;
    let name = format!(
        "{}-{}-{}.json",
        chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ"),
        mail.purpose,
        uuid::Uuid::new_v4().simple()
    );
    let path = dir.join(name);
    let body = serde_json::to_vec_pretty(mail).unwrap_or_default();
    tokio::fs::write(&path, body).await.map_err(fail(path.clone()))?;
    tracing::info!(purpose = mail.purpose, file = %path.display(), "a mail was written to the outbox");
    Ok(())
}

async fn send_ses(client: &aws_sdk_sesv2::Client, from: &str, mail: &Mail) -> Result<(), MailError> {
    use aws_sdk_sesv2::types::{Body, Content, Destination, EmailContent, Message};
    let content = |text: &str| {
        Content::builder()
            .data(text)
            .charset("UTF-8")
            .build()
            .map_err(|e| MailError::Ses(e.to_string()))
    };
    let message = Message::builder()
        .subject(content(&mail.subject)?)
        .body(Body::builder().text(content(&mail.text)?).build())
        .build();
    let sent = client
        .send_email()
        .from_email_address(from)
        .destination(Destination::builder().to_addresses(&mail.to).build())
        .content(EmailContent::builder().simple(message).build())
        .send()
        .await
        .map_err(|e| MailError::Ses(aws_sdk_sesv2::error::DisplayErrorContext(&e).to_string()))?;
    tracing::info!(
        purpose = mail.purpose,
        message_id = sent.message_id().unwrap_or_default(),
        "a mail was sent through SES"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mailable(purpose: Purpose) -> Mailable {
        Mailable {
            to: "ana@example.com".into(),
            token: "TOKEN".into(),
            purpose,
        }
    }

    #[test]
    fn links_carry_the_token_in_the_fragment_to_this_sites_pages() {
        let verify = Mail::of(&mailable(Purpose::Verify), "https://kakeibo.example");
        assert_eq!(verify.link, "https://kakeibo.example/verify-email#token=TOKEN");
        assert!(verify.text.contains(&verify.link));
        let reset = Mail::of(&mailable(Purpose::Reset), "https://kakeibo.example");
        assert_eq!(reset.link, "https://kakeibo.example/reset-password#token=TOKEN");
        assert_eq!(reset.to, "ana@example.com");
    }

    #[test]
    fn the_outbox_wins_and_a_sender_must_be_an_address() {
        let settings = |pairs: &'static [(&'static str, &'static str)]| {
            MailSettings::from_settings(|name| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            })
        };
        assert_eq!(settings(&[]).ok(), Some(None));
        assert!(matches!(
            settings(&[("MAIL_OUTBOX", "/tmp/o"), ("MAIL_FROM", "a@b.co")]),
            Ok(Some(MailSettings::Outbox(_)))
        ));
        assert!(matches!(
            settings(&[("MAIL_FROM", "kakeibo <no-reply@kakeibo.example>")]),
            Ok(Some(MailSettings::Ses { .. }))
        ));
        assert!(settings(&[("MAIL_FROM", "nobody")]).is_err());
    }

    #[tokio::test]
    async fn the_outbox_keeps_each_mail_as_a_file() {
        let dir = std::env::temp_dir().join(format!("kakeibo-outbox-{}", uuid::Uuid::new_v4()));
        let mailer = Mailer::Outbox(dir.clone());
        let mail = Mail::of(&mailable(Purpose::Reset), "http://127.0.0.1:3000");
        assert!(mailer.send(&mail).await.is_ok());
        let files: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        assert_eq!(files.len(), 1);
        let kept: serde_json::Value = files
            .first()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        assert_eq!(kept["link"], "http://127.0.0.1:3000/reset-password#token=TOKEN");
        assert_eq!(kept["to"], "ana@example.com");
        let _ = std::fs::remove_dir_all(dir);
    }
}
