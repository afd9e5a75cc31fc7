//! The `runs` function under the Lambda runtime (buffered responses).

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    kakeibo_api::telemetry::init("info");
    if kakeibo_api::lambda::help_requested(
        "runs",
        "the traces, the dashboard, conversations, the evaluation report, the tools",
    ) {
        return Ok(());
    }
    let state = kakeibo_api::State::new(kakeibo_api::Config::load().await?)?;
    // Its routes read as the visitor (app_user): the owner role's pool is never needed.
    state.warm_app_pool().await;
    kakeibo_api::lambda::run(kakeibo_runs::router(std::sync::Arc::new(state))).await
}
