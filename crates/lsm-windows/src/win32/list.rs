//! The visible top-level windows (`EnumWindows`), as `gui_list` shows them: the taskbar rule of
//! [`crate::listing`], frame bounds from DWM where it has them, logical pixels by each window's
//! DPI ([`crate::dpi`]). The process must be per-monitor-v2 DPI aware for the bounds to be
//! physical pixels.

use crate::dpi;
use crate::listing::{listed, WindowTraits};
use lsm_core::geometry::Rect;
use lsm_core::model::WindowInfo;
use std::ffi::c_void;
use windows::core::{BOOL, PWSTR};
use windows::Win32::Foundation::{CloseHandle, HWND, LPARAM, RECT};
use windows::Win32::Graphics::Dwm::{DwmGetWindowAttribute, DWMWA_CLOAKED, DWMWA_EXTENDED_FRAME_BOUNDS};
use windows::Win32::System::Threading::{
    OpenProcess, QueryFullProcessImageNameW, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows::Win32::UI::HiDpi::GetDpiForWindow;
use windows::Win32::UI::WindowsAndMessaging::{
    EnumWindows, GetForegroundWindow, GetWindow, GetWindowLongPtrW, GetWindowRect, GetWindowTextLengthW,
    GetWindowTextW, GetWindowThreadProcessId, IsIconic, IsWindowVisible, GWL_EXSTYLE, GW_OWNER,
    WS_EX_APPWINDOW, WS_EX_TOOLWINDOW,
};

/// The id lsm gives a window: its handle in hex, as X11 window ids are.
pub fn window_id(hwnd: HWND) -> String {
    format!("0x{:x}", hwnd.0 as usize)
}

/// Every window `gui_list` shows, topmost first.
pub fn list_windows() -> Vec<WindowInfo> {
    let mut handles: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes into the Vec whose address it is given, during the call.
    unsafe {
        // An Err here means the enumeration stopped early: what was gathered is still good.
        let _ = EnumWindows(Some(collect), LPARAM(&mut handles as *mut Vec<HWND> as isize));
    }
    handles.into_iter().filter_map(window_info).collect()
}

/// One window as `gui_list` shows it, or `None` when it is not listed (hidden, cloaked, a tool
/// window…), read without enumerating the others.
pub fn window_info(hwnd: HWND) -> Option<WindowInfo> {
    let traits = traits_of(hwnd);
    // SAFETY: plain query without arguments.
    let foreground = unsafe { GetForegroundWindow() };
    listed(&traits).then(|| info_of(hwnd, &traits, hwnd == foreground))
}

unsafe extern "system" fn collect(hwnd: HWND, param: LPARAM) -> BOOL {
    // SAFETY: `param` is the `&mut Vec<HWND>` given to EnumWindows in `list_windows`.
    let handles = unsafe { &mut *(param.0 as *mut Vec<HWND>) };
    handles.push(hwnd);
    BOOL(1)
}

fn traits_of(hwnd: HWND) -> WindowTraits {
    // SAFETY: every call takes a window handle that may have died meanwhile; each then fails
    // or returns zero, which reads as "not visible" / no title.
    unsafe {
        let ex_style = GetWindowLongPtrW(hwnd, GWL_EXSTYLE) as u32;
        let mut cloaked: u32 = 0;
        let cloaked_ok = DwmGetWindowAttribute(
            hwnd,
            DWMWA_CLOAKED,
            &mut cloaked as *mut u32 as *mut c_void,
            std::mem::size_of::<u32>() as u32,
        )
        .is_ok();
        WindowTraits {
            visible: IsWindowVisible(hwnd).as_bool(),
            cloaked: cloaked_ok && cloaked != 0,
            tool_window: ex_style & WS_EX_TOOLWINDOW.0 != 0,
            app_window: ex_style & WS_EX_APPWINDOW.0 != 0,
            owned: GetWindow(hwnd, GW_OWNER).is_ok_and(|o| !o.is_invalid()),
            title: title_of(hwnd),
            minimized: IsIconic(hwnd).as_bool(),
            frame: frame_of(hwnd),
        }
    }
}

/// The visible frame: DWM's extended frame bounds (without the invisible resize borders), else
/// the window rectangle (Wine, or DWM off).
pub fn frame_of(hwnd: HWND) -> Rect {
    let mut r = RECT::default();
    // SAFETY: `r` is a RECT of the size passed.
    let dwm = unsafe {
        DwmGetWindowAttribute(
            hwnd,
            DWMWA_EXTENDED_FRAME_BOUNDS,
            &mut r as *mut RECT as *mut c_void,
            std::mem::size_of::<RECT>() as u32,
        )
    };
    if dwm.is_err() {
        // SAFETY: as above.
        if unsafe { GetWindowRect(hwnd, &mut r) }.is_err() {
            return Rect::default();
        }
    }
    Rect::new(r.left, r.top, r.right - r.left, r.bottom - r.top)
}

fn title_of(hwnd: HWND) -> String {
    // SAFETY: the buffer is as long as the length asked for, plus the terminator.
    unsafe {
        let len = GetWindowTextLengthW(hwnd);
        if len <= 0 {
            return String::new();
        }
        let mut buf = vec![0u16; len as usize + 1];
        let got = GetWindowTextW(hwnd, &mut buf);
        String::from_utf16_lossy(&buf[..got.max(0) as usize])
    }
}

/// The executable's file name without `.exe` ("notepad"), the application's name for people.
fn app_of(pid: u32) -> String {
    // SAFETY: the handle is closed on every path; the buffer length is passed in and out.
    unsafe {
        let Ok(process) = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid) else {
            return String::new();
        };
        let mut buf = vec![0u16; 1024];
        let mut len = buf.len() as u32;
        let ok = QueryFullProcessImageNameW(process, PROCESS_NAME_WIN32, PWSTR(buf.as_mut_ptr()), &mut len)
            .is_ok();
        let _ = CloseHandle(process);
        if !ok {
            return String::new();
        }
        let path = String::from_utf16_lossy(&buf[..len as usize]);
        let file = path.rsplit(['\\', '/']).next().unwrap_or(&path);
        file.strip_suffix(".exe")
            .or_else(|| file.strip_suffix(".EXE"))
            .unwrap_or(file)
            .to_string()
    }
}

fn info_of(hwnd: HWND, traits: &WindowTraits, focused: bool) -> WindowInfo {
    let mut pid: u32 = 0;
    // SAFETY: `pid` is a valid out pointer.
    unsafe { GetWindowThreadProcessId(hwnd, Some(&mut pid)) };
    // SAFETY: a handle query; 0 (failure, or Wine without it) counts as 96.
    let dpi_value = unsafe { GetDpiForWindow(hwnd) };
    // SAFETY: as in `traits_of`.
    let owner = unsafe { GetWindow(hwnd, GW_OWNER) }
        .ok()
        .filter(|o| !o.is_invalid());
    WindowInfo {
        pid: (pid != 0).then_some(pid),
        focused,
        minimized: traits.minimized,
        // UI Automation is not consulted yet: the elements come with it.
        accessible: false,
        transient_for: owner.map(window_id),
        ..WindowInfo::new(
            window_id(hwnd),
            traits.title.clone(),
            app_of(pid),
            dpi::window_to_logical(traits.frame, dpi_value),
        )
    }
}
