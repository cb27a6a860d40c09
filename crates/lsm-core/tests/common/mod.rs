//! What the fake backends of several test files share.

use lsm_core::*;

/// A window observed with one clickable element in it (`role` "name", enabled or editable as
/// `state` says, at `bounds`), nothing cut and no screenshot.
pub fn one_element(
    window: WindowInfo,
    key: &str,
    role: &str,
    name: &str,
    state: &str,
    bounds: Rect,
) -> Snapshot {
    Snapshot {
        window,
        scale: 1.0,
        elements: vec![RawElement {
            native: key.into(),
            key: key.into(),
            parent: None,
            depth: 0,
            role: role.into(),
            name: name.into(),
            description: String::new(),
            value: None,
            states: vec![state.into()],
            actions: vec!["click".into()],
            bounds: Some(bounds),
            summary: None,
        }],
        truncated: false,
        truncated_reason: None,
        screenshot: None,
        notes: vec![],
    }
}
