//! The `chat` function under the Lambda runtime (response streaming).

use kakeibo_api::lambda::{Warm, boot, run_streaming};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let answers = "POST /api/chat, the session, the account and uploads";
    let Some(state) = boot("chat", answers, Warm::BothPools).await? else {
        return Ok(());
    };
    run_streaming(kakeibo_chat::router(state)).await
}
