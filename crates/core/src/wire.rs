//! The wire the web app reads, as a JSON Schema made from the Rust types themselves.
//!
//! `web/src/api/wire.schema.json` is this schema, committed; `web/src/api/wire.ts` is its
//! TypeScript, generated from it by `json-schema-to-typescript` (`npm run wire` in `web/`). A
//! test here fails when the committed schema is not what the types say, and one in `web/` fails
//! when the committed TypeScript is not what the schema says: a change to an event's Rust type
//! cannot reach `main` with the page still reading the old shape.
//!
//! After changing a type below: `KAKEIBO_WRITE_WIRE=1 cargo test -p kakeibo-core --lib wire`,
//! then `npm run wire` in `web/`.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::{
    event::{EndStatus, Event, EventUsage, TurnEnd},
    tool::Tier,
    turn::{RunStatus, Stop, ToolOutcome, WriteDecision},
};

/// The schema of every type the web's event stream carries, each a named definition.
pub fn web_schema() -> Value {
    let mut generator = SchemaSettings::draft07().into_generator();
    let mut properties = Map::new();
    let mut add = |name: &str, schema: schemars::Schema| {
        properties.insert(name.to_owned(), schema.to_value());
    };
    add("event", generator.subschema_for::<Event>());
    add("turn_end", generator.subschema_for::<TurnEnd>());
    add("usage", generator.subschema_for::<EventUsage>());
    add("end_status", generator.subschema_for::<EndStatus>());
    add("run_status", generator.subschema_for::<RunStatus>());
    add("stop", generator.subschema_for::<Stop>());
    add("tool_outcome", generator.subschema_for::<ToolOutcome>());
    add("write_decision", generator.subschema_for::<WriteDecision>());
    add("tier", generator.subschema_for::<Tier>());
    let required: Vec<&String> = properties.keys().collect();
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Wire",
        "description": "The types of kakeibo's event stream (generated from the Rust types: do not edit).",
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
        "definitions": generator.take_definitions(true),
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn committed() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/src/api/wire.schema.json")
    }

    #[test]
    fn the_committed_web_schema_is_what_the_types_say() {
        let generated = format!("{}\n", serde_json::to_string_pretty(&web_schema()).unwrap());
        let path = committed();
        if std::env::var_os("KAKEIBO_WRITE_WIRE").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == generated,
            "{} is not what the Rust types say: run `KAKEIBO_WRITE_WIRE=1 cargo test -p kakeibo-core --lib wire`, then `npm run wire` in web/",
            path.display()
        );
    }

    #[test]
    fn every_event_and_outcome_is_in_the_schema() {
        let schema = web_schema().to_string();
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
