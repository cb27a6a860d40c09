//! Tool arguments parsed from the same types their JSON Schemas come from.
//!
//! Each tool's argument struct (in `tools.rs`) is declared once. Its schema (the one `tools/list`
//! publishes) drives the checks here, field by field, so a malformed call is answered with an
//! `INVALID_ARGUMENT` (or `LIMIT_EXCEEDED`) tool result that names the field, never with serde's
//! wording or a protocol error; the checked object is then deserialised into the struct.

use lsm_core::{ErrorCode, GuiError, GuiResult};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// What a field of the schema accepts.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Text,
    Flag,
    /// A non-negative whole number up to `max`.
    Count {
        max: u64,
    },
    /// One of these strings.
    Choice(Vec<String>),
    /// Checked by whoever reads it (the actions list: lsm-core parses each action).
    Other,
}

/// Parses a tool's arguments into `T`, checked against `T`'s JSON Schema.
pub fn parse<T: DeserializeOwned + JsonSchema + 'static>(args: &JsonObject) -> GuiResult<T> {
    let schema = Value::Object(crate::schema::input::<T>().as_ref().clone());
    let root = &schema;
    let empty = Map::new();
    let properties = root
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();

    if let Some(unknown) = args.keys().find(|k| !properties.contains_key(k.as_str())) {
        let known: Vec<&str> = properties.keys().map(String::as_str).collect();
        return Err(GuiError::invalid(format!(
            "unknown argument {unknown:?}; arguments are {}",
            known.join(", ")
        )));
    }
    let mut checked = JsonObject::new();
    for (name, field) in properties {
        let kind = kind_of(field, root);
        let value = args.get(name).filter(|v| !v.is_null());
        let needed = required.contains(&name.as_str());
        match value {
            None if needed => return Err(missing(name, &kind)),
            None => {}
            Some(v) => {
                check(name, &kind, v, needed)?;
                checked.insert(name.clone(), whole(&kind, v));
            }
        }
    }
    serde_json::from_value(Value::Object(checked)).map_err(|e| GuiError::invalid(format!("arguments: {e}")))
}

fn missing(name: &str, kind: &Kind) -> GuiError {
    match kind {
        Kind::Text => GuiError::invalid(format!("{name} is required (a non-empty string)")),
        _ => GuiError::invalid(format!("{name} is required")),
    }
}

fn check(name: &str, kind: &Kind, v: &Value, required: bool) -> GuiResult<()> {
    match (kind, v) {
        (Kind::Text, Value::String(s)) if required && s.is_empty() => Err(missing(name, kind)),
        (Kind::Text, Value::String(_)) => Ok(()),
        (Kind::Text, _) => Err(GuiError::invalid(format!("{name} must be a string"))),
        (Kind::Flag, Value::Bool(_)) => Ok(()),
        (Kind::Flag, _) => Err(GuiError::invalid(format!("{name} must be true or false"))),
        (Kind::Count { max }, Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(v), _) if v <= *max => Ok(()),
            (Some(v), _) => Err(far_above(name, v as f64)),
            // A whole number written as a float (`30.0`) counts as that number (see `whole`).
            (None, Some(f)) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 => {
                if f < U64_END && f as u64 <= *max {
                    Ok(())
                } else {
                    Err(far_above(name, f))
                }
            }
            _ => Err(GuiError::invalid(format!(
                "{name} must be a non-negative whole number"
            ))),
        },
        (Kind::Count { .. }, _) => Err(GuiError::invalid(format!("{name} must be a number"))),
        (Kind::Choice(options), Value::String(s)) if options.contains(s) => Ok(()),
        (Kind::Choice(options), other) => {
            let quoted: Vec<String> = options.iter().map(|o| format!("{o:?}")).collect();
            let list = match quoted.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => quoted.join(""),
            };
            Err(GuiError::invalid(format!("{name} is {other}; use {list}")))
        }
        (Kind::Other, _) => Ok(()),
    }
}

/// 2^64: floats below it convert to u64 exactly (when whole).
const U64_END: f64 = 18_446_744_073_709_551_616.0;

/// A checked count written as a whole float (`30.0`, as some clients send numbers) becomes the
/// integer the struct's field deserialises from; any other value is kept as it is.
fn whole(kind: &Kind, v: &Value) -> Value {
    match (kind, v.as_f64()) {
        (Kind::Count { .. }, Some(f))
            if v.as_u64().is_none() && (0.0..U64_END).contains(&f) && f.fract() == 0.0 =>
        {
            Value::from(f as u64)
        }
        _ => v.clone(),
    }
}

fn far_above(name: &str, v: f64) -> GuiError {
    GuiError::new(
        ErrorCode::LimitExceeded,
        format!("{name} is {v:e}; far above what is allowed"),
    )
}

/// Reads a field's schema: its type, or its choices; `Option<T>` (a null branch) is `T`.
fn kind_of(field: &Value, root: &Value) -> Kind {
    if let Some(target) = field.get("$ref").and_then(Value::as_str) {
        return resolve(target, root).map_or(Kind::Other, |s| kind_of(s, root));
    }
    if let Some(options) = field.get("enum").and_then(Value::as_array) {
        return choices(options.iter());
    }
    if let Some(c) = field.get("const") {
        return choices(std::iter::once(c));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = field.get(key).and_then(Value::as_array) {
            let kinds: Vec<Kind> = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .map(|b| kind_of(b, root))
                .collect();
            return merge(kinds);
        }
    }
    let ty = match field.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    };
    match ty {
        Some("string") => Kind::Text,
        Some("boolean") => Kind::Flag,
        Some("integer") => Kind::Count {
            max: field.get("maximum").and_then(Value::as_u64).unwrap_or(u64::MAX),
        },
        _ => Kind::Other,
    }
}

/// One kind from the branches of an `anyOf`/`oneOf`: all choices together, or the only branch.
fn merge(kinds: Vec<Kind>) -> Kind {
    if kinds.len() == 1 {
        return kinds.into_iter().next().unwrap_or(Kind::Other);
    }
    let mut all = Vec::new();
    for k in kinds {
        match k {
            Kind::Choice(c) => all.extend(c),
            _ => return Kind::Other,
        }
    }
    Kind::Choice(all)
}

fn choices<'a>(values: impl Iterator<Item = &'a Value>) -> Kind {
    let options: Option<Vec<String>> = values.map(|v| v.as_str().map(str::to_string)).collect();
    options.map_or(Kind::Other, Kind::Choice)
}

/// A `#/$defs/Name` (or `#/definitions/Name`) reference inside the same schema.
fn resolve<'a>(target: &str, root: &'a Value) -> Option<&'a Value> {
    let path = target.strip_prefix('#')?;
    root.pointer(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Colour {
        /// Documented variants become a oneOf of consts.
        Red,
        Green,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Sample {
        id: String,
        flag: Option<bool>,
        small: Option<u32>,
        big: Option<u64>,
        colour: Option<Colour>,
        #[schemars(with = "Option<Vec<String>>")]
        raw: Option<Value>,
    }

    fn parse_json(v: Value) -> GuiResult<Sample> {
        match v {
            Value::Object(o) => parse::<Sample>(&o),
            _ => unreachable!("tests pass objects"),
        }
    }

    fn fails(v: Value) -> (ErrorCode, String) {
        let e = parse_json(v).expect_err("must be refused");
        (e.code, e.message)
    }

    #[test]
    fn good_arguments_parse_into_the_struct() {
        let s = parse_json(
            json!({"id": "w1", "flag": true, "small": 7, "big": 9_000_000_000u64,
            "colour": "green", "raw": [1, "x"]}),
        )
        .expect("valid");
        assert_eq!(s.id, "w1");
        assert_eq!(s.flag, Some(true));
        assert_eq!(s.small, Some(7));
        assert_eq!(s.big, Some(9_000_000_000));
        assert_eq!(s.colour, Some(Colour::Green));
        assert_eq!(s.raw, Some(json!([1, "x"])));
        // Nulls are as if absent.
        let s = parse_json(json!({"id": "w1", "flag": null, "colour": null})).expect("valid");
        assert_eq!((s.flag, s.colour), (None, None));
    }

    #[test]
    fn each_kind_of_bad_value_names_the_field() {
        let invalid = ErrorCode::InvalidArgument;
        assert_eq!(
            fails(json!({})),
            (invalid, "id is required (a non-empty string)".into())
        );
        assert_eq!(
            fails(json!({"id": ""})),
            (invalid, "id is required (a non-empty string)".into())
        );
        assert_eq!(fails(json!({"id": 5})), (invalid, "id must be a string".into()));
        assert_eq!(
            fails(json!({"id": "w", "flag": "yes"})),
            (invalid, "flag must be true or false".into())
        );
        assert_eq!(
            fails(json!({"id": "w", "small": "3"})),
            (invalid, "small must be a number".into())
        );
        for bad in [json!(-1), json!(1.5)] {
            assert_eq!(
                fails(json!({"id": "w", "small": bad})),
                (invalid, "small must be a non-negative whole number".into())
            );
        }
        assert_eq!(
            fails(json!({"id": "w", "small": 5_000_000_000u64})).0,
            ErrorCode::LimitExceeded
        );
        assert_eq!(fails(json!({"id": "w", "big": 1e30})).0, ErrorCode::LimitExceeded);
        let (code, msg) = fails(json!({"id": "w", "colour": "blue"}));
        assert_eq!(code, invalid);
        assert!(msg.starts_with("colour is \"blue\"; use \""), "{msg}");
        assert!(
            msg.contains("\"red\"") && msg.contains("\"green\"") && msg.contains(" or "),
            "{msg}"
        );
        let (code, msg) = fails(json!({"id": "w", "colur": "red"}));
        assert_eq!(code, invalid);
        assert!(
            msg.starts_with("unknown argument \"colur\"; arguments are "),
            "{msg}"
        );
        assert!(msg.contains("colour") && msg.contains("raw"), "{msg}");
    }
}
