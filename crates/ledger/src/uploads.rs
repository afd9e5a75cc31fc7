//! Statements a visitor uploads for the importer: stored in their ledger's database, read only by
//! them (the import tool names an upload by id).

use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

use crate::{db::begin_for_owner, error::LedgerError, owner::OwnerId};

/// The largest statement kept (the column's check says the same).
pub const MAX_UPLOAD_BYTES: usize = 10 * 1024 * 1024;

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Upload {
    pub id: Uuid,
    pub filename: String,
    pub content_type: Option<String>,
    pub size_bytes: i32,
    pub sha256: String,
    pub created_at: DateTime<Utc>,
}

/// Keeps an uploaded statement of `owner`.
pub async fn save_upload(
    owner: OwnerId,
    pool: &PgPool,
    filename: &str,
    content_type: Option<&str>,
    content: &[u8],
) -> Result<Upload, LedgerError> {
    if content.len() > MAX_UPLOAD_BYTES {
        return Err(LedgerError::Invalid(format!(
            "the statement is {} bytes; the limit is {MAX_UPLOAD_BYTES}",
            content.len()
        )));
    }
    let name = filename.trim();
    if name.is_empty() || name.len() > 255 || name.chars().any(char::is_control) {
        return Err(LedgerError::Invalid(
            "the file name must be 1 to 255 characters without control characters".into(),
        ));
    }
    let size = i32::try_from(content.len())
        .map_err(|_| LedgerError::Invalid("the statement is too large".into()))?;
    let mut tx = begin_for_owner(owner, pool).await?;
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

/// The owner's uploads, newest first.
pub async fn list_uploads(owner: OwnerId, pool: &PgPool) -> Result<Vec<Upload>, LedgerError> {
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
