//! What every window system says about a window, in one shape: the window record (`WindowRecord`,
//! from X11's EWMH list, GNOME's Shell extension or a KWin script), the window id a model sees
//! (`0x…`), and which modal dialog blocks a window (`modal.rs`). Knows no window system itself:
//! X11 and Wayland build on it, and so does the backend that joins them with AT-SPI.

pub mod modal;

use lsm_core::{GuiError, GuiResult, Rect};

/// One top-level application window, as every window system reports it (the X11 names
/// below are where X11 reads each field; GNOME and KDE fill them from their own lists).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRecord {
    /// The client (application) window XID, not the WM frame.
    pub id: u32,
    /// `_NET_WM_NAME` (UTF-8), else `WM_NAME`.
    pub title: String,
    /// `WM_CLASS` instance.
    pub instance: String,
    /// `WM_CLASS` class.
    pub class: String,
    /// `_NET_WM_PID`.
    pub pid: Option<u32>,
    /// The client area in root coordinates, without WM decorations.
    pub bounds: Rect,
    /// `_GTK_FRAME_EXTENTS` left, right, top, bottom (client-side shadow), if set.
    pub gtk_frame_extents: Option<[u32; 4]>,
    pub focused: bool,
    /// Iconified, hidden, or not viewable (e.g. on another workspace).
    pub minimized: bool,
    /// `WM_TRANSIENT_FOR`: the window this one is a dialog of (None when unset or the root).
    pub transient_for: Option<u32>,
    /// `_NET_WM_STATE_MODAL`: it blocks input to the window it is transient for (or, with no
    /// such window, to its whole application).
    pub modal: bool,
}

pub fn format_window_id(xid: u32) -> String {
    format!("0x{xid:x}")
}

/// A window id as `format_window_id` writes it; any other text is no window id at all.
pub fn parse_window_id(id: &str) -> GuiResult<u32> {
    let xid = id
        .strip_prefix("0x")
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or_else(|| GuiError::malformed_window_id(id, "0x1a00007"))?;
    if xid == 0 {
        return Err(GuiError::window_not_found(id));
    }
    Ok(xid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::ErrorCode;

    #[test]
    fn window_ids_round_trip_and_reject_garbage() {
        assert_eq!(
            parse_window_id(&format_window_id(0x1a00007)).ok(),
            Some(0x1a00007)
        );
        for bad in ["", "0x", "123", "0xzz", "0x1ffffffff", "not-a-window"] {
            assert_eq!(
                parse_window_id(bad).map_err(|e| e.code),
                Err(ErrorCode::InvalidArgument),
                "{bad}"
            );
        }
        assert_eq!(
            parse_window_id("0x0").map_err(|e| e.code),
            Err(ErrorCode::WindowNotFound)
        );
    }
}
