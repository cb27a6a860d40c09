//! What changed between two observations of a window: elements added, removed and changed
//! (matched by their stable ids), windows opened and closed, focus moved; and what each
//! action's effect was, from the backend's own check and those changes. Platform-free.

use crate::geometry::Rect;
use crate::model::{Element, WindowInfo};
use crate::RgbaImage;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One element whose name, value, states or bounds differ. Fields that did not change are absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ElementChange {
    pub id: String,
    pub role: String,
    /// The name now.
    pub name: String,
    /// The name before, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_was: Option<String>,
    /// The value now, when it changed (absent: unchanged; null: it has none now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_was: Option<Option<String>>,
    /// States it gained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states_on: Vec<String>,
    /// States it lost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states_off: Vec<String>,
    /// The bounds now, when they changed: `[x, y, width, height]` as in elements.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::geometry::rect_array"
    )]
    #[schemars(with = "Option<[i32; 4]>")]
    pub bounds: Option<Rect>,
}

/// A window that opened or closed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowRef {
    pub window_id: String,
    pub title: String,
    pub app: String,
    /// For a window the action opened in the same application (a dialog, a menu): a `state_id`
    /// of its own, for `gui_action` with this `window_id`, and its elements (as `gui_state`
    /// gives them, without a screenshot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<Element>,
    /// Why an opened window of the application was not observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl From<&WindowInfo> for WindowRef {
    fn from(w: &WindowInfo) -> Self {
        WindowRef {
            window_id: w.window_id.clone(),
            title: w.title.clone(),
            app: w.app.clone(),
            state_id: None,
            expires_in_ms: None,
            elements: Vec::new(),
            note: None,
        }
    }
}

/// Keyboard focus moving between elements of the window (None: no element had it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FocusMove {
    pub from: Option<String>,
    pub to: Option<String>,
}

/// The difference between the observation an action used and the settled one after it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Changes {
    /// Elements that appeared, whole (as `gui_state` gives them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<Element>,
    /// Ids of elements that are gone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<ElementChange>,
    /// Windows that appeared (a dialog, a menu).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opened: Vec<WindowRef>,
    /// Windows that went away (the acted-on window itself included).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closed: Vec<WindowRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<FocusMove>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.opened.is_empty()
            && self.closed.is_empty()
            && self.focus.is_none()
    }

    /// A short account for an action's evidence: the most telling changes first.
    pub fn evidence(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.opened.iter().map(|w| format!("window {:?} opened", w.title)));
        parts.extend(self.closed.iter().map(|w| format!("window {:?} closed", w.title)));
        for c in &self.changed {
            for s in &c.states_on {
                parts.push(format!("{} {s} on", c.id));
            }
            for s in &c.states_off {
                parts.push(format!("{} {s} off", c.id));
            }
            if let Some(was) = &c.name_was {
                parts.push(format!("{} name {was:?} -> {:?}", c.id, c.name));
            }
            if let Some(now) = &c.value {
                parts.push(format!(
                    "{} value is now {:?}",
                    c.id,
                    now.as_deref().unwrap_or("")
                ));
            }
        }
        if let Some(f) = &self.focus {
            parts.push(match &f.to {
                Some(to) => format!("focus moved to {to}"),
                None => "focus left the window's elements".into(),
            });
        }
        if !self.added.is_empty() {
            parts.push(format!("{} elements appeared", self.added.len()));
        }
        if !self.removed.is_empty() {
            parts.push(format!("{} elements went away", self.removed.len()));
        }
        let moved = self.changed.iter().filter(|c| c.bounds.is_some()).count();
        if moved > 0 {
            parts.push(format!("{moved} elements moved or resized"));
        }
        const SHOWN: usize = 6;
        let more = parts.len().saturating_sub(SHOWN);
        parts.truncate(SHOWN);
        if more > 0 {
            parts.push(format!("{more} more (see changes)"));
        }
        parts.join("; ")
    }
}

fn focused(elements: &[Element]) -> Option<String> {
    elements
        .iter()
        .rev()
        .find(|e| e.states.iter().any(|s| s == "focused"))
        .map(|e| e.id.clone())
}

/// The element changes from `before` to `after` (ids are stable, see [`crate::ids`]). When
/// `before` was filtered (a query), elements it did not contain are not reported as added.
pub fn element_changes(before: &[Element], after: &[Element], before_complete: bool) -> Changes {
    let old: HashMap<&str, &Element> = before.iter().map(|e| (e.id.as_str(), e)).collect();
    let new: HashMap<&str, &Element> = after.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut out = Changes::default();
    for e in after {
        let Some(o) = old.get(e.id.as_str()) else {
            if before_complete {
                out.added.push(e.clone());
            }
            continue;
        };
        let on: Vec<String> = e
            .states
            .iter()
            .filter(|s| *s != "focused" && !o.states.contains(s))
            .cloned()
            .collect();
        let off: Vec<String> = o
            .states
            .iter()
            .filter(|s| *s != "focused" && !e.states.contains(s))
            .cloned()
            .collect();
        let c = ElementChange {
            id: e.id.clone(),
            role: e.role.clone(),
            name: e.name.clone(),
            name_was: (o.name != e.name).then(|| o.name.clone()),
            value: (o.value != e.value).then(|| e.value.clone()),
            value_was: (o.value != e.value).then(|| o.value.clone()),
            states_on: on,
            states_off: off,
            bounds: (o.bounds != e.bounds).then_some(e.bounds).flatten(),
        };
        let same = c.name_was.is_none()
            && c.value.is_none()
            && c.states_on.is_empty()
            && c.states_off.is_empty()
            && c.bounds.is_none()
            && o.bounds == e.bounds;
        if !same {
            out.changed.push(c);
        }
    }
    out.removed = before
        .iter()
        .filter(|e| !new.contains_key(e.id.as_str()))
        .map(|e| e.id.clone())
        .collect();
    let (from, to) = (focused(before), focused(after));
    if from != to {
        out.focus = Some(FocusMove { from, to });
    }
    out
}

/// Windows opened and closed between two window lists.
pub fn window_changes(before: &[WindowInfo], after: &[WindowInfo]) -> (Vec<WindowRef>, Vec<WindowRef>) {
    let had = |list: &[WindowInfo], id: &str| list.iter().any(|w| w.window_id == id);
    let opened = after
        .iter()
        .filter(|w| !had(before, &w.window_id))
        .map(WindowRef::from)
        .collect();
    let closed = before
        .iter()
        .filter(|w| !had(after, &w.window_id))
        .map(WindowRef::from)
        .collect();
    (opened, closed)
}

/// The bounding box (image pixels) of the pixels that differ between two captures of a window;
/// None when they are the same. Different sizes differ everywhere.
pub fn pixels_changed(before: &RgbaImage, after: &RgbaImage) -> Option<Rect> {
    pixels_changed_outside(before, after, &[])
}

/// [`pixels_changed`], leaving out the boxes `ignore` (image pixels): where pixels change on
/// their own (a caret blinks).
pub fn pixels_changed_outside(before: &RgbaImage, after: &RgbaImage, ignore: &[Rect]) -> Option<Rect> {
    if (before.width, before.height) != (after.width, after.height) {
        return Some(Rect::new(0, 0, after.width as i32, after.height as i32));
    }
    let w = before.width as usize;
    let ignored = |x: usize, y: usize| {
        ignore
            .iter()
            .any(|r| r.contains(crate::geometry::Point::new(x as i32, y as i32)))
    };
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0usize, 0usize);
    for (y, (a, b)) in before
        .data
        .chunks_exact(w.max(1) * 4)
        .zip(after.data.chunks_exact(w.max(1) * 4))
        .enumerate()
    {
        if a == b {
            continue;
        }
        let differs = |(x, (p, q)): (usize, (&[u8], &[u8]))| p != q && !ignored(x, y);
        let first = a
            .chunks_exact(4)
            .zip(b.chunks_exact(4))
            .enumerate()
            .find(|&c| differs(c));
        let last = a
            .chunks_exact(4)
            .zip(b.chunks_exact(4))
            .enumerate()
            .rev()
            .find(|&c| differs(c));
        if let (Some((f, _)), Some((l, _))) = (first, last) {
            x0 = x0.min(f);
            x1 = x1.max(l);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    (x0 != usize::MAX).then(|| Rect::new(x0 as i32, y0 as i32, (x1 - x0 + 1) as i32, (y1 - y0 + 1) as i32))
}

/// An action's effect as reported: `confirmed`, `no_change` or `unverifiable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Confirmed,
    NoChange,
    Unverifiable,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(id: &str, name: &str, states: &[&str]) -> Element {
        Element {
            id: id.into(),
            role: "check_box".into(),
            name: name.into(),
            description: String::new(),
            value: None,
            states: states.iter().map(|s| s.to_string()).collect(),
            actions: vec![],
            bounds: Some(Rect::new(0, 0, 10, 10)),
            summary: None,
            parent: None,
        }
    }

    #[test]
    fn a_toggled_check_box_and_moved_focus_are_reported() {
        let before = [el("e1", "Feature", &[]), el("e2", "Name", &["focused"])];
        let after = [
            el("e1", "Feature", &["checked", "focused"]),
            el("e2", "Name", &[]),
        ];
        let c = element_changes(&before, &after, true);
        assert_eq!(c.changed.len(), 1);
        assert_eq!(c.changed[0].states_on, ["checked"]);
        assert_eq!(
            c.focus,
            Some(FocusMove {
                from: Some("e2".into()),
                to: Some("e1".into())
            })
        );
        assert_eq!(c.evidence(), "e1 checked on; focus moved to e1");
    }

    #[test]
    fn added_removed_and_renamed_elements() {
        let before = [el("e0", "Status: 0", &[]), el("e1", "Gone", &[])];
        let after = [el("e0", "Status: 1", &[]), el("e5", "New", &[])];
        let c = element_changes(&before, &after, true);
        assert_eq!(c.removed, ["e1"]);
        assert_eq!(c.added.len(), 1);
        assert_eq!(c.changed[0].name_was.as_deref(), Some("Status: 0"));
        // A filtered observation cannot tell what is new.
        assert!(element_changes(&before, &after, false).added.is_empty());
    }

    #[test]
    fn the_same_window_has_no_changes() {
        let same = [el("e0", "x", &[])];
        assert!(element_changes(&same, &same, true).is_empty());
    }

    #[test]
    fn windows_opened_and_closed() {
        let w = |id: &str| WindowInfo::new(id, format!("T{id}"), "a", Rect::new(0, 0, 1, 1));
        let (o, c) = window_changes(&[w("1"), w("2")], &[w("2"), w("3")]);
        assert_eq!((o[0].window_id.as_str(), c[0].window_id.as_str()), ("3", "1"));
    }

    #[test]
    fn the_changed_pixels_are_boxed() {
        let a = RgbaImage {
            width: 4,
            height: 3,
            data: vec![0; 48],
        };
        let mut b = a.clone();
        assert_eq!(pixels_changed(&a, &b), None);
        b.data[(4 + 1) * 4] = 9; // (1,1)
        b.data[(2 * 4 + 2) * 4 + 1] = 9; // (2,2)
        assert_eq!(pixels_changed(&a, &b), Some(Rect::new(1, 1, 2, 2)));
        // A blinking caret at (2,2) is left out.
        assert_eq!(
            pixels_changed_outside(&a, &b, &[Rect::new(2, 2, 1, 1)]),
            Some(Rect::new(1, 1, 1, 1))
        );
        assert_eq!(pixels_changed_outside(&a, &b, &[Rect::new(0, 0, 4, 3)]), None);
    }
}
