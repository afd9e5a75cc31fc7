//! Memories recalled into the person's message, and the stable prefix of every request.

use crate::common;
use kakeibo_agent::Channel;

use common::{app_pool, new_user, owner_pool};
use kakeibo_agent::turns::TurnStore;
use kakeibo_core::{
    ConfirmPolicy,
    context::estimate_tokens,
    prompt::SYSTEM_PROMPT,
    scripted::{Scripted, reply_text},
};
use kakeibo_ledger::{DEV_OWNER, begin_for_owner};
use kakeibo_tools::{Scope, memory, registry};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn recall_takes_the_recent_and_the_named_and_the_model_sees_them(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let owner_pool = owner_pool(options, connect.clone()).await;
    let owner = new_user(&owner_pool).await;
    for (i, category) in [(0, "groceries"), (1, "Groceries")] {
        sqlx::query("INSERT INTO memories (owner_id, content, category, created_at) VALUES ($1, $2, $3, now() - interval '30 days')")
            .bind(owner.as_uuid())
            .bind(format!("old grocery note {i}"))
            .bind(category)
            .execute(&owner_pool)
            .await
            .unwrap();
    }
    for i in 0..25 {
        sqlx::query("INSERT INTO memories (owner_id, content, category, created_at) VALUES ($1, $2, 'misc', now() - make_interval(mins => $3))")
            .bind(owner.as_uuid())
            .bind(format!("note {i}"))
            .bind(i)
            .execute(&owner_pool)
            .await
            .unwrap();
    }
    let app = app_pool(&connect).await;
    let mut tx = begin_for_owner(owner, &app).await.unwrap();
    let plain = memory::recall(owner, &mut tx, "what is my balance?")
        .await
        .unwrap();
    let named = memory::recall(owner, &mut tx, "how much on Groceries?")
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(plain.len(), 20);
    assert_eq!(plain[0], "note 0", "newest first");
    assert_eq!(named.len(), 22);
    assert!(
        named.ends_with(&["old grocery note 0".to_owned(), "old grocery note 1".to_owned()])
            || named[20..].iter().all(|n| n.starts_with("old grocery"))
    );

    let store = TurnStore::new(app.clone());
    let model = std::sync::Arc::new(Scripted::new(vec![Ok(reply_text("ok"))]));
    let agent = crate::agent_on(&store, owner, model.clone(), SYSTEM_PROMPT, Channel::Cli);
    let conversation = store.new_conversation(owner, None).await.unwrap();
    agent
        .chat(
            conversation,
            "groceries budget?",
            &ConfirmPolicy::AutoDeny,
            &|_| {},
        )
        .await
        .unwrap();
    let request = &model.requests()[0];
    assert_eq!(
        request.system, SYSTEM_PROMPT,
        "memories never go into the system prompt"
    );
    let user = request.messages.last().unwrap();
    assert!(user.text().contains("<user_memory>\n- note 0"), "{}", user.text());
    assert!(user.text().contains("old grocery note"));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_stable_prefix_is_cacheable(pool: PgPool) {
    let tools = registry(&Scope::new(DEV_OWNER, pool.clone()));
    let tools_pool_clone = || pool.clone();
    let declarations: Vec<kakeibo_core::Declaration> = tools.declarations().into_iter().cloned().collect();
    // By the estimate fitted to Gemini's own counts (`cargo xtask metrics`) the prefix is about
    // 3,600 tokens: above the smallest minimum of an explicit cache (1,024, Gemini's API on
    // Flash), under Vertex's 4,096 — there the cache's first creation is refused as too small,
    // and remembered.
    let gemini = kakeibo_core::context::Divisors::GEMINI;
    let prefix = estimate_tokens(&gemini, SYSTEM_PROMPT, &[], &declarations);
    assert!(
        prefix > 1024,
        "system prompt and tools are {prefix} tokens by the estimate; an explicit cache needs 1,024 at least"
    );
    eprintln!("stable prefix: {prefix} tokens by the estimate");
    // The same prefix, byte for byte, for two owners' registries built apart.
    let other = registry(&Scope::new(
        kakeibo_ledger::OwnerId::new(uuid::Uuid::from_u128(5)),
        tools_pool_clone(),
    ));
    assert_eq!(other.declarations_json(), tools.declarations_json());
}
