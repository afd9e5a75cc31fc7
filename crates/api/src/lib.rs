//! kakeibo-api: the plumbing every function shares.
//!
//! [`config`] reads the settings (the environment locally; in Lambda also the JSON secret named
//! by `SECRETS_ARN`, read once at cold start); [`state`] holds what a function builds once — the
//! two pools, sessions, the model; [`visitor`] turns a cookie into a visitor; [`request`] holds
//! request hygiene (origin check, body limits, JSON errors, the client address); [`sse`] frames
//! server-sent events; [`error`] is the one mapping from failures to HTTP responses; [`lambda`]
//! runs a function's router under the Lambda runtime and [`routes`] finishes every router the
//! same way (JSON `404`/`405`); [`mail`] sends the links that prove an address or reset a
//! password.
//!
//! Functions depend on this crate, never on one another.

// A request, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod config;
pub mod error;
pub mod headers;
pub mod lambda;
pub mod mail;
pub mod request;
pub mod routes;
pub mod secrets;
pub mod sse;
pub mod state;
pub mod telemetry;
pub mod turn_stream;
pub mod visitor;

pub use config::{Config, ConfigError, Site};
pub use error::ApiError;
pub use request::ClientAddress;
pub use state::State;
