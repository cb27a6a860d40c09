//! The window's pixels, by the best path that works: Windows Graphics Capture of the window
//! (its own pixels, right when covered), then PrintWindow with full-content rendering (also its
//! own pixels; black for windows it cannot draw, which is then not used), then BitBlt from the
//! screen (what is shown where the window is: windows on top of it show, and the result says so).

use super::wgc;
use crate::pixels::{crop_rgba, frame_within, looks_blank};
use lsm_core::geometry::Rect;
use lsm_core::{GuiError, GuiResult, RgbaImage};
use windows::Win32::Foundation::{HWND, RECT};
use windows::Win32::Graphics::Gdi::{
    BitBlt, CreateCompatibleBitmap, CreateCompatibleDC, DeleteDC, DeleteObject, GetDC, GetDIBits, ReleaseDC,
    SelectObject, BITMAPINFO, BITMAPINFOHEADER, BI_RGB, DIB_RGB_COLORS, HDC, SRCCOPY,
};
use windows::Win32::Storage::Xps::{PrintWindow, PRINT_WINDOW_FLAGS};
use windows::Win32::UI::WindowsAndMessaging::{GetWindowRect, PW_RENDERFULLCONTENT};

/// A capture and what it can be trusted for.
pub struct Captured {
    pub image: RgbaImage,
    /// Other windows may show in it (copied from the screen).
    pub occluded: bool,
    /// How it was taken, and why the better paths were not used, when they were not.
    pub note: Option<String>,
}

/// The window's pixels in its frame (physical screen pixels).
pub fn capture_window(hwnd: HWND, frame: Rect) -> GuiResult<Captured> {
    let wgc_failure = match wgc::capture(hwnd, frame) {
        Ok(image) => {
            return Ok(Captured {
                image,
                occluded: false,
                note: None,
            })
        }
        Err(why) => why,
    };
    let print_failure = match print_window(hwnd, frame) {
        Ok(image) => {
            return Ok(Captured {
                image,
                occluded: false,
                note: None,
            })
        }
        Err(why) => why,
    };
    let image = capture_screen_rect(frame)?;
    Ok(Captured {
        image,
        occluded: true,
        note: Some(format!(
            "the screenshot is copied from the screen: windows on top of this one show in it (Windows Graphics \
             Capture: {wgc_failure}; PrintWindow: {print_failure})"
        )),
    })
}

/// A 32-bit bitmap of `w`x`h` read out of a memory DC as RGBA (rows top-down).
///
/// # Safety
/// `memory` must be a valid memory DC, `bitmap` a bitmap compatible with it, not selected.
unsafe fn read_bitmap(
    memory: HDC,
    bitmap: windows::Win32::Graphics::Gdi::HBITMAP,
    w: i32,
    h: i32,
) -> Option<Vec<u8>> {
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
    // SAFETY: the buffer holds the h rows of w 32-bit pixels described in `info`.
    let rows = unsafe {
        GetDIBits(
            memory,
            bitmap,
            0,
            h as u32,
            Some(data.as_mut_ptr().cast()),
            &mut info,
            DIB_RGB_COLORS,
        )
    };
    if rows != h {
        return None;
    }
    // BGRX to RGBA.
    for px in data.chunks_exact_mut(4) {
        px.swap(0, 2);
        px[3] = 255;
    }
    Some(data)
}

/// Draws a `w`x`h` bitmap with `draw` (given the memory DC) and reads it back.
fn draw_into_bitmap(w: i32, h: i32, draw: impl FnOnce(HDC, HDC) -> bool) -> Result<Vec<u8>, String> {
    // SAFETY: every GDI object made here is released on every path below.
    unsafe {
        let screen = GetDC(None);
        if screen.is_invalid() {
            return Err("GetDC(screen) failed".into());
        }
        let memory = CreateCompatibleDC(Some(screen));
        let bitmap = CreateCompatibleBitmap(screen, w, h);
        let old = SelectObject(memory, bitmap.into());
        let drawn = draw(memory, screen);
        SelectObject(memory, old);
        let data = if drawn {
            read_bitmap(memory, bitmap, w, h)
        } else {
            None
        };
        let _ = DeleteObject(bitmap.into());
        let _ = DeleteDC(memory);
        ReleaseDC(None, screen);
        if !drawn {
            return Err("the call failed".into());
        }
        data.ok_or_else(|| "its pixels could not be read".into())
    }
}

/// The window drawn by itself into a bitmap (PrintWindow, full content), its frame cut out.
fn print_window(hwnd: HWND, frame: Rect) -> Result<RgbaImage, String> {
    let mut rect = RECT::default();
    // SAFETY: a handle query into a local.
    unsafe { GetWindowRect(hwnd, &mut rect) }.map_err(|e| format!("GetWindowRect: {e}"))?;
    let whole = Rect::new(
        rect.left,
        rect.top,
        rect.right - rect.left,
        rect.bottom - rect.top,
    );
    if whole.width <= 0 || whole.height <= 0 {
        return Err("the window has no area".into());
    }
    let data = draw_into_bitmap(whole.width, whole.height, |memory, _| {
        // SAFETY: a live window drawn into a valid memory DC.
        unsafe { PrintWindow(hwnd, memory, PRINT_WINDOW_FLAGS(PW_RENDERFULLCONTENT)) }.as_bool()
    })?;
    let cut = crop_rgba(
        &data,
        whole.width as usize,
        whole.height as usize,
        frame_within(whole, frame),
    )
    .ok_or("the frame lies outside the window rectangle")?;
    if looks_blank(&cut) {
        return Err("it drew nothing (all black)".into());
    }
    RgbaImage::new(frame.width as u32, frame.height as u32, cut).map_err(|e| e.message)
}

/// The screen's pixels in `frame` (physical pixels of the virtual desktop), as RGBA.
pub fn capture_screen_rect(frame: Rect) -> GuiResult<RgbaImage> {
    let (w, h) = (frame.width, frame.height);
    if w <= 0 || h <= 0 {
        return Err(GuiError::backend("the window has no area to capture"));
    }
    let data = draw_into_bitmap(w, h, |memory, screen| {
        // SAFETY: copies between two valid DCs.
        unsafe { BitBlt(memory, 0, 0, w, h, Some(screen), frame.x, frame.y, SRCCOPY) }.is_ok()
    })
    .map_err(|why| GuiError::backend(format!("copying the window's pixels from the screen: {why}")))?;
    RgbaImage::new(w as u32, h as u32, data)
}
