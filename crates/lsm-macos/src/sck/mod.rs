//! The selected window's pixels through ScreenCaptureKit (macOS 14+): the window found among
//! the shareable content by its window number, a desktop-independent filter (the window alone,
//! whatever covers it), a screenshot at the window's own pixel size without cursor or shadow.
//! Compiled for macOS only; the pixel conversion is platform-free ([`crate::capture`]).

pub mod shot;

use crate::capture::bgra_rows_to_rgba;
use block2::RcBlock;
use lsm_core::{ErrorCode, GuiError, GuiResult, RgbaImage};
use objc2::rc::Retained;
use objc2::AllocAnyThread;
use objc2_core_foundation::CFData;
use objc2_core_graphics::{CGDataProvider, CGImage};
use objc2_foundation::NSError;
use objc2_screen_capture_kit::{
    SCContentFilter, SCScreenshotManager, SCShareableContent, SCStreamConfiguration, SCWindow,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a screenshot may take before the fallback runs.
pub const SCK_TIMEOUT: Duration = Duration::from_secs(5);

type Reply = Arc<Mutex<Option<tokio::sync::oneshot::Sender<GuiResult<RgbaImage>>>>>;

fn answer(reply: &Reply, result: GuiResult<RgbaImage>) {
    if let Some(tx) = reply.lock().unwrap_or_else(|p| p.into_inner()).take() {
        let _ = tx.send(result);
    }
}

fn error_text(error: *mut NSError) -> String {
    // SAFETY: a non-null error handed to a completion handler is a valid NSError for the call.
    match unsafe { error.as_ref() } {
        Some(e) => e.localizedDescription().to_string(),
        None => "no reason given".into(),
    }
}

/// A screenshot of window `number`, `width` x `height` pixels (its size in points times its
/// display's scale), bounded by [`SCK_TIMEOUT`].
pub async fn capture_window(number: u32, width: usize, height: usize) -> GuiResult<RgbaImage> {
    // The handlers are handed over (and copied by the framework) before the wait: they are not
    // `Send` and must not be held across it.
    let rx = request(number, width, height);
    match tokio::time::timeout(SCK_TIMEOUT, rx).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(GuiError::backend(
            "ScreenCaptureKit dropped the screenshot request",
        )),
        Err(_) => Err(GuiError::new(
            ErrorCode::Timeout,
            format!("ScreenCaptureKit took longer than {} s", SCK_TIMEOUT.as_secs()),
        )),
    }
}

/// Asks for the shareable content, then for the screenshot; the answer comes on the channel.
fn request(number: u32, width: usize, height: usize) -> tokio::sync::oneshot::Receiver<GuiResult<RgbaImage>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let reply: Reply = Arc::new(Mutex::new(Some(tx)));
    let on_content = {
        let reply = reply.clone();
        RcBlock::new(move |content: *mut SCShareableContent, error: *mut NSError| {
            // SAFETY: the content, when there is one, is valid for the call.
            let Some(content) = (unsafe { content.as_ref() }) else {
                let text = error_text(error);
                answer(
                    &reply,
                    Err(GuiError::new(
                        ErrorCode::PermissionDenied,
                        format!(
                            "ScreenCaptureKit lists no windows ({text}); Screen Recording may not be granted"
                        ),
                    )),
                );
                return;
            };
            // SAFETY: reading the shareable windows and their numbers.
            let window: Option<Retained<SCWindow>> = unsafe { content.windows() }
                .iter()
                .find(|w| unsafe { w.windowID() } == number);
            let Some(window) = window else {
                answer(
                    &reply,
                    Err(GuiError::new(
                        ErrorCode::WindowNotFound,
                        format!("ScreenCaptureKit does not list window {number}"),
                    )),
                );
                return;
            };
            // SAFETY: plain object creation and setters on the main types of the framework.
            let (filter, config) = unsafe {
                let filter =
                    SCContentFilter::initWithDesktopIndependentWindow(SCContentFilter::alloc(), &window);
                let config = SCStreamConfiguration::new();
                config.setWidth(width);
                config.setHeight(height);
                config.setShowsCursor(false);
                config.setIgnoreShadowsSingleWindow(true);
                (filter, config)
            };
            let on_image = {
                let reply = reply.clone();
                RcBlock::new(move |image: *mut CGImage, error: *mut NSError| {
                    // SAFETY: the image, when there is one, is valid for the call.
                    let result = match unsafe { image.as_ref() } {
                        Some(image) => pixels_of(image),
                        None => Err(GuiError::backend(format!(
                            "ScreenCaptureKit took no screenshot: {}",
                            error_text(error)
                        ))),
                    };
                    answer(&reply, result);
                })
            };
            // SAFETY: the filter, configuration and handler live until the call returns; the
            // framework copies the handler.
            unsafe {
                SCScreenshotManager::captureImageWithFilter_configuration_completionHandler(
                    &filter,
                    &config,
                    Some(&on_image),
                )
            };
        })
    };
    // SAFETY: the handler is copied by the framework and called once.
    unsafe {
        SCShareableContent::getShareableContentExcludingDesktopWindows_onScreenWindowsOnly_completionHandler(
            true,
            false,
            &on_content,
        )
    };
    rx
}

/// The image's pixels as RGBA (ScreenCaptureKit's SDR screenshots are 8-bit BGRA).
fn pixels_of(image: &CGImage) -> GuiResult<RgbaImage> {
    if CGImage::bits_per_pixel(Some(image)) != 32 {
        return Err(GuiError::backend(
            "the screenshot is not 8-bit BGRA (an HDR capture?)",
        ));
    }
    let provider = CGImage::data_provider(Some(image))
        .ok_or_else(|| GuiError::backend("the screenshot has no pixel data"))?;
    let data: objc2_core_foundation::CFRetained<CFData> = CGDataProvider::data(Some(&provider))
        .ok_or_else(|| GuiError::backend("the screenshot's pixels could not be read"))?;
    // SAFETY: the bytes live as long as `data`, which outlives the conversion.
    let bytes = unsafe { data.as_bytes_unchecked() };
    bgra_rows_to_rgba(
        CGImage::width(Some(image)),
        CGImage::height(Some(image)),
        CGImage::bytes_per_row(Some(image)),
        bytes,
    )
}
