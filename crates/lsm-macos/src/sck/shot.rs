//! One screenshot of a window by the first path that works: ScreenCaptureKit on macOS 14+, then
//! the `screencapture` tool; the result says which path ran and why an earlier one did not.

use crate::capture::{
    capture_paths, macos_major, run_capture, screencapture_args, CapturePath, CAPTURE_TIMEOUT, SCREENCAPTURE,
};
use lsm_core::{GuiError, GuiResult, RgbaImage};

/// A screenshot, the path that took it and what the observation should say about the choice.
pub struct Shot {
    pub image: RgbaImage,
    pub path: CapturePath,
    pub notes: Vec<String>,
}

/// The running macOS's major version (`kern.osproductversion`).
fn running_major() -> Option<u32> {
    let mut buf = [0u8; 64];
    let mut len = buf.len();
    let name = c"kern.osproductversion";
    // SAFETY: the name is NUL-terminated; buf and len describe a writable buffer.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    let text = std::str::from_utf8(buf.get(..len)?).ok()?.trim_end_matches('\0');
    macos_major(text)
}

/// Captures window `number` at `width` x `height` pixels.
pub async fn capture(number: u32, width: usize, height: usize) -> GuiResult<Shot> {
    let (paths, why) = capture_paths(running_major());
    let mut notes: Vec<String> = why.into_iter().collect();
    let mut last: Option<GuiError> = None;
    for path in paths {
        let taken = match path {
            CapturePath::ScreenCaptureKit => super::capture_window(number, width, height).await,
            CapturePath::ScreenCaptureTool => {
                let out = std::env::temp_dir().join(format!("lsm-shot-{}-{number}.png", std::process::id()));
                run_capture(
                    SCREENCAPTURE,
                    &screencapture_args(number, &out),
                    &out,
                    CAPTURE_TIMEOUT,
                )
                .await
            }
        };
        match taken {
            Ok(image) => return Ok(Shot { image, path, notes }),
            Err(e) => {
                notes.push(format!(
                    "{} did not capture the window: {}",
                    path.name(),
                    e.message
                ));
                last = Some(e);
            }
        }
    }
    // Every path failed: the answer carries each one's reason, under the last one's code.
    Err(match last {
        Some(e) => GuiError::new(e.code, notes.join("; ")),
        None => GuiError::backend("no capture path is available"),
    })
}
