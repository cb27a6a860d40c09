//! Integer geometry in logical pixels.

use serde::{Deserialize, Serialize};

/// A point in logical pixels. Which space (screen or window-relative) is said where it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

impl Point {
    pub fn new(x: i32, y: i32) -> Self {
        Self { x, y }
    }
    pub fn offset(self, dx: i32, dy: i32) -> Self {
        Self {
            x: self.x.saturating_add(dx),
            y: self.y.saturating_add(dy),
        }
    }
}

/// An axis-aligned rectangle; `x`/`y` is the top-left corner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

/// An element's bounds in JSON as `[x, y, width, height]`: four numbers instead of an object
/// with four keys, the largest saving in an observation of many elements.
pub mod rect_array {
    use super::Rect;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(r: &Option<Rect>, s: S) -> Result<S::Ok, S::Error> {
        r.map(|r| [r.x, r.y, r.width, r.height]).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Rect>, D::Error> {
        Ok(Option::<[i32; 4]>::deserialize(d)?.map(|[x, y, w, h]| Rect::new(x, y, w, h)))
    }
}

impl Rect {
    pub fn new(x: i32, y: i32, width: i32, height: i32) -> Self {
        Self { x, y, width, height }
    }
    pub fn is_empty(&self) -> bool {
        self.width <= 0 || self.height <= 0
    }
    pub fn origin(&self) -> Point {
        Point::new(self.x, self.y)
    }
    /// True when the point lies inside (right and bottom edges excluded).
    pub fn contains(&self, p: Point) -> bool {
        p.x >= self.x
            && p.y >= self.y
            && (p.x as i64) < self.x as i64 + self.width as i64
            && (p.y as i64) < self.y as i64 + self.height as i64
    }
    pub fn center(&self) -> Point {
        Point::new(self.x + self.width / 2, self.y + self.height / 2)
    }
    pub fn translate(&self, dx: i32, dy: i32) -> Rect {
        Rect::new(
            self.x.saturating_add(dx),
            self.y.saturating_add(dy),
            self.width,
            self.height,
        )
    }
    /// The overlapping part, if any.
    pub fn intersect(&self, other: &Rect) -> Option<Rect> {
        let x0 = self.x.max(other.x);
        let y0 = self.y.max(other.y);
        let x1 = (self.x as i64 + self.width as i64).min(other.x as i64 + other.width as i64);
        let y1 = (self.y as i64 + self.height as i64).min(other.y as i64 + other.height as i64);
        if x1 <= x0 as i64 || y1 <= y0 as i64 {
            return None;
        }
        Some(Rect::new(
            x0,
            y0,
            (x1 - x0 as i64) as i32,
            (y1 - y0 as i64) as i32,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_excludes_far_edges() {
        let r = Rect::new(10, 10, 5, 5);
        assert!(r.contains(Point::new(10, 10)));
        assert!(r.contains(Point::new(14, 14)));
        assert!(!r.contains(Point::new(15, 10)));
        assert!(!r.contains(Point::new(9, 12)));
    }

    #[test]
    fn intersect_clips_and_detects_disjoint() {
        let a = Rect::new(0, 0, 10, 10);
        assert_eq!(a.intersect(&Rect::new(5, 5, 10, 10)), Some(Rect::new(5, 5, 5, 5)));
        assert_eq!(a.intersect(&Rect::new(10, 0, 5, 5)), None);
    }
}
