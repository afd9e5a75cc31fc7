//! The demo ledger of a visitor: the 352 seed transactions, cloned into their ledger the first
//! time it is needed, once.

use std::sync::OnceLock;

use sqlx::PgPool;

use super::{CsvRow, load, read_transactions_csv};
use crate::{db::begin_for_owner, error::LedgerError, owner::OwnerId};

/// The committed demo ledger (`seed/transactions.csv`; a test keeps it equal to the generator).
const DEMO_CSV: &str = include_str!("../../../../seed/transactions.csv");

fn demo_rows() -> Result<&'static [CsvRow], LedgerError> {
    static ROWS: OnceLock<Result<Vec<CsvRow>, String>> = OnceLock::new();
    ROWS.get_or_init(|| read_transactions_csv(DEMO_CSV).map_err(|e| e.to_string()))
        .as_deref()
        .map_err(|e| LedgerError::Seed(e.clone()))
}

/// Clones the demo ledger into `owner`'s ledger unless that was done before. The visitor's row is
/// locked while it happens, so concurrent first requests clone it once. Returns whether this
/// call cloned it.
pub async fn ensure_demo_ledger(owner: OwnerId, pool: &PgPool) -> Result<bool, LedgerError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let cloned: Option<Option<chrono::DateTime<chrono::Utc>>> =
        sqlx::query_scalar("SELECT demo_cloned_at FROM users WHERE id = $1 FOR UPDATE")
            .bind(owner.as_uuid())
            .fetch_optional(&mut *tx)
            .await?;
    match cloned {
        None => return Err(LedgerError::NoVisitor(owner)),
        Some(Some(_)) => return Ok(false),
        Some(None) => {}
    }
    load(owner, &mut tx, "demo-ledger.csv", demo_rows()?).await?;
    sqlx::query("UPDATE users SET demo_cloned_at = now() WHERE id = $1")
        .bind(owner.as_uuid())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(true)
}

/// Replaces `owner`'s whole ledger with a fresh copy of the demo ledger (the evaluation harness,
/// before every task). Conversations and runs stay. Run it inside one transaction scoped to
/// `owner`: either the old ledger or the new one is there, never half of each.
pub async fn reset_demo_ledger(owner: OwnerId, conn: &mut sqlx::PgConnection) -> Result<(), LedgerError> {
    super::clear_ledger(owner, &mut *conn).await?;
    load(owner, conn, "demo-ledger.csv", demo_rows()?).await?;
    Ok(())
}
