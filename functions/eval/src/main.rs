//! The `eval` function under the Lambda runtime (a schedule's or the admin function's event in,
//! the run's summary out).

use std::{sync::Arc, time::SystemTime};

use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    kakeibo_api::telemetry::init("info");
    if kakeibo_api::lambda::help_requested(
        "eval",
        "the evaluation suite, on a schedule or when an operator starts it",
    ) {
        return Ok(());
    }
    let state = kakeibo_api::State::new(kakeibo_api::Config::load().await?)?;
    state.warm_pools().await;
    let state = Arc::new(state);
    lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| {
        let state = Arc::clone(&state);
        async move {
            let deadline = kakeibo_eval::task_deadline(event.context.deadline, SystemTime::now());
            let var = |name: &str| state.config.var(name);
            kakeibo_eval::handle(&state.app, &var, &event.payload, Some(deadline))
                .await
                .map_err(lambda_runtime::Error::from)
        }
    }))
    .await
}
