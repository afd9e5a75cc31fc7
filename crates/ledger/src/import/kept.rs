//! Plans kept between a preview and its commit: found again when the same statement is previewed
//! with the same options and the ledger has not changed since (so nothing is parsed twice), and
//! bounded per owner (the oldest plans nobody committed are dropped), so previews cannot fill the
//! database.

use sqlx::PgConnection;
use uuid::Uuid;

use super::plan::{PLAN_VERSION, Plan};
use crate::{LedgerError, OwnerId};

/// The most plans an owner keeps uncommitted; a new one drops the oldest beyond it.
pub const MAX_KEPT_PLANS: i64 = 5;

/// A plan of `owner`'s still to commit, made from the statement `source_sha256` with the options
/// `options_key`, after the last change to what a plan reads (transactions, accounts, rules).
pub async fn reusable_plan(
    owner: OwnerId,
    conn: &mut PgConnection,
    source_sha256: &str,
    options_key: &str,
) -> Result<Option<(Uuid, Plan)>, LedgerError> {
    let found: Option<(Uuid, String)> = sqlx::query_as(
        "SELECT b.id, b.plan::text FROM import_batches b
         WHERE b.owner_id = $1 AND b.status = 'planned' AND b.plan IS NOT NULL
           AND b.source_sha256 = $2 AND b.options_key = $3
           AND b.created_at >= coalesce((SELECT max(created_at) FROM transactions WHERE owner_id = $1), '-infinity')
           AND b.created_at >= coalesce((SELECT max(created_at) FROM accounts WHERE owner_id = $1), '-infinity')
           AND b.created_at >= coalesce((SELECT max(created_at) FROM rules WHERE owner_id = $1), '-infinity')
         ORDER BY b.created_at DESC LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(source_sha256)
    .bind(options_key)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((id, text)) = found else {
        return Ok(None);
    };
    // A plan that does not read back (an older or newer shape) is simply not reused.
    Ok(serde_json::from_str::<Plan>(&text)
        .ok()
        .filter(|plan| plan.version == PLAN_VERSION)
        .map(|plan| (id, plan)))
}

/// Records the options `plan_id` was made with, and drops `owner`'s uncommitted plans beyond the
/// newest [`MAX_KEPT_PLANS`] (their rows go with them). Answers how many were dropped.
pub async fn keep_plan(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    options_key: &str,
) -> Result<u64, LedgerError> {
    sqlx::query("UPDATE import_batches SET options_key = $3 WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(plan_id)
        .bind(options_key)
        .execute(&mut *conn)
        .await?;
    let dropped = sqlx::query(
        "DELETE FROM import_batches WHERE owner_id = $1 AND status = 'planned' AND id NOT IN (
            SELECT id FROM import_batches WHERE owner_id = $1 AND status = 'planned'
            ORDER BY created_at DESC, id DESC LIMIT $2)",
    )
    .bind(owner.as_uuid())
    .bind(MAX_KEPT_PLANS)
    .execute(&mut *conn)
    .await?;
    Ok(dropped.rows_affected())
}

/// Stops `owner`'s kept plans from being found again by a later preview: what a plan read (the
/// categories, the rules) changed in a way their times do not show (a rename, a merge, a rule
/// edited or deleted). They can still be committed by the card that shows them.
pub async fn forget_kept_plans(owner: OwnerId, conn: &mut PgConnection) -> Result<(), LedgerError> {
    sqlx::query("UPDATE import_batches SET options_key = NULL WHERE owner_id = $1 AND status = 'planned'")
        .bind(owner.as_uuid())
        .execute(conn)
        .await?;
    Ok(())
}
