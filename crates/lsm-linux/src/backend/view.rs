//! How a window's pixels and its elements' coordinates relate: the per-toolkit coordinate
//! rules, the window seen in logical pixels (`View`), the scale found for it, the element
//! handle that carries the rule, and window ids.

use crate::atspi::{CoordKind, FrameInfo, ObjRef};
use crate::window::WindowRecord;
use lsm_core::{ErrorCode, GuiError, GuiResult, Point, Rect};

/// How a toolkit reports element extents, and so how to make them window-relative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CoordRule {
    /// Screen extents are right (GTK3, Qt5): subtract the window's screen origin.
    Screen,
    /// Extents relative to the window's content inside its client-side shadow (GTK4),
    /// whatever the window's screen position: add `_GTK_FRAME_EXTENTS` left/top.
    Surface,
    /// Wayland: window-local extents whose origin depends on the toolkit; add the window's
    /// offset found when it was observed (`wayland::coords`).
    Local,
}

impl CoordRule {
    pub(crate) fn for_toolkit(toolkit: &str, version: &str) -> Self {
        if toolkit.eq_ignore_ascii_case("gtk") && version.trim_start().starts_with('4') {
            Self::Surface
        } else {
            Self::Screen
        }
    }
    pub(crate) fn kind(self) -> CoordKind {
        match self {
            Self::Screen => CoordKind::Screen,
            Self::Surface | Self::Local => CoordKind::Window,
        }
    }
    fn tag(self) -> &'static str {
        match self {
            Self::Screen => "s",
            Self::Surface => "w",
            Self::Local => "l",
        }
    }
    fn from_tag(t: &str) -> Option<Self> {
        match t {
            "s" => Some(Self::Screen),
            "w" => Some(Self::Surface),
            "l" => Some(Self::Local),
            _ => None,
        }
    }
    /// Offset to add to raw extents to get window-relative logical ones.
    pub(crate) fn offset(self, view: &View) -> (i32, i32) {
        match self {
            Self::Screen => {
                let o = view.logical_bounds().origin();
                (-o.x, -o.y)
            }
            // GTK4 reports extents relative to its content, which starts inside the client-side
            // shadow; the X window (our window space) includes that shadow.
            Self::Surface => {
                let [left, _right, top, _bottom] = view.win.gtk_frame_extents.unwrap_or([0; 4]);
                (view.logical(left as i32), view.logical(top as i32))
            }
            Self::Local => view.local,
        }
    }
}

/// An X11 window seen in logical pixels. X11 speaks physical pixels; a toolkit scaled for a
/// HiDPI display (GDK_SCALE, QT_SCALE_FACTOR, Xft.dpi) reports AT-SPI extents in logical ones.
#[derive(Debug, Clone)]
pub(crate) struct View {
    pub(crate) win: WindowRecord,
    /// Physical pixels per logical pixel.
    pub(crate) scale: f64,
    /// `CoordRule::Local`'s offset for this window (Wayland).
    pub(crate) local: (i32, i32),
}

impl View {
    pub(crate) fn logical(&self, v: i32) -> i32 {
        (v as f64 / self.scale).round() as i32
    }
    pub(crate) fn logical_bounds(&self) -> Rect {
        logical_rect(self.win.bounds, self.scale)
    }
    /// A window-relative logical point as an absolute physical screen point.
    pub(crate) fn to_screen(&self, p: Point) -> Point {
        let b = self.win.bounds;
        Point::new(
            b.x + (p.x as f64 * self.scale).round() as i32,
            b.y + (p.y as f64 * self.scale).round() as i32,
        )
    }
}

/// A physical (stage) rect in logical px at `scale` physical px per logical px.
pub(crate) fn logical_rect(r: Rect, scale: f64) -> Rect {
    let l = |v: i32| (v as f64 / scale).round() as i32;
    Rect::new(l(r.x), l(r.y), l(r.width), l(r.height))
}

/// Scales we recognise: quarter steps from 1x to 4x.
fn round_scale(ratio: f64) -> Option<f64> {
    let q = (ratio * 4.0).round() / 4.0;
    ((1.0..=4.0).contains(&q) && (ratio - q).abs() < 0.1).then_some(q)
}

/// The window's scale from the toolkit's own idea of its width (logical) against the X
/// window's (physical). Width, because a frame's height may include a title bar.
pub(crate) fn detect_scale(win: &WindowRecord, frame: &FrameInfo) -> Option<f64> {
    let logical_width = frame.screen_extents.filter(|r| r.width > 0)?.width;
    round_scale(win.bounds.width as f64 / logical_width as f64)
}

/// The display-wide scale from `Xft.dpi` in the X resource database (96 dpi = 1x).
pub(crate) fn scale_from_resources(resources: &str) -> Option<f64> {
    let dpi: f64 = resources
        .lines()
        .find_map(|l| l.strip_prefix("Xft.dpi:"))
        .and_then(|v| v.trim().parse().ok())?;
    round_scale(dpi / 96.0)
}

/// The handle stored for an element: coordinate rule + AT-SPI object.
/// An element handle: the coordinate rule, the extents correction when there is one
/// (`s:0,25`), and the object.
pub(crate) fn encode_native(rule: CoordRule, shift: (i32, i32), obj: &ObjRef) -> String {
    match shift {
        (0, 0) => format!("{}|{}", rule.tag(), obj.encode()),
        (dx, dy) => format!("{}:{dx},{dy}|{}", rule.tag(), obj.encode()),
    }
}

/// The coordinate rule, extents correction and object of an element handle.
pub(crate) fn decode_native(native: &str) -> GuiResult<(CoordRule, (i32, i32), ObjRef)> {
    let bad = || {
        GuiError::new(
            ErrorCode::ElementStale,
            "element handle is not an AT-SPI object; call gui_state again",
        )
    };
    let (tag, rest) = native.split_once('|').ok_or_else(bad)?;
    let (rule, shift) = match tag.split_once(':') {
        None => (tag, (0, 0)),
        Some((rule, shift)) => {
            let (dx, dy) = shift.split_once(',').ok_or_else(bad)?;
            (
                rule,
                (dx.parse().map_err(|_| bad())?, dy.parse().map_err(|_| bad())?),
            )
        }
    };
    Ok((
        CoordRule::from_tag(rule).ok_or_else(bad)?,
        shift,
        ObjRef::decode(rest).ok_or_else(bad)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolkit_rules() {
        assert_eq!(CoordRule::for_toolkit("GTK", "3.24.38"), CoordRule::Screen);
        assert_eq!(CoordRule::for_toolkit("GTK", "4.8.3"), CoordRule::Surface);
        assert_eq!(CoordRule::for_toolkit("Qt", "5.15.8"), CoordRule::Screen);
        let obj = ObjRef {
            bus: ":1.5".into(),
            path: "/org/a11y/atspi/accessible/12".into(),
        };
        let (rule, shift, back) =
            decode_native(&encode_native(CoordRule::Surface, (0, -25), &obj)).expect("round trip");
        assert_eq!(shift, (0, -25));
        let (_, shift, _) =
            decode_native(&encode_native(CoordRule::Screen, (0, 0), &obj)).expect("round trip");
        assert_eq!(shift, (0, 0));
        assert_eq!((rule, back), (CoordRule::Surface, obj));
    }

    fn window(bounds: Rect) -> WindowRecord {
        WindowRecord {
            id: 1,
            title: "t".into(),
            instance: "i".into(),
            class: "c".into(),
            pid: Some(1),
            bounds,
            gtk_frame_extents: Some([20, 20, 14, 26]),
            focused: true,
            minimized: false,
            transient_for: None,
            modal: false,
        }
    }

    #[test]
    fn scales_are_recognised_in_quarter_steps() {
        assert_eq!(round_scale(1.0), Some(1.0));
        assert_eq!(round_scale(600.0 / 610.0), Some(1.0)); // GTK3 frame incl. decorations
        assert_eq!(round_scale(1200.0 / 605.0), Some(2.0));
        assert_eq!(round_scale(1.5), Some(1.5));
        assert_eq!(round_scale(0.5), None);
        assert_eq!(round_scale(1.37), None);
        assert_eq!(
            scale_from_resources("Xft.antialias:\t1\nXft.dpi:\t192\n"),
            Some(2.0)
        );
        assert_eq!(scale_from_resources("Xft.dpi: 96"), Some(1.0));
        assert_eq!(scale_from_resources("*customization: -color"), None);
    }

    #[test]
    fn a_view_maps_logical_points_to_physical_screen_points() {
        let view = View {
            win: window(Rect::new(100, 50, 1200, 1000)),
            scale: 2.0,
            local: (0, 0),
        };
        assert_eq!(view.logical_bounds(), Rect::new(50, 25, 600, 500));
        assert_eq!(view.to_screen(Point::new(10, 20)), Point::new(120, 90));
        // GTK3 reports logical screen extents: window-relative = extents - logical origin.
        assert_eq!(CoordRule::Screen.offset(&view), (-50, -25));
        // GTK4's shadow margin is physical on X11 and becomes logical.
        assert_eq!(CoordRule::Surface.offset(&view), (10, 7));
        let frame = FrameInfo {
            obj: ObjRef {
                bus: ":1.1".into(),
                path: "/a".into(),
            },
            role: "frame".into(),
            name: "t".into(),
            screen_extents: Some(Rect::new(50, 8, 605, 534)),
            states: vec![],
        };
        assert_eq!(detect_scale(&view.win, &frame), Some(2.0));
    }
}
