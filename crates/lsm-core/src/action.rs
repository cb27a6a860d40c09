//! The `gui_action` vocabulary: parsing and validating the caller's JSON, before anything runs.

use crate::backend::Check;
use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::geometry::Point;
use crate::input::{KeyCombo, MouseButton};
use crate::limits::Limits;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::time::Duration;

/// Where a pointer action lands: an element of the observation, or a window-relative point.
#[derive(Debug, Clone, PartialEq)]
pub enum Where {
    Element(String),
    Point(Point),
}

/// One validated action, element ids not yet resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionSpec {
    Click {
        at: Where,
        button: MouseButton,
        count: u32,
    },
    Move {
        at: Where,
    },
    Scroll {
        at: Option<Where>,
        delta_x: i32,
        delta_y: i32,
    },
    Drag {
        from: Where,
        to: Point,
        button: MouseButton,
    },
    Type {
        element: Option<String>,
        text: String,
    },
    Key {
        combo: KeyCombo,
    },
    SetValue {
        element: String,
        value: String,
    },
    Focus {
        element: Option<String>,
    },
    Wait {
        duration: Duration,
    },
}

/// The action types, in the spelling callers use.
pub const ACTION_TYPES: &[&str] = &[
    "click",
    "double_click",
    "right_click",
    "move",
    "scroll",
    "drag",
    "type",
    "key",
    "set_value",
    "focus",
    "wait",
];

/// Every field name an action may carry (SPEC §2.1).
pub const FIELDS: &[&str] = &[
    "type",
    "element_id",
    "x",
    "y",
    "to_x",
    "to_y",
    "text",
    "keys",
    "seconds",
    "delta_x",
    "delta_y",
    "value",
    "button",
];

impl ActionSpec {
    /// The caller-facing type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Click {
                button: MouseButton::Right,
                count: 1,
                ..
            } => "right_click",
            Self::Click { count: 2, .. } => "double_click",
            Self::Click { .. } => "click",
            Self::Move { .. } => "move",
            Self::Scroll { .. } => "scroll",
            Self::Drag { .. } => "drag",
            Self::Type { .. } => "type",
            Self::Key { .. } => "key",
            Self::SetValue { .. } => "set_value",
            Self::Focus { .. } => "focus",
            Self::Wait { .. } => "wait",
        }
    }

    /// Window-relative points this action uses (to check bounds and geometry).
    pub fn points(&self) -> Vec<Point> {
        let mut pts = Vec::new();
        let mut add = |w: &Where| {
            if let Where::Point(p) = w {
                pts.push(*p);
            }
        };
        match self {
            Self::Click { at, .. } | Self::Move { at } => add(at),
            Self::Scroll { at: Some(at), .. } => add(at),
            Self::Drag { from, to, .. } => {
                add(from);
                pts.push(*to);
            }
            _ => {}
        }
        pts
    }

    /// True for actions on one element by its handle (a click on it, `set_value`), which the
    /// backend re-verifies and locates itself, so they need neither window geometry nor focus.
    pub fn acts_on_element_only(&self) -> bool {
        matches!(
            self,
            Self::Click {
                at: Where::Element(_),
                ..
            } | Self::SetValue { .. }
        )
    }

    /// Element ids this action refers to.
    pub fn element_ids(&self) -> Vec<&str> {
        match self {
            Self::Click {
                at: Where::Element(e),
                ..
            }
            | Self::Move {
                at: Where::Element(e),
            }
            | Self::Scroll {
                at: Some(Where::Element(e)),
                ..
            }
            | Self::Drag {
                from: Where::Element(e),
                ..
            }
            | Self::SetValue { element: e, .. }
            | Self::Type { element: Some(e), .. }
            | Self::Focus { element: Some(e) } => vec![e.as_str()],
            _ => Vec::new(),
        }
    }
}

/// Per-action result reported back to the caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionResult {
    pub index: usize,
    #[serde(rename = "type")]
    pub action_type: String,
    pub ok: bool,
    /// How it was carried out, e.g. `atspi_action:click`, `xtest`, `editable_text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// True only when the effect was read back from the application (see `evidence`).
    #[serde(default)]
    pub verified: bool,
    /// What was read back, e.g. `text is now "Grace"`, `checked false -> true`, `selected`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Why the effect could not be checked (the action was carried out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified: Option<String>,
    /// The effect once the window settled: `confirmed` (see `evidence`), `no_change` (the
    /// window is the same: the action did nothing visible) or `unverifiable` (see
    /// `unverified`). Absent when `gui_action` did not observe after the actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<crate::changes::Effect>,
}

impl ActionResult {
    /// A result of an action that ran, with what was seen of its effect.
    pub fn done(
        index: usize,
        action_type: &str,
        method: String,
        detail: Option<String>,
        check: Check,
    ) -> Self {
        let (verified, evidence, unverified) = match check {
            Check::Verified(e) => (true, Some(e), None),
            Check::Unverified(w) => (false, None, Some(w)),
        };
        ActionResult {
            index,
            action_type: action_type.into(),
            ok: true,
            method: Some(method),
            detail,
            verified,
            evidence,
            unverified,
            effect: None,
        }
    }
}

struct Fields<'a> {
    index: usize,
    kind: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    fn err(&self, msg: impl std::fmt::Display) -> GuiError {
        GuiError::invalid(format!("action {} ({}): {msg}", self.index, self.kind))
    }

    /// A present, non-null field.
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn string(&self, name: &str) -> GuiResult<Option<&'a str>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(self.err(format!("{name} must be a string, got {}", json_type(other)))),
        }
    }

    fn required_string(&self, name: &str) -> GuiResult<&'a str> {
        self.string(name)?
            .ok_or_else(|| self.err(format!("{name} is required")))
    }

    /// A coordinate: a finite number, rounded to the nearest logical pixel.
    fn coord(&self, name: &str) -> GuiResult<Option<i32>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                let f = n
                    .as_f64()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| self.err(format!("{name} is not finite")))?;
                if f.abs() > 1_000_000.0 {
                    return Err(GuiError::new(
                        ErrorCode::OutOfBounds,
                        format!(
                            "action {} ({}): {name}={f} is outside the window (window-relative \
                             coordinates run from 0 to the window's width and height)",
                            self.index, self.kind
                        ),
                    ));
                }
                Ok(Some(f.round() as i32))
            }
            Some(other) => Err(self.err(format!("{name} must be a number, got {}", json_type(other)))),
        }
    }

    fn point(&self, xn: &str, yn: &str) -> GuiResult<Option<Point>> {
        match (self.coord(xn)?, self.coord(yn)?) {
            (Some(x), Some(y)) => Ok(Some(Point::new(x, y))),
            (None, None) => Ok(None),
            _ => Err(self.err(format!("{xn} and {yn} must be given together"))),
        }
    }

    /// Exactly one of `element_id` or `x`/`y` (or neither when `optional`).
    fn target(&self, optional: bool) -> GuiResult<Option<Where>> {
        let element = self.string("element_id")?;
        let point = self.point("x", "y")?;
        match (element, point) {
            (Some(_), Some(_)) => Err(self.err("give element_id or x/y, not both")),
            (Some(e), None) => Ok(Some(Where::Element(e.to_string()))),
            (None, Some(p)) => Ok(Some(Where::Point(p))),
            (None, None) if optional => Ok(None),
            (None, None) => Err(self.err("element_id or x/y is required")),
        }
    }

    fn int(&self, name: &str, limit: i32) -> GuiResult<i32> {
        match self.get(name) {
            None => Ok(0),
            Some(Value::Number(n)) => {
                let f = n.as_f64().filter(|f| f.is_finite() && f.fract() == 0.0);
                let f = f.ok_or_else(|| self.err(format!("{name} must be a whole number")))?;
                if f.abs() > limit as f64 {
                    return Err(GuiError::new(
                        ErrorCode::LimitExceeded,
                        format!(
                            "action {} ({}): |{name}| must be at most {limit}",
                            self.index, self.kind
                        ),
                    ));
                }
                Ok(f as i32)
            }
            Some(other) => Err(self.err(format!("{name} must be a number, got {}", json_type(other)))),
        }
    }

    fn button(&self, default: MouseButton) -> GuiResult<MouseButton> {
        match self.string("button")? {
            None => Ok(default),
            Some(b) => MouseButton::parse(b).map_err(|e| self.err(e.message)),
        }
    }

    /// Rejects fields that are not part of this action type (a likely caller mistake).
    fn only(&self, allowed: &[&str]) -> GuiResult<()> {
        for (k, v) in self.map {
            if k == "type" || v.is_null() {
                continue;
            }
            if !FIELDS.contains(&k.as_str()) {
                return Err(self.err(format!("unknown field {k:?}; fields are {}", FIELDS.join(", "))));
            }
            if !allowed.contains(&k.as_str()) {
                return Err(self.err(format!(
                    "field {k:?} does not apply; it takes {}",
                    allowed.join(", ")
                )));
            }
        }
        Ok(())
    }

    fn limit_text(&self, name: &str, text: &str, max: usize) -> GuiResult<()> {
        if text.len() > max {
            return Err(GuiError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "action {} ({}): {name} is {} bytes; at most {max} are allowed",
                    self.index,
                    self.kind,
                    text.len()
                ),
            ));
        }
        Ok(())
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses and validates a whole `actions` array. Nothing runs unless all of it is valid.
pub fn parse_actions(actions: &Value, limits: &Limits) -> GuiResult<Vec<ActionSpec>> {
    let list = actions
        .as_array()
        .ok_or_else(|| GuiError::invalid("actions must be an array of action objects"))?;
    if list.is_empty() {
        return Err(GuiError::invalid("actions must contain at least one action"));
    }
    if list.len() > limits.actions_per_call {
        return Err(GuiError::new(
            ErrorCode::LimitExceeded,
            format!(
                "{} actions given; at most {} per gui_action call",
                list.len(),
                limits.actions_per_call
            ),
        ));
    }
    let specs = list
        .iter()
        .enumerate()
        .map(|(i, a)| parse_one(i, a, limits))
        .collect::<GuiResult<Vec<_>>>()?;
    let total_wait: Duration = specs
        .iter()
        .map(|s| {
            if let ActionSpec::Wait { duration } = s {
                *duration
            } else {
                Duration::ZERO
            }
        })
        .sum();
    if total_wait > limits.wait_per_call {
        return Err(GuiError::new(
            ErrorCode::LimitExceeded,
            format!(
                "waits add up to {:.1} s; at most {} s per call",
                total_wait.as_secs_f64(),
                limits.wait_per_call.as_secs()
            ),
        ));
    }
    Ok(specs)
}

fn parse_one(index: usize, action: &Value, limits: &Limits) -> GuiResult<ActionSpec> {
    let map = action
        .as_object()
        .ok_or_else(|| GuiError::invalid(format!("action {index} must be an object")))?;
    let kind = match map.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(GuiError::invalid(format!(
                "action {index}: type must be a string, got {}",
                json_type(other)
            )))
        }
        None => return Err(GuiError::invalid(format!("action {index}: type is required"))),
    };
    let f = Fields { index, kind, map };
    let spec = match kind {
        "click" | "double_click" | "right_click" => {
            f.only(&["element_id", "x", "y", "button"])?;
            let at = f
                .target(false)?
                .ok_or_else(|| f.err("element_id or x/y is required"))?;
            let (button, count) = match kind {
                "click" => (f.button(MouseButton::Left)?, 1),
                "double_click" => (f.button(MouseButton::Left)?, 2),
                _ => (f.button(MouseButton::Right)?, 1),
            };
            ActionSpec::Click { at, button, count }
        }
        "move" => {
            f.only(&["element_id", "x", "y"])?;
            ActionSpec::Move {
                at: f
                    .target(false)?
                    .ok_or_else(|| f.err("element_id or x/y is required"))?,
            }
        }
        "scroll" => {
            f.only(&["element_id", "x", "y", "delta_x", "delta_y"])?;
            let delta_x = f.int("delta_x", limits.scroll_clicks)?;
            let delta_y = f.int("delta_y", limits.scroll_clicks)?;
            if delta_x == 0 && delta_y == 0 {
                return Err(
                    f.err("delta_x or delta_y must be non-zero (wheel clicks; positive is down/right)")
                );
            }
            ActionSpec::Scroll {
                at: f.target(true)?,
                delta_x,
                delta_y,
            }
        }
        "drag" => {
            f.only(&["element_id", "x", "y", "to_x", "to_y", "button"])?;
            let from = f
                .target(false)?
                .ok_or_else(|| f.err("element_id or x/y is required"))?;
            let to = f
                .point("to_x", "to_y")?
                .ok_or_else(|| f.err("to_x and to_y are required"))?;
            ActionSpec::Drag {
                from,
                to,
                button: f.button(MouseButton::Left)?,
            }
        }
        "type" => {
            f.only(&["element_id", "text"])?;
            let text = f.required_string("text")?;
            f.limit_text("text", text, limits.type_text_bytes)?;
            ActionSpec::Type {
                element: f.string("element_id")?.map(str::to_string),
                text: text.to_string(),
            }
        }
        "key" => {
            f.only(&["keys"])?;
            let keys = f.required_string("keys")?;
            f.limit_text("keys", keys, limits.keys_bytes)?;
            let combo = KeyCombo::parse(keys, limits.key_combo_parts)
                .map_err(|e| GuiError::new(e.code, format!("action {index} (key): {}", e.message)))?;
            ActionSpec::Key { combo }
        }
        "set_value" => {
            f.only(&["element_id", "value"])?;
            let element = f.required_string("element_id")?.to_string();
            let value = match f.get("value") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(other) => {
                    return Err(f.err(format!(
                        "value must be a string or number, got {}",
                        json_type(other)
                    )))
                }
                None => return Err(f.err("value is required")),
            };
            f.limit_text("value", &value, limits.set_value_bytes)?;
            ActionSpec::SetValue { element, value }
        }
        "focus" => {
            f.only(&["element_id"])?;
            ActionSpec::Focus {
                element: f.string("element_id")?.map(str::to_string),
            }
        }
        "wait" => {
            f.only(&["seconds"])?;
            let secs = match f.get("seconds") {
                Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
                Some(other) => {
                    return Err(f.err(format!("seconds must be a number, got {}", json_type(other))))
                }
                None => return Err(f.err("seconds is required")),
            };
            if !secs.is_finite() || secs < 0.0 {
                return Err(f.err("seconds must be a non-negative number"));
            }
            if secs > limits.wait_per_call.as_secs_f64() {
                return Err(GuiError::new(
                    ErrorCode::LimitExceeded,
                    format!(
                        "action {index} (wait): at most {} s",
                        limits.wait_per_call.as_secs()
                    ),
                ));
            }
            ActionSpec::Wait {
                duration: Duration::from_secs_f64(secs),
            }
        }
        other => {
            return Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                format!(
                    "action {index}: unknown type {other:?}; supported: {}",
                    ACTION_TYPES.join(", ")
                ),
            ))
        }
    };
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> GuiResult<Vec<ActionSpec>> {
        parse_actions(&v, &Limits::default())
    }

    fn code(v: Value) -> ErrorCode {
        parse(v).expect_err("must fail").code
    }

    #[test]
    fn parses_each_action_type() {
        let all = parse(json!([
            {"type": "click", "element_id": "e1"},
            {"type": "double_click", "x": 10, "y": 20.4},
            {"type": "right_click", "x": 1, "y": 2},
            {"type": "move", "x": 3, "y": 4},
            {"type": "scroll", "delta_y": 3},
            {"type": "drag", "x": 1, "y": 1, "to_x": 50, "to_y": 60},
            {"type": "type", "text": "한글 ok"},
            {"type": "key", "keys": "ctrl+shift+t"},
            {"type": "set_value", "element_id": "e2", "value": 42},
            {"type": "focus"},
            {"type": "wait", "seconds": 0.5},
        ]))
        .expect("valid");
        let names: Vec<_> = all.iter().map(ActionSpec::type_name).collect();
        assert_eq!(names, ACTION_TYPES);
        assert_eq!(all[1].points(), vec![Point::new(10, 20)]);
        assert_eq!(
            all[8],
            ActionSpec::SetValue {
                element: "e2".into(),
                value: "42".into()
            }
        );
    }

    #[test]
    fn null_fields_count_as_absent() {
        parse(json!([{"type": "click", "element_id": "e1", "x": null, "y": null, "text": null}]))
            .expect("valid");
    }

    #[test]
    fn rejects_malformed_actions_with_stable_codes() {
        assert_eq!(code(json!({"type": "click"})), ErrorCode::InvalidArgument);
        assert_eq!(code(json!([])), ErrorCode::InvalidArgument);
        assert_eq!(code(json!([{"type": "fly"}])), ErrorCode::UnsupportedAction);
        assert_eq!(code(json!([{"x": 1}])), ErrorCode::InvalidArgument);
        assert_eq!(code(json!([{"type": 5}])), ErrorCode::InvalidArgument);
        assert_eq!(code(json!([{"type": "click"}])), ErrorCode::InvalidArgument);
        assert_eq!(
            code(json!([{"type": "click", "x": "10", "y": 5}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "click", "x": 10}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "click", "x": 1, "y": 1, "element_id": "e1"}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "click", "element_id": "e1", "text": "x"}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "click", "element_id": "e1", "bogus": 1}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "click", "x": 1e12, "y": 0}])),
            ErrorCode::OutOfBounds
        );
        assert_eq!(
            code(json!([{"type": "type", "text": "x".repeat(4097)}])),
            ErrorCode::LimitExceeded
        );
        assert_eq!(
            code(json!([{"type": "type", "text": 7}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "key", "keys": "ctrl+nope"}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(code(json!([{"type": "scroll"}])), ErrorCode::InvalidArgument);
        assert_eq!(
            code(json!([{"type": "scroll", "delta_y": 1.5}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "scroll", "delta_y": 1000}])),
            ErrorCode::LimitExceeded
        );
        assert_eq!(
            code(json!([{"type": "drag", "x": 1, "y": 1}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "set_value", "element_id": "e1"}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "wait", "seconds": -1}])),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(json!([{"type": "wait", "seconds": 31}])),
            ErrorCode::LimitExceeded
        );
        assert_eq!(
            code(json!([{"type": "wait", "seconds": 20}, {"type": "wait", "seconds": 20}])),
            ErrorCode::LimitExceeded
        );
        let many: Vec<Value> = (0..33).map(|_| json!({"type": "wait", "seconds": 0})).collect();
        assert_eq!(code(Value::Array(many)), ErrorCode::LimitExceeded);
    }

    #[test]
    fn negative_coordinates_parse_and_are_left_to_the_bounds_check() {
        let a = parse(json!([{"type": "click", "x": -5, "y": 3}])).expect("parses");
        assert_eq!(a[0].points(), vec![Point::new(-5, 3)]);
    }
}
