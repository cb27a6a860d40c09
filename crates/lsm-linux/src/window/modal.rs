//! Which modal dialog blocks a window, from what X11 says (`WM_TRANSIENT_FOR`,
//! `_NET_WM_STATE_MODAL`, the stacking order). Pure logic over window
//! records; the X11 reads are in `x11/connection.rs`, GNOME and KDE fill the same fields from their lists.

use super::WindowRecord;

/// A mapped, not minimized window in the modal state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModalWindow {
    pub id: u32,
    /// The window it is a dialog of; None: modal for its whole application.
    pub transient_for: Option<u32>,
    pub pid: Option<u32>,
}

/// Bound on dialog-over-dialog chains (real ones are one or two deep).
const MAX_CHAIN: usize = 8;

impl ModalWindow {
    /// The modal windows of a full window list (topmost first), as `X11::modal_windows` finds them.
    pub fn of_list(windows: &[WindowRecord]) -> Vec<ModalWindow> {
        windows
            .iter()
            .filter(|w| w.modal && !w.minimized)
            .map(|w| ModalWindow {
                id: w.id,
                transient_for: w.transient_for,
                pid: w.pid,
            })
            .collect()
    }
}

/// The modal window that directly blocks `target`: one transient for it, or one with no
/// parent of the same process stacked above it. Topmost wins.
fn direct_blocker<'a>(
    target: u32,
    pid: Option<u32>,
    stacking: &[u32],
    modals: &'a [ModalWindow],
) -> Option<&'a ModalWindow> {
    let rank = |id: u32| stacking.iter().position(|w| *w == id);
    let target_rank = rank(target);
    let mut found: Vec<&ModalWindow> = modals
        .iter()
        .filter(|m| m.id != target)
        .filter(|m| match m.transient_for {
            Some(parent) => parent == target,
            // Application-modal: blocks the windows of its process that are below it.
            None => {
                pid.is_some()
                    && m.pid == pid
                    && matches!((rank(m.id), target_rank), (Some(a), Some(b)) if a < b)
            }
        })
        .collect();
    found.sort_by_key(|m| rank(m.id).unwrap_or(usize::MAX));
    found.first().copied()
}

/// The dialog to act on instead of `target`: the direct blocker, followed up its own chain of
/// blockers (a confirmation over a file chooser over the main window names the confirmation).
/// None when nothing blocks `target`.
pub fn blocker(target: u32, pid: Option<u32>, stacking: &[u32], modals: &[ModalWindow]) -> Option<u32> {
    let mut current = direct_blocker(target, pid, stacking, modals)?;
    let mut seen = vec![target, current.id];
    for _ in 0..MAX_CHAIN {
        match direct_blocker(current.id, current.pid, stacking, modals) {
            Some(next) if !seen.contains(&next.id) => {
                seen.push(next.id);
                current = next;
            }
            _ => break,
        }
    }
    Some(current.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(id: u32, parent: Option<u32>, pid: u32) -> ModalWindow {
        ModalWindow {
            id,
            transient_for: parent,
            pid: Some(pid),
        }
    }

    #[test]
    fn a_dialog_blocks_its_parent_only() {
        let stacking = [3, 2, 1];
        let modals = [m(3, Some(1), 10)];
        assert_eq!(blocker(1, Some(10), &stacking, &modals), Some(3));
        assert_eq!(blocker(2, Some(10), &stacking, &modals), None);
        assert_eq!(blocker(3, Some(10), &stacking, &modals), None);
    }

    #[test]
    fn a_dialog_over_a_dialog_names_the_topmost() {
        let stacking = [4, 3, 1];
        let modals = [m(4, Some(3), 10), m(3, Some(1), 10)];
        assert_eq!(blocker(1, Some(10), &stacking, &modals), Some(4));
        assert_eq!(blocker(3, Some(10), &stacking, &modals), Some(4));
        assert_eq!(blocker(4, Some(10), &stacking, &modals), None);
    }

    #[test]
    fn a_parentless_modal_blocks_the_windows_of_its_process_below_it() {
        let stacking = [5, 2, 1, 9];
        let modals = [m(5, None, 10)];
        assert_eq!(blocker(1, Some(10), &stacking, &modals), Some(5));
        assert_eq!(blocker(2, Some(10), &stacking, &modals), Some(5));
        // Another process, or no pid: not blocked.
        assert_eq!(blocker(9, Some(11), &stacking, &modals), None);
        assert_eq!(blocker(9, None, &stacking, &modals), None);
    }

    #[test]
    fn two_parentless_modals_do_not_block_each_other_in_a_loop() {
        let stacking = [6, 5, 1];
        let modals = [m(6, None, 10), m(5, None, 10)];
        assert_eq!(blocker(5, Some(10), &stacking, &modals), Some(6));
        assert_eq!(blocker(6, Some(10), &stacking, &modals), None);
        assert_eq!(blocker(1, Some(10), &stacking, &modals), Some(6));
    }

    #[test]
    fn a_transient_cycle_ends() {
        let stacking = [2, 1];
        let modals = [m(2, Some(1), 10), m(1, Some(2), 10)];
        assert_eq!(blocker(1, Some(10), &stacking, &modals), Some(2));
    }
}
