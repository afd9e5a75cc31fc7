//! The `admin` function under the Lambda runtime (buffered responses).

use kakeibo_api::lambda::{Warm, boot, run};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let Some(state) = boot("admin", "the operator's overview and actions", Warm::BothPools).await? else {
        return Ok(());
    };
    let evals = kakeibo_admin::evals::from_settings(&|name| state.config.var(name))
        .await
        .map(|invoke| std::sync::Arc::new(invoke) as std::sync::Arc<dyn kakeibo_admin::evals::StartEval>);
    run(kakeibo_admin::router(kakeibo_admin::Admin { state, evals })).await
}
