//! The visible top-level windows (`EnumWindows`), as `gui_list` shows them: the taskbar rule of
//! [`crate::listing`], modal dialogs and the windows they block ([`crate::modal`]), frame
//! bounds from DWM where it has them and else as Wine shows them ([`crate::frame`]), logical
//! pixels by each window's DPI ([`crate::dpi`]). The process must be per-monitor-v2 DPI aware
//! for the bounds to be physical pixels.

use crate::dpi;
use crate::frame::{drawn_part, wine_decorations, Insets};
use crate::listing::{listed, WindowTraits};
use crate::modal::{blocker, is_modal, TopLevel};
use lsm_core::geometry::Rect;
use lsm_core::model::WindowInfo;
use std::ffi::c_void;
use std::sync::OnceLock;
use windows::core::{BOOL, PWSTR};
use windows::Win32::Foundation::{CloseHandle, HWND, LPARAM, POINT, RECT};
use windows::Win32::Graphics::Dwm::{DwmGetWindowAttribute, DWMWA_CLOAKED, DWMWA_EXTENDED_FRAME_BOUNDS};
use windows::Win32::Graphics::Gdi::ClientToScreen;
use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows::Win32::System::Threading::{
    OpenProcess, QueryFullProcessImageNameW, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows::Win32::UI::HiDpi::GetDpiForWindow;
use windows::Win32::UI::Input::KeyboardAndMouse::IsWindowEnabled;
use windows::Win32::UI::WindowsAndMessaging::{
    AdjustWindowRectEx, EnumWindows, GetClientRect, GetForegroundWindow, GetWindow, GetWindowLongPtrW,
    GetWindowRect, GetWindowTextLengthW, GetWindowTextW, GetWindowThreadProcessId, IsIconic, IsWindowVisible,
    GWL_EXSTYLE, GWL_STYLE, GW_OWNER, WINDOW_EX_STYLE, WINDOW_STYLE, WS_EX_APPWINDOW, WS_EX_TOOLWINDOW,
};

/// The id lsm gives a window: its handle in hex, as X11 window ids are.
pub fn window_id(hwnd: HWND) -> String {
    format!("0x{:x}", hwnd.0 as usize)
}

/// Whether this process runs under Wine (its ntdll exports `wine_get_version`).
pub fn under_wine() -> bool {
    static WINE: OnceLock<bool> = OnceLock::new();
    // SAFETY: lookups by name in a module every process has loaded; nothing is called.
    *WINE.get_or_init(|| unsafe {
        GetModuleHandleW(windows::core::w!("ntdll.dll"))
            .ok()
            .is_some_and(|ntdll| GetProcAddress(ntdll, windows::core::s!("wine_get_version")).is_some())
    })
}

/// Every top-level window handle, topmost first.
fn handles() -> Vec<HWND> {
    let mut handles: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes into the Vec whose address it is given, during the call.
    unsafe {
        // An Err here means the enumeration stopped early: what was gathered is still good.
        let _ = EnumWindows(Some(collect), LPARAM(&mut handles as *mut Vec<HWND> as isize));
    }
    handles
}

/// The owner of a window, if it has one.
pub fn owner_of(hwnd: HWND) -> Option<HWND> {
    // SAFETY: a handle query; a dead handle gives an error or a null handle.
    unsafe { GetWindow(hwnd, GW_OWNER) }
        .ok()
        .filter(|o| !o.is_invalid())
}

/// What the modal rule needs of every top-level window, topmost first.
pub fn top_levels() -> Vec<TopLevel> {
    handles().into_iter().map(top_level).collect()
}

fn top_level(hwnd: HWND) -> TopLevel {
    // SAFETY: handle queries; a dead window reads as hidden and disabled.
    unsafe {
        TopLevel {
            id: hwnd.0 as usize,
            owner: owner_of(hwnd).map(|o| o.0 as usize),
            visible: IsWindowVisible(hwnd).as_bool(),
            enabled: IsWindowEnabled(hwnd).as_bool(),
        }
    }
}

/// Every window `gui_list` shows, topmost first.
pub fn list_windows() -> Vec<WindowInfo> {
    let handles = handles();
    let tops: Vec<TopLevel> = handles.iter().copied().map(top_level).collect();
    // SAFETY: plain query without arguments.
    let foreground = unsafe { GetForegroundWindow() };
    handles
        .into_iter()
        .filter_map(|hwnd| {
            let traits = traits_of(hwnd, &tops);
            listed(&traits).then(|| info_of(hwnd, &traits, hwnd == foreground, &tops))
        })
        .collect()
}

/// One window as `gui_list` shows it, or `None` when it is not listed (hidden, cloaked, a tool
/// window…), read without looking at the others beyond the modal rule.
pub fn window_info(hwnd: HWND) -> Option<WindowInfo> {
    let tops = top_levels();
    let traits = traits_of(hwnd, &tops);
    // SAFETY: plain query without arguments.
    let foreground = unsafe { GetForegroundWindow() };
    listed(&traits).then(|| info_of(hwnd, &traits, hwnd == foreground, &tops))
}

/// The modal dialog that blocks the window now, if one does.
pub fn blocked_by(hwnd: HWND) -> Option<HWND> {
    blocker(hwnd.0 as usize, &top_levels()).map(|b| HWND(b as *mut c_void))
}

unsafe extern "system" fn collect(hwnd: HWND, param: LPARAM) -> BOOL {
    // SAFETY: `param` is the `&mut Vec<HWND>` given to EnumWindows in `list_windows`.
    let handles = unsafe { &mut *(param.0 as *mut Vec<HWND>) };
    handles.push(hwnd);
    BOOL(1)
}

fn traits_of(hwnd: HWND, tops: &[TopLevel]) -> WindowTraits {
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
            owned: owner_of(hwnd).is_some(),
            modal: is_modal(hwnd.0 as usize, tops),
            title: title_of(hwnd),
            minimized: IsIconic(hwnd).as_bool(),
            frame: frame_of(hwnd),
        }
    }
}

/// The visible frame: DWM's extended frame bounds (without the invisible resize borders); under
/// Wine, which has no DWM, the part of the window rectangle Wine draws itself (the X11 window
/// manager draws the title bar and border: see [`crate::frame`]); else the window rectangle.
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
    if dwm.is_ok() {
        return rect_of(&r);
    }
    // SAFETY: as above.
    if unsafe { GetWindowRect(hwnd, &mut r) }.is_err() {
        return Rect::default();
    }
    let window = rect_of(&r);
    // SAFETY: a handle query; a minimized window keeps its parked rectangle.
    if under_wine() && !unsafe { IsIconic(hwnd) }.as_bool() {
        if let Some(drawn) = wine_drawn_part(hwnd, window) {
            return drawn;
        }
    }
    window
}

fn rect_of(r: &RECT) -> Rect {
    Rect::new(r.left, r.top, r.right - r.left, r.bottom - r.top)
}

/// What Wine draws of the window on the screen: its window rectangle without the frame parts the
/// X11 window manager decorates, sized as Wine's own `AdjustWindowRectEx` sizes them.
fn wine_drawn_part(hwnd: HWND, window: Rect) -> Option<Rect> {
    let mut c = RECT::default();
    let mut origin = POINT::default();
    // SAFETY: handle queries into locals.
    let client = unsafe {
        GetClientRect(hwnd, &mut c).ok()?;
        if !ClientToScreen(hwnd, &mut origin).as_bool() {
            return None;
        }
        Rect::new(origin.x, origin.y, c.right - c.left, c.bottom - c.top)
    };
    // SAFETY: handle queries; the styles are plain bits.
    let (style, ex_style) = unsafe {
        (
            GetWindowLongPtrW(hwnd, GWL_STYLE) as u32,
            GetWindowLongPtrW(hwnd, GWL_EXSTYLE) as u32,
        )
    };
    let decorated = wine_decorations(style, ex_style, window, client);
    let mut a = RECT::default();
    // SAFETY: `a` is a local RECT.
    unsafe {
        AdjustWindowRectEx(
            &mut a,
            WINDOW_STYLE(decorated.style),
            false,
            WINDOW_EX_STYLE(decorated.ex_style),
        )
        .ok()?;
    }
    Some(drawn_part(
        window,
        client,
        Insets::from_adjusted(a.left, a.top, a.right, a.bottom),
    ))
}

pub fn title_of(hwnd: HWND) -> String {
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
pub fn app_of(pid: u32) -> String {
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

fn info_of(hwnd: HWND, traits: &WindowTraits, focused: bool, tops: &[TopLevel]) -> WindowInfo {
    let mut pid: u32 = 0;
    // SAFETY: `pid` is a valid out pointer.
    unsafe { GetWindowThreadProcessId(hwnd, Some(&mut pid)) };
    // SAFETY: a handle query; 0 (failure, or Wine without it) counts as 96.
    let dpi_value = unsafe { GetDpiForWindow(hwnd) };
    WindowInfo {
        pid: (pid != 0).then_some(pid),
        focused,
        minimized: traits.minimized,
        // UI Automation is not consulted yet: the elements come with it.
        accessible: false,
        transient_for: owner_of(hwnd).map(window_id),
        modal: traits.modal,
        blocked_by: blocker(hwnd.0 as usize, tops).map(|b| window_id(HWND(b as *mut c_void))),
        ..WindowInfo::new(
            window_id(hwnd),
            traits.title.clone(),
            app_of(pid),
            dpi::window_to_logical(traits.frame, dpi_value),
        )
    }
}
