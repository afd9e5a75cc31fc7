//! The money model calls may spend: before each call the loop reserves the call's worst case,
//! and settles the reservation to the real cost when the call ends.
//!
//! The loop knows nothing of where the money is counted; a [`Budget`] does (the web functions'
//! is a row per UTC day in PostgreSQL, checked and charged in one statement). A turn with no
//! budget (the CLI, the library by default) spends without asking.

use futures_util::{
    StreamExt,
    future::BoxFuture,
    stream::{self, BoxStream},
};
use uuid::Uuid;

use crate::{
    context::estimate_tokens,
    ids::RunId,
    message::Usage,
    pricing::{MicroUsd, Price, cost_at},
    provider::{ModelRequest, Provider, ProviderError, StreamEvent},
};

/// How much the input estimate is raised before it is reserved: the estimate is a character
/// count, and the provider's tokenizer may count more (the reservation must not be short).
pub const INPUT_MARGIN_PERCENT: u64 = 25;

/// One admitted reservation, to be settled when its call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    pub id: Uuid,
    /// What was reserved.
    pub amount: MicroUsd,
}

/// Why a call was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The day's spend and the calls in flight leave no room for this call's worst case.
    #[error("the site has reached today's model budget; it renews at midnight UTC")]
    DailyCap,
    /// The model has no list price, so its worst case cannot be known.
    #[error("the model {model} has no list price, so the daily budget cannot admit its calls")]
    Unpriced { model: String },
    /// The budget could not be read or charged; the call is refused rather than sent unchecked.
    #[error("today's model budget could not be checked ({0}); nothing was sent to the model")]
    Unavailable(String),
}

/// Where model spend is reserved and settled.
pub trait Budget: Send + Sync {
    /// Reserves `amount` for one model call of `run`: `Ok(hold)` when the day has room for it,
    /// in the same statement that checks the cap.
    fn reserve(&self, run: RunId, amount: MicroUsd) -> BoxFuture<'_, Result<Hold, Refused>>;

    /// Settles `hold` at `spent`, the call's real cost. A failure is the budget's to log: the
    /// reservation stays counted until it expires.
    fn settle(&self, hold: Hold, spent: MicroUsd) -> BoxFuture<'_, ()>;
}

/// The most a call can cost: its estimated input (raised by [`INPUT_MARGIN_PERCENT`]) and
/// `max_tokens` of output, all at list price and none of it cached. `None` when unpriced.
pub fn worst_case(price: Option<Price>, input_estimate: u64, max_tokens: u32) -> Option<MicroUsd> {
    let price = price?;
    let input = input_estimate.saturating_add(input_estimate.saturating_mul(INPUT_MARGIN_PERCENT) / 100);
    let usage = Usage {
        input_tokens: input,
        output_tokens: u64::from(max_tokens),
        cached_tokens: 0,
        thought_tokens: 0,
    };
    Some(cost_at(Some(price), &usage).1)
}

/// A provider whose every call reserves against a budget first and settles after: for the
/// model calls made outside the loop (the summary that fits a long history). A refused call is a
/// `Rejected` error, which the caller handles as the model failing.
pub struct Budgeted<'a> {
    pub inner: &'a dyn Provider,
    pub budget: &'a dyn Budget,
    pub run: RunId,
}

impl std::fmt::Debug for Budgeted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgeted")
            .field("model", &self.inner.model())
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl Provider for Budgeted<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn price(&self) -> Option<Price> {
        self.inner.price()
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        let estimate = estimate_tokens(
            &self.inner.divisors(),
            &request.system,
            &request.messages,
            &request.tools,
        );
        let price = self.inner.price();
        let refused = |refused: Refused| ProviderError::Rejected {
            status: 402,
            message: refused.to_string(),
        };
        let Some(amount) = worst_case(price, estimate, request.max_tokens) else {
            let error = refused(Refused::Unpriced {
                model: self.inner.model().to_owned(),
            });
            return stream::once(async move { Err(error) }).boxed();
        };
        stream::once(self.budget.reserve(self.run, amount))
            .flat_map(move |reserved| match reserved {
                Err(no) => stream::once(futures_util::future::ready(Err(refused(no)))).boxed(),
                Ok(hold) => self
                    .inner
                    .stream(request)
                    .then(move |event| async move {
                        let usage = match &event {
                            Ok(StreamEvent::Completed(response)) => Some(response.usage),
                            Err(_) => Some(Usage {
                                input_tokens: estimate,
                                ..Usage::default()
                            }),
                            Ok(_) => None,
                        };
                        if let Some(usage) = usage {
                            self.budget.settle(hold, cost_at(price, &usage).0).await;
                        }
                        event
                    })
                    .boxed(),
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::{
        message::Message,
        provider::complete,
        scripted::{Scripted, reply_text},
    };

    /// Admits calls while `room` lasts; remembers what was reserved and settled.
    struct Room {
        room: Mutex<i64>,
        settled: Mutex<Vec<i64>>,
    }

    impl Budget for Room {
        fn reserve(&self, _: RunId, amount: MicroUsd) -> BoxFuture<'_, Result<Hold, Refused>> {
            let mut room = self.room.lock().unwrap();
            let admitted = *room >= amount.0;
            if admitted {
                *room -= amount.0;
            }
            Box::pin(async move {
                if admitted {
                    Ok(Hold {
                        id: Uuid::nil(),
                        amount,
                    })
                } else {
                    Err(Refused::DailyCap)
                }
            })
        }

        fn settle(&self, hold: Hold, spent: MicroUsd) -> BoxFuture<'_, ()> {
            *self.room.lock().unwrap() += hold.amount.0;
            self.settled.lock().unwrap().push(spent.0);
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn a_budgeted_call_reserves_first_settles_at_its_cost_and_a_refused_one_sends_nothing() {
        let price = Price {
            input: 1_000_000,
            output: 10_000_000,
            cached_input: 0,
        };
        let mut reply = reply_text("A summary.");
        reply.usage = Usage {
            input_tokens: 100,
            output_tokens: 10,
            ..Usage::default()
        };
        let model = Scripted::new(vec![Ok(reply)]).priced(Some(price));
        let room = Room {
            room: Mutex::new(1_000_000),
            settled: Mutex::default(),
        };
        let budgeted = Budgeted {
            inner: &model,
            budget: &room,
            run: RunId::random(),
        };
        let request = ModelRequest {
            system: "Summarise.".into(),
            messages: vec![Message::user("a long history")],
            tools: Vec::new().into(),
            max_tokens: 1200,
        };
        let answer = complete(&budgeted, &request, &mut |_| {}).await.unwrap();
        assert_eq!(answer.message.text(), "A summary.");
        // 100 × $1/M + 10 × $10/M = 200 millionths.
        assert_eq!(*room.settled.lock().unwrap(), [200]);
        assert_eq!(*room.room.lock().unwrap(), 1_000_000, "the hold was given back");

        *room.room.lock().unwrap() = 10;
        let refused = complete(&budgeted, &request, &mut |_| {}).await.unwrap_err();
        assert!(refused.to_string().contains("today's model budget"), "{refused}");
        assert_eq!(model.requests().len(), 1, "nothing was sent for the refused call");
    }

    #[test]
    fn the_worst_case_is_the_raised_input_and_all_the_output_at_list_price() {
        let price = Price {
            input: 1_000_000,
            output: 10_000_000,
            cached_input: 100_000,
        };
        // 4000 input raised by a quarter is 5000 × $1/M = 5000; 1000 output × $10/M = 10000.
        assert_eq!(worst_case(Some(price), 4000, 1000), Some(MicroUsd(15_000)));
        assert_eq!(worst_case(None, 4000, 1000), None);
    }
}
