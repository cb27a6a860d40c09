//! A window's bounds as they are drawn on the screen.
//!
//! On Windows DWM draws the frame, and `DWMWA_EXTENDED_FRAME_BOUNDS` is the visible frame (the
//! window rectangle without its invisible resize borders). Wine has no DWM
//! (`DwmGetWindowAttribute` is `E_NOTIMPL`) and leaves the frame to the X11 window manager: the
//! X11 window it maps is the Win32 window rectangle without the parts the window manager draws
//! (title bar and border, the `AdjustWindowRectEx` sizes of the styles it asks the window
//! manager to decorate). What the window manager draws there is not the application's (with
//! none running, nothing is drawn: black). [`wine_decorations`] is Wine's rule for which parts
//! those are (`get_mwm_decorations` / `get_x11_rect_offset` in winex11.drv); the menu bar and
//! client edges stay: Wine draws them into its X11 window.

use lsm_core::geometry::Rect;

pub const WS_CAPTION: u32 = 0x00C0_0000;
pub const WS_BORDER: u32 = 0x0080_0000;
pub const WS_DLGFRAME: u32 = 0x0040_0000;
pub const WS_THICKFRAME: u32 = 0x0004_0000;
pub const WS_CHILD: u32 = 0x4000_0000;
pub const WS_EX_DLGMODALFRAME: u32 = 0x0000_0001;
pub const WS_EX_TOOLWINDOW: u32 = 0x0000_0080;
pub const WS_EX_LAYERED: u32 = 0x0008_0000;

/// The styles whose frame sizes the window manager draws instead of Wine: pass them to
/// `AdjustWindowRectEx(rect, style, FALSE, ex_style)` to get how far the X11 window lies inside
/// the Win32 window rectangle. Both zero: Wine draws everything itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Decorated {
    pub style: u32,
    pub ex_style: u32,
}

/// Which of the window's frame parts the window manager draws under Wine. `window` and `client`
/// are the Win32 window and client rectangles (same coordinates): when they are the same, the
/// window has no frame at all.
pub fn wine_decorations(style: u32, ex_style: u32, window: Rect, client: Rect) -> Decorated {
    let none = Decorated::default();
    if style & WS_CHILD != 0 || window == client || window.width <= 0 || window.height <= 0 {
        return none;
    }
    if ex_style & (WS_EX_TOOLWINDOW | WS_EX_LAYERED) != 0 {
        return none;
    }
    let title = style & WS_CAPTION == WS_CAPTION;
    let border = ex_style & WS_EX_DLGMODALFRAME != 0
        || style & WS_THICKFRAME != 0
        || style & (WS_DLGFRAME | WS_BORDER) == WS_DLGFRAME
        || title;
    let mut mask = 0;
    let mut ex_mask = 0;
    if title {
        mask |= WS_CAPTION;
    }
    if border {
        mask |= WS_DLGFRAME | WS_THICKFRAME;
        ex_mask |= WS_EX_DLGMODALFRAME;
    }
    Decorated {
        style: style & mask,
        ex_style: ex_style & ex_mask,
    }
}

/// How far each edge of the drawn part lies inside the window rectangle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Insets {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl Insets {
    /// From `AdjustWindowRectEx` applied to an empty rectangle at the origin (its left and top
    /// come out negative).
    pub fn from_adjusted(left: i32, top: i32, right: i32, bottom: i32) -> Self {
        Self {
            left: -left,
            top: -top,
            right,
            bottom,
        }
    }
}

/// The window rectangle without the parts the window manager draws. Insets that would leave
/// nothing (or reach past the client area, which the application always draws) are not applied
/// beyond the client area.
pub fn drawn_part(window: Rect, client: Rect, insets: Insets) -> Rect {
    let inset = |v: i32| v.max(0);
    let mut x0 = window.x + inset(insets.left);
    let mut y0 = window.y + inset(insets.top);
    let mut x1 = window.x + window.width - inset(insets.right);
    let mut y1 = window.y + window.height - inset(insets.bottom);
    // Never cut into the client area.
    if client.width > 0 && client.height > 0 {
        x0 = x0.min(client.x);
        y0 = y0.min(client.y);
        x1 = x1.max(client.x + client.width);
        y1 = y1.max(client.y + client.height);
    }
    if x1 <= x0 || y1 <= y0 {
        return window;
    }
    Rect::new(x0, y0, x1 - x0, y1 - y0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WS_OVERLAPPEDWINDOW: u32 = 0x00CF_0000;
    const WS_POPUP: u32 = 0x8000_0000;
    const WS_SYSMENU: u32 = 0x0008_0000;

    // lsm_wintest's main window under Wine 8.0: (100,100) 420x260, client 412x233 at (104,123).
    const WINDOW: Rect = Rect {
        x: 100,
        y: 100,
        width: 420,
        height: 260,
    };
    const CLIENT: Rect = Rect {
        x: 104,
        y: 123,
        width: 412,
        height: 233,
    };

    #[test]
    fn an_ordinary_window_leaves_title_and_border_to_the_window_manager() {
        let d = wine_decorations(WS_OVERLAPPEDWINDOW, 0, WINDOW, CLIENT);
        assert_eq!(d.style, WS_CAPTION | WS_THICKFRAME);
        assert_eq!(d.ex_style, 0);
        // Wine's AdjustWindowRectEx(WS_CAPTION | WS_THICKFRAME) = (-4,-23,4,4): the client area.
        let drawn = drawn_part(WINDOW, CLIENT, Insets::from_adjusted(-4, -23, 4, 4));
        assert_eq!(drawn, CLIENT);
    }

    #[test]
    fn a_menu_bar_stays_in_the_drawn_part() {
        // Notepad: a 19 px menu bar between the title bar and the client area.
        let client = Rect::new(104, 142, 412, 214);
        let drawn = drawn_part(WINDOW, client, Insets::from_adjusted(-4, -23, 4, 4));
        assert_eq!(drawn, CLIENT);
    }

    #[test]
    fn a_modal_dialog_frame() {
        let d = wine_decorations(
            WS_POPUP | WS_CAPTION | WS_SYSMENU,
            WS_EX_DLGMODALFRAME,
            WINDOW,
            CLIENT,
        );
        assert_eq!(d.style, WS_CAPTION);
        assert_eq!(d.ex_style, WS_EX_DLGMODALFRAME);
    }

    #[test]
    fn frameless_tool_layered_and_child_windows_are_drawn_whole() {
        let none = Decorated::default();
        assert_eq!(wine_decorations(WS_POPUP, 0, WINDOW, WINDOW), none);
        assert_eq!(
            wine_decorations(WS_OVERLAPPEDWINDOW, 0, WINDOW, WINDOW),
            none,
            "a window that took its frame away (WM_NCCALCSIZE)"
        );
        assert_eq!(
            wine_decorations(WS_OVERLAPPEDWINDOW, WS_EX_TOOLWINDOW, WINDOW, CLIENT),
            none
        );
        assert_eq!(
            wine_decorations(WS_OVERLAPPEDWINDOW, WS_EX_LAYERED, WINDOW, CLIENT),
            none
        );
        assert_eq!(wine_decorations(WS_CHILD | WS_CAPTION, 0, WINDOW, CLIENT), none);
        // A popup with a thin border only: Wine draws it.
        assert_eq!(wine_decorations(WS_POPUP | WS_BORDER, 0, WINDOW, CLIENT), none);
        assert_eq!(
            drawn_part(WINDOW, CLIENT, Insets::default()),
            WINDOW,
            "nothing to take away"
        );
    }

    #[test]
    fn a_dialog_frame_without_caption_is_bordered() {
        let d = wine_decorations(WS_POPUP | WS_DLGFRAME, 0, WINDOW, CLIENT);
        assert_eq!(d.style, WS_DLGFRAME);
    }

    #[test]
    fn insets_never_cut_into_the_client_area_or_leave_nothing() {
        let huge = Insets::from_adjusted(-500, -500, 500, 500);
        assert_eq!(drawn_part(WINDOW, CLIENT, huge), CLIENT);
        assert_eq!(
            drawn_part(WINDOW, Rect::default(), huge),
            WINDOW,
            "no client area known: keep the window"
        );
    }
}
