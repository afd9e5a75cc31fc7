//! The load generator (`cargo xtask load`) against the functions over real HTTP on a real
//! database, briefly: its visitors' work is checked in the database, and the checks find a write
//! done twice or given to another visitor when one is planted.

use crate::support;

use std::time::Duration;

use kakeibo_load::{Plan, check, traffic::WriteKind};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use support::{Isolation, SITE, TestApp, serve, state};
use uuid::Uuid;

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn visitors_under_load_lose_nothing_and_see_only_their_own(
    _: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let state = state(
        &connect,
        Isolation::Rls,
        &[
            ("ANON_DAILY_MESSAGE_QUOTA", "100000"),
            ("IP_DAILY_MESSAGE_QUOTA", "100000"),
        ],
    )
    .await;
    let base = serve(TestApp::new(&state).router()).await;
    let plan = Plan {
        base,
        origin: SITE.to_owned(),
        visitors: 4,
        duration: Duration::from_secs(4),
        request_timeout: Duration::from_mins(1),
        disruption: None,
    };
    let traffic = kakeibo_load::drive(&plan, &|_| {}).await;
    assert!(traffic.tally.errors.is_empty(), "{:#?}", traffic.tally.errors);
    assert_eq!(traffic.visitors.len(), 4);
    let owners: std::collections::BTreeSet<Uuid> = traffic.visitors.iter().filter_map(|v| v.owner).collect();
    assert_eq!(owners.len(), 4, "a visitor, and a ledger, each");

    let pool = state.owner_pool.get();
    let checks = check(pool, &traffic).await.unwrap();
    assert!(checks.passed(), "{checks:#?}");
    assert!(checks.admitted > 0, "{checks:#?}");
    assert_eq!(
        checks.writes_allowed + checks.writes_declined,
        traffic.visitors.iter().map(|v| v.writes.len()).sum::<usize>(),
        "every write answered: {checks:#?}"
    );

    // The checks are not a formality: a rule written twice is found, and so is one under
    // another visitor's owner.
    let (visitor, rule) = traffic
        .visitors
        .iter()
        .find_map(|v| {
            v.writes
                .iter()
                .find(|w| w.allowed && w.kind == WriteKind::Rule)
                .map(|w| (v, w))
        })
        .expect("four visitors for four seconds allow at least one rule");
    let other = owners.iter().find(|o| Some(**o) != visitor.owner).unwrap();
    sqlx::query(
        "INSERT INTO rules (owner_id, pattern, account_id)
         SELECT owner_id, pattern, account_id FROM rules WHERE pattern = $1",
    )
    .bind(&rule.tag)
    .execute(pool)
    .await
    .unwrap();
    let doubled = check(pool, &traffic).await.unwrap();
    assert_eq!(doubled.writes_doubled, 1, "{doubled:#?}");
    assert!(!doubled.passed());
    sqlx::query(
        "UPDATE rules SET owner_id = $2, account_id = (SELECT id FROM accounts WHERE owner_id = $2 LIMIT 1)
         WHERE id = (SELECT id FROM rules WHERE pattern = $1 LIMIT 1)",
    )
    .bind(&rule.tag)
    .bind(other)
    .execute(pool)
    .await
    .unwrap();
    let moved = check(pool, &traffic).await.unwrap();
    assert_eq!(moved.cross_visitor_writes, 1, "{moved:#?}");
}
