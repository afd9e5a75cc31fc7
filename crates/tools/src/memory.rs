//! What the person asked kakeibo to remember, recalled into their latest message.

use kakeibo_core::{Block, Message};
use sqlx::PgConnection;

use kakeibo_ledger::OwnerId;

use crate::{Category, ToolsError};

/// How many of the most recent memories are always recalled.
pub const RECENT_MEMORIES: i64 = 20;

const CATEGORIES: [Category; 15] = [
    Category::Groceries,
    Category::Dining,
    Category::Transport,
    Category::Rent,
    Category::Utilities,
    Category::Subscriptions,
    Category::Shopping,
    Category::Health,
    Category::Entertainment,
    Category::Travel,
    Category::Fees,
    Category::Uncategorized,
    Category::Salary,
    Category::Interest,
    Category::OtherIncome,
];

/// The category names `question` mentions as whole words (case-insensitive).
pub fn mentioned_categories(question: &str) -> Vec<&'static str> {
    let words: Vec<String> = question
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let text = format!(" {} ", words.join(" "));
    CATEGORIES
        .iter()
        .map(|c| c.name())
        .filter(|name| text.contains(&format!(" {} ", name.to_lowercase())))
        .collect()
}

/// The 20 most recent memories and those filed under a category the question names, newest
/// first, without repeats.
pub async fn recall(
    owner: OwnerId,
    conn: &mut PgConnection,
    question: &str,
) -> Result<Vec<String>, ToolsError> {
    Ok(sqlx::query_scalar("SELECT app_recall($1, $2, $3)")
        .bind(owner.as_uuid())
        .bind(RECENT_MEMORIES)
        .bind(recalled_categories(question))
        .fetch_one(conn)
        .await?)
}

/// The lower-cased category names `question` recalls memories of (the SQL function
/// `app_recall`'s third argument, migration `0010_turn_phases.sql`).
pub fn recalled_categories(question: &str) -> Vec<String> {
    mentioned_categories(question)
        .into_iter()
        .map(str::to_lowercase)
        .collect()
}

/// The person's message with their memories as a second text block, `<user_memory>` — never in
/// the system prompt, which stays the same for everyone.
pub fn with_memories(mut message: Message, memories: &[String]) -> Message {
    if !memories.is_empty() {
        let lines: Vec<String> = memories.iter().map(|m| format!("- {m}")).collect();
        message.content.push(Block::text(format!(
            "<user_memory>\n{}\n</user_memory>",
            lines.join("\n")
        )));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_are_matched_as_whole_words() {
        assert_eq!(
            mentioned_categories("How much on groceries and Other Income?"),
            ["Groceries", "Other Income"]
        );
        assert!(
            mentioned_categories("my rental car").is_empty(),
            "Rent is not rental"
        );
        let message = with_memories(Message::user("hi"), &["Salary arrives on the 1st".into()]);
        assert_eq!(message.content.len(), 2);
        assert_eq!(
            message.text(),
            "hi<user_memory>\n- Salary arrives on the 1st\n</user_memory>"
        );
    }
}
