//! Physical and logical pixels on Windows.
//!
//! With per-monitor-v2 DPI awareness every Win32 and UI Automation rectangle is in physical
//! pixels of the virtual desktop (whose origin may be negative: monitors left of or above the
//! primary one). lsm speaks window-relative logical pixels: physical divided by the window's
//! monitor scale (its DPI over 96). SendInput's absolute coordinates are 0..=65535 across the
//! virtual desktop.

use lsm_core::geometry::Rect;

/// The DPI at which one logical pixel is one physical pixel.
pub const BASE_DPI: u32 = 96;

/// Physical pixels per logical pixel at `dpi` (96 → 1.0, 144 → 1.5, 192 → 2.0). A DPI of 0
/// (the call failed) counts as 96.
pub fn scale_of(dpi: u32) -> f64 {
    if dpi == 0 {
        1.0
    } else {
        f64::from(dpi) / f64::from(BASE_DPI)
    }
}

/// A window's frame, physical, converted to screen logical pixels for `gui_list`: the origin
/// and size divided by the scale of the window's monitor (rounded to the nearest pixel).
pub fn window_to_logical(frame: Rect, dpi: u32) -> Rect {
    let s = scale_of(dpi);
    Rect::new(
        (f64::from(frame.x) / s).round() as i32,
        (f64::from(frame.y) / s).round() as i32,
        (f64::from(frame.width) / s).round() as i32,
        (f64::from(frame.height) / s).round() as i32,
    )
}

/// An element's physical screen rectangle, relative to the window's physical frame, in
/// logical pixels: the origin rounded down and the far edge up, so the logical box covers
/// every physical pixel of the element.
pub fn element_to_window_logical(element: Rect, frame: Rect, dpi: u32) -> Rect {
    let s = scale_of(dpi);
    let x0 = (f64::from(element.x - frame.x) / s).floor();
    let y0 = (f64::from(element.y - frame.y) / s).floor();
    let x1 = (f64::from(element.x + element.width - frame.x) / s).ceil();
    let y1 = (f64::from(element.y + element.height - frame.y) / s).ceil();
    Rect::new(x0 as i32, y0 as i32, (x1 - x0) as i32, (y1 - y0) as i32)
}

/// A window-relative logical point to the physical screen pixel it names: the frame's origin
/// plus the point times the scale (the pixel under it, rounded down).
pub fn window_point_to_screen(x: f64, y: f64, frame: Rect, dpi: u32) -> (i32, i32) {
    let s = scale_of(dpi);
    (frame.x + (x * s).floor() as i32, frame.y + (y * s).floor() as i32)
}

/// SendInput's absolute coordinates (with `MOUSEEVENTF_VIRTUALDESK`) for a physical screen
/// pixel. Windows turns an absolute value `a` into the pixel `left + floor(a * width / 65536)`;
/// this picks the value in the middle of the pixel's range, so the pointer lands on exactly that
/// pixel whatever the rounding. `None` when the pixel is outside the virtual desktop.
pub fn absolute_input(px: i32, py: i32, virtual_desktop: Rect) -> Option<(i32, i32)> {
    fn axis(p: i32, origin: i32, size: i32) -> Option<i32> {
        let offset = i64::from(p) - i64::from(origin);
        if size <= 0 || offset < 0 || offset >= i64::from(size) {
            return None;
        }
        let a = ((2 * offset + 1) * 65_536) / (2 * i64::from(size));
        Some(a.clamp(0, 65_535) as i32)
    }
    Some((
        axis(px, virtual_desktop.x, virtual_desktop.width)?,
        axis(py, virtual_desktop.y, virtual_desktop.height)?,
    ))
}

/// Where Windows puts the pointer for an absolute SendInput value: the inverse of
/// [`absolute_input`], as the system computes it.
pub fn pixel_of_absolute(a: i32, origin: i32, size: i32) -> i32 {
    origin + ((i64::from(a) * i64::from(size)) >> 16) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_at_96_144_and_192_dpi() {
        assert_eq!(scale_of(96), 1.0);
        assert_eq!(scale_of(144), 1.5);
        assert_eq!(scale_of(192), 2.0);
        assert_eq!(scale_of(0), 1.0);
    }

    #[test]
    fn windows_and_elements_in_logical_pixels() {
        let frame = Rect::new(300, 150, 900, 600);
        assert_eq!(window_to_logical(frame, 96), frame);
        assert_eq!(window_to_logical(frame, 144), Rect::new(200, 100, 600, 400));
        assert_eq!(window_to_logical(frame, 192), Rect::new(150, 75, 450, 300));
        // A button 30 px into the window, 75x30 physical.
        let button = Rect::new(330, 180, 75, 30);
        assert_eq!(
            element_to_window_logical(button, frame, 96),
            Rect::new(30, 30, 75, 30)
        );
        assert_eq!(
            element_to_window_logical(button, frame, 144),
            Rect::new(20, 20, 50, 20)
        );
        assert_eq!(
            element_to_window_logical(button, frame, 192),
            Rect::new(15, 15, 38, 15)
        );
        // An odd physical edge is covered, never cut.
        let odd = Rect::new(301, 151, 3, 3);
        assert_eq!(element_to_window_logical(odd, frame, 192), Rect::new(0, 0, 2, 2));
    }

    #[test]
    fn a_logical_point_lands_inside_the_element_it_was_read_from() {
        for dpi in [96, 120, 144, 168, 192] {
            let frame = Rect::new(-1920, -200, 1200, 900); // a monitor left of and above the primary
            let button = Rect::new(-1800, -100, 91, 33);
            let b = element_to_window_logical(button, frame, dpi);
            let (cx, cy) = (
                f64::from(b.x) + f64::from(b.width) / 2.0,
                f64::from(b.y) + f64::from(b.height) / 2.0,
            );
            let (px, py) = window_point_to_screen(cx, cy, frame, dpi);
            assert!(
                button.x <= px && px < button.x + button.width,
                "dpi {dpi}: x {px} outside {button:?}"
            );
            assert!(
                button.y <= py && py < button.y + button.height,
                "dpi {dpi}: y {py} outside {button:?}"
            );
        }
        assert_eq!(
            window_point_to_screen(10.0, 20.0, Rect::new(-1000, -500, 800, 600), 144),
            (-985, -470)
        );
    }

    #[test]
    fn absolute_input_hits_every_pixel_with_negative_origins() {
        // Two monitors: 1920 wide at -1920 (144 DPI) and the primary at 0; one above at -1080.
        let desk = Rect::new(-1920, -1080, 3840, 2160);
        for px in [-1920, -1919, -1, 0, 1, 955, 1918, 1919] {
            let (ax, _) = absolute_input(px, 0, desk).expect("inside");
            assert!((0..=65_535).contains(&ax));
            assert_eq!(pixel_of_absolute(ax, desk.x, desk.width), px, "pixel {px}");
        }
        for py in [-1080, -540, -1, 0, 1079] {
            let (_, ay) = absolute_input(0, py, desk).expect("inside");
            assert_eq!(pixel_of_absolute(ay, desk.y, desk.height), py, "pixel {py}");
        }
        // Every pixel of an odd-sized desktop round-trips.
        let odd = Rect::new(-7, 3, 1366, 769);
        for px in odd.x..odd.x + odd.width {
            let (ax, _) = absolute_input(px, odd.y, odd).expect("inside");
            assert_eq!(pixel_of_absolute(ax, odd.x, odd.width), px);
        }
        assert_eq!(absolute_input(1920, 0, desk), None);
        assert_eq!(absolute_input(-1921, 0, desk), None);
        assert_eq!(absolute_input(0, 0, Rect::new(0, 0, 0, 0)), None);
    }
}
