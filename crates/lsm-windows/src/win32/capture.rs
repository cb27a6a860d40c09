//! The window's pixels, copied from the screen (`BitBlt`): what is shown where the window is,
//! so windows on top of it show in the image (said in the snapshot's notes). Windows Graphics
//! Capture and PrintWindow, which see a covered window's own pixels, come next.

use lsm_core::geometry::Rect;
use lsm_core::{GuiError, GuiResult, RgbaImage};
use windows::Win32::Graphics::Gdi::{
    BitBlt, CreateCompatibleBitmap, CreateCompatibleDC, DeleteDC, DeleteObject, GetDC, GetDIBits, ReleaseDC,
    SelectObject, BITMAPINFO, BITMAPINFOHEADER, BI_RGB, DIB_RGB_COLORS, SRCCOPY,
};

/// The screen's pixels in `frame` (physical pixels of the virtual desktop), as RGBA.
pub fn capture_screen_rect(frame: Rect) -> GuiResult<RgbaImage> {
    let (w, h) = (frame.width, frame.height);
    if w <= 0 || h <= 0 {
        return Err(GuiError::backend("the window has no area to capture"));
    }
    // SAFETY: every GDI object made here is released on every path below; the pixel buffer is
    // as large as the bitmap described to GetDIBits.
    unsafe {
        let screen = GetDC(None);
        if screen.is_invalid() {
            return Err(GuiError::backend("GetDC(screen) failed"));
        }
        let memory = CreateCompatibleDC(Some(screen));
        let bitmap = CreateCompatibleBitmap(screen, w, h);
        let old = SelectObject(memory, bitmap.into());
        let copied = BitBlt(memory, 0, 0, w, h, Some(screen), frame.x, frame.y, SRCCOPY);
        let mut info = BITMAPINFO {
            bmiHeader: BITMAPINFOHEADER {
                biSize: std::mem::size_of::<BITMAPINFOHEADER>() as u32,
                biWidth: w,
                // Negative: rows top-down.
                biHeight: -h,
                biPlanes: 1,
                biBitCount: 32,
                biCompression: BI_RGB.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut data = vec![0u8; w as usize * h as usize * 4];
        SelectObject(memory, old);
        let rows = GetDIBits(
            memory,
            bitmap,
            0,
            h as u32,
            Some(data.as_mut_ptr().cast()),
            &mut info,
            DIB_RGB_COLORS,
        );
        let _ = DeleteObject(bitmap.into());
        let _ = DeleteDC(memory);
        ReleaseDC(None, screen);
        if copied.is_err() || rows != h {
            return Err(GuiError::backend(format!(
                "copying the window's pixels from the screen failed (BitBlt {}, {rows} of {h} rows)",
                if copied.is_ok() { "ok" } else { "failed" }
            )));
        }
        // BGRX to RGBA.
        for px in data.chunks_exact_mut(4) {
            px.swap(0, 2);
            px[3] = 255;
        }
        RgbaImage::new(w as u32, h as u32, data)
    }
}
