//! Which states an element shows, and which elements carry nothing: one vocabulary for the
//! structured elements, the text outline and the change lists.
//!
//! Backends report every state the toolkit sets (AT-SPI's names). Most are the same on every
//! shown element, or are toolkit bookkeeping; an observation lists only the rest, and says
//! `disabled`, `hidden` or `read_only` where an element is not as elements usually are.

use crate::model::Element;

/// States every usable, shown element has: left out, their absence said instead.
const USUAL_STATES: &[&str] = &["enabled", "sensitive", "showing", "visible"];

/// Toolkit bookkeeping nobody acts on: left out.
const BOOKKEEPING_STATES: &[&str] = &[
    "focusable",
    "selectable",
    "selectable_text",
    "transient",
    "opaque",
    "has_tooltip",
    "manages_descendants",
    "resizable",
    "single_line",
    "stale",
];

/// Roles whose orientation (`horizontal`/`vertical`) says how to move them; elsewhere it is left
/// out.
const ORIENTED_ROLES: &[&str] = &["slider", "scroll_bar", "split_pane", "separator", "tool_bar"];

/// States worth a model's attention in the outline; the rest of [`element_states`] is there
/// for programs.
const NOTABLE_STATES: &[&str] = &[
    "focused",
    "checked",
    "pressed",
    "selected",
    "expanded",
    "collapsed",
    "indeterminate",
    "editable",
    "read_only",
    "multi_line",
    "disabled",
    "hidden",
    // lsm's own: in the part of the window beyond the screen edge, out of a pointer's reach.
    "off_screen",
];

/// Structural roles that carry nothing when unnamed: left out of observations, their children
/// lifted to the nearest ancestor shown.
const LAYOUT_ROLES: &[&str] = &[
    "panel",
    "filler",
    "section",
    "grouping",
    "viewport",
    "layered_pane",
    "root_pane",
    "glass_pane",
];

/// Roles that are editable unless said otherwise.
pub fn editable_role(role: &str) -> bool {
    matches!(role, "text" | "password_text" | "entry" | "spin_button")
}

/// A control the toolkit reports as neither enabled nor sensitive (greyed out): input to it
/// does nothing. False when the backend reported no states at all.
pub fn is_disabled(raw: &[String]) -> bool {
    !raw.is_empty() && !raw.iter().any(|s| s == "enabled" || s == "sensitive")
}

/// The states an observation shows for an element of `role` whose backend reported `raw`
/// (in that order, then what is derived): no usual or bookkeeping state, orientation only where
/// it matters, and `disabled` (neither enabled nor sensitive), `hidden` (not visible) and
/// `read_only` (a text role that is not editable). Nothing when the backend reported nothing.
pub fn element_states(role: &str, raw: &[String]) -> Vec<String> {
    if raw.is_empty() {
        return Vec::new();
    }
    let has = |s: &str| raw.iter().any(|x| x == s);
    let mut out: Vec<String> = raw
        .iter()
        .filter(|s| {
            let s = s.as_str();
            !USUAL_STATES.contains(&s)
                && !BOOKKEEPING_STATES.contains(&s)
                && (!matches!(s, "horizontal" | "vertical") || ORIENTED_ROLES.contains(&role))
        })
        .cloned()
        .collect();
    let mut derive = |s: &str| {
        if !out.iter().any(|x| x == s) {
            out.push(s.to_string());
        }
    };
    if is_disabled(raw) {
        derive("disabled");
    }
    if !has("visible") {
        derive("hidden");
    }
    if editable_role(role) && !has("editable") {
        derive("read_only");
    }
    out
}

/// The states the outline prints: the notable ones, without `editable` where it is the rule
/// for the role, and `multi_line` only where one types.
pub fn notable_states(e: &Element) -> Vec<&str> {
    let editable = e.states.iter().any(|s| s == "editable");
    let texty = editable_role(&e.role);
    e.states
        .iter()
        .map(String::as_str)
        .filter(|s| NOTABLE_STATES.contains(s))
        .filter(|s| match *s {
            "editable" => !texty,
            "multi_line" => editable,
            _ => true,
        })
        .collect()
}

/// An unnamed layout container with nothing to act on or read: observations leave it out.
pub fn is_bare_container(e: &Element) -> bool {
    LAYOUT_ROLES.contains(&e.role.as_str())
        && e.name.trim().is_empty()
        && e.actions.is_empty()
        && e.value.as_deref().is_none_or(str::is_empty)
        && e.summary.is_none()
        && notable_states(e).is_empty()
}

/// [`is_bare_container`] for an object as a backend reads it (raw states), before it becomes an
/// element: the walks decide by it how deep an object stands.
pub fn folds_raw(
    role: &str,
    name: &str,
    actions: &[String],
    value: Option<&str>,
    raw_states: &[String],
) -> bool {
    let e = Element {
        id: String::new(),
        role: role.to_string(),
        name: name.to_string(),
        description: String::new(),
        value: value.map(str::to_string),
        states: element_states(role, raw_states),
        actions: actions.to_vec(),
        bounds: None,
        summary: None,
        parent: None,
    };
    is_bare_container(&e)
}

/// How deep the children of an object at `depth` stand: depth counts what a model sees, so the
/// children of a container that observations leave out stand where it stands.
pub fn child_depth(depth: u32, folds: bool) -> u32 {
    if folds {
        depth
    } else {
        depth + 1
    }
}

/// Whether a walk asks for the children of an object at `depth` under `max_depth`: one level
/// more than may be kept, since whether the object folds is known only once it is read.
pub fn may_read_children(depth: u32, max_depth: u32) -> bool {
    depth <= max_depth
}

/// Whether the children of an object at `depth` are kept under `max_depth`.
pub fn keeps_children(depth: u32, max_depth: u32, folds: bool) -> bool {
    child_depth(depth, folds) <= max_depth
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn usual_and_bookkeeping_states_are_left_out() {
        let raw = v(&[
            "enabled",
            "sensitive",
            "showing",
            "visible",
            "focusable",
            "checked",
            "horizontal",
        ]);
        assert_eq!(element_states("check_box", &raw), ["checked"]);
        assert_eq!(element_states("slider", &raw), ["checked", "horizontal"]);
    }

    #[test]
    fn what_is_unusual_is_said() {
        assert_eq!(
            element_states("push_button", &v(&["showing", "visible", "focusable"])),
            ["disabled"]
        );
        // GTK 3 sets only "sensitive" on an inconsistent check box: it still takes input.
        assert_eq!(
            element_states("check_box", &v(&["sensitive", "visible", "indeterminate"])),
            ["indeterminate"]
        );
        assert_eq!(element_states("label", &v(&["enabled", "sensitive"])), ["hidden"]);
        assert_eq!(
            element_states("text", &v(&["enabled", "sensitive", "visible", "showing"])),
            ["read_only"]
        );
        assert_eq!(
            element_states("text", &v(&["enabled", "visible", "editable"])),
            ["editable"]
        );
        assert!(element_states("label", &[]).is_empty());
    }

    #[test]
    fn bare_containers_are_recognised() {
        let mut e = Element {
            id: "e1".into(),
            role: "filler".into(),
            name: String::new(),
            description: String::new(),
            value: None,
            states: vec!["horizontal".into()],
            actions: vec![],
            bounds: None,
            summary: None,
            parent: None,
        };
        assert!(is_bare_container(&e));
        e.states.push("focused".into());
        assert!(!is_bare_container(&e));
        e.states.clear();
        e.name = "Options".into();
        assert!(!is_bare_container(&e));
        e.name.clear();
        e.role = "push_button".into();
        assert!(!is_bare_container(&e));
    }

    #[test]
    fn folded_containers_use_up_no_depth() {
        let usual = v(&["enabled", "sensitive", "showing", "visible"]);
        assert!(folds_raw("panel", "", &[], None, &usual));
        assert!(!folds_raw("panel", "Settings", &[], None, &usual));
        assert!(!folds_raw("push_button", "", &[], None, &usual));
        assert_eq!(child_depth(3, true), 3);
        assert_eq!(child_depth(3, false), 4);
        // Ten nested unnamed panels around a field do not use up a depth of 2.
        let mut depth = 1;
        for _ in 0..10 {
            assert!(may_read_children(depth, 2) && keeps_children(depth, 2, true));
            depth = child_depth(depth, true);
        }
        assert!(keeps_children(depth, 2, false));
        assert!(!keeps_children(2, 2, false));
        assert!(may_read_children(2, 2) && !may_read_children(3, 2));
    }
}
