//! The cold-start benchmark's baseline: the least a function can be — a `lambda_http` binary
//! that opens one database connection and answers every request with a row it reads.

use lambda_http::{Body, Error, Request, Response, service_fn};
use sqlx::{Connection, PgConnection};
use tokio::sync::Mutex;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let url = std::env::var("DATABASE_URL")?;
    let conn = Mutex::new(PgConnection::connect(&url).await?);
    let conn = &conn;
    lambda_http::run(service_fn(move |_request: Request| async move {
        let one: i32 = sqlx::query_scalar("SELECT 1")
            .fetch_one(&mut *conn.lock().await)
            .await?;
        Ok::<_, Error>(Response::new(Body::from(format!("hello {one}"))))
    }))
    .await
}
