//! Global points, displays and Retina scale on macOS.
//!
//! CoreGraphics (window bounds, event locations) and Accessibility (`AXPosition`, `AXSize`)
//! speak global points: the origin at the top-left of the main display, y growing down, other
//! displays possibly at negative x or y. AppKit's `NSScreen` frames put the origin at the
//! bottom-left of the main display with y growing up. A point is a logical pixel, so lsm's
//! window-relative logical pixels are points relative to the window's frame; only captured
//! images are in pixels, at a display's backing scale (1.0, 2.0 on Retina, or another).

use lsm_core::{ErrorCode, GuiError, GuiResult, Rect};

/// Rounding slack: values read as 99.99999999 after float arithmetic still count as 100.
const EPSILON: f64 = 1e-6;

/// How far a measured capture scale may be from a display's scale and still be that scale
/// (a shadow or a one-pixel border in the image).
const CAPTURE_SCALE_TOLERANCE: f64 = 0.05;

/// A point in global points (top-left origin of the main display, y down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GlobalPoint {
    pub x: f64,
    pub y: f64,
}

/// A size in points (`AXSize`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointSize {
    pub width: f64,
    pub height: f64,
}

/// A rectangle in points: global (top-left origin) unless said otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PointRect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl PointRect {
    pub const fn new(x: f64, y: f64, width: f64, height: f64) -> Self {
        Self { x, y, width, height }
    }

    pub fn origin(&self) -> GlobalPoint {
        GlobalPoint { x: self.x, y: self.y }
    }

    pub fn size(&self) -> PointSize {
        PointSize {
            width: self.width,
            height: self.height,
        }
    }

    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }

    /// No area, or not a number: nothing can be inside it.
    pub fn is_empty(&self) -> bool {
        !(self.width > 0.0 && self.height > 0.0)
    }

    /// Whether the point lies inside (right and bottom edges excluded, as for pixels).
    pub fn contains(&self, p: GlobalPoint) -> bool {
        p.x >= self.x && p.y >= self.y && p.x < self.right() && p.y < self.bottom()
    }

    /// The area both rectangles cover (0 when they do not overlap).
    pub fn overlap_area(&self, other: &PointRect) -> f64 {
        let w = self.right().min(other.right()) - self.x.max(other.x);
        let h = self.bottom().min(other.bottom()) - self.y.max(other.y);
        if w > 0.0 && h > 0.0 {
            w * h
        } else {
            0.0
        }
    }
}

/// One display: its frame in global points and its backing scale (pixels per point).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Display {
    pub frame: PointRect,
    pub scale: f64,
}

impl Display {
    /// The scale, or 1.0 when the system gave nothing usable (0, negative, not a number).
    pub fn usable_scale(&self) -> f64 {
        usable_scale(self.scale)
    }
}

fn usable_scale(scale: f64) -> f64 {
    if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    }
}

/// An `NSScreen`-style rectangle (bottom-left origin of the main display, y up) in global
/// points (top-left origin, y down). `main_height` is the main display's height in points:
/// the y axis flips around it.
pub fn cocoa_to_global(cocoa: PointRect, main_height: f64) -> PointRect {
    PointRect::new(
        cocoa.x,
        // The top edge in AppKit (y up) is its y plus its height.
        main_height - (cocoa.y + cocoa.height),
        cocoa.width,
        cocoa.height,
    )
}

/// A global rectangle back in `NSScreen` coordinates: the same flip, which is its own inverse.
pub fn global_to_cocoa(global: PointRect, main_height: f64) -> PointRect {
    PointRect::new(
        global.x,
        main_height - global.bottom(),
        global.width,
        global.height,
    )
}

/// Which display the main one is: the one at the global origin (CoreGraphics puts the main
/// display there), else the first listed (`CGGetActiveDisplayList` lists the main one first).
pub fn main_display(displays: &[Display]) -> Option<&Display> {
    displays
        .iter()
        .find(|d| d.frame.x.abs() < EPSILON && d.frame.y.abs() < EPSILON)
        .or_else(|| displays.first())
}

/// The display holding the largest part of a window: macOS draws the window at that display's
/// scale. On a tie the main display, then the first listed; a window on no display counts as
/// on the main display.
pub fn display_of_window<'a>(window: &PointRect, displays: &'a [Display]) -> Option<&'a Display> {
    let main = main_display(displays);
    let mut best: Option<(&Display, f64)> = None;
    for display in displays {
        let area = display.frame.overlap_area(window);
        if area <= 0.0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((held, held_area)) => {
                area > held_area
                    || (area == held_area
                        && main.is_some_and(|m| std::ptr::eq(m, display))
                        && !main.is_some_and(|m| std::ptr::eq(m, held)))
            }
        };
        if better {
            best = Some((display, area));
        }
    }
    best.map(|(d, _)| d).or(main)
}

/// The backing scale a window is drawn at (see [`display_of_window`]); 1.0 with no display.
pub fn window_scale(window: &PointRect, displays: &[Display]) -> f64 {
    display_of_window(window, displays).map_or(1.0, Display::usable_scale)
}

/// Floors a coordinate to whole logical pixels, forgiving float noise just below an integer.
fn floor_px(v: f64) -> f64 {
    (v + EPSILON).floor()
}

/// Ceils a coordinate to whole logical pixels, forgiving float noise just above an integer.
fn ceil_px(v: f64) -> f64 {
    (v - EPSILON).ceil()
}

/// Saturating conversion: an absurd coordinate stays absurd instead of wrapping.
fn to_i32(v: f64) -> i32 {
    if v.is_nan() {
        0
    } else {
        v.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
    }
}

/// A rectangle of points in whole logical pixels: the origin rounded down and the far edge up,
/// so the integer box covers every part of it (a Retina half-point included).
pub fn covering_rect(r: PointRect) -> Rect {
    let (x0, y0) = (floor_px(r.x), floor_px(r.y));
    let (x1, y1) = (ceil_px(r.right()), ceil_px(r.bottom()));
    Rect::new(
        to_i32(x0),
        to_i32(y0),
        to_i32((x1 - x0).max(0.0)),
        to_i32((y1 - y0).max(0.0)),
    )
}

/// A window's frame for `gui_list`: screen logical pixels (global points, covering rule).
pub fn window_bounds(window: &PointRect) -> Rect {
    covering_rect(*window)
}

/// An element's global frame (`AXPosition`/`AXSize`) relative to its window's global frame, in
/// logical pixels (covering rule of [`covering_rect`]).
pub fn element_to_window(element: &PointRect, window: &PointRect) -> Rect {
    covering_rect(PointRect::new(
        element.x - window.x,
        element.y - window.y,
        element.width,
        element.height,
    ))
}

/// A window-relative logical point in global points, with no check (see [`input_point`]).
pub fn window_point_to_global(x: f64, y: f64, window: &PointRect) -> GlobalPoint {
    GlobalPoint {
        x: window.x + x,
        y: window.y + y,
    }
}

/// A global point relative to a window's frame: the inverse of [`window_point_to_global`].
pub fn global_to_window_point(p: GlobalPoint, window: &PointRect) -> (f64, f64) {
    (p.x - window.x, p.y - window.y)
}

/// Where a CGEvent must go for a window-relative point the model gave: `OUT_OF_BOUNDS` when
/// it is outside the window (input would reach another window) or on no display (the event
/// would be clamped to a screen edge and hit something else); `INVALID_ARGUMENT` when not a
/// number.
pub fn input_point(x: f64, y: f64, window: &PointRect, displays: &[Display]) -> GuiResult<GlobalPoint> {
    if !x.is_finite() || !y.is_finite() {
        return Err(GuiError::invalid(format!(
            "point ({x}, {y}) is not a pair of finite numbers"
        )));
    }
    let inside = PointRect::new(0.0, 0.0, window.width, window.height);
    let relative = GlobalPoint { x, y };
    if !inside.contains(relative) {
        return Err(GuiError::new(
            ErrorCode::OutOfBounds,
            format!(
                "point ({x}, {y}) is outside the window's area (0, 0)-({}, {}): use a point inside \
                 the window",
                window.width, window.height
            ),
        ));
    }
    let global = window_point_to_global(x, y, window);
    if !displays.iter().any(|d| d.frame.contains(global)) {
        return Err(GuiError::new(
            ErrorCode::OutOfBounds,
            format!(
                "point ({x}, {y}) is inside the window but on no display (global ({}, {})): that \
                 part of the window is off screen; move the window onto a display or use a point \
                 in its visible part",
                global.x, global.y
            ),
        ));
    }
    Ok(global)
}

/// The scale (pixels per point) a window capture was taken at. `screencapture` and
/// ScreenCaptureKit capture at a display's backing scale, and a window across two displays of
/// different scale at one of them: the measured ratio (image width over window width) is
/// snapped to the nearest display's scale when within 5 %, else kept as measured. With no
/// usable measure, the window's own scale.
pub fn capture_scale(image_width_px: u32, window: &PointRect, displays: &[Display]) -> f64 {
    let measured = f64::from(image_width_px) / window.width;
    if image_width_px == 0 || !measured.is_finite() || measured <= 0.0 {
        return window_scale(window, displays);
    }
    let nearest = displays
        .iter()
        .map(Display::usable_scale)
        .min_by(|a, b| (a - measured).abs().total_cmp(&(b - measured).abs()));
    match nearest {
        Some(s) if (s - measured).abs() <= s * CAPTURE_SCALE_TOLERANCE => s,
        _ => measured,
    }
}

/// A rectangle of image pixels (relative to a capture of the window, whose top-left is the
/// window's) in window-relative logical pixels: divided by the capture scale, covering rule.
pub fn pixels_to_window(pixels: Rect, capture_scale: f64) -> Rect {
    let s = usable_scale(capture_scale);
    covering_rect(PointRect::new(
        f64::from(pixels.x) / s,
        f64::from(pixels.y) / s,
        f64::from(pixels.width) / s,
        f64::from(pixels.height) / s,
    ))
}

/// Window-relative logical pixels in image pixels of a capture (to crop an element): times
/// the capture scale, covering rule.
pub fn window_to_pixels(logical: Rect, capture_scale: f64) -> Rect {
    let s = usable_scale(capture_scale);
    covering_rect(PointRect::new(
        f64::from(logical.x) * s,
        f64::from(logical.y) * s,
        f64::from(logical.width) * s,
        f64::from(logical.height) * s,
    ))
}

/// An image pixel of a window capture as a window-relative logical point (its top-left).
pub fn pixel_to_window_point(px: i32, py: i32, capture_scale: f64) -> (f64, f64) {
    let s = usable_scale(capture_scale);
    (f64::from(px) / s, f64::from(py) / s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn display(x: f64, y: f64, w: f64, h: f64, scale: f64) -> Display {
        Display {
            frame: PointRect::new(x, y, w, h),
            scale,
        }
    }

    /// A 1440x900 Retina main display, a 1920x1080 1x display left of it and a 2560x1440 1x
    /// display above it.
    fn desk() -> Vec<Display> {
        vec![
            display(0.0, 0.0, 1440.0, 900.0, 2.0),
            display(-1920.0, 0.0, 1920.0, 1080.0, 1.0),
            display(-560.0, -1440.0, 2560.0, 1440.0, 1.0),
        ]
    }

    #[test]
    fn top_left_origin_element_to_window() {
        let window = PointRect::new(100.0, 50.0, 800.0, 600.0);
        let button = PointRect::new(130.0, 80.0, 75.0, 30.0);
        assert_eq!(element_to_window(&button, &window), Rect::new(30, 30, 75, 30));
        // A Retina half-point edge is covered, never cut.
        let half = PointRect::new(130.5, 80.5, 10.0, 10.0);
        assert_eq!(element_to_window(&half, &window), Rect::new(30, 30, 11, 11));
        // Float noise does not grow a box by a pixel.
        let noisy = PointRect::new(129.999_999_9, 80.000_000_1, 75.000_000_1, 30.0);
        assert_eq!(element_to_window(&noisy, &window), Rect::new(30, 30, 75, 30));
        assert_eq!(window_bounds(&window), Rect::new(100, 50, 800, 600));
    }

    #[test]
    fn displays_left_of_and_above_the_main_one() {
        let displays = desk();
        assert_eq!(main_display(&displays), Some(&displays[0]));
        let left = PointRect::new(-1500.0, 200.0, 800.0, 600.0);
        assert_eq!(window_scale(&left, &displays), 1.0);
        assert_eq!(window_bounds(&left), Rect::new(-1500, 200, 800, 600));
        let above = PointRect::new(-300.0, -1000.0, 640.0, 480.0);
        assert_eq!(display_of_window(&above, &displays), Some(&displays[2]));
        let item = PointRect::new(-290.5, -990.0, 20.0, 20.0);
        assert_eq!(element_to_window(&item, &above), Rect::new(9, 10, 21, 20));
        let p = input_point(10.0, 20.0, &above, &displays).expect("on the display above");
        assert_eq!(p, GlobalPoint { x: -290.0, y: -980.0 });
    }

    #[test]
    fn retina_and_window_across_two_scales() {
        let displays = desk();
        let retina = PointRect::new(100.0, 100.0, 800.0, 600.0);
        assert_eq!(window_scale(&retina, &displays), 2.0);
        // 300 points on the 1x display to the left, 500 on the Retina main one: 2x.
        let across = PointRect::new(-300.0, 100.0, 800.0, 600.0);
        assert_eq!(window_scale(&across, &displays), 2.0);
        // 500 to the left, 300 on the main one: 1x.
        let mostly_left = PointRect::new(-500.0, 100.0, 800.0, 600.0);
        assert_eq!(window_scale(&mostly_left, &displays), 1.0);
        // A tie goes to the main display.
        let tie = PointRect::new(-400.0, 100.0, 800.0, 600.0);
        assert_eq!(window_scale(&tie, &displays), 2.0);
        // Off every display: the main one's; no display at all: 1.0.
        let lost = PointRect::new(5000.0, 5000.0, 100.0, 100.0);
        assert_eq!(window_scale(&lost, &displays), 2.0);
        assert_eq!(window_scale(&retina, &[]), 1.0);
        // A display that reports no usable scale counts as 1x.
        assert_eq!(
            window_scale(&retina, &[display(0.0, 0.0, 1440.0, 900.0, 0.0)]),
            1.0
        );
    }

    #[test]
    fn round_trip_window_point_global_and_back() {
        let displays = desk();
        for window in [
            PointRect::new(100.0, 50.0, 800.0, 600.0),
            PointRect::new(-1800.0, 10.0, 900.0, 700.0),
            PointRect::new(-300.0, -1000.0, 640.0, 480.0),
            PointRect::new(-300.5, 100.5, 800.0, 600.0),
        ] {
            for (x, y) in [(0.0, 0.0), (10.5, 20.25), (399.0, 299.0)] {
                let g = input_point(x, y, &window, &displays).expect("inside and on a display");
                assert_eq!(g, window_point_to_global(x, y, &window));
                assert_eq!(global_to_window_point(g, &window), (x, y), "{window:?}");
            }
        }
        // The centre of an element as listed lands inside the element.
        let window = PointRect::new(-300.5, 100.5, 800.0, 600.0);
        let element = PointRect::new(-250.0, 140.5, 31.0, 17.0);
        let r = element_to_window(&element, &window);
        let cx = f64::from(r.x) + f64::from(r.width) / 2.0;
        let cy = f64::from(r.y) + f64::from(r.height) / 2.0;
        let g = input_point(cx, cy, &window, &displays).expect("inside");
        assert!(element.contains(g), "{g:?} outside {element:?}");
    }

    #[test]
    fn nsscreen_bottom_left_to_global() {
        let main_height = 900.0;
        // The main screen itself.
        let main = PointRect::new(0.0, 0.0, 1440.0, 900.0);
        assert_eq!(cocoa_to_global(main, main_height), main);
        // A display above the main one: in AppKit its y is the main height (y up).
        let above = PointRect::new(-560.0, 900.0, 2560.0, 1440.0);
        assert_eq!(
            cocoa_to_global(above, main_height),
            PointRect::new(-560.0, -1440.0, 2560.0, 1440.0)
        );
        // A taller display left of the main one, bottoms aligned: it reaches 180 points lower.
        let left = PointRect::new(-1920.0, -180.0, 1920.0, 1080.0);
        let g = cocoa_to_global(left, main_height);
        assert_eq!(g, PointRect::new(-1920.0, 0.0, 1920.0, 1080.0));
        assert_eq!(global_to_cocoa(g, main_height), left);
    }

    #[test]
    fn points_outside_the_window_or_off_every_display() {
        let displays = desk();
        let window = PointRect::new(100.0, 50.0, 800.0, 600.0);
        for (x, y) in [(-1.0, 10.0), (10.0, -0.5), (800.0, 10.0), (10.0, 600.0)] {
            let e = input_point(x, y, &window, &displays).expect_err("outside");
            assert_eq!(e.code, ErrorCode::OutOfBounds);
            assert!(e.message.contains("outside the window"), "{}", e.message);
        }
        let e = input_point(f64::NAN, 1.0, &window, &displays).expect_err("nan");
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        // Partly below the main display (900 high) where nothing is: the part below is off screen.
        let low = PointRect::new(100.0, 800.0, 400.0, 300.0);
        assert!(input_point(10.0, 50.0, &low, &displays).is_ok());
        let e = input_point(10.0, 150.0, &low, &displays).expect_err("below the main display");
        assert_eq!(e.code, ErrorCode::OutOfBounds);
        assert!(e.message.contains("on no display"), "{}", e.message);
        assert!(input_point(1.0, 1.0, &window, &[]).is_err(), "no display at all");
    }

    #[test]
    fn captures_in_pixels_to_logical() {
        let displays = desk();
        let window = PointRect::new(-300.0, 100.0, 800.0, 600.0);
        assert_eq!(capture_scale(1600, &window, &displays), 2.0);
        assert_eq!(capture_scale(800, &window, &displays), 1.0);
        // A one-pixel border or shadow still snaps to the display's scale.
        assert_eq!(capture_scale(1612, &window, &displays), 2.0);
        // A scale no display has is kept as measured.
        assert_eq!(capture_scale(1200, &window, &displays), 1.5);
        // Nothing measured: the window's scale.
        assert_eq!(capture_scale(0, &window, &displays), 2.0);
        let flat = PointRect::new(0.0, 0.0, 0.0, 0.0);
        assert_eq!(capture_scale(100, &flat, &displays), 2.0);

        let px = Rect::new(61, 60, 151, 60);
        // Pixels 61..212 are points 30.5..106: covered by 30..106.
        assert_eq!(pixels_to_window(px, 2.0), Rect::new(30, 30, 76, 30));
        assert_eq!(pixels_to_window(px, 1.0), px);
        assert_eq!(
            window_to_pixels(Rect::new(30, 30, 75, 30), 2.0),
            Rect::new(60, 60, 150, 60)
        );
        assert_eq!(pixel_to_window_point(61, 60, 2.0), (30.5, 30.0));
        assert_eq!(
            pixel_to_window_point(61, 60, 0.0),
            (61.0, 60.0),
            "unusable scale: 1x"
        );
    }
}
