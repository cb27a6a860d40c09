//! Platform-free descriptions of raw input: mouse buttons and parsed key combinations.

use crate::error::{GuiError, GuiResult};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    #[default]
    Left,
    Middle,
    Right,
}

impl MouseButton {
    pub fn parse(s: &str) -> GuiResult<Self> {
        match s.to_ascii_lowercase().as_str() {
            "left" | "primary" => Ok(Self::Left),
            "middle" => Ok(Self::Middle),
            "right" | "secondary" => Ok(Self::Right),
            other => Err(GuiError::invalid(format!(
                "button must be left, middle or right, not {other:?}"
            ))),
        }
    }
}

/// A modifier key. Order of declaration is the order modifiers are pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Modifier {
    Ctrl,
    Alt,
    Shift,
    /// Super / Windows / Command.
    Meta,
}

/// A key combination such as `ctrl+shift+t`: modifiers held while `key` is pressed.
/// `key` is a normalised key name: a single character (`"t"`, `"é"`, `"+"`) or a named key
/// from [`NAMED_KEYS`] in its canonical spelling (`"Return"`, `"F4"`, `"Page_Down"`).
/// A combo of modifiers only (e.g. `"shift"`) has `key == None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyCombo {
    pub modifiers: Vec<Modifier>,
    pub key: Option<String>,
}

/// Canonical named keys and their accepted aliases (matched case-insensitively).
pub const NAMED_KEYS: &[(&str, &[&str])] = &[
    ("Return", &["enter", "return", "ret"]),
    ("Tab", &["tab"]),
    ("Escape", &["escape", "esc"]),
    ("BackSpace", &["backspace", "bksp"]),
    ("Delete", &["delete", "del"]),
    ("Insert", &["insert", "ins"]),
    ("Home", &["home"]),
    ("End", &["end"]),
    ("Page_Up", &["pageup", "page_up", "pgup", "prior"]),
    ("Page_Down", &["pagedown", "page_down", "pgdn", "next"]),
    ("Left", &["left", "arrowleft"]),
    ("Right", &["right", "arrowright"]),
    ("Up", &["up", "arrowup"]),
    ("Down", &["down", "arrowdown"]),
    ("space", &["space", "spacebar"]),
    ("Menu", &["menu", "apps", "contextmenu"]),
    ("Print", &["print", "printscreen", "prtsc"]),
    ("Pause", &["pause"]),
    ("Caps_Lock", &["capslock", "caps_lock"]),
    ("F1", &["f1"]),
    ("F2", &["f2"]),
    ("F3", &["f3"]),
    ("F4", &["f4"]),
    ("F5", &["f5"]),
    ("F6", &["f6"]),
    ("F7", &["f7"]),
    ("F8", &["f8"]),
    ("F9", &["f9"]),
    ("F10", &["f10"]),
    ("F11", &["f11"]),
    ("F12", &["f12"]),
    ("plus", &["plus"]),
    ("minus", &["minus"]),
];

fn parse_modifier(s: &str) -> Option<Modifier> {
    Some(match s.to_ascii_lowercase().as_str() {
        "ctrl" | "control" | "ctl" => Modifier::Ctrl,
        "alt" | "option" | "opt" => Modifier::Alt,
        "shift" => Modifier::Shift,
        "super" | "meta" | "win" | "windows" | "cmd" | "command" | "logo" => Modifier::Meta,
        _ => return None,
    })
}

fn parse_key_name(s: &str) -> GuiResult<String> {
    let mut chars = s.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_control() {
            return Err(GuiError::invalid(format!(
                "key {s:?} is a control character; use its name"
            )));
        }
        return Ok(c.to_string());
    }
    let lower = s.to_ascii_lowercase();
    for (canonical, aliases) in NAMED_KEYS {
        if aliases.contains(&lower.as_str()) {
            return Ok((*canonical).to_string());
        }
    }
    Err(GuiError::invalid(format!(
        "unknown key {s:?}: use a single character or one of {}",
        NAMED_KEYS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    )))
}

impl KeyCombo {
    /// Parses `ctrl+shift+t`, `alt+F4`, `Return`, `ctrl++` (the plus key).
    pub fn parse(spec: &str, max_parts: usize) -> GuiResult<Self> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(GuiError::invalid("keys must not be empty"));
        }
        // Split on '+', but a trailing "++" means the last part is the '+' key itself.
        let mut parts: Vec<&str> = Vec::new();
        let (body, plus_key) = match spec.strip_suffix("++") {
            Some(rest) => (rest, true),
            None if spec == "+" => ("", true),
            None => (spec, false),
        };
        if !body.is_empty() {
            parts.extend(body.split('+').map(str::trim));
        }
        if plus_key {
            parts.push("+");
        }
        if parts.len() > max_parts {
            return Err(GuiError::new(
                crate::ErrorCode::LimitExceeded,
                format!(
                    "key combo has {} parts; at most {max_parts} are allowed",
                    parts.len()
                ),
            ));
        }
        let mut modifiers = Vec::new();
        let mut key = None;
        let last = parts.len() - 1;
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() {
                return Err(GuiError::invalid(format!("empty part in key combo {spec:?}")));
            }
            match parse_modifier(part) {
                // A modifier anywhere, even last ("ctrl+shift" presses and releases both).
                Some(m) => {
                    if !modifiers.contains(&m) {
                        modifiers.push(m);
                    }
                }
                None if i == last => key = Some(parse_key_name(part)?),
                None => {
                    return Err(GuiError::invalid(format!(
                        "{part:?} in {spec:?} is not a modifier (ctrl, alt, shift, super); only the last part may be a key"
                    )))
                }
            }
        }
        modifiers.sort();
        Ok(Self { modifiers, key })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_combos() {
        let c = KeyCombo::parse("ctrl+shift+t", 16).expect("valid");
        assert_eq!(c.modifiers, vec![Modifier::Ctrl, Modifier::Shift]);
        assert_eq!(c.key.as_deref(), Some("t"));
        let c = KeyCombo::parse("alt+F4", 16).expect("valid");
        assert_eq!(c.key.as_deref(), Some("F4"));
        assert_eq!(
            KeyCombo::parse("enter", 16).expect("valid").key.as_deref(),
            Some("Return")
        );
        assert_eq!(
            KeyCombo::parse("ctrl++", 16).expect("valid").key.as_deref(),
            Some("+")
        );
        let only = KeyCombo::parse("shift", 16).expect("valid");
        assert_eq!((only.modifiers, only.key), (vec![Modifier::Shift], None));
        assert_eq!(
            KeyCombo::parse("한", 16).expect("valid").key.as_deref(),
            Some("한")
        );
    }

    #[test]
    fn rejects_bad_combos() {
        assert!(KeyCombo::parse("", 16).is_err());
        assert!(KeyCombo::parse("ctrl+bogus", 16).is_err());
        assert!(KeyCombo::parse("a+b", 16).is_err());
        assert!(KeyCombo::parse("ctrl++shift", 16).is_err());
        let e = KeyCombo::parse(&vec!["ctrl"; 17].join("+"), 16).expect_err("too long");
        assert_eq!(e.code, crate::ErrorCode::LimitExceeded);
    }
}
