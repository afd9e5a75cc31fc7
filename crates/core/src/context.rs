//! Keeping a conversation under its token budget: old turn groups are summarised away, the
//! recent ones kept whole.
//!
//! A turn group is a message the person typed and everything up to their next one, so a kept
//! `tool_use` always keeps its `tool_result`. A summary is pinned as the first group (a user
//! message starting `<context_summary>` and an "Understood." reply) and merged into the next
//! summary. With six groups or fewer nothing is evicted, even over budget.

use crate::{
    ids::RunId,
    message::{Block, Message, Role},
    provider::{ModelRequest, Provider, complete},
    tool::Declaration,
    trace::{EvictionTrace, TraceEvent, TracePayload, Tracer},
};

pub const CONTEXT_BUDGET_TOKENS: u64 = 60_000;
pub const KEEP_RECENT_GROUPS: usize = 6;
const SUMMARY_MAX_TOKENS: u32 = 1200;
const SUMMARY_OPEN: &str = "<context_summary>";

/// A request's characters by how a tokenizer treats them: what [`estimate_tokens`] weighs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Census {
    /// The system prompt, text and thought summaries, digits aside.
    pub prose: u64,
    /// Tool calls' names and inputs and tool results' names and contents, digits aside.
    pub json: u64,
    /// The tool declarations as JSON (name, description, parameters), digits aside.
    pub declarations: u64,
    /// Every digit of the above: tokenizers such as Gemini's split numbers digit by digit.
    pub digits: u64,
    /// Provider data sent back as it came (thought signatures), which the provider counts too.
    pub opaque: u64,
}

impl Census {
    /// The characters of a request, by class.
    pub fn of(system: &str, messages: &[Message], tools: &[Declaration]) -> Self {
        let mut census = Self::default();
        census.add(Class::Prose, system);
        for declaration in tools {
            census.add(
                Class::Declarations,
                &serde_json::to_string(declaration).unwrap_or_default(),
            );
        }
        for block in messages.iter().flat_map(|m| &m.content) {
            let meta = match block {
                Block::Text { text, provider_meta } | Block::ThoughtSummary { text, provider_meta } => {
                    census.add(Class::Prose, text);
                    provider_meta.as_ref()
                }
                Block::ToolUse {
                    name,
                    input,
                    provider_meta,
                    ..
                } => {
                    census.add(Class::Json, name);
                    census.add(Class::Json, &input.to_string());
                    provider_meta.as_ref()
                }
                Block::ToolResult { name, content, .. } => {
                    census.add(Class::Json, name);
                    census.add(Class::Json, content);
                    None
                }
            };
            census.opaque += meta.map_or(0, |m| count(&m.0));
        }
        census
    }

    fn add(&mut self, class: Class, text: &str) {
        let digits = text.chars().filter(char::is_ascii_digit).count();
        let digits = u64::try_from(digits).unwrap_or(u64::MAX);
        let other = count(text).saturating_sub(digits);
        self.digits += digits;
        *match class {
            Class::Prose => &mut self.prose,
            Class::Json => &mut self.json,
            Class::Declarations => &mut self.declarations,
        } += other;
    }

    /// Every character counted, of every class.
    pub fn total(&self) -> u64 {
        self.prose + self.json + self.declarations + self.digits + self.opaque
    }

    /// The estimate under `divisors`: each class's characters over its divisor, summed, rounded up.
    pub fn tokens(&self, divisors: &Divisors) -> u64 {
        let part = |chars: u64, divisor: f64| {
            #[allow(clippy::cast_precision_loss)] // character counts, far below 2^52
            let chars = chars as f64;
            chars / divisor
        };
        let tokens = part(self.prose, divisors.prose)
            + part(self.json, divisors.json)
            + part(self.declarations, divisors.declarations)
            + part(self.digits, divisors.digits)
            + part(self.opaque, divisors.opaque);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // finite and non-negative
        let tokens = tokens.ceil().max(0.0) as u64;
        tokens
    }
}

fn count(text: &str) -> u64 {
    u64::try_from(text.chars().count()).unwrap_or(u64::MAX)
}

#[derive(Debug, Clone, Copy)]
enum Class {
    Prose,
    Json,
    Declarations,
}

/// Characters per token of each class of a [`Census`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Divisors {
    pub prose: f64,
    pub json: f64,
    pub declarations: f64,
    pub digits: f64,
    pub opaque: f64,
}

impl Divisors {
    /// Gemini's: fitted to its own input-token counts of recorded exchanges by
    /// `cargo xtask metrics`, which reports the fit and the error on exchanges it was not fitted on.
    pub const GEMINI: Self = Self {
        prose: 4.15,
        json: 3.27,
        declarations: 10.62,
        digits: 0.76,
        opaque: 5.18,
    };

    /// For a model whose counts were never measured: prose at 4.1 characters a token and JSON at
    /// 2.6 (the reference design's rule), declarations and digits counted as JSON and signatures as
    /// prose. It counts declarations far above what Gemini does, which errs on the side of a
    /// larger budget reservation.
    pub const CAUTIOUS: Self = Self {
        prose: 4.1,
        json: 2.6,
        declarations: 2.6,
        digits: 2.6,
        opaque: 4.1,
    };

    /// The divisors for `model`'s own count: Gemini's for a Gemini model, else [`Self::CAUTIOUS`].
    pub fn for_model(model: &str) -> Self {
        if model.starts_with("gemini") {
            Self::GEMINI
        } else {
            Self::CAUTIOUS
        }
    }
}

/// Tokens of a request by the estimate: its [`Census`] under `divisors` (a provider's
/// [`Provider::divisors`]).
pub fn estimate_tokens(
    divisors: &Divisors,
    system: &str,
    messages: &[Message],
    tools: &[Declaration],
) -> u64 {
    Census::of(system, messages, tools).tokens(divisors)
}

/// The history split into groups, each starting at a message the person typed.
fn groups(history: &[Message]) -> Vec<&[Message]> {
    let starts: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User && !m.is_tool_results())
        .map(|(i, _)| i)
        .collect();
    let mut out = Vec::new();
    if let Some(before) = starts
        .first()
        .and_then(|&s| history.get(..s))
        .filter(|b| !b.is_empty())
    {
        out.push(before);
    }
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(history.len());
        out.extend(history.get(start..end));
    }
    out
}

/// The two messages that stand for evicted history at the head of a fitted one: the summary,
/// and the model's acknowledgement (so roles still alternate).
pub fn summary_messages(summary: &str) -> Vec<Message> {
    vec![
        Message::user(format!("{SUMMARY_OPEN}\n{summary}\n</context_summary>")),
        Message::assistant(vec![Block::text("Understood.")]),
    ]
}

fn is_summary(group: &[Message]) -> bool {
    group
        .first()
        .is_some_and(|m| m.role == Role::User && m.text().starts_with(SUMMARY_OPEN))
}

/// What an eviction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eviction {
    pub evicted_groups: usize,
    pub evicted_messages: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub summary: String,
}

/// Fits `history` into `budget` tokens: near or over the budget by the estimate, it counts with
/// the provider when it can (the estimate otherwise); when over, summarises all but the last [`KEEP_RECENT_GROUPS`] groups with
/// `summarizer`. Records a `summary_eviction` event when it evicts.
#[allow(clippy::too_many_arguments)]
pub async fn fit(
    history: Vec<Message>,
    system: &str,
    tools: &[Declaration],
    provider: &dyn Provider,
    summarizer: &dyn Provider,
    budget: u64,
    trace: Option<(&dyn Tracer, RunId, &mut u32)>,
) -> (Vec<Message>, Option<Eviction>) {
    // The estimate decides whether a real count is worth a round trip: well under budget, no.
    let divisors = provider.divisors();
    let estimate = estimate_tokens(&divisors, system, &history, tools);
    let tokens_before = if estimate.saturating_mul(10) < budget.saturating_mul(8) {
        estimate
    } else {
        let request = ModelRequest {
            system: system.to_owned(),
            messages: history.clone(),
            tools: tools.into(),
            max_tokens: 0,
        };
        provider.count_tokens(&request).await.unwrap_or(estimate)
    };
    if tokens_before <= budget {
        return (history, None);
    }
    let all = groups(&history);
    let (pinned, body): (Option<&[Message]>, Vec<&[Message]>) = match all.split_first() {
        Some((first, rest)) if is_summary(first) => (Some(*first), rest.to_vec()),
        _ => (None, all.clone()),
    };
    if body.len() <= KEEP_RECENT_GROUPS {
        return (history, None);
    }
    let (evicted, kept) = body.split_at(body.len() - KEEP_RECENT_GROUPS);
    let previous = pinned.and_then(|g| g.first()).map(|m| {
        m.text()
            .trim_start_matches(SUMMARY_OPEN)
            .trim_end_matches("</context_summary>")
            .trim()
            .to_owned()
    });
    let summary = summarize(summarizer, evicted, previous.as_deref())
        .await
        .unwrap_or_else(|| {
            previous.clone().unwrap_or_else(|| {
                format!(
                    "{} earlier turns were removed to keep the conversation short.",
                    evicted.len()
                )
            })
        });
    let mut fitted = summary_messages(&summary);
    for group in kept {
        fitted.extend(group.iter().cloned());
    }
    let tokens_after = estimate_tokens(&divisors, system, &fitted, tools);
    let eviction = Eviction {
        evicted_groups: evicted.len(),
        evicted_messages: evicted.iter().map(|g| g.len()).sum(),
        tokens_before,
        tokens_after,
        summary,
    };
    if let Some((tracer, run_id, seq)) = trace {
        let payload = TracePayload::SummaryEviction(EvictionTrace {
            evicted_turns: eviction.evicted_groups,
            evicted_messages: eviction.evicted_messages,
            kept_turns: kept.len(),
            tokens_before,
            tokens_after,
            budget,
            summary: eviction.summary.clone(),
        });
        let event = TraceEvent {
            run_id,
            seq: *seq,
            payload,
            latency_ms: None,
            usage: None,
            thought_summary: None,
        };
        *seq += 1;
        tracer.record(event).await;
    }
    (fitted, Some(eviction))
}

/// A summary of the evicted groups (merged with the previous one), or `None` if the
/// summarizer failed or said nothing.
async fn summarize(
    summarizer: &dyn Provider,
    evicted: &[&[Message]],
    previous: Option<&str>,
) -> Option<String> {
    let clip = |s: &str| s.chars().take(400).collect::<String>();
    let mut transcript = String::new();
    for message in evicted.iter().flat_map(|g| g.iter()) {
        for block in &message.content {
            let line = match (message.role, block) {
                (Role::User, Block::Text { text, .. }) => format!("USER: {text}"),
                (Role::Assistant, Block::Text { text, .. }) => format!("AGENT: {text}"),
                (_, Block::ToolUse { name, input, .. }) => format!("[called {name} with {input}]"),
                (_, Block::ToolResult { name, content, .. }) => {
                    format!("[{name} returned: {}]", clip(content))
                }
                (_, Block::ThoughtSummary { .. }) => continue,
            };
            transcript.push_str(&line);
            transcript.push('\n');
        }
    }
    let mut instruction = String::from(
        "Summarise this part of a conversation between a person and kakeibo, their personal finance agent, so the \
         conversation can go on without it. Keep: what was asked and the figures reported; decisions, writes \
         confirmed or declined, and rules or budgets set; the person's preferences and constraints; anything still \
         open. Drop pleasantries and tool mechanics. Invent nothing. Stay under 250 words.",
    );
    if let Some(previous) = previous {
        instruction.push_str(" An earlier summary follows the transcript: merge both into one summary.");
        instruction.push_str("\n\nEARLIER SUMMARY:\n");
        instruction.push_str(previous);
    }
    let request = ModelRequest {
        system: "You write faithful, compact summaries.".to_owned(),
        messages: vec![Message::user(format!(
            "{instruction}\n\nTRANSCRIPT:\n{transcript}"
        ))],
        tools: Vec::new().into(),
        max_tokens: SUMMARY_MAX_TOKENS,
    };
    let response = complete(summarizer, &request, &mut |_| {}).await.ok()?;
    let text = response.message.text();
    (!text.trim().is_empty()).then(|| text.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        ids::RunId,
        message::ToolResult,
        scripted::{Scripted, reply_text},
        trace::MemoryTracer,
    };
    use serde_json::json;

    fn exchange(i: usize) -> Vec<Message> {
        vec![
            Message::user(format!("question {i} {}", "x".repeat(4000))),
            Message::assistant(vec![Block::ToolUse {
                id: format!("c{i}"),
                name: "list_accounts".into(),
                input: json!({}),
                provider_meta: None,
            }]),
            Message {
                role: Role::User,
                content: vec![Block::from(ToolResult {
                    tool_use_id: format!("c{i}"),
                    name: "list_accounts".into(),
                    content: "y".repeat(3000),
                    is_error: false,
                })],
            },
            Message::assistant(vec![Block::text(format!("answer {i}"))]),
        ]
    }

    #[test]
    fn the_estimate_weighs_each_class_of_characters() {
        let messages = vec![Message::user(format!("{} 2025", "a".repeat(40)))];
        let census = Census::of("ab", &messages, &[]);
        assert_eq!(
            census,
            Census {
                prose: 43,
                digits: 4,
                ..Census::default()
            }
        );
        // 43 / 4.15 + 4 / 0.76 = 15.6…; 43 / 4.1 + 4 / 2.6 = 12.0…
        assert_eq!(estimate_tokens(&Divisors::GEMINI, "ab", &messages, &[]), 16);
        assert_eq!(estimate_tokens(&Divisors::CAUTIOUS, "ab", &messages, &[]), 13);
        assert_eq!(Divisors::for_model("gemini-3.6-flash"), Divisors::GEMINI);
        assert_eq!(Divisors::for_model("claude-sonnet-4-5"), Divisors::CAUTIOUS);
        let signed = vec![Message::assistant(vec![Block::ToolUse {
            id: "c1".into(),
            name: "list_accounts".into(),
            input: json!({"limit": 20}),
            provider_meta: Some(crate::ProviderMeta("s".repeat(10))),
        }])];
        let census = Census::of("", &signed, &[]);
        assert_eq!((census.json, census.digits, census.opaque), (13 + 10, 2, 10));
        assert_eq!(census.total(), 35);
        assert!(estimate_tokens(&Divisors::GEMINI, "", &exchange(0), &[]) > 1500);
    }

    #[tokio::test]
    async fn old_groups_are_summarised_and_recent_ones_kept_whole() {
        let history: Vec<Message> = (0..10).flat_map(exchange).collect();
        let model = Scripted::new(vec![]);
        let summarizer = Scripted::new(vec![Ok(reply_text("They asked about accounts ten times."))]);
        let tracer = MemoryTracer::default();
        let mut seq = 4;
        let (fitted, eviction) = fit(
            history.clone(),
            "system",
            &[],
            &model,
            &summarizer,
            15_000,
            Some((&tracer, RunId::random(), &mut seq)),
        )
        .await;
        let eviction = eviction.unwrap();
        assert_eq!(eviction.evicted_groups, 4);
        assert_eq!(fitted.len(), 2 + 6 * 4);
        assert!(
            fitted[0]
                .text()
                .starts_with("<context_summary>\nThey asked about accounts ten times.")
        );
        assert_eq!(&fitted[2..], &history[16..], "the six recent groups, whole");
        assert!(eviction.tokens_after < eviction.tokens_before);
        assert_eq!(seq, 5);
        assert_eq!(tracer.events()[0].kind(), crate::TraceKind::SummaryEviction);
        assert!(
            summarizer.requests()[0].messages[0]
                .text()
                .contains("USER: question 0")
        );

        // The summary is pinned and merged into the next one.
        let mut more = fitted.clone();
        more.extend((10..14).flat_map(exchange));
        let summarizer = Scripted::new(vec![Ok(reply_text("Merged."))]);
        let (refitted, _) = fit(more, "system", &[], &model, &summarizer, 15_000, None).await;
        assert!(
            summarizer.requests()[0].messages[0]
                .text()
                .contains("EARLIER SUMMARY:\nThey asked about accounts ten times.")
        );
        assert!(refitted[0].text().contains("Merged."));

        // Six groups or fewer: nothing is evicted even over budget; a silent summarizer keeps a placeholder.
        let few: Vec<Message> = (0..6).flat_map(exchange).collect();
        assert!(
            fit(few.clone(), "s", &[], &model, &model, 10, None)
                .await
                .1
                .is_none()
        );
        let silent = Scripted::new(vec![Ok(reply_text(""))]);
        let (placeholder, _) = fit(history, "s", &[], &model, &silent, 10, None).await;
        assert!(placeholder[0].text().contains("4 earlier turns were removed"));
    }
}
