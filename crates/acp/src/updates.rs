//! kakeibo's events as ACP session updates, and its stops as ACP stop reasons.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
    StopReason, TextContent, ToolCall, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use kakeibo::{Event, Stop, Tier, figures::FigureCheck, plain_summary, todo};

/// The update an event of a run is to the client, if it is one.
pub fn update_of(event: &Event) -> Option<SessionUpdate> {
    match event {
        Event::Token { delta } => Some(text(delta.clone())),
        // The task list is the session's plan; a list the tool refuses is a failed call.
        Event::ToolCall { name, args, .. } if name == todo::NAME && todo::todos_of(args).is_some() => {
            let entries = todo::todos_of(args)
                .unwrap_or_default()
                .into_iter()
                .map(|item| {
                    let status = match item.status {
                        todo::TodoStatus::Pending => PlanEntryStatus::Pending,
                        todo::TodoStatus::InProgress => PlanEntryStatus::InProgress,
                        todo::TodoStatus::Completed => PlanEntryStatus::Completed,
                    };
                    PlanEntry::new(item.content, PlanEntryPriority::Medium, status)
                })
                .collect();
            Some(SessionUpdate::Plan(Plan::new(entries)))
        }
        Event::ToolResult { name, outcome, .. }
            if name == todo::NAME && !outcome.is_error() && outcome.not_run().is_none() =>
        {
            None
        }
        Event::ToolCall { id, name, args, tier } => {
            let (kind, status) = match tier {
                Some(Tier::Read) => (ToolKind::Read, ToolCallStatus::InProgress),
                // A write may wait for the person first: it is pending until it runs.
                Some(Tier::Write) => (ToolKind::Edit, ToolCallStatus::Pending),
                _ => (ToolKind::Other, ToolCallStatus::InProgress),
            };
            Some(SessionUpdate::ToolCall(
                ToolCall::new(id.clone(), name.clone())
                    .kind(kind)
                    .status(status)
                    .raw_input(args.clone()),
            ))
        }
        Event::ToolResult {
            id, summary, outcome, ..
        } => {
            let refused = outcome.not_run();
            let status = if outcome.is_error() || refused.is_some() {
                ToolCallStatus::Failed
            } else {
                ToolCallStatus::Completed
            };
            let said = refused.map_or_else(|| plain_summary(summary), str::to_owned);
            Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id.clone(),
                ToolCallUpdateFields::new()
                    .status(status)
                    .content(vec![said.into()]),
            )))
        }
        // What stopped a run short is said in words: it is never streamed as text.
        Event::TurnEnd(end) => end.message.clone().map(|m| text(format!("\n\n{m}"))),
        Event::Error { message } => Some(text(format!("\n\n{message}"))),
        Event::ConfirmRequest { .. } => None,
        // A subagent's calls are tool calls of the session's own, titled under the task.
        Event::Subagent { event, .. } => match update_of(event)? {
            SessionUpdate::ToolCall(mut call) => {
                call.title = format!("task › {}", call.title);
                Some(SessionUpdate::ToolCall(call))
            }
            other => Some(other),
        },
        Event::Figures(checked) => Some(figures(checked)),
        Event::Correcting { figures } => Some(text(format!(
            "\n\n({} not found in your ledger's results: the answer is being corrected.)\n\n",
            figures.join(", ")
        ))),
    }
}

/// The answer's figures: the whole check under `_meta.kakeibo.figures`, and in words, each
/// figure the turn's tool results do not hold.
fn figures(checked: &FigureCheck) -> SessionUpdate {
    let missing = checked.ungrounded_texts();
    let said = if missing.is_empty() {
        String::new()
    } else {
        format!(
            "\n\n({} {} not found in your ledger's results.)",
            missing.join(", "),
            if missing.len() == 1 { "was" } else { "were" }
        )
    };
    let mut meta = serde_json::Map::new();
    meta.insert("kakeibo".to_owned(), serde_json::json!({ "figures": checked }));
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(said))).meta(meta))
}

/// Something the person should know about the session itself (an MCP server left out), as a
/// line of the agent's message before the answer.
pub fn notice(sentence: &str) -> SessionUpdate {
    text(format!("(kakeibo: {sentence})\n\n"))
}

fn text(text: String) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(text))))
}

/// The stop reason ACP knows for how a run ended.
pub fn stop_reason(stop: Option<Stop>) -> StopReason {
    match stop {
        Some(Stop::Cancelled) => StopReason::Cancelled,
        Some(Stop::MaxTokens) => StopReason::MaxTokens,
        Some(Stop::IterationLimit) => StopReason::MaxTurnRequests,
        Some(Stop::Blocked) => StopReason::Refusal,
        // Answered, or stopped for a reason the answer's last chunk says.
        _ => StopReason::EndTurn,
    }
}
