//! Which top-level windows `gui_list` shows, and whether this session can show any.
//!
//! The rule is the taskbar's: a visible, not cloaked window (a window on another virtual
//! desktop, or a suspended UWP app, is cloaked), that is either marked as an app window or is
//! neither a tool window nor owned by another window. Owned windows (dialogs) are listed too
//! when they have a title, with `transient_for` naming their owner, as dialogs are on Linux.

use lsm_core::geometry::Rect;

/// What Win32 says of one top-level window (`EnumWindows`), gathered before deciding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowTraits {
    pub visible: bool,
    /// `DWMWA_CLOAKED` is non-zero.
    pub cloaked: bool,
    /// `WS_EX_TOOLWINDOW`.
    pub tool_window: bool,
    /// `WS_EX_APPWINDOW`: on the taskbar whatever else is true.
    pub app_window: bool,
    /// `GetWindow(GW_OWNER)` is a window.
    pub owned: bool,
    /// A modal dialog ([`crate::modal::is_modal`]): listed even without a title, since the
    /// window it blocks names it.
    pub modal: bool,
    pub title: String,
    pub minimized: bool,
    /// Frame bounds, physical.
    pub frame: Rect,
}

/// Whether `gui_list` shows the window.
pub fn listed(w: &WindowTraits) -> bool {
    if !w.visible || w.cloaked {
        return false;
    }
    // A minimized window keeps a parked position; its size says nothing.
    if !w.minimized && (w.frame.width <= 0 || w.frame.height <= 0) {
        return false;
    }
    if w.app_window {
        return true;
    }
    if w.tool_window {
        return false;
    }
    // Owned windows are dialogs and palettes: listed when they have a title to call them by.
    !w.owned || w.modal || !w.title.trim().is_empty()
}

/// Why this process's session has no desktop lsm can operate, or `None` when it has one.
/// `session_id` is `ProcessIdToSessionId` of this process (`None` when it could not be read);
/// `input_desktop` the name of the desktop that receives input (`OpenInputDesktop` +
/// `GetUserObjectInformationW`), `None` when it cannot be opened.
pub fn unavailable_reason(session_id: Option<u32>, input_desktop: Option<&str>) -> Option<String> {
    if session_id == Some(0) {
        return Some(
            "lsm runs in session 0 (a Windows service), which has no interactive desktop: run it in \
             the user's logon session, e.g. as a scheduled task at logon"
                .into(),
        );
    }
    match input_desktop {
        None => Some(
            "the input desktop cannot be opened (no interactive logon in this session, or it \
             belongs to another user)"
                .into(),
        ),
        Some(name) if name.eq_ignore_ascii_case("Default") => None,
        Some(name) if name.eq_ignore_ascii_case("Winlogon") => Some(
            "the workstation is locked or at the sign-in screen (secure desktop): windows cannot be \
             operated until the user signs in"
                .into(),
        ),
        Some(name) => Some(format!(
            "input goes to the desktop {name:?}, not this session's default desktop (a UAC prompt or \
             a screen saver): try again when it is gone"
        )),
    }
}

/// Under Wine, whether it has a display to show windows on: Wine reads `DISPLAY` (X11) or
/// `WAYLAND_DISPLAY` from the Unix environment; without either its null driver pretends a
/// 1024x768 monitor on which no window appears, so lsm says so instead of listing nothing.
pub fn wine_display_problem(
    under_wine: bool,
    display: Option<&str>,
    wayland: Option<&str>,
) -> Option<String> {
    let set = |v: Option<&str>| v.is_some_and(|v| !v.trim().is_empty());
    (under_wine && !set(display) && !set(wayland)).then(|| {
        "Wine has no display: neither DISPLAY nor WAYLAND_DISPLAY is set, so no window can be shown or \
         operated (start lsm.exe in the desktop session, with its DISPLAY)"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> WindowTraits {
        WindowTraits {
            visible: true,
            title: "Untitled - Notepad".into(),
            frame: Rect::new(100, 100, 800, 600),
            ..WindowTraits::default()
        }
    }

    #[test]
    fn the_taskbar_rule() {
        assert!(listed(&app()));
        assert!(!listed(&WindowTraits {
            visible: false,
            ..app()
        }));
        assert!(
            !listed(&WindowTraits {
                cloaked: true,
                ..app()
            }),
            "another virtual desktop"
        );
        assert!(!listed(&WindowTraits {
            tool_window: true,
            ..app()
        }));
        assert!(listed(&WindowTraits {
            tool_window: true,
            app_window: true,
            ..app()
        }));
        assert!(
            listed(&WindowTraits {
                owned: true,
                title: "Save As".into(),
                ..app()
            }),
            "a dialog"
        );
        assert!(
            !listed(&WindowTraits {
                owned: true,
                title: " ".into(),
                ..app()
            }),
            "an untitled popup"
        );
        assert!(
            listed(&WindowTraits {
                owned: true,
                modal: true,
                title: String::new(),
                ..app()
            }),
            "an untitled modal dialog: the window it blocks names it"
        );
        assert!(!listed(&WindowTraits {
            frame: Rect::new(0, 0, 0, 0),
            ..app()
        }));
        assert!(listed(&WindowTraits {
            minimized: true,
            frame: Rect::new(-32000, -32000, 0, 0),
            ..app()
        }));
    }

    #[test]
    fn wine_without_a_display_says_so() {
        assert!(wine_display_problem(true, None, None)
            .expect("no display")
            .contains("DISPLAY"));
        assert!(wine_display_problem(true, Some(" "), None).is_some());
        assert_eq!(wine_display_problem(true, Some(":81"), None), None);
        assert_eq!(wine_display_problem(true, None, Some("wayland-0")), None);
        assert_eq!(
            wine_display_problem(false, None, None),
            None,
            "real Windows has no DISPLAY"
        );
    }

    #[test]
    fn sessions_without_a_desktop_say_why() {
        assert!(unavailable_reason(Some(0), Some("Default"))
            .expect("service")
            .contains("scheduled task"));
        assert!(unavailable_reason(Some(1), None).is_some());
        assert!(unavailable_reason(Some(2), Some("Winlogon"))
            .expect("locked")
            .contains("locked"));
        assert!(unavailable_reason(Some(1), Some("Screen-saver"))
            .expect("other")
            .contains("Screen-saver"));
        assert_eq!(unavailable_reason(Some(1), Some("Default")), None);
        assert_eq!(unavailable_reason(None, Some("default")), None);
    }
}
