//! A window's Accessibility tree as the walk reads it ([`crate::walk::AxTree`]): each element's
//! attributes in one message, its value in a second one only where its role may show a value
//! and is not a password field (whose value is never read: only its length, as "•"), its
//! actions and child count, and its children in slices.

use super::element::{AxElement, AxValue};
use crate::roles::{masked, skips_children, value_readable};
use crate::walk::{AxAttributes, AxTree, Children, TreeError, BULK_ATTRIBUTES};

/// Actions every element offers that say nothing about it (they must not keep a bare group
/// from folding away).
const QUIET_ACTIONS: &[&str] = &["AXScrollToVisible", "AXShowDefaultUI", "AXShowAlternateUI"];

/// The tree under one window element.
pub struct WindowTree {
    pub window: AxElement,
}

impl AxTree for WindowTree {
    type Node = AxElement;

    fn root(&mut self) -> Result<AxElement, TreeError> {
        Ok(self.window.clone())
    }

    fn attributes(&mut self, node: &AxElement) -> Result<AxAttributes, TreeError> {
        let values = node.attributes(BULK_ATTRIBUTES)?;
        let get = |name: &str| {
            BULK_ATTRIBUTES
                .iter()
                .position(|n| *n == name)
                .and_then(|i| values.get(i))
        };
        let text = |name: &str| get(name).and_then(|v| v.text()).map(str::to_string);
        let flag = |name: &str| get(name).and_then(AxValue::flag);
        let role = text("AXRole").unwrap_or_default();
        let subrole = text("AXSubrole");
        let value = if value_readable(&role, subrole.as_deref()) {
            node.attribute("AXValue")?.display()
        } else {
            let n = node.attribute("AXNumberOfCharacters")?;
            Some(masked(n.number().unwrap_or(0.0) as i64))
        };
        let actions = node
            .actions()?
            .into_iter()
            .filter(|a| !QUIET_ACTIONS.contains(&a.as_str()))
            .collect();
        let child_count = if skips_children(&role) {
            Some(0)
        } else {
            Some(node.count("AXChildren")?)
        };
        let pair = |name: &str| match get(name) {
            Some(AxValue::Point(x, y)) | Some(AxValue::Size(x, y)) => Some((*x, *y)),
            _ => None,
        };
        Ok(AxAttributes {
            role_description: text("AXRoleDescription"),
            title: text("AXTitle"),
            description: text("AXDescription"),
            help: text("AXHelp"),
            value,
            identifier: text("AXIdentifier"),
            position: pair("AXPosition"),
            size: pair("AXSize"),
            enabled: flag("AXEnabled"),
            focused: flag("AXFocused"),
            selected: flag("AXSelected"),
            expanded: flag("AXExpanded"),
            actions,
            child_count,
            role,
            subrole,
        })
    }

    fn children(&mut self, node: &AxElement, max: usize) -> Result<Children<AxElement>, TreeError> {
        let total = node.count("AXChildren")?;
        let nodes = node.elements("AXChildren", max.min(total))?;
        Ok(Children { nodes, total })
    }
}
