//! The reaper on a seeded database: exactly the stale rows go.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use kakeibo_ledger::{OwnerId, OwnerRolePool};
use sqlx::PgPool;
use uuid::Uuid;

async fn visitor(pool: &PgPool, anonymous: bool, last_seen: &str) -> OwnerId {
    let id: Uuid = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "INSERT INTO users (is_anonymous, email, password_hash, created_at, last_seen_at)
         VALUES ($1, CASE WHEN $1 THEN NULL ELSE gen_random_uuid()::text || '@example.com' END,
                 CASE WHEN $1 THEN NULL ELSE 'x' END, now() - interval '{last_seen}', now() - interval '{last_seen}')
         RETURNING id"
    )))
    .bind(anonymous)
    .fetch_one(pool)
    .await
    .unwrap();
    let owner = OwnerId::new(id);
    kakeibo_ledger::seed::ensure_demo_ledger(owner, pool)
        .await
        .unwrap();
    owner
}

async fn count(pool: &PgPool, sql: &'static str, owner: OwnerId) -> i64 {
    sqlx::query_scalar(sql)
        .bind(owner.as_uuid())
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn stale_rows_go_and_everything_else_stays(pool: PgPool) {
    let stale = visitor(&pool, true, "25 hours").await;
    let fresh = visitor(&pool, true, "1 hour").await;
    let member = visitor(&pool, false, "30 days").await;
    sqlx::query(
        "INSERT INTO rate_limits (key, window_start, count) VALUES
            ('yesterday', (now() AT TIME ZONE 'UTC')::date - 1, 3), ('today', (now() AT TIME ZONE 'UTC')::date, 2)",
    )
    .execute(&pool)
    .await
    .unwrap();

    // Two suspended turns of the fresh visitor, expired two days ago: one still pending (goes,
    // its run aborted), one claimed by a confirm in flight (stays).
    let conversation: Uuid =
        sqlx::query_scalar("INSERT INTO conversations (owner_id) VALUES ($1) RETURNING id")
            .bind(fresh.as_uuid())
            .fetch_one(&pool)
            .await
            .unwrap();
    for claimed in [false, true] {
        let run: Uuid = sqlx::query_scalar(
            "INSERT INTO trace_runs (owner_id, conversation_id, provider, model, channel) VALUES ($1, $2, 's', 's', 'web') RETURNING id",
        )
        .bind(fresh.as_uuid())
        .bind(conversation)
        .fetch_one(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO suspended_turns (owner_id, conversation_id, run_id, version, state, args_hash, status, claimed_at, expires_at)
             VALUES ($1, $2, $3, 1, '{}', 'h', CASE WHEN $4 THEN 'claimed'::suspended_status ELSE 'pending' END,
                     CASE WHEN $4 THEN now() END, now() - interval '2 days')",
        )
        .bind(fresh.as_uuid())
        .bind(conversation)
        .bind(run)
        .bind(claimed)
        .execute(&pool)
        .await
        .unwrap();
    }

    // A model call whose function died holds 0.10 of yesterday's budget; one in flight, 0.02.
    sqlx::raw_sql(
        "INSERT INTO budget_days (day, settled_micro_usd, reserved_micro_usd) VALUES (current_date - 1, 5, 120000);
         INSERT INTO budget_holds (id, day, amount_micro_usd, expires_at) VALUES
             (gen_random_uuid(), current_date - 1, 100000, now() - interval '1 hour'),
             (gen_random_uuid(), current_date - 1, 20000, now() + interval '1 hour')",
    )
    .execute(&pool)
    .await
    .unwrap();

    // A turn whose function died an hour ago left its run running; one that started a moment
    // ago is still going.
    sqlx::query(
        "INSERT INTO trace_runs (owner_id, provider, model, channel, started_at)
         VALUES ($1, 's', 'abandoned', 'web', now() - interval '2 hours'), ($1, 's', 'young', 'web', now())",
    )
    .bind(fresh.as_uuid())
    .execute(&pool)
    .await
    .unwrap();

    let summary = kakeibo_reap::handle(
        &OwnerRolePool::new(pool.clone()),
        serde_json::json!({"source": "aws.scheduler"}),
    )
    .await
    .unwrap();
    assert_eq!(summary.reaped.anonymous_visitors, 1);
    assert_eq!(summary.reaped.old_rate_limits, 1);
    assert_eq!(summary.reaped.expired_suspended_turns, 1);
    assert_eq!(summary.reaped.expired_budget_holds, 1);
    let held: i64 =
        sqlx::query_scalar("SELECT reserved_micro_usd FROM budget_days WHERE day = current_date - 1")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        held, 20000,
        "the dead call's hold is given back, the live one's kept"
    );
    let left: Vec<String> = sqlx::query_scalar("SELECT status::text FROM suspended_turns")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(left, ["claimed"], "a confirm in flight keeps its turn");
    let aborted: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM trace_runs WHERE status = 'aborted' AND finished_at IS NOT NULL",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(aborted, 1, "the reaped turn's run is closed");
    assert_eq!(summary.reaped.abandoned_runs, 1);
    let statuses: Vec<(String, String, bool)> = sqlx::query_as(
        "SELECT model, status::text, finished_at IS NOT NULL FROM trace_runs WHERE model IN ('abandoned', 'young') ORDER BY model",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        statuses,
        [
            ("abandoned".to_owned(), "error".to_owned(), true),
            ("young".to_owned(), "running".to_owned(), false)
        ]
    );

    let transactions = "SELECT count(*) FROM transactions WHERE owner_id = $1";
    assert_eq!(
        count(&pool, transactions, stale).await,
        0,
        "the stale visitor's ledger went with it"
    );
    assert_eq!(
        count(&pool, "SELECT count(*) FROM users WHERE id = $1", stale).await,
        0
    );
    assert_eq!(count(&pool, transactions, fresh).await, 352);
    assert_eq!(
        count(&pool, transactions, member).await,
        352,
        "signed-in visitors are never reaped"
    );
    let keys: Vec<String> = sqlx::query_scalar("SELECT key FROM rate_limits")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(keys, ["today"]);
    let recorded: serde_json::Value = sqlx::query_scalar("SELECT deleted FROM housekeeping_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(recorded, serde_json::to_value(&summary.reaped).unwrap());

    // A second run finds nothing more.
    let again = kakeibo_reap::handle(&OwnerRolePool::new(pool.clone()), serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(again.reaped.anonymous_visitors, 0);
}
