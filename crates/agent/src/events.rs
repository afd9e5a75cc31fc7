//! The events that close a leg of a turn, as every driver sends them: the web's stream, the
//! CLI's `stream-json` and the library alike.

use kakeibo_core::{ConversationId, Event, RunSummary, Tier, TurnEnd};

use crate::turns::Outcome;

/// The last events of a leg that ended as `outcome`: a `confirm_request` per pending write and
/// `turn_end` for a suspended leg; `turn_end` with its usage and cost for a finished one.
/// `model` prices the uncached cost; `latency_ms` is the leg's.
pub fn closing_events(
    outcome: &Outcome,
    conversation: ConversationId,
    model: &str,
    latency_ms: u64,
) -> Vec<Event> {
    match outcome {
        Outcome::Finished { turn, .. } => RunSummary::of(turn, model)
            .map(|run| Event::TurnEnd(TurnEnd::finished(&run, conversation, latency_ms)))
            .into_iter()
            .collect(),
        Outcome::Suspended {
            run_id,
            suspended_id,
            pending,
        } => pending
            .iter()
            .map(|write| Event::ConfirmRequest {
                id: write.id.clone(),
                tool: write.tool.clone(),
                args: write.args.clone(),
                summary: write.summary.clone(),
                tier: Tier::Write,
                suspended_turn_id: *suspended_id,
            })
            .chain(std::iter::once(Event::TurnEnd(TurnEnd::suspended(
                *run_id,
                conversation,
                *suspended_id,
                latency_ms,
            ))))
            .collect(),
    }
}
