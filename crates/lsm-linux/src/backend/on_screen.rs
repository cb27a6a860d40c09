//! Where a window-relative point or element lies against the window and the screen, and the
//! `OUT_OF_BOUNDS` messages and screenshot notes that say so in window-relative terms (the only
//! coordinates a caller of lsm ever sees).

use lsm_core::{ErrorCode, GuiError, Point, Rect};

/// The part of a window (logical screen bounds) that lies on the screen (logical size), in
/// window-relative logical pixels; `None` when none of it does.
pub fn visible_part(window: Rect, screen: Rect) -> Option<Rect> {
    screen
        .intersect(&window)
        .map(|r| r.translate(-window.x, -window.y))
}

/// "x 0..639, y 0..479": a window-relative area as the caller can use it.
pub fn area(r: Rect) -> String {
    format!(
        "x {}..{}, y {}..{}",
        r.x,
        r.x + r.width - 1,
        r.y,
        r.y + r.height - 1
    )
}

/// "only window-relative x 0..299, y 0..399 of it is on the screen", from the window-relative
/// part that is on the screen.
fn on_screen_words(visible: Option<Rect>) -> String {
    match visible {
        Some(v) => format!("only window-relative {} of it is on the screen", area(v)),
        None => "none of it is on the screen".to_string(),
    }
}

/// The observation's note for a window that is not wholly on the screen (`visible`: the
/// window-relative part that is).
pub fn window_note(visible: Option<Rect>) -> String {
    let reach = match visible {
        Some(_) => "pointer input reaches only that part",
        None => "pointer input cannot reach it",
    };
    format!(
        "the window is partly or wholly off the screen: {}, and {reach}; move the window (or act \
         by element_id)",
        on_screen_words(visible)
    )
}

fn off_screen_hint(window: Rect, screen: Rect) -> String {
    let on = on_screen_words(visible_part(window, screen));
    format!(
        "the {}x{} window reaches past the edge of the {}x{} screen and {on}",
        window.width, window.height, screen.width, screen.height
    )
}

/// `OUT_OF_BOUNDS` for a window-relative point `p` that is inside the window but off the
/// screen (where no input can reach it); `None` when it is on the screen.
pub fn point_off_screen(p: Point, window: Rect, screen: Rect) -> Option<GuiError> {
    let on_screen = visible_part(window, screen).is_some_and(|v| v.contains(p));
    (!on_screen).then(|| {
        GuiError::new(
            ErrorCode::OutOfBounds,
            format!(
                "point ({}, {}) is inside the window but off the screen: {}; move the window onto \
                 the screen or use a point in that part",
                p.x,
                p.y,
                off_screen_hint(window, screen)
            ),
        )
    })
}

/// The part of an element (window-relative bounds `rel`) that input can reach: inside the
/// window and on the screen. `OUT_OF_BOUNDS` says which of the two it is not.
pub fn element_target(id: &str, rel: Rect, window: Rect, screen: Rect) -> Result<Rect, GuiError> {
    let inside = Rect::new(0, 0, window.width, window.height);
    let bounds = format!("@{},{} {}x{}", rel.x, rel.y, rel.width, rel.height);
    let in_window = inside.intersect(&rel).ok_or_else(|| {
        GuiError::new(
            ErrorCode::OutOfBounds,
            format!(
                "element {id} ({bounds}, window-relative) lies outside the window's area ({}): it is \
                 scrolled away or on a hidden part; scroll it into view first",
                area(inside)
            ),
        )
    })?;
    visible_part(window, screen)
        .and_then(|v| v.intersect(&in_window))
        .ok_or_else(|| {
            GuiError::new(
                ErrorCode::OutOfBounds,
                format!(
                    "element {id} ({bounds}, window-relative) is in the part of the window that is off \
                     the screen: {}; move the window onto the screen first",
                    off_screen_hint(window, screen)
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Rect = Rect {
        x: 0,
        y: 0,
        width: 1280,
        height: 800,
    };

    #[test]
    fn the_window_note_says_which_part_is_on_the_screen() {
        let n = window_note(Some(Rect::new(0, 0, 300, 400)));
        assert!(
            n.contains("only window-relative x 0..299, y 0..399") && n.contains("reaches only"),
            "{n}"
        );
        let n = window_note(None);
        assert!(
            n.contains("none of it is on the screen") && n.contains("cannot reach it"),
            "{n}"
        );
    }

    #[test]
    fn points_in_the_off_screen_part_are_named_so() {
        // A 600x400 window whose right 100 px are past the screen's right edge.
        let w = Rect::new(780, 100, 600, 400);
        assert!(point_off_screen(Point::new(499, 10), w, SCREEN).is_none());
        let e = point_off_screen(Point::new(550, 10), w, SCREEN).expect("off screen");
        assert_eq!(e.code, ErrorCode::OutOfBounds);
        assert!(
            e.message
                .contains("point (550, 10) is inside the window but off the screen"),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("window-relative x 0..499, y 0..399"),
            "{}",
            e.message
        );
        assert!(
            !e.message.contains("1330"),
            "no screen coordinates: {}",
            e.message
        );
    }

    #[test]
    fn elements_outside_the_window_or_off_screen_are_told_apart() {
        let w = Rect::new(780, 100, 600, 400);
        let got = element_target("e3", Rect::new(10, 10, 50, 20), w, SCREEN).expect("reachable");
        assert_eq!(got, Rect::new(10, 10, 50, 20));
        // Half on the screen: the reachable half.
        let got = element_target("e4", Rect::new(480, 0, 40, 20), w, SCREEN).expect("half");
        assert_eq!(got, Rect::new(480, 0, 20, 20));
        let e = element_target("e5", Rect::new(10, 450, 50, 20), w, SCREEN).expect_err("below");
        assert!(
            e.message
                .contains("outside the window's area (x 0..599, y 0..399)"),
            "{}",
            e.message
        );
        let e = element_target("e6", Rect::new(550, 10, 40, 20), w, SCREEN).expect_err("off");
        assert!(e.message.contains("off the screen"), "{}", e.message);
        assert!(!e.message.contains("overlap"), "{}", e.message);
    }
}
