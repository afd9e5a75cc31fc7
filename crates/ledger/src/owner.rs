//! The tenant every owner-scoped function is about.

use std::fmt;

use uuid::Uuid;

/// A user whose ledger, conversations and runs a call reads or writes.
///
/// It is the first parameter of every owner-scoped function, so a call site always says whose
/// data it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct OwnerId(Uuid);

/// The development owner (`00000000-0000-4000-8000-000000000001`): the ledger of the CLI, the
/// MCP server and the local tools. Migration 0001 creates its user row.
pub const DEV_OWNER: OwnerId = OwnerId(Uuid::from_u128(0x0000_0000_0000_4000_8000_0000_0000_0001));

/// The evaluation owner (`00000000-0000-4000-8000-0000000000e1`): the evaluation harness resets
/// and reseeds its ledger before every task, so an evaluation never touches anyone else's data,
/// the developer's included. Migration 0004 creates its user row.
pub const EVAL_OWNER: OwnerId = OwnerId(Uuid::from_u128(0x0000_0000_0000_4000_8000_0000_0000_00e1));

impl OwnerId {
    pub const fn new(id: Uuid) -> Self {
        Self(id)
    }

    pub const fn as_uuid(self) -> Uuid {
        self.0
    }
}

impl fmt::Display for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_owner_is_the_reference_id() {
        assert_eq!(DEV_OWNER.to_string(), "00000000-0000-4000-8000-000000000001");
    }
}
