//! Reports in PostgreSQL: the `eval` function stores each run's, `GET /api/evals/latest` reads the
//! newest. Both as `app_user`; the table holds no owner's data.

use sqlx::PgPool;

use crate::report::EvalReport;

/// Stores `report`; returns its id.
pub async fn save(pool: &PgPool, report: &EvalReport) -> Result<uuid::Uuid, sqlx::Error> {
    let json = serde_json::to_value(report).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query_scalar(
        "INSERT INTO eval_reports (started_at, finished_at, trigger, model, filter, complete, task_count, passed, report)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(report.started_at)
    .bind(report.finished_at)
    .bind(&report.trigger)
    .bind(&report.model)
    .bind(report.filter.as_deref())
    .bind(report.complete)
    .bind(i32::try_from(report.task_count).unwrap_or(i32::MAX))
    .bind(i32::try_from(report.passed).unwrap_or(i32::MAX))
    .bind(json)
    .fetch_one(pool)
    .await
}

/// The newest report of a whole, complete run; else (none yet) the newest of any.
pub async fn latest(pool: &PgPool) -> Result<Option<EvalReport>, sqlx::Error> {
    let report: Option<sqlx::types::Json<EvalReport>> = sqlx::query_scalar(
        "SELECT report FROM eval_reports ORDER BY (filter IS NULL AND complete) DESC, finished_at DESC, id LIMIT 1",
    )
    .fetch_optional(pool)
    .await?;
    Ok(report.map(|report| report.0))
}
