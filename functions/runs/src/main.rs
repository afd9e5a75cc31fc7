//! The `runs` function under the Lambda runtime (buffered responses).

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let state = kakeibo_api::State::new(kakeibo_api::Config::load().await?)?;
    kakeibo_api::lambda::run(kakeibo_runs::router(std::sync::Arc::new(state))).await
}
