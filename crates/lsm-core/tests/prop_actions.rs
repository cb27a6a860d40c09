//! Fuzz targets (property tests) for what `gui_action` and the web UI's input take from outside:
//! the actions list (`parse_actions`), key combos (`KeyCombo::parse`), mouse buttons and image
//! formats, under the default limits and under any configured limits. Run longer with
//! `LSM_FUZZ_SECS=600 cargo test --release -p lsm-core --test prop_actions -- --nocapture`.

#[path = "fuzz/mod.rs"]
mod fuzz;

use lsm_core::action::{parse_actions, ActionSpec, Where, ACTION_TYPES};
use lsm_core::input::NAMED_KEYS;
use lsm_core::{ErrorCode, GuiError, ImageFormat, KeyCombo, Limits, Modifier, MouseButton, Point};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// The field names an action may carry: the parser's own list.
use lsm_core::action::FIELDS;

/// The codes a bad actions list may be answered with.
const ACTION_CODES: &[ErrorCode] = &[
    ErrorCode::InvalidArgument,
    ErrorCode::UnsupportedAction,
    ErrorCode::LimitExceeded,
    ErrorCode::OutOfBounds,
];

fn clear(e: &GuiError, codes: &[ErrorCode]) -> Result<(), String> {
    if !codes.contains(&e.code) {
        return Err(format!("unexpected code {}: {}", e.code, e.message));
    }
    if e.message.trim().is_empty() {
        return Err(format!("{} without a message", e.code));
    }
    Ok(())
}

/// What every accepted actions list satisfies, whatever it was parsed from.
fn accepted_within_limits(specs: &[ActionSpec], limits: &Limits) -> Result<(), String> {
    if specs.is_empty() || specs.len() > limits.actions_per_call {
        return Err(format!("{} actions accepted", specs.len()));
    }
    let mut wait = Duration::ZERO;
    for s in specs {
        for p in s.points() {
            if p.x.abs() > 1_000_000 || p.y.abs() > 1_000_000 {
                return Err(format!("point {p:?} accepted"));
            }
        }
        match s {
            ActionSpec::Type { text, .. } if text.len() > limits.type_text_bytes => {
                return Err("oversize text accepted".into())
            }
            ActionSpec::SetValue { value, .. } if value.len() > limits.set_value_bytes => {
                return Err("oversize value accepted".into())
            }
            ActionSpec::Scroll { delta_x, delta_y, .. }
                if (*delta_x == 0 && *delta_y == 0)
                    || delta_x.abs() > limits.scroll_clicks
                    || delta_y.abs() > limits.scroll_clicks =>
            {
                return Err(format!("scroll {delta_x},{delta_y} accepted"));
            }
            ActionSpec::Key { combo } => combo_is_canonical(combo)?,
            ActionSpec::Wait { duration } => wait += *duration,
            _ => {}
        }
    }
    if wait > limits.wait_per_call {
        return Err(format!("waits of {wait:?} accepted"));
    }
    Ok(())
}

fn combo_is_canonical(c: &KeyCombo) -> Result<(), String> {
    let mut sorted = c.modifiers.clone();
    sorted.sort();
    sorted.dedup();
    if sorted != c.modifiers {
        return Err(format!("modifiers not sorted and unique: {:?}", c.modifiers));
    }
    match &c.key {
        None if c.modifiers.is_empty() => Err("a combo of nothing".into()),
        None => Ok(()),
        Some(k) if k.chars().count() == 1 && !k.chars().any(|c| c.is_control() || c.is_whitespace()) => {
            Ok(())
        }
        Some(k) if NAMED_KEYS.iter().any(|(n, _)| n == k) => Ok(()),
        Some(k) => Err(format!("key {k:?} is neither a character nor a named key")),
    }
}

fn check_actions(actions: &Value, limits: &Limits) -> Result<(), String> {
    match parse_actions(actions, limits) {
        Ok(specs) => accepted_within_limits(&specs, limits),
        Err(e) => clear(&e, ACTION_CODES),
    }
}

/// A field value of the type the field wants, or of any other type.
fn field_value(field: &'static str) -> BoxedStrategy<Value> {
    let typed = match field {
        "type" => prop_oneof![
            4 => prop::sample::select(ACTION_TYPES.to_vec()).prop_map(Value::from),
            1 => fuzz::nasty_string().prop_map(Value::from),
        ]
        .boxed(),
        "x" | "y" | "to_x" | "to_y" | "seconds" | "delta_x" | "delta_y" => fuzz::nasty_number().boxed(),
        "keys" => key_spec().prop_map(Value::from).boxed(),
        "button" => prop_oneof![
            prop::sample::select(vec!["left", "RIGHT", "middle", "primary", "secondary", "Left "])
                .prop_map(Value::from),
            fuzz::nasty_string().prop_map(Value::from),
        ]
        .boxed(),
        "value" => prop_oneof![
            fuzz::nasty_string().prop_map(Value::from),
            fuzz::nasty_number(),
            any::<bool>().prop_map(Value::from),
        ]
        .boxed(),
        _ => fuzz::nasty_string().prop_map(Value::from).boxed(),
    };
    prop_oneof![8 => typed, 1 => fuzz::json(FIELDS), 1 => Just(Value::Null)].boxed()
}

/// An action object: a type, then a few fields (the right ones or not) with values.
fn action_object() -> impl Strategy<Value = Value> {
    let field = prop::sample::select(FIELDS.to_vec()).prop_flat_map(|f| (Just(f), field_value(f)));
    (
        field_value("type"),
        prop::collection::vec(field, 0..5),
        any::<bool>(),
    )
        .prop_map(|(ty, fields, typed)| {
            let mut m = Map::new();
            if typed {
                m.insert("type".into(), ty);
            }
            for (k, v) in fields {
                m.insert(k.to_string(), v);
            }
            Value::Object(m)
        })
}

fn actions_list() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => prop::collection::vec(action_object(), 0..6).prop_map(Value::Array),
        1 => prop::collection::vec(action_object(), 30..36).prop_map(Value::Array),
        1 => fuzz::json(FIELDS),
    ]
}

/// Any limits an operator may configure (including zeros).
fn limits() -> impl Strategy<Value = Limits> {
    (
        0usize..40,
        0u64..40_000,
        0usize..5000,
        0usize..300,
        0usize..20,
        0usize..70_000,
        0i32..200,
    )
        .prop_map(|(actions, wait_ms, text, keys, parts, value, clicks)| Limits {
            actions_per_call: actions,
            wait_per_call: Duration::from_millis(wait_ms),
            type_text_bytes: text,
            keys_bytes: keys,
            key_combo_parts: parts,
            set_value_bytes: value,
            scroll_clicks: clicks,
            ..Limits::default()
        })
}

#[test]
fn actions_structured() {
    let limits = Limits::default();
    fuzz::run("actions_structured", actions_list(), 500, |a| {
        check_actions(a, &limits)
    });
}

#[test]
fn actions_under_any_limits() {
    fuzz::run(
        "actions_under_any_limits",
        (actions_list(), limits()),
        300,
        |(a, l)| check_actions(a, l),
    );
}

#[test]
fn actions_from_raw_bytes() {
    let limits = Limits::default();
    fuzz::run(
        "actions_from_raw_bytes",
        fuzz::raw_bytes(FIELDS),
        500,
        |bytes| match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => check_actions(&v, &limits),
            Err(_) => Ok(()),
        },
    );
}

// ---------------------------------------------------------------- round trip: spec -> JSON -> spec

fn point() -> impl Strategy<Value = Point> {
    (-1_000_000i32..=1_000_000, -1_000_000i32..=1_000_000).prop_map(|(x, y)| Point::new(x, y))
}

fn element_id() -> impl Strategy<Value = String> {
    prop_oneof!["e[0-9]{1,5}", fuzz::nasty_string()]
}

fn at() -> impl Strategy<Value = Where> {
    prop_oneof![
        element_id().prop_map(Where::Element),
        point().prop_map(Where::Point)
    ]
}

fn button() -> impl Strategy<Value = MouseButton> {
    prop::sample::select(vec![MouseButton::Left, MouseButton::Middle, MouseButton::Right])
}

fn combo() -> impl Strategy<Value = KeyCombo> {
    let key = prop_oneof![
        prop::sample::select(NAMED_KEYS.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>()),
        // Whitespace is trimmed off a spec: the space bar is spelled "space".
        any::<char>()
            .prop_filter("printable", |c| !c.is_control() && !c.is_whitespace())
            .prop_map(String::from),
    ];
    (
        prop::collection::btree_set(modifier(), 0..4),
        prop::option::of(key),
    )
        .prop_filter("something to press", |(m, k)| !m.is_empty() || k.is_some())
        .prop_map(|(m, key)| KeyCombo {
            modifiers: m.into_iter().collect(),
            key,
        })
}

fn modifier() -> impl Strategy<Value = Modifier> {
    prop::sample::select(vec![
        Modifier::Ctrl,
        Modifier::Alt,
        Modifier::Shift,
        Modifier::Meta,
    ])
}

/// A valid action (a spec the parser must give back exactly).
fn spec() -> impl Strategy<Value = ActionSpec> {
    prop_oneof![
        (at(), button(), 1u32..=2).prop_map(|(at, button, count)| ActionSpec::Click { at, button, count }),
        at().prop_map(|at| ActionSpec::Move { at }),
        (prop::option::of(at()), -100i32..=100, -100i32..=100)
            .prop_filter("a non-zero scroll", |(_, x, y)| *x != 0 || *y != 0)
            .prop_map(|(at, delta_x, delta_y)| ActionSpec::Scroll { at, delta_x, delta_y }),
        (at(), point(), button()).prop_map(|(from, to, button)| ActionSpec::Drag { from, to, button }),
        (prop::option::of(element_id()), ".{0,64}")
            .prop_map(|(element, text)| ActionSpec::Type { element, text }),
        combo().prop_map(|combo| ActionSpec::Key { combo }),
        (element_id(), ".{0,64}").prop_map(|(element, value)| ActionSpec::SetValue { element, value }),
        prop::option::of(element_id()).prop_map(|element| ActionSpec::Focus { element }),
        (0u64..=30_000).prop_map(|ms| ActionSpec::Wait {
            duration: Duration::from_millis(ms)
        }),
    ]
}

fn button_name(b: MouseButton) -> &'static str {
    match b {
        MouseButton::Left => "left",
        MouseButton::Middle => "middle",
        MouseButton::Right => "right",
    }
}

fn modifier_name(m: Modifier) -> &'static str {
    match m {
        Modifier::Ctrl => "ctrl",
        Modifier::Alt => "alt",
        Modifier::Shift => "shift",
        Modifier::Meta => "super",
    }
}

/// The caller's spelling of a combo: `ctrl+shift+t`, `ctrl++` for the plus key.
fn combo_text(c: &KeyCombo) -> String {
    let mut parts: Vec<&str> = c.modifiers.iter().map(|m| modifier_name(*m)).collect();
    if let Some(k) = &c.key {
        parts.push(k);
    }
    parts.join("+")
}

/// The JSON a caller sends for `spec`.
fn encode(spec: &ActionSpec) -> Value {
    let target = |m: &mut Map<String, Value>, at: &Where| match at {
        Where::Element(e) => {
            m.insert("element_id".into(), json!(e));
        }
        Where::Point(p) => {
            m.insert("x".into(), json!(p.x));
            m.insert("y".into(), json!(p.y));
        }
    };
    let mut m = Map::new();
    m.insert("type".into(), json!(spec.type_name()));
    match spec {
        ActionSpec::Click { at, button, .. } => {
            target(&mut m, at);
            m.insert("button".into(), json!(button_name(*button)));
        }
        ActionSpec::Move { at } => target(&mut m, at),
        ActionSpec::Scroll { at, delta_x, delta_y } => {
            if let Some(at) = at {
                target(&mut m, at);
            }
            m.insert("delta_x".into(), json!(delta_x));
            m.insert("delta_y".into(), json!(delta_y));
        }
        ActionSpec::Drag { from, to, button } => {
            target(&mut m, from);
            m.insert("to_x".into(), json!(to.x));
            m.insert("to_y".into(), json!(to.y));
            m.insert("button".into(), json!(button_name(*button)));
        }
        ActionSpec::Type { element, text } => {
            if let Some(e) = element {
                m.insert("element_id".into(), json!(e));
            }
            m.insert("text".into(), json!(text));
        }
        ActionSpec::Key { combo } => {
            m.insert("keys".into(), json!(combo_text(combo)));
        }
        ActionSpec::SetValue { element, value } => {
            m.insert("element_id".into(), json!(element));
            m.insert("value".into(), json!(value));
        }
        ActionSpec::Focus { element } => {
            if let Some(e) = element {
                m.insert("element_id".into(), json!(e));
            }
        }
        ActionSpec::Wait { duration } => {
            m.insert("seconds".into(), json!(duration.as_secs_f64()));
        }
    }
    Value::Object(m)
}

#[test]
fn actions_round_trip() {
    let limits = Limits::default();
    let specs = prop::collection::vec(spec(), 1..=32).prop_filter("waits within the limit", |s| {
        s.iter()
            .map(|a| match a {
                ActionSpec::Wait { duration } => *duration,
                _ => Duration::ZERO,
            })
            .sum::<Duration>()
            <= Duration::from_secs(30)
    });
    fuzz::run("actions_round_trip", specs, 300, |specs| {
        let encoded = Value::Array(specs.iter().map(encode).collect());
        let parsed = parse_actions(&encoded, &limits).map_err(|e| format!("refused {encoded}: {e}"))?;
        // Waits go through f64 seconds: equal to the nanosecond is not promised, a microsecond is.
        for (a, b) in specs.iter().zip(&parsed) {
            let same = match (a, b) {
                (ActionSpec::Wait { duration: x }, ActionSpec::Wait { duration: y }) => {
                    x.abs_diff(*y) < Duration::from_micros(1)
                }
                _ => a == b,
            };
            if !same {
                return Err(format!("{a:?} came back as {b:?} from {encoded}"));
            }
        }
        Ok(())
    });
}

// ---------------------------------------------------------------- key combos

/// A combo spelling: modifiers and keys in their aliases, any case, spaces around `+`, junk.
fn key_spec() -> impl Strategy<Value = String> {
    let alias: Vec<&'static str> = NAMED_KEYS.iter().flat_map(|(_, a)| a.iter().copied()).collect();
    let part = prop_oneof![
        3 => prop::sample::select(vec![
            "ctrl", "Control", "ctl", "alt", "option", "opt", "shift", "super", "meta", "win", "windows",
            "cmd", "command", "logo", "CTRL", "Shift",
        ])
        .prop_map(str::to_string),
        3 => prop::sample::select(alias).prop_map(str::to_string),
        2 => any::<char>().prop_map(String::from),
        1 => fuzz::nasty_string(),
    ];
    let space = prop::sample::select(vec!["", "", "", " ", "  ", "\t"]);
    prop::collection::vec((part, space.clone(), space), 0..20).prop_map(|parts| {
        parts
            .iter()
            .map(|(p, a, b)| format!("{a}{p}{b}"))
            .collect::<Vec<_>>()
            .join("+")
    })
}

fn check_combo(spec: &str, max_parts: usize) -> Result<(), String> {
    match KeyCombo::parse(spec, max_parts) {
        Ok(c) => combo_is_canonical(&c),
        Err(e) => clear(&e, &[ErrorCode::InvalidArgument, ErrorCode::LimitExceeded]),
    }
}

#[test]
fn key_combos_structured() {
    fuzz::run(
        "key_combos_structured",
        (key_spec(), 0usize..24),
        1000,
        |(s, max)| check_combo(s, *max),
    );
}

#[test]
fn key_combos_raw() {
    let raw = prop_oneof![
        fuzz::nasty_string(),
        prop::collection::vec(any::<u8>(), 0..64).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "[+ a-zA-Z\u{0}-\u{1f}]{0,40}",
    ];
    fuzz::run("key_combos_raw", raw, 1000, |s| check_combo(s, 16));
}

#[test]
fn key_combos_round_trip() {
    fuzz::run("key_combos_round_trip", combo(), 1000, |c| {
        let text = combo_text(c);
        match KeyCombo::parse(&text, 16) {
            Ok(back) if back == *c => Ok(()),
            other => Err(format!("{text:?} parsed as {other:?}")),
        }
    });
}

#[test]
fn buttons_and_image_formats() {
    fuzz::run("buttons_and_image_formats", fuzz::nasty_string(), 500, |s| {
        if let Err(e) = MouseButton::parse(s) {
            clear(&e, &[ErrorCode::InvalidArgument])?;
        }
        if let Err(e) = ImageFormat::parse(s) {
            clear(&e, &[ErrorCode::InvalidArgument])?;
        }
        Ok(())
    });
}
