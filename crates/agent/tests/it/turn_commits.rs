//! What a turn commits, and when, against a real PostgreSQL: a finished turn's trace events,
//! totals and new messages commit together at its end; a turn that dies before its end leaves
//! no events and no messages, while an earlier finished turn keeps all of its own; a history is
//! appended to, never rewritten, even when its context is fitted by a summary; a new conversation
//! is made by its first turn's opening, in the same transaction as its run row.

use crate::world;
use kakeibo_agent::Channel;

use std::{sync::Arc, time::Duration};

use futures_util::{StreamExt, stream::BoxStream};
use kakeibo_agent::turns::{Outcome, TurnStore};
use kakeibo_core::{
    Block, ConfirmPolicy, ModelRequest, Provider, ProviderError, StreamEvent, context,
    scripted::{Scripted, reply_calls, reply_text},
};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use world::{World, world};

/// Asks for two read tools, then answers; with `stall_on_answer`, the answer never comes.
struct Model {
    script: Scripted,
    stall_on_answer: bool,
}

impl Model {
    fn new(stall_on_answer: bool) -> Arc<Self> {
        let script = Scripted::from_fn(|request| {
            let last = request.messages.last().unwrap();
            Ok(if last.is_tool_results() {
                reply_text("You have two accounts.")
            } else if request.tools.is_empty() {
                // The summariser: asked with no tools.
                reply_text("The person asked about their accounts many times.")
            } else {
                reply_calls(&[("list_accounts", json!({})), ("list_categories", json!({}))])
            })
        });
        Arc::new(Self {
            script,
            stall_on_answer,
        })
    }
}

impl Provider for Model {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn model(&self) -> &'static str {
        "scripted"
    }
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        let answering = request
            .messages
            .last()
            .is_some_and(kakeibo_core::Message::is_tool_results);
        if self.stall_on_answer && answering {
            futures_util::stream::pending().boxed()
        } else {
            self.script.stream(request)
        }
    }
}

async fn chat(w: &World, model: &Arc<Model>, text: &str) -> Outcome {
    let store = TurnStore::new(w.app.clone());
    let agent = crate::agent_on(&store, w.owner, model.clone(), "You are kakeibo.", Channel::Web);
    agent
        .chat(w.conversation, text, &ConfirmPolicy::Suspend, &|_| {})
        .await
        .unwrap()
}

/// The number `sql` counts for `id` (a run's or the conversation's).
async fn count(w: &World, sql: &str, id: uuid::Uuid) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .bind(id)
        .fetch_one(&w.owner_pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_finished_turn_commits_its_events_totals_and_messages_together(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "accounts").await;
    let Outcome::Finished { run_id, turn, .. } = chat(&w, &Model::new(false), "which accounts?").await else {
        panic!("the turn waited")
    };
    // Two model calls and two tool calls, every one recorded.
    let events = count(
        &w,
        "SELECT count(*) FROM trace_events WHERE run_id = $1",
        run_id.as_uuid(),
    )
    .await;
    assert_eq!(events, 4);
    // One transaction wrote them all: the events, the finished run and the new messages share
    // the id of the transaction that wrote them.
    let writers: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT xmin::text FROM (
             SELECT xmin FROM trace_events WHERE run_id = $1
             UNION ALL SELECT xmin FROM trace_runs WHERE id = $1 AND finished_at IS NOT NULL
             UNION ALL SELECT xmin FROM conversation_messages WHERE conversation_id = $2
         ) AS written",
    )
    .bind(run_id.as_uuid())
    .bind(w.conversation.as_uuid())
    .fetch_all(&w.owner_pool)
    .await
    .unwrap();
    assert_eq!(writers.len(), 1, "{writers:?}");
    let messages = count(
        &w,
        "SELECT count(*) FROM conversation_messages WHERE conversation_id = $1",
        w.conversation.as_uuid(),
    )
    .await;
    assert_eq!(messages, i64::try_from(turn.history().len()).unwrap());
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_new_conversation_is_made_by_its_first_turns_opening(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "accounts").await;
    let store = TurnStore::new(w.app.clone());
    let agent = |model: &Arc<Model>| {
        crate::agent_on(&store, w.owner, model.clone(), "You are kakeibo.", Channel::Web)
    };
    let conversation = kakeibo_core::ConversationId::random();
    let start = |model| async move {
        agent(model)
            .start(
                conversation,
                Some("which accounts?"),
                "which accounts?",
                &ConfirmPolicy::Suspend,
                &|_| {},
            )
            .await
    };

    // The first turn dies after its tools: its run row is as its opening wrote it, and so is the
    // conversation — by the same transaction.
    let stalled = Model::new(true);
    let died = tokio::time::timeout(Duration::from_millis(500), start(&stalled)).await;
    assert!(died.is_err(), "the stalled turn finished");
    let (title, conversation_writer, run_writer): (Option<String>, String, String) = sqlx::query_as(
        "SELECT c.title, c.xmin::text, r.xmin::text
         FROM conversations c JOIN trace_runs r ON r.conversation_id = c.id WHERE c.id = $1",
    )
    .bind(conversation.as_uuid())
    .fetch_one(&w.owner_pool)
    .await
    .unwrap();
    assert_eq!(title.as_deref(), Some("which accounts?"));
    assert_eq!(conversation_writer, run_writer, "one transaction made both");

    // The id is taken now: starting it again is refused and leaves no run; a turn of it is an
    // ordinary one, whose model sees no history (the dead turn left none).
    let model = Model::new(false);
    assert!(start(&model).await.is_err());
    let runs = count(
        &w,
        "SELECT count(*) FROM trace_runs WHERE conversation_id = $1",
        conversation.as_uuid(),
    )
    .await;
    assert_eq!(runs, 1);
    // The dead turn's run is still `running`: for a quarter of an hour (a function's longest
    // life) the conversation takes no other turn, unless the run is stopped as a person's
    // cancel stops it.
    let busy = agent(&model)
        .chat(conversation, "which accounts?", &ConfirmPolicy::Suspend, &|_| {})
        .await;
    assert!(
        matches!(
            busy,
            Err(kakeibo_agent::ConfirmError::Busy(
                kakeibo_agent::Busy::TurnRunning
            ))
        ),
        "{busy:?}"
    );
    assert_eq!(store.abort_open_runs(w.owner, conversation).await.unwrap(), 1);
    let Outcome::Finished { turn, .. } = agent(&model)
        .chat(conversation, "which accounts?", &ConfirmPolicy::Suspend, &|_| {})
        .await
        .unwrap()
    else {
        panic!("the turn waited")
    };
    assert_eq!(
        model.script.requests()[0].messages.len(),
        1,
        "no history before the question"
    );
    let thread = store.history(w.owner, conversation).await.unwrap();
    assert_eq!(thread.len(), turn.history().len());
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_turn_that_dies_before_its_end_loses_only_its_own_events(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "accounts").await;
    let Outcome::Finished { run_id: done, .. } = chat(&w, &Model::new(false), "which accounts?").await else {
        panic!("the turn waited")
    };
    let messages_before = count(
        &w,
        "SELECT count(*) FROM conversation_messages WHERE conversation_id = $1",
        w.conversation.as_uuid(),
    )
    .await;

    // The second turn's tools run, then the process stops while the model answers.
    let stalled = Model::new(true);
    let died = tokio::time::timeout(Duration::from_millis(500), chat(&w, &stalled, "and now?")).await;
    assert!(died.is_err(), "the stalled turn finished");
    assert_eq!(
        stalled.script.requests().len(),
        1,
        "it died after its tools, in its second call"
    );

    let dead: (uuid::Uuid, bool) = sqlx::query_as(
        "SELECT id, finished_at IS NULL FROM trace_runs WHERE conversation_id = $1 AND id <> $2",
    )
    .bind(w.conversation.as_uuid())
    .bind(done.as_uuid())
    .fetch_one(&w.owner_pool)
    .await
    .unwrap();
    assert!(dead.1, "the dead turn's run was never finished");
    let dead_events = count(&w, "SELECT count(*) FROM trace_events WHERE run_id = $1", dead.0).await;
    assert_eq!(dead_events, 0, "an unfinished turn's events are lost with it");
    let kept = count(
        &w,
        "SELECT count(*) FROM trace_events WHERE run_id = $1",
        done.as_uuid(),
    )
    .await;
    assert_eq!(kept, 4, "the finished turn keeps every event");
    let messages_after = count(
        &w,
        "SELECT count(*) FROM conversation_messages WHERE conversation_id = $1",
        w.conversation.as_uuid(),
    )
    .await;
    assert_eq!(messages_after, messages_before, "no half turn in the thread");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_history_is_appended_and_a_summary_leaves_the_thread_whole(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "accounts").await;
    let model = Model::new(false);
    let store = TurnStore::new(w.app.clone());
    // Each question is long, so the context outgrows its budget within a few turns.
    let question = format!("which accounts? {}", "and more detail ".repeat(4_000));
    let mut first_rows: Option<Vec<(i32, String, String)>> = None;
    let mut turns = 0;
    let summary = loop {
        turns += 1;
        assert!(turns <= 12, "the context was never fitted");
        let Outcome::Finished { .. } = chat(&w, &model, &question).await else {
            panic!("the turn waited")
        };
        // The rows of the first turn are never rewritten: same place, same writing transaction.
        let rows: Vec<(i32, String, String)> = sqlx::query_as(
            "SELECT seq, ctid::text, xmin::text FROM conversation_messages WHERE conversation_id = $1 AND seq < 4 ORDER BY seq",
        )
        .bind(w.conversation.as_uuid())
        .fetch_all(&w.owner_pool)
        .await
        .unwrap();
        match &first_rows {
            None => first_rows = Some(rows),
            Some(first) => assert_eq!(&rows, first, "after turn {turns}"),
        }
        let summary: Option<serde_json::Value> =
            sqlx::query_scalar("SELECT summary FROM conversations WHERE id = $1")
                .bind(w.conversation.as_uuid())
                .fetch_one(&w.owner_pool)
                .await
                .unwrap();
        if let Some(summary) = summary {
            break summary;
        }
    };
    // Every message of every turn is still in the thread: 4 per turn (question, calls, results,
    // answer).
    let messages = count(
        &w,
        "SELECT count(*) FROM conversation_messages WHERE conversation_id = $1",
        w.conversation.as_uuid(),
    )
    .await;
    assert_eq!(messages, 4 * turns);
    // The model sees the summary, then the messages after the evicted ones.
    let history = store.history(w.owner, w.conversation).await.unwrap();
    let stored: Vec<kakeibo_core::Message> = serde_json::from_value(summary).unwrap();
    assert_eq!(history.get(..2), Some(stored.as_slice()));
    assert!(
        history[0]
            .text()
            .contains("The person asked about their accounts")
    );
    let from: i32 = sqlx::query_scalar("SELECT history_from FROM conversations WHERE id = $1")
        .bind(w.conversation.as_uuid())
        .fetch_one(&w.owner_pool)
        .await
        .unwrap();
    assert!(from > 0);
    assert_eq!(
        i64::try_from(history.len() - 2).unwrap(),
        messages - i64::from(from),
        "the model's history resumes at history_from"
    );
    let groups = history
        .iter()
        .filter(|m| m.role == kakeibo_core::Role::User && !m.is_tool_results())
        .count();
    assert_eq!(
        groups,
        context::KEEP_RECENT_GROUPS + 1,
        "the summary, then the kept turns"
    );
    assert!(
        history
            .iter()
            .skip(2)
            .all(|m| !matches!(m.content.first(), Some(Block::Text { text, .. }) if text.starts_with("<context_summary>")))
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_turn_stored_before_histories_were_appended_finishes_with_its_whole_history(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "budget").await;
    let write = Scripted::from_fn(|request| {
        Ok(if request.messages.last().unwrap().is_tool_results() {
            reply_text("Done.")
        } else {
            reply_calls(&[(
                "set_budget",
                json!({"category": "Groceries", "month": "2025-04", "amount_minor": 500_000}),
            )])
        })
    });
    let store = TurnStore::new(w.app.clone());
    let agent = crate::agent_on(&store, w.owner, Arc::new(write), "You are kakeibo.", Channel::Web);
    // An earlier exchange the conversation holds, then a turn that waits on a write.
    let Outcome::Finished { .. } = chat(&w, &Model::new(false), "which accounts?").await else {
        panic!("the turn waited")
    };
    let Outcome::Suspended {
        suspended_id,
        pending,
        ..
    } = agent
        .chat(
            w.conversation,
            "groceries budget 5000 for April",
            &ConfirmPolicy::Suspend,
            &|_| {},
        )
        .await
        .unwrap()
    else {
        panic!("the write did not wait")
    };
    // As a row stored before migration 0007 was: which of its messages are new is not known.
    sqlx::query("UPDATE suspended_turns SET history_base = NULL WHERE id = $1")
        .bind(suspended_id.as_uuid())
        .execute(&w.owner_pool)
        .await
        .unwrap();
    let Outcome::Finished { turn, .. } = agent
        .confirm(suspended_id, &[(pending[0].id.clone(), true)], &|_| {})
        .await
        .unwrap()
    else {
        panic!("the confirm did not finish")
    };
    // The thread is the finished turn's whole history, once: nothing doubled, nothing lost.
    assert_eq!(
        store.history(w.owner, w.conversation).await.unwrap(),
        turn.history()
    );
    let seqs: Vec<i32> =
        sqlx::query_scalar("SELECT seq FROM conversation_messages WHERE conversation_id = $1 ORDER BY seq")
            .bind(w.conversation.as_uuid())
            .fetch_all(&w.owner_pool)
            .await
            .unwrap();
    assert_eq!(
        seqs,
        (0..i32::try_from(turn.history().len()).unwrap()).collect::<Vec<_>>()
    );
}

/// Answers at once, after deleting the conversation its turn belongs to (as a person deleting
/// the conversation mid-turn would): the turn's end cannot be stored.
struct Vanishing {
    pool: sqlx::PgPool,
    conversation: kakeibo_core::ConversationId,
}

impl Provider for Vanishing {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn model(&self) -> &'static str {
        "scripted"
    }
    fn stream<'a>(&'a self, _: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        futures_util::stream::once(async move {
            sqlx::query("DELETE FROM conversations WHERE id = $1")
                .bind(self.conversation.as_uuid())
                .execute(&self.pool)
                .await
                .unwrap();
            Ok(StreamEvent::Completed(reply_text("Two accounts.")))
        })
        .boxed()
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_turn_that_cannot_be_stored_is_recorded_failed_and_one_that_never_opened_leaves_nothing(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "vanishing").await;
    let store = TurnStore::new(w.app.clone());
    let model = Arc::new(Vanishing {
        pool: w.owner_pool.clone(),
        conversation: w.conversation,
    });
    let agent = crate::agent_on(&store, w.owner, model.clone(), "s", Channel::Web);
    let failed = agent
        .chat(
            w.conversation,
            "which accounts?",
            &ConfirmPolicy::Suspend,
            &|_| {},
        )
        .await;
    assert!(
        matches!(failed, Err(kakeibo_agent::turns::ConfirmError::Store(_))),
        "{failed:?}"
    );
    let (status, finished): (String, bool) =
        sqlx::query_as("SELECT status::text, finished_at IS NOT NULL FROM trace_runs WHERE owner_id = $1")
            .bind(w.owner.as_uuid())
            .fetch_one(&w.owner_pool)
            .await
            .unwrap();
    assert_eq!(
        (status.as_str(), finished),
        ("error", true),
        "never ok, never left running"
    );

    // A turn whose opening fails (here: an owner with no user row) leaves nothing and calls no
    // model: its caller may give back what it charged for it.
    let nobody = kakeibo_ledger::OwnerId::new(uuid::Uuid::new_v4());
    let agent = crate::agent_on(&store, nobody, model, "s", Channel::Web);
    let never = agent
        .chat(w.conversation, "hello?", &ConfirmPolicy::Suspend, &|_| {})
        .await;
    assert!(
        matches!(never, Err(kakeibo_agent::turns::ConfirmError::NotStarted(_))),
        "{never:?}"
    );
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_runs WHERE owner_id = $1")
        .bind(nobody.as_uuid())
        .fetch_one(&w.owner_pool)
        .await
        .unwrap();
    assert_eq!(runs, 0);
}

/// Answers after a pause long enough for every message sent with it to reach the opening.
struct Unhurried(Scripted);

impl Provider for Unhurried {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn model(&self) -> &'static str {
        "scripted"
    }
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        futures_util::stream::once(tokio::time::sleep(Duration::from_millis(400)))
            .flat_map(move |()| self.0.stream(request))
            .boxed()
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn messages_sent_together_to_one_conversation_run_one_at_a_time_and_none_is_lost(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let w = world(options, connect, "together").await;
    let store = TurnStore::new(w.app.clone());
    let model = Arc::new(Unhurried(Scripted::from_fn(|_| Ok(reply_text("Noted.")))));
    let agent = crate::agent_on(&store, w.owner, model.clone(), "s", Channel::Web);
    let turns = (0..10).map(|i| {
        let agent = &agent;
        async move {
            agent
                .chat(
                    w.conversation,
                    &format!("message {i}"),
                    &ConfirmPolicy::Suspend,
                    &|_| {},
                )
                .await
        }
    });
    let outcomes = futures_util::future::join_all(turns).await;
    let ran = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(Outcome::Finished { .. })))
        .count();
    let busy = outcomes
        .iter()
        .filter(|o| {
            matches!(
                o,
                Err(kakeibo_agent::ConfirmError::Busy(
                    kakeibo_agent::Busy::TurnRunning
                ))
            )
        })
        .count();
    assert_eq!((ran, busy), (1, 9), "{outcomes:?}");
    // The thread holds the one exchange that ran, whole; the refused left no run behind.
    let thread = store.history(w.owner, w.conversation).await.unwrap();
    assert_eq!(thread.len(), 2, "{thread:?}");
    let runs = count(
        &w,
        "SELECT count(*) FROM trace_runs WHERE conversation_id = $1",
        w.conversation.as_uuid(),
    )
    .await;
    assert_eq!(runs, 1);
}
