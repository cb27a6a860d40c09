//! What a machine's service keeps of a window between calls: the pixels of the window last
//! answered about (read and kept up to date in `kept_pixels.rs`).

use crate::backend::DesktopBackend;
use crate::RgbaImage;
use std::sync::Arc;

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

/// The kept capture; held while one is being read, so a look for it waits for that read.
pub(crate) type KeptSlot = Arc<tokio::sync::Mutex<Option<KeptPixels>>>;
