//! kakeibo-operator: the operator's side of kakeibo — what reads or writes across owners, or
//! belongs to no owner.
//!
//! [`admin`] is the one door to cross-owner reads and the operator's actions (the overview, runs,
//! visitors, blocking); [`quota`] keeps the per-visitor and per-address counters; [`budget`] the
//! site's daily model budget, which every model call of a web turn reserves against; [`uploads`] stores a visitor's statements for the import tool; [`housekeeping`]
//! is the nightly reaper. Each module that crosses owners takes the owner role's pool, and the
//! containment test of kakeibo-api lists it with the reason. It stands on `kakeibo-ledger`
//! (with `kakeibo-agent` for a run's detail and `kakeibo-core`'s trace keys for the panels) and
//! knows nothing of HTTP, providers or AWS.

// A statement, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod admin;
pub mod budget;
mod error;
pub mod housekeeping;
pub mod quota;
pub mod uploads;

pub use error::{OperatorError, UploadError};
