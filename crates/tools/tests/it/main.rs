//! The integration tests of this crate, one binary: each module was a test file of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use kakeibo_testdb as common;
use kakeibo_testkit::corpus;

mod figures_rows;
mod import_db;
mod import_folder;
mod tools_on_seed;
