//! What the window server says about windows and displays, read without a prompt and without
//! touching any application: `CGWindowListCopyWindowInfo` (the title only where Screen Recording
//! is granted), the active displays with their bounds in global points and backing scale, and
//! `CGPreflightScreenCaptureAccess`.

use crate::geometry::{Display, PointRect};
use crate::join::CgWindow;
use objc2_core_foundation::{CFArray, CFBoolean, CFDictionary, CFNumber, CFRetained, CFString, CFType};
use objc2_core_graphics::{
    kCGWindowAlpha, kCGWindowBounds, kCGWindowIsOnscreen, kCGWindowLayer, kCGWindowName, kCGWindowNumber,
    kCGWindowOwnerName, kCGWindowOwnerPID, CGDirectDisplayID, CGDisplayBounds, CGDisplayCopyDisplayMode,
    CGDisplayMode, CGGetActiveDisplayList, CGMainDisplayID, CGPreflightScreenCaptureAccess,
    CGWindowListCopyWindowInfo, CGWindowListOption,
};

/// Every window the window server knows, on screen or not (minimized ones and those of other
/// Spaces are then flagged by the join, never silently dropped), desktop elements left out.
pub fn server_windows() -> Vec<CgWindow> {
    let Some(list) = CGWindowListCopyWindowInfo(CGWindowListOption::ExcludeDesktopElements, 0) else {
        return Vec::new();
    };
    // SAFETY: the window list is an array of dictionaries with CFString keys.
    let list: CFRetained<CFArray<CFDictionary<CFString, CFType>>> =
        unsafe { CFRetained::cast_unchecked(list) };
    list.iter().filter_map(|w| window_of(&w)).collect()
}

fn window_of(w: &CFDictionary<CFString, CFType>) -> Option<CgWindow> {
    // SAFETY: the keys are the window server's own constant strings.
    let (number, pid, owner, name, bounds, layer, on_screen, alpha) = unsafe {
        (
            kCGWindowNumber,
            kCGWindowOwnerPID,
            kCGWindowOwnerName,
            kCGWindowName,
            kCGWindowBounds,
            kCGWindowLayer,
            kCGWindowIsOnscreen,
            kCGWindowAlpha,
        )
    };
    let number_of = |key: &CFString| {
        w.get(key)
            .and_then(|v| v.downcast::<CFNumber>().ok())
            .and_then(|n| n.as_f64())
    };
    let text_of = |key: &CFString| {
        w.get(key)
            .and_then(|v| v.downcast::<CFString>().ok())
            .map(|s| s.to_string())
    };
    let rect = w.get(bounds).and_then(|v| v.downcast::<CFDictionary>().ok())?;
    // SAFETY: a bounds dictionary has CFString keys X, Y, Width and Height with CFNumbers.
    let rect: &CFDictionary<CFString, CFType> = unsafe { rect.cast_unchecked() };
    let part = |k: &str| {
        rect.get(&CFString::from_str(k))
            .and_then(|v| v.downcast::<CFNumber>().ok())
            .and_then(|n| n.as_f64())
    };
    Some(CgWindow {
        number: number_of(number)? as u32,
        pid: number_of(pid)? as i32,
        owner_name: text_of(owner).unwrap_or_default(),
        title: text_of(name),
        bounds: PointRect::new(part("X")?, part("Y")?, part("Width")?, part("Height")?),
        layer: number_of(layer).unwrap_or(0.0) as i32,
        on_screen: w
            .get(on_screen)
            .and_then(|v| v.downcast::<CFBoolean>().ok())
            .is_some_and(|b| b.as_bool()),
        alpha: number_of(alpha).unwrap_or(1.0),
    })
}

/// The active displays (at most 32), the main one first.
pub fn server_displays() -> Vec<Display> {
    let mut ids: [CGDirectDisplayID; 32] = [0; 32];
    let mut count: u32 = 0;
    // SAFETY: both pointers are valid for the sizes given.
    let err = unsafe { CGGetActiveDisplayList(ids.len() as u32, ids.as_mut_ptr(), &mut count) };
    if err.0 != 0 {
        return Vec::new();
    }
    let main = CGMainDisplayID();
    let mut displays: Vec<(bool, Display)> = ids
        .iter()
        .take(count as usize)
        .map(|&id| {
            let b = CGDisplayBounds(id);
            let mode = CGDisplayCopyDisplayMode(id);
            let points = CGDisplayMode::width(mode.as_deref()) as f64;
            let pixels = CGDisplayMode::pixel_width(mode.as_deref()) as f64;
            let display = Display {
                frame: PointRect::new(b.origin.x, b.origin.y, b.size.width, b.size.height),
                scale: if points > 0.0 && pixels > 0.0 {
                    pixels / points
                } else {
                    1.0
                },
            };
            (id == main, display)
        })
        .collect();
    displays.sort_by_key(|(is_main, _)| !is_main);
    displays.into_iter().map(|(_, d)| d).collect()
}

/// Whether this process may capture other applications' windows (and read their titles),
/// asked without a prompt.
pub fn screen_recording_allowed() -> bool {
    CGPreflightScreenCaptureAccess()
}
