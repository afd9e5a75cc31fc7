//! `Scripted`: a provider for unit tests that plays canned replies, or answers with a function.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
};

use futures_util::stream::BoxStream;
use serde_json::Value;

use crate::{
    message::{Block, Message, StopReason, Usage},
    pricing::Price,
    provider::{ModelRequest, ModelResponse, Provider, ProviderError, StreamEvent},
};

type Responder = dyn Fn(&ModelRequest) -> Result<ModelResponse, ProviderError> + Send + Sync;

/// Plays replies in order (or asks a function), and remembers every request it got.
pub struct Scripted {
    replies: Mutex<VecDeque<Result<ModelResponse, ProviderError>>>,
    responder: Option<Box<Responder>>,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
    remember: bool,
    price: Option<Price>,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripted").finish_non_exhaustive()
    }
}

impl Scripted {
    pub fn new(replies: Vec<Result<ModelResponse, ProviderError>>) -> Self {
        Self {
            replies: Mutex::new(replies.into()),
            responder: None,
            requests: Arc::default(),
            remember: true,
            price: Some(Price::FREE),
        }
    }

    /// A model that answers every request with `respond`.
    pub fn from_fn(
        respond: impl Fn(&ModelRequest) -> Result<ModelResponse, ProviderError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            replies: Mutex::default(),
            responder: Some(Box::new(respond)),
            requests: Arc::default(),
            remember: true,
            price: Some(Price::FREE),
        }
    }

    /// A model that keeps no copy of its requests ([`Scripted::requests`] stays empty): a
    /// benchmark's zero-latency model, which should cost nothing a real model's adapter does not.
    #[must_use]
    pub fn unrecorded(mut self) -> Self {
        self.remember = false;
        self
    }

    /// A model that costs `price` a token (a script costs nothing by default).
    #[must_use]
    pub fn priced(mut self, price: Option<Price>) -> Self {
        self.price = price;
        self
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    fn next(&self, request: &ModelRequest) -> Result<ModelResponse, ProviderError> {
        if let Some(respond) = &self.responder {
            return respond(request);
        }
        self.replies
            .lock()
            .ok()
            .and_then(|mut q| q.pop_front())
            .unwrap_or_else(|| Ok(reply_text("(the script has no more replies)")))
    }
}

impl Provider for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn model(&self) -> &'static str {
        "scripted"
    }

    fn price(&self) -> Option<Price> {
        self.price
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        if self.remember
            && let Ok(mut requests) = self.requests.lock()
        {
            requests.push(request.clone());
        }
        crate::provider::whole_reply(self.next(request))
    }
}

/// A final text reply.
pub fn reply_text(text: &str) -> ModelResponse {
    reply_stopped(StopReason::End, vec![Block::text(text)])
}

/// A reply that calls tools, with ids `call_<n>_<name>`.
pub fn reply_calls(calls: &[(&str, Value)]) -> ModelResponse {
    let content = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| Block::ToolUse {
            id: format!("call_{i}_{name}"),
            name: (*name).to_owned(),
            input: input.clone(),
            provider_meta: None,
        })
        .collect();
    reply_stopped(StopReason::ToolUse, content)
}

/// A reply with the given stop reason and text.
pub fn reply_stopped(stop_reason: StopReason, content: Vec<Block>) -> ModelResponse {
    ModelResponse {
        message: Message::assistant(content),
        stop_reason,
        usage: Usage {
            input_tokens: 100,
            output_tokens: 10,
            cached_tokens: 0,
            thought_tokens: 0,
        },
        model_version: None,
    }
}
