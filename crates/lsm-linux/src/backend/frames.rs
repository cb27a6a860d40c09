//! Which AT-SPI top-level (frame, dialog, ...) is which X11 window. AT-SPI has no window id, so
//! the link is inferred: same process, then title, role, showing state, the frame's extents
//! against the window's geometry, and which one is active. The windows of one process are
//! matched together (a frame that fits another window better is not this one's), and a match
//! that another assignment fits as well is reported as ambiguous rather than guessed silently.
//! Pure logic: the reads are in `find_frame.rs`.

use super::view::CoordRule;
use crate::atspi::FrameInfo;
use crate::atspi::ObjRef;
use lsm_core::Rect;
use std::collections::HashMap;

/// Roles of transient top-levels that belong to the window they pop up over.
pub const POPUP_ROLES: &[&str] = &["window", "menu", "popup_menu", "tool_tip"];

/// What can be compared between a frame's extents and its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Geometry {
    /// Screen extents (GTK3, Qt5): position and size.
    Screen,
    /// Extents relative to the window itself (GTK4): size only.
    SizeOnly,
}

/// One X11 window of the process, bounds in screen logical pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowGeom {
    pub id: u32,
    pub title: String,
    pub bounds: Rect,
    pub focused: bool,
    pub minimized: bool,
}

/// The frame chosen for a window, and the other frames that fit it as well.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameMatch {
    pub frame: usize,
    /// Why the choice is not certain; None: it is.
    pub doubt: Option<Doubt>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Doubt {
    /// This many other frames fit the window as well (same title, place, size, state).
    Frames(usize),
    /// Another window of the process (this X id) fits the chosen frame as well.
    Window(u32),
}

// Costs, in roughly "pixels of misfit". The title dominates, then being shown at all.
const TITLE_MISMATCH: i64 = 1000;
const NOT_SHOWN: i64 = 400;
const POPUP_ROLE: i64 = 300;
const ACTIVE_MISMATCH: i64 = 150;
/// Extents that cannot be compared cost the same for every candidate.
const NO_EXTENTS: i64 = 200;
/// Decorations a toolkit may include in its frame's extents (GTK3 reports the WM frame).
const DECORATION: i32 = 48;
const MAX_GEOMETRY: i64 = 3000;
/// What a previous certain match of the same pair is worth.
const REMEMBERED: i64 = 40;
/// Two assignments closer than this are indistinguishable.
const MARGIN: i64 = 20;

fn has(states: &[String], s: &str) -> bool {
    states.iter().any(|x| x == s)
}

/// A showing popup (an open menu, a tooltip): not a window of its own in the X11 list.
pub fn is_popup(f: &FrameInfo) -> bool {
    POPUP_ROLES.contains(&f.role.as_str()) && has(&f.states, "showing")
}

fn usable(r: Option<Rect>) -> Option<Rect> {
    r.filter(|r| r.width > 0 && r.height > 0)
}

/// How badly a frame's extents fit a window: 0 for a frame that covers the window exactly or
/// with up to `DECORATION` px of decorations around it; every pixel beyond counts.
fn geometry_cost(frame: Option<Rect>, win: &Rect, geometry: Geometry) -> i64 {
    let Some(f) = usable(frame) else {
        return NO_EXTENTS;
    };
    let outward = |d: i32| -> i64 {
        // d > 0: the frame reaches beyond the window on that edge.
        if d >= 0 {
            (d - DECORATION).max(0) as i64
        } else {
            (-d) as i64
        }
    };
    let cost = match geometry {
        Geometry::Screen => {
            outward(win.x - f.x)
                + outward(win.y - f.y)
                + outward((f.x + f.width) - (win.x + win.width))
                + outward((f.y + f.height) - (win.y + win.height))
        }
        Geometry::SizeOnly => outward(f.width - win.width) + outward(f.height - win.height),
    };
    cost.min(MAX_GEOMETRY)
}

fn cost(w: &WindowGeom, f: &FrameInfo, obj_known: Option<&ObjRef>, geometry: Geometry) -> i64 {
    let mut c = 0;
    if f.name != w.title {
        c += TITLE_MISMATCH;
    }
    if !w.minimized && !has(&f.states, "showing") && !has(&f.states, "visible") {
        c += NOT_SHOWN;
    }
    if POPUP_ROLES.contains(&f.role.as_str()) {
        c += POPUP_ROLE;
    }
    // A toolkit marks its focused top-level "active"; the window manager's active window
    // should be the same one. Only where some frame says so: not every toolkit does.
    if w.focused != has(&f.states, "active") {
        c += ACTIVE_MISMATCH;
    }
    c += geometry_cost(f.screen_extents, &w.bounds, geometry);
    if obj_known == Some(&f.obj) {
        c -= REMEMBERED;
    }
    c
}

/// The frame of window `target` among `frames` (one application's top-levels), matched
/// together with the process's other windows `windows` (which include `target`).
/// `remembered` holds earlier certain matches (window id -> frame), used where still present.
pub fn match_frame(
    target: u32,
    windows: &[WindowGeom],
    frames: &[FrameInfo],
    geometry: Geometry,
    remembered: &HashMap<u32, ObjRef>,
) -> Option<FrameMatch> {
    let t = windows.iter().position(|w| w.id == target)?;
    // Open popups are no X11 top-level of their own; only when nothing else is there.
    let mut candidates: Vec<usize> = (0..frames.len()).filter(|&j| !is_popup(&frames[j])).collect();
    if candidates.is_empty() {
        candidates = (0..frames.len()).collect();
    }
    if candidates.is_empty() {
        return None;
    }
    let costs: Vec<Vec<i64>> = windows
        .iter()
        .map(|w| {
            (0..frames.len())
                .map(|j| cost(w, &frames[j], remembered.get(&w.id), geometry))
                .collect()
        })
        .collect();
    // Greedy assignment, cheapest pairs first (a handful of windows per process).
    let mut pairs: Vec<(i64, usize, usize)> = (0..windows.len())
        .flat_map(|i| candidates.iter().map(move |&j| (i, j)))
        .map(|(i, j)| (costs[i][j], i, j))
        .collect();
    pairs.sort();
    let mut window_frame: Vec<Option<usize>> = vec![None; windows.len()];
    let mut frame_window: Vec<Option<usize>> = vec![None; frames.len()];
    for (_, i, j) in pairs {
        if window_frame[i].is_none() && frame_window[j].is_none() {
            window_frame[i] = Some(j);
            frame_window[j] = Some(i);
        }
    }
    // More windows than frames: this one got none; its best frame, flagged as shared.
    let a = match window_frame[t] {
        Some(a) => a,
        None => {
            let best = *candidates.iter().min_by_key(|&&j| costs[t][j])?;
            let owner = frame_window[best].map(|u| windows[u].id).unwrap_or(target);
            return Some(FrameMatch {
                frame: best,
                doubt: Some(Doubt::Window(owner)),
            });
        }
    };
    // A rival frame: giving this window frame g instead (and g's window frame a) costs about
    // the same.
    let rivals = candidates
        .iter()
        .filter(|&&g| g != a)
        .filter(|&&g| {
            let swap = match frame_window[g] {
                None => costs[t][g] - costs[t][a],
                Some(u) => costs[t][g] + costs[u][a] - costs[t][a] - costs[u][g],
            };
            swap < MARGIN
        })
        .count();
    // A rival window: one left without a frame that fits this frame as well.
    let shared = (0..windows.len())
        .filter(|&u| u != t && window_frame[u].is_none())
        .find(|&u| costs[u][a] - costs[t][a] < MARGIN)
        .map(|u| windows[u].id);
    let doubt = match (rivals, shared) {
        (0, None) => None,
        (0, Some(u)) => Some(Doubt::Window(u)),
        (n, _) => Some(Doubt::Frames(n)),
    };
    Some(FrameMatch { frame: a, doubt })
}

/// The open popups of the application that belong to `target`: all of them when it is the
/// application's focused window (a menu opens over the window that has the focus), none when
/// another of its windows has it; otherwise those over the window (by screen position where
/// known).
pub fn popups_for(
    target: &WindowGeom,
    windows: &[WindowGeom],
    frames: &[FrameInfo],
    geometry: Geometry,
) -> Vec<usize> {
    let someone_else_focused = windows.iter().any(|w| w.focused && w.id != target.id);
    (0..frames.len())
        .filter(|&j| is_popup(&frames[j]))
        .filter(|&j| {
            if target.focused {
                return true;
            }
            if someone_else_focused {
                return false;
            }
            match (geometry, usable(frames[j].screen_extents)) {
                (Geometry::Screen, Some(r)) => r.intersect(&target.bounds).is_some(),
                _ => true,
            }
        })
        .collect()
}

/// What `find_frame` found for a window.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) frame: FrameInfo,
    pub(crate) rule: CoordRule,
    pub(crate) popups: Vec<FrameInfo>,
    /// Why the frame may be another window's (said in the observation's notes).
    pub(crate) doubt: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: u32, name: &str, role: &str, ext: Option<Rect>, states: &[&str]) -> FrameInfo {
        FrameInfo {
            obj: ObjRef::new(":1.5", format!("/org/a11y/atspi/accessible/{n}")),
            role: role.into(),
            name: name.into(),
            screen_extents: ext,
            states: states.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn win(id: u32, title: &str, bounds: Rect, focused: bool) -> WindowGeom {
        WindowGeom {
            id,
            title: title.into(),
            bounds,
            focused,
            minimized: false,
        }
    }

    /// GTK3 under a reparenting WM: the frame's extents include the title bar and borders.
    fn decorated(r: Rect) -> Rect {
        Rect::new(r.x - 5, r.y - 29, r.width + 10, r.height + 34)
    }

    fn none() -> HashMap<u32, ObjRef> {
        HashMap::new()
    }

    const A: Rect = Rect {
        x: 100,
        y: 80,
        width: 800,
        height: 600,
    };
    const B: Rect = Rect {
        x: 130,
        y: 110,
        width: 800,
        height: 600,
    };

    #[test]
    fn same_title_windows_are_told_apart_by_position() {
        let t = "fm - Thunar";
        let frames = [
            frame(1, t, "frame", Some(decorated(A)), &["showing", "visible"]),
            frame(
                2,
                t,
                "frame",
                Some(decorated(B)),
                &["showing", "visible", "active"],
            ),
        ];
        let windows = [win(10, t, A, false), win(11, t, B, true)];
        let a = match_frame(10, &windows, &frames, Geometry::Screen, &none()).unwrap();
        let b = match_frame(11, &windows, &frames, Geometry::Screen, &none()).unwrap();
        assert_eq!(
            a,
            FrameMatch {
                frame: 0,
                doubt: None
            }
        );
        assert_eq!(
            b,
            FrameMatch {
                frame: 1,
                doubt: None
            }
        );
        // Listed the other way round, still the same.
        let rev = [frames[1].clone(), frames[0].clone()];
        assert_eq!(
            match_frame(10, &windows, &rev, Geometry::Screen, &none())
                .unwrap()
                .frame,
            1
        );
    }

    #[test]
    fn same_title_and_place_is_decided_by_the_active_state() {
        let t = "fm - Thunar";
        let frames = [
            frame(1, t, "frame", Some(decorated(A)), &["showing", "active"]),
            frame(2, t, "frame", Some(decorated(A)), &["showing"]),
        ];
        let windows = [win(10, t, A, false), win(11, t, A, true)];
        let m = match_frame(10, &windows, &frames, Geometry::Screen, &none()).unwrap();
        assert_eq!(
            m,
            FrameMatch {
                frame: 1,
                doubt: None
            }
        );
        let m = match_frame(11, &windows, &frames, Geometry::Screen, &none()).unwrap();
        assert_eq!(
            m,
            FrameMatch {
                frame: 0,
                doubt: None
            }
        );
    }

    #[test]
    fn indistinguishable_windows_are_reported_not_guessed() {
        let t = "fm - Thunar";
        let frames = [
            frame(1, t, "frame", Some(decorated(A)), &["showing"]),
            frame(2, t, "frame", Some(decorated(A)), &["showing"]),
        ];
        let windows = [win(10, t, A, false), win(11, t, A, false)];
        let m = match_frame(10, &windows, &frames, Geometry::Screen, &none()).unwrap();
        assert_eq!(m.doubt, Some(Doubt::Frames(1)));
        // An earlier certain match settles it.
        let mut known = HashMap::new();
        known.insert(10, frames[1].obj.clone());
        let m = match_frame(10, &windows, &frames, Geometry::Screen, &known).unwrap();
        assert_eq!(
            m,
            FrameMatch {
                frame: 1,
                doubt: None
            }
        );
        let m = match_frame(11, &windows, &frames, Geometry::Screen, &known).unwrap();
        assert_eq!(
            m,
            FrameMatch {
                frame: 0,
                doubt: None
            }
        );
    }

    #[test]
    fn gtk4_window_relative_extents_compare_by_size_only() {
        // GTK4 puts every frame at (0,0): position means nothing, size does.
        let frames = [
            frame(
                1,
                "Factory",
                "frame",
                Some(Rect::new(0, 0, 400, 300)),
                &["showing"],
            ),
            frame(
                2,
                "Factory",
                "frame",
                Some(Rect::new(0, 0, 900, 700)),
                &["showing"],
            ),
        ];
        let big = Rect::new(500, 400, 900, 700);
        let small = Rect::new(0, 0, 400, 300);
        let windows = [win(10, "Factory", big, false), win(11, "Factory", small, false)];
        assert_eq!(
            match_frame(10, &windows, &frames, Geometry::SizeOnly, &none()).unwrap(),
            FrameMatch {
                frame: 1,
                doubt: None
            }
        );
        // Alone too, and the small one wherever it is.
        let moved = [win(11, "Factory", Rect::new(700, 500, 400, 300), false)];
        assert_eq!(
            match_frame(11, &moved, &frames, Geometry::SizeOnly, &none())
                .unwrap()
                .frame,
            0
        );
    }

    #[test]
    fn a_dialog_and_its_main_window_by_title_and_hidden_frames_lose() {
        let frames = [
            frame(
                1,
                "Untitled 1 - Mousepad",
                "frame",
                Some(decorated(A)),
                &["showing"],
            ),
            frame(
                2,
                "Save As",
                "file_chooser",
                Some(decorated(Rect::new(200, 150, 600, 400))),
                &["showing", "active", "modal"],
            ),
            // A dialog GTK keeps around, hidden, with the same title.
            frame(3, "Save As", "file_chooser", Some(Rect::new(0, 0, 600, 400)), &[]),
        ];
        let windows = [
            win(10, "Untitled 1 - Mousepad", A, false),
            win(11, "Save As", Rect::new(200, 150, 600, 400), true),
        ];
        assert_eq!(
            match_frame(10, &windows, &frames, Geometry::Screen, &none()).unwrap(),
            FrameMatch {
                frame: 0,
                doubt: None
            }
        );
        assert_eq!(
            match_frame(11, &windows, &frames, Geometry::Screen, &none()).unwrap(),
            FrameMatch {
                frame: 1,
                doubt: None
            }
        );
    }

    #[test]
    fn popups_are_not_windows_and_go_to_the_focused_window() {
        let t = "fm - Thunar";
        let menu = frame(
            3,
            "",
            "window",
            Some(Rect::new(140, 140, 200, 300)),
            &["showing", "visible"],
        );
        let frames = [
            frame(1, t, "frame", Some(decorated(A)), &["showing"]),
            menu,
            frame(2, t, "frame", Some(decorated(B)), &["showing", "active"]),
        ];
        let windows = [win(10, t, A, false), win(11, t, B, true)];
        assert_eq!(
            match_frame(11, &windows, &frames, Geometry::Screen, &none())
                .unwrap()
                .frame,
            2
        );
        assert_eq!(
            popups_for(&windows[1], &windows, &frames, Geometry::Screen),
            vec![1]
        );
        assert!(popups_for(&windows[0], &windows, &frames, Geometry::Screen).is_empty());
        // Nobody focused: by position.
        let unfocused = [
            win(10, t, A, false),
            win(11, t, Rect::new(1000, 0, 300, 300), false),
        ];
        assert_eq!(
            popups_for(&unfocused[0], &unfocused, &frames, Geometry::Screen),
            vec![1]
        );
        assert!(popups_for(&unfocused[1], &unfocused, &frames, Geometry::Screen).is_empty());
    }

    #[test]
    fn a_lone_window_takes_its_only_frame_whatever_the_geometry() {
        let frames = [frame(1, "Calculator", "frame", None, &["showing"])];
        let windows = [win(10, "Calculator", A, true)];
        assert_eq!(
            match_frame(10, &windows, &frames, Geometry::Screen, &none()).unwrap(),
            FrameMatch {
                frame: 0,
                doubt: None
            }
        );
        assert_eq!(
            match_frame(99, &windows, &frames, Geometry::Screen, &none()),
            None
        );
        assert_eq!(match_frame(10, &windows, &[], Geometry::Screen, &none()), None);
    }

    #[test]
    fn more_windows_than_frames_is_flagged() {
        let frames = [frame(1, "Doc", "frame", Some(decorated(A)), &["showing"])];
        let windows = [win(10, "Doc", A, false), win(11, "Doc", A, false)];
        let a = match_frame(10, &windows, &frames, Geometry::Screen, &none()).unwrap();
        let b = match_frame(11, &windows, &frames, Geometry::Screen, &none()).unwrap();
        assert_eq!(a.frame, 0);
        assert_eq!(b.frame, 0);
        // One of them got it by a coin toss: both are told.
        assert!(matches!(a.doubt, Some(Doubt::Window(11))), "{a:?}");
        assert!(matches!(b.doubt, Some(Doubt::Window(10))), "{b:?}");
    }
}
