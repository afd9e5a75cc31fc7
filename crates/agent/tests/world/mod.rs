//! One new owner with one conversation, seen through both roles: the owner role's pool (which
//! sees every row) and `app_user`'s (which sees only the owner's). Shared by the turn-store tests.

use kakeibo_agent::turns::TurnStore;
use kakeibo_core::ConversationId;
use kakeibo_ledger::OwnerId;
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

use crate::common::{app_pool, new_user, owner_pool};

pub struct World {
    pub owner_pool: PgPool,
    pub app: PgPool,
    pub owner: OwnerId,
    pub conversation: ConversationId,
}

/// A new owner and a conversation titled `title`.
pub async fn world(options: PgPoolOptions, connect: PgConnectOptions, title: &str) -> World {
    let owner_pool = owner_pool(options, connect.clone()).await;
    let owner = new_user(&owner_pool).await;
    let app = app_pool(&connect).await;
    let conversation = TurnStore::new(app.clone())
        .new_conversation(owner, Some(title))
        .await
        .unwrap();
    World {
        owner_pool,
        app,
        owner,
        conversation,
    }
}
