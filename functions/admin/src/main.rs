//! The `admin` function under the Lambda runtime (buffered responses).

use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    kakeibo_api::telemetry::init("info");
    if kakeibo_api::lambda::help_requested("admin", "the operator's overview and actions") {
        return Ok(());
    }
    let state = kakeibo_api::State::new(kakeibo_api::Config::load().await?)?;
    state.warm_pools().await;
    let state = Arc::new(state);
    let evals = kakeibo_admin::evals::from_settings(&|name| state.config.var(name))
        .await
        .map(|invoke| Arc::new(invoke) as Arc<dyn kakeibo_admin::evals::StartEval>);
    kakeibo_api::lambda::run(kakeibo_admin::router(kakeibo_admin::Admin { state, evals })).await
}
