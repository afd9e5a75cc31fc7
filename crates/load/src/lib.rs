//! kakeibo-load: many simulated visitors against a running kakeibo site for a fixed time
//! (`cargo xtask load`), then the database checked for what they did.
//!
//! Each visitor is one task with a loopback address of its own (127.0.x.y, so the per-address
//! quotas see many visitors rather than one client), its own session, and a closed loop of what a
//! visitor of the site does: questions the read tools answer, a write it allows or declines, a
//! statement uploaded, previewed and imported, the dashboard, the lists of its runs and
//! conversations. The site must run on the scripted demo model (`fixtures/scripts/demo.yaml`):
//! the load measures kakeibo, not a provider, and the script's answers are known.
//!
//! What the visitors record is what the [`checks`] need: the run each admitted message got, every
//! write with a tag of its own and the decision sent for it, every run and conversation a listing
//! showed, and any other visitor's tag seen in a page.

// A server can answer anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod checks;
mod sse;
pub mod storm;
pub mod traffic;
mod visitor;

pub use checks::{Checks, check};
pub use traffic::{Plan, Traffic, drive};
