//! The walk's nodes ([`crate::walk::Walked`]) as lsm's `RawElement`s: roles and states through
//! [`crate::roles`], bounds relative to the window in logical points through
//! [`crate::geometry`], a handle per element from the caller (the registry of live elements), and
//! what was left unread said per element. Platform-free so the Linux tests run it.

use crate::geometry::{element_to_window, PointRect};
use crate::roles::{role_of, states_of, value_is_toggle, AxState, Toggle};
use crate::walk::{AxAttributes, Walked};
use lsm_core::RawElement;

/// The states the roles mapping reads, from what the walk read.
pub fn ax_state(a: &AxAttributes) -> AxState {
    let toggle = if value_is_toggle(&a.role) {
        a.value
            .as_deref()
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(Toggle::from_value)
    } else {
        None
    };
    AxState {
        enabled: a.enabled,
        focused: a.focused,
        selected: a.selected,
        expanded: a.expanded,
        toggle,
        steps: a.actions.iter().any(|x| x == "AXIncrement" || x == "AXDecrement"),
        ..AxState::default()
    }
}

/// The elements of a walk of the window whose global frame is `window`; `handle` gives each
/// live element its handle (its `native`), `key` its identity.
pub fn raw_elements<N>(
    walked: &Walked<N>,
    window: &PointRect,
    mut handle: impl FnMut(&N) -> String,
    mut key: impl FnMut(&N) -> String,
) -> Vec<RawElement> {
    let mut out: Vec<RawElement> = Vec::with_capacity(walked.nodes.len());
    for n in &walked.nodes {
        let a = &n.attrs;
        let parent_role = n
            .parent
            .and_then(|p| walked.nodes.get(p))
            .map(|p| p.attrs.role.as_str());
        let role = role_of(&a.role, a.subrole.as_deref(), parent_role);
        let bounds = match (a.position, a.size) {
            (Some((x, y)), Some((w, h))) => Some(element_to_window(&PointRect::new(x, y, w, h), window)),
            _ => None,
        };
        let name = a.title.clone().filter(|t| !t.is_empty()).unwrap_or_default();
        let description = a
            .description
            .clone()
            .filter(|d| !d.is_empty())
            .or_else(|| a.help.clone())
            .unwrap_or_default();
        out.push(RawElement {
            native: handle(&n.node),
            key: key(&n.node),
            parent: n.parent,
            depth: n.depth,
            role: role.to_string(),
            // An element without a title is often named by its description (an icon button).
            name: if name.is_empty() {
                description.clone()
            } else {
                name
            },
            description,
            value: a.value.clone(),
            states: states_of(&a.role, role, &ax_state(a)),
            actions: a
                .actions
                .iter()
                .map(|x| x.trim_start_matches("AX").to_lowercase())
                .collect(),
            bounds,
            summary: (n.unread_children > 0).then(|| format!("{} children not read", n.unread_children)),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::WalkNode;
    use lsm_core::Rect;

    fn node(id: u32, parent: Option<usize>, attrs: AxAttributes) -> WalkNode<u32> {
        WalkNode {
            node: id,
            attrs,
            parent,
            depth: parent.map_or(0, |_| 1),
            unread_children: 0,
        }
    }

    #[test]
    fn a_check_box_in_a_window_becomes_an_element() {
        let window = AxAttributes {
            role: "AXWindow".into(),
            subrole: Some("AXStandardWindow".into()),
            title: Some("Prefs".into()),
            position: Some((100.0, 50.0)),
            size: Some((400.0, 300.0)),
            ..AxAttributes::default()
        };
        let check = AxAttributes {
            role: "AXCheckBox".into(),
            title: Some("Wrap lines".into()),
            value: Some("1".into()),
            enabled: Some(true),
            position: Some((120.5, 80.0)),
            size: Some((90.0, 18.0)),
            actions: vec!["AXPress".into()],
            ..AxAttributes::default()
        };
        let mut second = node(2, Some(0), check);
        second.unread_children = 3;
        let walked = Walked {
            nodes: vec![node(1, None, window), second],
            truncated_reason: None,
            not_responding: false,
        };
        let frame = PointRect::new(100.0, 50.0, 400.0, 300.0);
        let els = raw_elements(&walked, &frame, |n| format!("ax{n}"), |n| format!("k{n}"));
        assert_eq!(els.len(), 2);
        let c = &els[1];
        assert_eq!(
            (c.native.as_str(), c.key.as_str(), c.parent),
            ("ax2", "k2", Some(0))
        );
        assert_eq!(c.role, "check_box");
        assert_eq!(c.name, "Wrap lines");
        assert!(c.states.iter().any(|s| s == "checked"), "{:?}", c.states);
        assert_eq!(c.bounds, Some(Rect::new(20, 30, 91, 18)));
        assert_eq!(c.actions, vec!["press"]);
        assert_eq!(c.summary.as_deref(), Some("3 children not read"));
        assert_eq!(els[0].bounds, Some(Rect::new(0, 0, 400, 300)));
    }

    #[test]
    fn an_icon_button_is_named_by_its_description() {
        let b = AxAttributes {
            role: "AXButton".into(),
            description: Some("Share".into()),
            ..AxAttributes::default()
        };
        let walked = Walked {
            nodes: vec![node(1, None, b)],
            truncated_reason: None,
            not_responding: false,
        };
        let els = raw_elements(
            &walked,
            &PointRect::new(0.0, 0.0, 10.0, 10.0),
            |_| String::new(),
            |_| String::new(),
        );
        assert_eq!(
            (els[0].role.as_str(), els[0].name.as_str()),
            ("push_button", "Share")
        );
        assert_eq!(els[0].bounds, None);
    }
}
