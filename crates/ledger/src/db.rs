//! Connections, migrations, and the transaction scoped to one owner.

use futures_util::future::BoxFuture;
use sqlx::{PgConnection, PgPool, Postgres, Transaction, postgres::PgPoolOptions};

use crate::{error::LedgerError, owner::OwnerId};

/// The migrations in `migrations/`, embedded at build time.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// How long a pooled connection may sit idle and still be handed out unchecked.
///
/// A connection used a moment ago is alive: pinging it before every use (sqlx's default) would
/// add a round trip to every transaction — five to a read-only turn. One idle for longer may have
/// been dropped by the server, a restart or the proxy's idle timeout, so it is pinged first and
/// replaced when the ping fails.
pub const TRUSTED_IDLE: std::time::Duration = std::time::Duration::from_secs(5);

/// The pool settings every kakeibo pool uses: at most `max_connections`, each checked before use
/// only when it has been idle longer than [`TRUSTED_IDLE`].
pub fn pool_options(max_connections: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > TRUSTED_IDLE {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
}

/// A small pool (serverless functions hold few connections), connecting on first use.
pub fn connect(url: &str, max_connections: u32) -> Result<PgPool, LedgerError> {
    Ok(pool_options(max_connections).connect_lazy(url)?)
}

/// Applies every pending migration. Run it as the owner role.
pub async fn migrate(pool: &PgPool) -> Result<(), LedgerError> {
    MIGRATOR.run(pool).await?;
    Ok(())
}

/// Runs `work` in one transaction whose tenant is `owner`, and commits it when `work` succeeds.
///
/// The tenant is set with `set_config('app.owner_id', …, true)` (through `app_set_owner`, which
/// RDS Proxy does not pin on): local to this transaction, so a
/// pooled connection never carries it into the next request. Under `app_user` row-level security
/// then shows and accepts only `owner`'s rows; the owner role bypasses RLS, which is why every
/// query inside still filters by owner itself. When `work` fails, everything it wrote is rolled
/// back.
///
/// ```no_run
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), kakeibo_ledger::LedgerError> {
/// use kakeibo_ledger::{DEV_OWNER, list_accounts, with_owner};
/// let accounts = with_owner(DEV_OWNER, &pool, |conn| Box::pin(list_accounts(DEV_OWNER, conn))).await?;
/// # Ok(()) }
/// ```
pub async fn with_owner<T, E, F>(owner: OwnerId, pool: &PgPool, work: F) -> Result<T, E>
where
    F: for<'c> FnOnce(&'c mut PgConnection) -> BoxFuture<'c, Result<T, E>>,
    E: From<sqlx::Error>,
{
    let mut tx = begin_for_owner(owner, pool).await?;
    match work(&mut tx).await {
        Ok(value) => {
            tx.commit().await?;
            Ok(value)
        }
        Err(e) => {
            // Rolled back now, not when the connection is next used: a dropped transaction's
            // ROLLBACK waits in the pool, and its locks (an advisory lock, row locks) with it.
            if let Err(rollback) = tx.rollback().await {
                tracing::warn!(error = %rollback, "rolling back a failed transaction");
            }
            Err(e)
        }
    }
}

/// Opens a transaction whose tenant is `owner`, for callers whose work borrows from their own
/// scope (which a closure handed to [`with_owner`] cannot). Dropping it uncommitted rolls back.
///
/// One round trip: `BEGIN` and the tenant go as one simple query.
pub async fn begin_for_owner(
    owner: OwnerId,
    pool: &PgPool,
) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
    begin_as(owner, pool, "BEGIN").await
}

/// Opens a read-only transaction whose tenant is `owner` and whose statements all see one
/// snapshot (`REPEATABLE READ`, taken by the tenant's statement), for reads that must agree with
/// each other. One round trip, like [`begin_for_owner`]; a write in it is refused by the server.
pub async fn begin_snapshot_for_owner(
    owner: OwnerId,
    pool: &PgPool,
) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
    begin_as(owner, pool, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await
}

/// `begin` (a `BEGIN` statement) and the tenant, as one simple query.
async fn begin_as(
    owner: OwnerId,
    pool: &PgPool,
    begin: &'static str,
) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
    // A UUID's text is hex digits and dashes: nothing in it can leave the quotes.
    pool.begin_with(sqlx::AssertSqlSafe(format!(
        "{begin}; SELECT app_set_owner('{}')",
        owner.as_uuid()
    )))
    .await
}

/// Sets the tenant of the transaction `conn` is in (for code handed an open transaction).
/// Outside a transaction the setting would end with the statement: call it only inside one.
pub async fn scope_to_owner(owner: OwnerId, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    // Through a function: RDS Proxy would pin the connection for a bare set_config.
    sqlx::query("SELECT app_set_owner($1)")
        .bind(owner.as_uuid())
        .execute(conn)
        .await?;
    Ok(())
}

/// A pool connected as the **owner role**, which bypasses row-level security.
///
/// Only the code that must work across owners or on tables without an owner holds one: the admin
/// module (cross-owner reads), the quota gate (counters), visitors and credentials (creating,
/// linking and deleting users), the demo clone marker aside. A test lists every source file that
/// names this type, each with its reason; anything else uses the `app_user` pool.
#[derive(Debug, Clone)]
pub struct OwnerRolePool(PgPool);

impl OwnerRolePool {
    /// Wraps a pool that was connected with the owner role's credentials (`DATABASE_URL`).
    pub fn new(pool: PgPool) -> Self {
        Self(pool)
    }

    pub fn get(&self) -> &PgPool {
        &self.0
    }
}
