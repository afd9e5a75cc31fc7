//! Starting an evaluation run on the operator's request. In AWS the `eval` function is invoked
//! asynchronously (`InvocationType=Event`): the request returns at once and the run goes on in
//! its own invocation, with its own time limit. The local server runs the suite in-process
//! instead (see `kakeibo-devserver`).

use futures_util::future::BoxFuture;
use kakeibo_api::secrets::{SdkOptions, sdk_config};
use kakeibo_evals::launch::Invocation;

/// Something that starts an evaluation run and returns without waiting for it.
pub trait StartEval: Send + Sync + std::fmt::Debug {
    /// Starts a run for the operator `requested_by`; says how it was started, or why it was not.
    fn start<'a>(&'a self, requested_by: &'a str) -> BoxFuture<'a, Result<String, String>>;
}

/// The `eval` function, invoked asynchronously.
#[derive(Debug, Clone)]
pub struct LambdaInvoke {
    client: aws_sdk_lambda::Client,
    function: String,
}

impl LambdaInvoke {
    pub async fn new(options: &SdkOptions, function: impl Into<String>) -> Self {
        Self {
            client: aws_sdk_lambda::Client::new(&sdk_config(options).await),
            function: function.into(),
        }
    }
}

impl StartEval for LambdaInvoke {
    fn start<'a>(&'a self, requested_by: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let payload = serde_json::to_string(&Invocation::admin(requested_by)).unwrap_or_default();
            let out = self
                .client
                .invoke()
                .function_name(&self.function)
                .invocation_type(aws_sdk_lambda::types::InvocationType::Event)
                .payload(aws_sdk_lambda::primitives::Blob::new(payload))
                .send()
                .await
                .map_err(|e| format!("invoking {}: {}", self.function, aws_sdk_lambda::Error::from(e)))?;
            if out.status_code() == 202 {
                Ok(format!("the {} function was started", self.function))
            } else {
                Err(format!(
                    "invoking {} answered {} instead of 202 (accepted)",
                    self.function,
                    out.status_code()
                ))
            }
        })
    }
}

/// The starter the settings ask for: the function named by `EVAL_FUNCTION_NAME`, or none.
pub async fn from_settings(var: &dyn Fn(&str) -> Option<String>) -> Option<LambdaInvoke> {
    let function = var("EVAL_FUNCTION_NAME").filter(|f| !f.trim().is_empty())?;
    Some(LambdaInvoke::new(&SdkOptions::default(), function.trim()).await)
}
