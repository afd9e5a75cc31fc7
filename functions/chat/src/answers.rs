//! The short answers of the session, account, books and upload routes: each a type on the wire
//! (`web/src/api/wire.ts`), so a renamed key fails the wire's test instead of a page.

use kakeibo_ledger::Currency;
use schemars::JsonSchema;
use serde::Serialize;

/// `202` to a password-reset request (`true` whether or not the address has an account) and to
/// a verification resend (`false`: the address is proven already).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Sent {
    pub sent: bool,
}

/// A password set again by a mailed link; every session of the account has ended.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Reset {
    pub reset: bool,
}

/// An address proven by a mailed link.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Verified {
    pub verified: bool,
}

/// Every session of the visitor ended, and the cookie cleared.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SignedOut {
    pub signed_out: bool,
}

/// An account, or a kept upload, deleted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Gone {
    pub deleted: bool,
}

/// The currency new accounts and budgets take from now on.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HomeCurrency {
    pub home_currency: Currency,
}
