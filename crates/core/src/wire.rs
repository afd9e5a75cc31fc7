//! The wire the web app reads, as a JSON Schema made from the Rust types themselves.
//!
//! `web/src/api/wire.schema.json` is that schema, committed; `web/src/api/wire.ts` is its
//! TypeScript, generated from it by `json-schema-to-typescript` (`npm run wire` in `web/`). The
//! event stream's types are named here ([`WireSchema::events`]); the site's test
//! (`crates/devserver/tests/it/wire.rs`), which sees every function's types, adds the REST
//! answers and fails when the committed schema is not what the types say, and one in `web/` fails
//! when the committed TypeScript is not what the schema says: a change to a Rust type of the wire
//! cannot reach `main` with the page still reading the old shape.
//!
//! The schemas describe what the server writes (schemars' serialize contract): a field is optional
//! in the TypeScript only where serde may leave it out (`skip_serializing_if`), and an `Option` it
//! always writes is `T | null`, never absent. A request body read by the server is held to the
//! same: the page sends every field, `null` for one it leaves unset.
//!
//! After changing a type of the wire: `KAKEIBO_WRITE_WIRE=1 cargo test -p kakeibo-devserver
//! --test it wire`, then `npm run wire` in `web/`.

use schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use crate::{
    event::{EndStatus, Event, EventUsage, TurnEnd},
    tool::Tier,
    turn::{RunStatus, Stop, ToolOutcome, WriteDecision},
};

/// A schema of named types, each a definition the TypeScript names after its Rust type.
#[derive(Debug)]
pub struct WireSchema {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
}

impl WireSchema {
    /// The types of the event stream.
    pub fn events() -> Self {
        let mut wire = Self {
            generator: SchemaSettings::draft07().for_serialize().into_generator(),
            properties: Map::new(),
        };
        wire.add::<Event>("event");
        wire.add::<TurnEnd>("turn_end");
        wire.add::<EventUsage>("usage");
        wire.add::<EndStatus>("end_status");
        wire.add::<RunStatus>("run_status");
        wire.add::<Stop>("stop");
        wire.add::<ToolOutcome>("tool_outcome");
        wire.add::<WriteDecision>("write_decision");
        wire.add::<Tier>("tier");
        wire
    }

    /// Adds `T` under `name`.
    pub fn add<T: JsonSchema>(&mut self, name: &str) -> &mut Self {
        let schema = self.generator.subschema_for::<T>();
        self.properties.insert(name.to_owned(), schema.to_value());
        self
    }

    /// The schema, every type added a definition.
    pub fn finish(mut self) -> Value {
        let required: Vec<&String> = self.properties.keys().collect();
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "Wire",
            "description": "The types of kakeibo's event stream and REST answers (generated from the Rust types: do not edit).",
            "type": "object",
            "properties": self.properties,
            "required": required,
            "additionalProperties": false,
            "definitions": self.generator.take_definitions(true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_and_outcome_is_in_the_schema() {
        let schema = WireSchema::events().finish().to_string();
        for word in [
            "tool_result",
            "turn_end",
            "refused_by_hook",
            "denied_by_rule",
            "suspended",
            "input_tokens",
        ] {
            assert!(schema.contains(word), "{word}");
        }
    }
}
