//! The `eval` function under the Lambda runtime (a schedule's or the admin function's event in,
//! the run's summary out).

use std::{sync::Arc, time::SystemTime};

use kakeibo_api::lambda::{Warm, boot};
use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let answers = "the evaluation suite, on a schedule or when an operator starts it";
    let Some(state) = boot("eval", answers, Warm::BothPools).await? else {
        return Ok(());
    };
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
