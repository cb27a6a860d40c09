//! Pointer input through XTest: moves, clicks (with the pauses toolkits need to count them
//! right), presses, drags and wheel scrolls.

use super::connection::*;
use crate::input_timing::PRESS_HOLD;
use lsm_core::{ErrorCode, GuiError, GuiResult, MouseButton, Point};
use std::time::Instant;
use x11rb::connection::Connection;
use x11rb::protocol::xtest::ConnectionExt as _;

// ---------------------------------------------------------------- pointer

impl X11 {
    pub(super) fn require_xtest(&self) -> GuiResult<()> {
        if self.has_xtest {
            Ok(())
        } else {
            Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                "the X server has no XTEST extension: input cannot be sent",
            ))
        }
    }

    pub(super) fn fake(&self, kind: u8, detail: u8, x: i16, y: i16) -> GuiResult<()> {
        self.conn
            .xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, self.root, x, y, 0)
            .map_err(conn_err)?;
        Ok(())
    }

    /// Checks that `p` is on the screen and converts it to protocol coordinates.
    fn screen_point(&self, p: Point) -> GuiResult<(i16, i16)> {
        let s = self.screen_rect()?;
        if !s.contains(p) {
            return Err(GuiError::new(
                ErrorCode::OutOfBounds,
                format!(
                    "point ({}, {}) is outside the {}x{} screen",
                    p.x, p.y, s.width, s.height
                ),
            ));
        }
        Ok((to_i16(p.x), to_i16(p.y)))
    }

    fn move_to(&self, p: Point) -> GuiResult<()> {
        let (x, y) = self.screen_point(p)?;
        self.fake(MOTION, 0, x, y)
    }

    /// Moves to `p` and gives the application `POINTER_ARRIVE` to see it there before a press.
    fn arrive_at(&self, p: Point) -> GuiResult<()> {
        self.move_to(p)?;
        self.conn.flush().map_err(conn_err)?;
        std::thread::sleep(POINTER_ARRIVE);
        Ok(())
    }

    fn button(&self, button: u8, press: bool) -> GuiResult<()> {
        if press {
            *self.last_press.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        }
        self.fake(if press { BUTTON_PRESS } else { BUTTON_RELEASE }, button, 0, 0)
    }

    /// GTK counts a press within its double-click time of an earlier click (even elsewhere)
    /// into the same sequence, which spoils a following double click: wait until that time
    /// has passed since our last press.
    fn wait_multi_click_quiet(&self) {
        let last = *self.last_press.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(left) = last.and_then(|t| MULTI_CLICK_QUIET.checked_sub(t.elapsed())) {
            std::thread::sleep(left);
        }
    }

    /// Moves the pointer to `p` (root coordinates).
    pub fn pointer_move(&self, p: Point) -> GuiResult<()> {
        self.require_xtest()?;
        self.pump();
        self.move_to(p)?;
        self.sync()
    }

    /// Moves to `p` and clicks `count` times, fast enough to make a double click.
    pub fn click(&self, p: Point, button: MouseButton, count: u32) -> GuiResult<()> {
        self.require_xtest()?;
        if count == 0 || count > MAX_CLICKS {
            return Err(GuiError::invalid(format!(
                "click count must be 1..={MAX_CLICKS}, not {count}"
            )));
        }
        self.pump();
        let _g = self.lock_input();
        if count > 1 {
            self.wait_multi_click_quiet();
        }
        self.arrive_at(p)?;
        let b = button_number(button);
        for i in 0..count {
            if i > 0 {
                self.conn.flush().map_err(conn_err)?;
                std::thread::sleep(CLICK_GAP);
            }
            self.button(b, true)?;
            self.conn.flush().map_err(conn_err)?;
            std::thread::sleep(PRESS_HOLD);
            self.button(b, false)?;
        }
        self.sync()
    }

    pub fn button_down(&self, p: Point, button: MouseButton) -> GuiResult<()> {
        self.require_xtest()?;
        self.pump();
        self.arrive_at(p)?;
        self.button(button_number(button), true)?;
        self.sync()
    }

    pub fn button_up(&self, p: Point, button: MouseButton) -> GuiResult<()> {
        self.require_xtest()?;
        self.pump();
        self.move_to(p)?;
        self.button(button_number(button), false)?;
        self.sync()
    }

    /// Press at `from`, move in steps (toolkits need motion past their drag threshold),
    /// release at `to`.
    pub fn drag(&self, from: Point, to: Point, button: MouseButton) -> GuiResult<()> {
        self.require_xtest()?;
        self.screen_point(to)?;
        self.pump();
        let _g = self.lock_input();
        let b = button_number(button);
        self.arrive_at(from)?;
        self.button(b, true)?;
        let result = self.drag_steps(from, to);
        // Always release, even if a step failed, so no button stays held.
        let release = self.move_to(to).and_then(|_| self.button(b, false));
        let synced = self.sync();
        result.and(release).and(synced)
    }

    fn drag_steps(&self, from: Point, to: Point) -> GuiResult<()> {
        self.sync()?;
        std::thread::sleep(DRAG_STEP_PAUSE);
        for i in 1..=DRAG_STEPS {
            let x = from.x + (to.x - from.x) * i / DRAG_STEPS;
            let y = from.y + (to.y - from.y) * i / DRAG_STEPS;
            self.move_to(Point::new(x, y))?;
            self.conn.flush().map_err(conn_err)?;
            std::thread::sleep(DRAG_STEP_PAUSE);
        }
        Ok(())
    }

    /// Wheel clicks at `at`: delta_y < 0 scrolls up (button 4), > 0 down (5); delta_x < 0
    /// left (6), > 0 right (7).
    pub fn scroll(&self, at: Point, delta_x: i32, delta_y: i32) -> GuiResult<()> {
        self.require_xtest()?;
        if delta_x.abs() > MAX_SCROLL || delta_y.abs() > MAX_SCROLL {
            return Err(GuiError::invalid(format!(
                "scroll deltas must be within ±{MAX_SCROLL}"
            )));
        }
        self.pump();
        let _g = self.lock_input();
        self.arrive_at(at)?;
        let plan = [(delta_y, 4u8, 5u8), (delta_x, 6, 7)];
        for (delta, neg, pos) in plan {
            let b = if delta < 0 { neg } else { pos };
            for _ in 0..delta.unsigned_abs() {
                self.button(b, true)?;
                self.button(b, false)?;
            }
        }
        self.sync()
    }
}
