//! Reads that share one snapshot: the dashboard's panels run one after another in one read-only
//! `REPEATABLE READ` transaction of their owner's.
//!
//! Their figures then agree with each other (an import committing in between cannot show in one
//! panel and not the next), the page holds one connection, and it pays one `BEGIN` and one
//! `COMMIT` instead of one of each per panel. The transaction is handed to the read tools through
//! a task-local slot that `Scope::read` takes it from and puts back into; nothing else sees it. A
//! read that fails drops it (rolling it back), and the reads after it each open their own, as they
//! do outside a snapshot.
//!
//! A turn's batch of read calls does not use it: on the two cores measured, running a batch's
//! three reads side by side, each in its own transaction, beat running them one after another in
//! one snapshot (`cargo xtask bench --only turn`: overhead p50 1.44 against 1.90 ms).

use std::{
    future::Future,
    sync::{Arc, Mutex, PoisonError},
};

use kakeibo_ledger::{OwnerId, begin_snapshot_for_owner};
use sqlx::{PgPool, Postgres, Transaction};

tokio::task_local! {
    static SNAPSHOT: Arc<Slot>;
}

/// The open snapshot of one owner, while no read is using it.
struct Slot {
    owner: OwnerId,
    tx: Mutex<Option<Transaction<'static, Postgres>>>,
}

/// Runs `work` with the read tools of `owner` sharing one snapshot, then ends it. When the
/// snapshot cannot be opened (the database is away), `work` runs as it is and each read reports
/// its own failure.
pub async fn in_snapshot<F: Future>(owner: OwnerId, pool: &PgPool, work: F) -> F::Output {
    let Ok(tx) = begin_snapshot_for_owner(owner, pool).await else {
        return work.await;
    };
    let slot = Arc::new(Slot {
        owner,
        tx: Mutex::new(Some(tx)),
    });
    let output = SNAPSHOT.scope(Arc::clone(&slot), work).await;
    let tx = slot.tx.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(tx) = tx {
        // Read-only: a commit that fails has nothing to lose, and every read already answered.
        let _ = tx.commit().await;
    }
    output
}

/// The snapshot of `owner` open around the current task, taken out of its slot for one read.
pub(crate) fn take(owner: OwnerId) -> Option<Transaction<'static, Postgres>> {
    SNAPSHOT
        .try_with(|slot| {
            (slot.owner == owner)
                .then(|| slot.tx.lock().unwrap_or_else(PoisonError::into_inner).take())
                .flatten()
        })
        .ok()
        .flatten()
}

/// Puts the snapshot back for the next read, once a read used it and succeeded.
pub(crate) fn put_back(tx: Transaction<'static, Postgres>) {
    // Inside the scope it was taken in; outside one, dropping it rolls it back.
    let _ = SNAPSHOT.try_with(|slot| {
        *slot.tx.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests may panic on what they did not expect.

    use kakeibo_ledger::DEV_OWNER;
    use sqlx::PgPool;

    use super::in_snapshot;
    use crate::{Scope, ToolsError};

    /// The isolation of the transaction a read runs in.
    async fn isolation(scope: &Scope) -> Result<String, kakeibo_core::ToolError> {
        scope
            .read(|conn| {
                Box::pin(async move {
                    Ok(
                        sqlx::query_scalar("SELECT current_setting('transaction_isolation')")
                            .fetch_one(conn)
                            .await?,
                    )
                })
            })
            .await
    }

    #[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
    async fn a_failed_read_leaves_the_others_their_own_transactions(pool: PgPool) {
        let scope = Scope::new(DEV_OWNER, pool.clone());
        let (first, failed, after) = in_snapshot(DEV_OWNER, &pool, async {
            let first = isolation(&scope).await.unwrap();
            let failed = scope
                .read(|conn| {
                    Box::pin(async move {
                        sqlx::query("SELECT no_such_column FROM transactions")
                            .execute(conn)
                            .await
                            .map_err(ToolsError::from)?;
                        Ok(())
                    })
                })
                .await;
            (first, failed, isolation(&scope).await.unwrap())
        })
        .await;
        assert_eq!(first, "repeatable read", "a read inside runs in the snapshot");
        assert!(failed.is_err());
        assert_eq!(after, "read committed", "after a failure, a read opens its own");
        // Another owner's read never takes this owner's snapshot.
        let other = Scope::new(
            kakeibo_ledger::OwnerId::new(uuid::Uuid::from_u128(7)),
            pool.clone(),
        );
        let theirs = in_snapshot(DEV_OWNER, &pool, isolation(&other)).await.unwrap();
        assert_eq!(theirs, "read committed");
    }
}
