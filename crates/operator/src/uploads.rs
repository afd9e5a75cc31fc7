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

#[derive(Debug, Clone, Serialize, schemars::JsonSchema, sqlx::FromRow)]
pub struct Upload {
    pub id: Uuid,
    pub filename: String,
    pub content_type: Option<String>,
    pub size_bytes: i32,
    pub sha256: String,
    pub created_at: DateTime<Utc>,
    /// The shipped sample statement: kept like any upload, counted against no limit.
    pub sample: bool,
    /// When its statement was last imported into the ledger (a committed import of the same
    /// bytes, not undone), and how many rows that import added; `None` when it never was.
    pub imported_at: Option<DateTime<Utc>>,
    pub imported_rows: Option<i32>,
}

/// An upload kept: a new one, or the one already holding the same bytes.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Kept {
    #[serde(flatten)]
    pub upload: Upload,
    /// The same bytes were kept already: this is that upload, and no slot was used.
    pub reused: bool,
}

/// `GET /api/uploads`: the visitor's kept statements, newest first.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct UploadList {
    pub uploads: Vec<Upload>,
}

/// The columns of [`Upload`], for `uploads u`: its last committed import of the same bytes.
const COLUMNS: &str = "u.id, u.filename, u.content_type, u.size_bytes, u.sha256, u.created_at, u.sample,
    i.imported_at, i.row_count AS imported_rows";
const LAST_IMPORT: &str = "LEFT JOIN LATERAL (
        SELECT b.imported_at, b.row_count FROM import_batches b
        WHERE b.owner_id = u.owner_id AND b.source_sha256 = u.sha256 AND b.status = 'committed'
          AND b.undone_at IS NULL
        ORDER BY b.imported_at DESC NULLS LAST LIMIT 1
    ) i ON true";

/// Keeps an uploaded statement of `owner`, within the per-visitor limits. The same bytes kept
/// already are that upload again (no slot used); `sample` marks the shipped sample statement,
/// which counts against no limit.
pub async fn save_upload(
    owner: OwnerId,
    pool: &PgPool,
    filename: &str,
    content_type: Option<&str>,
    content: &[u8],
    sample: bool,
) -> Result<Kept, UploadError> {
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
    let sha256 = hex::encode(Sha256::digest(content));
    let same = sqlx::query_as::<_, Upload>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM uploads u {LAST_IMPORT}
         WHERE u.owner_id = $1 AND u.sha256 = $2 AND u.size_bytes = $3
         ORDER BY u.created_at DESC, u.id LIMIT 1"
    )))
    .bind(owner.as_uuid())
    .bind(&sha256)
    .bind(size)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(upload) = same {
        tx.commit().await?;
        return Ok(Kept { upload, reused: true });
    }
    if !sample {
        let (count, bytes): (i64, i64) = sqlx::query_as(
            "SELECT count(*), coalesce(sum(size_bytes), 0)::int8 FROM uploads WHERE owner_id = $1 AND NOT sample",
        )
        .bind(owner.as_uuid())
        .fetch_one(&mut *tx)
        .await?;
        if count >= MAX_UPLOADS_PER_OWNER || bytes + i64::from(size) > MAX_UPLOAD_STORAGE {
            return Err(UploadError::Full { count, bytes });
        }
    }
    let id: Uuid = sqlx::query_scalar(
        "INSERT INTO uploads (owner_id, filename, content_type, size_bytes, sha256, content, sample)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(owner.as_uuid())
    .bind(name)
    .bind(content_type)
    .bind(size)
    .bind(&sha256)
    .bind(content)
    .bind(sample)
    .fetch_one(&mut *tx)
    .await?;
    let upload = sqlx::query_as::<_, Upload>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM uploads u {LAST_IMPORT} WHERE u.owner_id = $1 AND u.id = $2"
    )))
    .bind(owner.as_uuid())
    .bind(id)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Kept {
        upload,
        reused: false,
    })
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

/// The owner's uploads, newest first, each with its last import.
pub async fn list_uploads(owner: OwnerId, pool: &PgPool) -> Result<Vec<Upload>, UploadError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let rows = sqlx::query_as::<_, Upload>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM uploads u {LAST_IMPORT}
         WHERE u.owner_id = $1 ORDER BY u.created_at DESC, u.id LIMIT 200"
    )))
    .bind(owner.as_uuid())
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(rows)
}
