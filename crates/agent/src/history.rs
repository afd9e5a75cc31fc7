//! A conversation's stored history: read as the model sees it, appended to as turns finish.
//!
//! Messages are rows of `conversation_messages`, numbered by `seq`. A finished turn appends only
//! its new messages, so a turn costs the same at the hundredth exchange as at the first. When the
//! context is fitted by summarising old turns, the messages stay (the thread is the person's
//! record); the conversation's `summary` stands for them and `history_from` says where the
//! model's history resumes. The statements are SQL functions (migration `0010_turn_phases.sql`),
//! which a turn's phases call in their single round trip.

use kakeibo_core::{ConversationId, Message, context};
use kakeibo_ledger::OwnerId;
use serde_json::Value;
use sqlx::PgConnection;

use crate::AgentError;

/// What a fitted context evicted: the messages now standing for the evicted ones, and how many
/// stored messages (after the previous summary) they replace.
#[derive(Debug, Clone, PartialEq)]
pub struct Evicted {
    pub summary: Vec<Message>,
    pub messages: usize,
}

impl Evicted {
    /// The record of `eviction`, whose summary opens the fitted history.
    pub fn of(eviction: &context::Eviction) -> Self {
        Self {
            summary: context::summary_messages(&eviction.summary),
            messages: eviction.evicted_messages,
        }
    }
}

/// The history the model sees: the summary standing for evicted messages, then the messages
/// from `history_from` on, in order (the SQL function `app_history`). Empty for a conversation of
/// another owner.
pub(crate) async fn load(
    conn: &mut PgConnection,
    owner: OwnerId,
    conversation: ConversationId,
) -> Result<Vec<Message>, AgentError> {
    let rows: Vec<Value> = sqlx::query_scalar("SELECT app_history($1, $2)")
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .fetch_one(conn)
        .await?;
    parse(rows)
}

/// Stored messages, read back.
pub(crate) fn parse(rows: Vec<Value>) -> Result<Vec<Message>, AgentError> {
    rows.into_iter()
        .map(|v| serde_json::from_value(v).map_err(AgentError::StoredMessage))
        .collect()
}

/// Messages as the rows `app_append_history` stores.
pub(crate) fn rows(messages: &[Message]) -> Result<Vec<Value>, AgentError> {
    messages
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(AgentError::StoringMessage)
}

/// `app_append_history`'s eviction arguments: how many stored messages the summary replaces, and
/// the summary; both `None` when the context was not fitted.
pub(crate) fn eviction_args(evicted: Option<&Evicted>) -> Result<(Option<i32>, Option<Value>), AgentError> {
    let Some(evicted) = evicted else {
        return Ok((None, None));
    };
    let summary = serde_json::to_value(&evicted.summary).map_err(AgentError::StoringMessage)?;
    Ok((
        Some(i32::try_from(evicted.messages).unwrap_or(i32::MAX)),
        Some(summary),
    ))
}
