//! A conversation's stored history: read as the model sees it, appended to as turns finish.
//!
//! Messages are rows of `conversation_messages`, numbered by `seq`. A finished turn appends only
//! its new messages, so a turn costs the same at the hundredth exchange as at the first. When the
//! context is fitted by summarising old turns, the messages stay (the thread is the person's
//! record); the conversation's `summary` stands for them and `history_from` says where the
//! model's history resumes.

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
/// from `history_from` on, in order. Empty for a conversation of another owner.
pub(crate) async fn load(
    conn: &mut PgConnection,
    owner: OwnerId,
    conversation: ConversationId,
) -> Result<Vec<Message>, AgentError> {
    let rows: Vec<Value> = sqlx::query_scalar(
        "SELECT message FROM (
             SELECT 0 AS part, s.ord::int AS n, s.message
             FROM conversations c, jsonb_array_elements(c.summary) WITH ORDINALITY AS s(message, ord)
             WHERE c.owner_id = $1 AND c.id = $2
             UNION ALL
             SELECT 1, m.seq, m.message
             FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
             WHERE m.owner_id = $1 AND m.conversation_id = $2 AND c.owner_id = $1 AND m.seq >= c.history_from
         ) AS h ORDER BY part, n",
    )
    .bind(owner.as_uuid())
    .bind(conversation.as_uuid())
    .fetch_all(&mut *conn)
    .await?;
    rows.into_iter()
        .map(|v| serde_json::from_value(v).map_err(AgentError::StoredMessage))
        .collect()
}

/// Adds `messages` after the conversation's last, records `evicted` first when the turn's context
/// was fitted, and touches `updated_at`. What stays is never rewritten.
pub(crate) async fn append(
    conn: &mut PgConnection,
    owner: OwnerId,
    conversation: ConversationId,
    messages: &[Message],
    evicted: Option<&Evicted>,
) -> Result<(), AgentError> {
    let summary = evicted
        .map(|e| serde_json::to_value(&e.summary))
        .transpose()
        .map_err(AgentError::StoringMessage)?;
    // The model's history resumes at the first message the summary does not stand for: the one
    // `messages` places after the evicted ones, or the first appended when all were evicted.
    sqlx::query(
        "UPDATE conversations c SET updated_at = now(),
                summary = CASE WHEN $3::int IS NULL THEN c.summary ELSE $4 END,
                history_from = CASE WHEN $3::int IS NULL THEN c.history_from ELSE coalesce(
                    (SELECT m.seq FROM conversation_messages m
                     WHERE m.owner_id = $1 AND m.conversation_id = $2 AND m.seq >= c.history_from
                     ORDER BY m.seq OFFSET $3 LIMIT 1),
                    (SELECT coalesce(max(m.seq) + 1, 0) FROM conversation_messages m
                     WHERE m.owner_id = $1 AND m.conversation_id = $2)) END
         WHERE c.owner_id = $1 AND c.id = $2",
    )
    .bind(owner.as_uuid())
    .bind(conversation.as_uuid())
    .bind(evicted.map(|e| i32::try_from(e.messages).unwrap_or(i32::MAX)))
    .bind(summary)
    .execute(&mut *conn)
    .await?;
    if messages.is_empty() {
        return Ok(());
    }
    let messages: Vec<Value> = messages
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(AgentError::StoringMessage)?;
    sqlx::query(
        "INSERT INTO conversation_messages (owner_id, conversation_id, seq, message)
         SELECT $1, $2, (last.next + m.ord - 1)::int, m.message
         FROM (SELECT coalesce(max(seq) + 1, 0) AS next FROM conversation_messages
               WHERE owner_id = $1 AND conversation_id = $2) AS last,
              UNNEST($3::jsonb[]) WITH ORDINALITY AS m(message, ord)",
    )
    .bind(owner.as_uuid())
    .bind(conversation.as_uuid())
    .bind(&messages)
    .execute(conn)
    .await?;
    Ok(())
}

/// Rewrites the conversation's messages as `history`, no summary: for a turn suspended before
/// histories were appended, whose stored turn does not say which of its messages are new.
pub(crate) async fn replace(
    conn: &mut PgConnection,
    owner: OwnerId,
    conversation: ConversationId,
    history: &[Message],
) -> Result<(), AgentError> {
    sqlx::query("DELETE FROM conversation_messages WHERE owner_id = $1 AND conversation_id = $2")
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .execute(&mut *conn)
        .await?;
    sqlx::query("UPDATE conversations SET summary = NULL, history_from = 0 WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .execute(&mut *conn)
        .await?;
    append(conn, owner, conversation, history, None).await
}
