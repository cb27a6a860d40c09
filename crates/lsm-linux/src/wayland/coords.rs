//! Where AT-SPI coordinates start on Wayland. There, screen and window coordinates are both
//! window-local, and their origin depends on the toolkit and its version: GTK 3 counts from the
//! client surface (its CSD shadow included), GTK 4.8 from the window geometry (shadow
//! excluded), Qt 5 from inside its own client-side decoration. The compositor (the lsm GNOME
//! Shell extension, a KWin script) knows each window's frame rect (what the user sees as the
//! window) and buffer rect (the whole surface); comparing the root accessible's size with them
//! tells which origin a window uses. The rule is applied per window, not per toolkit: GTK 4 used
//! the surface origin on X11 and the window geometry on Wayland.

use lsm_core::Rect;

/// Where a window's AT-SPI coordinates start, found from the sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtspiOrigin {
    /// The root accessible is as large as the buffer: coordinates count from the surface.
    Buffer,
    /// As large as the frame: from the window geometry.
    Frame,
    /// Smaller than the frame, in it: from the content inside a client-side decoration drawn
    /// by the toolkit itself (Qt), `side` px in from the left and `top` px down.
    Decorated { side: i32, top: i32 },
}

/// Which origin a window's AT-SPI coordinates use, from the root accessible's size and the
/// compositor's frame and buffer rects (screen logical px). `None`: none of the rules fits (say
/// so rather than guess).
pub fn atspi_origin(root_width: i32, root_height: i32, frame: Rect, buffer: Rect) -> Option<AtspiOrigin> {
    if root_width <= 0 || root_height <= 0 {
        return None;
    }
    let size = (root_width, root_height);
    if size == (buffer.width, buffer.height) {
        return Some(AtspiOrigin::Buffer);
    }
    if size == (frame.width, frame.height) {
        return Some(AtspiOrigin::Frame);
    }
    let (dw, dh) = (frame.width - root_width, frame.height - root_height);
    // A decoration as the toolkit draws it: equal borders left and right, a title bar on top.
    if dw >= 0 && dh >= 0 && dw % 2 == 0 {
        let side = dw / 2;
        let top = dh - side;
        if top >= 0 {
            return Some(AtspiOrigin::Decorated { side, top });
        }
    }
    None
}

impl AtspiOrigin {
    /// What to add to a window's AT-SPI coordinates to get frame-relative ones (lsm's
    /// window-relative coordinates: the frame is the window).
    pub fn to_frame(self, frame: Rect, buffer: Rect) -> (i32, i32) {
        match self {
            AtspiOrigin::Buffer => (buffer.x - frame.x, buffer.y - frame.y),
            AtspiOrigin::Frame => (0, 0),
            AtspiOrigin::Decorated { side, top } => (side, top),
        }
    }
}

/// A frame-relative point in the window's buffer coordinates (what mutter's
/// `NotifyPointerMotionAbsolute` on a `RecordWindow` stream takes).
pub fn frame_to_buffer(x: i32, y: i32, frame: Rect, buffer: Rect) -> (i32, i32) {
    (x + frame.x - buffer.x, y + frame.y - buffer.y)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Measured on GNOME Shell 43 headless (mutter's RecordWindow frames matched, clicks proven).

    #[test]
    fn gtk3_counts_from_the_surface_with_its_shadow() {
        let (frame, buffer) = (Rect::new(0, 32, 1415, 732), Rect::new(-26, 9, 1467, 784));
        let o = atspi_origin(1467, 784, frame, buffer).expect("a rule");
        assert_eq!(o, AtspiOrigin::Buffer);
        // The 'Page 1' radio at AT-SPI (551,23) lies 26 px left and 23 px above in the frame.
        assert_eq!(o.to_frame(frame, buffer), (-26, -23));
        assert_eq!(frame_to_buffer(551 - 26, 23 - 23, frame, buffer), (551, 23));
    }

    #[test]
    fn gtk4_counts_from_the_window_geometry() {
        let (frame, buffer) = (Rect::new(0, 32, 1405, 768), Rect::new(-14, 20, 1433, 797));
        let o = atspi_origin(1405, 768, frame, buffer).expect("a rule");
        assert_eq!(o, AtspiOrigin::Frame);
        assert_eq!(o.to_frame(frame, buffer), (0, 0));
        // The 'Page 1' label at (544,11) is drawn at buffer (558,23): buffer + (14,12).
        assert_eq!(frame_to_buffer(544, 11, frame, buffer), (558, 23));
    }

    #[test]
    fn qt5_counts_from_inside_its_own_decoration() {
        let frame = Rect::new(50, 82, 310, 331);
        let o = atspi_origin(304, 298, frame, frame).expect("a rule");
        assert_eq!(o, AtspiOrigin::Decorated { side: 3, top: 30 });
        // 'Backspace' at (11,53) is drawn at about (14,83) in the buffer.
        assert_eq!(frame_to_buffer(11 + 3, 53 + 30, frame, frame), (14, 83));
    }

    #[test]
    fn sizes_no_rule_explains_are_not_guessed() {
        let frame = Rect::new(0, 0, 300, 200);
        assert_eq!(atspi_origin(301, 200, frame, frame), None); // larger than the frame
        assert_eq!(atspi_origin(297, 190, frame, frame), None); // uneven sides
        assert_eq!(atspi_origin(0, 0, frame, frame), None);
        assert_eq!(atspi_origin(290, 198, frame, frame), None); // a top thinner than the sides
    }
}
