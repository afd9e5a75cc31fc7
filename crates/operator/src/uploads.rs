//! Statements a visitor uploads for the importer: stored in their ledger's database, read only by
//! them (the import tool names an upload by id).

use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

use kakeibo_ledger::{OwnerId, begin_for_owner};

pub use crate::error::UploadError;

/// The largest statement kept (the column's check says the same).
pub const MAX_UPLOAD_BYTES: usize = 10 * 1024 * 1024;
/// How many statements one visitor may keep at a time.
pub const MAX_UPLOADS_PER_OWNER: i64 = 20;
/// How many bytes of statements one visitor may keep at a time.
pub const MAX_UPLOAD_STORAGE: i64 = 50 * 1024 * 1024;

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Upload {
    pub id: Uuid,
    pub filename: String,
    pub content_type: Option<String>,
    pub size_bytes: i32,
    pub sha256: String,
    pub created_at: DateTime<Utc>,
}

/// Keeps an uploaded statement of `owner`, within the per-visitor limits.
pub async fn save_upload(
    owner: OwnerId,
    pool: &PgPool,
    filename: &str,
    content_type: Option<&str>,
    content: &[u8],
) -> Result<Upload, UploadError> {
    if content.len() > MAX_UPLOAD_BYTES {
        return Err(UploadError::TooLarge { bytes: content.len() });
    }
    let name = filename.trim();
    if name.is_empty() || name.len() > 255 || name.chars().any(char::is_control) {
        return Err(UploadError::BadFileName);
    }
    let size = i32::try_from(content.len()).map_err(|_| UploadError::TooLarge { bytes: content.len() })?;
    let mut tx = begin_for_owner(owner, pool).await?;
    // Serialise this visitor's uploads so the limits hold under concurrent requests.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 7))")
        .bind(owner.as_uuid())
        .execute(&mut *tx)
        .await?;
    let (count, bytes): (i64, i64) = sqlx::query_as(
        "SELECT count(*), coalesce(sum(size_bytes), 0)::int8 FROM uploads WHERE owner_id = $1",
    )
    .bind(owner.as_uuid())
    .fetch_one(&mut *tx)
    .await?;
    if count >= MAX_UPLOADS_PER_OWNER || bytes + i64::from(size) > MAX_UPLOAD_STORAGE {
        return Err(UploadError::Full { count, bytes });
    }
    let upload = sqlx::query_as::<_, Upload>(
        "INSERT INTO uploads (owner_id, filename, content_type, size_bytes, sha256, content)
         VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING id, filename, content_type, size_bytes, sha256, created_at",
    )
    .bind(owner.as_uuid())
    .bind(name)
    .bind(content_type)
    .bind(size)
    .bind(hex::encode(Sha256::digest(content)))
    .bind(content)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(upload)
}

/// Deletes one of the owner's uploads; `false` when the owner has no such upload.
pub async fn delete_upload(owner: OwnerId, pool: &PgPool, id: Uuid) -> Result<bool, UploadError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let done = sqlx::query("DELETE FROM uploads WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected() == 1)
}

/// The owner's uploads, newest first.
pub async fn list_uploads(owner: OwnerId, pool: &PgPool) -> Result<Vec<Upload>, UploadError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let rows = sqlx::query_as::<_, Upload>(
        "SELECT id, filename, content_type, size_bytes, sha256, created_at
         FROM uploads WHERE owner_id = $1 ORDER BY created_at DESC, id LIMIT 200",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(rows)
}
