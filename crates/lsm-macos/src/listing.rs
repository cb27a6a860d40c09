//! The joined windows ([`crate::join`]) as lsm's `WindowInfo`: their ids, bounds, the
//! application's name, and the modal rule (a modal window of an application blocks its other
//! windows, as on Linux and Windows). Platform-free so the Linux tests run it.

use crate::geometry::window_bounds;
use crate::join::ListedWindow;
use lsm_core::{Rect, WindowInfo};

/// Which window an id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKey {
    /// A window the window server lists, by its window number (stable for its life).
    Number(u32),
    /// A minimized window only Accessibility knows: its application and its index in
    /// `AXWindows` (valid while the application opens or closes no window).
    Ax { pid: i32, index: usize },
}

/// The id `gui_list` gives a window.
pub fn window_id(w: &ListedWindow) -> String {
    match (&w.cg, w.ax.index()) {
        (Some(cg), _) => format!("m{}", cg.number),
        (None, Some(index)) => format!("m{}.{index}", w.pid),
        // Neither (never listed by the join): a key that names nothing.
        (None, None) => format!("m{}.none", w.pid),
    }
}

/// The window an id names, or `None` for an id lsm did not give.
pub fn parse_window_id(id: &str) -> Option<WindowKey> {
    let rest = id.strip_prefix('m')?;
    match rest.split_once('.') {
        None => rest.parse().ok().map(WindowKey::Number),
        Some((pid, index)) => Some(WindowKey::Ax {
            pid: pid.parse().ok()?,
            index: index.parse().ok()?,
        }),
    }
}

/// The windows for `gui_list`, in the join's order. `app_name` gives the application's name
/// for people by process (the window server's owner name when it has none).
pub fn window_infos(listed: &[ListedWindow], app_name: impl Fn(i32) -> Option<String>) -> Vec<WindowInfo> {
    let mut infos: Vec<WindowInfo> = listed
        .iter()
        .map(|w| {
            let app = app_name(w.pid)
                .or_else(|| w.cg.as_ref().map(|c| c.owner_name.clone()))
                .unwrap_or_default();
            let bounds = w
                .frame
                .as_ref()
                .map(window_bounds)
                .unwrap_or(Rect::new(0, 0, 0, 0));
            WindowInfo {
                pid: u32::try_from(w.pid).ok(),
                focused: w.focused,
                minimized: w.minimized,
                accessible: w.ax.index().is_some(),
                modal: w.modal,
                ..WindowInfo::new(window_id(w), w.title.clone(), app, bounds)
            }
        })
        .collect();
    // A shown modal window blocks the other windows of its application: the frontmost one
    // (first in the list) is the one to deal with first.
    for i in 0..infos.len() {
        if infos[i].blocked_by.is_some() {
            continue;
        }
        let pid = listed[i].pid;
        let blocker = listed.iter().zip(&infos).position(|(w, info)| {
            w.pid == pid && info.modal && !w.minimized && info.window_id != infos[i].window_id
        });
        if let Some(b) = blocker {
            if !infos[i].modal {
                infos[i].blocked_by = Some(infos[b].window_id.clone());
            }
        }
    }
    infos
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::PointRect;
    use crate::join::{AxMatch, CgWindow};

    fn listed(pid: i32, number: Option<u32>, ax: AxMatch, modal: bool) -> ListedWindow {
        ListedWindow {
            pid,
            cg: number.map(|n| CgWindow {
                number: n,
                pid,
                owner_name: "TextEdit".into(),
                title: Some(format!("w{n}")),
                bounds: PointRect::new(10.5, 20.0, 300.0, 200.0),
                layer: 0,
                on_screen: true,
                alpha: 1.0,
            }),
            ax,
            title: format!("w{}", number.unwrap_or(0)),
            frame: Some(PointRect::new(10.5, 20.0, 300.0, 200.0)),
            minimized: number.is_none(),
            other_space: false,
            hidden: false,
            focused: false,
            modal,
            subrole: None,
        }
    }

    #[test]
    fn ids_round_trip_and_strangers_are_refused() {
        let shown = listed(7, Some(42), AxMatch::Certain(0), false);
        assert_eq!(window_id(&shown), "m42");
        assert_eq!(parse_window_id("m42"), Some(WindowKey::Number(42)));
        let minimized = listed(7, None, AxMatch::Certain(3), false);
        assert_eq!(window_id(&minimized), "m7.3");
        assert_eq!(parse_window_id("m7.3"), Some(WindowKey::Ax { pid: 7, index: 3 }));
        for bad in ["", "m", "42", "0x1c00007", "m-1x", "m7.none", "m7.3.1"] {
            assert_eq!(parse_window_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn infos_carry_bounds_app_and_accessibility() {
        let ws = [
            listed(7, Some(42), AxMatch::Certain(0), false),
            listed(8, Some(43), AxMatch::Ambiguous { candidates: 2 }, false),
        ];
        let infos = window_infos(&ws, |pid| (pid == 7).then(|| "TextEdit".to_string()));
        assert_eq!(infos[0].bounds, Rect::new(10, 20, 301, 200));
        assert_eq!((infos[0].app.as_str(), infos[0].accessible), ("TextEdit", true));
        // No name from the caller: the window server's owner name; no tree for an ambiguous join.
        assert_eq!((infos[1].app.as_str(), infos[1].accessible), ("TextEdit", false));
        assert_eq!(infos[1].pid, Some(8));
    }

    #[test]
    fn a_modal_window_blocks_the_rest_of_its_application_only() {
        let ws = [
            listed(7, Some(50), AxMatch::Certain(1), true),
            listed(7, Some(42), AxMatch::Certain(0), false),
            listed(9, Some(60), AxMatch::Certain(0), false),
        ];
        let infos = window_infos(&ws, |_| None);
        assert_eq!(infos[0].blocked_by, None);
        assert!(infos[0].modal);
        assert_eq!(infos[1].blocked_by.as_deref(), Some("m50"));
        assert_eq!(infos[2].blocked_by, None, "another application is not blocked");
        // A minimized modal window blocks nothing.
        let mut min = listed(7, None, AxMatch::Certain(1), true);
        min.minimized = true;
        let infos = window_infos(&[min, listed(7, Some(42), AxMatch::Certain(0), false)], |_| None);
        assert_eq!(infos[1].blocked_by, None);
    }
}
