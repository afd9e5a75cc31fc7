//! The quota gate against a real PostgreSQL: the order of its reasons, caps per kind of visitor,
//! refusals that charge nothing, resumes that skip the message quotas, and the daily budget.

use crate::common;

use chrono::{Duration, Utc};
use common::new_user;
use kakeibo_ledger::{OwnerId, OwnerRolePool};
use kakeibo_operator::quota::{QuotaKind, QuotaLimits, Refusal, consume, messages_today, refund};
use sqlx::PgPool;

fn limits() -> QuotaLimits {
    QuotaLimits {
        anonymous_daily: 2,
        signed_in_daily: 3,
        address_daily: 4,
        global_daily_usd: 1.0,
        exports_daily: 2,
    }
}

async fn count(pool: &PgPool, sql: &'static str, owner: OwnerId) -> i64 {
    sqlx::query_scalar(sql)
        .bind(owner.as_uuid())
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn reasons_come_in_order_and_refusals_charge_nothing(pool: PgPool) {
    let gate = OwnerRolePool::new(pool.clone());
    let now = Utc::now();
    let anon = new_user(&pool).await;
    let member = new_user(&pool).await;
    sqlx::query("UPDATE users SET is_anonymous = false, email = 'm@example.com' WHERE id = $1")
        .bind(member.as_uuid())
        .execute(&pool)
        .await
        .unwrap();
    let l = limits();
    let message = |owner: OwnerId, key: &'static str| {
        let gate = gate.clone();
        let l = l.clone();
        async move {
            consume(owner, &gate, Some(key), QuotaKind::Message, &l, now)
                .await
                .unwrap()
        }
    };

    // Owner caps: 2 anonymous, 3 signed in.
    assert_eq!(message(anon, "addr-1").await, Ok(()));
    assert_eq!(message(anon, "addr-1").await, Ok(()));
    assert_eq!(message(anon, "addr-1").await, Err(Refusal::OwnerQuota));
    for _ in 0..3 {
        assert_eq!(message(member, "addr-2").await, Ok(()));
    }
    assert_eq!(message(member, "addr-2").await, Err(Refusal::OwnerQuota));
    let day = "SELECT coalesce(sum(count), 0)::int8 FROM owner_daily_messages WHERE owner_id = $1";
    assert_eq!(count(&pool, day, anon).await, 2, "a refusal charges nothing");

    // The address cap (4) is shared by visitors behind it; its refusal gives the owner's charge back.
    let third = new_user(&pool).await;
    assert_eq!(message(third, "addr-2").await, Ok(()));
    assert_eq!(message(third, "addr-2").await, Err(Refusal::IpQuota));
    assert_eq!(count(&pool, day, third).await, 1);

    // Resumes skip the message quotas.
    assert_eq!(
        consume(anon, &gate, None, QuotaKind::Resume, &l, now)
            .await
            .unwrap(),
        Ok(())
    );

    // The daily budget counts today's settled spend and what calls in flight hold, of everyone.
    let fresh = new_user(&pool).await;
    let today = now.date_naive();
    sqlx::query(
        "INSERT INTO budget_days (day, settled_micro_usd, reserved_micro_usd)
         VALUES ($1, 400000, 200000), ($1 - 2, 5000000, 0)",
    )
    .bind(today)
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(
        message(fresh, "addr-3").await,
        Ok(()),
        "0.6 of 1.0 spent or held today"
    );
    sqlx::query("UPDATE budget_days SET reserved_micro_usd = 600000 WHERE day = $1")
        .bind(today)
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(
        message(fresh, "addr-3").await,
        Err(Refusal::DailyCap),
        "held counts as spent"
    );
    assert_eq!(
        count(&pool, day, fresh).await,
        1,
        "the refused message was given back"
    );
    let address: i32 = sqlx::query_scalar("SELECT count FROM rate_limits WHERE key = 'addr-3'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(address, 1);
    assert_eq!(
        consume(anon, &gate, None, QuotaKind::Resume, &l, now)
            .await
            .unwrap(),
        Err(Refusal::DailyCap),
        "a resume is refused for the budget, never for messages"
    );
    // Tomorrow the counters and the day's spend start again.
    assert_eq!(
        consume(
            anon,
            &gate,
            Some("addr-1-tomorrow"),
            QuotaKind::Message,
            &l,
            now + Duration::days(1)
        )
        .await
        .unwrap(),
        Ok(())
    );

    // Blocked beats the quotas; paused beats everything.
    sqlx::query("UPDATE users SET blocked_at = now() WHERE id = $1")
        .bind(fresh.as_uuid())
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(message(fresh, "addr-9").await, Err(Refusal::Blocked));
    assert_eq!(
        consume(fresh, &gate, None, QuotaKind::Resume, &l, now)
            .await
            .unwrap(),
        Err(Refusal::Blocked)
    );
    sqlx::query("INSERT INTO operator_flags (key, value) VALUES ('live_chat_paused', true)")
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(message(fresh, "addr-9").await, Err(Refusal::Paused));
    assert_eq!(message(member, "addr-9").await, Err(Refusal::Paused));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn messages_today_counts_what_the_gate_admitted(pool: PgPool) {
    let gate = OwnerRolePool::new(pool.clone());
    let now = Utc::now();
    let today = now.date_naive();
    let owner = new_user(&pool).await;
    let other = new_user(&pool).await;
    assert_eq!(messages_today(owner, &gate, today).await.unwrap(), 0);
    for _ in 0..3 {
        // The anonymous cap is 2: the third is refused and not counted.
        let _ = consume(owner, &gate, None, QuotaKind::Message, &limits(), now)
            .await
            .unwrap();
    }
    consume(owner, &gate, None, QuotaKind::Resume, &limits(), now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(messages_today(owner, &gate, today).await.unwrap(), 2);
    assert_eq!(messages_today(other, &gate, today).await.unwrap(), 0);
    let yesterday = today.pred_opt().unwrap();
    assert_eq!(messages_today(owner, &gate, yesterday).await.unwrap(), 0);
    refund(owner, &gate, None, now).await.unwrap();
    assert_eq!(messages_today(owner, &gate, today).await.unwrap(), 1);
}
