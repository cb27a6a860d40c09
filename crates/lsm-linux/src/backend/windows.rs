//! What the backend asks of the window system (`crate::windowing`), one method per request,
//! each sent to X11, GNOME or KDE: the window list, the screen, modal dialogs, raising, capture
//! and raw input.
//!
//! Points are absolute: X11 root coordinates in physical px; on GNOME stage coordinates in
//! logical px (each window's `View` has scale 1 there), which the GNOME side turns into the
//! window's own buffer coordinates; on KDE the layout's logical px.

use super::LinuxBackend;
use crate::wayland::gnome::Gnome;
use crate::wayland::kde::Kde;
use crate::window::modal::ModalWindow;
use crate::window::WindowRecord;
use crate::windowing::{Compositor, WindowSystem};
use crate::x11::{Capture, Gap, REPAINT_POLL, X11};
use lsm_core::{GuiResult, KeyCombo, MouseButton, Point, Rect};
use std::sync::Arc;
use std::time::Instant;

/// The capture path on KDE, as the observation names it.
const KWIN_SCREENSHOT: &str = "KWin's ScreenShot2 (the window's own pixels, covered parts included)";
/// The last capture path on GNOME, as the observation names it.
const SCREENSHOT_PORTAL: &str =
    "the desktop portal's Screenshot of the whole screen, cut to the window (mutter's window streams cannot be read here)";

impl LinuxBackend {
    fn gnome(&self) -> Option<&Arc<Gnome>> {
        match &self.ws {
            WindowSystem::Gnome(g) => Some(g),
            _ => None,
        }
    }

    fn kde(&self) -> Option<&Arc<Kde>> {
        match &self.ws {
            WindowSystem::Kde(k) => Some(k),
            _ => None,
        }
    }

    /// The Wayland compositor's window list, on GNOME and KDE.
    pub(crate) fn compositor(&self) -> Option<Compositor<'_>> {
        match &self.ws {
            WindowSystem::Gnome(g) => Some(Compositor::Gnome(g)),
            WindowSystem::Kde(k) => Some(Compositor::Kde(k)),
            WindowSystem::X11(_) => None,
        }
    }

    /// Drops a remembered window list (GNOME shares one among an observation's lookups): the
    /// next lookup reads the windows afresh.
    pub(crate) async fn ws_forget_windows(&self) {
        if let Some(g) = self.gnome() {
            g.forget_list().await;
        }
        if let Some(k) = self.kde() {
            k.forget_list().await;
        }
    }

    pub(crate) async fn ws_list_windows(&self) -> GuiResult<Vec<WindowRecord>> {
        if let Some(k) = self.kde() {
            return k.list_windows().await;
        }
        match self.gnome() {
            Some(g) => g.list_windows().await,
            None => self.x(|x| x.list_windows()).await,
        }
    }

    pub(crate) async fn ws_window(&self, id: u32) -> GuiResult<Option<WindowRecord>> {
        if let Some(k) = self.kde() {
            return k.window(id).await;
        }
        match self.gnome() {
            Some(g) => g.window(id).await,
            None => self.x(move |x| x.window(id)).await,
        }
    }

    pub(crate) async fn ws_screen_rect(&self) -> GuiResult<Rect> {
        if let Some(k) = self.kde() {
            return k.screen_rect().await;
        }
        match self.gnome() {
            Some(g) => g.screen_rect().await,
            None => self.x(|x| x.screen_rect()).await,
        }
    }

    pub(crate) async fn ws_modal_windows(&self) -> GuiResult<(Vec<u32>, Vec<ModalWindow>)> {
        if let Some(k) = self.kde() {
            return k.modal_windows().await;
        }
        match self.gnome() {
            Some(g) => g.modal_windows().await,
            None => self.x(|x| x.modal_windows()).await,
        }
    }

    pub(crate) async fn ws_activate(&self, id: u32) -> GuiResult<bool> {
        if let Some(k) = self.kde() {
            return k.activate(id).await;
        }
        match self.gnome() {
            Some(g) => g.activate(id).await,
            None => self.x(move |x| x.activate(id)).await,
        }
    }

    /// Prepares what a capture of window `id` can prepare before its window record is read
    /// (GNOME: decoding the stream's latest frame).
    pub(crate) async fn ws_warm_capture(&self, id: u32) {
        if let Some(g) = self.gnome() {
            g.warm_frame(id).await;
        }
    }

    /// Reads X11 window `w` with `read` (a capture), redirecting it first where it is not yet:
    /// the wait for its repaint is looked at in short requests (`x11/redirect.rs`), so no other
    /// window's request waits meanwhile. A window redirected already is read in one request.
    pub(crate) async fn x_capture<T: Send + 'static>(
        &self,
        w: &WindowRecord,
        read: fn(&X11, &WindowRecord) -> GuiResult<T>,
    ) -> GuiResult<(T, Option<Gap>)> {
        let record = w.clone();
        let first = self
            .x(move |x| match x.begin_redirect(&record)? {
                Some(pending) => Ok(Err(pending)),
                None => read(x, &record).map(Ok),
            })
            .await?;
        let mut pending = match first {
            Ok(read) => return Ok((read, None)),
            Err(pending) => pending,
        };
        let (started, wait) = (Instant::now(), pending.wait());
        let repainted = loop {
            let (back, done) = self
                .x(move |x| {
                    let done = x.repaint_progress(&mut pending);
                    Ok((pending, done))
                })
                .await?;
            pending = back;
            if done.unwrap_or(true) {
                break true;
            }
            if started.elapsed() >= wait {
                break false;
            }
            tokio::time::sleep(REPAINT_POLL).await;
        };
        let record = w.clone();
        self.x(move |x| {
            let gap = x.end_redirect(pending, repainted);
            Ok((read(x, &record)?, gap))
        })
        .await
    }

    pub(crate) async fn ws_capture(&self, w: &WindowRecord) -> GuiResult<Capture> {
        if let Some(k) = self.kde() {
            if w.minimized {
                return Err(crate::x11::minimized_error(w.id));
            }
            // KWin renders the window by itself: covered and off-screen parts are its own.
            let image = k.capture_window(w.id).await?;
            return Ok(Capture::of_own_pixels(image, Vec::new()).via(KWIN_SCREENSHOT));
        }
        match self.gnome() {
            Some(g) => {
                // A minimized window draws nothing: its stream would only repeat an old frame.
                if w.minimized {
                    return Err(crate::x11::minimized_error(w.id));
                }
                let px = g.capture_window(w.id).await?;
                let mut gaps = Vec::new();
                if px.clipped {
                    gaps.push(Gap::OffScreen {
                        why: if px.from_screen {
                            "the window reaches past the shared monitor".into()
                        } else {
                            "mutter's window stream is clipped to the monitor's size".into()
                        },
                    });
                }
                if px.covered {
                    gaps.push(Gap::Covered {
                        why: if px.screenshot_portal.is_some() {
                            "the desktop portal's Screenshot shows the screen, not single windows".into()
                        } else {
                            "the desktop portal shares the screen, not single windows".into()
                        },
                    });
                }
                Ok(match (px.from_screen, px.screenshot_portal.is_some()) {
                    (true, true) => Capture::of_screen(px.image, gaps).via(SCREENSHOT_PORTAL),
                    (true, false) => Capture::of_screen(px.image, gaps),
                    (false, _) => Capture::of_own_pixels(px.image, gaps),
                })
            }
            None => {
                let (shot, gap) = self.x_capture(w, X11::capture_window).await?;
                Ok(shot.with_gap(gap))
            }
        }
    }

    pub(crate) async fn ws_click(&self, id: u32, p: Point, button: MouseButton, count: u32) -> GuiResult<()> {
        if let Some(k) = self.kde() {
            return k.click(p, button, count).await;
        }
        match self.gnome() {
            Some(g) => g.click(id, p, button, count).await,
            None => self.x(move |x| x.click(p, button, count)).await,
        }
    }

    pub(crate) async fn ws_pointer_move(&self, id: u32, p: Point) -> GuiResult<()> {
        if let Some(k) = self.kde() {
            return k.pointer_move(p).await;
        }
        match self.gnome() {
            Some(g) => g.pointer_move(id, p).await,
            None => self.x(move |x| x.pointer_move(p)).await,
        }
    }

    pub(crate) async fn ws_scroll(&self, id: u32, p: Point, dx: i32, dy: i32) -> GuiResult<()> {
        if let Some(k) = self.kde() {
            return k.scroll(p, dx, dy).await;
        }
        match self.gnome() {
            Some(g) => g.scroll(id, p, dx, dy).await,
            None => self.x(move |x| x.scroll(p, dx, dy)).await,
        }
    }

    pub(crate) async fn ws_drag(
        &self,
        id: u32,
        from: Point,
        to: Point,
        button: MouseButton,
    ) -> GuiResult<()> {
        if let Some(k) = self.kde() {
            return k.drag(from, to, button).await;
        }
        match self.gnome() {
            Some(g) => g.drag(id, from, to, button).await,
            None => self.x(move |x| x.drag(from, to, button)).await,
        }
    }

    pub(crate) async fn ws_key_combo(&self, id: u32, combo: &KeyCombo) -> GuiResult<()> {
        if let Some(k) = self.kde() {
            return k.key_combo(combo).await;
        }
        match self.gnome() {
            Some(g) => g.key_combo(id, combo).await,
            None => {
                let combo = combo.clone();
                self.x(move |x| x.key_combo(&combo)).await
            }
        }
    }

    /// Types any Unicode text into the focused control of window `id`.
    pub(crate) async fn ws_type_text(&self, id: u32, text: &str) -> GuiResult<()> {
        if let Some(k) = self.kde() {
            return k.type_text(text).await;
        }
        match self.gnome() {
            Some(g) if crate::keysyms::typeable_by_keysym(text) => g.type_keysyms(id, text).await,
            Some(g) => g.paste_text(id, text).await,
            None => {
                let text = text.to_string();
                self.x(move |x| x.type_text(&text)).await
            }
        }
    }
}
