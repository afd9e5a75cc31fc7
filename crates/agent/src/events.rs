//! The events that close a leg of a turn, as every driver sends them: the web's stream, the
//! CLI's `stream-json` and the library alike.

use kakeibo_core::{ConversationId, Event, EventUsage, Stop, Tier, TurnEnd, pricing};

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
        Outcome::Finished {
            run_id,
            status,
            answer,
            turn,
        } => {
            let (_, uncached) = pricing::cost(model, &turn.usage());
            let stop = turn.stop().filter(|stop| *stop != Stop::End);
            vec![Event::TurnEnd(TurnEnd {
                run_id: *run_id,
                conversation_id: conversation,
                status: status.as_str().to_owned(),
                suspended_turn_id: None,
                usage: Some(EventUsage::from(&turn.usage())),
                cost_usd_est: Some(turn.cost().decimal()),
                uncached_cost_usd_est: Some(uncached.decimal()),
                latency_ms,
                iterations: Some(turn.iteration()),
                stop,
                // The turn's own sentence about what stopped it; a cut-off answer streamed as
                // text already.
                message: stop
                    .is_some_and(|stop| stop != Stop::MaxTokens)
                    .then(|| answer.clone()),
            })]
        }
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
            .chain(std::iter::once(Event::TurnEnd(TurnEnd {
                run_id: *run_id,
                conversation_id: conversation,
                status: "suspended".to_owned(),
                suspended_turn_id: Some(*suspended_id),
                usage: None,
                cost_usd_est: None,
                uncached_cost_usd_est: None,
                latency_ms,
                iterations: None,
                stop: None,
                message: None,
            })))
            .collect(),
    }
}
