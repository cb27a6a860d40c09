//! The pixels of the windows last answered about, read after the answer and kept up to date
//! by what is drawn on them, so that the pixels before the next action are at hand instead of read
//! whole while the caller waits.
//!
//! After `gui_action` answers with a `state_id`, the window is captured in the background, where
//! the backend can watch it ([`crate::backend::DesktopBackend::capture_watched`]); after
//! `gui_state` too, unless its capture is kept already (a caller may observe again and again
//! while it waits for something). Before the next action on that window the backend reads back
//! only the areas drawn on since ([`crate::backend::DesktopBackend::repaints_since`]: a caret
//! that blinked, a spinner), and they are pasted into the kept capture: that is the window's
//! pixels now, as a capture would read them. Where that cannot be told (resized, drawn on all
//! over, another backend), the window is captured whole, as before. Nothing waits for a
//! background capture: an action that comes while its window is still being read captures it
//! itself, and a slow capture of one window holds up nothing on another.

use crate::kept::{lock, KeptPixels};
use crate::service::{bounded, LocalGui};
use crate::RgbaImage;
use std::sync::Arc;

impl LocalGui {
    /// The window's pixels now: the kept capture with what was drawn on since pasted in, else
    /// a fresh capture. The kept capture is used up (the action is about to change the
    /// window; its answer keeps a new one).
    pub(crate) async fn pixels_before(&self, window_id: &str) -> Option<(RgbaImage, f64)> {
        if let Ok(backend) = self.backend().await {
            let kept = lock(&self.kept_pixels)
                .take(window_id)
                .filter(|k| Arc::ptr_eq(&k.backend, &backend));
            if let Some(mut k) = kept {
                let began = std::time::Instant::now();
                if let Some(repaints) = backend.repaints_since(k.watch).await {
                    for r in &repaints {
                        k.image.paste(r.at.origin(), &r.image);
                    }
                    tracing::trace!(
                        "pixels before the action: the kept capture and {} area(s) drawn since, in {:?}",
                        repaints.len(),
                        began.elapsed()
                    );
                    return Some((k.image, k.scale));
                }
            }
        }
        self.pixels_of(window_id).await
    }

    /// After a `gui_state` answer about `window_id`: its pixels kept as after a `gui_action`,
    /// unless they already are, and then only brought up to date with what was drawn since: a
    /// caller that observes a window again and again pays one capture, and its first action on
    /// a window not captured before does not wait for that first capture (on X11 it redirects
    /// the window, and waits for its repaint). A kept capture whose watch no longer answers (the
    /// window id now names a restarted application's window) is replaced by a new one.
    pub(crate) async fn keep_pixels_once(&self, window_id: &str) {
        self.keep(window_id, false).await;
    }

    /// After an answer about `window_id`: its pixels read in the background and kept, watched,
    /// where the backend can watch them.
    pub(crate) async fn keep_pixels(&self, window_id: &str) {
        self.keep(window_id, true).await;
    }

    /// `again`: read whole even when a capture of the window is kept (an action changed it);
    /// otherwise a kept one is brought up to date.
    async fn keep(&self, window_id: &str, again: bool) {
        let Ok(backend) = self.backend().await else {
            return;
        };
        let slot = self.kept_pixels.clone();
        let kept = {
            let mut k = lock(&slot);
            let kept = if again { None } else { k.take(window_id) };
            if !k.begin_read(window_id, true) {
                // Being read already: what it reads stands for the window.
                if let Some(kept) = kept {
                    k.put(kept);
                }
                return;
            }
            kept.filter(|k| Arc::ptr_eq(&k.backend, &backend))
        };
        let window_id = window_id.to_string();
        tokio::spawn(async move {
            if let Some(mut k) = kept {
                if let Some(repaints) = backend.repaints_since(k.watch).await {
                    for r in &repaints {
                        k.image.paste(r.at.origin(), &r.image);
                    }
                    lock(&slot).end_read(&window_id, Some(k));
                    return;
                }
            }
            let captured = bounded("capturing the window", backend.capture_watched(&window_id)).await;
            let read = match captured {
                Ok((snap, Some(watch))) => snap.screenshot.map(|s| KeptPixels {
                    window_id: window_id.clone(),
                    image: s.image,
                    scale: snap.scale,
                    watch,
                    backend: backend.clone(),
                }),
                _ => None,
            };
            lock(&slot).end_read(&window_id, read);
        });
    }
}
