//! Which UI Automation pattern carries out an action on an element.
//!
//! Semantic first, as on Linux: a control's own pattern is used where it has one, and only
//! when none fits does the action fall back to input at the element's centre (`None` here).
//! A click on an item of a list, tree, table or tab strip selects it rather than running its
//! expand or toggle behaviour, as the Linux backend does.

/// The UI Automation patterns an element supports (read once, cached with the walk).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Supported {
    pub invoke: bool,
    pub toggle: bool,
    pub selection_item: bool,
    pub expand_collapse: bool,
    pub value: bool,
    /// `Value.IsReadOnly` when `value` is supported.
    pub value_read_only: bool,
    pub range_value: bool,
    /// `RangeValue.IsReadOnly` when `range_value` is supported.
    pub range_read_only: bool,
    /// LegacyIAccessible with a non-empty `DefaultAction`.
    pub legacy_default_action: bool,
    pub keyboard_focusable: bool,
}

/// How an action is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Invoke,
    Toggle,
    Select,
    /// Expand when collapsed, collapse when expanded.
    ExpandOrCollapse,
    LegacyDefaultAction,
    SetText,
    SetRange,
    SetFocus,
}

impl Method {
    /// The name results report (`method`), like the Linux backend's `atspi_action:click`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Invoke => "uia_invoke",
            Method::Toggle => "uia_toggle",
            Method::Select => "uia_select",
            Method::ExpandOrCollapse => "uia_expand_collapse",
            Method::LegacyDefaultAction => "uia_legacy_default_action",
            Method::SetText => "uia_value",
            Method::SetRange => "uia_range_value",
            Method::SetFocus => "uia_set_focus",
        }
    }
}

/// Roles whose click selects the item.
const ITEM_ROLES: &[&str] = &["list_item", "tree_item", "table_row", "table_cell", "page_tab"];

/// The pattern for a plain (left, single) click on an element of `role`; `None`: a pointer
/// click at its centre.
pub fn click_method(role: &str, s: &Supported) -> Option<Method> {
    if ITEM_ROLES.contains(&role) && s.selection_item {
        return Some(Method::Select);
    }
    if s.toggle {
        return Some(Method::Toggle);
    }
    if s.invoke {
        return Some(Method::Invoke);
    }
    if s.selection_item {
        return Some(Method::Select);
    }
    if s.expand_collapse {
        return Some(Method::ExpandOrCollapse);
    }
    if s.legacy_default_action {
        return Some(Method::LegacyDefaultAction);
    }
    None
}

/// The pattern for `set_value` with `value`: text through Value, a number through RangeValue
/// (text controls that also report a range, such as a spinner's edit, take the text).
pub fn set_value_method(s: &Supported, value: &str) -> Result<Method, String> {
    if s.value && !s.value_read_only {
        return Ok(Method::SetText);
    }
    if s.range_value && !s.range_read_only {
        return match value.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Method::SetRange),
            _ => Err(format!("this control takes a number; {value:?} is not one")),
        };
    }
    if (s.value && s.value_read_only) || (s.range_value && s.range_read_only) {
        return Err("the control is read-only".into());
    }
    Err("the control has no value to set (no Value or RangeValue pattern)".into())
}

/// The pattern for `focus`.
pub fn focus_method(s: &Supported) -> Option<Method> {
    s.keyboard_focusable.then_some(Method::SetFocus)
}

/// A RangeValue is set only within its bounds: the value clamped to them, and whether it had
/// to be (the result says so).
pub fn clamp_range(v: f64, min: f64, max: f64) -> (f64, bool) {
    if min <= max && (v < min || v > max) {
        (v.clamp(min, max), true)
    } else {
        (v, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clicks_use_the_controls_own_pattern() {
        let button = Supported {
            invoke: true,
            ..Default::default()
        };
        assert_eq!(click_method("push_button", &button), Some(Method::Invoke));
        let check = Supported {
            toggle: true,
            ..Default::default()
        };
        assert_eq!(click_method("check_box", &check), Some(Method::Toggle));
        let radio = Supported {
            selection_item: true,
            ..Default::default()
        };
        assert_eq!(click_method("radio_button", &radio), Some(Method::Select));
        let combo = Supported {
            expand_collapse: true,
            value: true,
            ..Default::default()
        };
        assert_eq!(click_method("combo_box", &combo), Some(Method::ExpandOrCollapse));
        let legacy = Supported {
            legacy_default_action: true,
            ..Default::default()
        };
        assert_eq!(click_method("label", &legacy), Some(Method::LegacyDefaultAction));
        assert_eq!(
            click_method("label", &Supported::default()),
            None,
            "a pointer click"
        );
    }

    #[test]
    fn items_are_selected_not_expanded_or_toggled() {
        let tree_item = Supported {
            selection_item: true,
            expand_collapse: true,
            toggle: true,
            invoke: true,
            ..Default::default()
        };
        assert_eq!(click_method("tree_item", &tree_item), Some(Method::Select));
        assert_eq!(click_method("page_tab", &tree_item), Some(Method::Select));
        // A checkable menu item toggles; a plain one runs.
        assert_eq!(click_method("menu_item", &tree_item), Some(Method::Toggle));
        let menu_item = Supported {
            invoke: true,
            expand_collapse: true,
            ..Default::default()
        };
        assert_eq!(click_method("menu_item", &menu_item), Some(Method::Invoke));
    }

    #[test]
    fn set_value_takes_text_or_a_number() {
        let edit = Supported {
            value: true,
            ..Default::default()
        };
        assert_eq!(set_value_method(&edit, "héllo 日本語"), Ok(Method::SetText));
        let slider = Supported {
            range_value: true,
            ..Default::default()
        };
        assert_eq!(set_value_method(&slider, " 42.5 "), Ok(Method::SetRange));
        assert!(set_value_method(&slider, "loud").unwrap_err().contains("number"));
        assert!(set_value_method(&slider, "NaN").is_err());
        let spinner_edit = Supported {
            value: true,
            range_value: true,
            ..Default::default()
        };
        assert_eq!(set_value_method(&spinner_edit, "7"), Ok(Method::SetText));
        let locked = Supported {
            value: true,
            value_read_only: true,
            ..Default::default()
        };
        assert!(set_value_method(&locked, "x").unwrap_err().contains("read-only"));
        assert!(set_value_method(&Supported::default(), "x")
            .unwrap_err()
            .contains("no Value"));
        assert_eq!(clamp_range(150.0, 0.0, 100.0), (100.0, true));
        assert_eq!(clamp_range(50.0, 0.0, 100.0), (50.0, false));
    }

    #[test]
    fn focus_needs_a_focusable_element() {
        let focusable = Supported {
            keyboard_focusable: true,
            ..Default::default()
        };
        assert_eq!(focus_method(&focusable), Some(Method::SetFocus));
        assert_eq!(focus_method(&Supported::default()), None);
        assert_eq!(Method::Invoke.name(), "uia_invoke");
    }
}
