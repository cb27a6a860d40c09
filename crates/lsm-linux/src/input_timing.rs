//! Pauses in raw input that every Linux window system needs, because they are the toolkits'
//! limits (GTK's, Qt's), not the window system's: the X11 and Wayland input paths both use them.

use std::time::Duration;

/// How long a button is held in a click: as a hand holds it, longer than a frame. GTK 4 lost
/// clicks held 15 ms while it was busy drawing (gtk4-widget-factory on a loaded 2-core X11
/// machine: the press and release reached the window, the check box did not toggle; with
/// xdotool 4 of 150), none of 150 held 60 ms or 80 ms; on mutter a press and release sent back
/// to back were missed by GTK 4 too.
pub const PRESS_HOLD: Duration = Duration::from_millis(60);
