//! The coordinate space of one observation.
//!
//! Backends report window-relative **logical** pixels. When the window's long edge exceeds the
//! image cap (`Limits::max_image_edge`), the whole observation — element bounds, screenshot
//! pixels and the `x`/`y` that `gui_action` accepts for its `state_id` — uses one uniformly
//! scaled space instead, so that a caller never does scaling arithmetic: a point read off the
//! screenshot is sent back as is, and lsm converts it to logical pixels.

use crate::geometry::{Point, Rect};

/// A window-relative space of `width x height` units laid over a window of
/// `logical_width x logical_height` logical pixels (same origin, same aspect up to rounding).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Space {
    pub width: i32,
    pub height: i32,
    pub logical_width: i32,
    pub logical_height: i32,
}

impl Space {
    /// The space of logical pixels itself.
    pub fn identity(logical_width: i32, logical_height: i32) -> Self {
        let (w, h) = (logical_width.max(0), logical_height.max(0));
        Self {
            width: w,
            height: h,
            logical_width: w,
            logical_height: h,
        }
    }

    /// The space for a window of this logical size: logical pixels when its long edge is at
    /// most `max_edge` (0: no cap), else scaled so that the long edge is exactly `max_edge`.
    pub fn for_window(logical_width: i32, logical_height: i32, max_edge: u32) -> Self {
        let id = Self::identity(logical_width, logical_height);
        let long = id.width.max(id.height);
        if max_edge == 0 || long <= max_edge as i32 {
            return id;
        }
        let s = max_edge as f64 / long as f64;
        let side = |v: i32| ((v as f64 * s).round() as i32).clamp(1, max_edge as i32);
        Self {
            width: side(id.width),
            height: side(id.height),
            ..id
        }
    }

    pub fn is_identity(&self) -> bool {
        self.width == self.logical_width && self.height == self.logical_height
    }

    /// Space units per logical pixel (the long edge's ratio; 1.0 for the identity).
    pub fn scale(&self) -> f64 {
        if self.is_identity() {
            return 1.0;
        }
        if self.logical_width >= self.logical_height {
            ratio(self.width, self.logical_width)
        } else {
            ratio(self.height, self.logical_height)
        }
    }

    /// The whole space as a rectangle at the origin: what points are checked against.
    pub fn area(&self) -> Rect {
        Rect::new(0, 0, self.width, self.height)
    }

    fn sx(&self) -> f64 {
        ratio(self.width, self.logical_width)
    }

    fn sy(&self) -> f64 {
        ratio(self.height, self.logical_height)
    }

    /// A logical rectangle in this space, rounded outward: the result covers every space unit
    /// the rectangle touches.
    pub fn rect_to_space(&self, r: Rect) -> Rect {
        if self.is_identity() {
            return r;
        }
        scale_rect(r, self.sx(), self.sy())
    }

    /// A logical rectangle in an image of `width x height` pixels laid over the window,
    /// rounded outward (used for physical screenshots before they are resampled).
    pub fn rect_to_image(&self, r: Rect, width: u32, height: u32) -> Rect {
        scale_rect(
            r,
            ratio(width as i32, self.logical_width),
            ratio(height as i32, self.logical_height),
        )
    }

    /// A point of this space in logical pixels: the logical pixel under the centre of the
    /// space unit, kept inside the window. Exact for the identity.
    pub fn point_to_logical(&self, p: Point) -> Point {
        if self.is_identity() {
            return p;
        }
        let back = |v: i32, s: f64, max: i32| {
            let l = ((v as f64 + 0.5) / s).floor();
            (l as i32).clamp(0, (max - 1).max(0))
        };
        Point::new(
            back(p.x, self.sx(), self.logical_width),
            back(p.y, self.sy(), self.logical_height),
        )
    }

    /// A logical pixel in this space: the space unit under the pixel's centre. Exact for the
    /// identity; `point_to_space(point_to_logical(p)) == p` for every point of the space.
    pub fn point_to_space(&self, p: Point) -> Point {
        if self.is_identity() {
            return p;
        }
        Point::new(
            ((p.x as f64 + 0.5) * self.sx()).floor() as i32,
            ((p.y as f64 + 0.5) * self.sy()).floor() as i32,
        )
    }
}

fn ratio(a: i32, b: i32) -> f64 {
    if b <= 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

fn scale_rect(r: Rect, sx: f64, sy: f64) -> Rect {
    // A tiny epsilon keeps exact products (e.g. 300 * 2/3 = 199.99999999999997) from being
    // rounded outward by a whole unit.
    const EPS: f64 = 1e-9;
    let x0 = (r.x as f64 * sx + EPS).floor();
    let y0 = (r.y as f64 * sy + EPS).floor();
    let x1 = ((r.x as f64 + r.width.max(0) as f64) * sx - EPS).ceil();
    let y1 = ((r.y as f64 + r.height.max(0) as f64) * sy - EPS).ceil();
    Rect::new(
        x0 as i32,
        y0 as i32,
        (x1 - x0).max(0.0) as i32,
        (y1 - y0).max(0.0) as i32,
    )
}

/// Says what a space other than plain logical pixels is.
pub(crate) fn space_note(
    space: &Space,
    window: &crate::model::WindowInfo,
    cap: u32,
    display_scale: Option<f64>,
) -> Option<String> {
    let mut parts = Vec::new();
    if !space.is_identity() {
        parts.push(format!(
            "the window is {}x{} logical px, more than the {cap} px image cap: this observation is scaled by {:.4} \
             to {}x{}; element bounds, screenshot pixels and gui_action x/y for this state_id are all in this \
             scaled space (lsm converts), use them as they are",
            window.bounds.width,
            window.bounds.height,
            space.scale(),
            space.width,
            space.height
        ));
    }
    if let Some(ds) = display_scale {
        parts.push(format!(
            "the display has {ds} physical px per logical px; the screenshot was resampled so that one image pixel \
             is one unit of this space"
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_windows_keep_logical_pixels() {
        let s = Space::for_window(600, 511, 1568);
        assert!(s.is_identity());
        assert_eq!(s.scale(), 1.0);
        let r = Rect::new(-3, 7, 10, 11);
        assert_eq!(s.rect_to_space(r), r);
        assert_eq!(s.point_to_logical(Point::new(599, 0)), Point::new(599, 0));
        assert!(Space::for_window(5000, 4000, 0).is_identity(), "0 means no cap");
    }

    #[test]
    fn the_long_edge_is_capped_uniformly() {
        let s = Space::for_window(600, 511, 400);
        assert_eq!((s.width, s.height), (400, 341));
        assert!((s.scale() - 400.0 / 600.0).abs() < 1e-12);
        let tall = Space::for_window(300, 3000, 1568);
        assert_eq!((tall.width, tall.height), (157, 1568));
        // Extreme aspect: never a zero-sized side.
        assert_eq!(Space::for_window(100_000, 1, 1000).height, 1);
    }

    #[test]
    fn bounds_round_outward_and_cover_the_element() {
        let s = Space::for_window(600, 450, 400); // 2/3 on both axes
        assert_eq!(
            s.rect_to_space(Rect::new(0, 0, 600, 450)),
            Rect::new(0, 0, 400, 300)
        );
        assert_eq!(
            s.rect_to_space(Rect::new(300, 150, 30, 30)),
            Rect::new(200, 100, 20, 20)
        );
        // Not on the grid: grows to the enclosing units.
        assert_eq!(s.rect_to_space(Rect::new(10, 10, 1, 1)), Rect::new(6, 6, 2, 2));
        assert_eq!(s.rect_to_space(Rect::new(1, 1, 3, 3)), Rect::new(0, 0, 3, 3));
        // Every logical pixel of the element lies inside its scaled bounds.
        let r = Rect::new(17, 23, 41, 9);
        let sr = s.rect_to_space(r);
        for x in r.x..r.x + r.width {
            for y in r.y..r.y + r.height {
                assert!(
                    sr.contains(s.point_to_space(Point::new(x, y))),
                    "({x},{y}) in {sr:?}"
                );
            }
        }
    }

    #[test]
    fn points_round_trip_within_one_unit() {
        let s = Space::for_window(1366, 741, 1000);
        for &(x, y) in &[(0, 0), (1, 1), (683, 370), (1365, 740), (999, 3)] {
            let p = Point::new(x, y);
            let back = s.point_to_logical(s.point_to_space(p));
            // One space unit spans 1/scale logical pixels.
            let tol = (1.0 / s.scale()).ceil() as i32;
            assert!(
                (back.x - x).abs() <= tol && (back.y - y).abs() <= tol,
                "{p:?} -> {back:?}"
            );
        }
        // Every unit of the space maps inside the window, and units map back to themselves.
        for x in 0..s.width {
            let l = s.point_to_logical(Point::new(x, 0));
            assert!((0..1366).contains(&l.x));
            assert_eq!(s.point_to_space(l).x, x);
        }
        let far = s.point_to_logical(Point::new(s.width - 1, s.height - 1));
        assert!(far.x <= 1365 && far.y <= 740);
    }

    #[test]
    fn the_centre_of_scaled_bounds_lands_in_the_element() {
        let s = Space::for_window(600, 511, 400);
        for r in [
            Rect::new(310, 276, 280, 56),
            Rect::new(10, 10, 284, 22),
            Rect::new(3, 400, 9, 7),
        ] {
            let c = s.rect_to_space(r).center();
            assert!(r.contains(s.point_to_logical(c)), "{r:?}: centre {c:?}");
        }
    }

    #[test]
    fn physical_images_get_their_own_ratio() {
        let s = Space::for_window(600, 500, 1568);
        assert_eq!(
            s.rect_to_image(Rect::new(10, 20, 30, 40), 1200, 1000),
            Rect::new(20, 40, 60, 80)
        );
        assert_eq!(
            s.rect_to_image(Rect::new(10, 20, 30, 40), 900, 750),
            Rect::new(15, 30, 45, 60)
        );
    }
}
