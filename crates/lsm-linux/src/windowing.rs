//! The window system under the AT-SPI half of the backend: X11 (also XWayland's display),
//! GNOME on Wayland (lsm's Shell extension + mutter's remote-desktop API), or KDE Plasma on
//! Wayland (KWin scripts + the RemoteDesktop portal), one value the backend holds. Everything
//! the backend needs of it (windows, the screen, raising, raw input, pixels) goes through
//! `backend/windows.rs`, so observing and acting are written once for all.

use crate::wayland::gnome::Gnome;
use crate::wayland::kde::Kde;
use crate::wayland::shell_windows::ShellWindow;
use crate::window::WindowRecord;
use crate::x11::X11;
use lsm_core::GuiResult;
use std::sync::{Arc, Mutex};

pub(crate) enum WindowSystem {
    X11(Arc<Mutex<X11>>),
    Gnome(Arc<Gnome>),
    Kde(Arc<Kde>),
}

/// A Wayland compositor whose window list lsm reads in the extension's format.
pub(crate) enum Compositor<'a> {
    Gnome(&'a Gnome),
    Kde(&'a Kde),
}

impl Compositor<'_> {
    /// A window's record as of the last list.
    pub(crate) fn shell_window(&self, handle: u32) -> GuiResult<ShellWindow> {
        match self {
            Self::Gnome(g) => g.shell_window(handle),
            Self::Kde(k) => k.shell_window(handle),
        }
    }

    /// The windows of a process as of the last list, by compositor id.
    pub(crate) fn last_of_process(&self, pid: i64) -> Vec<ShellWindow> {
        match self {
            Self::Gnome(g) => g.window_list().last_of_process(pid),
            Self::Kde(k) => k.window_list().last_of_process(pid),
        }
    }

    /// The windows of a process now (a list shared within `LIST_FRESH`), by compositor id.
    pub(crate) async fn process_windows_now(&self, pid: i64) -> GuiResult<Vec<ShellWindow>> {
        let list = match self {
            Self::Gnome(g) => g.list().await?,
            Self::Kde(k) => k.list().await?,
        };
        Ok(crate::wayland::window_list::of_process(list.windows, pid))
    }

    pub(crate) fn window_of(&self, w: &ShellWindow) -> WindowRecord {
        match self {
            Self::Gnome(g) => g.window_of(w),
            Self::Kde(k) => k.window_of(w),
        }
    }

    /// Stage px per logical px of a window (KWin's rects are logical).
    pub(crate) fn stage_scale(&self, w: &ShellWindow) -> f64 {
        match self {
            Self::Gnome(g) => g.stage_scale(w),
            Self::Kde(_) => 1.0,
        }
    }
}

impl WindowSystem {
    /// The backend name `gui_list` reports.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::X11(_) => "linux-x11",
            Self::Gnome(g) if g.portal_reason().is_some() => "linux-wayland-portal",
            Self::Gnome(_) => "linux-wayland-gnome",
            Self::Kde(_) => "linux-wayland-kde",
        }
    }

    /// The `method` of an action carried out by raw input.
    pub(crate) fn input_method(&self) -> &'static str {
        match self {
            Self::X11(_) => "xtest",
            Self::Gnome(g) if g.portal_reason().is_some() => "portal_remote_desktop",
            Self::Gnome(_) => "mutter_remote_desktop",
            Self::Kde(_) => "portal_remote_desktop",
        }
    }

    /// The `method` of typed text.
    pub(crate) fn typing_method(&self) -> &'static str {
        match self {
            Self::X11(_) => "xtest_type",
            Self::Gnome(g) if g.portal_reason().is_some() => "portal_type",
            Self::Gnome(_) => "mutter_type",
            Self::Kde(_) => "portal_type",
        }
    }

    /// The `method` of raising a window.
    pub(crate) fn activate_method(&self) -> &'static str {
        match self {
            Self::X11(_) => "x11_activate",
            Self::Gnome(_) => "gnome_shell_activate",
            Self::Kde(_) => "kwin_script_activate",
        }
    }

    pub(crate) fn session(&self) -> &'static str {
        match self {
            Self::X11(_) => "x11",
            Self::Gnome(_) | Self::Kde(_) => "wayland",
        }
    }
}
