//! A turn checks its answer's figures against its tools' figures: the `figures` event, the
//! trace, the run's summary — and a write run in another process counts once it is resumed.

use std::sync::Mutex;

use futures_util::future::BoxFuture;
use kakeibo_core::{
    ConfirmPolicy, Deps, Event, FiguresPolicy, MemoryTracer, Message, PermissionRules, Phase, RunId,
    RunSummary, Tier, ToolError, ToolRegistry, ToolResult, TraceKind, TracePayload, Turn, TurnEvent,
    TypedTool, drive,
    figures::{Grounding, How},
    scripted::{Scripted, reply_calls, reply_text},
    turn::tool_data,
    typed,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema)]
struct NoInput {}

/// A report: a total and two groups, as every tool writes amounts.
struct Report;

impl TypedTool for Report {
    type Input = NoInput;
    type Output = Value;
    const NAME: &'static str = "report";
    const DESCRIPTION: &'static str = "A spending report.";
    const TIER: Tier = Tier::Read;

    fn run(&self, _input: NoInput) -> BoxFuture<'_, Result<Value, ToolError>> {
        let amount = |minor: i64| json!({"amount_minor": minor, "currency": "USD"});
        Box::pin(std::future::ready(Ok(json!({
            "total": amount(219_173),
            "groups": [
                {"group": "Dining", "amount_minor": 41_250, "currency": "USD"},
                {"group": "Groceries", "amount_minor": 60_000, "currency": "USD"},
            ],
        }))))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct BudgetInput {
    /// Minor units.
    amount_minor: i64,
}

/// A write.
struct SetBudget;

impl TypedTool for SetBudget {
    type Input = BudgetInput;
    type Output = Value;
    const NAME: &'static str = "set_budget";
    const DESCRIPTION: &'static str = "Set a budget.";
    const TIER: Tier = Tier::Write;

    fn run(&self, input: BudgetInput) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(std::future::ready(Ok(
            json!({"amount_minor": input.amount_minor, "currency": "USD"}),
        )))
    }
}

async fn turn_with(
    provider: &Scripted,
    tracer: &MemoryTracer,
    events: &Mutex<Vec<TurnEvent>>,
    policy: &ConfirmPolicy,
    turn: Turn,
) -> Turn {
    turn_under(provider, tracer, events, policy, FiguresPolicy::Flag, turn).await
}

async fn turn_under(
    provider: &Scripted,
    tracer: &MemoryTracer,
    events: &Mutex<Vec<TurnEvent>>,
    policy: &ConfirmPolicy,
    figures: FiguresPolicy,
    turn: Turn,
) -> Turn {
    let tools = ToolRegistry::new(vec![typed(Report), typed(SetBudget)]).unwrap();
    let on_event = |e: TurnEvent| events.lock().unwrap().push(e);
    let deps = Deps {
        provider,
        budget: None,
        tools: &tools,
        system: "test",
        policy,
        rules: &PermissionRules::default(),
        tracer,
        on_event: &on_event,
        hooks: None,
        stop_judge: None,
        figures,
        max_iterations: kakeibo_core::turn::MAX_ITERATIONS,
    };
    drive(turn, &deps).await
}

/// A read-only turn under [`FiguresPolicy::Retry`].
async fn retried(provider: &Scripted, tracer: &MemoryTracer, events: &Mutex<Vec<TurnEvent>>) -> Turn {
    let policy = ConfirmPolicy::AutoDeny;
    turn_under(provider, tracer, events, &policy, FiguresPolicy::Retry, start()).await
}

/// The figure checks the trace holds, each on the model call that answered.
fn figure_checks(tracer: &MemoryTracer) -> Vec<kakeibo_core::figures::FigureCheck> {
    tracer
        .events()
        .into_iter()
        .filter_map(|e| match e.payload {
            TracePayload::ModelCall(call) => call.figures,
            _ => None,
        })
        .collect()
}

fn start() -> Turn {
    Turn::start(RunId::random(), Vec::new(), Message::user("how much?"))
}

#[tokio::test]
async fn an_answer_s_figures_are_grounded_or_marked() {
    let provider = Scripted::new(vec![
        Ok(reply_calls(&[("report", json!({}))])),
        Ok(reply_text(
            "You spent $2,191.73 in June: about $2.2k. Dining and groceries came to $1,012.50; dining was 18.8% \
             of it; rent was $950.00.",
        )),
    ]);
    let (tracer, events) = (MemoryTracer::default(), Mutex::new(Vec::new()));
    let turn = turn_with(&provider, &tracer, &events, &ConfirmPolicy::AutoDeny, start()).await;
    let checked = turn.figures().expect("the answer states figures");
    let said: Vec<(&str, Grounding)> = checked
        .figures
        .iter()
        .map(|f| (f.stated.text.as_str(), f.grounding))
        .collect();
    assert_eq!(
        said,
        [
            ("$2,191.73", Grounding::Exact),
            ("$2.2k", Grounding::Approximate),
            ("$1,012.50", Grounding::Exact),
            ("18.8%", Grounding::Exact),
            ("$950.00", Grounding::Ungrounded),
        ]
    );
    assert_eq!(checked.ungrounded, 1);
    // Sources are the tool figures named, each once, with the call they came from.
    assert_eq!(checked.figures[0].how, Some(How::Equal { source: 0 }));
    assert_eq!(checked.sources[0].figure.pointer, "/total");
    assert_eq!(checked.sources[0].tool, "report");
    assert!(matches!(checked.figures[2].how, Some(How::Sum { .. })));
    assert_eq!(checked.sources.len(), 3, "{:?}", checked.sources);

    // Told once, before the turn ends; the result carried its headline.
    let events = events.into_inner().unwrap();
    let told: Vec<&TurnEvent> = events
        .iter()
        .filter(|e| matches!(e, TurnEvent::Figures(_)))
        .collect();
    assert_eq!(told.len(), 1);
    assert!(matches!(told[0], TurnEvent::Figures(c) if c == checked));
    let headline = events.iter().find_map(|e| match e {
        TurnEvent::ToolResult { headline, .. } => headline.clone(),
        _ => None,
    });
    assert_eq!(headline.map(|h| h.formatted), Some("$2,191.73".to_owned()));
    let wire = Event::of(told[0].clone()).unwrap().to_json();
    assert_eq!(wire["type"], "figures");
    assert_eq!(wire["figures"][4]["grounding"], "ungrounded");
    assert_eq!(wire["figures"][4]["text"], "$950.00");
    assert_eq!(
        wire["figures"][4]["kind"],
        json!({"kind": "money", "currency": "dollar"})
    );

    // Traced on the call that answered (no row of its own), and read back from its stored form.
    let checks = figure_checks(&tracer);
    assert_eq!(checks, std::slice::from_ref(checked));
    let answering = tracer.events().pop().unwrap();
    assert_eq!(answering.kind(), TraceKind::ModelCall);
    let stored = answering.payload.stored();
    let TracePayload::ModelCall(back) = TracePayload::from_stored(TraceKind::ModelCall, &stored).unwrap()
    else {
        panic!("not a model call");
    };
    let back = back.figures.unwrap();
    assert_eq!(back.ungrounded, 1);
    assert_eq!(back.figures[1].stated.value, "2200");
    // The call that asked for the report carries none.
    assert_eq!(tracer.events().len(), 3, "model call, tool call, model call");

    let summary = RunSummary::of(&turn, "script").unwrap();
    assert_eq!(summary.figures.as_ref(), Some(checked));
    assert_eq!(summary.tool_calls[0].headline.as_ref().unwrap().label, "total");
}

#[tokio::test]
async fn an_answer_without_figures_sends_no_figures_event() {
    let provider = Scripted::new(vec![Ok(reply_text("Nothing to report in 2025: 3 accounts."))]);
    let (tracer, events) = (MemoryTracer::default(), Mutex::new(Vec::new()));
    let turn = turn_with(&provider, &tracer, &events, &ConfirmPolicy::AutoDeny, start()).await;
    assert!(turn.figures().is_none());
    assert!(
        !events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, TurnEvent::Figures(_)))
    );
    assert!(figure_checks(&tracer).is_empty());
}

#[tokio::test]
async fn a_figure_from_a_model_that_called_no_tool_is_ungrounded() {
    let provider = Scripted::new(vec![Ok(reply_text("Your rent is ₹25,000 a month."))]);
    let (tracer, events) = (MemoryTracer::default(), Mutex::new(Vec::new()));
    let turn = turn_with(&provider, &tracer, &events, &ConfirmPolicy::AutoDeny, start()).await;
    let checked = turn.figures().unwrap();
    assert_eq!(checked.ungrounded_texts(), ["₹25,000"]);
    assert!(checked.sources.is_empty());
}

#[tokio::test]
async fn a_write_allowed_in_another_process_grounds_the_answer_that_follows() {
    let provider = Scripted::new(vec![
        Ok(reply_calls(&[("set_budget", json!({"amount_minor": 800_000}))])),
        Ok(reply_text("Done: Dining is budgeted at $8,000.00.")),
    ]);
    let (tracer, events) = (MemoryTracer::default(), Mutex::new(Vec::new()));
    let waiting = turn_with(&provider, &tracer, &events, &ConfirmPolicy::Suspend, start()).await;
    let Phase::AwaitConfirm { pending, .. } = waiting.phase() else {
        panic!("the write waits");
    };
    // Stored and read back, as another process would.
    let stored = Turn::from_json(waiting.to_json().unwrap()).unwrap();
    let result = ToolResult {
        tool_use_id: pending[0].id.clone(),
        name: "set_budget".into(),
        content: tool_data(&json!({"amount_minor": 800_000, "currency": "USD"})),
        is_error: false,
    };
    let resumed = stored.resume(vec![result]).unwrap();
    let done = turn_with(&provider, &tracer, &events, &ConfirmPolicy::Suspend, resumed).await;
    let checked = done.figures().unwrap();
    assert_eq!(checked.ungrounded, 0, "{checked:?}");
    assert_eq!(checked.sources[0].tool, "set_budget");
}

#[tokio::test]
async fn under_retry_an_ungrounded_answer_is_corrected_once_and_says_so() {
    let provider = Scripted::new(vec![
        Ok(reply_calls(&[("report", json!({}))])),
        Ok(reply_text("You spent $2,191.73; rent was $950.00.")),
        Ok(reply_text("You spent $2,191.73; Dining was $412.50.")),
    ]);
    let (tracer, events) = (MemoryTracer::default(), Mutex::new(Vec::new()));
    let turn = retried(&provider, &tracer, &events).await;
    assert_eq!(
        turn.finished().map(|f| f.1),
        Some("You spent $2,191.73; Dining was $412.50.")
    );
    let checked = turn.figures().unwrap();
    assert_eq!(checked.ungrounded, 0);
    assert_eq!(checked.corrected, ["$950.00"]);
    // The model was told which figure, in a message of kakeibo's own; a third call answered.
    assert_eq!(turn.iteration(), 3);
    let asked = provider.requests();
    let note = asked[2].messages.last().unwrap().text();
    assert!(
        note.starts_with("[kakeibo's figure check:") && note.contains("$950.00"),
        "{note}"
    );
    // Told as it happened: correcting, then the corrected answer's figures.
    let events = events.into_inner().unwrap();
    let said: Vec<&TurnEvent> = events
        .iter()
        .filter(|e| matches!(e, TurnEvent::Correcting(_) | TurnEvent::Figures(_)))
        .collect();
    assert!(matches!(said[0], TurnEvent::Correcting(f) if f == &["$950.00"]));
    assert!(matches!(said[1], TurnEvent::Figures(c) if c.corrected == ["$950.00"]));
    assert_eq!(said.len(), 2);
    // Both answers' checks and every model call are traced (and so priced).
    let kinds: Vec<TraceKind> = tracer
        .events()
        .iter()
        .map(kakeibo_core::TraceEvent::kind)
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == TraceKind::ModelCall).count(), 3);
    let checks = figure_checks(&tracer);
    assert_eq!(
        checks.len(),
        2,
        "the first answer's check and the corrected one's"
    );
    assert_eq!((checks[0].ungrounded, checks[1].ungrounded), (1, 0));
}

#[tokio::test]
async fn under_retry_a_correction_that_is_still_wrong_is_marked_not_retried_again() {
    let provider = Scripted::new(vec![
        Ok(reply_text("Rent was $950.00.")),
        Ok(reply_text("Rent was $951.00.")),
        Ok(reply_text("never asked")),
    ]);
    let (tracer, events) = (MemoryTracer::default(), Mutex::new(Vec::new()));
    let turn = retried(&provider, &tracer, &events).await;
    assert_eq!(turn.iteration(), 2);
    let checked = turn.figures().unwrap();
    assert_eq!(checked.ungrounded_texts(), ["$951.00"]);
    assert_eq!(checked.corrected, ["$950.00"]);
    // Under flag, the same first answer is only marked.
    let provider = Scripted::new(vec![Ok(reply_text("Rent was $950.00."))]);
    let (tracer, events) = (MemoryTracer::default(), Mutex::new(Vec::new()));
    let turn = turn_under(
        &provider,
        &tracer,
        &events,
        &ConfirmPolicy::AutoDeny,
        FiguresPolicy::Flag,
        start(),
    )
    .await;
    assert_eq!(turn.iteration(), 1);
    assert!(turn.figures().unwrap().corrected.is_empty());
}

#[test]
fn the_policy_reads_as_written() {
    assert_eq!(FiguresPolicy::parse(" Retry "), Ok(FiguresPolicy::Retry));
    assert_eq!(FiguresPolicy::parse("flag"), Ok(FiguresPolicy::Flag));
    assert!(FiguresPolicy::parse("rewrite").unwrap_err().contains("flag"));
}
