//! The integration tests of this crate, one binary: each module was a test file of its own.
//! (`import_memory` stays a binary of its own: it counts its process's allocations.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

// Shared with other crates' tests, which include them by path: they stay where those look.
use kakeibo_testdb as common;
use kakeibo_testkit::corpus;

mod household;
mod household_properties;
mod import_corpus;
mod import_expectations;
mod import_firefly;
mod import_ofx;
mod import_statements;
mod ledger_db;
mod properties;
mod schema;
mod seed_parity;
