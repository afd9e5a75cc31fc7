//! The `reap` function under the Lambda runtime (a scheduled event in, the counts out).

use kakeibo_api::lambda::{Warm, boot};
use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let Some(state) = boot("reap", "the nightly housekeeping, on a schedule", Warm::BothPools).await? else {
        return Ok(());
    };
    let pool = state.owner_pool.clone();
    lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| {
        let pool = pool.clone();
        async move {
            kakeibo_reap::handle(&pool, event.payload)
                .await
                .map_err(lambda_runtime::Error::from)
        }
    }))
    .await
}
