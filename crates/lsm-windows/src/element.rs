//! One UI Automation element, as read from a cache request, turned into lsm's element: role,
//! states, the actions its patterns offer, bounds in window-relative logical pixels, and the
//! runtime id that identifies the live control (its handle for later actions and the key that
//! keeps its id stable across observations).

use crate::dpi;
use crate::patterns::Supported;
use crate::roles::{refine_role, role_of, states_of, Expansion, Toggle, UiaState};
use lsm_core::geometry::Rect;
use lsm_core::model::{is_secret, RawElement};

/// The properties lsm reads of each element, all fetched in one cache request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UiaProps {
    pub runtime_id: Vec<i32>,
    pub control_type: i32,
    pub name: String,
    pub help_text: String,
    /// Physical screen pixels; `None` when the element has no on-screen rectangle.
    pub bounds: Option<Rect>,
    pub enabled: bool,
    pub offscreen: bool,
    pub has_keyboard_focus: bool,
    pub keyboard_focusable: bool,
    pub is_password: bool,
    pub modal: bool,
    pub toggle: Option<Toggle>,
    pub expansion: Option<Expansion>,
    pub selected: Option<bool>,
    /// The Value pattern's text (never kept for a password field).
    pub value: Option<String>,
    pub range: Option<RangeProps>,
    pub patterns: Supported,
    /// LegacyIAccessible's default action name ("Press", "Open"…), when it has one.
    pub default_action: Option<String>,
}

/// The RangeValue pattern's numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangeProps {
    pub value: f64,
    pub minimum: f64,
    pub maximum: f64,
}

/// A runtime id written as lsm's native handle and stable key: `uia:42.7.1234`.
pub fn runtime_id_key(runtime_id: &[i32]) -> String {
    let parts: Vec<String> = runtime_id.iter().map(i32::to_string).collect();
    format!("uia:{}", parts.join("."))
}

/// The runtime id a [`runtime_id_key`] stands for; `None` for anything else.
pub fn parse_runtime_id_key(key: &str) -> Option<Vec<i32>> {
    let rest = key.strip_prefix("uia:")?;
    if rest.is_empty() {
        return None;
    }
    rest.split('.').map(|p| p.parse().ok()).collect()
}

impl UiaProps {
    /// The role as lsm spells it (toggle buttons and password fields told apart).
    pub fn role(&self, is_top_level: bool) -> &'static str {
        if is_top_level && self.modal && self.control_type == crate::roles::WINDOW_CONTROL_TYPE {
            return "dialog";
        }
        refine_role(
            role_of(self.control_type, self.is_password, is_top_level),
            self.patterns.toggle,
        )
    }

    /// The actions a model can expect a click (or `set_value`) to carry out semantically, by
    /// pattern, in a fixed order.
    pub fn actions(&self) -> Vec<String> {
        let p = &self.patterns;
        let mut out = Vec::new();
        if p.invoke {
            out.push("invoke".to_string());
        }
        if p.toggle {
            out.push("toggle".to_string());
        }
        if p.selection_item {
            out.push("select".to_string());
        }
        if p.expand_collapse {
            out.push(match self.expansion {
                Some(Expansion::Expanded | Expansion::PartiallyExpanded) => "collapse".to_string(),
                _ => "expand".to_string(),
            });
        }
        if let Some(a) = self.default_action.as_deref().filter(|a| !a.trim().is_empty()) {
            let a = a.trim().to_lowercase();
            if !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }

    fn value_text(&self) -> Option<String> {
        if self.is_password {
            return None;
        }
        if let Some(v) = self.value.as_ref() {
            return Some(v.clone());
        }
        self.range.map(|r| format_number(r.value))
    }

    /// The states as AT-SPI spells them (lsm-core keeps the ones worth showing).
    pub fn states(&self, is_top_level: bool) -> Vec<String> {
        let state = UiaState {
            enabled: self.enabled,
            offscreen: self.offscreen,
            has_keyboard_focus: self.has_keyboard_focus,
            keyboard_focusable: self.keyboard_focusable,
            is_password: self.is_password,
            toggle: self.toggle,
            expansion: self.expansion,
            selected: self.selected,
            value_read_only: if self.patterns.value {
                Some(self.patterns.value_read_only)
            } else if self.patterns.range_value {
                Some(self.patterns.range_read_only)
            } else {
                None
            },
            modal: self.modal,
        };
        states_of(self.role(is_top_level), &state)
    }

    /// The centre of its on-screen rectangle, in physical screen pixels.
    pub fn centre(&self) -> Option<(i32, i32)> {
        self.bounds.map(|b| (b.x + b.width / 2, b.y + b.height / 2))
    }

    /// lsm's element. Bounds become window-relative logical pixels of a window whose physical
    /// frame is `frame` at `dpi`; a password field's value is never carried.
    pub fn to_raw(&self, parent: Option<usize>, depth: u32, frame: Rect, dpi_value: u32) -> RawElement {
        let role = self.role(parent.is_none());
        let key = runtime_id_key(&self.runtime_id);
        RawElement {
            native: key.clone(),
            key,
            parent,
            depth,
            role: role.to_string(),
            name: self.name.clone(),
            description: self.help_text.clone(),
            value: if is_secret(role) { None } else { self.value_text() },
            states: self.states(parent.is_none()),
            actions: self.actions(),
            bounds: self
                .bounds
                .filter(|b| b.width > 0 && b.height > 0)
                .map(|b| dpi::element_to_window_logical(b, frame, dpi_value)),
            summary: None,
        }
    }
}

/// Whether the control read now is the one observed: the same runtime id (the same live
/// control) and still the same kind of control. `Err`: what differs, for `ELEMENT_STALE`.
pub fn same_control(observed_native: &str, observed_role: &str, now: &UiaProps) -> Result<(), String> {
    if parse_runtime_id_key(observed_native).as_deref() != Some(now.runtime_id.as_slice()) {
        return Err("another control is in its place now".into());
    }
    // The window's own element is a frame or dialog depending on where it sits: both count.
    if observed_role != now.role(false) && observed_role != now.role(true) {
        return Err(format!(
            "it was a {observed_role} and is a {} now",
            now.role(false)
        ));
    }
    Ok(())
}

/// A number as a person writes it: `5`, not `5.0`; `0.25`.
pub fn format_number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::states::element_states;

    fn button() -> UiaProps {
        UiaProps {
            runtime_id: vec![42, 0x1234, 7],
            control_type: 50000,
            name: "Press me".into(),
            bounds: Some(Rect::new(120, 140, 140, 36)),
            enabled: true,
            keyboard_focusable: true,
            patterns: Supported {
                invoke: true,
                legacy_default_action: true,
                keyboard_focusable: true,
                ..Supported::default()
            },
            default_action: Some("Press".into()),
            ..UiaProps::default()
        }
    }

    #[test]
    fn runtime_ids_round_trip_and_nothing_else_parses() {
        let key = runtime_id_key(&[42, -5, 4660]);
        assert_eq!(key, "uia:42.-5.4660");
        assert_eq!(parse_runtime_id_key(&key), Some(vec![42, -5, 4660]));
        for bad in [
            "",
            "uia:",
            "uia:1..2",
            "uia:x",
            "/org/a11y/1",
            "uia:1.99999999999",
        ] {
            assert_eq!(parse_runtime_id_key(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_button_at_150_percent() {
        // Window frame at physical (100, 100); the button 20, 40 physical pixels inside it.
        let frame = Rect::new(100, 100, 630, 390);
        let e = button().to_raw(Some(0), 1, frame, 144);
        assert_eq!(e.role, "push_button");
        assert_eq!(e.native, "uia:42.4660.7");
        assert_eq!(e.key, e.native);
        // 20, 40 / 1.5 rounded down; the far edges 160, 76 / 1.5 rounded up.
        assert_eq!(e.bounds, Some(Rect::new(13, 26, 94, 25)));
        assert_eq!(e.actions, ["invoke", "press"]);
        assert!(element_states(&e.role, &e.states).is_empty(), "{:?}", e.states);
        assert_eq!(e.value, None);
    }

    #[test]
    fn a_password_fields_value_is_never_carried() {
        let p = UiaProps {
            control_type: 50004,
            is_password: true,
            value: Some("hunter2".into()),
            patterns: Supported {
                value: true,
                ..Supported::default()
            },
            ..button()
        };
        let e = p.to_raw(Some(0), 1, Rect::new(0, 0, 500, 500), 96);
        assert_eq!(e.role, "password_text");
        assert!(is_secret(&e.role));
        assert_eq!(e.value, None);
        assert!(e.states.contains(&"editable".to_string()), "{:?}", e.states);
    }

    #[test]
    fn values_toggles_ranges_and_expansion() {
        let edit = UiaProps {
            control_type: 50004,
            value: Some("abc".into()),
            patterns: Supported {
                value: true,
                ..Supported::default()
            },
            default_action: None,
            ..button()
        };
        let e = edit.to_raw(Some(0), 1, Rect::new(0, 0, 500, 500), 96);
        assert_eq!((e.role.as_str(), e.value.as_deref()), ("text", Some("abc")));
        assert_eq!(element_states(&e.role, &e.states), ["editable"]);

        let toggle = UiaProps {
            toggle: Some(Toggle::On),
            patterns: Supported {
                toggle: true,
                ..Supported::default()
            },
            default_action: None,
            ..button()
        };
        let e = toggle.to_raw(Some(0), 1, Rect::new(0, 0, 500, 500), 96);
        assert_eq!(e.role, "toggle_button");
        assert_eq!(element_states(&e.role, &e.states), ["pressed"]);
        assert_eq!(e.actions, ["toggle"]);

        let slider = UiaProps {
            control_type: 50015,
            range: Some(RangeProps {
                value: 5.0,
                minimum: 0.0,
                maximum: 10.0,
            }),
            patterns: Supported {
                range_value: true,
                range_read_only: true,
                ..Supported::default()
            },
            default_action: None,
            ..button()
        };
        let e = slider.to_raw(Some(0), 1, Rect::new(0, 0, 500, 500), 96);
        assert_eq!((e.role.as_str(), e.value.as_deref()), ("slider", Some("5")));
        assert_eq!(element_states(&e.role, &e.states), ["read_only"]);

        let node = UiaProps {
            control_type: 50024,
            expansion: Some(Expansion::Collapsed),
            patterns: Supported {
                expand_collapse: true,
                selection_item: true,
                ..Supported::default()
            },
            selected: Some(false),
            default_action: Some("Expand".into()),
            ..button()
        };
        let e = node.to_raw(Some(0), 1, Rect::new(0, 0, 500, 500), 96);
        assert_eq!(e.actions, ["select", "expand"]);
        assert_eq!(format_number(0.25), "0.25");
    }

    #[test]
    fn the_same_control_is_the_same_runtime_id_and_role() {
        let b = button();
        assert_eq!(same_control("uia:42.4660.7", "push_button", &b), Ok(()));
        assert!(same_control("uia:42.4660.8", "push_button", &b).is_err());
        assert!(same_control("garbage", "push_button", &b).is_err());
        let became = UiaProps {
            patterns: Supported {
                toggle: true,
                ..Supported::default()
            },
            ..button()
        };
        assert_eq!(
            same_control("uia:42.4660.7", "push_button", &became),
            Err("it was a push_button and is a toggle_button now".into())
        );
        let window = UiaProps {
            control_type: 50032,
            ..button()
        };
        assert_eq!(same_control("uia:42.4660.7", "frame", &window), Ok(()));
        assert_eq!(same_control("uia:42.4660.7", "dialog", &window), Ok(()));
    }

    #[test]
    fn the_root_is_the_frame_and_an_element_without_area_has_no_bounds() {
        let window = UiaProps {
            control_type: 50032,
            bounds: Some(Rect::new(0, 0, 0, 0)),
            ..button()
        };
        let e = window.to_raw(None, 0, Rect::new(0, 0, 500, 500), 96);
        assert_eq!(e.role, "frame");
        assert_eq!(e.bounds, None);
        assert_eq!(
            window.to_raw(Some(0), 1, Rect::new(0, 0, 9, 9), 96).role,
            "dialog"
        );
        let modal = UiaProps {
            modal: true,
            ..window
        };
        assert_eq!(modal.to_raw(None, 0, Rect::new(0, 0, 9, 9), 96).role, "dialog");
    }
}
