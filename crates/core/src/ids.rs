//! The ids that cross crates, each its own type: a run id cannot be passed where a conversation
//! id is meant. Each is a UUID, serialised as its hyphenated string.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
        )]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            /// A new random id.
            pub fn random() -> Self {
                Self(Uuid::new_v4())
            }

            pub const fn from_uuid(id: Uuid) -> Self {
                Self(id)
            }

            pub const fn as_uuid(self) -> Uuid {
                self.0
            }
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                Self(id)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self)
            }
        }
    };
}

uuid_id!(
    /// One run of the agent: a turn from the person's message to its end, across a suspension.
    RunId
);
uuid_id!(
    /// One conversation of an owner.
    ConversationId
);
uuid_id!(
    /// A turn stored while a write waits for a person (the confirmation's id).
    SuspendedTurnId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_uuid_as_text_both_ways() {
        let run = RunId::random();
        let text = run.to_string();
        assert_eq!(text, run.as_uuid().to_string());
        assert_eq!(text.parse::<RunId>().ok(), Some(run));
        assert_eq!(
            serde_json::to_value(run).ok(),
            Some(serde_json::Value::String(text))
        );
        assert!("r1".parse::<ConversationId>().is_err());
    }
}
