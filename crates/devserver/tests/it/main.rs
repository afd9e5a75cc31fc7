//! The integration tests of this crate, one binary: each module was a test file of its own.
//! (`logs` stays a binary of its own: it sets the process's log subscriber.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

mod support;

mod accounts;
mod admin;
mod bot_check;
mod database_restart;
mod downloads;
mod figures;
mod gateway_events;
mod google_sign_in;
mod hooks;
mod hostile_input;
mod http_e2e;
mod hygiene;
mod isolation;
mod load;
mod one_turn_at_a_time;
mod previews;
mod provider_faults;
mod query_strings;
mod races;
mod real_model;
mod register;
mod request_bodies;
mod router;
mod sessions;
mod web_api;
mod web_app;
mod wire;
