//! Which Accessibility window is which CoreGraphics window.
//!
//! CoreGraphics lists every window with a number (lsm's window id), its owner, bounds, layer
//! and whether it is on screen, in front-to-back order; its titles need Screen Recording.
//! Accessibility gives each application's windows (`AXWindows`) with their trees, but no window
//! number. The link is inferred within one process by position and size, the title breaking a
//! tie only when it is unique on both sides. Windows that cannot be told apart get no tree at
//! all: two windows of one app with one title must never share a tree. Pure logic: the reads
//! are elsewhere.

use crate::geometry::{GlobalPoint, PointRect, PointSize};

/// How far (in points) an AX frame may be from CoreGraphics' bounds and still be the same
/// window: the two are read at different moments and one of them may round.
const FRAME_TOLERANCE: f64 = 1.0 + 1e-6;

/// One window of `CGWindowListCopyWindowInfo` (all windows, on screen or not).
#[derive(Debug, Clone, PartialEq)]
pub struct CgWindow {
    /// `kCGWindowNumber`.
    pub number: u32,
    /// `kCGWindowOwnerPID`.
    pub pid: i32,
    /// `kCGWindowOwnerName`.
    pub owner_name: String,
    /// `kCGWindowName`: only with Screen Recording permission.
    pub title: Option<String>,
    /// `kCGWindowBounds`, global points.
    pub bounds: PointRect,
    /// `kCGWindowLayer`: 0 for normal windows; menus, the Dock and status items are above.
    pub layer: i32,
    /// `kCGWindowIsOnscreen`.
    pub on_screen: bool,
    /// `kCGWindowAlpha`.
    pub alpha: f64,
}

/// One element of an application's `AXWindows`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AxWindow {
    /// Its index in the application's `AXWindows` list.
    pub index: usize,
    /// `AXTitle` (empty when missing).
    pub title: String,
    /// `AXPosition`, global points; `None` when the application did not give it.
    pub position: Option<GlobalPoint>,
    /// `AXSize`; `None` when the application did not give it.
    pub size: Option<PointSize>,
    pub minimized: bool,
    /// `AXMain`.
    pub main: bool,
    /// `AXFocused`.
    pub focused: bool,
    /// `AXSubrole`: "AXStandardWindow", "AXDialog", "AXSystemDialog", "AXFloatingWindow"...
    pub subrole: Option<String>,
    /// `AXModal`.
    pub modal: bool,
}

impl AxWindow {
    /// Its whole frame, when the application gave both position and size.
    pub fn frame(&self) -> Option<PointRect> {
        let (p, s) = (self.position?, self.size?);
        Some(PointRect::new(p.x, p.y, s.width, s.height))
    }
}

/// One application's Accessibility windows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AppWindows {
    pub pid: i32,
    /// `AXHidden` (Command-H): its windows are off screen but neither minimized nor on another
    /// Space.
    pub hidden: bool,
    pub windows: Vec<AxWindow>,
}

/// Why a join is not certain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doubt {
    /// The AX window lacks its position or its size: joined by the other alone.
    PartialFrame,
    /// The titles differ (it may have changed between the two reads).
    TitleDiffers,
}

/// The Accessibility window (its `AXWindows` index) joined to a listed window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxMatch {
    /// Its whole frame fits this window alone, or a title unique on both sides broke a tie, or
    /// the window is known from Accessibility alone (minimized, not in CoreGraphics' list).
    Certain(usize),
    /// Joined, but see the doubt.
    Probable { index: usize, doubt: Doubt },
    /// This many AX windows of the application fit this window and cannot be told apart: none
    /// is joined, so the window has no tree rather than perhaps another window's.
    Ambiguous { candidates: usize },
    /// No AX window of the application fits it (another Space, an application without
    /// accessibility, or a read that failed).
    Unmatched,
}

impl AxMatch {
    /// The joined AX window's index, certain or not.
    pub fn index(&self) -> Option<usize> {
        match *self {
            AxMatch::Certain(i) | AxMatch::Probable { index: i, .. } => Some(i),
            AxMatch::Ambiguous { .. } | AxMatch::Unmatched => None,
        }
    }

    pub fn is_certain(&self) -> bool {
        matches!(self, AxMatch::Certain(_))
    }
}

/// One window `gui_list` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedWindow {
    pub pid: i32,
    /// CoreGraphics' entry; `None` for a minimized window it does not list.
    pub cg: Option<CgWindow>,
    pub ax: AxMatch,
    /// CoreGraphics' title when it has one, else the joined AX window's, else empty.
    pub title: String,
    /// CoreGraphics' bounds, else the AX window's whole frame.
    pub frame: Option<PointRect>,
    pub minimized: bool,
    /// On another Space: a normal window CoreGraphics has off screen, neither minimized nor
    /// of a hidden application.
    pub other_space: bool,
    /// Its application is hidden.
    pub hidden: bool,
    pub focused: bool,
    /// The joined AX window is modal.
    pub modal: bool,
    /// The joined AX window's subrole.
    pub subrole: Option<String>,
}

/// Whether a CoreGraphics window is a normal window lsm lists: layer 0 (not a menu, the Dock
/// or a status item), not fully transparent, and with an area.
pub fn is_normal_window(w: &CgWindow) -> bool {
    w.layer == 0 && w.alpha > 0.0 && !w.bounds.is_empty()
}

/// How an AX window's frame fits a CoreGraphics window's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    Whole,
    /// Only what the AX window gave (its position or its size) fits.
    Part,
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= FRAME_TOLERANCE
}

fn fit(bounds: &PointRect, ax: &AxWindow) -> Option<Fit> {
    let position = ax.position.map(|p| close(p.x, bounds.x) && close(p.y, bounds.y));
    let size = ax
        .size
        .map(|s| close(s.width, bounds.width) && close(s.height, bounds.height));
    match (position, size) {
        (Some(true), Some(true)) => Some(Fit::Whole),
        (Some(true), None) | (None, Some(true)) => Some(Fit::Part),
        _ => None,
    }
}

fn usable_title(t: Option<&str>) -> Option<&str> {
    t.map(str::trim).filter(|t| !t.is_empty())
}

/// The join of one application's CoreGraphics windows (`cgs`) with its AX windows (`axs`).
struct AppJoin {
    /// Per CG window: its match.
    matches: Vec<AxMatch>,
    /// Per CG window: some AX window that fits it is minimized.
    fits_minimized: Vec<bool>,
    /// Per AX window: joined, or stood for by an unjoined CG window it fits.
    accounted: Vec<bool>,
}

fn join_app(cgs: &[&CgWindow], axs: &[AxWindow]) -> AppJoin {
    let (n, m) = (cgs.len(), axs.len());
    let mut fits: Vec<Vec<Option<Fit>>> = cgs
        .iter()
        .map(|c| axs.iter().map(|a| fit(&c.bounds, a)).collect())
        .collect();
    // A CG window that a whole AX frame fits is no candidate for an AX window known in part.
    for row in &mut fits {
        if row.contains(&Some(Fit::Whole)) {
            for f in row.iter_mut() {
                if *f == Some(Fit::Part) {
                    *f = None;
                }
            }
        }
    }
    // Groups of windows that fit each other (connected components): CG i is node i, AX j
    // is node n + j.
    let mut group: Vec<usize> = (0..n + m).collect();
    fn root(group: &mut [usize], mut i: usize) -> usize {
        while group[i] != i {
            group[i] = group[group[i]];
            i = group[i];
        }
        i
    }
    for (i, row) in fits.iter().enumerate() {
        for (j, f) in row.iter().enumerate() {
            if f.is_some() {
                let (a, b) = (root(&mut group, i), root(&mut group, n + j));
                group[a] = b;
            }
        }
    }
    let roots: Vec<usize> = (0..n + m).map(|i| root(&mut group, i)).collect();
    let mut matches = vec![AxMatch::Unmatched; n];
    let mut joined_ax = vec![false; m];
    let cg_title = |i: usize| usable_title(cgs[i].title.as_deref());
    let ax_title = |j: usize| usable_title(Some(axs[j].title.as_str()));
    let link = |i: usize, j: usize, fit: Fit| {
        let index = axs[j].index;
        let titles_differ = matches!((cg_title(i), ax_title(j)), (Some(a), Some(b)) if a != b);
        let doubt = match (fit, titles_differ) {
            (Fit::Part, _) => Some(Doubt::PartialFrame),
            (Fit::Whole, true) => Some(Doubt::TitleDiffers),
            (Fit::Whole, false) => None,
        };
        doubt.map_or(AxMatch::Certain(index), |doubt| AxMatch::Probable {
            index,
            doubt,
        })
    };
    for i in 0..n {
        let cg_group: Vec<usize> = (0..n).filter(|&k| roots[k] == roots[i]).collect();
        let ax_group: Vec<usize> = (0..m).filter(|&j| roots[n + j] == roots[i]).collect();
        if ax_group.is_empty() {
            continue;
        }
        if cg_group.len() == 1 && ax_group.len() == 1 {
            let j = ax_group[0];
            if let Some(f) = fits[i][j] {
                matches[i] = link(i, j, f);
                joined_ax[j] = true;
            }
            continue;
        }
        // A tie: the title decides only when it is unique among both sides of the group.
        // Counted below, once every tie of the group is settled.
        matches[i] = AxMatch::Ambiguous { candidates: 0 };
        let Some(title) = cg_title(i) else {
            continue;
        };
        let same_cg = cg_group.iter().filter(|&&k| cg_title(k) == Some(title));
        let same_ax: Vec<usize> = ax_group
            .iter()
            .copied()
            .filter(|&j| ax_title(j) == Some(title))
            .collect();
        if same_cg.count() == 1 && same_ax.len() == 1 {
            let j = same_ax[0];
            if let Some(f) = fits[i][j] {
                matches[i] = link(i, j, f);
                joined_ax[j] = true;
            }
        }
    }
    // A tie counts only the AX windows no other CG window took; with none left, no AX window
    // is this one's.
    for (i, matched) in matches.iter_mut().enumerate() {
        if let AxMatch::Ambiguous { candidates } = matched {
            *candidates = (0..m).filter(|&j| fits[i][j].is_some() && !joined_ax[j]).count();
            if *candidates == 0 {
                *matched = AxMatch::Unmatched;
            }
        }
    }
    let fits_minimized = (0..n)
        .map(|i| (0..m).any(|j| fits[i][j].is_some() && axs[j].minimized))
        .collect();
    // An AX window no joined CG window took is stood for by an unjoined CG window of its group.
    let accounted = (0..m)
        .map(|j| joined_ax[j] || (0..n).any(|i| roots[i] == roots[n + j] && matches[i].index().is_none()))
        .collect();
    AppJoin {
        matches,
        fits_minimized,
        accounted,
    }
}

/// The AX window that has the focus in the frontmost application: `AXFocused`, else `AXMain`
/// (an application whose focus went to a panel still names its main window).
fn focused_ax_index(app: &AppWindows) -> Option<usize> {
    let open = || app.windows.iter().filter(|w| !w.minimized);
    open()
        .find(|w| w.focused)
        .or_else(|| open().find(|w| w.main))
        .map(|w| w.index)
}

/// The windows `gui_list` shows: CoreGraphics' normal windows in its front-to-back order, each
/// joined to its application's AX window where one fits it alone, then the minimized ones
/// (those CoreGraphics does not list at all last). `frontmost_pid` is the frontmost
/// application's (`NSWorkspace.frontmostApplication`); its focused AX window is the focused one.
pub fn list_windows(
    cg_windows: &[CgWindow],
    apps: &[AppWindows],
    frontmost_pid: Option<i32>,
) -> Vec<ListedWindow> {
    let normal: Vec<&CgWindow> = cg_windows.iter().filter(|w| is_normal_window(w)).collect();
    let mut pids: Vec<i32> = normal.iter().map(|w| w.pid).collect();
    pids.extend(apps.iter().map(|a| a.pid));
    pids.sort_unstable();
    pids.dedup();
    let mut by_cg: Vec<Option<ListedWindow>> = vec![None; normal.len()];
    let mut ax_only: Vec<ListedWindow> = Vec::new();
    for pid in pids {
        let app = apps.iter().find(|a| a.pid == pid);
        let axs: &[AxWindow] = app.map_or(&[], |a| a.windows.as_slice());
        let hidden = app.is_some_and(|a| a.hidden);
        let focus = app
            .filter(|_| frontmost_pid == Some(pid))
            .and_then(focused_ax_index);
        let positions: Vec<usize> = (0..normal.len()).filter(|&k| normal[k].pid == pid).collect();
        let cgs: Vec<&CgWindow> = positions.iter().map(|&k| normal[k]).collect();
        let joined = join_app(&cgs, axs);
        let ax_of = |index: usize| axs.iter().find(|a| a.index == index);
        for (i, &k) in positions.iter().enumerate() {
            let cg = normal[k];
            let matched = joined.matches[i];
            let ax = matched.index().and_then(ax_of);
            let minimized = match ax {
                Some(a) => a.minimized,
                None => !cg.on_screen && joined.fits_minimized[i],
            };
            let title = usable_title(cg.title.as_deref())
                .or_else(|| ax.map(|a| a.title.trim()).filter(|t| !t.is_empty()))
                .unwrap_or_default()
                .to_string();
            by_cg[k] = Some(ListedWindow {
                pid,
                cg: Some(cg.clone()),
                ax: matched,
                title,
                frame: Some(cg.bounds),
                minimized,
                other_space: !cg.on_screen && !minimized && !hidden,
                hidden,
                focused: !minimized && focus.is_some() && matched.index() == focus,
                modal: ax.is_some_and(|a| a.modal),
                subrole: ax.and_then(|a| a.subrole.clone()),
            });
        }
        // Minimized windows CoreGraphics does not list: listed, flagged, never dropped.
        for (j, a) in axs.iter().enumerate() {
            if a.minimized && !joined.accounted[j] {
                ax_only.push(ListedWindow {
                    pid,
                    cg: None,
                    ax: AxMatch::Certain(a.index),
                    title: a.title.trim().to_string(),
                    frame: a.frame(),
                    minimized: true,
                    other_space: false,
                    hidden,
                    focused: false,
                    modal: a.modal,
                    subrole: a.subrole.clone(),
                });
            }
        }
    }
    let (minimized, open): (Vec<ListedWindow>, Vec<ListedWindow>) =
        by_cg.into_iter().flatten().partition(|w| w.minimized);
    open.into_iter().chain(minimized).chain(ax_only).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cg(number: u32, pid: i32, title: Option<&str>, bounds: PointRect) -> CgWindow {
        CgWindow {
            number,
            pid,
            owner_name: format!("app{pid}"),
            title: title.map(str::to_string),
            bounds,
            layer: 0,
            on_screen: true,
            alpha: 1.0,
        }
    }

    fn ax(index: usize, title: &str, frame: PointRect) -> AxWindow {
        AxWindow {
            index,
            title: title.into(),
            position: Some(frame.origin()),
            size: Some(frame.size()),
            subrole: Some("AXStandardWindow".into()),
            ..AxWindow::default()
        }
    }

    fn app(pid: i32, windows: Vec<AxWindow>) -> AppWindows {
        AppWindows {
            pid,
            hidden: false,
            windows,
        }
    }

    const A: PointRect = PointRect::new(100.0, 100.0, 800.0, 600.0);
    const B: PointRect = PointRect::new(150.0, 130.0, 800.0, 600.0);

    fn focused(list: &[ListedWindow]) -> Vec<Option<u32>> {
        let focused: Vec<ListedWindow> = list.iter().filter(|w| w.focused).cloned().collect();
        numbers(&focused)
    }

    fn numbers(list: &[ListedWindow]) -> Vec<Option<u32>> {
        list.iter().map(|w| w.cg.as_ref().map(|c| c.number)).collect()
    }

    #[test]
    fn same_title_different_frames_are_joined_by_frame() {
        // Without Screen Recording: no CG title; the AX titles are the same.
        let cgs = [cg(11, 7, None, B), cg(10, 7, None, A)];
        // Half a point off, as a rounding read would be.
        let a = PointRect { x: 100.5, ..A };
        let apps = [app(7, vec![ax(0, "Untitled", a), ax(1, "Untitled", B)])];
        let list = list_windows(&cgs, &apps, None);
        assert_eq!(numbers(&list), vec![Some(11), Some(10)], "CG's order");
        assert_eq!(list[0].ax, AxMatch::Certain(1));
        assert_eq!(list[1].ax, AxMatch::Certain(0));
        assert_eq!(list[0].title, "Untitled", "the AX title stands in");
    }

    #[test]
    fn same_title_same_frame_neither_is_joined() {
        let cgs = [cg(10, 7, Some("Untitled"), A), cg(11, 7, Some("Untitled"), A)];
        let mut focused_one = ax(0, "Untitled", A);
        focused_one.focused = true;
        let apps = [app(7, vec![focused_one, ax(1, "Untitled", A)])];
        let list = list_windows(&cgs, &apps, Some(7));
        assert_eq!(list.len(), 2);
        for w in &list {
            assert_eq!(w.ax, AxMatch::Ambiguous { candidates: 2 }, "{w:?}");
            assert!(!w.focused, "the focused AX window is not known to be either");
        }
        // With no CG titles (no Screen Recording) and different AX titles: still a tie.
        let cgs = [cg(10, 7, None, A), cg(11, 7, None, A)];
        let apps = [app(7, vec![ax(0, "One", A), ax(1, "Two", A)])];
        let list = list_windows(&cgs, &apps, None);
        assert!(list.iter().all(|w| w.ax.index().is_none()), "{list:?}");
    }

    #[test]
    fn a_unique_title_breaks_a_tie_of_frames() {
        let cgs = [
            cg(10, 7, Some("One"), A),
            cg(11, 7, Some("Two"), A),
            cg(12, 7, Some("Two"), A),
        ];
        let apps = [app(7, vec![ax(0, "Two", A), ax(1, "One", A), ax(2, "Two", A)])];
        let list = list_windows(&cgs, &apps, None);
        assert_eq!(list[0].ax, AxMatch::Certain(1));
        // "Two" is on two windows of each side: neither is joined.
        assert_eq!(list[1].ax, AxMatch::Ambiguous { candidates: 2 });
        assert_eq!(list[2].ax, AxMatch::Ambiguous { candidates: 2 });
    }

    #[test]
    fn one_ax_window_is_never_joined_to_two_cg_windows() {
        // An AX window with no position fits both same-sized CG windows by size.
        let mut sized = ax(0, "Doc", A);
        sized.position = None;
        let cgs = [cg(10, 7, None, A), cg(11, 7, None, B)];
        let list = list_windows(&cgs, &[app(7, vec![sized.clone()])], None);
        assert!(list.iter().all(|w| w.ax.index().is_none()), "{list:?}");
        // With a CG title unique on both sides it is joined, though by size alone.
        let cgs = [cg(10, 7, Some("Doc"), A), cg(11, 7, Some("Other"), B)];
        let list = list_windows(&cgs, &[app(7, vec![sized])], None);
        let expected = AxMatch::Probable {
            index: 0,
            doubt: Doubt::PartialFrame,
        };
        assert_eq!(list[0].ax, expected);
        assert_eq!(list[1].ax, AxMatch::Unmatched);
    }

    #[test]
    fn missing_ax_position() {
        // One window known by size alone, another by its whole frame at the same size: the
        // whole frame takes its CG window, the other gets the rest.
        let mut sized = ax(1, "Inspector", B);
        sized.position = None;
        let cgs = [cg(10, 7, None, A), cg(11, 7, None, B)];
        let apps = [app(7, vec![ax(0, "Doc", A), sized])];
        let list = list_windows(&cgs, &apps, None);
        assert_eq!(list[0].ax, AxMatch::Certain(0));
        assert_eq!(
            list[1].ax,
            AxMatch::Probable {
                index: 1,
                doubt: Doubt::PartialFrame
            }
        );
        assert!(!list[1].ax.is_certain());
        // Neither position nor size: nothing to join by.
        let blank = AxWindow {
            index: 0,
            title: "Doc".into(),
            ..AxWindow::default()
        };
        let list = list_windows(&[cg(10, 7, None, A)], &[app(7, vec![blank])], None);
        assert_eq!(list[0].ax, AxMatch::Unmatched);
        // A title that changed between the reads: joined, with the doubt said.
        let list = list_windows(
            &[cg(10, 7, Some("Old"), A)],
            &[app(7, vec![ax(0, "New", A)])],
            None,
        );
        assert_eq!(
            list[0].ax,
            AxMatch::Probable {
                index: 0,
                doubt: Doubt::TitleDiffers
            }
        );
        assert_eq!(list[0].title, "Old");
    }

    #[test]
    fn minimized_windows_are_listed_after_the_others() {
        let mut small = ax(1, "Notes", B);
        small.minimized = true;
        let mut gone = ax(2, "Draft", PointRect::new(300.0, 300.0, 400.0, 300.0));
        gone.minimized = true;
        // CG lists the minimized window off screen (first here) and not the other at all.
        let mut off = cg(11, 7, None, B);
        off.on_screen = false;
        let cgs = [off, cg(10, 7, None, A)];
        let apps = [app(7, vec![ax(0, "Doc", A), small, gone])];
        let list = list_windows(&cgs, &apps, Some(7));
        assert_eq!(numbers(&list), vec![Some(10), Some(11), None]);
        assert!(!list[0].minimized);
        assert!(list[1].minimized && !list[1].other_space);
        assert_eq!(list[1].ax, AxMatch::Certain(1));
        assert!(list[2].minimized && !list[2].other_space);
        assert_eq!(list[2].ax, AxMatch::Certain(2));
        assert_eq!(list[2].title, "Draft");
        assert_eq!(list[2].frame, Some(PointRect::new(300.0, 300.0, 400.0, 300.0)));
        // Two minimized windows that cannot be told apart: CG's entries stand for them, once.
        let mut twin = ax(0, "Doc", A);
        twin.minimized = true;
        let mut off_a = cg(10, 7, None, A);
        off_a.on_screen = false;
        let mut off_b = cg(11, 7, None, A);
        off_b.on_screen = false;
        let list = list_windows(
            &[off_a, off_b],
            &[app(7, vec![twin.clone(), AxWindow { index: 1, ..twin }])],
            None,
        );
        assert_eq!(list.len(), 2, "{list:?}");
        assert!(list
            .iter()
            .all(|w| w.minimized && !w.other_space && w.ax.index().is_none()));
    }

    #[test]
    fn a_window_on_another_space_or_of_a_hidden_app() {
        let mut elsewhere = cg(12, 8, Some("Mail"), B);
        elsewhere.on_screen = false;
        let cgs = [cg(10, 7, None, A), elsewhere.clone()];
        // AXWindows lists only the current Space's windows.
        let list = list_windows(&cgs, &[app(7, vec![ax(0, "Doc", A)]), app(8, vec![])], None);
        assert_eq!(numbers(&list), vec![Some(10), Some(12)]);
        assert!(list[1].other_space && !list[1].minimized);
        assert_eq!(list[1].ax, AxMatch::Unmatched);
        assert_eq!(list[1].title, "Mail");
        // Hidden (Command-H): off screen, but not on another Space.
        let hidden = AppWindows {
            pid: 8,
            hidden: true,
            windows: vec![ax(0, "Mail", B)],
        };
        let list = list_windows(&[elsewhere], &[hidden], None);
        assert!(list[0].hidden && !list[0].other_space);
        assert_eq!(list[0].ax, AxMatch::Certain(0));
    }

    #[test]
    fn menus_the_dock_transparent_and_empty_windows_are_skipped() {
        let mut menu = cg(20, 7, None, PointRect::new(100.0, 0.0, 200.0, 300.0));
        menu.layer = 101;
        let mut dock = cg(21, 9, Some("Dock"), PointRect::new(0.0, 850.0, 1440.0, 50.0));
        dock.layer = 20;
        let mut ghost = cg(22, 7, None, B);
        ghost.alpha = 0.0;
        let flat = cg(23, 7, None, PointRect::new(10.0, 10.0, 0.0, 0.0));
        let cgs = [menu, dock, ghost, flat, cg(10, 7, None, A)];
        let list = list_windows(&cgs, &[app(7, vec![ax(0, "Doc", A)])], None);
        assert_eq!(numbers(&list), vec![Some(10)]);
        assert!(!is_normal_window(&cgs[0]));
        assert!(is_normal_window(&cgs[4]));
    }

    #[test]
    fn focus_is_the_frontmost_apps_focused_window() {
        let mut back = ax(0, "Doc", A);
        back.main = true;
        let mut front = ax(1, "Inspector", B);
        front.focused = true;
        let cgs = [cg(11, 7, None, B), cg(10, 7, None, A), cg(30, 8, None, A)];
        let apps = [
            app(7, vec![back.clone(), front.clone()]),
            app(8, vec![ax(0, "X", A)]),
        ];
        let list = list_windows(&cgs, &apps, Some(7));
        assert_eq!(focused(&list), vec![Some(11)]);
        // Another application in front: none of app 7's.
        let list = list_windows(&cgs, &apps, Some(8));
        assert!(list.iter().all(|w| !w.focused), "app 8 has no focused AX window");
        // No AXFocused window: the main one.
        front.focused = false;
        let apps = [app(7, vec![back, front])];
        let list = list_windows(&cgs, &apps, Some(7));
        assert_eq!(focused(&list), vec![Some(10)]);
        // No frontmost application known: nothing is focused.
        assert!(list_windows(&cgs, &apps, None).iter().all(|w| !w.focused));
    }
}
