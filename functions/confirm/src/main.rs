//! The `confirm` function under the Lambda runtime (response streaming).

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    kakeibo_api::telemetry::init("info");
    if kakeibo_api::lambda::help_requested("confirm", "POST /api/confirm") {
        return Ok(());
    }
    let state = kakeibo_api::State::new(kakeibo_api::Config::load().await?)?;
    state.warm_pools().await;
    kakeibo_api::lambda::run_streaming(kakeibo_confirm::router(std::sync::Arc::new(state))).await
}
