//! The `reap` function under the Lambda runtime (a scheduled event in, the counts out).

use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    kakeibo_api::telemetry::init("info");
    if kakeibo_api::lambda::help_requested("reap", "the nightly housekeeping, on a schedule") {
        return Ok(());
    }
    let state = kakeibo_api::State::new(kakeibo_api::Config::load().await?)?;
    state.warm_pools().await;
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
