//! Conversations of one owner: the list, one thread, and which one a new message goes to.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use kakeibo_ledger::{OwnerId, begin_for_owner};

use kakeibo_core::{ConversationId, Message, PendingWrite, Phase, Role, Turn};

use crate::AgentError;

#[derive(Debug, Clone, Serialize, JsonSchema, sqlx::FromRow)]
pub struct ConversationSummary {
    pub id: Uuid,
    pub title: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// How many messages the conversation holds (`message_count`, so a conversation's own
    /// `messages` list never shares its key).
    #[serde(rename = "message_count")]
    pub messages: i64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Conversation {
    #[serde(flatten)]
    pub summary: ConversationSummary,
    /// The stored canonical messages, in order.
    pub messages: Vec<Message>,
    /// Its turns waiting for the person, oldest first: a page rebuilds their decision from these.
    pub pending: Vec<PendingTurn>,
}

/// A turn waiting for the person to allow or decline writes (not yet expired, not being
/// answered): what it has said so far and what it asks.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PendingTurn {
    pub suspended_turn_id: Uuid,
    pub run_id: Uuid,
    pub expires_at: DateTime<Utc>,
    /// The turn's own messages so far, stored form: the person's question first, then the
    /// model's steps; the results of calls that ran beside the writes last.
    pub messages: Vec<Message>,
    /// The writes it asks for, in the order the model proposed them.
    pub writes: Vec<PendingWrite>,
}

const SUMMARY: &str = "SELECT c.id, c.title, c.created_at, c.updated_at,
        (SELECT count(*) FROM conversation_messages m WHERE m.owner_id = c.owner_id AND m.conversation_id = c.id) AS messages
    FROM conversations c WHERE c.owner_id = $1";

/// The owner's conversations, most recently updated first.
pub async fn list_conversations(
    owner: OwnerId,
    pool: &PgPool,
) -> Result<Vec<ConversationSummary>, AgentError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let rows = sqlx::query_as::<_, ConversationSummary>(sqlx::AssertSqlSafe(format!(
        "{SUMMARY} ORDER BY c.updated_at DESC, c.id LIMIT 200"
    )))
    .bind(owner.as_uuid())
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(rows)
}

/// One conversation of the owner with its messages; `None` when the owner has no such one.
pub async fn conversation(
    owner: OwnerId,
    pool: &PgPool,
    id: ConversationId,
) -> Result<Option<Conversation>, AgentError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let summary =
        sqlx::query_as::<_, ConversationSummary>(sqlx::AssertSqlSafe(format!("{SUMMARY} AND c.id = $2")))
            .bind(owner.as_uuid())
            .bind(id.as_uuid())
            .fetch_optional(&mut *tx)
            .await?;
    let Some(summary) = summary else {
        return Ok(None);
    };
    let messages: Vec<sqlx::types::Json<Message>> = sqlx::query_scalar(
        "SELECT message FROM conversation_messages WHERE owner_id = $1 AND conversation_id = $2 ORDER BY seq",
    )
    .bind(owner.as_uuid())
    .bind(id.as_uuid())
    .fetch_all(&mut *tx)
    .await?;
    let waiting: Vec<WaitingRow> = sqlx::query_as(
        "SELECT id, run_id, expires_at, state, history_base FROM suspended_turns
         WHERE owner_id = $1 AND conversation_id = $2 AND status = 'pending' AND expires_at > now()
         ORDER BY created_at, id",
    )
    .bind(owner.as_uuid())
    .bind(id.as_uuid())
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    let pending = waiting
        .into_iter()
        .filter_map(|(suspended_turn_id, run_id, expires_at, state, base)| {
            let turn = Turn::from_json(state)
                .inspect_err(|e| {
                    tracing::warn!(error = %e, suspended_turn = %suspended_turn_id, "a waiting turn cannot be read back");
                })
                .ok()?;
            let (messages, writes) = waiting_turn(&turn, base.and_then(|b| usize::try_from(b).ok()))?;
            Some(PendingTurn {
                suspended_turn_id,
                run_id,
                expires_at,
                messages,
                writes,
            })
        })
        .collect();
    Ok(Some(Conversation {
        summary,
        messages: messages.into_iter().map(|message| message.0).collect(),
        pending,
    }))
}

/// A stored turn waiting for the person: its id, run, expiry, state and where its history began.
type WaitingRow = (Uuid, Uuid, DateTime<Utc>, Value, Option<i32>);

/// A waiting turn's own messages (from `base`, where its history began; for a turn stored
/// without one, from the person's last message) and its pending writes; `None` for a turn that
/// is not waiting.
fn waiting_turn(turn: &Turn, base: Option<usize>) -> Option<(Vec<Message>, Vec<PendingWrite>)> {
    let Phase::AwaitConfirm { done, pending, .. } = turn.phase() else {
        return None;
    };
    let history = turn.history();
    let from = base.filter(|b| *b < history.len()).unwrap_or_else(|| {
        history
            .iter()
            .rposition(|m| m.role == Role::User && m.tool_uses().is_empty() && !m.text().is_empty())
            .unwrap_or(0)
    });
    let mut own: Vec<Message> = history.get(from..).unwrap_or_default().to_vec();
    if !done.is_empty() {
        own.push(Message::results(done.iter().cloned()));
    }
    Some((own, pending.clone()))
}

/// The conversation a new message goes to: `requested` when the owner has it (`None` when not),
/// and without one a new conversation titled after the message (its first 80 characters).
pub async fn conversation_for_message(
    owner: OwnerId,
    pool: &PgPool,
    requested: Option<ConversationId>,
    first_message: &str,
) -> Result<Option<ConversationId>, AgentError> {
    // One statement (`app_conversation`, migration 0011): the lookup or the insert, and its commit.
    let id: Option<Uuid> = sqlx::query_scalar("SELECT app_conversation($1, $2, $3)")
        .bind(owner.as_uuid())
        .bind(requested.map(ConversationId::as_uuid))
        .bind(title_of(first_message))
        .fetch_one(pool)
        .await?;
    Ok(id.map(ConversationId::from_uuid))
}

/// What a new message to a conversation would meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Not the owner's (or no such conversation).
    Missing,
    Free,
    Busy(crate::turns::Busy),
}

/// Whether `conversation` of `owner` can take a new message now, in one statement
/// (`app_conversation_state`, migration 0019). The turn's opening checks again under a lock, so
/// this is for answering early, not the guarantee.
pub async fn availability(
    owner: OwnerId,
    pool: &PgPool,
    conversation: ConversationId,
) -> Result<Availability, AgentError> {
    let state: String = sqlx::query_scalar("SELECT app_conversation_state($1, $2)")
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .fetch_one(pool)
        .await?;
    Ok(match state.as_str() {
        "free" => Availability::Free,
        other => crate::turns::Busy::parse(other).map_or(Availability::Missing, Availability::Busy),
    })
}

/// The model of `conversation`'s first run — the model the conversation was given — in one
/// statement (`app_conversation_model`, migration 0027); `None` for a conversation with no run.
pub async fn first_model(
    owner: OwnerId,
    pool: &PgPool,
    conversation: ConversationId,
) -> Result<Option<String>, AgentError> {
    Ok(sqlx::query_scalar("SELECT app_conversation_model($1, $2)")
        .bind(owner.as_uuid())
        .bind(conversation.as_uuid())
        .fetch_one(pool)
        .await?)
}

/// The title of a conversation that `first_message` starts: its first line's words, without the ids a page
/// puts in a message for the model ("(plan 0b6c…)", "upload 0b6c…"), at most 80 characters.
pub fn title_of(first_message: &str) -> String {
    let line = first_message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let words = without_ids(line);
    let title = if words.is_empty() { line } else { words.as_str() };
    title.chars().take(80).collect()
}

/// `text` without ids: a parenthesis holding one goes whole, a bare one goes with the word that
/// names it ("plan", "upload", "id") and a comma before it.
fn without_ids(text: &str) -> String {
    let has_id = |s: &str| s.split(|c: char| !(c.is_ascii_hexdigit() || c == '-')).any(is_id);
    // Parentheses holding an id.
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        let (before, from) = rest.split_at(open);
        let Some(close) = from.find(')') else { break };
        let (group, after) = from.split_at(close.saturating_add(1));
        kept.push_str(before);
        if !has_id(group) {
            kept.push_str(group);
        }
        rest = after;
    }
    kept.push_str(rest);
    // Bare ids, with the word naming them.
    let mut words: Vec<&str> = Vec::new();
    for word in kept.split_whitespace() {
        if has_id(word) {
            let named = words.last().is_some_and(|w| {
                matches!(
                    w.trim_end_matches([',', ':']).to_lowercase().as_str(),
                    "plan" | "upload" | "id"
                )
            });
            if named {
                words.pop();
            }
            continue;
        }
        words.push(word);
    }
    let mut out = words.join(" ");
    // What the removal left hanging: "statement, ." → "statement.", "name ." → "name."
    for (hanging, tidy) in [(" .", "."), (",.", "."), (" ,", ","), (" :", ":")] {
        while out.contains(hanging) {
            out = out.replace(hanging, tidy);
        }
    }
    out.trim_end_matches([',', ':', ' ']).to_owned()
}

fn is_id(s: &str) -> bool {
    s.len() == 36 && Uuid::parse_str(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::title_of;

    #[test]
    fn titles_are_words_without_ids() {
        let plan = "0b6c1f5e-5d0a-4c1e-9a53-2f1d7a0c9e11";
        assert_eq!(
            title_of(&format!(
                "Import july.csv: 3 rows, 1–3 Jul 2025, into Checking (plan {plan})."
            )),
            "Import july.csv: 3 rows, 1–3 Jul 2025, into Checking."
        );
        assert_eq!(
            title_of(&format!("import the previewed statement, plan {plan}")),
            "import the previewed statement"
        );
        assert_eq!(
            title_of("What did I spend (roughly) in May?"),
            "What did I spend (roughly) in May?"
        );
        assert_eq!(title_of(plan), plan, "a message that is only an id keeps it");
        assert_eq!(title_of(&"a".repeat(100)).chars().count(), 80);
        assert_eq!(title_of("\n  Groceries in May?\nand June"), "Groceries in May?");
    }
}

/// What a conversation's runs came to: how many, their tokens, their list-price cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct Spend {
    pub runs: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_micro_usd: i64,
}

/// What each of the owner's conversations (or only `conversation`) came to, by conversation.
pub async fn spend(
    owner: OwnerId,
    pool: &PgPool,
    conversation: Option<ConversationId>,
) -> Result<Vec<(Uuid, Spend)>, AgentError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        conversation_id: Uuid,
        #[sqlx(flatten)]
        spend: Spend,
    }
    let mut tx = begin_for_owner(owner, pool).await?;
    let rows = sqlx::query_as::<_, Row>(
        "SELECT conversation_id, count(*) AS runs,
                coalesce(sum(input_tokens), 0)::bigint AS input_tokens,
                coalesce(sum(output_tokens), 0)::bigint AS output_tokens,
                coalesce(sum(cost_usd_est * 1000000), 0)::bigint AS cost_micro_usd
         FROM trace_runs
         WHERE owner_id = $1 AND conversation_id IS NOT NULL AND ($2::uuid IS NULL OR conversation_id = $2)
         GROUP BY conversation_id",
    )
    .bind(owner.as_uuid())
    .bind(conversation.map(ConversationId::as_uuid))
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(rows.into_iter().map(|r| (r.conversation_id, r.spend)).collect())
}
