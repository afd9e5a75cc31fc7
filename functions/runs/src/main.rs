//! The `runs` function under the Lambda runtime (buffered responses).

use kakeibo_api::lambda::{Warm, boot, run};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let answers = "the traces, the dashboard, conversations, the evaluation report, the tools";
    // Its routes read as the visitor (app_user): the owner role's pool is never needed.
    let Some(state) = boot("runs", answers, Warm::AppPool).await? else {
        return Ok(());
    };
    run(kakeibo_runs::router(state)).await
}
