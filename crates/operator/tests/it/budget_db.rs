//! The site's daily budget against a real PostgreSQL: a hard cap that turns started together
//! cannot spend past, holds that settle to the real cost, holds of dead calls given back.

use crate::common;
use kakeibo_agent::{AgentConfig, Channel};

use std::time::Duration;

use futures_util::{StreamExt, future::join_all, stream::BoxStream};
use kakeibo_agent::turns::{Agent, Outcome, TurnStore};
use kakeibo_core::{
    Budget, ConfirmPolicy, ConversationId, MicroUsd, ModelRequest, Provider, ProviderError, Refused, RunId,
    RunStatus, Stop, StreamEvent, Usage,
    budget::worst_case,
    context::estimate_tokens,
    pricing::{Price, cost_at},
    scripted::reply_text,
};
use kakeibo_ledger::OwnerRolePool;
use kakeibo_operator::budget::{self, DailyBudget};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use std::sync::{Arc, Mutex};

/// $1 a million input tokens, $10 a million output tokens.
const PRICE: Price = Price {
    input: 1_000_000,
    output: 10_000_000,
    cached_input: 100_000,
};

/// What every call reports: 1000 tokens in, 100 out ($0.002 at [`PRICE`]).
const USAGE: Usage = Usage {
    input_tokens: 1000,
    output_tokens: 100,
    cached_tokens: 0,
    thought_tokens: 0,
};

/// A priced model that answers after `delay`, remembering the requests it got.
struct Slow {
    delay: Duration,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
}

impl Provider for Slow {
    fn name(&self) -> &'static str {
        "slow"
    }
    fn model(&self) -> &'static str {
        "slow-priced"
    }
    fn price(&self) -> Option<Price> {
        Some(PRICE)
    }
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        self.requests.lock().unwrap().push(request.clone());
        let delay = self.delay;
        futures_util::stream::once(async move {
            tokio::time::sleep(delay).await;
            let mut reply = reply_text("You spent ₹1,200 on groceries.");
            reply.usage = USAGE;
            Ok(StreamEvent::Completed(reply))
        })
        .boxed()
    }
}

async fn today(pool: &PgPool) -> budget::Day {
    budget::day(&OwnerRolePool::new(pool.clone()), chrono::Utc::now().date_naive())
        .await
        .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_hundred_turns_started_together_spend_no_more_than_a_cap_worth_ten_calls(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = common::owner_pool(options, connect.clone()).await;
    let app = common::app_pool(&connect).await;
    let owner = common::new_user(&pool).await;
    let store = TurnStore::new(app.clone());
    let requests = Arc::default();
    let model: Arc<dyn Provider> = Arc::new(Slow {
        delay: Duration::from_secs(3),
        requests: Arc::clone(&requests),
    });
    let question = "How much did I spend on groceries?";
    let agent = |provider: Arc<dyn Provider>, budget: Option<Arc<DailyBudget>>| {
        let mut config = AgentConfig::new(provider, Channel::Web);
        config.system = "You are kakeibo.".into();
        config.budget = budget.map(|b| b as Arc<dyn Budget>);
        Agent::new(store.clone(), owner, config).unwrap()
    };

    // One call's worst case, from the request a turn sends (every turn below sends the same).
    let quick = Slow {
        delay: Duration::ZERO,
        requests: Arc::clone(&requests),
    };
    let divisors = quick.divisors();
    agent(Arc::new(quick), None)
        .start(
            ConversationId::random(),
            Some("probe"),
            question,
            &ConfirmPolicy::Suspend,
            &|_| {},
        )
        .await
        .unwrap();
    let sent = requests.lock().unwrap().pop().unwrap();
    let estimate = estimate_tokens(&divisors, &sent.system, &sent.messages, &sent.tools);
    let call = worst_case(Some(PRICE), estimate, sent.max_tokens).unwrap();
    // Worth ten calls, not eleven.
    let cap = MicroUsd(call.0 * 10 + call.0 / 2);
    #[allow(clippy::cast_precision_loss)]
    let budget = Arc::new(DailyBudget::new(
        OwnerRolePool::new(pool.clone()),
        cap.0 as f64 / 1e6,
    ));

    let turns = (0..100).map(|i| {
        let agent = agent(Arc::clone(&model), Some(Arc::clone(&budget)));
        async move {
            agent
                .start(
                    ConversationId::random(),
                    Some(&format!("t{i}")),
                    question,
                    &ConfirmPolicy::Suspend,
                    &|_| {},
                )
                .await
                .unwrap()
        }
    });
    let outcomes = join_all(turns).await;

    let (mut admitted, mut refused) = (0, 0);
    for outcome in &outcomes {
        let Outcome::Finished {
            status, turn, answer, ..
        } = outcome
        else {
            panic!("a read-only turn waited")
        };
        match turn.stop() {
            Some(Stop::End) => admitted += 1,
            Some(Stop::DailyCap) => {
                refused += 1;
                assert_eq!(*status, RunStatus::Aborted);
                assert!(answer.contains("today's model budget"), "{answer}");
                assert_eq!(
                    turn.usage(),
                    Usage::default(),
                    "nothing was sent for a refused call"
                );
            }
            other => panic!("unexpected stop {other:?}"),
        }
    }
    let day = today(&pool).await;
    let real = cost_at(Some(PRICE), &USAGE).0;
    println!(
        "cap {} (10.5 worst cases of {}), {admitted} calls admitted, {refused} refused, settled {}",
        cap.format(),
        call.format(),
        day.settled.format()
    );
    assert_eq!(admitted + refused, 100);
    assert!(admitted >= 10, "the cap admits the ten calls it is worth");
    assert!(
        day.settled <= cap,
        "settled {} over the cap {}",
        day.settled.0,
        cap.0
    );
    assert_eq!(
        day.settled,
        MicroUsd(real.0 * admitted),
        "each admitted call settled at its real cost"
    );
    assert_eq!(day.reserved, MicroUsd(0), "nothing is held once every call ended");
    let aborted: i64 =
        sqlx::query_scalar("SELECT count(*) FROM trace_runs WHERE owner_id = $1 AND status = 'aborted'")
            .bind(owner.as_uuid())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        aborted, refused,
        "every refused turn is recorded as stopped, with its reason"
    );
    let reasons: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM trace_events WHERE owner_id = $1 AND type = 'error' AND payload->>'kind' = 'budget'",
    )
    .bind(owner.as_uuid())
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(reasons, refused);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn holds_settle_to_the_real_cost_and_a_dead_calls_hold_is_given_back(pool: PgPool) {
    let budget = DailyBudget::new(OwnerRolePool::new(pool.clone()), 0.001);
    let run = RunId::random();
    let first = budget.reserve(run, MicroUsd(600)).await.unwrap();
    assert_eq!(
        budget.reserve(run, MicroUsd(600)).await,
        Err(Refused::DailyCap),
        "600 held and 600 asked is over 1000"
    );
    assert_eq!(
        today(&pool).await,
        budget::Day {
            settled: MicroUsd(0),
            reserved: MicroUsd(600)
        }
    );
    budget.settle(first, MicroUsd(150)).await;
    assert_eq!(
        today(&pool).await,
        budget::Day {
            settled: MicroUsd(150),
            reserved: MicroUsd(0)
        }
    );

    // A call whose function died never settles: once its hold expires, the next reservation of
    // the day gives it back.
    let dead = budget.reserve(run, MicroUsd(800)).await.unwrap();
    assert_eq!(budget.reserve(run, MicroUsd(100)).await, Err(Refused::DailyCap));
    sqlx::query("UPDATE budget_holds SET expires_at = now() - interval '1 second' WHERE id = $1")
        .bind(dead.id)
        .execute(&pool)
        .await
        .unwrap();
    let next = budget.reserve(run, MicroUsd(100)).await.unwrap();
    assert_eq!(today(&pool).await.reserved, MicroUsd(100));
    // If the dead call's function comes back after all, what it spent still counts.
    budget.settle(dead, MicroUsd(40)).await;
    budget.settle(next, MicroUsd(100)).await;
    assert_eq!(
        today(&pool).await,
        budget::Day {
            settled: MicroUsd(290),
            reserved: MicroUsd(0)
        }
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn an_unpriced_model_is_refused_under_a_budget(options: PgPoolOptions, connect: PgConnectOptions) {
    struct Unpriced;
    impl Provider for Unpriced {
        fn name(&self) -> &'static str {
            "openai"
        }
        fn model(&self) -> &'static str {
            "some-local-model"
        }
        fn stream<'a>(&'a self, _: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
            panic!("nothing may be sent to a model the budget cannot price")
        }
    }
    let pool = common::owner_pool(options, connect.clone()).await;
    let app = common::app_pool(&connect).await;
    let owner = common::new_user(&pool).await;
    let store = TurnStore::new(app.clone());
    let mut config = AgentConfig::new(Arc::new(Unpriced), Channel::Web);
    config.system = "s".into();
    config.budget = Some(Arc::new(DailyBudget::new(OwnerRolePool::new(pool.clone()), 1.0)));
    let agent = Agent::new(store, owner, config).unwrap();
    let Outcome::Finished {
        status, answer, turn, ..
    } = agent
        .start(
            ConversationId::random(),
            Some("t"),
            "hi",
            &ConfirmPolicy::Suspend,
            &|_| {},
        )
        .await
        .unwrap()
    else {
        panic!("waited")
    };
    assert_eq!(
        (status, turn.stop()),
        (RunStatus::Error, Some(Stop::BudgetUnavailable))
    );
    assert!(answer.contains("has no list price"), "{answer}");
}
