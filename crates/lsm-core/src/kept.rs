//! What a machine's service keeps of windows between calls: the pixels of the windows last
//! answered about (read and kept up to date in `kept_pixels.rs`).

use crate::backend::DesktopBackend;
use crate::RgbaImage;
use std::sync::Arc;

/// Windows whose pixels are kept at once: a task goes back and forth between a few (a main
/// window, a dialog, the window it copies from).
const MAX_KEPT: usize = 4;
/// The most bytes of pixels kept at once (about two full-HD screens); the oldest go first.
const MAX_KEPT_BYTES: usize = 16 << 20;

/// One capture kept, with what tells whether it still shows the window.
pub(crate) struct KeptPixels {
    pub(crate) window_id: String,
    pub(crate) image: RgbaImage,
    pub(crate) scale: f64,
    /// The backend's watch of this capture.
    pub(crate) watch: u64,
    /// The backend that watches it (a reconnected one knows nothing of the watch).
    pub(crate) backend: Arc<dyn DesktopBackend>,
}

/// The kept captures, the latest first, and the windows being captured for them.
#[derive(Default)]
pub(crate) struct Kept {
    captures: Vec<KeptPixels>,
    reading: Vec<String>,
}

impl Kept {
    pub(crate) fn holds(&self, window_id: &str) -> bool {
        self.captures.iter().any(|k| k.window_id == window_id)
    }

    /// Whether a capture of the window is to be read now, and if so it counts as being read:
    /// not while one is (its watch covers what is drawn after it), nor, unless `again`, while
    /// one is kept. An earlier capture no longer stands for the window once a new one is read.
    pub(crate) fn begin_read(&mut self, window_id: &str, again: bool) -> bool {
        if self.reading.iter().any(|w| w == window_id) || (!again && self.holds(window_id)) {
            return false;
        }
        self.take(window_id);
        self.reading.push(window_id.to_string());
        true
    }

    /// The read that [`Kept::begin_read`] began is over, with its capture if there is one.
    pub(crate) fn end_read(&mut self, window_id: &str, read: Option<KeptPixels>) {
        self.reading.retain(|w| w != window_id);
        if let Some(k) = read {
            self.put(k);
        }
    }

    /// The window's capture, taken out (it is used up by the action it is read for).
    pub(crate) fn take(&mut self, window_id: &str) -> Option<KeptPixels> {
        let i = self.captures.iter().position(|k| k.window_id == window_id)?;
        Some(self.captures.remove(i))
    }

    /// Keeps `k` as the latest, in place of the window's earlier one, within the bounds.
    pub(crate) fn put(&mut self, k: KeptPixels) {
        self.take(&k.window_id);
        self.captures.insert(0, k);
        let mut bytes = 0;
        let within = self
            .captures
            .iter()
            .take(MAX_KEPT)
            .take_while(|k| {
                bytes += k.image.data.len();
                bytes <= MAX_KEPT_BYTES
            })
            .count()
            .max(1);
        self.captures.truncate(within);
    }
}

/// The kept captures; locked only to look at or change the list, never while capturing (a
/// slow capture of one window must not hold up an action on another).
pub(crate) type KeptSlot = Arc<std::sync::Mutex<Kept>>;

/// The kept captures, locked (a panic elsewhere leaves the list usable).
pub(crate) fn lock(slot: &KeptSlot) -> std::sync::MutexGuard<'_, Kept> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{ActionOutcome, BackendAction};
    use crate::model::{BackendInfo, ObserveRequest, Snapshot, WindowInfo};
    use crate::{GuiError, GuiResult};

    struct NoDesktop;

    #[async_trait::async_trait]
    impl DesktopBackend for NoDesktop {
        fn info(&self) -> BackendInfo {
            BackendInfo {
                name: "none".into(),
                platform: "linux".into(),
                session: "none".into(),
                capabilities: Vec::new(),
                notes: Vec::new(),
            }
        }
        async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
            Ok(Vec::new())
        }
        async fn window(&self, id: &str) -> GuiResult<WindowInfo> {
            Err(GuiError::window_not_found(id))
        }
        async fn observe(&self, id: &str, _: &ObserveRequest) -> GuiResult<Snapshot> {
            Err(GuiError::window_not_found(id))
        }
        async fn perform(&self, w: &WindowInfo, _: &BackendAction) -> GuiResult<ActionOutcome> {
            Err(GuiError::window_not_found(&w.window_id))
        }
    }

    fn kept(window_id: &str, side: u32) -> KeptPixels {
        KeptPixels {
            window_id: window_id.into(),
            image: RgbaImage::filled(side, side, [0; 4]),
            scale: 1.0,
            watch: 1,
            backend: Arc::new(NoDesktop),
        }
    }

    #[test]
    fn the_latest_windows_are_kept_within_the_bounds() {
        let mut k = Kept::default();
        for w in ["a", "b", "c", "d", "e"] {
            k.put(kept(w, 10));
        }
        // Four at most: the oldest went.
        assert!(!k.holds("a") && k.holds("b") && k.holds("e"));
        // A window kept again is the latest, once.
        k.put(kept("b", 10));
        assert_eq!(k.captures.iter().filter(|c| c.window_id == "b").count(), 1);
        assert_eq!(k.captures[0].window_id, "b");
        // Taken out for an action: no longer kept.
        assert!(k.take("b").is_some() && !k.holds("b"));
        // Large captures: as many as fit the bytes, and always the latest.
        let big = 1500; // 9 MB each
        k.put(kept("x", big));
        assert!(k.holds("x") && k.holds("e"));
        k.put(kept("y", big));
        assert!(k.holds("y") && !k.holds("x"));
        k.put(kept("z", 2100)); // 17.6 MB: over the bytes alone, still kept
        assert!(k.holds("z") && k.captures.len() == 1);
    }

    #[test]
    fn a_window_is_read_once_at_a_time() {
        let mut k = Kept::default();
        assert!(k.begin_read("a", false));
        // Asked again while it is read (two gui_state calls): not read twice.
        assert!(!k.begin_read("a", false) && !k.begin_read("a", true));
        // Another window is read beside it.
        assert!(k.begin_read("b", false));
        k.end_read("a", Some(kept("a", 10)));
        k.end_read("b", None);
        assert!(k.holds("a") && !k.holds("b"));
        // Kept: read again only after an action (`again`), which replaces it.
        assert!(!k.begin_read("a", false));
        assert!(k.begin_read("a", true) && !k.holds("a"));
        k.end_read("a", None);
        assert!(k.begin_read("a", false));
    }
}
