//! `POST /api/chat`: a message in, the turn out as server-sent events, the message charged
//! to the visitor's quotas once ([`MessageCharge`]) and given back when its turn never starts.

use std::{sync::Arc, time::Instant};

use axum::{
    extract::{Request, State as Shared},
    response::Response,
};
use chrono::Utc;
use kakeibo_agent::{
    conversations::{Availability, availability},
    turns::ConfirmError,
};
use kakeibo_api::{
    ApiError, State,
    request::{ClientAddress, client_address, json_body},
    sse,
    turn_stream::{forward, send_result, spawn_turn},
    visitor,
};
use kakeibo_auth::Visitor;
use kakeibo_core::ConversationId;
use kakeibo_ledger::OwnerId;
use kakeibo_ledger::seed::ensure_demo_ledger;
use kakeibo_operator::{
    OperatorError,
    quota::{self, QuotaKind},
};
use serde::Deserialize;

use crate::MAX_MESSAGE_CHARS;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChatBody {
    message: String,
    #[serde(default)]
    conversation_id: Option<kakeibo_core::ConversationId>,
    /// The bot check's token (Turnstile), needed until the visitor has passed it once when
    /// `TURNSTILE_SECRET` is set; ignored otherwise.
    #[serde(default)]
    turnstile_token: Option<String>,
}

/// The per-address quota key of a request.
pub(crate) fn address_key(state: &State, request: &axum::http::request::Parts) -> String {
    let address = client_address(
        request.extensions.get::<ClientAddress>(),
        &request.headers,
        state.config.client_address_header.as_deref(),
    );
    quota::address_key(&address, &state.config.rate_limit_salt, Utc::now().date_naive())
}

pub(crate) async fn chat(Shared(state): Shared<Arc<State>>, request: Request) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let input: ChatBody = json_body(body).await?;
    let message = input.message.trim().to_owned();
    if message.is_empty() {
        return Err(ApiError::BadRequest("message is required".into()));
    }
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::BadRequest(format!(
            "the message is longer than {MAX_MESSAGE_CHARS} characters"
        )));
    }
    let agent_model = state.agent_model()?;
    let key = address_key(&state, &parts);
    let resolved =
        visitor::checked_or_new(&state, &parts.headers, &key, input.turnstile_token.as_deref()).await?;
    let result = async {
        let owner = resolved.visitor.owner();
        // A conversation that is not the visitor's, or that has a turn in flight or a write
        // waiting, is refused before anything is charged (the opening checks again under a lock);
        // a new one is made by its first turn's opening, only once the quota admitted the message.
        if let Some(conversation) = input.conversation_id {
            match availability(owner, &state.app, conversation).await? {
                Availability::Free => {}
                Availability::Missing => return Err(ApiError::NotFound),
                Availability::Busy(busy) => return Err(ApiError::Busy(busy)),
            }
        }
        let charge = MessageCharge::take(&state, &resolved.visitor, &key).await?;
        if !resolved.visitor.demo_cloned
            && let Err(e) = ensure_demo_ledger(owner, &state.app).await
        {
            charge.give_back(&state).await?;
            return Err(e.into());
        }
        let (conversation, is_new) = match input.conversation_id {
            Some(conversation) => (conversation, false),
            None => (ConversationId::random(), true),
        };
        let (events, response) = sse::stream();
        let state = Arc::clone(&state);
        let stream = events.clone();
        spawn_turn(&stream, async move {
            let started = Instant::now();
            // A new conversation is routed once, on its first message; one that exists keeps
            // the model it was given.
            let model = if is_new {
                state.model_for_new(&message, &agent_model).await
            } else {
                state.model_of(owner, conversation, &agent_model).await
            };
            let result = match state.web_agent(owner, model).await {
                Ok(agent) => {
                    let prompt = agent.prompt(&message).since(started).on_event(forward(&events));
                    if is_new {
                        prompt.starting(conversation).await
                    } else {
                        prompt.in_conversation(conversation).await
                    }
                }
                Err(e) => Err(e),
            };
            let never_started = match &result {
                Err(kakeibo::Error::Turn(e)) => {
                    matches!(e, ConfirmError::NotStarted(_) | ConfirmError::Busy(_))
                }
                // The agent could not be built: no turn, no model call.
                Err(_) => true,
                Ok(_) => false,
            };
            if never_started {
                // Nothing of the turn was recorded and no model was called: the visitor can send
                // the message again.
                if let Err(e) = charge.give_back(&state).await {
                    tracing::error!(error = %e, "the charge of a turn that never started could not be given back");
                }
            }
            send_result(&events, result);
        });
        Ok(response)
    }
    .await;
    Ok(resolved.respond(result))
}

/// One message charged to the quotas — the visitor's own, and their address's while they are
/// anonymous (a signed-in person is counted per account: many people share an address; the
/// global daily budget caps the site) — and given back when its turn never starts. The one place
/// the chat charges and refunds a message.
#[derive(Debug, Clone)]
struct MessageCharge {
    owner: OwnerId,
    /// The address's key, when the address was charged too.
    address: Option<String>,
}

impl MessageCharge {
    /// Charges the message, or refuses it with the limit that binds ([`ApiError::Refused`]).
    async fn take(state: &State, visitor: &Visitor, address_key: &str) -> Result<Self, ApiError> {
        let charge = Self {
            owner: visitor.owner(),
            address: quota::charged_address(visitor.is_anonymous, address_key).map(str::to_owned),
        };
        quota::consume(
            charge.owner,
            &state.owner_pool,
            charge.address.as_deref(),
            QuotaKind::Message,
            &state.config.quotas,
            Utc::now(),
        )
        .await?
        .map_err(ApiError::Refused)?;
        Ok(charge)
    }

    /// Gives the message back: its turn never started.
    async fn give_back(&self, state: &State) -> Result<(), OperatorError> {
        quota::refund(self.owner, &state.owner_pool, self.address.as_deref(), Utc::now()).await
    }
}
