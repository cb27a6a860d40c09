//! The Damage watches of captured top-levels (what `repaints.rs` reads back), kept with the
//! connection.

use lsm_core::Rect;
use std::collections::HashMap;

/// Top-levels watched at once; beyond that the watches start over (a Damage object is freed
/// with its window, so a stale one costs nothing but an entry).
pub(super) const MAX_WATCHED: usize = 32;
/// More areas drawn on than this since the last look, and the window is captured whole.
const MAX_AREAS: usize = 8;

/// The watches of captured top-levels.
#[derive(Default)]
pub(crate) struct Watches {
    pub(super) by_top: HashMap<u32, Watch>,
    /// The last watched capture's number (a watch id names one capture, not one window).
    pub(super) last: u64,
}

pub(super) struct Watch {
    pub(super) damage: u32,
    /// The capture it watches (0: none any more).
    pub(super) capture: u64,
    /// The client window captured, and its area from the top-level's outer corner (the same
    /// wherever the top-level is moved).
    pub(super) client: u32,
    pub(super) client_area: Rect,
    /// The top-level's width, height and border when captured: another size, and the capture
    /// no longer fits the window.
    pub(super) top_size: (u16, u16, u16),
    /// Areas drawn on since the watch was last emptied, in the top-level's coordinates;
    /// `None` once there were too many to read back one by one.
    pub(super) drawn: Option<Vec<Rect>>,
}

impl Watches {
    /// A DamageNotify of one of the watches: an area of its window was drawn on. False for
    /// other Damage objects (the wait for a repaint after redirecting, in `capture.rs`).
    pub(super) fn note(&mut self, damage: u32, area: Rect) -> bool {
        let Some(w) = self.by_top.values_mut().find(|w| w.damage == damage) else {
            return false;
        };
        if let Some(drawn) = &mut w.drawn {
            if drawn.len() >= MAX_AREAS {
                w.drawn = None;
            } else {
                drawn.push(area);
            }
        }
        true
    }
}
