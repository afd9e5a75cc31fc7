//! The function's secret: one Secrets Manager secret holding a JSON object of settings.

use std::collections::BTreeMap;

use aws_config::{BehaviorVersion, Region};
use aws_sdk_secretsmanager::config::Credentials;

use crate::config::ConfigError;

/// Overrides for the SDK's defaults (tests point it at a local server with fixed credentials;
/// in Lambda everything comes from the execution role and the environment).
#[derive(Debug, Clone, Default)]
pub struct SdkOptions {
    pub endpoint: Option<String>,
    pub region: Option<String>,
    /// (access key id, secret access key).
    pub static_credentials: Option<(String, String)>,
}

/// The SDK's configuration: its defaults (the execution role, the region of the environment)
/// with `options` over them. Every AWS client of kakeibo starts here.
pub async fn sdk_config(options: &SdkOptions) -> aws_config::SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(endpoint) = &options.endpoint {
        loader = loader.endpoint_url(endpoint);
    }
    if let Some(region) = &options.region {
        loader = loader.region(Region::new(region.clone()));
    }
    if let Some((id, secret)) = &options.static_credentials {
        loader = loader.credentials_provider(Credentials::new(id, secret, None, None, "kakeibo-static"));
    }
    loader.load().await
}

/// A Secrets Manager client configured by `options` over the SDK's defaults.
pub async fn client(options: &SdkOptions) -> aws_sdk_secretsmanager::Client {
    aws_sdk_secretsmanager::Client::new(&sdk_config(options).await)
}

/// The settings in the secret `arn`: a JSON object whose string values are settings (numbers and
/// booleans are taken as their text; nested values are refused).
pub async fn fetch(arn: &str, options: &SdkOptions) -> Result<BTreeMap<String, String>, ConfigError> {
    let text = fetch_string(arn, options).await?;
    parse(&text).map_err(|why| ConfigError::Secret {
        arn: arn.to_owned(),
        why,
    })
}

/// The text of a secret (a single value, not a JSON object).
pub async fn fetch_string(arn: &str, options: &SdkOptions) -> Result<String, ConfigError> {
    let out = client(options)
        .await
        .get_secret_value()
        .secret_id(arn)
        .send()
        .await
        .map_err(|e| ConfigError::Secret {
            arn: arn.to_owned(),
            why: aws_sdk_secretsmanager::Error::from(e).to_string(),
        })?;
    out.secret_string()
        .map(str::to_owned)
        .ok_or_else(|| ConfigError::Secret {
            arn: arn.to_owned(),
            why: "the secret has no string value".into(),
        })
}

/// The settings in a secret's JSON text.
pub fn parse(text: &str) -> Result<BTreeMap<String, String>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("the secret is not JSON: {e}"))?;
    let object = value
        .as_object()
        .ok_or_else(|| "the secret must be a JSON object of settings".to_owned())?;
    object
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
            serde_json::Value::Number(n) => Ok((k.clone(), n.to_string())),
            serde_json::Value::Bool(b) => Ok((k.clone(), b.to_string())),
            _ => Err(format!("the setting {k} must be a string")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_a_flat_object_of_settings() {
        let vars = parse(r#"{"JWT_SECRET":"s","GLOBAL_DAILY_BUDGET_USD":1.5,"EXPLICIT_CACHE":false}"#)
            .unwrap_or_default();
        assert_eq!(vars["JWT_SECRET"], "s");
        assert_eq!(vars["GLOBAL_DAILY_BUDGET_USD"], "1.5");
        assert_eq!(vars["EXPLICIT_CACHE"], "false");
        assert!(parse(r#"{"A":{"b":1}}"#).is_err());
        assert!(parse("[1]").is_err());
        assert!(parse("not json").is_err());
    }
}
