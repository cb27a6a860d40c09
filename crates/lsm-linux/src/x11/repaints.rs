//! What was drawn on a window since it was captured, so that a capture plus the few areas
//! drawn since stands for the window's pixels, and the pixels before an action need not be
//! read whole again.
//!
//! A Damage object (report level DeltaRectangles: each event names an area newly drawn on)
//! watches each captured top-level. It is emptied right before the capture, and again right
//! before the areas drawn since are read back: whatever is drawn from then on (also while
//! reading, which only means an area is read again next time) sends an event. The areas are
//! collected after a round trip, so every drawing the server did before it has been seen. Only
//! captures of the window's own pixels are watched: a capture read from the screen also changes
//! when another window moves over it.

use super::capture::Capture;
use super::connection::*;
use super::watches::{Watch, Watches, MAX_WATCHED};
use crate::window::WindowRecord;
use lsm_core::{ErrorCode, GuiError, GuiResult, Rect, Repaint};
use x11rb::connection::Connection;
use x11rb::protocol::damage::{ConnectionExt as _, ReportLevel};

impl X11 {
    /// Captures `w` and watches it from then on: the watch id tells [`X11::repaints_since`]
    /// which capture it asks about. No id when the pixels were read from the screen; an error,
    /// with nothing captured, when the server has no Damage extension.
    pub fn capture_watched(&self, w: &WindowRecord) -> GuiResult<(Capture, Option<u64>)> {
        if !self.has_damage {
            return Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                "the X server has no Damage extension: windows are not watched for repaints",
            ));
        }
        let top = self.toplevel_of(w.id)?;
        let existing = self.lock_watches().by_top.get(&top).map(|watch| watch.damage);
        let created = match existing {
            Some(_) => None,
            None => Some(self.new_damage(top)?),
        };
        let emptied = existing.map(|d| (d, self.conn.damage_subtract(d, 0u32, 0u32)));
        let tg = self.geometry(top);
        // A watch whose Damage the server no longer knows (its top-level was destroyed and the
        // id came back for another) is dropped, and the window watched afresh. Its answer came
        // before the geometry's: checking it costs no round trip.
        let alive = emptied.and_then(|(d, sent)| sent.ok()?.check().is_ok().then_some(d));
        if existing.is_some() && alive.is_none() {
            self.lock_watches().by_top.remove(&top);
        }
        let damage = match alive.or(created) {
            Some(d) => d,
            // Made after the geometry: an area drawn meanwhile is at worst read again next time.
            None => self.new_damage(top)?,
        };
        // The areas drawn before the damage was emptied are in the capture: their events are
        // taken now and forgotten.
        self.pump();
        let tg = match tg {
            Ok(tg) => tg,
            Err(e) => {
                self.forget_watch(top);
                if alive.is_none() {
                    let _ = self.conn.damage_destroy(damage);
                }
                return Err(e);
            }
        };
        let id = {
            let mut watches = self.lock_watches();
            if watches.by_top.len() >= MAX_WATCHED && !watches.by_top.contains_key(&top) {
                for (_, old) in watches.by_top.drain() {
                    let _ = self.conn.damage_destroy(old.damage);
                }
            }
            watches.last += 1;
            let id = watches.last;
            watches.by_top.insert(
                top,
                Watch {
                    damage,
                    capture: id,
                    client: w.id,
                    client_area: w.bounds.translate(-(tg.x as i32), -(tg.y as i32)),
                    top_size: (tg.width, tg.height, tg.border_width),
                    drawn: Some(Vec::new()),
                },
            );
            id
        };
        match self.capture_window(w) {
            Ok(capture) => {
                let own = capture.own_pixels;
                Ok((capture, own.then_some(id)))
            }
            Err(e) => {
                self.forget_watch(top);
                Err(e)
            }
        }
    }

    /// The areas of the window of watched capture `id` drawn on since that capture (or since
    /// the last call for it), read again; the watch goes on from now. `None` when that cannot
    /// be told (the top-level was captured again since, resized, drawn on in too many places,
    /// or is gone): capture the window whole.
    pub fn repaints_since(&self, id: u64) -> Option<Vec<Repaint>> {
        let (top, damage) = {
            let watches = self.lock_watches();
            let (top, w) = watches.by_top.iter().find(|(_, w)| w.capture == id)?;
            (*top, w.damage)
        };
        // Emptied first, then read: what is drawn while reading is drawn again next time.
        let emptied = self.conn.damage_subtract(damage, 0u32, 0u32);
        let tg = self.geometry(top).ok();
        // A Damage the server no longer knows reports nothing: "nothing drawn" would be a lie.
        // Its answer came before the geometry's: checking it costs no round trip.
        if !emptied.is_ok_and(|sent| sent.check().is_ok()) {
            self.forget_capture(top, id);
            return None;
        }
        self.pump();
        let Some((client, client_area, drawn, tg)) = ({
            let mut watches = self.lock_watches();
            let w = watches.by_top.get_mut(&top).filter(|w| w.capture == id)?;
            let drawn = w.drawn.replace(Vec::new());
            tg.filter(|tg| (tg.width, tg.height, tg.border_width) == w.top_size)
                .zip(drawn)
                .map(|(tg, drawn)| (w.client, w.client_area, drawn, tg))
        }) else {
            // Resized (the capture no longer fits the window), or drawn on in too many places.
            self.forget_capture(top, id);
            return None;
        };
        // Drawn areas are counted from inside the border, the client from the outer corner;
        // both then go to the root, where the top-level is now.
        let border = tg.border_width as i32;
        let area = client_area.translate(tg.x as i32, tg.y as i32);
        let origin = (tg.x as i32 + border, tg.y as i32 + border);
        let parts: Vec<Rect> = drawn
            .iter()
            .filter_map(|d| d.translate(origin.0, origin.1).intersect(&area))
            .collect();
        if parts.is_empty() {
            return Some(Vec::new());
        }
        let Ok(images) = self.read_parts(client, top, &tg, &parts) else {
            self.forget_capture(top, id);
            return None;
        };
        let repaints = parts
            .iter()
            .zip(images)
            .map(|(part, image)| Repaint {
                at: part.translate(-area.x, -area.y),
                image,
            })
            .collect();
        Some(repaints)
    }

    /// A new Damage on `top`, emptied.
    fn new_damage(&self, top: u32) -> GuiResult<u32> {
        let d = self.conn.generate_id().map_err(id_err)?;
        self.conn
            .damage_create(d, top, ReportLevel::DELTA_RECTANGLES)
            .map_err(conn_err)?;
        self.conn.damage_subtract(d, 0u32, 0u32).map_err(conn_err)?;
        Ok(d)
    }

    fn forget_capture(&self, top: u32, id: u64) {
        if let Some(w) = self
            .lock_watches()
            .by_top
            .get_mut(&top)
            .filter(|w| w.capture == id)
        {
            w.capture = 0;
        }
    }

    fn forget_watch(&self, top: u32) {
        if let Some(old) = self.lock_watches().by_top.remove(&top) {
            let _ = self.conn.damage_destroy(old.damage);
            let _ = self.conn.flush();
        }
    }

    pub(super) fn lock_watches(&self) -> std::sync::MutexGuard<'_, Watches> {
        self.watches.lock().unwrap_or_else(|p| p.into_inner())
    }
}
