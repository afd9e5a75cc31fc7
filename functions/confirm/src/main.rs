//! The `confirm` function under the Lambda runtime (response streaming).

use kakeibo_api::lambda::{Warm, boot, run_streaming};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let Some(state) = boot("confirm", "POST /api/confirm", Warm::BothPools).await? else {
        return Ok(());
    };
    run_streaming(kakeibo_confirm::router(state)).await
}
