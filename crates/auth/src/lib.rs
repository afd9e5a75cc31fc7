//! kakeibo-auth: who a request is.
//!
//! Every visitor is a `users` row from their first request, anonymous until they attach an email
//! and a password. A session is an HS256 JWT ([`session`]) in the `kakeibo_session` cookie;
//! passwords are argon2id ([`password`]); [`visitors`] creates visitors, signs them up and in
//! (moving an anonymous visitor's rows onto the account in one transaction), slows repeated
//! failed sign-ins per account and address, changes passwords, and deletes accounts; [`proofs`]
//! makes and spends the one-time links mailed to prove an address or reset a password.
//!
//! It depends on the ledger for owners and the owner-role pool, and on nothing of HTTP.

// A statement, a provider or a person can send anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod password;
pub mod proofs;
pub mod session;
pub mod visitors;

pub use session::{Claims, SECURE_SESSION_COOKIE, SESSION_COOKIE, SessionError, Sessions};
pub use visitors::{AuthError, Visitor};
