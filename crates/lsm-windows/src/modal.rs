//! Modal dialogs and where raw input lands, decided from what Win32 says of the top-level
//! windows (gathered by `win32::list`), so the rules run in the Linux unit tests.
//!
//! A modal dialog on Windows is not marked as such: `DialogBox`, `MessageBox` with an owner and
//! the common dialogs disable their owner (`EnableWindow(owner, FALSE)`) and show an enabled
//! popup owned by it. So a disabled window with a visible, enabled window it owns is blocked by
//! that window, and that window is modal. A dialog that opened a dialog of its own is disabled
//! in turn: the owner is then blocked by the innermost one, the one that takes input.
//!
//! `SendInput` goes wherever the pointer or the keyboard focus is, whatever lsm meant: before
//! raw input the window under the point ([`at_point`]) or in the foreground
//! ([`keyboard_target`]) must be the target, else nothing is sent and the answer says which
//! window is in the way.

/// What Win32 says of one top-level window, for the modal rule. `id` is the window handle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopLevel {
    pub id: usize,
    /// `GetWindow(GW_OWNER)`.
    pub owner: Option<usize>,
    pub visible: bool,
    /// `IsWindowEnabled`.
    pub enabled: bool,
}

/// How deep dialogs opened from dialogs are followed (and a guard against owner cycles).
const MAX_NESTING: usize = 8;

/// The modal dialog that blocks `window` (the one to act on), given every top-level window in
/// Z order, topmost first; `None` when `window` takes input or nothing it owns explains why not.
pub fn blocker(window: usize, windows: &[TopLevel]) -> Option<usize> {
    blocker_at(window, windows, 0)
}

fn blocker_at(window: usize, windows: &[TopLevel], depth: usize) -> Option<usize> {
    if depth > MAX_NESTING {
        return None;
    }
    let me = windows.iter().find(|w| w.id == window)?;
    if me.enabled {
        return None;
    }
    let owned = || {
        windows
            .iter()
            .filter(move |w| w.visible && w.owner == Some(window) && w.id != window)
    };
    // The topmost enabled one takes the input; else one that is itself blocked by a dialog.
    owned()
        .find(|w| w.enabled)
        .map(|w| w.id)
        .or_else(|| owned().find_map(|w| blocker_at(w.id, windows, depth + 1)))
}

/// Whether `window` is a modal dialog: visible, owned by a window it disabled, and taking
/// input itself (or blocked by a dialog of its own).
pub fn is_modal(window: usize, windows: &[TopLevel]) -> bool {
    let Some(me) = windows.iter().find(|w| w.id == window) else {
        return false;
    };
    let Some(owner) = me.owner.and_then(|o| windows.iter().find(|w| w.id == o)) else {
        return false;
    };
    me.visible && !owner.enabled && (me.enabled || blocker(window, windows).is_some())
}

/// The top-level window that would receive raw input at a point (`WindowFromPoint`, then
/// `GetAncestor(GA_ROOT)`), and what is known of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AtPoint {
    /// `None`: no window there (the desktop).
    pub root: Option<usize>,
    /// The owners of `root`, nearest first (`GetWindow(GW_OWNER)` repeated).
    pub owners: Vec<usize>,
    /// `root` belongs to the target's process.
    pub same_process: bool,
    /// `root` has a title bar (`WS_CAPTION`): a window of its own, not a menu, drop-down list
    /// or tooltip.
    pub captioned: bool,
    /// `root` is a modal dialog ([`is_modal`]).
    pub modal: bool,
}

/// Who gets raw input aimed at the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receiver {
    /// The target, or a popup of its own (a menu, a drop-down list) that is part of it.
    Target,
    /// A modal dialog of the target: it blocks the target.
    Blocked(usize),
    /// Another window.
    Other(usize),
    /// No window at all.
    Nothing,
}

/// Who gets input at a point, from what is there.
pub fn at_point(target: usize, at: &AtPoint) -> Receiver {
    let Some(root) = at.root else {
        return Receiver::Nothing;
    };
    if root == target {
        return Receiver::Target;
    }
    let owned_by_target = at.owners.contains(&target);
    if owned_by_target && at.modal {
        return Receiver::Blocked(root);
    }
    // Menus, drop-down lists and tooltips the application shows over its window are part of
    // what the model sees there; a window with a title bar is a window of its own.
    if (owned_by_target || at.same_process) && !at.captioned {
        return Receiver::Target;
    }
    Receiver::Other(root)
}

/// Who gets keys, from the foreground window's root (`GetForegroundWindow` →
/// `GetAncestor(GA_ROOT)`), described as [`AtPoint`] describes the window under a point.
pub fn keyboard_target(target: usize, foreground: &AtPoint) -> Receiver {
    at_point(target, foreground)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(id: usize, owner: Option<usize>, enabled: bool) -> TopLevel {
        TopLevel {
            id,
            owner,
            visible: true,
            enabled,
        }
    }

    #[test]
    fn a_disabled_owner_is_blocked_by_its_enabled_popup() {
        // Z order: the dialog (2) above its owner (1), another app (3) below.
        let ws = [win(2, Some(1), true), win(1, None, false), win(3, None, true)];
        assert_eq!(blocker(1, &ws), Some(2));
        assert!(is_modal(2, &ws));
        assert_eq!(blocker(2, &ws), None);
        assert_eq!(blocker(3, &ws), None);
        assert!(!is_modal(1, &ws) && !is_modal(3, &ws));
    }

    #[test]
    fn an_enabled_owner_is_not_blocked_and_its_popup_not_modal() {
        // A modeless dialog (Find) or a tool palette.
        let ws = [win(2, Some(1), true), win(1, None, true)];
        assert_eq!(blocker(1, &ws), None);
        assert!(!is_modal(2, &ws));
    }

    #[test]
    fn hidden_popups_and_other_windows_popups_do_not_count() {
        let mut hidden = win(2, Some(1), true);
        hidden.visible = false;
        let ws = [
            hidden,
            win(4, Some(3), true),
            win(1, None, false),
            win(3, None, true),
        ];
        assert_eq!(
            blocker(1, &ws),
            None,
            "disabled for another reason: nothing to name"
        );
        assert!(!is_modal(2, &ws) && !is_modal(4, &ws));
    }

    #[test]
    fn a_dialog_from_a_dialog_names_the_innermost() {
        // 1 opened dialog 2, which opened message box 3: 1 and 2 are disabled.
        let ws = [win(3, Some(2), true), win(2, Some(1), false), win(1, None, false)];
        assert_eq!(blocker(1, &ws), Some(3));
        assert_eq!(blocker(2, &ws), Some(3));
        assert!(is_modal(2, &ws) && is_modal(3, &ws));
    }

    #[test]
    fn the_topmost_enabled_popup_is_the_one() {
        let ws = [win(5, Some(1), false), win(2, Some(1), true), win(1, None, false)];
        assert_eq!(blocker(1, &ws), Some(2));
    }

    #[test]
    fn owner_cycles_end() {
        let ws = [win(1, Some(2), false), win(2, Some(1), false)];
        assert_eq!(blocker(1, &ws), None);
        assert!(!is_modal(1, &ws));
    }

    #[test]
    fn unknown_windows_are_neither() {
        assert_eq!(blocker(9, &[]), None);
        assert!(!is_modal(9, &[]));
    }

    fn there(root: usize) -> AtPoint {
        AtPoint {
            root: Some(root),
            captioned: true,
            ..AtPoint::default()
        }
    }

    #[test]
    fn input_at_a_point_goes_to_the_target_only_when_it_is_on_top() {
        assert_eq!(at_point(1, &there(1)), Receiver::Target);
        assert_eq!(
            at_point(1, &there(7)),
            Receiver::Other(7),
            "another window covers it"
        );
        assert_eq!(at_point(1, &AtPoint::default()), Receiver::Nothing, "the desktop");
        let dialog = AtPoint {
            owners: vec![1],
            same_process: true,
            modal: true,
            ..there(2)
        };
        assert_eq!(at_point(1, &dialog), Receiver::Blocked(2));
        let modeless = AtPoint {
            modal: false,
            ..dialog.clone()
        };
        assert_eq!(
            at_point(1, &modeless),
            Receiver::Other(2),
            "its own Find dialog is a window of its own"
        );
        let menu = AtPoint {
            owners: vec![1],
            same_process: true,
            captioned: false,
            ..there(3)
        };
        assert_eq!(at_point(1, &menu), Receiver::Target, "its menu or drop-down list");
        let unowned_popup = AtPoint {
            owners: vec![],
            ..menu.clone()
        };
        assert_eq!(at_point(1, &unowned_popup), Receiver::Target);
        let other_apps_popup = AtPoint {
            same_process: false,
            ..unowned_popup
        };
        assert_eq!(at_point(1, &other_apps_popup), Receiver::Other(3));
        let nested = AtPoint {
            owners: vec![2, 1],
            modal: true,
            ..there(3)
        };
        assert_eq!(at_point(1, &nested), Receiver::Blocked(3));
    }

    #[test]
    fn keys_go_to_the_target_only_when_it_is_in_front() {
        assert_eq!(keyboard_target(1, &there(1)), Receiver::Target);
        assert_eq!(keyboard_target(1, &there(4)), Receiver::Other(4));
        assert_eq!(keyboard_target(1, &AtPoint::default()), Receiver::Nothing);
    }
}
