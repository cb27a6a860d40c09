//! The tools' JSON Schemas, made in this one place: `tools/list` publishes them and `args` checks
//! calls against the very same ones.
//!
//! schemars describes Rust types; a client needs less, and pays for every byte on every turn
//! (clients send `tools/list` to the model). The settings below keep what a client validates
//! (types, required fields, enums, bounds) and drop the rest:
//! - `format` values outside JSON Schema's own vocabulary (`uint32`, `int64`, `double`...):
//!   strict validators reject or warn about them; a small unsigned type keeps its range as
//!   `maximum`;
//! - `null` in optional input fields: a client omits them (a `null` sent anyway is still read as
//!   absent);
//! - definitions used once are written in place; one description per field (the field's own,
//!   not its type's again);
//! - outputs carry their structure only (types, fields, required fields, choices): no
//!   descriptions (the tool description and the text content say what a result means), no
//!   defaults, no numeric ranges that merely restate the Rust type (a `usize` is never negative).

use rmcp::model::JsonObject;
use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The formats JSON Schema 2020-12 defines; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The schema of what a tool accepts.
pub fn input<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    cached::<T>(Contract::Input)
}

/// The schema of what a tool returns (`structuredContent`), as `Serialize` writes it.
pub fn output<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    cached::<T>(Contract::Output)
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Contract {
    Input,
    Output,
}

/// Schemas made so far, per type and contract.
type Made = HashMap<(TypeId, Contract), Arc<JsonObject>>;

fn cached<T: JsonSchema + 'static>(contract: Contract) -> Arc<JsonObject> {
    static CACHE: Mutex<Option<Made>> = Mutex::new(None);
    let key = (TypeId::of::<T>(), contract);
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    cache
        .entry(key)
        .or_insert_with(|| Arc::new(generate::<T>(contract)))
        .clone()
}

fn generate<T: JsonSchema>(contract: Contract) -> JsonObject {
    let settings = SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .with_transform(RecursiveTransform(standard_format));
    // Outputs keep `null` where the type has it: an absent field and a null one may mean two
    // things there (`value` of a change: unchanged, or none now).
    let settings = match contract {
        Contract::Input => settings
            .for_deserialize()
            .with_transform(RecursiveTransform(optional_is_omitted))
            .with_transform(inline_single_use)
            .with_transform(RecursiveTransform(one_description_per_field)),
        Contract::Output => settings
            .for_serialize()
            .with_transform(inline_single_use)
            .with_transform(RecursiveTransform(structure_only)),
    };
    let mut schema = settings
        .with_transform(RecursiveTransform(consts_as_enum))
        .into_generator()
        .into_root_schema_for::<T>();
    // The type's own name and doc comment say nothing to a client.
    schema.remove("title");
    schema.remove("description");
    match schema.to_value() {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// Drops a `format` JSON Schema does not define; `uint8`/`uint16`/`uint32` keep their range.
fn standard_format(schema: &mut Schema) {
    let Some(format) = schema.get("format").and_then(Value::as_str).map(str::to_owned) else {
        return;
    };
    if STANDARD_FORMATS.contains(&format.as_str()) {
        return;
    }
    schema.remove("format");
    let max = match format.as_str() {
        "uint8" => u64::from(u8::MAX),
        "uint16" => u64::from(u16::MAX),
        "uint32" => u64::from(u32::MAX),
        _ => return,
    };
    if schema.get("maximum").is_none() {
        schema.insert("maximum".into(), max.into());
    }
}

/// A property not in `required` is omitted rather than `null`: its `null` branch goes.
fn optional_is_omitted(schema: &mut Schema) {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        if required.contains(name) {
            continue;
        }
        if let Value::Object(property) = property {
            drop_null(property);
        }
    }
}

fn drop_null(property: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = property.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            property.insert("type".into(), only);
        }
    }
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    let Some(Value::Array(branches)) = property.get("anyOf") else {
        return;
    };
    if branches.len() != 2 || !branches.iter().any(is_null) {
        return;
    }
    let Some(Value::Object(other)) = branches.iter().find(|b| !is_null(b)).cloned() else {
        return;
    };
    property.remove("anyOf");
    for (key, value) in other {
        // The property's own keys (its description) win over its type's.
        property.entry(key).or_insert(value);
    }
}

/// A definition referenced once is written where it is used.
fn inline_single_use(schema: &mut Schema) {
    let Some(root) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::Object(mut defs)) = root.remove("$defs") else {
        return;
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    count_refs(&Value::Object(root.clone()), &mut counts);
    count_refs(&Value::Object(defs.clone()), &mut counts);
    let single: Vec<String> = defs
        .keys()
        .filter(|name| counts.get(&reference(name)) == Some(&1))
        .cloned()
        .collect();
    for name in single {
        let Some(Value::Object(body)) = defs.remove(&name) else {
            continue;
        };
        if count_in(&Value::Object(body.clone()), &reference(&name)) > 0 {
            // Recursive: it stays a definition.
            defs.insert(name, Value::Object(body));
            continue;
        }
        let target = reference(&name);
        let mut rest = Value::Object(std::mem::take(root));
        substitute(&mut rest, &target, &body);
        if let Value::Object(r) = rest {
            *root = r;
        }
        for def in defs.values_mut() {
            substitute(def, &target, &body);
        }
    }
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
}

fn reference(name: &str) -> String {
    format!("#/$defs/{name}")
}

fn count_refs(value: &Value, counts: &mut HashMap<String, usize>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                *counts.entry(target.clone()).or_default() += 1;
            }
            map.values().for_each(|v| count_refs(v, counts));
        }
        Value::Array(items) => items.iter().for_each(|v| count_refs(v, counts)),
        _ => {}
    }
}

fn count_in(value: &Value, target: &str) -> usize {
    let mut counts = HashMap::new();
    count_refs(value, &mut counts);
    counts.get(target).copied().unwrap_or(0)
}

fn substitute(value: &mut Value, target: &str, body: &Map<String, Value>) {
    match value {
        Value::Object(map) => {
            if map.get("$ref").and_then(Value::as_str) == Some(target) {
                map.remove("$ref");
                for (key, v) in body {
                    map.entry(key.clone()).or_insert_with(|| v.clone());
                }
                return;
            }
            map.values_mut().for_each(|v| substitute(v, target, body));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, target, body)),
        _ => {}
    }
}

/// A described property's choices (`oneOf`/`anyOf` branches) lose their descriptions: the
/// property's own says what they are.
fn one_description_per_field(schema: &mut Schema) {
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for property in properties.values_mut() {
        if property.get("description").is_some() {
            for key in ["oneOf", "anyOf", "allOf"] {
                if let Some(Value::Array(branches)) = property.get_mut(key) {
                    branches.iter_mut().for_each(strip_branch_descriptions);
                }
            }
        }
    }
}

fn strip_branch_descriptions(branch: &mut Value) {
    if let Value::Object(map) = branch {
        map.remove("description");
        for key in ["oneOf", "anyOf", "allOf"] {
            if let Some(Value::Array(branches)) = map.get_mut(key) {
                branches.iter_mut().for_each(strip_branch_descriptions);
            }
        }
    }
}

fn structure_only(schema: &mut Schema) {
    for key in ["description", "default", "minimum", "maximum"] {
        schema.remove(key);
    }
}

/// `oneOf` of bare string constants is an `enum`.
fn consts_as_enum(schema: &mut Schema) {
    let Some(Value::Array(branches)) = schema.get("oneOf") else {
        return;
    };
    let bare_const = |b: &Value| {
        b.as_object().is_some_and(|m| {
            m.get("const").is_some_and(Value::is_string) && m.keys().all(|k| k == "const" || k == "type")
        })
    };
    if branches.is_empty() || !branches.iter().all(bare_const) {
        return;
    }
    let values: Vec<Value> = branches.iter().filter_map(|b| b.get("const").cloned()).collect();
    schema.remove("oneOf");
    schema.insert("type".into(), "string".into());
    schema.insert("enum".into(), Value::Array(values));
}

/// Checks the transforms with the schemars types they were written for.
#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Colour {
        /// Warm.
        Red,
        /// Cold.
        Blue,
    }

    /// A point.
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Point {
        /// Across.
        x: i32,
        y: f64,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Sample {
        /// A tiny count.
        small: u8,
        mid: Option<u32>,
        big: u64,
        /// The colour to paint.
        colour: Option<Colour>,
        at: Point,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maybe: Option<Point>,
        /// Set or null, always written.
        nullable: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        changed_to: Option<Option<String>>,
    }

    fn text(o: &JsonObject) -> String {
        serde_json::to_string(o).unwrap_or_default()
    }

    #[test]
    fn only_standard_formats_stay_and_inputs_keep_their_ranges() {
        for schema in [input::<Sample>(), output::<Sample>()] {
            let s = text(&schema);
            assert!(!s.contains("\"format\""), "{s}");
            assert!(!s.contains("$schema") && !s.contains("\"title\""), "{s}");
        }
        let schema = input::<Sample>();
        let props = &schema["properties"];
        assert_eq!(props["small"]["maximum"], json!(255));
        assert_eq!(props["mid"]["maximum"], json!(u32::MAX));
        assert_eq!(props["big"].get("maximum"), None);
        assert_eq!(props["big"]["minimum"], json!(0));
    }

    #[test]
    fn inputs_have_one_description_per_field_and_no_null_for_optional_ones() {
        let schema = input::<Sample>();
        let colour = &schema["properties"]["colour"];
        assert_eq!(
            Value::Object(colour.as_object().cloned().unwrap_or_default()),
            json!({"description": "The colour to paint.", "type": "string", "enum": ["red", "blue"]})
        );
        // Used twice: one definition, with the type's description.
        assert_eq!(schema["properties"]["at"], json!({"$ref": "#/$defs/Point"}));
        assert_eq!(schema["$defs"]["Point"]["description"], json!("A point."));
        // Used once: written in place.
        assert_eq!(schema["properties"]["colour"].get("$ref"), None);
        assert_eq!(schema["properties"]["mid"]["type"], json!("integer"));
    }

    #[test]
    fn outputs_keep_null_where_the_type_has_it() {
        let schema = output::<Sample>();
        let s = text(&schema);
        assert!(!s.contains("description") && !s.contains("minimum"), "{s}");
        let props = &schema["properties"];
        assert_eq!(props["nullable"]["type"], json!(["string", "null"]));
        // Absent (unchanged) and null (none now) are two answers: null stays allowed.
        assert_eq!(props["changed_to"]["type"], json!(["string", "null"]));
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        assert!(required.contains(&json!("nullable")) && !required.contains(&json!("changed_to")));
        assert!(!required.contains(&json!("maybe")));
    }
}
