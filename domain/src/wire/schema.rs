//! The protocol's JSON Schemas (draft 2020-12), generated from the wire types: one per message
//! `type`, as published in `protocol/schemas/<type>.json`. A schema describes what a receiver
//! accepts: the envelope (`v`, `type`) and the message's fields, optional where a receiver
//! gives a default. Unknown fields are allowed at every depth, as receivers ignore them.

use super::{ToManager, ToNode};
use crate::{HumanDuration, params::ParamType, wire::replay::ReplayToken};
use schemars::{
    JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings, json_schema,
    transform::RecursiveTransform,
};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Which side sends a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Commands, on the node's control queue.
    ToNode,
    /// Reports, on the manager's reports queue.
    ToManager,
}

/// The schema of one message type.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageSchema {
    /// The message's `type` (the schema's file name without `.json`).
    pub kind: String,
    pub direction: Direction,
    pub schema: Value,
}

/// Every message's schema: the commands, then the reports, each in the order its enum
/// declares them.
pub fn message_schemas() -> Vec<MessageSchema> {
    let mut out = split::<ToNode>(Direction::ToNode);
    out.extend(split::<ToManager>(Direction::ToManager));
    out
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .with_transform(RecursiveTransform(|schema: &mut Schema| {
            // The catalog's own types refuse unknown fields where operators write them; on the
            // wire they are read leniently (`lenient`), so the schema allows them too.
            if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                schema.remove("additionalProperties");
            }
        }))
        .into_generator()
}

/// One schema per variant of a `type`-tagged enum: the variant's object, with the envelope's
/// `v` and the `type` constant, and the definitions it refers to.
fn split<T: JsonSchema>(direction: Direction) -> Vec<MessageSchema> {
    let root = generator().into_root_schema_for::<T>().to_value();
    let defs = root.get("$defs").cloned().unwrap_or_default();
    let variants = root
        .get("oneOf")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    variants
        .into_iter()
        .filter_map(|variant| {
            let kind = variant
                .pointer("/properties/type/const")
                .and_then(Value::as_str)?
                .to_owned();
            Some(MessageSchema {
                schema: envelope(&kind, direction, variant, &defs),
                kind,
                direction,
            })
        })
        .collect()
}

fn envelope(kind: &str, direction: Direction, variant: Value, defs: &Value) -> Value {
    let mut schema = Map::new();
    schema.insert(
        "$schema".into(),
        "https://json-schema.org/draft/2020-12/schema".into(),
    );
    // Relative: each file is named by its message type, wherever the schemas are published.
    schema.insert("$id".into(), format!("{kind}.json").into());
    schema.insert("title".into(), kind.into());
    // The variant's own doc, else the doc of the struct it refers to.
    let referred = variant
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs.get(name));
    let description = [Some(&variant), referred]
        .into_iter()
        .flatten()
        .find_map(|v| v.get("description").and_then(Value::as_str))
        .unwrap_or_default()
        .replace('\n', " ");
    let to = match direction {
        Direction::ToNode => "manager → node (the node's control queue)",
        Direction::ToManager => "node → manager (the reports queue)",
    };
    schema.insert(
        "description".into(),
        format!("{to}. {description}").trim_end_matches(". ").into(),
    );
    let Value::Object(mut object) = variant else {
        return Value::Object(schema);
    };
    object.remove("description");
    if let Some(Value::Object(props)) = object.get_mut("properties") {
        let mut with_v = Map::new();
        with_v.insert(
            "v".into(),
            serde_json::json!({
                "description": "The protocol version the sender wrote. Receivers read every version from 1 on, a newer one as far as they know it.",
                "type": "integer",
                "minimum": 1
            }),
        );
        with_v.append(props);
        *props = with_v;
    }
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required.insert(0, "v".into());
    }
    schema.append(&mut object);
    // Only the definitions this message refers to.
    let text = Value::Object(schema.clone()).to_string();
    let mut used = Map::new();
    if let Value::Object(all) = defs {
        collect_defs(&text, all, &mut used);
    }
    if !used.is_empty() {
        schema.insert("$defs".into(), Value::Object(used));
    }
    Value::Object(schema)
}

/// The definitions `text` refers to, and those they refer to in turn.
fn collect_defs(text: &str, all: &Map<String, Value>, used: &mut Map<String, Value>) {
    for (name, def) in all {
        if used.contains_key(name) || !text.contains(&format!("\"#/$defs/{name}\"")) {
            continue;
        }
        used.insert(name.clone(), def.clone());
        collect_defs(&def.to_string(), all, used);
    }
    used.sort_keys();
}

impl JsonSchema for HumanDuration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A duration as text: one or more `<integer><unit>` parts, optionally separated by spaces, added up. Units: ns, us (µs), ms, s, m (minute), h, d (day), w (week), M or month (30.44 days = 2 630 016 s), y or year (365.25 days = 31 557 600 s), and their long forms (protocol/golden/durations.json). Writers put the largest units first (`1h 30m`, `1day 2h`, `500ms`).",
            "type": "string",
            "pattern": "^\\s*([0-9]+\\s*[A-Za-zµ]+\\s*)+$",
            "examples": ["500ms", "30s", "1h 30m", "1day"]
        })
    }
}

impl JsonSchema for ParamType {
    fn schema_name() -> Cow<'static, str> {
        "ParamType".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The type of a parameter's value(s): a JSON string, integer, decimal (a string such as \"12.50\"), boolean, date (YYYY-MM-DD), datetime (RFC 3339), duration (as Duration) or the code of a value of the application's classifier <name>.",
            "type": "string",
            "pattern": "^(string|integer|decimal|boolean|date|datetime|duration|classifier\\([^()]+\\))$"
        })
    }
}

impl JsonSchema for ReplayToken {
    fn schema_name() -> Cow<'static, str> {
        "ReplayToken".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "One replay of one dead letter: `<dead letter id>.<replay number>`, as the `x-am-replay` header carries it.",
            "type": "string",
            "pattern": "^-?[0-9]+\\.-?[0-9]+$"
        })
    }
}
