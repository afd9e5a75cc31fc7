//! Each channel a run can be recorded under is a label of the database's `channel` enum.

use kakeibo_agent::Channel;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_channel_is_a_label_of_the_stored_enum(options: PgPoolOptions, connect: PgConnectOptions) {
    let pool = options.connect_with(connect).await.unwrap();
    let labels: Vec<String> = sqlx::query_scalar("SELECT unnest(enum_range(NULL::channel))::text")
        .fetch_all(&pool)
        .await
        .unwrap();
    for channel in [
        Channel::Web,
        Channel::Cli,
        Channel::Eval,
        Channel::Library,
        Channel::Acp,
    ] {
        assert!(
            labels.iter().any(|l| l == channel.as_str()),
            "{channel:?} in {labels:?}"
        );
        assert_eq!(serde_json::to_value(channel).unwrap(), channel.as_str());
    }
}
