//! Redirecting a top-level for capture in steps. A window redirected for the first time has to
//! repaint what was covered or off screen, which takes an application up to [`REPAINT_WAIT`]
//! (a busy or hung one all of it). The backend holds the X11 connection for each request, so a
//! wait inside one request held up every other window's requests: an action on one window waited
//! for the background capture of another. Here the redirection starts in one request
//! ([`X11::begin_redirect`]), the repaint is looked at in short ones ([`X11::repaint_progress`])
//! between which the backend sleeps without the connection, and one more ends it
//! ([`X11::end_redirect`]); the capture that follows finds the window redirected.
//!
//! Each Damage object's areas are kept apart (`note_damage`), so two windows redirected at once
//! do not take each other's repaints.

use super::capture::{Gap, RepaintGrid, REPAINT_POLL, REPAINT_WAIT};
use super::connection::*;
use crate::window::WindowRecord;
use lsm_core::{GuiResult, Rect};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::composite::{ConnectionExt as _, Redirect};
use x11rb::protocol::damage::{ConnectionExt as _, ReportLevel};

/// A redirection whose repaint is being waited for.
pub struct PendingRepaint(Pending);

enum Pending {
    /// Ours: the Damage object that reports the repaint (none without the Damage extension:
    /// nothing tells when it is done) and the cells still to be repainted.
    Own {
        top: u32,
        damage: Option<u32>,
        grid: RepaintGrid,
    },
    /// Another request is redirecting the same top-level: done when it is.
    Other { top: u32 },
}

impl PendingRepaint {
    /// How long the repaint is waited for.
    pub fn wait(&self) -> Duration {
        match self.0 {
            Pending::Own { damage: None, .. } => REPAINT_POLL * 20,
            _ => REPAINT_WAIT,
        }
    }

    /// Another request is redirecting the same top-level.
    pub(super) fn by_another(&self) -> bool {
        matches!(self.0, Pending::Other { .. })
    }
}

impl X11 {
    /// Redirects the top-level of `w` where a capture will need it (Composite, no compositing
    /// manager, not redirected yet) without waiting for its repaint. `None`: nothing to wait
    /// for (not needed, or every part was visible).
    pub fn begin_redirect(&self, w: &WindowRecord) -> GuiResult<Option<PendingRepaint>> {
        if !self.has_composite || w.minimized || w.bounds.is_empty() {
            return Ok(None);
        }
        // Redirected already (every capture but the first): no more questions to the server.
        let top = self.toplevel_of(w.id)?;
        if self.is_redirected(top) || self.compositor_running()? {
            return Ok(None);
        }
        self.start_redirect(top, w.id, w.bounds)
    }

    /// Redirects `top` (the top-level of `id`, client area `bounds` in root coordinates) and
    /// sets up the wait for the repaint of what was not visible.
    pub(super) fn start_redirect(
        &self,
        top: u32,
        id: u32,
        bounds: Rect,
    ) -> GuiResult<Option<PendingRepaint>> {
        {
            let mut pending = self.lock_pending();
            // One left by a request that never ended (its caller timed out) is taken over.
            let waited = pending.get(&top).map(Instant::elapsed);
            if waited.is_some_and(|w| w < REPAINT_WAIT * 2) {
                return Ok(Some(PendingRepaint(Pending::Other { top })));
            }
            pending.insert(top, Instant::now());
        }
        let started = self.redirect_now(top, id, bounds);
        if !matches!(started, Ok(Some(_))) {
            self.lock_pending().remove(&top);
        }
        started
    }

    fn redirect_now(&self, top: u32, id: u32, bounds: Rect) -> GuiResult<Option<PendingRepaint>> {
        let screen = self.screen_rect()?;
        let covering = self.covering_rects(id, bounds)?;
        let grid = RepaintGrid::new(bounds, screen, &covering);
        self.conn
            .composite_redirect_window(top, Redirect::AUTOMATIC)
            .map_err(conn_err)?;
        // Created right after the redirection, in the same batch: the server's own copy of the
        // visible pixels (done while redirecting) is not counted, the application's repaint
        // (it needs the Expose events first) is.
        let damage = if grid.done() || !self.has_damage {
            None
        } else {
            let d = self.conn.generate_id().map_err(id_err)?;
            self.conn
                .damage_create(d, top, ReportLevel::RAW_RECTANGLES)
                .map_err(conn_err)?;
            Some(d)
        };
        self.sync()?;
        self.pump();
        // DamageCreate reports the whole window at once: not a repaint.
        if let Some(d) = damage {
            self.take_damage(d);
        }
        tracing::debug!(
            "redirected top-level 0x{top:x} of 0x{id:x} for capture ({} cell(s) to repaint)",
            grid.left()
        );
        if grid.done() {
            self.remember_redirect(top);
            return Ok(None);
        }
        Ok(Some(PendingRepaint(Pending::Own { top, damage, grid })))
    }

    /// Whether the repaint is done now.
    pub fn repaint_progress(&self, pending: &mut PendingRepaint) -> GuiResult<bool> {
        match &mut pending.0 {
            Pending::Own {
                damage: Some(d),
                grid,
                ..
            } => {
                self.sync()?;
                self.pump();
                for r in self.take_damage(*d) {
                    grid.repainted(r);
                }
                Ok(grid.done())
            }
            Pending::Own { damage: None, .. } => Ok(false),
            Pending::Other { top } => Ok(!self.lock_pending().contains_key(top)),
        }
    }

    /// Ends the wait (`repainted`: whether the repaint was seen): the window counts as
    /// redirected from now on. What a capture of it may show otherwise.
    pub fn end_redirect(&self, pending: PendingRepaint, repainted: bool) -> Option<Gap> {
        if let Pending::Own { top, damage, grid } = pending.0 {
            if let Some(d) = damage {
                let _ = self.conn.damage_destroy(d);
                let _ = self.conn.flush();
                self.take_damage(d);
            }
            if repainted {
                tracing::debug!("repainted (top-level 0x{top:x})");
            } else {
                tracing::debug!("{} cell(s) not repainted within the wait", grid.left());
            }
            self.remember_redirect(top);
            self.lock_pending().remove(&top);
        }
        (!repainted).then_some(Gap::NotRepainted)
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u32, Instant>> {
        self.pending_redirects.lock().unwrap_or_else(|p| p.into_inner())
    }
}
