//! Raw input only where it lands in the target: before `SendInput` the window under the point
//! (`WindowFromPoint` → `GetAncestor(GA_ROOT)`) or in the foreground must be the target or a
//! popup of its own ([`crate::modal::at_point`]). A target that is not on top is raised and
//! looked at again; one that stays covered (a topmost window over it) gets nothing, and the
//! error names the window in the way.

use super::list::{app_of, owner_of, title_of, top_levels, window_id};
use crate::modal::{at_point, is_modal, keyboard_target, AtPoint, Receiver};
use lsm_core::{ErrorCode, GuiError, GuiResult};
use std::time::Duration;
use windows::Win32::Foundation::{HWND, POINT};
use windows::Win32::UI::WindowsAndMessaging::{
    BringWindowToTop, GetAncestor, GetForegroundWindow, GetWindowLongPtrW, GetWindowThreadProcessId,
    SetForegroundWindow, SetWindowPos, WindowFromPoint, GA_ROOT, GWL_STYLE, HWND_TOP, SWP_NOMOVE, SWP_NOSIZE,
    WS_CAPTION,
};

/// How often a target that is not on top is raised and looked at again, and the pause between.
const RAISE_TRIES: u32 = 4;
const RAISE_PAUSE: Duration = Duration::from_millis(40);

fn pid_of(hwnd: HWND) -> u32 {
    let mut pid = 0u32;
    // SAFETY: `pid` is a valid out pointer.
    unsafe { GetWindowThreadProcessId(hwnd, Some(&mut pid)) };
    pid
}

/// What is known of the top-level window `root` (if any) for the rule, seen from `target`.
fn describe(target: HWND, root: Option<HWND>) -> AtPoint {
    let Some(root) = root.filter(|r| !r.is_invalid()) else {
        return AtPoint::default();
    };
    let mut owners = Vec::new();
    let mut next = owner_of(root);
    while let Some(o) = next {
        if owners.len() >= 16 || owners.contains(&(o.0 as usize)) {
            break;
        }
        owners.push(o.0 as usize);
        next = owner_of(o);
    }
    // SAFETY: a handle query; a dead window reads as style 0.
    let style = unsafe { GetWindowLongPtrW(root, GWL_STYLE) } as u32;
    let tops = top_levels();
    AtPoint {
        root: Some(root.0 as usize),
        owners,
        same_process: pid_of(root) == pid_of(target),
        captioned: style & WS_CAPTION.0 == WS_CAPTION.0,
        modal: is_modal(root.0 as usize, &tops),
    }
}

/// The top-level window that gets a click at the physical screen pixel (x, y).
fn root_at(x: i32, y: i32) -> Option<HWND> {
    // SAFETY: plain queries by value.
    unsafe {
        let hit = WindowFromPoint(POINT { x, y });
        if hit.is_invalid() {
            return None;
        }
        let root = GetAncestor(hit, GA_ROOT);
        (!root.is_invalid()).then_some(root)
    }
}

fn foreground_root() -> Option<HWND> {
    // SAFETY: plain queries.
    unsafe {
        let fg = GetForegroundWindow();
        if fg.is_invalid() {
            return None;
        }
        let root = GetAncestor(fg, GA_ROOT);
        Some(if root.is_invalid() { fg } else { root })
    }
}

/// Brings the target to the top of the Z order and to the foreground, as far as Windows lets it.
pub fn raise(target: HWND) {
    // SAFETY: calls on a live window handle; refusals are seen by looking again.
    unsafe {
        let _ = SetWindowPos(target, Some(HWND_TOP), 0, 0, 0, 0, SWP_NOMOVE | SWP_NOSIZE);
        let _ = BringWindowToTop(target);
        let _ = SetForegroundWindow(target);
    }
}

/// "window 0x… "title" (app)".
fn name(hwnd: HWND) -> String {
    let app = app_of(pid_of(hwnd));
    let app = if app.is_empty() {
        String::new()
    } else {
        format!(" ({app})")
    };
    format!("window {} {:?}{app}", window_id(hwnd), title_of(hwnd))
}

fn blocked(target: HWND, dialog: HWND) -> GuiError {
    GuiError::window_blocked(&window_id(target), &window_id(dialog), Some(&title_of(dialog)))
}

/// Makes sure a click at the physical screen pixel (x, y) goes to `target`: raises it when
/// another window is on top there, and fails (nothing sent) when it stays covered. `what` names
/// the point for the message ("point (12, 40)").
pub fn ensure_at_point(target: HWND, x: i32, y: i32, what: &str) -> GuiResult<()> {
    let mut receiver = at_point(target.0 as usize, &describe(target, root_at(x, y)));
    for _ in 0..RAISE_TRIES {
        if !matches!(receiver, Receiver::Other(_)) {
            break;
        }
        raise(target);
        std::thread::sleep(RAISE_PAUSE);
        receiver = at_point(target.0 as usize, &describe(target, root_at(x, y)));
    }
    match receiver {
        Receiver::Target => Ok(()),
        Receiver::Blocked(dialog) => Err(blocked(target, HWND(dialog as *mut std::ffi::c_void))),
        Receiver::Other(other) => {
            let other = HWND(other as *mut std::ffi::c_void);
            Err(GuiError::new(
                ErrorCode::OutOfBounds,
                format!(
                    "{what} of window {} is covered by {}, which stays on top (lsm raised the window, and it \
                     is still under it; an always-on-top window?): input there would go to that window, so \
                     nothing was sent. Move or close that window, or use a point it leaves free",
                    window_id(target),
                    name(other)
                ),
            ))
        }
        Receiver::Nothing => Err(GuiError::new(
            ErrorCode::OutOfBounds,
            format!(
                "{what} of window {} shows no window on the screen (off the screen, or a transparent part): \
                 nothing was sent",
                window_id(target)
            ),
        )),
    }
}

/// Makes sure keys go to `target`: it is (or gets) the foreground window; else nothing is sent.
pub fn ensure_foreground(target: HWND) -> GuiResult<()> {
    let mut receiver = keyboard_target(target.0 as usize, &describe(target, foreground_root()));
    for _ in 0..RAISE_TRIES {
        if receiver == Receiver::Target || matches!(receiver, Receiver::Blocked(_)) {
            break;
        }
        raise(target);
        std::thread::sleep(RAISE_PAUSE);
        receiver = keyboard_target(target.0 as usize, &describe(target, foreground_root()));
    }
    match receiver {
        Receiver::Target => Ok(()),
        Receiver::Blocked(dialog) => Err(blocked(target, HWND(dialog as *mut std::ffi::c_void))),
        other => {
            let holder = match other {
                Receiver::Other(o) => name(HWND(o as *mut std::ffi::c_void)),
                _ => "no window".to_string(),
            };
            Err(GuiError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "Windows did not let lsm bring window {} to the foreground: the keyboard goes to {holder}, \
                     so nothing was sent. Click into the window first (a click raises it), or act by element_id",
                    window_id(target)
                ),
            ))
        }
    }
}
