//! kakeibo-toolschema: tool input schemas, in two forms.
//!
//! *Validation* uses the full JSON Schema (draft 2020-12) that `schemars` derives, patterns and
//! formats included. *Declarations* sent to providers use a restricted subset that every provider
//! accepts: no `$ref`/`$defs`, no `additionalProperties`, `anyOf` rather than `oneOf`, `allOf`
//! merged, `const` as a one-value `enum`, null branches as `nullable`, `pattern` and meaningful
//! `format`s folded into the description, keys sorted at every depth.

use schemars::{JsonSchema, Schema, generate::SchemaSettings};
use serde_json::{Map, Value};

/// The keywords a declaration may keep; everything else is dropped.
pub const DECLARATION_KEYWORDS: &[&str] = &[
    "anyOf",
    "default",
    "description",
    "enum",
    "items",
    "maxItems",
    "maxLength",
    "maximum",
    "minItems",
    "minLength",
    "minimum",
    "nullable",
    "properties",
    "required",
    "type",
];

/// Formats that say nothing a model needs (the type already does).
const SILENT_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float", "double",
];

/// The full schema of `T`, for validating inputs.
pub fn validation_schema<T: JsonSchema>() -> Value {
    schemars::schema_for!(T).to_value()
}

/// The restricted schema of `T`, for declarations.
pub fn declaration_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema: Schema = generator.into_root_schema_for::<T>();
    restrict(&schema.to_value())
}

/// Rewrites any JSON schema into the declaration subset (see the module documentation).
pub fn restrict(schema: &Value) -> Value {
    let definitions = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    sorted(&restrict_node(schema, &definitions, 0))
}

fn restrict_node(node: &Value, definitions: &Map<String, Value>, depth: usize) -> Value {
    let Some(object) = node.as_object() else {
        return node.clone();
    };
    let mut object = object.clone();

    // $ref: inline the definition (a recursive type stops at a bounded depth as a plain object).
    if let Some(Value::String(reference)) = object.remove("$ref") {
        let name = reference.rsplit('/').next().unwrap_or_default();
        let target = definitions
            .get(name)
            .filter(|_| depth < 16)
            .cloned()
            .unwrap_or_else(
                || serde_json::json!({"type": "object", "description": format!("(recursive {name})")}),
            );
        let mut merged = target.as_object().cloned().unwrap_or_default();
        // Keywords beside the $ref (a description, say) win over the definition's.
        for (key, value) in object {
            merged.insert(key, value);
        }
        return restrict_node(&Value::Object(merged), definitions, depth + 1);
    }

    if let Some(Value::Array(parts)) = object.remove("allOf") {
        for part in parts {
            let part = restrict_node(&part, definitions, depth + 1);
            merge_into(&mut object, part.as_object().cloned().unwrap_or_default());
        }
    }
    if let Some(one_of) = object.remove("oneOf") {
        object.insert("anyOf".into(), one_of);
    }
    if let Some(constant) = object.remove("const") {
        object.insert("enum".into(), Value::Array(vec![constant]));
    }
    // A null among the enum values is nullability, not a value.
    if let Some(Value::Array(values)) = object.get_mut("enum")
        && values.contains(&Value::Null)
    {
        values.retain(|v| !v.is_null());
        object.insert("nullable".into(), Value::Bool(true));
    }

    fold_type_list(&mut object);
    fold_hints(&mut object);

    // Recurse into the children, then drop null branches of anyOf.
    if let Some(Value::Object(properties)) = object.remove("properties") {
        let restricted = properties
            .into_iter()
            .map(|(k, v)| (k, restrict_node(&v, definitions, depth + 1)))
            .collect();
        object.insert("properties".into(), Value::Object(restricted));
    }
    if let Some(items) = object.remove("items") {
        object.insert("items".into(), restrict_node(&items, definitions, depth + 1));
    }
    if let Some(Value::Array(branches)) = object.remove("anyOf") {
        let mut nullable = false;
        let mut kept: Vec<Value> = Vec::new();
        for branch in branches {
            let branch = restrict_node(&branch, definitions, depth + 1);
            if branch.get("type").and_then(Value::as_str) == Some("null")
                || branch.get("nullable") == Some(&Value::Bool(true))
                    && branch.as_object().is_some_and(|b| b.len() == 1)
            {
                nullable = true;
            } else {
                kept.push(branch);
            }
        }
        if nullable {
            object.insert("nullable".into(), Value::Bool(true));
        }
        if kept.len() == 1 {
            let only = kept.remove(0);
            merge_into(&mut object, only.as_object().cloned().unwrap_or_default());
        } else if !kept.is_empty() {
            object.insert("anyOf".into(), Value::Array(kept));
        }
    }

    object.retain(|key, _| DECLARATION_KEYWORDS.contains(&key.as_str()));
    Value::Object(object)
}

/// `type: ["string", "null"]` → `type: "string"` + `nullable`; several non-null types → `anyOf`.
fn fold_type_list(object: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = object.get("type").cloned() {
        let (nulls, others): (Vec<Value>, Vec<Value>) = types.into_iter().partition(|t| t == "null");
        if !nulls.is_empty() {
            object.insert("nullable".into(), Value::Bool(true));
        }
        match others.len() {
            0 => {
                object.remove("type");
            }
            1 => {
                if let Some(only) = others.first() {
                    object.insert("type".into(), only.clone());
                }
            }
            _ => {
                let branches = others
                    .into_iter()
                    .map(|t| serde_json::json!({ "type": t }))
                    .collect();
                object.remove("type");
                object.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
}

/// `pattern` and meaningful `format`s become hints at the end of the description.
fn fold_hints(object: &mut Map<String, Value>) {
    let mut hints = Vec::new();
    if let Some(Value::String(pattern)) = object.remove("pattern") {
        hints.push(format!("pattern: {pattern}"));
    }
    if let Some(Value::String(format)) = object.remove("format")
        && !SILENT_FORMATS.contains(&format.as_str())
    {
        hints.push(format!("format: {format}"));
    }
    if !hints.is_empty() {
        let hint = format!("({})", hints.join("; "));
        let description = match object.get("description").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => format!("{text} {hint}"),
            _ => hint,
        };
        object.insert("description".into(), Value::String(description));
    }
}

/// Merges `other` into `into`: properties and required lists are united, other keys kept
/// from `into` when both have them (descriptions joined).
fn merge_into(into: &mut Map<String, Value>, other: Map<String, Value>) {
    for (key, value) in other {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (k, v) in theirs {
                    mine.entry(k).or_insert(v);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for v in theirs {
                    if !mine.contains(&v) {
                        mine.push(v);
                    }
                }
            }
            ("description", Some(Value::String(mine)), Value::String(theirs)) if *mine != theirs => {
                *mine = format!("{mine} {theirs}");
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// The same value with object keys in sorted order at every depth (whatever map the
/// `serde_json` build uses), so a declaration serialises to the same bytes everywhere.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Every keyword in `schema` that a declaration must not contain, with its path.
pub fn forbidden_keywords(schema: &Value) -> Vec<String> {
    fn walk(node: &Value, path: &str, in_properties: bool, out: &mut Vec<String>) {
        match node {
            Value::Object(map) => {
                for (key, value) in map {
                    if !in_properties && !DECLARATION_KEYWORDS.contains(&key.as_str()) {
                        out.push(format!("{path}/{key}"));
                    }
                    if !in_properties && key == "type" && value == "null" {
                        out.push(format!("{path}/type=null"));
                    }
                    walk(
                        value,
                        &format!("{path}/{key}"),
                        !in_properties && key == "properties",
                        out,
                    );
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}/{i}"), false, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(schema, "", false, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rewrites_into_the_subset() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Input",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "month": {"type": "string", "pattern": "^\\d{4}-\\d{2}$", "description": "A month."},
                "when": {"type": ["string", "null"], "format": "date"},
                "count": {"type": "integer", "format": "uint32", "minimum": 0},
                "kind": {"const": "fixed"},
                "maybe": {"type": ["string", "null"], "enum": ["a", null]},
                "pick": {"oneOf": [{"$ref": "#/$defs/Choice"}, {"type": "null"}]},
                "both": {"allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "number"}}, "required": ["b"]}
                ]}
            },
            "required": ["month"],
            "$defs": {"Choice": {"type": "string", "enum": ["x", "y"], "description": "Choose."}}
        });
        let restricted = restrict(&schema);
        assert_eq!(forbidden_keywords(&restricted), Vec::<String>::new());
        let p = &restricted["properties"];
        assert_eq!(p["month"]["description"], "A month. (pattern: ^\\d{4}-\\d{2}$)");
        assert_eq!(
            p["when"],
            json!({"type": "string", "nullable": true, "description": "(format: date)"})
        );
        assert_eq!(p["count"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(p["kind"], json!({"enum": ["fixed"]}));
        assert_eq!(
            p["maybe"],
            json!({"type": "string", "enum": ["a"], "nullable": true})
        );
        assert_eq!(
            p["pick"],
            json!({"type": "string", "enum": ["x", "y"], "description": "Choose.", "nullable": true})
        );
        assert_eq!(p["both"]["required"], json!(["a", "b"]));
        assert_eq!(p["both"]["properties"]["b"], json!({"type": "number"}));
        assert_eq!(restricted["required"], json!(["month"]));
    }

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let text =
            serde_json::to_string(&sorted(&json!({"b": {"z": 1, "a": [{"y": 0, "x": 0}]}, "a": 0}))).unwrap();
        assert_eq!(text, r#"{"a":0,"b":{"a":[{"x":0,"y":0}],"z":1}}"#);
    }

    #[test]
    fn forbidden_keywords_are_found_but_property_names_are_not() {
        let schema = json!({"type": "object", "properties": {"pattern": {"type": "string", "oneOf": []}}});
        assert_eq!(forbidden_keywords(&schema), ["/properties/pattern/oneOf"]);
        assert_eq!(
            forbidden_keywords(&json!({"anyOf": [{"type": "null"}]})),
            ["/anyOf/0/type=null"]
        );
    }
}
